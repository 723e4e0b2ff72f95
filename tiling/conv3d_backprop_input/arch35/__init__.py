"""Conv3DBackpropInputV2 host tiling for the Ascend 950 (arch35, NpuArch 3510). See
docs/conv3d_backprop_input_arch35_tiling.md."""
from tiling.conv3d_backprop_input.arch35.generator import conv3d_backprop_input_tiling_arch35
from tiling.conv3d_backprop_input.arch35.model import (BLOB_SIZE, FIELDS, Conv3DBackpropInputArch35TilingData,
                                                       decode_tiling_key, tiling_key)

__all__ = ["BLOB_SIZE", "FIELDS", "Conv3DBackpropInputArch35TilingData", "conv3d_backprop_input_tiling_arch35",
           "decode_tiling_key", "tiling_key"]
