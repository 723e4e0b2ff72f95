"""Conv3DBackpropInputV2 device code (op_kernel/), one folder per architecture: arch22/ (Atlas A2/A3)."""
