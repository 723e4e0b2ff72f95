"""The example matmul's device code for the Ascend 950 (arch 3510): ND2NZ / DN2NZ into L1, LoadData2DV2 into an NZ
L0A and a ZN L0B, Fixpipe with FixpipeParamsArch3510. Imports only ascend_sim.ascendc and the dtypes."""
