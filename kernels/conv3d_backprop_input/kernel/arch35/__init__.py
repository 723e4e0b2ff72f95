"""The arch35 (Ascend 950) Conv3DBackpropInputV2 kernel: a port of hicann/ops-nn @ e5c3fa93
`conv/conv3d_backprop_input_v2/op_kernel/arch35/` (see docs/conv3d_backprop_input_arch35.md)."""
