"""Float conversions into the Ascend 950's 8-bit types as the chip does them: rounding, then saturation.

The packages give the codes (en-dtypes' hifloat8, ml_dtypes' float8_e4m3fn; their `astype` is the rounding
Huawei's own goldens use). The chip differs from them only out of range and on NaN, through the CTRL register
(isa/ctrl.py; asc-devkit@82b89a15 docs/zh/api/SIMD-API/基础API/特殊寄存器访问/SetCtrlSpr(ISASI).md table 3):

* saturate=True (CTRL[48] = 0, the reset value): inf -> +-max, NaN -> 0; hifloat8 max 32768, float8_e4m3fn max
  448, so a finite value beyond max gives +-max as well. For float8_e4m3fn, nan_to_zero=False (CTRL[50] = 1) keeps
  NaN as NaN.
* saturate=False (CTRL[48] = 1): the package's result: hifloat8 |x| >= 40960 -> +-inf, NaN -> NaN;
  float8_e4m3fn |x| > 464 or inf -> NaN.

Rounding (asc-devkit Cast.md, 950 table; Fixpipe 随路量化.md): hifloat8 takes CAST_ROUND (round half away from
zero, QF322HIF8_PRE's "Half to Away Round"); CAST_HYBRID (stochastic) is not modelled. float8_e4m3fn takes
CAST_RINT (round half to even). [INFERENCE] QF322FP8_PRE rounds as CAST_RINT: the Fixpipe page does not say.
[INFERENCE] a hifloat8 value that rounds to inf saturates to +-32768 (the page names inf inputs only).
[UNKNOWN] whether the chip rounds hifloat8 denormals at the linear midpoint, as en-dtypes does.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8

HIFLOAT8_MAX = 32768.0  # 0x6E: Dot 11, E +15, M 0 (en-dtypes finfo)
FLOAT8_E4M3FN_MAX = 448.0  # 0x7E (ml_dtypes finfo)
CAST_ROUND, CAST_RINT, CAST_HYBRID = "CAST_ROUND", "CAST_RINT", "CAST_HYBRID"  # Ascend C RoundMode names


def _saturated(x: np.ndarray, limit: float) -> np.ndarray:
    """NaN -> 0 and everything outside [-limit, limit] (inf included) -> +-limit, in float32."""
    x = np.asarray(x, dtype=np.float32)
    return np.clip(np.nan_to_num(x, nan=0.0, posinf=limit, neginf=-limit), -limit, limit)


def to_hifloat8(x, saturate: bool = True, round_mode: str = CAST_ROUND) -> np.ndarray:
    """fp32 values -> hifloat8, rounded half away from zero; saturate as CTRL[48] = 0 does (see the module)."""
    if round_mode != CAST_ROUND:
        raise ValueError(f"round_mode={round_mode!r}: float -> hifloat8 takes CAST_ROUND here "
                         "(CAST_HYBRID, the chip's stochastic mode, is not modelled)")
    x = np.asarray(x, dtype=np.float32)
    return (_saturated(x, HIFLOAT8_MAX) if saturate else x).astype(hifloat8)


def to_float8_e4m3fn(x, saturate: bool = True, nan_to_zero: bool = True, round_mode: str = CAST_RINT) -> np.ndarray:
    """fp32 values -> float8_e4m3fn, rounded half to even; saturate as CTRL[48] = 0 does, NaN kept when
    nan_to_zero is False (CTRL[50] = 1)."""
    if round_mode != CAST_RINT:
        raise ValueError(f"round_mode={round_mode!r}: float -> float8_e4m3fn takes only CAST_RINT (Cast.md)")
    x = np.asarray(x, dtype=np.float32)
    if not saturate:
        return x.astype(float8_e4m3fn)
    out = _saturated(x, FLOAT8_E4M3FN_MAX).astype(float8_e4m3fn)
    if not nan_to_zero:
        out[np.isnan(x)] = np.nan
    return out

