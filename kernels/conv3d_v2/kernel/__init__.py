"""Conv3DV2 device code (op_kernel/): the entry and kernel classes, the high-level Conv3D API and its tools.
Imports only the Ascend C API (ascend_sim.ascendc), the dtypes and itself."""
