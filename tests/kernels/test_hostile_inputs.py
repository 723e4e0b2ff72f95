"""Issue 22's hostile inputs, for every operator: each is refused before launch with a ValueError / TypeError whose
message names the argument (and its value), or, through the aclnn API, with a CANN status; never a traceback from
inside numpy, a ZeroDivisionError, an AttributeError or a pydantic dump."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from ascend_sim import Chip
from kernels import (aclnn, conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run,
                     convolution_backward, convolution_backward_run)

RNG = np.random.default_rng(0)
X_NDHWC = RNG.standard_normal((1, 4, 6, 6, 3)).astype(np.float16)
DY_NDHWC = RNG.standard_normal((1, 3, 5, 5, 5)).astype(np.float16)
W = RNG.standard_normal((5, 3, 2, 2, 2)).astype(np.float16)
X_NCDHW = RNG.standard_normal((1, 3, 4, 6, 6)).astype(np.float16)
GO = RNG.standard_normal((1, 8, 4, 4, 4)).astype(np.float16)
X_CB = RNG.standard_normal((1, 4, 6, 6, 6)).astype(np.float16)
W_CB = RNG.standard_normal((8, 4, 3, 3, 3)).astype(np.float16)


def dw(**changes):
    args = dict(x=X_NDHWC, filter_size=(5, 3, 2, 2, 2), out_backprop=DY_NDHWC, strides=(1,) * 5, pads=(0,) * 6,
                data_format="NDHWC")
    return conv3d_backprop_filter_v2_run(**{**args, **changes})


def dx(**changes):
    args = dict(input_size=X_NDHWC.shape, filter=W, out_backprop=DY_NDHWC, strides=(1,) * 5, pads=(0,) * 6,
                data_format="NDHWC")
    return conv3d_backprop_input_v2_run(**{**args, **changes})


def forward(**changes):
    return conv3d_v2_run(**{**dict(x=X_NCDHW, filter=W, strides=(1,) * 5, pads=(0,) * 6), **changes})


def backward(**changes):
    args = dict(grad_output=GO, input=X_CB, weight=W_CB, bias_sizes=[8], stride=(1, 1, 1), padding=(0, 0, 0),
                dilation=(1, 1, 1), transposed=False, output_padding=(0, 0, 0), groups=1,
                output_mask=(True, True, True), cube_math_type=0)
    return convolution_backward(**{**args, **changes})


def backward_run(**changes):
    return convolution_backward_run(**{**dict(grad_output=GO, input=X_CB, weight=W_CB, bias_sizes=[8],
                                              stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1),
                                              transposed=False, output_padding=(0, 0, 0), groups=1,
                                              output_mask=(True, True, True), cube_math_type=0), **changes})


# (operator, changes, exception, fragments the message must hold)
HOSTILE = [
    # pads >= 0: a negative top / bottom pad used to die inside numpy.pad (dw)
    (dw, dict(pads=(0, 0, -1, 0, 0, 0)), ValueError, ["pads[2] (top)=-1", ">= 0"]),
    (dw, dict(pads=(0, 0, 0, -2, 0, 0)), ValueError, ["pads[3] (bottom)=-2", ">= 0"]),
    (dw, dict(pads=(-1, 0, 0, 0, 0, 0)), ValueError, ["pads[0] (front)=-1"]),
    (dx, dict(pads=(0, 0, -1, 0, 0, 0)), ValueError, ["pads[2] (pad_top)=-1", "[0, 255]"]),
    (forward, dict(pads=(0, 0, 0, -1, 0, 0)), ValueError, ["pad_bottom=-1", "pads[3]"]),
    (backward, dict(padding=(0, -1, 0)), ValueError, ["padding H before=-1"]),
    # strides >= 1: zero was a ZeroDivisionError, negative a "shape mismatch" (dw)
    (dw, dict(strides=(1, 0, 1, 1, 1)), ValueError, ["strides[1] (D)=0", ">= 1"]),
    (dw, dict(strides=(1, 1, -1, 1, 1)), ValueError, ["strides[2] (H)=-1", ">= 1"]),
    (dx, dict(strides=(1, 0, 1, 1, 1)), ValueError, ["strides (D)=0", "[1, 255]"]),
    (dx, dict(strides=(1, 1, -1, 1, 1)), ValueError, ["strides (H)=-1"]),
    (forward, dict(strides=(1, 1, 0, 1, 1)), ValueError, ["strides[2] (D)=0", ">= 1"]),
    (forward, dict(strides=(1, 1, 1, -1, 1)), ValueError, ["strides[3] (H)=-1", ">= 1"]),
    (backward, dict(stride=(1, 0, 1)), ValueError, ["stride[1] (H)=0"]),
    # dilations >= 1
    (dw, dict(dilations=(1, 1, 0, 1, 1)), ValueError, ["dilations[2] (H)=0", ">= 1"]),
    (dx, dict(dilations=(1, 1, 1, 0, 1)), ValueError, ["dilations (W)=0"]),
    (forward, dict(dilations=(1, 1, 0, 1, 1)), ValueError, ["dilations[2] (D)=0"]),
    (backward, dict(dilation=(0, 1, 1)), ValueError, ["dilation[0] (D)=0"]),
    # kernel and channel sizes >= 1: zero channels per group was a ZeroDivisionError, a negative kernel a mismatch
    (dw, dict(filter_size=(5, 0, 2, 2, 2)), ValueError, ["filter_size[1] (Cin/groups)=0", ">= 1"]),
    (dw, dict(filter_size=(5, 3, 2, -2, 2)), ValueError, ["filter_size[3] (kH)=-2"]),
    (dw, dict(filter_size=(0, 3, 2, 2, 2)), ValueError, ["filter_size[0] (Cout)=0"]),
    (dw, dict(filter_size=(2, 2, 3, 5, 0), filter_format="DHWCN"), ValueError, ["filter_size[4] (Cout)=0"]),
    (dx, dict(filter=W[:, :0]), ValueError, ["filter has an empty axis"]),
    (forward, dict(filter=W[:, :0]), ValueError, ["filter_shape[1] (Cin/groups)=0"]),
    (backward, dict(weight=W_CB[:, :0]), ValueError, ["weight.shape[1]=0"]),
    (dw, dict(groups=0), ValueError, ["groups=0"]),
    (forward, dict(groups=0), ValueError, ["groups=0"]),
    # tiling_overrides: a mapping of known fields to values in range, one line per broken rule
    (dw, dict(tiling_overrides=[("baseM", 16)]), TypeError, ["tiling_overrides=[('baseM', 16)]", "dict"]),
    (dx, dict(tiling_overrides=[("baseM", 16)]), TypeError, ["tiling_overrides=[('baseM', 16)]", "dict"]),
    (forward, dict(tiling_overrides="mL0=16"), TypeError, ["tiling_overrides='mL0=16'", "dict"]),
    (dw, dict(tiling_overrides={"singleCoreM": -5}), ValueError, ["singleCoreM=-5", "u32 [0, 4294967295]"]),
    (dx, dict(tiling_overrides={"baseM": -5}), ValueError, ["baseM=-5", "u32"]),
    (forward, dict(tiling_overrides={"mL0": -16}), ValueError, ["mL0=-16", "u32"]),
    (forward, dict(tiling_overrides={"mL0": -16, "nope": 1, "kL0": 2**40}), ValueError,
     ["3 problems", "- tiling field mL0=-16", "- unknown tiling field 'nope'", "- tiling field kL0=1099511627776"]),
    (dx, dict(tiling_overrides={"baseM": 16.0}), TypeError, ["baseM=16.0 must be an integer"]),
    (dw, dict(tiling_overrides={3: 1}), TypeError, ["tiling_overrides key 3", "a string"]),
    # dw's tiling argument
    (dw, dict(tiling="blob"), TypeError, ["tiling='blob'", "Conv3DBackpropFilterV2TilingData"]),
    # run options: a flag that is not a bool was taken for its truth value (execute="no" ran the data path), a trace
    # path into a missing folder failed after the whole run, trace=3 wrote a file named "3"
    (dw, dict(execute="no"), TypeError, ["execute='no' must be a bool"]),
    (dw, dict(record=0), TypeError, ["record=0 must be a bool"]),
    (dx, dict(check_races="no"), TypeError, ["check_races='no' must be a bool"]),
    (dx, dict(poison_output=None), TypeError, ["poison_output=None must be a bool"]),
    (dx, dict(execute="no", platform="Ascend950PR_9589"), TypeError, ["execute='no' must be a bool"]),
    (forward, dict(execute=1), TypeError, ["execute=1 must be a bool"]),
    (backward_run, dict(check_races="no"), TypeError, ["check_races='no' must be a bool"]),
    (backward_run, dict(trace=3.5), TypeError, ["trace=3.5 must be a path"]),
    (dw, dict(trace=3), TypeError, ["trace=3 must be a path"]),
    (dx, dict(trace="/no/such/folder/dx.json"), ValueError, ["trace='/no/such/folder/dx.json'", "does not exist"]),
    (forward, dict(trace="/no/such/folder/y.json"), ValueError, ["'/no/such/folder' does not exist"]),
]


@pytest.fixture
def no_launch(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a kernel was launched")
    monkeypatch.setattr(Chip, "launch", refuse)


@pytest.mark.parametrize("op, changes, exc, fragments", HOSTILE,
                         ids=[f"{h[0].__name__}-{'-'.join(h[1])}-{i}" for i, h in enumerate(HOSTILE)])
def test_hostile_input_is_refused_by_name(no_launch, op, changes, exc, fragments):
    with pytest.raises(exc) as info:
        op(**changes)
    assert type(info.value) in (ValueError, TypeError) or issubclass(type(info.value), (ValueError, TypeError))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    assert "pydantic" not in message and "validation error for" not in message


def _aclnn_args():
    outs = (np.zeros_like(X_CB), np.zeros_like(W_CB), np.zeros(8, np.float16))
    return dict(gradOutput=GO, input=X_CB, weight=W_CB, biasSizes=[8], stride=(1, 1, 1), padding=(0, 0, 0),
                dilation=(1, 1, 1), transposed=False, outputPadding=(0, 0, 0), groups=1,
                outputMask=(True, True, True), cubeMathType=0, gradInput=outs[0], gradWeight=outs[1],
                gradBias=outs[2])


@pytest.mark.parametrize("workspace, size, fragment", [
    ("ws", "4096", "workspaceSize='4096' must be an integer"),
    ("ws", None, "workspaceSize=None must be an integer"),
    ("ws", 3.5, "workspaceSize=3.5 must be an integer"),
    ("a string", 10**9, "workspace must be a numpy.ndarray"),
])
def test_aclnn_run_with_wrong_types_returns_a_status(no_launch, workspace, size, fragment):
    status, needed, executor = aclnn.aclnnConvolutionBackwardGetWorkspaceSize(**_aclnn_args())
    assert status == aclnn.ACLNN_SUCCESS
    buffer = np.empty(needed, np.uint8) if workspace == "ws" else workspace
    assert aclnn.aclnnConvolutionBackward(buffer, size, executor) == aclnn.ACLNN_ERR_PARAM_INVALID
    assert fragment in aclnn.aclGetRecentErrMsg()


WEIRD = ["x", 3.5, {"a": 1}, [[1, 2]], np.array(["a"]), object(), -1, 2**70, (), np.zeros((2, 2))]


@pytest.mark.parametrize("name", list(_aclnn_args()))
def test_aclnn_phase_one_never_raises(no_launch, name):
    # every argument replaced by values of the wrong type or shape: a status, never an exception
    for value in WEIRD:
        args = {**_aclnn_args(), name: value}
        status, size, executor = aclnn.aclnnConvolutionBackwardGetWorkspaceSize(**args)
        if status != aclnn.ACLNN_SUCCESS:
            assert status in (aclnn.ACLNN_ERR_PARAM_INVALID, aclnn.ACLNN_ERR_PARAM_NULLPTR)
            assert executor is None and aclnn.aclGetRecentErrMsg()


# shapes that fit both layouts: x / dy (1, 4, 4, 4, 4) and a 1x1x1 filter of 4 x 4 channels
CUBE = RNG.standard_normal((1, 4, 4, 4, 4)).astype(np.float16)
W_CUBE = RNG.standard_normal((4, 4, 1, 1, 1)).astype(np.float16)
AMBIGUOUS = {
    "dw": lambda **kw: conv3d_backprop_filter_v2_run(CUBE, (4, 4, 1, 1, 1), CUBE, strides=(1,) * 5, pads=(0,) * 6,
                                                     execute=False, **kw),
    "dx": lambda **kw: conv3d_backprop_input_v2_run(CUBE.shape, W_CUBE, CUBE, strides=(1,) * 5, pads=(0,) * 6,
                                                    execute=False, **kw),
}


@pytest.mark.parametrize("op", list(AMBIGUOUS))
def test_an_assumed_ndhwc_is_warned_when_the_shapes_also_fit_ncdhw(op):
    from kernels.common.operands import DataFormatAssumedWarning
    with pytest.warns(DataFormatAssumedWarning, match="NDHWC was assumed") as caught:
        AMBIGUOUS[op]()
    assert len([w for w in caught if w.category is DataFormatAssumedWarning]) == 1
    for given in ("NDHWC", "NCDHW"):  # given: no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error", DataFormatAssumedWarning)
            AMBIGUOUS[op](data_format=given)


@pytest.mark.parametrize("op", [dw, dx])
def test_no_warning_when_only_ndhwc_fits(op):
    from kernels.common.operands import DataFormatAssumedWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataFormatAssumedWarning)
        op(data_format=None, execute=False)
