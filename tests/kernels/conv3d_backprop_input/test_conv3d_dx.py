"""Conv3DBackpropInputV2 (dx) on the simulated A2 chip, against PyTorch in float64.

The torch reference takes the same (already rounded) inputs, computes in float64 through autograd of
F.conv3d over an explicitly padded input (so asymmetric pads work), and the comparison allows
rtol*|ref| + rtol*sqrt(K)*rms(w)*rms(dy) with rtol per output dtype (K = Cout/groups * kD*kH*kW).
"""
from __future__ import annotations

import math
import os
import re

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import round_to_hf32
from ascend_sim.machine.formats import filter_from_ncdhw
from kernels import conv3d_backprop_input_v2, conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input import Conv3DBackpropInput

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)
RTOL = {F16: 1e-3, BF16: 8e-3, F32: 1e-5}


# ------------------------------------------------------------------------------------------------ helpers
def out_size(size, k, s, d, before, after):
    return (size + before + after - (k - 1) * d - 1) // s + 1


def make_problem(dtype, x_shape, w_shape, strides, pads, dil=(1, 1, 1), groups=1, seed=0):
    """Random NCDHW weight and dy (rounded to dtype) for dx of shape x_shape (NCDHW)."""
    rng = np.random.default_rng(seed)
    n, _, d, h, w = x_shape
    dy_shape = (n, w_shape[0]) + tuple(out_size(sz, k, s, dl, pads[2 * i], pads[2 * i + 1])
                                       for i, (sz, k, s, dl) in enumerate(zip((d, h, w), w_shape[2:], strides, dil)))
    weight = rng.standard_normal(w_shape).astype(dtype)
    dy = rng.standard_normal(dy_shape).astype(dtype)
    return weight, dy


def torch_dx(x_shape, weight, dy, strides, pads, dil, groups, hf32=False):
    """float64 dx via autograd through F.conv3d of an explicitly padded input (NCDHW)."""
    w64, dy64 = weight.astype(np.float64), dy.astype(np.float64)
    if hf32:
        w64 = round_to_hf32(weight.astype(np.float32)).astype(np.float64)
        dy64 = round_to_hf32(dy.astype(np.float32)).astype(np.float64)
    x = torch.zeros(x_shape, dtype=torch.float64, requires_grad=True)
    pf, pb, pt, pbo, pl, pr = pads
    xp = torch.nn.functional.pad(x, (pl, pr, pt, pbo, pf, pb))
    y = torch.nn.functional.conv3d(xp, torch.from_numpy(w64), stride=tuple(strides), dilation=tuple(dil),
                                   groups=groups)
    assert tuple(y.shape) == dy.shape, (tuple(y.shape), dy.shape)
    y.backward(torch.from_numpy(dy64))
    return x.grad.numpy()


def assert_close(got, ref, weight, dy, groups, rtol):
    assert got.shape == ref.shape, (got.shape, ref.shape)
    got = got.astype(np.float64)
    assert not np.isnan(got).any(), "the kernel left dx elements unwritten (NaN poison visible)"
    k = weight.shape[0] // groups * int(np.prod(weight.shape[2:]))
    scale = math.sqrt(k) * np.sqrt(np.mean(weight.astype(np.float64) ** 2)) * np.sqrt(
        np.mean(dy.astype(np.float64) ** 2))
    tol = rtol * np.abs(ref) + rtol * scale
    bad = np.abs(got - ref) > tol
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        raise AssertionError(f"{bad.sum()} of {bad.size} elements differ; first at {idx}: got {got[idx]}, "
                             f"ref {ref[idx]}, tol {tol[idx]:.3g}; max abs err {np.abs(got - ref).max():.3g}")


def check_case(dtype, x_shape, w_shape, strides, pads, dil=(1, 1, 1), groups=1, data_format="NCDHW",
               filter_format="NCDHW", enable_hf32=False, seed=0, route="v2", **run_kwargs):
    """Run the operator on the case and compare with torch; returns the run record.

    route="v2": this file tests the conv kernel, also on the shapes aclnn would send to a matmul
    (tests/kernels/conv3d_backprop_input/test_conv3d_dx_routing.py covers that route)."""
    dtype = np.dtype(dtype)
    weight, dy = make_problem(dtype, x_shape, w_shape, strides, pads, dil, groups, seed)
    ref = torch_dx(x_shape, weight, dy, strides, pads, dil, groups, hf32=enable_hf32)
    w_in = filter_from_ncdhw(weight, filter_format)
    if data_format == "NDHWC":
        n, c, d, h, w = x_shape
        size, dy_in = (n, d, h, w, c), np.ascontiguousarray(dy.transpose(0, 2, 3, 4, 1))
        st5, dl5 = (1, *strides, 1), (1, *dil, 1)
    else:
        size, dy_in, st5, dl5 = x_shape, dy, (1, 1, *strides), (1, 1, *dil)
    run = conv3d_backprop_input_v2_run(size, w_in, dy_in, strides=st5, pads=pads, dilations=dl5, groups=groups,
                                       data_format=data_format, filter_format=filter_format,
                                       enable_hf32=enable_hf32, route=route, **run_kwargs)
    got = run.result
    assert got.dtype == dtype
    if data_format == "NDHWC":
        got = got.transpose(0, 4, 1, 2, 3)
    rtol = 1e-3 if enable_hf32 else RTOL[dtype]
    assert_close(got, ref, weight, dy, groups, rtol)
    return run


# ------------------------------------------------------------------------------------------------ grid
# (dtype, x NCDHW, filter NCDHW (Cout, Cin/g, kD, kH, kW), strides DHW, pads, dilations DHW, groups)
GRID = {
    "s1_3x3x3": (F16, (1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "s2_odd_channels": (F16, (2, 20, 3, 7, 5), (18, 20, 2, 3, 3), (1, 2, 2), (1, 0, 1, 0, 1, 1), (1, 1, 1), 1),
    "s2_all_axes": (F16, (1, 8, 5, 9, 9), (8, 8, 3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "s3_hw": (F16, (1, 12, 2, 10, 11), (9, 12, 2, 4, 4), (1, 3, 3), (0, 1, 1, 2, 2, 1), (1, 1, 1), 1),
    "stride_gt_kernel_hw": (F16, (1, 5, 3, 8, 8), (7, 5, 1, 2, 2), (1, 3, 3), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "stride_gt_kernel_d": (F16, (1, 8, 7, 6, 6), (8, 8, 1, 2, 2), (3, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "stride_gt_kernel_d_dil": (F16, (1, 8, 9, 5, 5), (8, 8, 2, 2, 2), (3, 1, 1), (1, 0, 0, 1, 1, 0), (2, 1, 1), 1),
    "stride_eq_kernel": (F16, (1, 16, 4, 8, 8), (16, 16, 2, 2, 2), (2, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "kernel_1x1x1": (F16, (2, 24, 3, 5, 6), (40, 24, 1, 1, 1), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "kernel_1x1x1_s2": (F16, (1, 16, 4, 6, 6), (16, 16, 1, 1, 1), (2, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "asym_pads": (F16, (1, 16, 4, 7, 9), (16, 16, 3, 3, 3), (1, 1, 1), (2, 0, 0, 2, 1, 2), (1, 1, 1), 1),
    "pads_ge_kernel": (F16, (1, 8, 4, 6, 6), (8, 8, 2, 2, 2), (1, 1, 1), (3, 2, 3, 2, 2, 3), (1, 1, 1), 1),
    "pads_ge_kernel_s2": (F16, (1, 8, 3, 6, 7), (8, 8, 2, 3, 2), (2, 2, 2), (2, 3, 4, 3, 2, 5), (1, 1, 1), 1),
    "dilation": (F16, (1, 16, 5, 10, 10), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 2, 2, 2, 2), (2, 2, 2), 1),
    "dilation_s2": (F16, (1, 8, 6, 11, 9), (8, 8, 2, 3, 2), (2, 2, 2), (1, 0, 2, 1, 0, 1), (2, 2, 3), 1),
    "groups2": (F16, (1, 16, 5, 10, 10), (16, 8, 3, 3, 3), (1, 1, 1), (1, 1, 2, 2, 2, 2), (2, 2, 2), 2),
    "groups_real_g": (F16, (1, 64, 2, 8, 8), (64, 4, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 16),
    "depthwise": (F16, (1, 32, 3, 6, 6), (32, 1, 1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), (1, 1, 1), 32),
    "depthwise_mult2": (F16, (2, 24, 2, 5, 5), (48, 1, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 24),
    "large_k_tiles": (F16, (2, 64, 4, 16, 16), (48, 64, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "wide_5x5": (F16, (1, 40, 3, 20, 24), (72, 40, 2, 5, 5), (1, 2, 2), (0, 1, 2, 2, 2, 2), (1, 1, 1), 1),
    "bf16_basic": (BF16, (1, 16, 3, 6, 6), (16, 16, 2, 3, 3), (1, 1, 1), (0, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "bf16_s2_groups": (BF16, (2, 12, 4, 7, 7), (18, 4, 2, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), 3),
    "bf16_5x5": (BF16, (1, 32, 3, 12, 12), (32, 32, 3, 5, 5), (1, 1, 1), (2, 2, 2, 2, 2, 2), (1, 1, 1), 1),
    "fp32_basic": (F32, (1, 16, 2, 6, 6), (16, 16, 1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 1),
    "fp32_s2_odd": (F32, (2, 12, 3, 7, 5), (10, 12, 2, 3, 3), (1, 2, 2), (1, 0, 1, 0, 1, 1), (1, 1, 1), 1),
    "fp32_cout5": (F32, (1, 7, 3, 6, 6), (5, 7, 2, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "fp32_1x1x1": (F32, (1, 8, 3, 6, 6), (8, 8, 1, 1, 1), (1, 1, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "fp32_1x1x1_cout24": (F32, (1, 20, 2, 5, 5), (24, 20, 1, 1, 1), (1, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "fp32_sd2": (F32, (2, 40, 3, 12, 12), (36, 40, 3, 3, 3), (2, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "fp32_groups": (F32, (1, 16, 2, 6, 6), (16, 4, 2, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 4),
    "fp32_depthwise": (F32, (1, 48, 2, 8, 8), (48, 1, 1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 48),
    "fp32_stride_gt_kernel": (F32, (1, 8, 3, 3, 3), (8, 8, 1, 1, 1), (1, 2, 2), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "b1_full_load_multi_tile": (F16, (1, 16, 1, 24, 24), (16, 16, 1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1),
                                (1, 1, 1), 1),
    "tasks_not_divisible": (F16, (1, 16, 25, 4, 4), (16, 16, 1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 1),
    "depthwise_real_g2": (F16, (1, 24, 2, 6, 6), (24, 1, 1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 24),
    "fp32_dropped_tail_plane_row": (F32, (1, 8, 7, 9, 5), (8, 8, 2, 3, 3), (2, 2, 1), (0, 0, 1, 0, 1, 1), (1, 1, 1), 1),
    "fp32_rows_beyond_dy": (F32, (1, 8, 2, 9, 4), (8, 8, 1, 1, 1), (1, 3, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "f16_rows_beyond_dy": (F16, (1, 16, 2, 40, 16), (16, 16, 1, 1, 1), (1, 3, 1), (0, 0, 0, 0, 0, 0), (1, 1, 1), 1),
    "fp32_depthwise_group_tail": (F32, (1, 19, 4, 8, 8), (19, 1, 1, 4, 4), (2, 2, 2), (1, 3, 1, 2, 5, 2), (3, 1, 3),
                                  19),
    "fp32_dilation": (F32, (1, 8, 5, 9, 9), (8, 8, 2, 3, 3), (1, 2, 1), (1, 1, 2, 1, 2, 2), (2, 2, 2), 1),
}


@pytest.mark.parametrize("name", sorted(GRID))
def test_grid_against_torch(name):
    dtype, x, w, s, p, d, g = GRID[name]
    check_case(dtype, x, w, s, p, d, g)


@pytest.mark.parametrize("name", sorted(GRID))
def test_grid_in_replay_verify_mode(name, monkeypatch):
    """Every replayed unit (the tile's K loop, the AIV post-process) is also run for real and compared, record by
    record (ascend_sim/engine/replay.py); a difference raises ReplayMismatch. Timing-only: the records decide."""
    dtype, x, w, s, p, d, g = GRID[name]
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    weight, dy = make_problem(np.dtype(dtype), x, w, s, p, d, g)
    conv3d_backprop_input_v2_run(x, weight, dy, strides=(1, 1, *s), pads=p, dilations=(1, 1, *d), groups=g,
                                 data_format="NCDHW", route="v2", execute=False)


@pytest.mark.parametrize("data_format", ["NDHWC", "NCDHW"])
@pytest.mark.parametrize("filter_format", ["NCDHW", "NDHWC", "DHWCN"])
@pytest.mark.parametrize("dtype", [F16, BF16, F32], ids=["f16", "bf16", "f32"])
def test_formats_and_dtypes(data_format, filter_format, dtype):
    check_case(dtype, (2, 10, 3, 6, 5), (12, 5, 2, 3, 2), (1, 2, 1), (1, 0, 1, 1, 0, 1), (1, 1, 1), 2,
               data_format=data_format, filter_format=filter_format)


def test_fp32_hf32():
    run = check_case(F32, (1, 16, 2, 6, 6), (16, 16, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), enable_hf32=True)
    assert run.tiling.conv3DDxTiling.hf32Flag == 1


def test_drivers_and_init_pass_are_exercised():
    """The basic-block driver runs fp16 groups=1; the general one fp32; stride > kernel needs the init pass."""
    run = check_case(F16, (1, 5, 3, 8, 8), (7, 5, 1, 2, 2), (1, 3, 3), (0, 0, 0, 0, 0, 0))
    assert run.tiling.useBasicBlock and run.tiling.conv3DDxTiling.initOutputFlag == 1
    assert run.report.counts.get("Fixpipe", 0) > 0
    run = check_case(F32, (1, 8, 3, 3, 3), (8, 8, 1, 1, 1), (1, 2, 2), (0, 0, 0, 0, 0, 0))
    assert not run.tiling.useBasicBlock and run.tiling.conv3DDxTiling.initOutputFlag == 1
    assert run.tiling.params.coreNum >= 1


OVERRIDE_CASES = {
    "order_m": (F16, {"iterateOrder": 0}),
    "single_l1": (F16, {"al1Pbuffer": 1, "bl1Pbuffer": 1}),
    "single_l0": (F16, {"al0Pbuffer": 1, "bl0Pbuffer": 1}),
    "double_l0c": (F16, {"cl0Pbuffer": 2}),
    "fp32_step1": (F32, {"stepKa": 1, "stepKb": 1}),
    "basic_block_3_cores": (F16, {"coreNum": 3}),
    "fp32_order_m_double_l0c": (F32, {"iterateOrder": 0, "cl0Pbuffer": 2}),
}


@pytest.mark.parametrize("name", sorted(OVERRIDE_CASES))
def test_tiling_overrides(name):
    dtype, overrides = OVERRIDE_CASES[name]
    check_case(dtype, (1, 20, 3, 9, 9), (24, 20, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1), tiling_overrides=overrides)


@pytest.mark.parametrize("overrides, words", [
    ({"baseK": 32}, "stepKa=1: stepKa*baseK=32 must be whole kernel windows"),
    ({"baseM": 1024, "baseN": 256}, "baseM=1024: L0A needs"),
    ({"al1Pbuffer": 3}, "al1Pbuffer=3: must be 1 (single buffer) or 2 (double buffer)"),
    ({"basM": 64}, "unknown tiling field 'basM'; did you mean 'baseM'"),
], ids=["baseK_not_whole_windows", "blocks_too_big", "al1Pbuffer_3", "misspelt"])
def test_illegal_overrides_are_refused_before_launch(overrides, words):
    """The issue's three overrides (a simulator fault, a buffer overflow, a run with an illegal tiling) and a
    misspelt name: each is a ValueError naming field=value and the rule, and no instruction is issued."""
    weight, dy = make_problem(F16, (1, 8, 4, 8, 8), (16, 8, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1))
    issued = []
    with pytest.raises(ValueError) as info:
        conv3d_backprop_input_v2_run((1, 8, 4, 8, 8), weight, dy, strides=(1, 1, 1, 1, 1), pads=(1,) * 6,
                                     data_format="NCDHW", tiling_overrides=overrides, execute=False,
                                     hooks=[lambda core, instr: issued.append(instr)])
    assert words in str(info.value)
    assert not issued


def test_overrides_must_be_a_mapping():
    kwargs = _good()
    args = (kwargs.pop("input_size"), kwargs.pop("filter"), kwargs.pop("out_backprop"))
    with pytest.raises(TypeError, match=r"tiling_overrides=\[\('baseM', 16\)\] must be a dict"):
        conv3d_backprop_input_v2_run(*args, **kwargs, tiling_overrides=[("baseM", 16)])


@pytest.mark.parametrize("dtype, base_k", [(F16, 48), (F32, 24)], ids=["f16", "f32"])
def test_k_steps_that_do_not_nest(dtype, base_k):
    """stepKa = 6 and stepKb = 9 (neither divides the other) over 12 K steps: the kernel keeps separate A and B
    step counters (conv3d_bp_compute.h), so the validator no longer asks the host generator's nesting rule.
    Found by exploring the override property test with the validator bypassed."""
    run = check_case(dtype, (1, 16, 3, 9, 9), (64, 16, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1),
                     tiling_overrides={"baseK": base_k, "stepKa": 6, "stepKb": 9})
    t = run.tiling.conv3DDxTiling
    assert (t.baseK, t.stepKa, t.stepKb) == (base_k, 6, 9)


# Rules the validator gained from the override exploration (validator bypassed, kernel run against torch): each
# refused tiling ran wrong or faulted; the accepted neighbours below run right.
# name: (dtype, x NCDHW, filter NCDHW, strides, pads, groups, overrides, words of the refusal)
REFUSED_FOUND = {
    # fp16 3x3 kernel: key 0 walks one kernel window per K step, baseK = 2 windows reads before the start of L1
    "f16_key_0_with_two_windows": (F16, (1, 16, 3, 9, 9), (64, 16, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1), 1,
                                   {"baseK": 288, "stepKa": 1, "stepKb": 1, "baseM": 32, "baseN": 16,
                                    "loadB2Condition": 0}, "loadB2Condition=0: 0 (baseK/C0 < hk*wk) walks one"),
    # key 2 (the 1x1 template) on a 3x3 kernel: A and B indexed by C0 blocks, not windows
    "f16_key_2_on_3x3": (F16, (1, 16, 3, 9, 9), (64, 16, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1), 1,
                         {"loadB2Condition": 2}, "loadB2Condition=2: must be 0 or 1 for hk*wk=9"),
    # fp32 3x2 kernel, K = 3 windows in steps of 2 windows: the short last step takes the upper 8-cout half
    "fp32_short_last_k_step": (F32, (1, 8, 2, 6, 6), (24, 8, 1, 3, 2), (1, 1, 1), (0, 0, 1, 1, 1, 0), 1,
                               {"baseK": 96, "stepKa": 1, "stepKb": 1}, "baseK=96: float32: K = 3 cout1 blocks"),
    # fp32 1x1 kernel, B loads of 8 couts: every second one starts inside a 16-cout group
    "fp32_1x1_b_load_in_half_group": (F32, (1, 8, 2, 6, 6), (24, 8, 1, 1, 1), (1, 1, 1), (0,) * 6, 1,
                                      {"baseK": 8, "stepKa": 1, "stepKb": 1}, "stepKb=1: float32 1x1 kernel"),
    # fp32 cout 36 (5 C0 blocks) in B loads of 3: the last load (blocks 3-4) spans two 16-cout groups
    "fp32_last_b_load_short": (F32, (1, 3, 2, 6, 7), (36, 1, 1, 3, 3), (1, 1, 2), (0, 0, 0, 0, 2, 0), 3,
                               {"baseK": 72, "stepKa": 3, "stepKb": 3}, "stepKb=3: float32: the last B1 load"),
    # fp16 1x3 kernel: baseK 32 neither holds nor divides a window of 48, so a K step crosses into the next
    "f16_step_crosses_window": (F16, (1, 18, 2, 4, 5), (24, 6, 1, 1, 3), (1, 1, 1), (0,) * 6, 3,
                                {"baseK": 32, "stepKa": 3, "stepKb": 3, "loadB2Condition": 0},
                                "baseK=32: must be whole kernel windows or divide one"),
}
ACCEPTED_NEIGHBOURS = {
    "f16_key_1_with_two_windows": (F16, (1, 16, 3, 9, 9), (64, 16, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1), 1,
                                   {"baseK": 288, "stepKa": 1, "stepKb": 1, "baseM": 32, "baseN": 16,
                                    "loadB2Condition": 1}),
    # key 1 also walks a baseK inside one window (16 of 48): the generated key may stay when baseK shrinks
    "f16_key_1_inside_a_window": (F16, (1, 18, 2, 4, 5), (24, 6, 1, 1, 3), (1, 1, 1), (0,) * 6, 3,
                                  {"baseK": 16, "stepKa": 3, "stepKb": 3, "loadB2Condition": 1}),
    "f16_key_0_inside_a_window": (F16, (1, 18, 2, 4, 5), (24, 6, 1, 1, 3), (1, 1, 1), (0,) * 6, 3,
                                  {"baseK": 16, "stepKa": 3, "stepKb": 3, "loadB2Condition": 0}),
    "fp32_short_last_k_step_same_half": (F32, (1, 8, 2, 6, 6), (32, 8, 1, 3, 2), (1, 1, 1), (0, 0, 1, 1, 1, 0), 1,
                                         {"baseK": 144, "stepKa": 1, "stepKb": 1}),
    "fp32_1x1_b_loads_of_16": (F32, (1, 8, 2, 6, 6), (24, 8, 1, 1, 1), (1, 1, 1), (0,) * 6, 1,
                               {"baseK": 16, "stepKa": 1, "stepKb": 1}),
    "fp32_even_b_loads": (F32, (1, 3, 2, 6, 7), (36, 1, 1, 3, 3), (1, 1, 2), (0, 0, 0, 0, 2, 0), 3,
                          {"baseK": 72, "stepKa": 4, "stepKb": 4}),
    # stepKb*baseK = 96 is not whole windows of 72, but the one B load holds all of K = 72 (it used to be refused)
    "fp32_one_b_load_beyond_k": (F32, (1, 3, 3, 7, 5), (3, 3, 2, 3, 3), (1, 2, 1), (0, 0, 1, 0, 1, 0), 1,
                                 {"baseK": 24, "stepKa": 3, "stepKb": 4, "loadB2Condition": 0}),
}


@pytest.mark.parametrize("name", sorted(REFUSED_FOUND))
def test_override_found_illegal_is_refused(name):
    dtype, x, w, strides, pads, groups, overrides, words = REFUSED_FOUND[name]
    with pytest.raises(ValueError, match=re.escape(words)):
        check_case(dtype, x, w, strides, pads, groups=groups, tiling_overrides=overrides)


@pytest.mark.parametrize("name", sorted(ACCEPTED_NEIGHBOURS))
def test_override_found_neighbours_run_right(name):
    dtype, x, w, strides, pads, groups, overrides = ACCEPTED_NEIGHBOURS[name]
    run = check_case(dtype, x, w, strides, pads, groups=groups, tiling_overrides=overrides)
    assert {k: run.tiling.fields().get(k, getattr(run.tiling, k, None)) for k in overrides} == overrides


def test_kernel_wider_than_255():
    """kW = 300: Load3Dv2 gets filterW = 300 & 255 and filterSizeW = 1 (the 9th bit), as in the real kernel."""
    check_case(F16, (1, 16, 1, 2, 210), (16, 16, 1, 2, 300), (1, 1, 1), (0, 0, 1, 0, 50, 50))


def test_kernel_256():  # filterW = 256 & 255 = 0 with filterSizeW = 1
    check_case(F16, (1, 16, 1, 2, 210), (16, 16, 1, 2, 256), (1, 1, 1), (0, 0, 1, 0, 50, 50))


def test_skipped_tiles_of_inserted_zero_rows():
    """stride 3 > kernel 1 with one dx row per M tile: tiles whose window holds only inserted zero rows are
    skipped (JudgeIterateSkip) and rely on the init-output pass."""
    run = check_case(F16, (1, 16, 2, 9, 16), (16, 16, 1, 1, 1), (1, 3, 3), (0, 0, 0, 0, 0, 0),
                     tiling_overrides={"baseM": 16})
    assert run.tiling.conv3DDxTiling.initOutputFlag == 1


def test_init_pass_over_several_l0c_chunks():
    """One core zeroes the whole output: more than one L0C of zeros plus an NZ tail (fp16), and an fp32 output
    whose last piece is a row-major remainder of 8 elements."""
    from ascend_sim.machine.platform import get_platform
    one_core = get_platform("Ascend910B2").with_overrides(name="one_core", aic_cores=1, aiv_cores=2)
    run = check_case(F16, (1, 16, 2, 48, 48), (16, 16, 1, 1, 1), (1, 2, 2), (0, 0, 0, 0, 0, 0), platform=one_core)
    assert run.tiling.conv3DDxTiling.initOutputFlag == 1 and run.report.counts["Fixpipe"] > 3
    check_case(F32, (1, 8, 1, 3, 3), (8, 8, 1, 1, 1), (1, 2, 2), (0, 0, 0, 0, 0, 0), platform=one_core)


def test_timing_only_mode_matches_and_trace(tmp_path):
    weight, dy = make_problem(F16, (1, 16, 3, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1))
    kwargs = dict(strides=(1, 1, 1, 1, 1), pads=(1, 1, 1, 1, 1, 1), data_format="NCDHW")
    full = conv3d_backprop_input_v2_run((1, 16, 3, 8, 8), weight, dy, trace=tmp_path / "dx.json", **kwargs)
    timing = conv3d_backprop_input_v2_run((1, 16, 3, 8, 8), weight, dy, execute=False, **kwargs)
    assert timing.result is None
    assert timing.report.cycles == pytest.approx(full.report.cycles)
    assert (tmp_path / "dx.json").stat().st_size > 0
    assert full.report.bytes_by_path["GM->L1"] > 0 and full.report.microseconds > 0
    plain = conv3d_backprop_input_v2((1, 16, 3, 8, 8), weight, dy, **kwargs)
    np.testing.assert_array_equal(plain, full.result)


@pytest.mark.parametrize("dtype,iterate_order,base_m,base_n,wi", [
    (F16, 1, None, None, 6), (F16, 1, 16, 16, 6), (F16, 0, 16, 16, 6), (F16, 1, 16, 16, 20),
    (F32, 1, 16, 16, 6), (F32, 0, 16, 16, 20), (BF16, 0, 32, 16, 7),
], ids=["f16_gen", "f16_orderN_small", "f16_orderM_small", "f16_baseM_lt_wi", "f32_orderN", "f32_orderM_wide",
        "bf16_orderM"])
def test_api_directly(dtype, iterate_order, base_m, base_n, wi):
    """Drive the high-level API by hand on one core for the whole problem: Init, SetSingleShape,
    SetStartPosition, SetGradOutput, SetWeight, Iterate/GetTensorC, End; with small baseM/baseN several M and N
    tiles and two output depths are walked in ORDER_N or ORDER_M."""
    from ascend_sim import Chip
    from ascend_sim.ascendc import GlobalTensor
    from ascend_sim.machine.dtypes import dtype_name
    from ascend_sim.machine.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0, ndc1hwc0_to_ncdhw
    from ascend_sim.machine.tensor import GmAddr
    from tiling import conv3d_backprop_input_tiling

    x_shape, w_shape, strides, pads = (1, 32, 2, 6, wi), (16, 32, 2, 3, 3), (1, 2, 2), (1, 0, 1, 1, 1, 1)
    weight, dy = make_problem(dtype, x_shape, w_shape, strides, pads)
    td = conv3d_backprop_input_tiling(dy.shape, w_shape, x_shape, strides, pads, dtype=dtype_name(dtype))
    c0 = 32 // dtype.itemsize
    hw = 6 * wi
    update = {"iterateOrder": iterate_order, "singleCoreM": hw, "singleCoreDin": 2, "singleCoreCin1": 32 // c0,
              "singleCoreCin": 32}
    if base_m:
        update["baseM"] = base_m
    if base_n:
        update["baseN"] = base_n
    t = td.conv3DDxTiling.model_copy(update=update)
    chip = Chip("Ascend910B2")
    dy_gm = chip.gm.upload("dy", ncdhw_to_ndc1hwc0(dy))
    w_gm = chip.gm.upload("w", filter_to_fractal_z_3d(weight))
    y_gm = chip.gm.alloc("y", 2 * (32 // c0) * hw * c0 * dtype.itemsize)
    y_gm.data.view(dtype)[:] = np.nan
    tiles = []

    def kernel():
        dedx = Conv3DBackpropInput(dtype, td.loadB2Condition)
        dedx.Init(t)
        dedx.SetSingleShape(hw, t.dk * t.cout1 * t.hk * t.wk * c0, 32, 2)
        dedx.SetStartPosition(0, -t.backpropPadUp)
        dedx.SetGradOutput(GlobalTensor(dtype).SetGlobalBuffer(GmAddr(dy_gm)))
        dedx.SetWeight(GlobalTensor(dtype).SetGlobalBuffer(GmAddr(w_gm)))
        y = GlobalTensor(dtype).SetGlobalBuffer(GmAddr(y_gm))
        while dedx.Iterate():
            tiles.append((dedx.curDinIdx, dedx.curML0Idx, dedx.curNL0Idx))
            dedx.GetTensorC(y)
        dedx.End()

    chip.launch(kernel, 1)
    m_iter, n_iter = -(-hw // t.baseM), -(-32 // t.baseN)
    assert len(tiles) == 2 * m_iter * n_iter
    inner = 1 if iterate_order == 1 else 2  # ORDER_N walks M fastest, ORDER_M walks N fastest
    if m_iter > 1 and n_iter > 1:
        assert tiles[1][inner] == 1 and tiles[1][3 - inner] == 0
    got = ndc1hwc0_to_ncdhw(y_gm.data.view(dtype).reshape(1, 2, 32 // c0, 6, wi, c0), 32)
    assert_close(got, torch_dx(x_shape, weight, dy, strides, pads, (1, 1, 1), 1), weight, dy, 1, RTOL[dtype])


# ------------------------------------------------------------------------------------------------ properties
@st.composite
def problems(draw):
    dtype = draw(st.sampled_from([F16, BF16, F32]))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 6))
    cout = groups * draw(st.integers(1, 6))
    n = draw(st.integers(1, 2))
    kernel, strides, dil, pads, sizes = [], [], [], [], []
    for axis in range(3):
        k = draw(st.integers(1, 3))
        s = draw(st.integers(1, 3))
        d = draw(st.integers(1, 2))
        before, after = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        span = (k - 1) * d + 1
        low = max(1, span - before - after)
        size = draw(st.integers(low, max(low, 7 if axis else 4)))
        kernel.append(k), strides.append(s), dil.append(d), pads.extend([before, after]), sizes.append(size)
    data_format = draw(st.sampled_from(["NCDHW", "NDHWC"]))
    filter_format = draw(st.sampled_from(["NCDHW", "NDHWC", "DHWCN"]))
    return (dtype, (n, cin, *sizes), (cout, cin // groups, *kernel), tuple(strides), tuple(pads), tuple(dil),
            groups, data_format, filter_format)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_envelope_property(case):
    dtype, x, w, s, p, d, g, data_format, filter_format = case
    check_case(dtype, x, w, s, p, d, g, data_format=data_format, filter_format=filter_format)


@st.composite
def larger_problems(draw):
    """Realistic channel counts (incl. not multiples of 16, depthwise), kernels to 5, strides to 4, 3 platforms."""
    dtype = draw(st.sampled_from([F16, BF16, F32]))
    groups = draw(st.sampled_from([1, 1, 1, 2, 4, "depthwise"]))
    if groups == "depthwise":
        groups = cin = cout = draw(st.integers(2, 40))
    else:
        cin = groups * draw(st.integers(1, 48 // groups))
        cout = groups * draw(st.integers(1, 48 // groups))
    kernel, strides, dil, pads, sizes = [], [], [], [], []
    for axis in range(3):
        k = draw(st.integers(1, 5 if axis else 3))
        s = draw(st.integers(1, 4 if axis else 2))
        d = draw(st.integers(1, 3 if axis else 2))
        before, after = draw(st.integers(0, k)), draw(st.integers(0, k))
        span = (k - 1) * d + 1
        low = max(1, span - before - after)
        size = draw(st.integers(low, max(low, 20 if axis else 5)))
        kernel.append(k), strides.append(s), dil.append(d), pads.extend([before, after]), sizes.append(size)
    platform = draw(st.sampled_from(["Ascend910B2", "Ascend910B3", "Ascend910B4"]))
    return dtype, (draw(st.integers(1, 2)), cin, *sizes), (cout, cin // groups, *kernel), tuple(strides), \
        tuple(pads), tuple(dil), groups, platform


@settings(max_examples=int(os.environ.get("DX_EXAMPLES", 300)), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(larger_problems())
def test_envelope_property_larger_shapes(case):
    dtype, x, w, s, p, d, g, platform = case
    check_case(dtype, x, w, s, p, d, g, platform=platform)


# ------------------------------------------------------------------------------------------------ bad input
def _good():
    weight, dy = make_problem(F16, (1, 8, 3, 6, 6), (8, 8, 2, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1))
    return dict(input_size=(1, 8, 3, 6, 6), filter=weight, out_backprop=dy, strides=(1, 1, 1, 1, 1),
                pads=(0, 0, 1, 1, 1, 1), data_format="NCDHW")


def _call(**changes):
    kwargs = {**_good(), **changes}
    args = (kwargs.pop("input_size"), kwargs.pop("filter"), kwargs.pop("out_backprop"))
    return conv3d_backprop_input_v2(*args, **kwargs)


BAD = [
    ("data_format", {"data_format": "NHWC"}, ValueError, "data_format"),
    ("filter_format", {"filter_format": "FRACTAL_Z_3D"}, ValueError, "filter_format"),
    ("mixed_dtypes", {"filter": _good()["filter"].astype(np.float32)}, TypeError, "dtype"),
    ("int_dtype", {"out_backprop": _good()["out_backprop"].astype(np.int32)}, TypeError, "out_backprop.dtype"),
    ("float64", {"filter": _good()["filter"].astype(np.float64)}, TypeError, "filter.dtype"),
    ("not_array", {"filter": [[1.0]]}, TypeError, "filter"),
    ("rank", {"out_backprop": _good()["out_backprop"][0]}, ValueError, "5 dimensions"),
    ("input_size_len", {"input_size": (1, 8, 3, 6)}, ValueError, "input_size"),
    ("input_size_type", {"input_size": (1, 8, 3, 6, 6.0)}, TypeError, "input_size"),
    ("strides_nc", {"strides": (2, 1, 1, 1, 1)}, ValueError, "strides"),
    ("strides_len", {"strides": (1, 1, 1)}, ValueError, "strides"),
    ("stride_hw_range", {"strides": (1, 1, 1, 64, 1)}, ValueError, "strides (H)"),
    ("dilation_zero", {"dilations": (1, 1, 0, 1, 1)}, ValueError, "dilations"),
    ("pads_len", {"pads": (0, 0, 1, 1)}, ValueError, "pads"),
    ("pads_negative", {"pads": (0, 0, -1, 1, 1, 1)}, ValueError, "pads[2]"),
    ("pads_too_big", {"pads": (0, 0, 256, 1, 1, 1)}, ValueError, "pads[2]"),
    ("groups_zero", {"groups": 0}, ValueError, "groups"),
    ("groups_not_divide", {"groups": 3}, ValueError, "groups=3"),
    ("groups_bool", {"groups": True}, TypeError, "groups"),
    ("shape_formula", {"input_size": (1, 8, 3, 7, 6)}, ValueError, "out_backprop H"),
    ("batch_mismatch", {"input_size": (2, 8, 3, 6, 6)}, ValueError, "batch"),
    ("channel_mismatch", {"input_size": (1, 16, 3, 6, 6)}, ValueError, "Cin/groups"),
    ("cout_mismatch", {"out_backprop": np.zeros((1, 4, 2, 6, 6), np.float16)}, ValueError, "Cout"),
    ("hf32_type", {"enable_hf32": 1}, TypeError, "enable_hf32"),
    ("hf32_f16", {"enable_hf32": True}, ValueError,
     "enable_hf32=True with dtype='float16': HF32 applies to float32 only"),
    ("hf32_bf16", {"enable_hf32": True, "filter": _good()["filter"].astype(BF16),
                   "out_backprop": _good()["out_backprop"].astype(BF16)}, ValueError,
     "enable_hf32=True with dtype='bfloat16': HF32 applies to float32 only"),
    ("platform", {"platform": "Ascend310"}, ValueError, "platform"),
]


@pytest.mark.parametrize("name,changes,exc,match", BAD, ids=[b[0] for b in BAD])
def test_bad_input(name, changes, exc, match):
    with pytest.raises(exc, match=match.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        _call(**changes)


def test_shape_error_names_the_data_format_and_suggests_the_other():
    """NCDHW arrays passed with the default data_format='NDHWC' (the issue's case) and the reverse."""
    weight, dy = make_problem(F16, (1, 8, 4, 8, 8), (16, 8, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1))
    kwargs = dict(strides=(1, 1, 1, 1, 1), pads=(1,) * 6)
    with pytest.raises(ValueError) as info:
        conv3d_backprop_input_v2((1, 8, 4, 8, 8), weight, dy, **kwargs)  # dy is (1, 16, 4, 8, 8): NCDHW
    assert str(info.value) == (
        "out_backprop channels=8 (axis 4 in data_format='NDHWC') must equal the filter's Cout=16 (filter shape "
        "(16, 8, 3, 3, 3) in filter_format='NCDHW'); with data_format='NCDHW' the shapes would fit")
    dy_ndhwc = np.ascontiguousarray(dy.transpose(0, 2, 3, 4, 1))
    with pytest.raises(ValueError, match=r"\(axis 1 in data_format='NCDHW'\).*; with data_format='NDHWC' the "
                                         r"shapes would fit$"):
        conv3d_backprop_input_v2((1, 4, 8, 8, 8), weight, dy_ndhwc, data_format="NCDHW", **kwargs)


def test_shape_error_without_a_fitting_format_has_no_suggestion():
    weight, dy = make_problem(F16, (1, 8, 4, 8, 8), (16, 8, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError) as info:  # H of dy is 8 but input_size H = 9 needs 9, in either format
        conv3d_backprop_input_v2((1, 8, 4, 9, 8), weight, dy, strides=(1, 1, 1, 1, 1), pads=(1,) * 6,
                                 data_format="NCDHW")
    message = str(info.value)
    assert message.startswith("out_backprop H=8 (axis 3 in data_format='NCDHW') does not fit the convolution")
    assert "would fit" not in message


def test_too_wide_rows_rejected_before_launch():
    weight = np.zeros((16, 16, 1, 1, 1), np.float16)
    dy = np.zeros((1, 16, 1, 1, 5000), np.float16)
    with pytest.raises(ValueError, match="4096"):
        conv3d_backprop_input_v2((1, 16, 1, 1, 5000), weight, dy, strides=(1, 1, 1, 1, 1), pads=(0,) * 6,
                                 data_format="NCDHW")
