"""Shared rules of the Ascend 950 (arch 3510) instructions: they exist only on arch 3510 platforms, and their
8-bit outputs saturate as the CTRL register's reset value says."""
from __future__ import annotations

import numpy as np

from ascend_sim.dtypes import float8_e4m3fn, hifloat8
from ascend_sim.faults import ParameterOutOfRange

ARCH35 = 3510

# the largest finite value of each 8-bit type: en-dtypes finfo (hifloat8 2^15) and ml_dtypes finfo (e4m3fn 448)
_MAX_8BIT = {hifloat8: 32768.0, float8_e4m3fn: 448.0}


def require_arch35(core, name: str, pipe, what: str) -> None:
    """Fault by name when `what` (an instruction or parameter struct of the 950) is used on another arch."""
    arch = core.platform.npu_arch
    if arch != ARCH35:
        raise core.fault(ParameterOutOfRange(
            f"{what} does not exist on arch {arch}: it is an Ascend 950 (arch 3510) instruction "
            f"(platform {core.platform.name})"), name, pipe)


def to_output_dtype(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """fp32 values converted to dtype; an 8-bit type saturates (NaN -> 0, beyond the largest finite value ->
    +-max) as CTRL[48]=0 (the reset value) does, then rounds as the package's cast does: hifloat8 half away from
    zero (en-dtypes), float8_e4m3fn to nearest even (ml_dtypes). Other types: numpy's nearest-even cast."""
    # TODO(merge): use the CTRL-aware conversion of h19machine
    top = _MAX_8BIT.get(dtype)
    if top is None:
        return values.astype(dtype)
    clipped = np.clip(np.nan_to_num(values.astype(np.float32), nan=0.0, posinf=top, neginf=-top), -top, top)
    return clipped.astype(dtype)
