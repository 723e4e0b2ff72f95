"""The differential test's problems: small random problems for the four operators (dx, dw, forward Conv3DV2,
convolution_backward), each run on the simulator and compared with PyTorch in float64 through the existing
operator tests' oracles and tolerances (test_conv3d_dx.check_case, test_dw_operator's fp32 accumulation bound,
test_conv3d_v2._check, test_convolution_backward.check).

`run_problem(op, rng)` draws one problem of `op` from the seeded generator, runs it and returns (outcome,
description): MATCHED; REFUSED when the operator refused it before launch with a ValueError naming one of its
parameters; WRONG when the result is off (or a refusal names no parameter); CRASHED for any other exception.
Used by tests/test_differential.py and benchmarks/fuzz_operators.py (which counts the outcomes over many problems).
"""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np
from dw_reference import dw_reference

from kernels import conv3d_v2_run
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _problem as dw_problem
from tests.kernels.conv3d_backprop_filter.test_dw_operator import _run as run_dw
from tests.kernels.conv3d_backprop_input.test_conv3d_dx import check_case as check_dx
from tests.kernels.conv3d_v2.test_conv3d_v2 import _check as check_forward
from tests.kernels.conv3d_v2.test_conv3d_v2 import _operands as forward_operands
from tests.kernels.convolution_backward.test_convolution_backward import TOL as BACKWARD_TOL
from tests.kernels.convolution_backward.test_convolution_backward import check as check_backward

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)
DTYPES = (F16, BF16, F32)
MATCHED, REFUSED, WRONG, CRASHED = "matched", "refused", "wrong", "crashed"
OPERATORS = ("dx", "dw", "forward", "convolution_backward")

# the parameters each operator's refusals may name (its own argument names and the tiling's)
_PARAMETERS = {
    "dx": ("input_size", "filter", "out_backprop", "strides", "pads", "dilations", "groups", "dy_shape", "dx_shape",
           "filter_shape", "pad", "stride", "kernel", "dilation", "dx", "dy"),
    "dw": ("x", "filter_size", "out_backprop", "strides", "pads", "dilations", "groups", "x_shape", "filter_shape",
           "dy_shape", "kernel", "stride", "dilation", "pad"),
    "forward": ("x", "filter", "bias", "strides", "pads", "dilations", "groups", "x_shape", "filter_shape", "kernel",
                "stride", "dilation", "pad", "kH", "kW"),
    "convolution_backward": ("grad_output", "input", "weight", "stride", "padding", "dilation", "groups",
                             "output_padding", "cube_math_type", "output_mask", "transposed", "kernel"),
}


def names_a_parameter(op: str, message: str) -> bool:
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", message))
    return any(name in words for name in _PARAMETERS[op])


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _groups(rng) -> tuple[int, int, int]:
    """(groups, Cin/groups, Cout/groups): plain, grouped or depthwise."""
    kind = rng.random()
    if kind < 0.6:
        return 1, int(rng.integers(1, 7)), int(rng.integers(1, 7))
    if kind < 0.85:
        return int(rng.integers(2, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    return int(rng.integers(2, 9)), 1, int(rng.integers(1, 3))  # depthwise (with a channel multiplier)


def _geometry(rng, spatial: int = 3, depth_max: int = 4):
    """kernel, strides (stride > kernel included), dilations, asymmetric pads within the dilated kernel, and the
    input sizes, per spatial axis."""
    kernel = tuple(int(rng.integers(1, 4)) for _ in range(spatial))
    strides = tuple(int(rng.integers(1, 4)) for _ in range(spatial))
    dilations = tuple(int(rng.integers(1, 3)) if k > 1 else 1 for k in kernel)
    pads = []
    for k, d in zip(kernel, dilations):
        pads += [int(rng.integers(0, (k - 1) * d + 1)), int(rng.integers(0, (k - 1) * d + 1))]
    sizes = tuple((k - 1) * d + 1 + int(rng.integers(0, 5)) for k, d in zip(kernel, dilations))
    if spatial == 3:
        sizes = (min(sizes[0], max(depth_max, (kernel[0] - 1) * dilations[0] + 1)), *sizes[1:])
    return kernel, strides, dilations, tuple(pads), sizes


def _dx(rng):
    dtype = _pick(rng, DTYPES)
    groups, cin_g, cout_g = _groups(rng)
    kernel, strides, dil, pads, sizes = _geometry(rng)
    n = int(rng.integers(1, 3))
    hf32 = dtype == F32 and rng.random() < 0.3
    data_format, filter_format = _pick(rng, ("NDHWC", "NCDHW")), _pick(rng, ("NCDHW", "NDHWC", "DHWCN"))
    x_shape, w_shape = (n, cin_g * groups, *sizes), (cout_g * groups, cin_g, *kernel)
    desc = (f"dx {dtype.name} x {x_shape} w {w_shape} strides {strides} pads {pads} dilations {dil} groups {groups} "
            f"{data_format}/{filter_format} hf32 {hf32}")
    seed = int(rng.integers(1000))
    return desc, lambda: check_dx(dtype, x_shape, w_shape, strides, pads, dil, groups, data_format, filter_format,
                                  hf32, seed=seed, route="aclnn")


def _dw(rng):
    dtype = _pick(rng, DTYPES)
    groups, cin_g, cout_g = _groups(rng)
    kernel, strides, dil, pads, sizes = _geometry(rng)
    n = int(rng.integers(1, 3))
    hf32 = dtype == F32 and rng.random() < 0.3
    data_format, filter_format = _pick(rng, ("NDHWC", "NCDHW")), _pick(rng, ("NCDHW", "NDHWC", "DHWCN"))
    desc = (f"dw {dtype.name} N {n} Cin {cin_g * groups} Cout {cout_g * groups} dhw {sizes} kernel {kernel} "
            f"strides {strides} pads {pads} dilations {dil} groups {groups} {data_format}/{filter_format} hf32 {hf32}")
    seed = int(rng.integers(1000))
    return desc, lambda: _check_dw(dtype, n, cin_g * groups, cout_g * groups, sizes, kernel, strides, pads, dil,
                                   groups, data_format, filter_format, hf32, seed)


def _check_dw(dtype, n, cin, cout, sizes, kernel, strides, pads, dil, groups, data_format, filter_format, hf32,
              seed) -> None:
    """dw against torch within test_dw_operator's bound: float32 accumulation over the terms of each element."""
    x, dy, w_shape = dw_problem(dtype, n, cin, cout, sizes, kernel, strides, pads, dil, groups, seed=seed,
                                ints=False)
    _, got = run_dw(x, dy, w_shape, strides, pads, dil, groups, data_format, filter_format, enable_hf32=hf32)
    xf, dyf = x.astype(np.float64), dy.astype(np.float64)
    expect = dw_reference(xf, w_shape, dyf, strides, pads, dil, groups)
    magnitude = dw_reference(np.abs(xf), w_shape, np.abs(dyf), strides, pads, dil, groups)
    terms = n * int(np.prod(dy.shape[2:]))  # the sum behind each dw element: batch x output positions
    tol = (terms + 2) * 2.0 ** -24 * magnitude + 1e-30
    if hf32:
        tol += 2.0 ** -10 * magnitude  # each operand rounded to 11 mantissa bits
    err = np.abs(got - expect)
    assert (err <= tol).all(), f"max error {err.max()}"


def _forward(rng):
    dtype = _pick(rng, DTYPES)
    groups, cin_g, cout_g = _groups(rng)
    kernel, strides, dil, pads, sizes = _geometry(rng)
    n = int(rng.integers(1, 3))
    hf32 = dtype == F32 and rng.random() < 0.3
    bias = bool(rng.random() < 0.5)
    data_format = _pick(rng, ("NCDHW", "NDHWC"))
    x_shape, w_shape = (n, cin_g * groups, *sizes), (cout_g * groups, cin_g, *kernel)
    desc = (f"forward {dtype.name} x {x_shape} w {w_shape} strides {strides} pads {pads} dilations {dil} groups "
            f"{groups} bias {bias} {data_format} hf32 {hf32}")
    seed = int(rng.integers(1000))
    return desc, lambda: _check_forward(x_shape, w_shape, dtype, bias, strides, pads, dil, groups, data_format, hf32,
                                        seed)


def _check_forward(x_shape, w_shape, dtype, bias, strides, pads, dil, groups, data_format, hf32, seed) -> None:
    x, w, b = forward_operands(x_shape, w_shape, dtype, bias, seed=seed)
    if data_format == "NDHWC":
        run = conv3d_v2_run(np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1)), w, b, strides=(1, *strides, 1),
                            pads=pads, dilations=(1, *dil, 1), groups=groups, data_format="NDHWC", enable_hf32=hf32)
        got = run.result.transpose(0, 4, 1, 2, 3)
    else:
        run = conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dil), groups=groups,
                            enable_hf32=hf32)
        got = run.result
    check_forward(got, x, w, b, strides, pads, dil, groups, hf32)


def _backward(rng):
    spatial = int(rng.integers(1, 4))
    dtype = _pick(rng, DTYPES)
    groups, cin_g, cout_g = _groups(rng)
    kernel, stride, dilation, pads, size = _geometry(rng, spatial)
    padding = tuple(min(pads[2 * i], pads[2 * i + 1]) for i in range(spatial))  # symmetric: torch's padding
    mask = tuple(bool(rng.random() < 0.7) for _ in range(3))
    if not any(mask):
        mask = (True, False, False)
    cube_math_type = int(rng.integers(0, 4))
    n = int(rng.integers(1, 3))
    transposed = bool(rng.random() < 0.25)
    output_padding = None
    if transposed:  # input is the transposed convolution's input: weight (Cin, Cout/groups, k...)
        output_padding = tuple(int(rng.integers(0, s)) for s in stride)
    x_shape = (n, (cout_g if transposed else cin_g) * groups, *size)
    w_shape = (cout_g * groups, cin_g, *kernel)
    tol = None
    if cube_math_type == 2 and dtype != F16:
        tol = BACKWARD_TOL["fp16 cube"]
    elif dtype == F32 and cube_math_type in (1, 3):
        tol = BACKWARD_TOL["hf32"]
    desc = (f"convolution_backward {spatial}D {dtype.name} x {x_shape} w {w_shape} stride {stride} padding {padding} "
            f"dilation {dilation} groups {groups} transposed {transposed} output_padding {output_padding} mask {mask} "
            f"cube_math_type {cube_math_type}")
    return desc, lambda: check_backward(x_shape, w_shape, stride, padding, dilation, groups, dtype, mask,
                                        cube_math_type, tol, transposed, output_padding)


_DRAW = {"dx": _dx, "dw": _dw, "forward": _forward, "convolution_backward": _backward}


def draw_problem(op: str, rng: np.random.Generator):
    """(description, check): check() runs the problem and compares it with torch (AssertionError when wrong)."""
    return _DRAW[op](rng)


def run_problem(op: str, rng: np.random.Generator) -> tuple[str, str]:
    """(outcome, description): MATCHED; REFUSED (a ValueError naming a parameter, with its message); WRONG (the
    comparison failed, or a refusal names no parameter); CRASHED (any other exception, with its type)."""
    desc, check = draw_problem(op, rng)
    try:
        check()
    except ValueError as err:
        if not names_a_parameter(op, str(err)):
            return WRONG, f"{desc}: a refusal that names no parameter: {err}"
        return REFUSED, f"{desc}: {err}"
    except AssertionError as err:
        return WRONG, f"{desc}: {err}"
    except Exception as err:  # noqa: BLE001 - the fuzzer's job is to report it
        return CRASHED, f"{desc}: {type(err).__name__}: {err}"
    return MATCHED, desc
