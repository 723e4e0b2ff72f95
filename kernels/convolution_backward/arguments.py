"""The argument checks of convolution_backward: every A2 range of the aclnnConvolutionBackward API page, the shape
relations and the attribute lengths, before anything is planned or launched.

Sources: the aclnnConvolutionBackward API page (A2 ranges, cubeMathType values) and hicann/ops-nn
`conv/convolution_backward/op_api/convolution_backward_checker.cpp` (CheckNotNull: outputMask has 3 entries;
CheckConvParams: outputPadding 0 when not transposed, below stride when transposed; CheckConvShape /
CheckParamsGroup / CheckConvShapePlus: the shape relations). Every error is a TypeError (wrong kind of value) or
a ValueError (value out of range) naming the parameter, its value and what is allowed.

The API page gives the A2 ranges for transposed=False (on the Ascend 950 only the general rules below, the arch35
dx tiling checking its own ranges); with transposed=True only the general rules apply here
(stride and dilation >= 1, padding >= 0, outputPadding in [0, stride)), and the kernels' own envelopes are
checked when the run is planned, still before any launch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ascend_sim.machine.dtypes import DTYPES, dtype_name
from ascend_sim.machine.platform import Platform
from kernels.common.operands import check_array
from tiling.common.problem import check_int, check_platform

DIM_MAX = 2147483646  # every tensor dimension, strideD and paddingD: [1, 2147483646] on the API page
KERNEL_HW_MAX = 255  # weight H and W (2D / 3D) and L (1D)
STRIDE_HW_MAX_3D = 63
PAD_MAX = 255  # padding H / W (3D), every padding (1D / 2D)
DILATION_MAX = 255
GROUPS_MAX = 65535
CUBE_MATH_TYPES = {0: "KEEP_DTYPE", 1: "ALLOW_FP32_DOWN_PRECISION", 2: "USE_FP16", 3: "USE_HF32"}
_LAYOUTS = {3: "NCL", 4: "NCHW", 5: "NCDHW"}
_AXES = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}


@dataclass(frozen=True)
class ConvBackwardArgs:
    """Checked arguments, in the user's dimensionality (spatial = 1, 2 or 3).

    padding is (before, after) per spatial axis (the 2D four-value form is [up, down, left, right])."""

    grad_output_shape: tuple[int, ...]
    input_shape: tuple[int, ...]
    weight_shape: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[tuple[int, int], ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int
    output_mask: tuple[bool, bool, bool]
    cube_math_type: int
    dtype: str
    platform: Platform

    @property
    def spatial(self) -> int:
        return len(self.input_shape) - 2

    @property
    def layout(self) -> str:
        return _LAYOUTS[len(self.input_shape)]


def _array(name: str, value) -> np.ndarray:
    value = check_array(name, value)
    if value.ndim not in _LAYOUTS:
        raise ValueError(f"{name} has {value.ndim} dimensions (shape {value.shape}); allowed: 3 (NCL), 4 (NCHW) or "
                         "5 (NCDHW)")
    for axis, size in enumerate(value.shape):
        if not 1 <= size <= DIM_MAX:
            raise ValueError(f"{name}.shape[{axis}]={size} is outside the allowed range [1, {DIM_MAX}]")
    return value


def _bool(name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}={value!r} must be a bool")
    return bool(value)


def _ints(name: str, values, lengths: tuple[int, ...], axes_text: str) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence | np.ndarray):
        raise TypeError(f"{name}={values!r} must be a sequence of integers ({axes_text})")
    if len(values) not in lengths:
        raise ValueError(f"{name}={tuple(values)!r} has {len(values)} values; allowed: "
                         f"{' or '.join(map(str, lengths))} ({axes_text})")
    return tuple(check_int(f"{name}[{i}]", v) for i, v in enumerate(values))


def _range(name: str, value: int, low: int, high: int, why: str = "") -> None:
    if not low <= value <= high:
        raise ValueError(f"{name}={value} is outside the allowed range [{low}, {high}]{why}")


def _check_a2_ranges(spatial: int, weight_shape, stride, padding, dilation, groups) -> None:
    """The A2 ranges of the API page for transposed=False."""
    why = f" (A2, {spatial}D, transposed=False)"
    axes = _AXES[spatial]
    for i, axis in enumerate(axes):
        if axis != "D":
            _range(f"weight {axis} (weight.shape[{2 + i}])", weight_shape[2 + i], 1, KERNEL_HW_MAX, why)
        high = STRIDE_HW_MAX_3D if spatial == 3 and axis != "D" else DIM_MAX
        _range(f"stride[{i}] ({axis})", stride[i], 1, high, why)
        pad_high = DIM_MAX if spatial == 3 and axis == "D" else PAD_MAX
        for side, value in zip(("before", "after"), padding[i]):
            _range(f"padding {axis} {side}", value, 0, pad_high, why)
        _range(f"dilation[{i}] ({axis})", dilation[i], 1, DILATION_MAX, why)
    _range("groups", groups, 1, GROUPS_MAX, why)


def _check_general(stride, padding, dilation, groups) -> None:
    """The rules that hold with transposed=True too (convolution_backward_checker.cpp, CheckConvParams)."""
    for i, s in enumerate(stride):
        _range(f"stride[{i}]", s, 1, DIM_MAX)
    for i, (before, after) in enumerate(padding):
        _range(f"padding[{i}]", before, 0, DIM_MAX)
        _range(f"padding[{i}]", after, 0, DIM_MAX)
    for i, d in enumerate(dilation):
        _range(f"dilation[{i}]", d, 1, DIM_MAX)
    _range("groups", groups, 1, GROUPS_MAX)


def _padding_pairs(padding: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    if len(padding) == 4:  # 2D [up, down, left, right]
        return (padding[0], padding[1]), (padding[2], padding[3])
    return tuple((p, p) for p in padding)


def _check_shapes(a: ConvBackwardArgs) -> None:
    """gradOutput, input and weight describe one convolution (or one transposed convolution)."""
    go, x, w = a.grad_output_shape, a.input_shape, a.weight_shape
    if go[0] != x[0]:
        raise ValueError(f"grad_output.shape[0]={go[0]} (N) must equal input.shape[0]={x[0]}")
    if w[0] % a.groups:
        raise ValueError(f"weight.shape[0]={w[0]} must be divisible by groups={a.groups}")
    # the forward convolution's feature map and output: swapped for a transposed convolution
    fmap, out, fmap_name, out_name = (go, x, "grad_output", "input") if a.transposed else (x, go, "input",
                                                                                          "grad_output")
    if fmap[1] != w[1] * a.groups:
        raise ValueError(f"{fmap_name}.shape[1]={fmap[1]} (C) must equal weight.shape[1] * groups = {w[1]} * "
                         f"{a.groups} = {w[1] * a.groups}")
    if out[1] != w[0]:
        raise ValueError(f"{out_name}.shape[1]={out[1]} (C) must equal weight.shape[0]={w[0]}")
    for i, axis in enumerate(_AXES[a.spatial]):
        k, s, d = w[2 + i], a.stride[i], a.dilation[i]
        before, after = a.padding[i]
        span = (k - 1) * d + 1
        if a.transposed:
            expect = (x[2 + i] - 1) * s - before - after + span + a.output_padding[i]
            rule = (f"(input {axis}={x[2 + i]} - 1) * stride {s} - padding {before}+{after} + dilation {d} * "
                    f"(kernel {k} - 1) + 1 + output_padding {a.output_padding[i]}")
            if expect < 1 or go[2 + i] != expect:
                raise ValueError(f"grad_output {axis}={go[2 + i]} does not fit the transposed convolution: expected "
                                 f"{rule} = {expect}")
            continue
        if x[2 + i] + before + after < span:
            raise ValueError(f"input {axis}={x[2 + i]} plus padding {before}+{after} is smaller than the dilated "
                             f"kernel {span} (kernel {k}, dilation {d})")
        expect = (x[2 + i] + before + after - span) // s + 1
        if go[2 + i] != expect:
            raise ValueError(f"grad_output {axis}={go[2 + i]} does not fit the convolution: expected (input {axis}="
                             f"{x[2 + i]} + padding {before}+{after} - dilation {d} * (kernel {k} - 1) - 1) // "
                             f"stride {s} + 1 = {expect}")


def check_arguments(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding,
                    groups, output_mask, cube_math_type, platform) -> ConvBackwardArgs:
    """All checks of convolution_backward's arguments; returns them checked (see ConvBackwardArgs)."""
    go = _array("grad_output", grad_output)
    x = _array("input", input)
    w = _array("weight", weight)
    if not go.ndim == x.ndim == w.ndim:
        raise ValueError(f"grad_output, input and weight must have the same number of dimensions (3 NCL, 4 NCHW, "
                         f"5 NCDHW), got {go.ndim}, {x.ndim} and {w.ndim}")
    if not go.dtype == x.dtype == w.dtype:
        raise TypeError(f"grad_output.dtype={go.dtype}, input.dtype={x.dtype} and weight.dtype={w.dtype} differ; "
                        f"all three must be the same one of {sorted(DTYPES)} (aclnn's promotion of mixed dtypes is "
                        "not modelled)")
    spatial = x.ndim - 2
    axes_text = ", ".join(_AXES[spatial])
    transposed = _bool("transposed", transposed)
    st = _ints("stride", stride, (spatial,), axes_text)
    pad_lengths = (2, 4) if spatial == 2 else (spatial,)
    pads = _padding_pairs(_ints("padding", padding, pad_lengths,
                                "H, W or up, down, left, right" if spatial == 2 else axes_text))
    dl = _ints("dilation", dilation, (spatial,), axes_text)
    op = _ints("output_padding", output_padding, (spatial,), axes_text)
    groups = check_int("groups", groups)
    if isinstance(output_mask, (str, bytes)) or not isinstance(output_mask, Sequence | np.ndarray):
        raise TypeError(f"output_mask={output_mask!r} must be a sequence of 3 bools (grad_input, grad_weight, "
                        "grad_bias)")
    if len(output_mask) != 3:
        raise ValueError(f"output_mask={tuple(output_mask)!r} has {len(output_mask)} values; allowed: 3 (grad_input, "
                         "grad_weight, grad_bias)")
    mask = tuple(_bool(f"output_mask[{i}]", m) for i, m in enumerate(output_mask))
    cmt = check_int("cube_math_type", cube_math_type)
    if cmt not in CUBE_MATH_TYPES:
        raise ValueError(f"cube_math_type={cmt} is not supported; allowed: "
                         + ", ".join(f"{k} ({v})" for k, v in CUBE_MATH_TYPES.items()))
    plat = check_platform(platform)
    if transposed:
        _check_general(st, pads, dl, groups)
        for i, (o, s) in enumerate(zip(op, st)):
            _range(f"output_padding[{i}]", o, 0, s - 1, f" (below stride[{i}]={s} when transposed=True)")
    else:
        if any(op):
            raise ValueError(f"output_padding={op!r} must be all 0 when transposed=False")
        if plat.npu_arch == 2201:
            _check_a2_ranges(spatial, w.shape, st, pads, dl, groups)
        else:  # the Ascend 950: the arch35 dx tiling checks its own ranges (IsArchAfter35) when it runs
            _check_general(st, pads, dl, groups)
    args = ConvBackwardArgs(go.shape, x.shape, w.shape, st, pads, dl, transposed, op, groups, mask, cmt,
                            dtype_name(x.dtype), plat)
    _check_shapes(args)
    _check_bias_sizes(bias_sizes, args)
    return args


def _check_bias_sizes(bias_sizes, a: ConvBackwardArgs) -> None:
    """biasSizes: one value, weight.shape[0] (or weight.shape[1] * groups when transposed); None is accepted when
    grad_bias is not asked for."""
    expect = a.weight_shape[1] * a.groups if a.transposed else a.weight_shape[0]
    if bias_sizes is None:
        if a.output_mask[2]:
            raise ValueError(f"bias_sizes=None while output_mask[2] is True; expected [{expect}]")
        return
    sizes = _ints("bias_sizes", bias_sizes, (1,), "the bias length")
    if sizes[0] != expect:
        rule = "weight.shape[1] * groups" if a.transposed else "weight.shape[0]"
        raise ValueError(f"bias_sizes={list(sizes)} must be [{expect}] ({rule})")
