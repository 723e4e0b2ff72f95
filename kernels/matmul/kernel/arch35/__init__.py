"""The example matmul's device code for the Ascend 950 (arch 3510): ND2NZ / DN2NZ into L1, LoadData2DV2 into an NZ
L0A and a ZN L0B, Fixpipe with FixpipeParamsArch3510, run by the A2 kernel's tile loop. Imports only
ascend_sim.ascendc, the dtypes and its own kernel/."""
