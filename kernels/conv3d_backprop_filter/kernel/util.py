"""Integer helpers of the real dw kernel (conv_bp_util.h), with their corner cases (DivHkWk(a, b) is 0 and
CeilHkWk(a, b) is 1 when b > a): the kernel's address arithmetic depends on them."""
from __future__ import annotations

from ascend_sim.ascendc import current_core

BLOCK_CUBE = 16
ONE_BLK_SIZE = 32
MAX_BLOCK_COUNT = 4095
MAX_BLOCK_LEN = 65535
MAX_16BITS_STRIDE = 65535
MAX_L1W = 32767


def Ceil(a: int, b: int) -> int:
    return (a + b - 1) // b


DivCeil = Ceil


def DivHkWk(a: int, hkWk: int) -> int:
    return 0 if hkWk > a else a // hkWk


def CeilHkWk(a: int, hkWk: int) -> int:
    return 1 if hkWk > a else Ceil(a, hkWk)


def RemainderOfHkWk(a: int, hkWk: int) -> int:
    return a if hkWk > a else a % hkWk


def ShiftCeilM0(a: int, m0: int = 16) -> int:
    return (a + 15) >> 4


def CalRows2Copy(copySize: int, width: int) -> int:
    """Rows of width `width` a run of copySize pixels can touch (one more unless it ends on a row or half-row)."""
    if copySize > width:
        rows = Ceil(copySize, width)
        if copySize == rows * width:
            return rows
        if (2 * copySize) % width != 0:
            return rows + 1
        return rows
    if copySize == width:
        return 1
    return 2 if width % copySize != 0 else 1


def total_sizes() -> tuple[int, int]:
    """TOTAL_L0A_SIZE, TOTAL_L0B_SIZE of the core the kernel runs on."""
    p = current_core().platform
    return p.L0A, p.L0B
