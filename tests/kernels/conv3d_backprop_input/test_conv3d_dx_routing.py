"""aclnn's matmul routing for Conv3DBackpropInput: which cases go to the matmul kernel, and that both routes agree
with PyTorch (float64 from the same rounded inputs, the tolerance of tests/kernels/conv3d_backprop_input/test_conv3d_dx.py)."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

from ascend_sim.machine.dtypes import hifloat8, round_to_hf32
from ascend_sim.machine.platform import get_platform
from kernels import conv3d_backprop_input_v2, conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.arguments import check_problem
from kernels.conv3d_backprop_input.matmul_route import FM_EQ_KERNEL, STRIDE_EQ_KERNEL, W1B1_1X1X1, aclnn_matmul_mode
from kernels.matmul import MatmulTiling

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)
RTOL = {F16: 1e-3, BF16: 8e-3, F32: 1e-5}
A2, A5 = "Ascend910B2", "Ascend950PR_9599"


def dy_shape(x, w, strides, dil=(1, 1, 1), pads=(0,) * 6):
    return (x[0], w[0]) + tuple((size + pads[2 * i] + pads[2 * i + 1] - (k - 1) * d - 1) // s + 1
                                for i, (size, k, s, d) in enumerate(zip(x[2:], w[2:], strides, dil)))


def mode_of(x, w, strides, pads=(0,) * 6, dil=(1, 1, 1), groups=1, data_format="NCDHW", filter_format="NCDHW",
            platform=A2):
    """The routing decision for shapes only (x and w NCDHW; no arrays)."""
    dy = dy_shape(x, w, strides, dil, pads)
    weight = w
    size, st5, dl5 = x, (1, 1, *strides), (1, 1, *dil)
    if data_format == "NDHWC":
        size, st5, dl5 = (x[0], *x[2:], x[1]), (1, *strides, 1), (1, *dil, 1)
        dy = (dy[0], *dy[2:], dy[1])
    if filter_format == "NDHWC":
        weight = (w[0], *w[2:], w[1])
    p = check_problem(size, weight, dy, "float16", st5, pads, dl5, groups, data_format, filter_format, platform, False)
    return aclnn_matmul_mode(p, data_format, filter_format, p.dilations_given)


@pytest.mark.parametrize("args,kwargs,expected", [
    # STRIDE_EQ_KERNEL: kernel == stride, x exactly tiled, some stride > 1 (A2/A3)
    (((1, 4, 4, 6, 8), (8, 4, 1, 2, 2), (1, 2, 2)), {}, STRIDE_EQ_KERNEL),
    (((2, 3, 4, 5, 3), (6, 3, 2, 1, 1), (2, 1, 1)), {}, STRIDE_EQ_KERNEL),  # depth only
    (((1, 4, 4, 6, 9), (8, 4, 1, 2, 2), (1, 2, 2)), {}, None),  # W = 9 is not tiled by 2
    (((1, 4, 4, 6, 8), (8, 4, 1, 1, 1), (1, 1, 1)), {}, None),  # 1x1x1, stride 1: no stride > 1 on A2
    (((1, 4, 4, 6, 8), (8, 4, 1, 1, 1), (2, 2, 2)), {}, None),  # 1x1x1 with stride 2: kernel != stride
    # FM_EQ_KERNEL: kernel == feature map (dy is 1x1x1), any stride
    (((2, 5, 3, 4, 6), (7, 5, 3, 4, 6), (1, 1, 1)), {}, FM_EQ_KERNEL),
    (((2, 5, 3, 4, 6), (7, 5, 3, 4, 6), (2, 3, 5)), {}, FM_EQ_KERNEL),
    (((1, 6, 1, 1, 1), (4, 6, 1, 1, 1), (1, 1, 1)), {}, FM_EQ_KERNEL),
    # IsConvBpSupportMatmulMode: pads 0, dilations 1 (as given, even on kernel-1 axes), groups 1, NCDHW x
    (((1, 4, 4, 6, 8), (8, 4, 1, 2, 2), (1, 2, 2)), dict(pads=(0, 0, 0, 0, 0, 1)), None),
    (((1, 4, 4, 6, 8), (8, 4, 1, 2, 2), (1, 2, 2)), dict(dil=(2, 1, 1)), None),
    (((1, 4, 4, 6, 8), (8, 2, 1, 2, 2), (1, 2, 2)), dict(groups=2), None),
    (((1, 4, 4, 6, 8), (8, 4, 1, 2, 2), (1, 2, 2)), dict(data_format="NDHWC"), None),
    (((1, 4, 4, 6, 8), (8, 4, 1, 2, 2), (1, 2, 2)), dict(filter_format="NDHWC"), STRIDE_EQ_KERNEL),
    # Ascend 950: STRIDE_EQ_KERNEL only when strideH != strideW or strideH > 2; the 1x1x1 batch-1 shortcut
    (((1, 4, 4, 6, 8), (8, 4, 2, 2, 2), (2, 2, 2)), dict(platform=A5), None),
    (((1, 4, 4, 8, 8), (8, 4, 1, 4, 4), (1, 4, 4)), dict(platform=A5), STRIDE_EQ_KERNEL),
    (((1, 4, 4, 6, 8), (8, 4, 2, 2, 1), (2, 2, 1)), dict(platform=A5), STRIDE_EQ_KERNEL),
    (((1, 4, 4, 6, 8), (8, 4, 1, 1, 1), (1, 1, 1)), dict(platform=A5), W1B1_1X1X1),
    (((2, 4, 4, 6, 8), (8, 4, 1, 1, 1), (1, 1, 1)), dict(platform=A5), None),  # batch 2
    (((1, 4, 4, 6, 8), (8, 4, 1, 1, 1), (1, 1, 1)), dict(platform=A5, filter_format="NDHWC"), None),
    (((1, 4, 4, 6, 8), (8, 4, 1, 1, 1), (1, 1, 1)), dict(platform=A5, pads=(0, 0, 1, 0, 0, 0)), None),
    (((1, 6, 1, 1, 1), (4, 6, 1, 1, 1), (1, 1, 1)), dict(platform=A5), FM_EQ_KERNEL),  # DHW all 1: not W1B1
    (((1, 65000, 1, 32, 32), (1, 65000, 1, 1, 1), (1, 1, 1)), dict(platform=A5), W1B1_1X1X1),
    (((1, 65536, 1, 32, 32), (1, 65536, 1, 1, 1), (1, 1, 1)), dict(platform=A5), None),  # over 128 MiB of L2
])
def test_matmul_mode_follows_aclnn(args, kwargs, expected):
    assert mode_of(*args, **kwargs) == expected


# ------------------------------------------------------------------------------------------------ numerics
def torch_dx(x_shape, weight, dy, strides, hf32_bits=None):
    """float64 dx; hf32_bits: the operands first rounded to HF32 with that many mantissa bits."""
    w64, dy64 = weight.astype(np.float64), dy.astype(np.float64)
    if hf32_bits:
        w64 = round_to_hf32(weight.astype(np.float32), hf32_bits).astype(np.float64)
        dy64 = round_to_hf32(dy.astype(np.float32), hf32_bits).astype(np.float64)
    return torch.nn.grad.conv3d_input(x_shape, torch.from_numpy(w64), torch.from_numpy(dy64), stride=strides).numpy()


def assert_close(got, ref, weight, dy, rtol):
    assert got.shape == ref.shape and not np.isnan(got.astype(np.float64)).any()
    k = weight.shape[0] * int(np.prod(weight.shape[2:]))
    scale = math.sqrt(k) * np.sqrt(np.mean(weight.astype(np.float64) ** 2) * np.mean(dy.astype(np.float64) ** 2))
    err = np.abs(got.astype(np.float64) - ref)
    assert np.all(err <= rtol * np.abs(ref) + rtol * scale), f"max abs err {err.max():.3g}"


ROUTED = {  # x NCDHW, w NCDHW, strides DHW, platform, the mode aclnn takes
    "stride_eq_hw": ((2, 5, 3, 6, 9), (7, 5, 1, 3, 3), (1, 3, 3), A2, STRIDE_EQ_KERNEL),
    "stride_eq_all": ((1, 16, 4, 8, 8), (16, 16, 2, 2, 2), (2, 2, 2), A2, STRIDE_EQ_KERNEL),
    "stride_eq_d": ((2, 3, 4, 3, 5), (20, 3, 2, 1, 1), (2, 1, 1), A2, STRIDE_EQ_KERNEL),
    "fm_eq_kernel": ((3, 5, 2, 4, 6), (7, 5, 2, 4, 6), (1, 1, 1), A2, FM_EQ_KERNEL),
    "fm_eq_kernel_s2": ((2, 17, 1, 3, 3), (33, 17, 1, 3, 3), (1, 2, 2), A2, FM_EQ_KERNEL),
}


def run_case(dtype, name, route, seed=0, **kwargs):
    x, w_shape, strides, platform, mode = ROUTED[name]
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal(w_shape).astype(dtype)
    dy = rng.standard_normal(dy_shape(x, w_shape, strides)).astype(dtype)
    run = conv3d_backprop_input_v2_run(x, weight, dy, strides=(1, 1, *strides), pads=(0,) * 6,
                                       data_format="NCDHW", platform=platform, route=route, **kwargs)
    return run, weight, dy, x, strides, mode


@pytest.mark.parametrize("route", ["aclnn", "v2"])
@pytest.mark.parametrize("name", sorted(ROUTED))
@pytest.mark.parametrize("dtype", [F16, BF16, F32], ids=["fp16", "bf16", "fp32"])
def test_both_routes_match_torch(dtype, name, route):
    run, weight, dy, x, strides, mode = run_case(dtype, name, route)
    assert run.result.dtype == dtype
    assert_close(run.result, torch_dx(x, weight, dy, strides), weight, dy, RTOL[dtype])
    if route == "aclnn":
        assert (run.route, run.matmul_mode) == ("matmul", mode)
        assert isinstance(run.tiling, MatmulTiling) and run.tiling.dtype == dtype.name
        assert any(mode in note and "route='v2'" in note for note in run.notes)
        assert ("LoadData3Dv2" in run.report.counts) == (dtype == F32)  # fp32 B: Load3Dv2 into L0B
    else:
        assert (run.route, run.matmul_mode) == ("v2", None)
        assert not any(note.startswith("route:") for note in run.notes)


@pytest.mark.parametrize("name", ["stride_eq_hw", "fm_eq_kernel"])
def test_fp32_hf32_on_the_matmul_route(name):
    run, weight, dy, x, strides, _ = run_case(F32, name, "aclnn", enable_hf32=True)
    assert run.route == "matmul" and run.tiling.hf32
    bits = get_platform(ROUTED[name][3]).hf32_mantissa_bits  # 11 on A2/A3
    assert_close(run.result, torch_dx(x, weight, dy, strides, hf32_bits=bits), weight, dy, 1e-3)
    assert any("HF32" in note for note in run.notes)


def test_other_cases_keep_the_conv_kernel():
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((8, 4, 3, 3, 3)).astype(np.float16)
    dy = rng.standard_normal((1, 8, 2, 4, 4)).astype(np.float16)
    run = conv3d_backprop_input_v2_run((1, 4, 4, 6, 6), weight, dy, strides=(1, 1, 1, 1, 1), pads=(0,) * 6,
                                       data_format="NCDHW")
    assert run.route == "v2" and run.matmul_mode is None and run.tiling.conv3DDxTiling.baseM > 0
    # a kernel == stride case in NDHWC is not one aclnn's matmul paths take
    weight = rng.standard_normal((8, 4, 1, 2, 2)).astype(np.float16)
    dy = rng.standard_normal((1, 2, 3, 3, 8)).astype(np.float16)
    run = conv3d_backprop_input_v2_run((1, 2, 6, 6, 4), weight, dy, strides=(1, 1, 2, 2, 1), pads=(0,) * 6)
    assert run.route == "v2"


def test_timing_only_mode_and_trace_on_the_matmul_route(tmp_path):
    full, *_ = run_case(F16, "stride_eq_all", "aclnn", trace=tmp_path / "mm.json")
    fast, *_ = run_case(F16, "stride_eq_all", "aclnn", execute=False)
    assert fast.result is None and fast.route == "matmul"
    assert fast.cycles == full.cycles and fast.report.counts == full.report.counts
    assert full.trace_path and (tmp_path / "mm.json").stat().st_size > 0


def test_patch_embedding_runs_as_one_matmul():
    """A VideoMAE-like patch embedding: the conv kernel's zero insertion needs millions of Mmads; the matmul few."""
    x, w_shape, strides = (1, 3, 4, 64, 64), (96, 3, 2, 16, 16), (2, 16, 16)
    dy = np.zeros(dy_shape(x, w_shape, strides), np.float16)
    run = conv3d_backprop_input_v2_run(x, np.zeros(w_shape, np.float16), dy, strides=(1, 1, *strides),
                                       pads=(0,) * 6, data_format="NCDHW", execute=False, check_races=False)
    assert run.matmul_mode == STRIDE_EQ_KERNEL
    t = run.tiling  # dy^T (2*4*4 x 96) . weight (96 x 3*2*16*16)
    assert (t.batch, t.M, t.K, t.N) == (1, 32, 96, 1536)
    assert run.report.counts["Mmad"] == 2 * 12  # K 96 = 64 + 32, N 1536 = 12 tiles of 128


def test_bad_route_and_overrides_on_the_matmul_route():
    with pytest.raises(ValueError, match="route='tbe' is not supported"):
        run_case(F16, "fm_eq_kernel", "tbe")
    with pytest.raises(ValueError, match="route=None"):
        run_case(F16, "fm_eq_kernel", None)
    with pytest.raises(ValueError, match="pass route='v2'"):
        run_case(F16, "fm_eq_kernel", "aclnn", tiling_overrides={"baseM": 16})
    run, *_ = run_case(F16, "fm_eq_kernel", "v2", tiling_overrides={"al1Pbuffer": 1})
    assert run.route == "v2" and run.tiling.conv3DDxTiling.al1Pbuffer == 1


def test_the_plain_function_takes_the_route_too():
    _, weight, dy, x, strides, _ = run_case(F32, "stride_eq_d", "aclnn")
    common = dict(strides=(1, 1, *strides), pads=(0,) * 6, data_format="NCDHW")
    routed = conv3d_backprop_input_v2(x, weight, dy, **common)
    conv = conv3d_backprop_input_v2(x, weight, dy, route="v2", **common)
    assert routed.dtype == conv.dtype == F32
    assert_close(routed, conv.astype(np.float64), weight, dy, RTOL[F32])


@pytest.mark.parametrize("route", ["aclnn", "v2"])
@pytest.mark.parametrize("x,w_shape,strides,mode", [((1, 20, 3, 5, 7), (12, 20, 1, 1, 1), (1, 1, 1), W1B1_1X1X1),
                                                    ((1, 6, 2, 8, 4), (10, 6, 1, 4, 2), (1, 4, 2), STRIDE_EQ_KERNEL)])
def test_the_950_takes_aclnns_950_matmul_routes(x, w_shape, strides, mode, route):
    """route='aclnn' on the 950: aclnn's matmul shortcut on the 950 example matmul kernel (kernels/matmul/kernel/
    arch35); route='v2': the arch35 conv kernel. Never an A2 kernel (its L0A is NZ there); both give the A2 conv
    kernel's dx."""
    rng = np.random.default_rng(0)
    weight = rng.uniform(-1, 1, w_shape).astype(np.float16)
    dy = rng.uniform(-1, 1, dy_shape(x, w_shape, strides)).astype(np.float16)
    run = conv3d_backprop_input_v2_run(x, weight, dy, strides=(1, 1, *strides), pads=(0,) * 6, data_format="NCDHW",
                                       platform=A5, route=route)
    if route == "aclnn":
        assert (run.route, run.matmul_mode) == ("matmul", mode) and run.report.platform.npu_arch == 3510
    else:
        assert run.route == "v2" and type(run.tiling).__name__ == "Conv3DBackpropInputArch35TilingData"
    conv = conv3d_backprop_input_v2_run(x, weight, dy, strides=(1, 1, *strides), pads=(0,) * 6,
                                        data_format="NCDHW", route="v2")  # the A2 kernel
    assert_close(run.result, conv.result.astype(np.float64), weight, dy, RTOL[np.dtype(np.float16)])


def test_the_950_takes_no_matmul_route_for_8bit():
    """GetConv3DBp2MmMode and IsW1B1FmNDxTransToMm: no matmul for HIFLOAT8 / FLOAT8_E4M3FN on the 950."""
    x, w_shape = (1, 20, 3, 5, 7), (12, 20, 1, 1, 1)  # W1B1_1X1X1 in 16 bits
    weight = np.full(w_shape, 0.5, hifloat8)
    dy = np.full(dy_shape(x, w_shape, (1, 1, 1)), 0.25, hifloat8)
    run = conv3d_backprop_input_v2_run(x, weight, dy, strides=(1,) * 5, pads=(0,) * 6, data_format="NCDHW",
                                       platform=A5)
    assert run.route == "v2" and run.notes[0].startswith("arch35 kernel")
    assert (run.result.astype(np.float64) == 12 * 0.5 * 0.25).all()  # sum over Cout = 12 of w * dy, exact
