"""Conv3DV2 (forward 3D convolution) host tiling on Atlas A2 (arch22). See docs/conv3d_v2_tiling.md."""
from .model import BLOB_SIZE, Conv3DRunInfo, Conv3DV2TilingData, TConv3DTiling, tpl_tiling_key

__all__ = ["BLOB_SIZE", "Conv3DRunInfo", "Conv3DV2TilingData", "TConv3DTiling", "tpl_tiling_key"]
