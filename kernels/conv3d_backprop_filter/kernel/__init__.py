"""Conv3DBackpropFilterV2 device code (op_kernel/): the entry, drivers, the high-level API and its load/store
tools. Imports only the Ascend C API (ascend_sim.ascendc), the dtypes and itself."""
