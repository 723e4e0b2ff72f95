"""The A2/A3 (arch 2201) Conv3DBackpropInputV2 kernel: the entry, drivers, init pass, the high-level API and its
load/store tools, the NCDHW build's vector post-process. Imports only ascend_sim.ascendc, the dtypes and itself."""
