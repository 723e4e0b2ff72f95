"""The example matmul's device code. Imports only the Ascend C API (ascend_sim.ascendc) and the dtypes."""
