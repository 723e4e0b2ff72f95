"""The parameter records every arch35 template passes around: `arch35/conv3d_backprop_input_v2_common.h`.

L0TilingParams, L1TilingParams, CoreTilingParams, TilingRunInfo and PlatformInfo by their real field names, the
shared constants, and the small integer helpers of `Ops::Base` (CeilDiv, CeilAlign, FloorAlign).
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
