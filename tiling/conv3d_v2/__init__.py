"""Conv3DV2 (forward 3D convolution) host tiling on Atlas A2 (arch22). See docs/conv3d_v2_tiling.md.

`conv3d_v2_tiling(...)` returns a `Conv3DV2TilingData` (convApiTiling + convRunInfo by their real field names, the
tiling key, the 608-byte blob). `Conv3dTiling` is the Conv3D API tiling object itself (Set*, GetTiling).
"""
from tiling.conv3d_v2.api_base import Conv3dTiling
from tiling.conv3d_v2.api_util import ApiTilingError, NotPorted
from tiling.conv3d_v2.checks import check_conv3d_v2_args
from tiling.conv3d_v2.engine import Conv3dTilingEngine
from tiling.conv3d_v2.generator import conv3d_v2_tiling
from tiling.conv3d_v2.model import BLOB_SIZE, Conv3DRunInfo, Conv3DV2TilingData, TConv3DTiling, tpl_tiling_key

__all__ = ["BLOB_SIZE", "ApiTilingError", "Conv3DRunInfo", "Conv3DV2TilingData", "Conv3dTiling",
           "Conv3dTilingEngine", "NotPorted", "TConv3DTiling", "check_conv3d_v2_args", "conv3d_v2_tiling",
           "tpl_tiling_key"]
