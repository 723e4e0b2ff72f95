"""Bad input to convolution_backward and to the aclnn two-phase API: refused before any launch, the message names
the parameter, its value and what is allowed; aclnn statuses are the CANN values and nothing is written."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.machine.dtypes import hifloat8
from kernels import aclnn
from kernels.convolution_backward import convolution_backward

RNG = np.random.default_rng(0)
X = RNG.standard_normal((1, 4, 6, 6, 6)).astype(np.float16)
W = RNG.standard_normal((8, 4, 3, 3, 3)).astype(np.float16)
GO = RNG.standard_normal((1, 8, 4, 4, 4)).astype(np.float16)
GOOD = dict(grad_output=GO, input=X, weight=W, bias_sizes=[8], stride=(1, 1, 1), padding=(0, 0, 0),
            dilation=(1, 1, 1), transposed=False, output_padding=(0, 0, 0), groups=1,
            output_mask=(True, True, True), cube_math_type=0)


@pytest.fixture
def no_launch(monkeypatch):
    """Fail the test if anything is launched."""
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel was launched")
    monkeypatch.setattr(Chip, "launch", refuse)


def call(**changes):
    return convolution_backward(**{**GOOD, **changes})


# (changes, exception, words the message must hold)
BAD = [
    (dict(cube_math_type=4), ValueError, ["cube_math_type=4", "0 (KEEP_DTYPE)", "3 (USE_HF32)"]),
    (dict(cube_math_type=-1), ValueError, ["cube_math_type=-1"]),
    (dict(cube_math_type=1.0), TypeError, ["cube_math_type"]),
    (dict(output_mask=(True, True)), ValueError, ["output_mask", "3"]),
    (dict(output_mask=(True, 1, True)), TypeError, ["output_mask[1]", "bool"]),
    (dict(output_padding=(0, 1, 0)), ValueError, ["output_padding=(0, 1, 0)", "transposed=False"]),
    (dict(stride=(1, 64, 1), grad_output=np.zeros((1, 8, 4, 1, 4), np.float16)), ValueError,
     ["stride[1] (H)=64", "[1, 63]"]),
    (dict(stride=(0, 1, 1)), ValueError, ["stride[0] (D)=0", "[1, 2147483646]"]),
    (dict(padding=(0, 256, 0)), ValueError, ["padding H before=256", "[0, 255]"]),
    (dict(padding=(0, -1, 0)), ValueError, ["padding H before=-1"]),
    (dict(dilation=(1, 256, 1)), ValueError, ["dilation[1] (H)=256", "[1, 255]"]),
    (dict(groups=0), ValueError, ["groups=0", "[1, 65535]"]),
    (dict(groups=70000), ValueError, ["groups=70000", "[1, 65535]"]),
    (dict(stride=(1, 1)), ValueError, ["stride", "2 values", "3"]),
    (dict(padding=(0, 0, 0, 0)), ValueError, ["padding", "4 values"]),
    (dict(bias_sizes=[7]), ValueError, ["bias_sizes=[7]", "[8]"]),
    (dict(bias_sizes=None), ValueError, ["bias_sizes=None", "output_mask[2]"]),
    (dict(grad_output=GO[:, :, :3]), ValueError, ["grad_output D=3", "4"]),
    (dict(grad_output=GO[:, :4]), ValueError, ["grad_output.shape[1]=4", "weight.shape[0]=8"]),
    (dict(groups=2), ValueError, ["input.shape[1]=4", "weight.shape[1] * groups"]),
    (dict(input=X.astype(np.float32)), TypeError, ["input.dtype=float32", "differ"]),
    (dict(input=X.astype(np.float64)), TypeError, ["input.dtype=float64", "not supported"]),
    (dict(input=X[0]), ValueError, ["same number of dimensions"]),
    (dict(weight=list(W)), TypeError, ["weight must be a numpy.ndarray"]),
    (dict(transposed=1), TypeError, ["transposed=1", "bool"]),
    (dict(weight=np.zeros((8, 4, 3, 256, 3), np.float16), input=np.zeros((1, 4, 6, 300, 6), np.float16),
          grad_output=np.zeros((1, 8, 4, 45, 4), np.float16)), ValueError, ["weight H (weight.shape[3])=256",
                                                                           "[1, 255]"]),
]


@pytest.mark.parametrize("changes,error,words", BAD)
def test_bad_arguments_are_refused_before_launch(no_launch, changes, error, words):
    with pytest.raises(error) as caught:
        call(**changes)
    for word in words:
        assert word in str(caught.value)


def test_transposed_output_padding_must_be_below_stride(no_launch):
    x = np.zeros((1, 8, 4, 4, 4), np.float16)
    go = np.zeros((1, 4, 9, 9, 9), np.float16)
    w = np.zeros((8, 4, 3, 3, 3), np.float16)
    with pytest.raises(ValueError, match=r"output_padding\[0\]=2 .*\[0, 1\].*stride\[0\]=2"):
        convolution_backward(go, x, w, [4], (2, 2, 2), (1, 1, 1), (1, 1, 1), True, (2, 0, 0), 1,
                             (False, True, False))


def test_grouped_float32_dw_with_use_fp16_is_refused_on_a2(no_launch):
    x = np.zeros((1, 4, 4, 4, 4), np.float32)
    w = np.zeros((4, 2, 1, 1, 1), np.float32)
    go = np.zeros((1, 4, 4, 4, 4), np.float32)
    with pytest.raises(ValueError, match="cube_math_type=2.*CheckSupportedForConv3dBackpropFilter"):
        convolution_backward(go, x, w, [4], (1, 1, 1), (0, 0, 0), (1, 1, 1), False, (0, 0, 0), 2,
                             (False, True, False), 2)


def test_dw_is_checked_on_the_x_it_launches(no_launch):
    # padding 3 >= the kernel's 3 rows: dw writes those rows into x (1 -> 7 rows), whose smallest B1 load (3 rows
    # of W=6000) no longer fits L1; the plan must see that before grad_bias runs (dx refuses W > 4096 itself)
    x = np.zeros((1, 16, 1, 6000), np.float16)
    w = np.zeros((16, 16, 3, 3), np.float16)
    go = np.zeros((1, 16, 5, 6000), np.float16)
    with pytest.raises(ValueError, match=r"x_shape\[4\] \(W\)=6000 is too wide for L1.*3 x rows"):
        convolution_backward(go, x, w, [16], (1, 1), (3, 1), (1, 1), False, (0, 0), 1, (False, True, True))


def test_the_guard_sees_a_launch(no_launch):
    with pytest.raises(AssertionError, match="launched"):
        call()


ON_950 = [  # what the Ascend 950 refuses before any launch: (changes, exception, words)
    # InterceptConvFor8bit: no 8-bit data unless transposed, whose grad_input (arch35 Conv3DV2) is not ported
    (dict(grad_output=GO.astype(hifloat8), input=X.astype(hifloat8), weight=W.astype(hifloat8)), TypeError,
     "grad_output.dtype=hifloat8 is not supported; allowed: ['bfloat16', 'float16', 'float32']"),
    (dict(), ValueError, "output_mask[1]=True (grad_weight) on Ascend950PR_9599: this problem needs the arch35 "
                         "Conv3DBackpropFilter kernel, which is not ported"),
    (dict(transposed=True, grad_output=X, input=GO, bias_sizes=[4], output_mask=(True, False, False)), ValueError,
     "transposed=True with output_mask=(True, False, False) on Ascend950PR_9599: grad_input needs the arch35 "
     "Conv3DV2"),
    (dict(grad_output=GO[:, :, 0, 0], input=X[:, :, 0, 0], weight=W[:, :, 0, 0], stride=(1,), padding=(0,),
          dilation=(1,), output_padding=(0,)), ValueError, "the 950's 1D flow (SupportConv1DBp2Matmul"),
]


@pytest.mark.parametrize("changes, exception, words", ON_950, ids=["8-bit", "grad_weight", "transposed", "1D"])
def test_the_950_refuses_what_it_cannot_run_by_name(no_launch, changes, exception, words):
    with pytest.raises(exception) as err:
        convolution_backward(**{**GOOD, **changes}, platform="Ascend950PR_9599")
    assert words in str(err.value)


# ---------------------------------------------------------------------------------------------- aclnn
def outputs():
    return np.full_like(X, 7), np.full_like(W, 7), np.full(8, 7, np.float16)


def phase_one(**changes):
    args = {**GOOD, **changes}
    gi, gw, gb = changes.get("outs", outputs())
    return aclnn.aclnnConvolutionBackwardGetWorkspaceSize(
        args["grad_output"], args["input"], args["weight"], args["bias_sizes"], args["stride"], args["padding"],
        args["dilation"], args["transposed"], args["output_padding"], args["groups"], args["output_mask"],
        args["cube_math_type"], gi, gw, gb)


def test_aclnn_status_values_are_the_cann_ones():
    assert (aclnn.ACLNN_SUCCESS, aclnn.ACLNN_ERR_PARAM_NULLPTR, aclnn.ACLNN_ERR_PARAM_INVALID,
            aclnn.ACLNN_ERR_RUNTIME_ERROR, aclnn.ACLNN_ERR_INNER) == (0, 161001, 161002, 361001, 561000)


@pytest.mark.parametrize("changes,status,words", [
    (dict(grad_output=None), 161001, "gradOutput"),
    (dict(stride=None), 161001, "stride"),
    (dict(output_mask=None), 161001, "outputMask"),
    (dict(output_mask=(True, True)), 161001, "outputMask has 2 values"),
    (dict(bias_sizes=None), 161001, "biasSizes"),
    (dict(cube_math_type=5), 161002, "cubeMathType=5"),
    (dict(output_padding=(0, 1, 0)), 161002, "outputPadding=(0, 1, 0)"),
    (dict(groups=0), 161002, "groups=0"),
    (dict(dilation=(1, 1, 300)), 161002, "dilation[2] (W)=300"),
    (dict(outs=(np.zeros((1, 4, 6, 6, 5), np.float16), *outputs()[1:])), 161002, "gradInput.shape"),
    (dict(outs=(outputs()[0], W.astype(np.float32), outputs()[2])), 161002, "gradWeight.dtype=float32"),
])
def test_aclnn_parameter_errors(no_launch, changes, status, words):
    outs = changes.get("outs", outputs())
    before = [o.copy() for o in outs]
    result = phase_one(**{**changes, "outs": outs})
    assert result[0] == status and result[1:] == (0, None)
    assert words in aclnn.aclGetRecentErrMsg() and str(status) in aclnn.aclGetRecentErrMsg()
    assert all(np.array_equal(o, b) for o, b in zip(outs, before))  # nothing written


def test_aclnn_null_output_asked_for_by_the_mask(no_launch):
    gi, gw, gb = outputs()
    status, _, _ = aclnn.aclnnConvolutionBackwardGetWorkspaceSize(GO, X, W, [8], (1, 1, 1), (0, 0, 0), (1, 1, 1), False,
                                                                  (0, 0, 0), 1, (True, True, True), 0, gi, None, gb)
    assert status == 161001 and "gradWeight" in aclnn.aclGetRecentErrMsg()


def test_aclnn_two_phases_fill_the_outputs_in_place():
    gi, gw, gb = outs = outputs()
    status, size, executor = phase_one(outs=outs, output_mask=(True, False, True))
    assert status == aclnn.ACLNN_SUCCESS and size > 0 and executor.launches == []
    assert (gi == 7).all()  # phase one runs nothing
    assert aclnn.aclnnConvolutionBackward(np.empty(size, np.uint8), size, executor, None) == aclnn.ACLNN_SUCCESS
    expect = convolution_backward(**{**GOOD, "output_mask": (True, False, True)})
    assert np.array_equal(gi, expect[0]) and np.array_equal(gb, expect[2])
    assert (gw == 7).all()  # not asked for: untouched
    assert [launch.kernel for launch in executor.launches] == ["ReduceSum (AIV)", "Conv3DBackpropInputV2"]
    assert all(launch.report.cycles > 0 and launch.tiling is not None for launch in executor.launches)
    # an executor runs once
    assert aclnn.aclnnConvolutionBackward(np.empty(size, np.uint8), size, executor, None) == 161002


def test_aclnn_phase_two_errors(no_launch):
    status, size, executor = phase_one()
    assert status == 0
    assert aclnn.aclnnConvolutionBackward(None, size, None, None) == 161001
    assert aclnn.aclnnConvolutionBackward(np.empty(size, np.uint8), size - 1, executor, None) == 161002
    assert "smaller" in aclnn.aclGetRecentErrMsg()
    assert aclnn.aclnnConvolutionBackward(None, size, executor, None) == 161001


def test_aclnn_phase_two_refused_by_the_size_guard_is_a_status(no_launch, monkeypatch):
    """A run the simulator's memory cannot hold is ACLNN_ERR_RUNTIME_ERROR with the guard's message, not an
    exception, and nothing is launched (no_launch)."""
    status, size, executor = phase_one()
    assert status == 0
    monkeypatch.setattr("kernels.common.size_guard.available_memory", lambda: 1 << 10)
    assert aclnn.aclnnConvolutionBackward(np.empty(size, np.uint8), size, executor, None) == 361001
    assert "size guard" in aclnn.aclGetRecentErrMsg() and "memory" in aclnn.aclGetRecentErrMsg()
