"""Conv3DBackpropInputV2 host tiling, one folder per architecture: arch22/ (Atlas A2/A3), arch35/ (Ascend 950)."""
