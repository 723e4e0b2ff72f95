"""Shared rules of the Ascend 950 (arch 3510) instructions: they exist only on arch 3510 platforms, and their
8-bit outputs saturate as the CTRL register's reset value says."""
from __future__ import annotations

import numpy as np

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


def to_output_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """fp32 values converted to dtype; an 8-bit type as the 950 converts with CTRL at its reset value (saturation
    on: NaN -> 0, beyond the largest finite value -> +-max; hifloat8 rounded half away from zero, float8_e4m3fn to
    nearest even: machine/convert.py). Other types: numpy's nearest-even cast.
    [OWN RULE] a CTRL changed by SetCtrlSpr does not reach these conversions yet: they take the reset value."""
    if dtype == hifloat8:
        return to_hifloat8(values)
    if dtype == float8_e4m3fn:
        return to_float8_e4m3fn(values)
    return values.astype(dtype)
