"""The dx operator's argument checks: types, formats, ranges and the convolution's shape relations, before launch.

check_problem checks a problem given by shapes and a dtype (all a plan needs, see plan.py); check_operands and
operands_to_ncdhw are the thin layer for the arrays themselves. Every error names the parameter, its value and
what is allowed. A shape relation that fails in the given data_format is tried in the other one as well, and the
error says so when the arrays would fit there: an NCDHW array passed with the default data_format="NDHWC" is the
usual cause.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import DATA_FORMATS, FILTER_FORMATS, filter_shape_to_ncdhw, filter_to_ncdhw
from kernels.common.operands import check_array, check_spatial_fit, default_data_format, warn_data_format_assumed
from tiling.common.problem import (PAD_NAMES, ConvProblem, check_dtype, check_format, check_hf32, check_in_range,
                                   check_int, check_ints, check_platform, effective_dilations)
# Envelope limits of the A2 host code (conv_backprop_input_context_utils.cpp), checked on the user's values.
from tiling.conv3d_backprop_input.arch22.checks import (DILATION_MAX, GROUPS_MAX, KERNEL_D_MAX, KERNEL_HW_MAX, PAD_MAX,
                                                        STRIDE_D_MAX, STRIDE_HW_MAX)

_in_range = partial(check_in_range, by_label=False)  # "name=value is outside ..." with the caller's name


class ShapeMismatch(ValueError):
    """The arrays' shapes do not describe one convolution in the data_format they were read in."""


def _shape(name: str, shape) -> tuple[int, ...]:
    """An operand's shape: 5 dimensions, none empty (worded as for an array of that shape)."""
    shape = tuple(check_int(f"{name} shape", size) for size in shape)
    if len(shape) != 5:
        raise ValueError(f"{name} must have 5 dimensions, got shape {shape} ({len(shape)} dimensions)")
    if min(shape) < 1:
        raise ValueError(f"{name} has an empty axis (shape {shape})")
    return shape


def _to_dhw(values: tuple[int, ...], data_format: str) -> tuple[int, int, int]:
    """(N, C, D, H, W) entries of a 5-value attribute given in data_format order."""
    return values[1:4] if data_format == "NDHWC" else values[2:5]


def _to_ncdhw(values: tuple[int, ...], data_format: str) -> tuple[int, int, int, int, int]:
    n, *rest = values
    return (n, rest[3], *rest[:3]) if data_format == "NDHWC" else tuple(values)


@dataclass(frozen=True)
class _Layout:
    """The user's 5-value arguments read in one data_format, range-checked, in NCDHW / DHW terms."""

    data_format: str
    size: tuple[int, int, int, int, int]  # input_size as (N, C, D, H, W)
    dy_shape: tuple[int, int, int, int, int]  # out_backprop's shape as (N, C, D, H, W)
    strides: tuple[int, int, int]
    dilations: tuple[int, int, int]

    def axis(self, letter: str) -> str:
        """'axis i in data_format=...' for one of N, C, D, H, W."""
        return f"axis {self.data_format.index(letter)} in data_format={self.data_format!r}"


def _read_layout(data_format: str, size5, dy_shape, st5, dl5) -> _Layout:
    for name, values in (("strides", st5), ("dilations", dl5)):
        n_c = (values[0], values[4]) if data_format == "NDHWC" else values[:2]
        if n_c != (1, 1):
            raise ValueError(f"{name}={values!r}: the N and C entries ({data_format} order) must be 1")
    st, dl = _to_dhw(st5, data_format), _to_dhw(dl5, data_format)
    for value, name in zip(size5, data_format):
        _in_range(f"input_size ({name})", value, 1, 2**31 - 1)
    _in_range("strides (D)", st[0], 1, STRIDE_D_MAX)
    _in_range("strides (H)", st[1], 1, STRIDE_HW_MAX)
    _in_range("strides (W)", st[2], 1, STRIDE_HW_MAX)
    for i, axis in enumerate("DHW"):
        _in_range(f"dilations ({axis})", dl[i], 1, DILATION_MAX)
    return _Layout(data_format, _to_ncdhw(size5, data_format), _to_ncdhw(dy_shape, data_format), st, dl)


def _check_relations(lay: _Layout, weight_shape, pads, groups: int, filter_shape, filter_format: str) -> None:
    """The convolution's shape relations between input_size, out_backprop and the filter (ShapeMismatch)."""
    n, cin, di, hi, wi = lay.size
    cout, cin_g, kd, kh, kw = weight_shape
    filt = f"(filter shape {filter_shape} in filter_format={filter_format!r})"
    if lay.dy_shape[0] != n:
        raise ShapeMismatch(f"out_backprop batch N={lay.dy_shape[0]} (axis 0) must equal input_size N={n}")
    if lay.dy_shape[1] != cout:
        raise ShapeMismatch(f"out_backprop channels={lay.dy_shape[1]} ({lay.axis('C')}) must equal the filter's "
                            f"Cout={cout} {filt}")
    if cin % groups or cout % groups:
        raise ShapeMismatch(f"groups={groups} must divide both input_size C={cin} ({lay.axis('C')}) and the "
                            f"filter's Cout={cout}")
    if cin_g * groups != cin:
        raise ShapeMismatch(f"the filter's Cin/groups={cin_g} times groups={groups} must equal input_size C={cin} "
                            f"({lay.axis('C')}) {filt}")
    check_spatial_fit("input_size", (di, hi, wi), lay.dy_shape[2:], "filter", (kd, kh, kw), lay.strides,
                      lay.dilations, pads, lay.axis, ShapeMismatch)


def _fits_in(data_format: str, size5, dy_shape, st5, dl5, weight_shape, pads, groups, filter_shape,
             filter_format) -> bool:
    try:
        _check_relations(_read_layout(data_format, size5, dy_shape, st5, dl5), weight_shape, pads, groups,
                         filter_shape, filter_format)
    except ValueError:
        return False
    return True


def check_problem(input_size, filter_shape, out_backprop_shape, dtype, strides, pads, dilations, groups,
                  data_format, filter_format, platform, enable_hf32) -> ConvProblem:
    """Every user-visible argument check that needs no data; raises TypeError/ValueError naming the parameter and
    what is allowed. The shapes are the arrays' (filter in filter_format, out_backprop in data_format); dtype is a
    name or a numpy dtype. data_format=None is NDHWC, with a DataFormatAssumedWarning when the shapes also fit
    NCDHW."""
    data_format, assumed = default_data_format(data_format)
    data_format = check_format("data_format", data_format, DATA_FORMATS)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS)
    filter_shape = _shape("filter", filter_shape)
    dy_shape = _shape("out_backprop", out_backprop_shape)
    dtype = check_dtype(dtype)
    enable_hf32 = check_hf32("enable_hf32", enable_hf32, dtype)
    plat = check_platform(platform)
    size5 = check_ints("input_size", input_size, 5, tuple(data_format))
    st5 = check_ints("strides", strides, 5, tuple(data_format))
    dl5 = check_ints("dilations", dilations, 5, tuple(data_format))
    pd = check_ints("pads", pads, 6, PAD_NAMES)
    groups = check_int("groups", groups)
    lay = _read_layout(data_format, size5, dy_shape, st5, dl5)
    for i, name in enumerate(PAD_NAMES):
        _in_range(f"pads[{i}] ({name})", pd[i], 0, PAD_MAX)
    _in_range("groups", groups, 1, GROUPS_MAX)
    weight_shape = filter_shape_to_ncdhw(filter_shape, filter_format)
    _in_range("filter kernel D", weight_shape[2], 1, KERNEL_D_MAX)
    _in_range("filter kernel H", weight_shape[3], 1, KERNEL_HW_MAX)
    _in_range("filter kernel W", weight_shape[4], 1, KERNEL_HW_MAX)
    try:
        _check_relations(lay, weight_shape, pd, groups, filter_shape, filter_format)
    except ShapeMismatch as err:
        other = DATA_FORMATS[1 - DATA_FORMATS.index(data_format)]
        if _fits_in(other, size5, dy_shape, st5, dl5, weight_shape, pd, groups, filter_shape, filter_format):
            raise ShapeMismatch(f"{err}; with data_format={other!r} the shapes would fit") from None
        raise
    if assumed and _fits_in("NCDHW", size5, dy_shape, st5, dl5, weight_shape, pd, groups, filter_shape, filter_format):
        warn_data_format_assumed("conv3d_backprop_input_v2")
    return ConvProblem(x_shape=lay.size, filter_shape=weight_shape, y_shape=lay.dy_shape, strides=lay.strides, pads=pd,
                       dilations=effective_dilations(weight_shape[2:], lay.dilations), groups=groups, dtype=dtype,
                       platform=plat, enable_hf32=enable_hf32, data_format=data_format, filter_format=filter_format,
                       dilations_given=tuple(lay.dilations))


def check_operands(filter, out_backprop) -> None:
    """The checks only the arrays need (numpy arrays of one supported dtype); check_problem checks their shapes."""
    w = check_array("filter", filter)
    dy = check_array("out_backprop", out_backprop)
    if w.dtype != dy.dtype:
        raise TypeError(f"filter.dtype={w.dtype} and out_backprop.dtype={dy.dtype} differ; both must be the same "
                        f"one of {sorted(DTYPES)}")


def operands_to_ncdhw(filter, out_backprop, data_format: str,
                      filter_format: str) -> tuple[np.ndarray, np.ndarray]:
    """The checked filter (Cout, Cin/g, kD, kH, kW) and dy (N, Cout, Do, Ho, Wo) as NCDHW arrays."""
    dy = np.ascontiguousarray(out_backprop.transpose(0, 4, 1, 2, 3)) if data_format == "NDHWC" else out_backprop
    return filter_to_ncdhw(filter, filter_format), dy
