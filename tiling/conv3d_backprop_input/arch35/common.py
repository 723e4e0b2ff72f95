"""The parameter records every arch35 template passes around: `arch35/conv3d_backprop_input_v2_common.h`.

L0TilingParams, L1TilingParams, CoreTilingParams, TilingRunInfo and PlatformInfo by their real field names, the
shared constants, the small integer helpers of `Ops::Base` (CeilDiv, CeilAlign, FloorAlign), and the L1 size
formulas of IsL1ParamsValid (CalFmapH, IsHkWkAligned, CalcBL1Size, the A1 bytes) that the templates and the
validator (validate.py) share.
"""
from __future__ import annotations

from dataclasses import dataclass

# Ops::Base::CeilDiv / CeilAlign, GetMaxDivisor and the "nothing fits" error, shared with every tiling family.
from tiling.common.integers import align_up, ceil_div, max_divisor_at_most  # noqa: F401
from tiling.common.validation import TilingInfeasible  # noqa: F401

C04_COUT_SIZE = 4
VECTOR_REG_WIDTH = 256
ONE_BLOCK_SIZE = 32
BYTE_BLOCK = 32
BYTE_64 = 64
MAX_BASE_MN = 1024
BASIC_BLOCK_SIZE_512 = 512
BASIC_BLOCK_SIZE_256 = 256
BASIC_BLOCK_SIZE_128 = 128
BASIC_BLOCK_SIZE_64 = 64
BASIC_BLOCK_SIZE_32 = 32
BASIC_BLOCK_SIZE_16 = 16
TOTAL_CNT_LOWER_RATIO = 10
TOTAL_CNT_UPPER_RATIO = 45

B2_NO_TRANSPOSE_NO_REVERSE = 0
B2_TRANSPOSE_AND_REVERSE = 1
B2_REVERSE_ONLY = 2
B2_TRANSPOSE_ONLY = 3

UINT16_MAX = 65535
FMAP_H_NUM = 2


def floor_align(a: int, b: int) -> int:
    """Ops::Base::FloorAlign."""
    return a // b * b


@dataclass
class L0TilingParams:
    al0Pbuffer: int = 1
    bl0Pbuffer: int = 1
    cl0Pbuffer: int = 1
    baseM: int = 16
    baseK: int = 16
    baseN: int = 16
    singleCoreCin: int = 16  # the Cin one core handles; not shrunk with baseN


@dataclass
class L1TilingParams:
    al1Pbuffer: int = 1
    bl1Pbuffer: int = 1
    stepKa: int = 1
    stepKb: int = 1
    iterateOrder: int = 1
    isBiasFullLoad: int = 0


@dataclass
class CoreTilingParams:
    singleCoreDin: int = 1
    singleCoreM: int = 1
    singleCoreCout: int = 16
    singleCoreCin: int = 16


@dataclass
class TilingRunInfo:
    mValue: int = 0
    kValue: int = 0
    nValue: int = 0
    lenHkWkC0: int = 0
    enableC04Flag: bool = False
    enableFullLoadTiling: bool = False
    m0: int = 16
    n0: int = 16
    k0: int = 16
    enableVecTransFlag: bool = False
    enableSplitKernelFlag: bool = False
    tilingHkWkMode: int = 0
    kSegment: int = 0
    kSegmentTail: int = 0
    kValueSegment: int = 0
    enableSplitK: bool = False
    useUbAccumForSplitK: bool = False
    enableSmallKernel: bool = False


@dataclass
class PlatformInfo:
    l0_ab_size: int = 0
    l0_c_size: int = 0
    l1_size: int = 0
    ub_size: int = 0


def fmap_h(m_l1_size: int, dedx_w: int, dedy_h: int, stride_h: int, kernel_h: int, dilation_h: int,
           is_l1_split_hk: bool = False) -> int:
    """CalFmapH: dy rows (dilated by the stride) an M block of m_l1_size dx pixels reads."""
    if m_l1_size % dedx_w == 0 or dedx_w % m_l1_size == 0:
        hi_cal = ceil_div(m_l1_size, dedx_w)
    elif m_l1_size > dedx_w:
        hi_cal = m_l1_size // dedx_w + FMAP_H_NUM
    else:
        hi_cal = FMAP_H_NUM
    kh_dilation = 1 if is_l1_split_hk else (kernel_h - 1) * dilation_h + 1
    ho_cal = hi_cal - 1 + kh_dilation
    return min(ho_cal, (dedy_h - 1) * stride_h + 1)


def hk_wk_aligned(k_al1: int, k_bl1: int, k_value: int, len_hk_wk_c0: int) -> bool:
    """IsHkWkAligned: an L1 K load (stepKa*baseK, stepKb*baseK) is all of K or whole kernel-tap groups."""
    return ((k_al1 >= k_value or k_al1 % len_hk_wk_c0 == 0) and (k_bl1 >= k_value or k_bl1 % len_hk_wk_c0 == 0))


def bl1_bytes(k_bl1: int, len_hk_wk_c0: int, base_n: int, bl1_pbuffer: int, dtype_bytes: int) -> int:
    """CalcBL1Size: the B1 bytes of a K load of k_bl1, in whole (or two partial) kernel-tap groups."""
    if k_bl1 % len_hk_wk_c0 == 0 or len_hk_wk_c0 % k_bl1 == 0:
        copy_line = ceil_div(k_bl1, len_hk_wk_c0)
    elif k_bl1 > len_hk_wk_c0:
        copy_line = k_bl1 // len_hk_wk_c0 + 2
    else:
        copy_line = 2
    return bl1_pbuffer * dtype_bytes * base_n * copy_line * len_hk_wk_c0


def al1_bytes(ho: int, dedy_w: int, stride_w: int, k_al1: int, kernel_hw: int, dtype_bytes: int,
              al1_pbuffer: int) -> int:
    """The A1 bytes of IsL1ParamsValid: ho dilated dy rows of dedy_w*stride_w pixels, k_al1 / kernel_hw channels."""
    return ho * dedy_w * stride_w * max(k_al1 // kernel_hw, 1) * dtype_bytes * al1_pbuffer
