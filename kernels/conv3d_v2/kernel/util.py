"""Constants and integer helpers of the Conv3D forward API (conv_forward_util.h, conv3d_util.h), by their real
names. The kernel's address arithmetic depends on them, so they are spelled out rather than derived."""
from __future__ import annotations

BLOCK_L0_N = 16      # N of one cube fractal (and the cout granularity of FRACTAL_Z_3D)
BLOCK_L0_M = 16      # M of one cube fractal
C0_SIZE = 32         # bytes of one C0 vector
BLOCK_SIZE = 512     # bytes of one L0 fractal: InitConstValue's unit in L0A
BT_SIZE = 64         # bias-table alignment
BT_BLOCK_SIZE = 64   # DataCopy L1 -> BT blockLen unit
AL1_BLOCK_SIZE = 32  # InitConstValue's unit in L1
MAX_UINT16 = 65535
LOAD2D_MAX_REPEAT_TIMES = 255
L0A_SIZE = 65536
L0B_SIZE = 65536

# ConvL0PingPong (ALL_OPEN = 3 is the else branch), GroupConvType, OutputOrder, IterateOrder (conv3d_config.h,
# conv_forward_util.h)
ALL_CLOSE, L0A_OPEN, L0B_OPEN = 0, 1, 2
NOGROUP_CONV, GROUPCONV_WEIGHT_GFZ = 0, 1
M_MODE, HW_MODE = 0, 1
ORDER_MTERFIRST, ORDER_NTERFIRST = 0, 1
NDC1HWC0, NCDHW = "NDC1HWC0", "NCDHW"  # ConvFormat of the fmap (Config::formatA): the pointwise kernel takes NCDHW


def CeilDIV(a: int, b: int) -> int:
    return (a + b - 1) // b


def AlignB(a: int, b: int) -> int:
    return CeilDIV(a, b) * b


def GetCurrentKD(tilingKL1: int, cin: int, khxKw: int) -> int:
    return CeilDIV(tilingKL1, cin * khxKw)
