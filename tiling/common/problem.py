"""The one problem type of the convolution operators, and the argument checks every family uses by name.

`ConvProblem` is a checked convolution in NCDHW terms: the convolution's input x, its filter and its output y
(for dx the input is dx and the output dy; for dw the output is dy), strides, pads, dilations, groups, the data
and filter formats the user gave, the dtype, the platform and the few flags an operator adds (forward: bias,
pointwise; dw: deterministic). Each family's check (dx: tiling.conv3d_backprop_input.arch22.checks, dw:
tiling.conv3d_backprop_filter.checks, forward: tiling.conv3d_v2.checks, the Ascend 950 dx:
tiling.conv3d_backprop_input.arch35.context_utils) applies its own limits with the checks below and returns one.
Every error names the parameter, its value and what is allowed.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES, dtype_name
from ascend_sim.machine.platform import Platform, get_platform

PAD_NAMES = ("pad_front", "pad_back", "pad_top", "pad_bottom", "pad_left", "pad_right")
NCDHW = ("N", "C", "D", "H", "W")
FILTER_AXES = ("Cout", "Cin/groups", "kD", "kH", "kW")
Shape5 = tuple[int, int, int, int, int]
Dhw = tuple[int, int, int]


@dataclass(frozen=True)
class ConvProblem:
    """A checked convolution problem; shapes NCDHW whatever data_format / filter_format the user's arrays are in.

    x_shape (N, Cin, D, H, W) is the convolution's input, y_shape (N, Cout, Do, Ho, Wo) its output, filter_shape
    (Cout, Cin/groups, kD, kH, kW). dilations are those the kernel uses (dx and dw: 1 along an axis whose kernel is
    1, ReCalDilation / SetDilationsAttr; forward: as given); dilations_given as the user gave them (aclnn's routing
    and the 950's range checks read them)."""

    x_shape: Shape5
    filter_shape: Shape5
    y_shape: Shape5
    strides: Dhw
    pads: tuple[int, int, int, int, int, int]  # front, back, top, bottom, left, right
    dilations: Dhw
    groups: int
    dtype: str
    platform: Platform
    enable_hf32: bool = False
    data_format: str = "NCDHW"
    filter_format: str = "NCDHW"
    dilations_given: Dhw | None = None  # None: the same as dilations
    bias: bool = False  # forward: a bias is added
    pointwise: bool = False  # forward: the NCDHW pointwise kernel
    deterministic: bool = False  # dw: the deterministic split-K

    def __post_init__(self):
        if self.dilations_given is None:
            object.__setattr__(self, "dilations_given", self.dilations)

    @property
    def dx_shape(self) -> Shape5:
        """Conv3DBackpropInput's name for the convolution's input."""
        return self.x_shape

    @property
    def dy_shape(self) -> Shape5:
        """The backward operators' name for the convolution's output."""
        return self.y_shape

    @property
    def dtype_bytes(self) -> int:
        return {**DTYPES, **EIGHT_BIT_DTYPES}[self.dtype].itemsize

    @property
    def c0(self) -> int:
        """Elements of one 32-byte block."""
        return 32 // self.dtype_bytes


def effective_dilations(kernel: Sequence[int], dilations: Sequence[int]) -> Dhw:
    """ReCalDilation: a kernel of size 1 along an axis has no dilation there."""
    return tuple(1 if k == 1 else d for k, d in zip(kernel, dilations))


def check_int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={value!r} must be an integer, not a bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}={value!r} must be an integer, got {type(value).__name__}") from None


def check_ints(name: str, values, length: int, labels: Sequence[str]) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{name}={values!r} must be a sequence of {length} integers ({', '.join(labels)})")
    if len(values) != length:
        raise ValueError(f"{name}={tuple(values)!r} must have {length} values ({', '.join(labels)}), "
                         f"got {len(values)}")
    return tuple(check_int(f"{name}[{i}] ({label})", v) for i, (v, label) in enumerate(zip(values, labels)))


def check_in_range(name: str, value: int, low: int, high: int, by_label: bool = True) -> None:
    """`name` is "label" or "where (label)"; the message leads with label=value (or name=value)."""
    if not low <= value <= high:
        where, _, label = name.partition(" (")
        lead = f"{label.rstrip(')')}={value} ({where})" if label and by_label else f"{name}={value}"
        raise ValueError(f"{lead} is outside the allowed range [{low}, {high}]")


def check_dhw(name: str, values, labels: tuple[str, str, str]) -> Dhw:
    """strides/dilations as (D, H, W); the real 5-value NCDHW form is accepted when N and C are 1."""
    if isinstance(values, Sequence | np.ndarray) and not isinstance(values, (str, bytes)) and len(values) == 5:
        full = check_ints(name, values, 5, ("n", "c", *labels))
        if full[0] != 1 or full[1] != 1:
            raise ValueError(f"{name}={full!r}: the N and C entries of a 5-value {name} must be 1")
        return full[2:]
    return check_ints(name, values, 3, labels)


def check_dtype(dtype) -> str:
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise ValueError(f"dtype={dtype!r} is not supported; allowed: {sorted(DTYPES)}")
        return dtype
    try:
        as_numpy = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype={dtype!r} must be a dtype name such as 'float16'") from None
    try:
        return dtype_name(as_numpy)
    except TypeError:
        raise ValueError(f"dtype={dtype!r} is not supported; allowed: {sorted(DTYPES)}") from None


def check_hf32(name: str, enable, dtype: str) -> bool:
    """HF32 is a float32 mode of the cube: asking for it with a 16-bit dtype is an error, not a no-op."""
    if not isinstance(enable, (bool, np.bool_)):
        raise TypeError(f"{name}={enable!r} must be a bool")
    if enable and dtype != "float32":
        raise ValueError(f"{name}=True with dtype={dtype!r}: HF32 applies to float32 only (it rounds float32 "
                         f"operands in the cube); other dtypes need {name}=False")
    return bool(enable)


def check_platform(platform) -> Platform:
    if not isinstance(platform, (str, Platform)):
        raise TypeError(f"platform={platform!r} must be a preset name or a Platform object")
    return get_platform(platform)


def check_format(name: str, value, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name}={value!r} must be a string, one of {allowed}")
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {allowed}")
    return value


def check_kind(dtype, platform, enable_hf32) -> tuple[str, Platform, bool]:
    """dtype, platform and enable_hf32, in that order."""
    dtype = check_dtype(dtype)
    return dtype, check_platform(platform), check_hf32("enable_hf32", enable_hf32, dtype)


def check_attributes(strides, dilations, pads, groups) -> tuple[Dhw, Dhw, tuple[int, ...], int]:
    """strides and dilations (D, H, W, or the 5-value NCDHW form), the six pads and groups as integers; their
    ranges are each family's (check_attribute_ranges)."""
    return (check_dhw("strides", strides, ("stride_d", "stride_h", "stride_w")),
            check_dhw("dilations", dilations, ("dilation_d", "dilation_h", "dilation_w")),
            check_ints("pads", pads, 6, PAD_NAMES), check_int("groups", groups))


def check_shape_ranges(shapes, high: int) -> None:
    """Every dim of (name, shape, axis labels) in [1, high], named as name[i] (label)."""
    for name, shape, labels in shapes:
        for i, (value, label) in enumerate(zip(shape, labels)):
            check_in_range(f"{name}[{i}] ({label})", value, 1, high, by_label=False)


def check_attribute_ranges(strides: Dhw, dilations: Dhw, pads, stride_max: Dhw, dilation_max: Dhw,
                           pad_max: tuple[int, ...]) -> None:
    """strides and dilations in [1, max] per axis, pads in [0, max] per side, in that order."""
    for i, axis in enumerate("dhw"):
        check_in_range(f"strides[{i}] (stride_{axis})", strides[i], 1, stride_max[i])
    for i, axis in enumerate("dhw"):
        check_in_range(f"dilations[{i}] (dilation_{axis})", dilations[i], 1, dilation_max[i])
    for i, name in enumerate(PAD_NAMES):
        check_in_range(f"pads[{i}] ({name})", pads[i], 0, pad_max[i])


def check_output_size(input_name: str, x: Shape5, y: Shape5, kernel: Dhw, strides: Dhw, dilations: Dhw, pads,
                      kernel_name: str) -> None:
    """Per axis, the dilated kernel spans at most the padded input, and dy's size (y_shape, dy_shape) is the
    convolution's: floor((input + pads - span) / stride) + 1. input_name: "dx" or "x"; kernel_name: how the family
    names a kernel axis, a format of axis / AXIS ("kernel_{axis}", "k{AXIS}")."""
    for i, axis in enumerate("dhw"):
        k_name = kernel_name.format(axis=axis, AXIS=axis.upper())
        size_x, size_y = x[2 + i], y[2 + i]
        before, after = pads[2 * i], pads[2 * i + 1]
        span = (kernel[i] - 1) * dilations[i] + 1
        padded = size_x + before + after
        if span > padded:
            raise ValueError(f"filter_shape[{2 + i}] ({k_name})={kernel[i]} with dilation_{axis}={dilations[i]} "
                             f"spans {span}, more than {input_name} {axis.upper()} + pads = {padded}")
        expect = (padded - span) // strides[i] + 1
        if expect != size_y:
            raise ValueError(
                f"dy_shape[{2 + i}] ({axis.upper()})={size_y} does not fit the convolution: expected "
                f"floor(({input_name} {axis.upper()}={size_x} + pads {before}+{after} - dilation_{axis}*({k_name}-1)"
                f" - 1) / stride_{axis}={strides[i]}) + 1 = {expect}")


def check_flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}={value!r} must be a bool")
    return value
