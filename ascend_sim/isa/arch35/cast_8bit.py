"""The Ascend 950's (arch 3510) vector Cast pairs with the 8-bit float types, for `Cast` (isa/vector/cast.py).

Source: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/类型转换/Cast.md, the 950 table:
hifloat8 -> half / float and fp8_e4m3fn -> float (CAST_NONE, exact); half / float -> hifloat8 (CAST_ROUND: half
away from zero, or CAST_HYBRID: a stochastic rounding, not modelled); float -> fp8_e4m3fn (CAST_RINT). The
fp8_e5m2 rows are left out (no numpy type here). Encodes saturate as the CTRL register says when the Cast issues
(CTRL[48], CTRL[50]; isa/arch35/common.py: eight_bit_saturation).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.arch35.common import to_output_dtype
from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
EIGHT_BIT = (hifloat8, float8_e4m3fn)
PAIRS_3510 = {
    (hifloat8, F16): ("CAST_NONE",), (hifloat8, F32): ("CAST_NONE",), (float8_e4m3fn, F32): ("CAST_NONE",),
    (F16, hifloat8): ("CAST_ROUND", "CAST_HYBRID"), (F32, hifloat8): ("CAST_ROUND", "CAST_HYBRID"),
    (F32, float8_e4m3fn): ("CAST_RINT",),
}


def convert_8bit(values: np.ndarray, dst: np.dtype, mode: str, saturation: tuple | None = None) -> np.ndarray:
    """One Cast of a 950 8-bit pair: a decode is exact; an encode rounds as its mode (the only one modelled for
    the pair) and saturates as `saturation` (saturate, nan_to_zero), read from CTRL when the Cast issued."""
    if values.dtype.itemsize == 1:
        return values.astype(np.float32).astype(dst)
    return to_output_dtype(values.astype(np.float32), dst, saturation)
