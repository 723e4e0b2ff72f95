"""Conv3DBackpropFilterV2 (dw) host tiling on Atlas A2 (arch22). See docs/conv3d_backprop_filter_tiling.md.

`conv3d_backprop_filter_tiling(...)` returns a `Conv3DBackpropFilterV2TilingData` (params, dwTiling and
basicBlockTiling by their real field names, the tiling key, the 280-byte blob); `validate_dw(tiling)` explains what
does not fit.
"""
from tiling.common.tbe_rule import TbeTiling
from tiling.conv3d_backprop_filter.checks import check_conv3d_dw_args
from tiling.conv3d_backprop_filter.generator import conv3d_backprop_filter_tiling, tiling_for_args
from tiling.conv3d_backprop_filter.keys import (TPL_SPLIT_DFL, TPL_SPLIT_K_N, TPL_SPLIT_M_K, TPL_SPLIT_M_N,
                                                TPL_SPLIT_M_N_STREAMK)
from tiling.conv3d_backprop_filter.model import (BLOB_SIZE, Conv3DBackpropFilterV2Params,
                                                 Conv3DBackpropFilterV2TilingData, TConv3DDwBasicBlockTiling,
                                                 TConv3DDwTiling)
from tiling.conv3d_backprop_filter.validate import validate as validate_dw

__all__ = [
    "BLOB_SIZE", "Conv3DBackpropFilterV2Params", "Conv3DBackpropFilterV2TilingData",
    "TConv3DDwBasicBlockTiling", "TConv3DDwTiling", "TPL_SPLIT_DFL", "TPL_SPLIT_K_N", "TPL_SPLIT_M_K",
    "TPL_SPLIT_M_N", "TPL_SPLIT_M_N_STREAMK", "TbeTiling", "check_conv3d_dw_args", "conv3d_backprop_filter_tiling",
    "tiling_for_args", "validate_dw",
]
