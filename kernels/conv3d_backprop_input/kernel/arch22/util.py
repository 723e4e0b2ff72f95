"""Small integer helpers of the real kernel (conv3d_bp_util.h) and the constants it is compiled with.

They are kept with their real semantics, including the corner cases (CalcFloorAlign(a, b) returns b when
b >= a), because the kernel's address arithmetic depends on them.
"""
from __future__ import annotations

from ascend_sim.ascendc import current_core

BLOCK_CUBE = 16  # rows/cols of one cube fractal; also the cout granularity of FRACTAL_Z_3D (N0)
FORMAT_NCDHW, FORMAT_NDC1HWC0 = "NCDHW", "NDC1HWC0"  # FORMAT_Y, the y format the kernel is compiled for
FRACTAL_ELEMS_B16 = 256  # elements of one 512-byte b16 fractal: the LoadData 2D unit


def Ceil(a: int, b: int) -> int:
    return -(-a // b)


DivCeil = Ceil


def CalcDiv(a: int, b: int) -> int:
    if b > a:
        return 0
    if b == a:
        return 1
    return a // b


def CalcFloorAlign(a: int, b: int) -> int:
    if b >= a:
        return b
    if b == 1:
        return a
    return a // b * b


def CalcRemainder(a: int, b: int) -> int:
    if b > a:
        return a
    if b == 1 or b == a:
        return 0
    return a % b


def ShiftCeilBlockCube(a: int) -> int:
    return (a + 15) >> 4


def AlignUp(a: int, b: int) -> int:
    return Ceil(a, b) * b


def total_sizes() -> tuple[int, int, int]:
    """TOTAL_L0A_SIZE, TOTAL_L0B_SIZE, TOTAL_L0C_SIZE of the core the kernel runs on (64K/64K/128K on A2)."""
    p = current_core().platform
    return p.L0A, p.L0B, p.L0C


def total_ub_size() -> int:
    """TOTAL_UB_SIZE of the core the kernel runs on (192K on A2)."""
    return current_core().platform.UB


def CalFmapH(tiling, mL1Size: int) -> int:
    """Rows of dilated dy an M block of mL1Size output pixels needs (the kernel's CalFmapH)."""
    wi = tiling.wi
    if mL1Size >= wi:
        hiCal = mL1Size // wi
        if mL1Size != hiCal * wi:
            hiCal += 2
    else:
        hiCal = 1 if wi % mL1Size == 0 else 2
    khDilation = (tiling.hk - 1) * tiling.dilationH + 1
    return (hiCal - 1) + khDilation
