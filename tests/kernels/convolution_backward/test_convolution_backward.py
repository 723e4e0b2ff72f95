"""kernels.convolution_backward against torch.ops.aten.convolution_backward in float64.

The oracle sees the same low-precision values the simulator gets (converted exactly to float64); the error
measure is max |got - ref| / (|ref| + rms(ref)) per gradient, as the CLI's check.
"""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.convolution_backward import convolution_backward, convolution_backward_run

BF16 = np.dtype(ml_dtypes.bfloat16)
# one rounding to the output dtype after float32 accumulation, with margin; HF32 rounds the operands to 11 bits;
# USE_FP16 rounds float32 operands to float16 (10 bits) and the result to float16
TOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3, "fp16 cube": 4e-3}
_CONV = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}
_CONV_T = {1: torch.nn.functional.conv_transpose1d, 2: torch.nn.functional.conv_transpose2d,
           3: torch.nn.functional.conv_transpose3d}


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a.astype(np.float64))


def make_problem(x_shape, w_shape, stride, padding, dilation, groups, dtype=np.float16, transposed=False,
                 output_padding=None, seed=0):
    """Random input and weight, and a grad_output of the shape the (transposed) convolution gives."""
    rng = np.random.default_rng(seed)
    spatial = len(x_shape) - 2
    output_padding = tuple(output_padding or (0,) * spatial)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    if transposed:
        y = _CONV_T[spatial](_t(x), _t(w), stride=stride, padding=padding, output_padding=output_padding,
                             groups=groups, dilation=dilation)
    else:
        y = _CONV[spatial](_t(x), _t(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    go = rng.standard_normal(tuple(y.shape)).astype(dtype)
    return go, x, w, output_padding


def torch_grads(go, x, w, stride, padding, dilation, transposed, output_padding, groups, mask):
    bias = [w.shape[1] * groups if transposed else w.shape[0]]
    return torch.ops.aten.convolution_backward(_t(go), _t(x), _t(w), bias, list(stride), list(padding),
                                               list(dilation), transposed, list(output_padding), groups, list(mask))


def error(got: np.ndarray, ref: torch.Tensor) -> float:
    ref = ref.numpy()
    rms = float(np.sqrt(np.mean(ref ** 2))) or 1.0
    got = got.astype(np.float64)
    assert np.isfinite(got).all()
    return float((np.abs(got - ref) / (np.abs(ref) + rms)).max())


def check(x_shape, w_shape, stride, padding, dilation=None, groups=1, dtype=np.float16, mask=(True, True, True),
          cube_math_type=0, tol=None, transposed=False, output_padding=None, platform="Ascend910B2"):
    spatial = len(x_shape) - 2
    dilation = dilation or (1,) * spatial
    go, x, w, op = make_problem(x_shape, w_shape, stride, padding, dilation, groups, dtype, transposed,
                                output_padding)
    bias = [w.shape[1] * groups if transposed else w.shape[0]]
    run = convolution_backward_run(go, x, w, bias, stride, padding, dilation, transposed, op, groups, mask,
                                   cube_math_type, platform=platform)
    refs = torch_grads(go, x, w, stride, padding, dilation, transposed, op, groups, mask)
    tol = tol or TOL[np.dtype(dtype).name]
    for name, got, ref, wanted, like in zip(("grad_input", "grad_weight", "grad_bias"),
                                            (run.grad_input, run.grad_weight, run.grad_bias), refs, mask,
                                            (x, w, go)):
        if not wanted:
            assert got is None, name
            continue
        assert got.dtype == like.dtype and got.shape == tuple(ref.shape), name
        assert error(got, ref) <= tol, (name, error(got, ref))
    return run


GRID = [  # x shape, weight shape, stride, padding, dilation, groups
    ((2, 4, 10), (6, 4, 3), (1,), (1,), (1,), 1),  # 1D
    ((2, 4, 11), (6, 2, 3), (2,), (1,), (2,), 2),  # 1D grouped: L on H
    ((1, 8, 9, 9), (8, 8, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # 2D
    ((1, 4, 9, 8), (8, 4, 2, 2), (3, 3), (0, 1), (1, 1), 1),  # 2D stride > kernel
    ((1, 8, 4, 6, 6), (16, 8, 2, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), 1),  # 3D
    ((2, 6, 3, 7, 7), (6, 3, 1, 3, 3), (1, 1, 1), (0, 2, 2), (1, 2, 2), 2),  # 3D groups, dilation
    ((1, 16, 3, 6, 6), (16, 1, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 16),  # depthwise
    ((1, 4, 4, 7, 7), (8, 4, 1, 2, 2), (2, 3, 3), (0, 0, 0), (1, 1, 1), 1),  # 3D stride > kernel
    ((1, 4, 5, 6), (8, 4, 2, 2), (1, 1), (3, 3), (1, 1), 1),  # padding beyond the kernel
    ((2, 4, 7), (4, 1, 3), (1,), (4,), (3,), 4),  # 1D depthwise, dilation, padding beyond the kernel
]


@pytest.mark.parametrize("x_shape,w_shape,stride,padding,dilation,groups", GRID)
def test_grid_float16(x_shape, w_shape, stride, padding, dilation, groups):
    check(x_shape, w_shape, stride, padding, dilation, groups)


@pytest.mark.parametrize("dtype", [BF16, np.float32])
@pytest.mark.parametrize("case", [GRID[1], GRID[4], GRID[5]])
def test_other_dtypes(dtype, case):
    check(*case, dtype=dtype)


@pytest.mark.parametrize("mask", [(True, False, False), (False, True, False), (False, False, True),
                                  (False, True, True), (True, False, True)])
def test_masks(mask):
    run = check(*GRID[2], mask=mask)
    assert [launch.gradient for launch in run.launches] == [name for name, m in zip(
        ("grad_bias", "grad_input", "grad_weight"), (mask[2], mask[0], mask[1])) if m]


def test_kernel_equals_feature_map_runs_matmuls():
    # aclnn's CONV3D_BP_MM_FEATURE_MAP_EQ_KERNEL: both dx and dw by MatMul (2D: IsConv2DBp2MmMode, then 3D)
    run = check((2, 8, 4, 4), (16, 8, 4, 4), (1, 1), (0, 0))
    assert [launch.kernel for launch in run.launches] == ["ReduceSum (AIV)", "MatMul (FM_EQ_KERNEL)",
                                                          "MatMul (FM_EQ_KERNEL)"]


def test_2d_stride_equal_kernel_uses_the_matmul_only_for_dx_alone():
    case = ((1, 4, 8, 8), (8, 4, 2, 2), (2, 2), (0, 0))
    assert check(*case, mask=(True, False, False)).launches[0].kernel.startswith("MatMul")
    # with dw asked for too, real A2 runs the 2D operators (not as 3D): no matmul shortcut, the V2 kernels here
    run = check(*case, mask=(True, True, False))
    assert [launch.kernel for launch in run.launches] == ["Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]
    assert any("Conv2DBackpropInput" in note for note in run.notes)


def test_2d_asymmetric_four_value_padding():
    go, x, w, _ = make_problem((1, 4, 7, 8), (8, 4, 3, 3), (1, 1), (1, 1), (1, 1), 1)
    pad = (1, 0, 2, 1)  # up, down, left, right: the forward output is 6 x 9
    go = np.random.default_rng(5).standard_normal((1, 8, 6, 9)).astype(np.float16)
    gi, gw, gb = convolution_backward(go, x, w, [8], (1, 1), pad, (1, 1), False, (0, 0), 1, (True, True, True))
    xt, wt = _t(x).requires_grad_(), _t(w).requires_grad_()
    y = torch.nn.functional.conv2d(torch.nn.functional.pad(xt, (pad[2], pad[3], pad[0], pad[1])), wt)
    y.backward(_t(go))
    assert error(gi, xt.grad) <= TOL["float16"] and error(gw, wt.grad) <= TOL["float16"]
    assert error(gb, _t(go).sum(dim=(0, 2, 3))) <= TOL["float16"]


def test_cube_math_type_keep_and_hf32_on_float32():
    case = GRID[4]
    keep = check(*case, dtype=np.float32, cube_math_type=0)
    for cmt in (1, 3):  # ALLOW_FP32_DOWN_PRECISION and USE_HF32 both compute fp32 as HF32 on A2
        hf32 = check(*case, dtype=np.float32, cube_math_type=cmt, tol=TOL["hf32"])
        assert not np.array_equal(hf32.grad_input, keep.grad_input)  # HF32 rounding shows
        assert all(launch.tiling is not None for launch in hf32.launches)


def test_cube_math_type_use_fp16_computes_in_float16():
    case = GRID[4]
    go, x, w, op = make_problem(*case, dtype=np.float32)
    run = convolution_backward_run(go, x, w, [16], *case[2:4], case[4], False, op, 1, (True, True, True), 2)
    assert run.grad_input.dtype == run.grad_weight.dtype == run.grad_bias.dtype == np.float32
    # the same as torch on float16-rounded operands (one float16 rounding of the result), not float32 exact
    h = [a.astype(np.float16) for a in (go, x, w)]
    refs16 = torch_grads(*h, case[2], case[3], case[4], False, op, 1, (True, True, False))
    refs32 = torch_grads(go, x, w, case[2], case[3], case[4], False, op, 1, (True, True, False))
    for got, ref16, ref32 in zip((run.grad_input, run.grad_weight), refs16, refs32):
        assert error(got, ref16) <= TOL["float16"] and error(got, ref32) > TOL["float32"]
    assert [l.kernel for l in run.launches][1:] == ["Conv3DBackpropInputV2", "Conv3DBackpropFilterV2"]


@pytest.mark.parametrize("dtype,same_as_keep", [(np.float16, (1, 3)), (BF16, (1, 3))])
def test_cube_math_types_without_effect_on_16_bit_inputs(dtype, same_as_keep):
    case = GRID[2]
    go, x, w, op = make_problem(*case, dtype=dtype)
    args = (go, x, w, [8], case[2], case[3], case[4], False, op, 1, (True, True, True))
    keep = convolution_backward(*args, 0)
    for cmt in same_as_keep:
        assert all(np.array_equal(a, b) for a, b in zip(convolution_backward(*args, cmt), keep))


def test_bfloat16_with_use_fp16_is_computed_in_float16():
    case = GRID[2]
    run = check(*case, dtype=BF16, cube_math_type=2)
    assert "float16" in run.route.notes[0]


TRANSPOSED = [  # x shape, weight shape (Cin, Cout/groups, k...), stride, padding, dilation, groups, output_padding
    ((1, 4, 5, 5), (4, 6, 3, 3), (2, 2), (1, 1), (1, 1), 1, (1, 0)),
    ((2, 4, 6), (4, 3, 3), (2,), (0,), (2,), 1, (1,)),
    ((1, 4, 3, 4, 4), (4, 2, 2, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), 1, (0, 1, 1)),
]


@pytest.mark.parametrize("case", TRANSPOSED)
def test_transposed(case):
    x_shape, w_shape, stride, padding, dilation, groups, output_padding = case
    run = check(x_shape, w_shape, stride, padding, dilation, groups, transposed=True, output_padding=output_padding)
    assert [launch.kernel for launch in run.launches] == ["ReduceSum (AIV)", "Conv3DV2", "Conv3DBackpropFilterV2"]


@pytest.mark.parametrize("dtype", [BF16, np.float32])
def test_transposed_grouped(dtype):  # grad_input runs Conv3DV2's group kernel (KernelConv3DV2WithGroups)
    run = check((1, 4, 3, 4, 4), (4, 2, 2, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), 2, dtype=dtype, transposed=True,
                output_padding=(0, 1, 1))
    assert [launch.kernel for launch in run.launches] == ["ReduceSum (AIV)", "Conv3DV2", "Conv3DBackpropFilterV2"]


@settings(max_examples=int(os.environ.get("CONV_BACKWARD_EXAMPLES", 8)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_problems_in_the_envelope(data):
    spatial = data.draw(st.sampled_from((1, 2, 3)), "spatial")
    groups = data.draw(st.sampled_from((1, 2)), "groups")
    cin_g, cout_g = data.draw(st.integers(1, 5), "cin/g"), data.draw(st.integers(1, 5), "cout/g")
    kernel = tuple(data.draw(st.integers(1, 3), f"k{i}") for i in range(spatial))
    stride = tuple(data.draw(st.integers(1, 3), f"s{i}") for i in range(spatial))
    dilation = tuple(data.draw(st.integers(1, 2), f"d{i}") for i in range(spatial))
    padding = tuple(data.draw(st.integers(0, k - 1), f"p{i}") for i, k in enumerate(kernel))
    size = tuple((k - 1) * d + 1 + data.draw(st.integers(0, 5), f"extra{i}")
                 for i, (k, d) in enumerate(zip(kernel, dilation)))
    if spatial == 3:
        size = (min(size[0], 4), *size[1:])
        kernel = (min(kernel[0], size[0]), *kernel[1:])
        dilation = (1, *dilation[1:])
    dtype = data.draw(st.sampled_from((np.float16, BF16, np.float32)), "dtype")
    mask = tuple(data.draw(st.lists(st.booleans(), min_size=3, max_size=3), "mask"))
    n = data.draw(st.integers(1, 2), "n")
    cube_math_type = data.draw(st.integers(0, 3), "cube_math_type")
    transposed = data.draw(st.booleans(), "transposed")
    if transposed:  # input is the transposed convolution's input: weight (Cin, Cout/groups, k...)
        output_padding = tuple(data.draw(st.integers(0, s - 1), f"op{i}") for i, s in enumerate(stride))
        x_shape, w_shape = (n, cout_g * groups, *size), (cout_g * groups, cin_g, *kernel)
    else:
        output_padding = None
        x_shape, w_shape = (n, cin_g * groups, *size), (cout_g * groups, cin_g, *kernel)
    if cube_math_type == 2 and spatial == 3 and groups > 1 and dtype == np.float32 and mask[1]:
        cube_math_type = 0  # refused on A2 (CheckSupportedForConv3dBackpropFilter), tested elsewhere
    tol = None
    if cube_math_type == 2 and dtype != np.float16:
        tol = TOL["fp16 cube"]
    elif dtype == np.float32 and cube_math_type in (1, 3):
        tol = TOL["hf32"]
    check(x_shape, w_shape, stride, padding, dilation, groups, dtype, mask, cube_math_type, tol, transposed,
          output_padding)


def _route(x_shape, w_shape, stride, padding, groups=1, dtype=np.float16, transposed=False, mask=(True,) * 3):
    from kernels.convolution_backward import plan_convolution_backward
    spatial = len(x_shape) - 2
    go, x, w, op = make_problem(x_shape, w_shape, stride, padding, (1,) * spatial, groups, dtype, transposed)
    bias = [w.shape[1] * groups if transposed else w.shape[0]]
    return plan_convolution_backward(go, x, w, bias, stride, padding, (1,) * spatial, transposed, op, groups,
                                     mask).route


def test_1d_views_follow_preconv1d_backward_to_2d():
    assert _route((1, 4, 9), (4, 4, 3), (2,), (1,)).view.input_shape == (1, 4, 1, 1, 9)  # NC1L
    grouped = _route((1, 4, 9), (4, 2, 3), (2,), (1,), groups=2).view
    assert grouped.input_shape == (1, 4, 1, 9, 1) and grouped.strides == (1, 2, 1)  # NCL1: L on H
    assert grouped.pads == (0, 0, 1, 1, 0, 0)
    assert _route((1, 4, 9), (4, 2, 3), (2,), (1,), groups=2, transposed=True).view.input_shape == (1, 4, 1, 1, 9)


@pytest.mark.parametrize("x_shape,w_shape,stride,padding,groups,dtype,dx_tbe,dw_tbe", [
    # H*W = 6400 >= 5500, D 4 <= 85, stride/pad/kernel small, fmapH 4 * Wo 80 * strideW 1 <= 4096: V2;
    # Cout 16: the dw basic block needs Cout >= 128 -> TBE
    ((1, 16, 4, 80, 80), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), 1, np.float16, None, "CheckV2BasicBlockSupport"),
    ((1, 16, 4, 8, 8), (128, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), 1, np.float16, "CheckV2Perf", None),  # H*W 64
    ((1, 16, 4, 8, 8), (16, 16, 1, 3, 3), (2, 1, 1), (0, 1, 1), 1, BF16, "stride_d > kernel_d", "Basic"),
    ((1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), 1, np.float32, None, None),  # float32: V2
    ((1, 16, 4, 8, 8), (16, 8, 3, 3, 3), (1, 1, 1), (1, 1, 1), 2, np.float16, None, None),  # groups > 1: V2
    ((1, 16, 4, 8, 8), (16, 16, 1, 1, 1), (1, 1, 1), (0, 0, 0), 1, np.float16, "CheckV2Perf", None),  # 1x1 dw: V2
    # 2D viewed as 3D: aclnn holds 6 padding values, CheckV2Functionality's D/H/W loop runs past the kernel dims
    ((1, 16, 8, 8), (16, 16, 3, 3), (1, 1), (0, 0), 1, np.float16, "2D padding array", "CheckV2BasicBlockSupport"),
])
def test_where_real_a2_runs_the_tbe_kernels(x_shape, w_shape, stride, padding, groups, dtype, dx_tbe, dw_tbe):
    from kernels.convolution_backward.v2_or_tbe import conv3d_dw_tbe_reason, conv3d_dx_tbe_reason
    r = _route(x_shape, w_shape, stride, padding, groups, dtype)
    cube = np.dtype(dtype).name
    for reason, expect in ((conv3d_dx_tbe_reason(r.view, groups, cube, 3 if len(stride) == 3 else 6), dx_tbe),
                           (conv3d_dw_tbe_reason(r.view, groups, cube, 32 // np.dtype(dtype).itemsize), dw_tbe)):
        assert (expect in reason) if expect else reason is None, reason


def test_the_notes_name_the_tbe_kernels():
    go, x, w, op = make_problem((1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1)
    run = convolution_backward_run(go, x, w, [16], (1, 1, 1), (1, 1, 1), (1, 1, 1), False, op, 1,
                                   (True, True, False), execute=False)
    assert any(n.startswith("grad_input: real A2 runs the TBE Conv3DBackpropInput") for n in run.notes)
    assert any(n.startswith("grad_weight: real A2 runs the TBE Conv3DBackpropFilter") for n in run.notes)


def test_the_engines_agree_on_every_launch():
    go, x, w, op = make_problem(*GRID[5])
    args = (go, x, w, [6], *GRID[5][2:5], False, op, 2, (True, True, True))
    exact = convolution_backward_run(*args, engine="exact")
    fast = convolution_backward_run(*args, engine="fast")
    for a, b in zip((exact.grad_input, exact.grad_weight, exact.grad_bias),
                    (fast.grad_input, fast.grad_weight, fast.grad_bias)):
        assert np.array_equal(a, b)
    assert [launch.report.cycles for launch in exact.launches] == [launch.report.cycles for launch in fast.launches]


@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize("x_shape", [(3, 2, 8, 13, 13), (4, 2, 8, 10, 17)])  # D*H*W = 1352 and 1360
def test_grad_bias_of_rows_that_nearly_fill_a_ub_tile(dtype, x_shape):
    # issue 22: these faulted in the grad_bias AIV kernel (an Add's tail repeat reached its accumulator)
    check(x_shape, (2, 2, 1, 1, 1), (1, 1, 1), (0, 0, 0), dtype=dtype, mask=(False, False, True))
