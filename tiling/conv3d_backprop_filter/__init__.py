"""Conv3DBackpropFilterV2 (dw) host tiling on Atlas A2 (arch22). See docs/conv3d_backprop_filter_tiling.md."""
from .model import (BLOB_SIZE, TPL_SPLIT_DFL, TPL_SPLIT_K_N, TPL_SPLIT_M_K, TPL_SPLIT_M_N, TPL_SPLIT_M_N_STREAMK,
                    Conv3DBackpropFilterV2Params, Conv3DBackpropFilterV2TilingData, TConv3DDwBasicBlockTiling,
                    TConv3DDwTiling)

__all__ = [
    "BLOB_SIZE", "Conv3DBackpropFilterV2Params", "Conv3DBackpropFilterV2TilingData", "TConv3DDwBasicBlockTiling",
    "TConv3DDwTiling", "TPL_SPLIT_DFL", "TPL_SPLIT_K_N", "TPL_SPLIT_M_K", "TPL_SPLIT_M_N", "TPL_SPLIT_M_N_STREAMK",
]
