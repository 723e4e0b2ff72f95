"""The arch35 kernel entry `conv3d_backprop_input_v2_arch35` (op_kernel/arch35/conv3d_backprop_input_v2_arch35.h),
run on every core of a KERNEL_TYPE_MIX_AIC_1_2 launch (1 AIC : 2 AIV).

The five template parameters come from the tiling key (GET_TPL_TILING_KEY: loadB2Condition bits 0-7,
kernelSplitMode 8-15, groupConvMode 16-23, isBasicBlockTiling bit 24, loadB1Condition 25+); the dtypes and formats
(DTYPE_*/FORMAT_* of the binary) are the caller's. Order, as the source: Conv3dDxSmallKernel for (NO_SPLIT, ORIGIN,
basic, SMALL_KERNEL); else the init-output pass (initOutputFlag == L0_INIT), the AIV weight pre-transpose
(enableVecTrans), then Conv3dDxKsBlock (kernel split), Conv3dDxOswBlock<..., GM_TO_L1, enableC04> (C04) or
Conv3dDxOswBlock<..., loadB1Condition>.

Ported so far: Conv3dDxOswBlock with loadB1Condition GM_TO_L1, NO_HK, NO_HK_WK and VEC_TO_L1_C04 (the AIVs' C04
weight build, c04_transdata.py), group ORIGIN and ENLARGE (the AIV's block-diagonal weight build,
group_transdata.py), every
loadB2Condition, split-K into GM with atomic add (fp32) and through UB (16/8-bit: the fp32 workspace, the AIV's
Cast), the init-output pass and the vecTrans pre-pass (groups == 1); Conv3dDxKsBlock for the kernel split along
H and along H and W; not split-Dk. initOutputFlag L1_INIT (2) runs no init pass, as the
source's entry (only L0_INIT has one; the arch35 tiling sets 0 or 1). `unported_features` names what a tiling
asks for beyond that; the entry refuses it before any instruction (the operator refuses it before launch).
"""
from __future__ import annotations

from ascend_sim.ascendc import ASCEND_IS_AIV
from kernels.conv3d_backprop_input.kernel.arch35.init_output import L0_INIT, Conv3dDxInitOutput
from kernels.conv3d_backprop_input.kernel.arch35.ks_block import Conv3dDxKsBlock
from kernels.conv3d_backprop_input.kernel.arch35.rowc_block import Conv3dDxOswBlock
from kernels.conv3d_backprop_input.kernel.arch35.util import (TPL_GM_TO_L1, TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK,
                                                              TPL_GROUP_MODE_ENLARGE, TPL_GROUP_MODE_ORIGIN,
                                                              TPL_NO_SPLIT_KERNEL, TPL_VEC_TO_L1_C04,
                                                              TPL_SPLIT_KERNEL_H, TPL_SPLIT_KERNEL_HW,
                                                              decode_tiling_key)
from kernels.conv3d_backprop_input.kernel.arch35.vec_transpose import Conv3dDxVecTranspose


def unported_features(tiling_key: int, tilingData, filterFormat: str | None = None) -> list[str]:
    """What this tiling needs that the port does not run yet, by the real names (empty: it runs). filterFormat
    (FORMAT_FILTER), when given, is checked too."""
    loadB2Condition, kernelSplitMode, groupConvMode, isBasicBlockTiling, loadB1Condition = decode_tiling_key(
        tiling_key)
    t = tilingData
    hw = kernelSplitMode == TPL_SPLIT_KERNEL_HW
    checks = [
        (kernelSplitMode not in (TPL_NO_SPLIT_KERNEL, TPL_SPLIT_KERNEL_H, TPL_SPLIT_KERNEL_HW),
         f"kernelSplitMode={kernelSplitMode} (Conv3dDxKsBlock)"),
        (hw and filterFormat == "NCDHW" and not t.kSCoutFullLoad and not t.enableVecTrans,
         "kernelSplitMode=1 with an NCDHW filter, kSCoutFullLoad=0 and enableVecTrans=0 "
         "(LoadToB1Dn2NzTransposeForKernelSplitHW reads ctx.dkHkWk_, which the source never sets)"),
        (groupConvMode == TPL_GROUP_MODE_ENLARGE and t.c0 == 32,  # c0 32: an 8-bit type
         f"groupConvMode={groupConvMode} (ENLARGE) with an 8-bit type (the source compiles the AIV's weight build "
         "out for hifloat8 / fp8: the AIC would wait for a weight that never comes; the tiling never enlarges "
         "8-bit)"),
        (groupConvMode == TPL_GROUP_MODE_ENLARGE and (kernelSplitMode != TPL_NO_SPLIT_KERNEL
                                                      or loadB1Condition != TPL_GM_TO_L1),
         f"groupConvMode={groupConvMode} (ENLARGE) with kernelSplitMode={kernelSplitMode} / "
         f"loadB1Condition={loadB1Condition} (the tiling never combines them)"),
        (loadB1Condition not in (TPL_GM_TO_L1, TPL_VEC_TO_L1_C04, TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK),
         f"loadB1Condition={loadB1Condition} (SMALL_KERNEL)"),
        (loadB1Condition == TPL_VEC_TO_L1_C04 and (kernelSplitMode != TPL_NO_SPLIT_KERNEL or t.c0 != 16
                                                   or groupConvMode != TPL_GROUP_MODE_ORIGIN),
         f"loadB1Condition={loadB1Condition} (C04) with kernelSplitMode={kernelSplitMode}, "
         f"groupConvMode={groupConvMode} or c0={t.c0} (the tiling sends only fp16 / bf16 without kernel split or "
         "ENLARGE to C04)"),
        (not isBasicBlockTiling, "isBasicBlockTiling=0"),
        (t.initOutputFlag not in (0, 1, 2), f"initOutputFlag={t.initOutputFlag} (not NO_INIT, L0_INIT or L1_INIT)"),
        (bool(t.enableVecTrans) and t.group > 1, "enableVecTrans=1 with groups > 1"),
        (t.singleIterateDk != t.dk, f"singleIterateDk={t.singleIterateDk} < dk={t.dk} (split-Dk: dead code in the "
                                    "source, which never advances curDkIdx_ past 0 and whose AIV returns before the "
                                    "FLAG_FIXP_ID handshake; the arch35 tiling always sets singleIterateDk = dk)"),
    ]
    return [text for bad, text in checks if bad]


def conv3d_backprop_input_v2_arch35(input_size, filter, out_backprop, y, workSpace, tilingData, *, tiling_key: int,
                                    dtype, filterFormat: str = "NCDHW", dedyFormat: str = "NCDHW",
                                    yFormat: str = "NCDHW") -> None:
    """One core's work. filter, out_backprop, y and workSpace are GmAddr; dtype is DTYPE_FILTER =
    DTYPE_OUT_BACKPROP = DTYPE_Y and the formats FORMAT_FILTER / FORMAT_OUT_BACKPROP / FORMAT_Y."""
    missing = unported_features(tiling_key, tilingData, filterFormat)
    if missing:
        raise NotImplementedError(f"tiling key {tiling_key}: not ported to the arch35 kernel yet: "
                                  + "; ".join(missing))
    if tilingData.initOutputFlag == L0_INIT:
        opInitOutput = Conv3dDxInitOutput(dtype)
        opInitOutput.Init(y, tilingData)
        opInitOutput.Process()
        opInitOutput.Destroy()
    if ASCEND_IS_AIV() and tilingData.enableVecTrans:
        opVecTranspose = Conv3dDxVecTranspose(dtype)
        opVecTranspose.Init(filter, workSpace, tilingData)
        opVecTranspose.Process()
        opVecTranspose.Destroy()
    loadB2Condition, kernelSplitMode, groupConvMode, _, loadB1Condition = decode_tiling_key(tiling_key)
    if kernelSplitMode != TPL_NO_SPLIT_KERNEL:
        op = Conv3dDxKsBlock(dtype, filterFormat, dedyFormat, yFormat, loadB2Condition, kernelSplitMode)
    elif loadB1Condition == TPL_VEC_TO_L1_C04:  # Conv3dDxOswBlock<..., TPL_GM_TO_L1, true>
        op = Conv3dDxOswBlock(dtype, filterFormat, dedyFormat, yFormat, loadB2Condition, TPL_GM_TO_L1,
                              groupConvMode, enableC04Flag=True)
    else:
        op = Conv3dDxOswBlock(dtype, filterFormat, dedyFormat, yFormat, loadB2Condition, loadB1Condition,
                              groupConvMode)
    op.Init(filter, out_backprop, y, workSpace, tilingData)
    op.Process()
