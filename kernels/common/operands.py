"""The host operators' shared operand checks: a format name, an input array, a 5-value D/H/W attribute, the arch
a ported kernel runs on.

Each raises before launch with the argument's name, its value and what is allowed (TypeError for a wrong type,
ValueError for a wrong value)."""
from __future__ import annotations

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.platform import get_platform
from tiling.common.checks import check_ints


def check_format(name: str, value, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={value!r} must be a string, one of {allowed}")
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {allowed}")
    return value


def check_array(name: str, value, ndim: int | None = None) -> np.ndarray:
    """A numpy array of a supported dtype (and with ndim dimensions, when given)."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy.ndarray, got {type(value).__name__}")
    if value.dtype not in DTYPES.values():
        raise TypeError(f"{name}.dtype={value.dtype} is not supported; allowed: {sorted(DTYPES)} "
                        "(bfloat16 from ml_dtypes)")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {value.shape}")
    return value


def dhw_attribute(name: str, values, data_format: str) -> tuple[int, int, int]:
    """The D, H, W entries of a 5-value attribute in data_format order; its N and C entries must be 1."""
    values = check_ints(name, values, 5, tuple(data_format))
    n_c = (values[0], values[4]) if data_format == "NDHWC" else values[:2]
    if n_c != (1, 1):
        raise ValueError(f"{name}={values!r}: the N and C entries ({data_format} order) must be 1")
    return values[1:4] if data_format == "NDHWC" else values[2:5]


def require_arch22_kernel(op: str, platform) -> None:
    """Refuse a platform whose npu_arch is not 2201 for an operator whose only port is its arch22 kernel: the 950
    (arch 3510) reads L0A as NZ, has other load paths and runs the arch35 kernel, which the real hardware would
    never run the arch22 one in place of."""
    plat = get_platform(platform)
    if plat.npu_arch != 2201:
        raise ValueError(f"platform={plat.name!r} (npu_arch {plat.npu_arch}): {op} runs its arch22 kernel (Atlas "
                         f"A2/A3, npu_arch 2201) only; the arch35 kernel (op_kernel/arch35) is not ported yet")
