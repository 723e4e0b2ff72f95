"""conv3d_v2_tiling: shapes + platform -> the A2 Conv3DV2TilingData, as the real host's fast-tiling path makes it
(Conv3dBaseTiling::DoOpTiling path 2: the engine, then SetTilingKey).

All three API algorithms are ported: M mode, HW mode (chosen when M mode's smallest L1 load does not fit) and
pointwise (pointwise=True: NCDHW, 1x1x1 kernel). Not here: the AOE knowledge-repository path (path 1, a closed tuning
database) and quantised convolutions (int8 with a scale; the argument checks refuse int8).
"""
from __future__ import annotations

from tiling.conv3d_v2.api_util import ApiTilingError, NotPorted
from tiling.conv3d_v2.checks import check_conv3d_v2_args
from tiling.conv3d_v2.engine import Conv3dTilingEngine
from tiling.conv3d_v2.model import Conv3DV2TilingData

# Own rule: the engine reads the L2 bandwidth with GetCoreMemBw(L2) from the closed platform files. This port uses
# the platform's INI l2 read rate (platform.l2_read_rate, 110 on A2, the value the real unit tests set), not the
# timing model's calibrated GM read rate.
L2_RATE_NOTE = "own rule: l2Rate (GetCoreMemBw(L2), closed) = platform.l2_read_rate (the INI's l2 read rate)"


def conv3d_v2_tiling(x_shape, filter_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0), dilations=(1, 1, 1),
                     groups=1, dtype="bfloat16", platform="Ascend910B2", bias=False, enable_hf32=False,
                     pointwise=False) -> Conv3DV2TilingData:
    """The Conv3DV2 tiling of one problem (NCDHW shapes, (D, H, W) strides/dilations, 6 pads); see
    check_conv3d_v2_args. Raises ValueError/TypeError for bad arguments, ApiTilingError (a ValueError) where the
    real host fails."""
    args = check_conv3d_v2_args(x_shape, filter_shape, strides, pads, dilations, groups, dtype, platform, bias,
                                enable_hf32, pointwise)
    plat = args.platform
    engine = Conv3dTilingEngine({"aicoreNum": plat.aic_cores, "l1Size": plat.L1, "l0aSize": plat.L0A,
                                 "l0bSize": plat.L0B, "l0cSize": plat.L0C, "ubSize": plat.UB, "btSize": plat.BT,
                                 "l2Rate": max(1, int(plat.l2_read_rate))})
    s, a, d = engine.shapeInfo_, engine.attrInfo_, engine.descInfo_
    (s.batch, s.cIn, s.di, s.hi, s.wi), (s.cOut, _, s.kd, s.kh, s.kw) = args.x_shape, args.filter_shape
    engine.outputBatch_, engine.outputCOut_, s.dOut, s.ho, s.wo = args.y_shape
    a.strideD, a.strideH, a.strideW = args.strides
    a.dilationD, a.dilationH, a.dilationW = args.dilations
    a.padHead, a.padTail, a.padTop, a.padBottom, a.padLeft, a.padRight = args.pads
    a.groups, a.hf32Enable = args.groups, int(args.enable_hf32)
    d.fMapDtype = d.weightDtype = d.outDtype = args.dtype
    d.biasDtype = "float32" if args.dtype != "float16" else "float16"  # the aclnn bias types (SUPPORTED_TYPES_*)
    if args.pointwise:
        d.fMapFormat = d.weightFormat = d.outFormat = "NCDHW"
        d.biasDtype = "float32"
    engine.flagInfo_.hasBias = args.bias
    api, run_info = engine.GetConv3DV2TilingData()
    result = Conv3DV2TilingData(convApiTiling=api, convRunInfo=run_info, dtype=args.dtype, platform=plat,
                                notes=[L2_RATE_NOTE], pointwise=args.pointwise)
    result.tiling_key = result.key_from_fields()
    return result


__all__ = ["ApiTilingError", "NotPorted", "conv3d_v2_tiling"]
