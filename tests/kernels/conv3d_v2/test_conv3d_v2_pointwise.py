"""The Conv3DV2 pointwise path (KernelConv3DV2PointWise on NCDHW data) and aclnn's routing to it, against
torch.nn.functional.conv3d in float64 (the oracle and tolerance of test_conv3d_v2.py)."""
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kernels import conv3d_v2_run
from kernels.conv3d_v2.routing import need_point_wise_kernel, point_wise_kernel_beyond_limits
from tests.kernels.conv3d_v2.test_conv3d_v2 import _check, _operands
from tiling import TilingValidationError

BF16 = np.dtype(ml_dtypes.bfloat16)
POINT = dict(strides=(1,) * 5, pads=(0,) * 6)


def _kernel(run) -> str:
    return next(n for n in run.notes if n.startswith("kernel: ")).split()[1]


CASES = {  # x shape, cout, dtype, bias
    "fp16 bias, Cin/Cout not multiples of 16, batch 2, DHW 105": ((2, 20, 3, 5, 7), 33, np.float16, True),
    "bf16 no bias": ((2, 20, 3, 5, 7), 33, BF16, False),
    "fp32 bias (LoadDataWithTranspose)": ((2, 20, 3, 5, 7), 33, np.float32, True),
    "fp16 several K steps and M blocks": ((1, 150, 2, 17, 19), 50, np.float16, True),
    "fp32 several K steps, K tail of 6": ((1, 70, 3, 9, 11), 40, np.float32, False),
    "bf16 one channel each": ((1, 1, 2, 3, 3), 1, BF16, True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_pointwise_matches_torch(case):
    x_shape, cout, dtype, bias = CASES[case]
    x, w, b = _operands(x_shape, (cout, x_shape[1], 1, 1, 1), dtype, bias)
    run = conv3d_v2_run(x, w, b, **POINT)
    assert _kernel(run) == "KernelConv3DV2PointWise" and run.tiling.pointwise
    assert run.result.dtype == x.dtype
    _check(run.result, x, w, b, (1, 1, 1), (0,) * 6)


def test_pointwise_hf32():
    """The pointwise kernel sets HF32 from the tiling as the other kernels do; the bias goes through a float32 Mmad
    there (MadBias), so it is rounded to HF32 too: the tolerance adds half an HF32 ulp of |bias|."""
    x, w, b = _operands((2, 20, 3, 5, 7), (9, 20, 1, 1, 1), np.float32)
    run = conv3d_v2_run(x, w, b, enable_hf32=True, **POINT)
    y = F.conv3d(torch.tensor(x.astype(np.float64)), torch.tensor(w.astype(np.float64))).numpy()
    mag = F.conv3d(torch.tensor(np.abs(x).astype(np.float64)), torch.tensor(np.abs(w).astype(np.float64))).numpy()
    b64 = b.astype(np.float64).reshape(1, -1, 1, 1, 1)
    tol = 2.0 ** -24 * np.abs(y + b64) + (20 + 3) * 2.0 ** -24 * (mag + np.abs(b64)) + 2.0 ** -10 * (mag + np.abs(b64))
    err = np.abs(run.result.astype(np.float64) - (y + b64))
    assert (err <= tol).all(), err.max()
    plain = conv3d_v2_run(x, w, b, **POINT)
    assert not np.array_equal(run.result, plain.result)  # the operands really were rounded


@pytest.mark.parametrize("overrides", [{"biasFullLoadFlag": 0, "nDim": 1}, {"iterateMNOrder": 1, "nDim": 1},
                                       {"pBufferFlag": 4 | 2, "nDim": 1}, {"pBufferFlag": 4 | 3, "nDim": 1},
                                       {"pBufferFlag": 4 | 1, "nDim": 1}, {"pBufferFlag": 0, "nDim": 1}],
                         ids=["bias per block", "N first", "key 2", "key 3", "key 1 (one K step)", "no L0C db"])
def test_pointwise_tiling_variants_give_the_same_bytes(overrides):
    x, w, b = _operands((1, 40, 2, 6, 7), (40, 40, 1, 1, 1), np.float16)
    base = conv3d_v2_run(x, w, b, **POINT)
    run = conv3d_v2_run(x, w, b, tiling_overrides=overrides, **POINT)
    assert (base.tiling.convRunInfo.nDim, base.tiling.convApiTiling.nL0) == (3, 16)  # one core walks 3 nL0 blocks
    assert _kernel(run) == "KernelConv3DV2PointWise"
    assert run.result.tobytes() == base.result.tobytes()
    _check(run.result, x, w, b, (1, 1, 1), (0,) * 6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("pbuffer", [4 | 8, 4 | 8 | 16], ids=["AL1 preload", "AL1 and BL1 preload"])
def test_pointwise_l1_preload(dtype, pbuffer):
    """Two same-size AL1 / BL1 blocks of K with AL1 (and BL1) double buffers: the API's ReduceKPreloadDbInput /
    ReduceKPreloadDbAll run the pointwise tools."""
    x, w, b = _operands((1, 64, 2, 6, 7), (40, 64, 1, 1, 1), dtype)
    k0 = 32 // np.dtype(dtype).itemsize
    run = conv3d_v2_run(x, w, b, tiling_overrides={"kAL1": 32, "kAL1Tail": 32, "kBL1": 32, "kBL1Tail": 32, "kL0": 16,
                                                   "cin1InAL1": 32 // k0, "pBufferFlag": pbuffer}, **POINT)
    assert _kernel(run) == "KernelConv3DV2PointWise"
    _check(run.result, x, w, b, (1, 1, 1), (0,) * 6)


def test_key_1_with_several_k_steps_is_refused_on_the_pointwise_path_too():
    x, w, b = _operands((1, 100, 2, 6, 7), (40, 100, 1, 1, 1), np.float16)
    with pytest.raises(TilingValidationError, match="L0A ping-pong alone with several K steps"):
        conv3d_v2_run(x, w, b, tiling_overrides={"pBufferFlag": 4 | 1, "kL0": 32, "nDim": 1}, **POINT)


def test_weight_bypass_key_is_refused_for_ncdhw_data():
    x, w, b = _operands((1, 16, 2, 4, 4), (16, 16, 1, 1, 1), np.float16)
    with pytest.raises(ValueError, match="KernelConv3DV2PointWise only with the weight through L1"):
        conv3d_v2_run(x, w, b, tiling_overrides={"bl1BypassFlag": 1}, **POINT)


@pytest.mark.parametrize("hw,kernel", [((255, 257), "KernelConv3DV2"), ((254, 258), "KernelConv3DV2PointWise")],
                         ids=["DHW 65535: normal kernel", "DHW 65532: pointwise"])
def test_the_65535_limit(hw, kernel):
    x, w, b = _operands((1, 2, 1, *hw), (3, 2, 1, 1, 1), np.float16)
    run = conv3d_v2_run(x, w, b, **POINT)
    assert _kernel(run) == kernel
    _check(run.result, x, w, b, (1, 1, 1), (0,) * 6)


def test_ndhwc_data_keeps_the_ndc1hwc0_path():
    x, w, b = _operands((1, 3, 4, 7, 9), (200, 3, 1, 1, 1), np.float16)
    run = conv3d_v2_run(np.ascontiguousarray(x.transpose(0, 2, 3, 4, 1)), w, b, data_format="NDHWC", **POINT)
    assert _kernel(run) == "KernelConv3DV2" and not run.tiling.pointwise
    assert run.tiling.tiling_key == 2  # L0B ping-pong, weight through L1
    _check(run.result.transpose(0, 4, 1, 2, 3), x, w, b, (1, 1, 1), (0,) * 6)


@pytest.mark.parametrize("kw", [dict(strides=(1, 1, 1, 1, 2), pads=(0,) * 6),
                                dict(strides=(1,) * 5, pads=(0, 0, 0, 0, 1, 0)),
                                dict(strides=(1,) * 5, pads=(0,) * 6, dilations=(1, 1, 2, 1, 1)),
                                dict(strides=(1,) * 5, pads=(0,) * 6, groups=2)],
                         ids=["stride", "pad", "dilation", "groups"])
def test_non_pointwise_attributes_take_the_normal_kernel(kw):
    w_shape = (8, 4 if kw.get("groups") else 8, 1, 1, 1)
    x, w, b = _operands((1, 8, 3, 5, 6), w_shape, np.float16)
    run = conv3d_v2_run(x, w, b, **kw)
    assert _kernel(run) in ("KernelConv3DV2", "KernelConv3DV2WithGroups")


def test_routing_rules():
    assert need_point_wise_kernel((8, 4, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), 1)
    assert not need_point_wise_kernel((8, 4, 1, 1, 2), (1, 1, 1), (0,) * 6, (1, 1, 1), 1)
    assert not need_point_wise_kernel((8, 4, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), 2)
    assert not need_point_wise_kernel((8, 4, 1, 1, 1), (2, 1, 1), (0,) * 6, (1, 1, 1), 1)
    assert not need_point_wise_kernel((8, 4, 1, 1, 1), (1, 1, 1), (0, 0, 0, 0, 0, 1), (1, 1, 1), 1)
    assert not need_point_wise_kernel((8, 4, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 3), 1)
    assert point_wise_kernel_beyond_limits((1, 1, 1, 255, 257))
    assert not point_wise_kernel_beyond_limits((1, 1, 1, 1, 65534))


def test_timing_only():
    x, w, b = _operands((2, 20, 3, 5, 7), (33, 20, 1, 1, 1), np.float16)
    full = conv3d_v2_run(x, w, b, **POINT)
    timing = conv3d_v2_run(x, w, b, execute=False, **POINT)
    assert timing.result is None and timing.cycles == full.cycles > 0


def test_debug_conv3d_on_the_pointwise_kernel(monkeypatch, capsys):
    """`ascend-sim debug conv3d` with a 1x1x1 problem: x, filter and y are the NCDHW tensors in GM, the bias
    float32; the check passes and an element of y traces back to x and the filter through the Mmads."""
    import io
    import sys

    from frontends.cli.app import main

    script = "continue\ncheck\nprint bias[3]\nwho-wrote y[0,2,1,3,4]\nquit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert main(["debug", "conv3d", "--cin", "20", "--cout", "7", "--dhw", "3,5,7", "--kernel", "1,1,1",
                 "--pad", "0,0,0,0,0,0", "--bias"]) == 0
    out = capsys.readouterr().out
    assert "check y at the end of the run: PASSED" in out
    assert "from filter:" in out and "from x:" in out and "Mmad" in out and "Fixpipe" in out
