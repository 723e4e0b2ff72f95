"""Conv3DBackpropFilterV2 (dw) host tiling on Atlas A2 (arch22). See docs/conv3d_backprop_filter_tiling.md.

`conv3d_backprop_filter_tiling(...)` returns a `Conv3DBackpropFilterV2TilingData` (params, dwTiling and
basicBlockTiling by their real field names, the tiling key, the 280-byte blob); `validate_dw(tiling)` explains what
does not fit.
"""
from .base import TbeTiling
from .checks import DwArgs, check_conv3d_dw_args
from .generator import conv3d_backprop_filter_tiling, tiling_for_args
from .model import (BLOB_SIZE, TPL_SPLIT_DFL, TPL_SPLIT_K_N, TPL_SPLIT_M_K, TPL_SPLIT_M_N, TPL_SPLIT_M_N_STREAMK,
                    Conv3DBackpropFilterV2Params, Conv3DBackpropFilterV2TilingData, TConv3DDwBasicBlockTiling,
                    TConv3DDwTiling)
from .validate import validate as validate_dw

__all__ = [
    "BLOB_SIZE", "Conv3DBackpropFilterV2Params", "Conv3DBackpropFilterV2TilingData", "DwArgs",
    "TConv3DDwBasicBlockTiling", "TConv3DDwTiling", "TPL_SPLIT_DFL", "TPL_SPLIT_K_N", "TPL_SPLIT_M_K",
    "TPL_SPLIT_M_N", "TPL_SPLIT_M_N_STREAMK", "TbeTiling", "check_conv3d_dw_args", "conv3d_backprop_filter_tiling",
    "tiling_for_args", "validate_dw",
]
