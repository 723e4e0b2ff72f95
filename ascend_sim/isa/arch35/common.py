"""Shared rules of the Ascend 950 (arch 3510) instructions: they exist only on arch 3510 platforms, and their
8-bit outputs saturate as the CTRL register says when they issue."""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.ctrl import ctrl_value, float_saturation
from ascend_sim.machine.convert import to_float8_e4m3fn, to_hifloat8
from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange

ARCH35 = 3510

def require_arch35(core, name: str, pipe, what: str) -> None:
    """Fault by name when `what` (an instruction or parameter struct of the 950) is used on another arch."""
    arch = core.platform.npu_arch
    if arch != ARCH35:
        raise core.fault(ParameterOutOfRange(
            f"{what} does not exist on arch {arch}: it is an Ascend 950 (arch 3510) instruction "
            f"(platform {core.platform.name})"), name, pipe)


def eight_bit_saturation(core, name: str, pipe, dtype: np.dtype) -> tuple[tuple | None, tuple]:
    """(saturation, registers) of an instruction `name` converting fp32 into `dtype` now: for an 8-bit dtype the
    (saturate, nan_to_zero) pair CTRL gives (ctrl.float_saturation) and the CTRL value it read, as a register the
    record names; for other types (None, ()) (their conversions do not read CTRL here, as on A2)."""
    if dtype.itemsize != 1:
        return None, ()
    return float_saturation(core, name, pipe), (("ctrl", ctrl_value(core)),)


def to_output_dtype(values: np.ndarray, dtype: np.dtype, saturation: tuple | None = None) -> np.ndarray:
    """fp32 values converted to dtype; an 8-bit type as the 950 converts (hifloat8 rounded half away from zero,
    float8_e4m3fn to nearest even: machine/convert.py) with `saturation` = (saturate, nan_to_zero) from
    eight_bit_saturation. Other types: numpy's nearest-even cast."""
    if dtype == hifloat8:
        return to_hifloat8(values, saturate=saturation[0])
    if dtype == float8_e4m3fn:
        return to_float8_e4m3fn(values, saturate=saturation[0], nan_to_zero=saturation[1])
    return values.astype(dtype)
