"""Constants and integer helpers of the arch35 kernel (conv3d_backprop_input_v2_arch35_tiling_key.h,
conv_bp_input_sub_func_utils.h, conv3d_bp_common_func.h::CalFmapH), with their real names and semantics."""
from __future__ import annotations

from ascend_sim.ascendc import ASCEND_IS_AIV, GetBlockIdx, current_core

# conv3d_backprop_input_v2_arch35_tiling_key.h: the five template parameters' values
TPL_NO_TRANSPOSE_NO_REVERSE, TPL_TRANSPOSE_AND_REVERSE, TPL_REVERSE_ONLY, TPL_TRANSPOSE_ONLY = 0, 1, 2, 3
TPL_NO_SPLIT_KERNEL, TPL_SPLIT_KERNEL_HW, TPL_SPLIT_KERNEL_H = 0, 1, 2
TPL_GROUP_MODE_ORIGIN, TPL_GROUP_MODE_ENLARGE = 0, 1
TPL_GM_TO_L1, TPL_VEC_TO_L1_C04, TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK, TPL_SMALL_KERNEL = 0, 1, 2, 3, 4

# conv_bp_input_sub_func_utils.h: the cross-core flag IDs and mode of the MIX 1:2 kernel
FLAG_MTE1_ID_1, FLAG_MTE1_ID_2, FLAG_FIXP_ID, FLAG_MTE2_VEC_ID = 6, 7, 8, 9
SYNC_MODE = 4
CROSS_CORE_FLAG_ID_MAX = 16
SYNC_MODE2 = 2  # conv3d_dx_rowc_block.h
SYNC_AIV_AIC_DET_FLAG = 6  # conv3d_dx_rowc_block.h: the vecTrans pre-pass is done

BLOCK_CUBE = 16
C04_COUT_SIZE, C04_SHIFT_SIZE = 4, 2  # conv_bp_input_sub_func_utils.h: C04's couts a tap
DQ_SCALAR_ONE = 0x3F800000  # fp32 1.0, the Fixpipe scale of the 8-bit quant modes
FORMAT_NCDHW, FORMAT_NDHWC, FORMAT_DHWCN = "NCDHW", "NDHWC", "DHWCN"


def decode_tiling_key(key: int) -> tuple[int, int, int, bool, int]:
    """GET_TPL_TILING_KEY's fields: (loadB2Condition, kernelSplitMode, groupConvMode, isBasicBlockTiling,
    loadB1Condition) from bits 0-7, 8-15, 16-23, 24 and 25+."""
    return key & 0xFF, (key >> 8) & 0xFF, (key >> 16) & 0xFF, bool((key >> 24) & 1), (key >> 25) & 0xFF


def DivCeil(a: int, b: int) -> int:
    return -(-a // b)


def AlignUp(a: int, b: int) -> int:
    return DivCeil(a, b) * b


def AlignDown(a: int, b: int) -> int:
    return a // b * b


def DivCeil16(a: int) -> int:
    return (a + 15) >> 4


def AlignUp16(a: int) -> int:
    return DivCeil16(a) << 4


def DivCeilC0(api, a: int) -> int:
    t = api.tiling_
    return (a + t.c0 - 1) >> t.c0BitsB


def AlignUpC0(api, a: int) -> int:
    t = api.tiling_
    return ((a + t.c0 - 1) >> t.c0BitsB) << t.c0BitsB


def CurHkWk(api) -> int:
    """The kernel taps of one K row: the current sub-kernel's splitHkWk under kernel split, else singleShapeHWk_."""
    return api.splitHkWkList_[api.splitIndex_] if api.kernelSplitMode != TPL_NO_SPLIT_KERNEL else api.singleShapeHWk_


def DivHkWk(api, a: int) -> int:
    hw = CurHkWk(api)
    return a // hw if hw > 1 else a


def DivCeilHkWk(api, a: int) -> int:
    hw = CurHkWk(api)
    return DivCeil(a, hw) if hw > 1 else a


def CalFmapH(api, mL1Size: int) -> int:
    """Rows of dilated dy that an M block of mL1Size output pixels needs (conv3d_bp_common_func.h)."""
    t = api.tiling_
    if mL1Size >= t.wi:
        hiCal = mL1Size // t.wi
        if mL1Size != hiCal * t.wi:
            hiCal += 2  # the first and last rows are partial
    else:
        hiCal = 1 if t.wi % mL1Size == 0 else 2
    curHk = api.splitHkList_[0] if api.kernelSplitMode == TPL_SPLIT_KERNEL_H else t.hk
    if api.loadB1Condition != TPL_GM_TO_L1:
        curHk = 1  # NO_HK / NO_HK_WK: one kernel row at a time
    khDilation = t.khDilation if curHk == t.hk else (curHk - 1) * t.dilationH + 1
    return (hiCal - 1) + khDilation


def total_sizes() -> tuple[int, int, int]:
    """TOTAL_L0A_SIZE, TOTAL_L0B_SIZE, TOTAL_L0C_SIZE of the core the kernel runs on."""
    p = current_core().platform
    return p.L0A, p.L0B, p.L0C


def TOTAL_UB_SIZE() -> int:
    """UB bytes of the vector core the kernel runs on (UB_SIZE of conv_bp_input_sub_func_utils.h)."""
    return current_core().platform.UB


def GetAicBlockIdx() -> int:
    """The AIC's block index; an AIV of a MIX 1:2 kernel shares its AIC's (GetBlockIdx() >> 1)."""
    return GetBlockIdx() >> 1 if ASCEND_IS_AIV() else GetBlockIdx()
