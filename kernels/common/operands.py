"""The host operators' shared operand checks: an input array, a 5-value D/H/W attribute, the lower
bounds of sizes and attributes (checked before any arithmetic reads them), the arch a ported kernel runs on.

Each raises before launch with the argument's name, its value and what is allowed (TypeError for a wrong type,
ValueError for a wrong value)."""
from __future__ import annotations

import warnings

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.platform import Platform
from tiling.common.problem import check_ints


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


def check_at_least(name: str, values, low: int, labels) -> None:
    """Every value >= low: a zero stride or channel count would divide by zero, a negative pad or kernel would reach
    numpy or read as a shape mismatch, so the bound is checked by name before any arithmetic."""
    for i, (value, label) in enumerate(zip(values, labels)):
        if value < low:
            raise ValueError(f"{name}[{i}] ({label})={value} is outside the allowed range: it must be >= {low}")


def dhw_attribute(name: str, values, data_format: str) -> tuple[int, int, int]:
    """The D, H, W entries of a 5-value attribute (strides, dilations: each >= 1) in data_format order; its N and C
    entries must be 1."""
    values = check_ints(name, values, 5, tuple(data_format))
    n_c = (values[0], values[4]) if data_format == "NDHWC" else values[:2]
    if n_c != (1, 1):
        raise ValueError(f"{name}={values!r}: the N and C entries ({data_format} order) must be 1")
    check_at_least(name, values, 1, tuple(data_format))
    return values[1:4] if data_format == "NDHWC" else values[2:5]


DEFAULT_DATA_FORMAT = "NDHWC"  # dx and dw, as the real Conv3DBackpropInputV2 / Conv3DBackpropFilterV2 operators


class DataFormatAssumedWarning(UserWarning):
    """data_format was not given, NDHWC was assumed, and the arrays' shapes also fit NCDHW."""


def check_spatial_fit(x_name: str, x_dhw, dy_dhw, filter_name: str, kernel, strides, dilations, pads, axis_of,
                      error: type[ValueError] = ValueError) -> None:
    """Per axis D, H, W: the dilated kernel spans at most the padded input, and out_backprop's size is the
    convolution's, (x + pads - span) // stride + 1; worded with the user's argument names (x_name "input_size" or
    "x", filter_name "filter" or "filter_size") and axis_of(letter), where the axis sits in the user's layout.
    A kernel of 1 along an axis takes no dilation there."""
    for i, axis in enumerate("DHW"):
        k, s = kernel[i], strides[i]
        d = dilations[i] if k > 1 else 1
        before, after = pads[2 * i], pads[2 * i + 1]
        size, span = x_dhw[i], (k - 1) * d + 1
        if span > size + before + after:
            raise error(f"{filter_name} kernel {axis}={k} with dilation {d} spans {span}, more than {x_name} "
                        f"{axis}={size} ({axis_of(axis)}) plus pads {before}+{after}")
        expect = (size + before + after - span) // s + 1
        if dy_dhw[i] != expect:
            raise error(f"out_backprop {axis}={dy_dhw[i]} ({axis_of(axis)}) does not fit the convolution: expected "
                        f"({x_name} {axis}={size} + pads {before}+{after} - dilation {d}*(kernel {k}-1) - 1) "
                        f"// stride {s} + 1 = {expect}")


def default_data_format(data_format) -> tuple[str, bool]:
    """(the data_format to use, whether it was assumed): None means the operators' default, NDHWC."""
    return (DEFAULT_DATA_FORMAT, True) if data_format is None else (data_format, False)


def warn_data_format_assumed(operator: str) -> None:
    """One warning per call: the shapes fit both layouts, so NCDHW arrays passed without data_format would give a
    plausible but wrong result without a word."""
    warnings.warn(f"{operator}: data_format was not given, so NDHWC was assumed (the real operator's default); the "
                  "arrays' shapes also fit NCDHW: pass data_format='NCDHW' if they are NCDHW, or data_format='NDHWC' "
                  "to silence this", DataFormatAssumedWarning, stacklevel=4)


def require_arch22_kernel(op: str, plat: Platform) -> None:
    """Refuse a platform whose npu_arch is not 2201 for an operator whose only port is its arch22 kernel: the 950
    (arch 3510) reads L0A as NZ, has other load paths and runs the arch35 kernel, which the real hardware would
    never run the arch22 one in place of. plat: the Platform the operator normalised at its entry."""
    if plat.npu_arch != 2201:
        raise ValueError(f"platform={plat.name!r} (npu_arch {plat.npu_arch}): {op} runs its arch22 kernel (Atlas "
                         f"A2/A3, npu_arch 2201) only; the arch35 kernel (op_kernel/arch35) is not ported yet")


def stand_in(shape: tuple | int, dtype) -> np.ndarray:
    """A read-only array of `shape` and `dtype` that takes no memory (a broadcast zero): the operand of a
    timing-only run, whose bytes nothing reads."""
    return np.broadcast_to(np.zeros((), dtype), shape)
