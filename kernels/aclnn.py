"""The aclnn two-phase API of ConvolutionBackward, on the simulator.

    status, workspace_size, executor = aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight,
        biasSizes, stride, padding, dilation, transposed, outputPadding, groups, outputMask, cubeMathType,
        gradInput, gradWeight, gradBias)
    workspace = np.empty(workspace_size, np.uint8)
    status = aclnnConvolutionBackward(workspace, workspace_size, executor, stream=None)

The first phase checks everything (nothing runs); the second launches the kernels and writes the preallocated
numpy arrays gradInput / gradWeight / gradBias in place (None where outputMask is False). A failed call writes
nothing and returns a status; aclGetRecentErrMsg() gives its message. The status values are those of the CANN
aclnn return-code table (hicann/ops-nn docs/zh/context/aclnn_return_code.md). The executor keeps what the run
did: executor.launches (each kernel, its tiling, its report with the trace).

Modelling choices: the stream is accepted and ignored (the call is synchronous); workspaceSize is our own
estimate of the device copies aclnn's flow makes (the cube-dtype copies of the inputs with channels padded to
C0, grad_input in the cube dtype and the float32 grad_weight), since the real size comes from closed executor
code; an executor runs once (a second run is ACLNN_ERR_PARAM_INVALID).
"""
from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field

import numpy as np

from ascend_sim import SimFault
from ascend_sim.machine.dtypes import DTYPES
from kernels.common.run import Run
from kernels.common.size_guard import MemoryLimitError
from kernels.convolution_backward.operator import plan_convolution_backward, run_plan

ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_RUNTIME_ERROR = 361001
ACLNN_ERR_INNER = 561000

_recent_error = {"message": ""}


def aclGetRecentErrMsg() -> str:
    """The message of the most recent failed call ("" when none has failed)."""
    return _recent_error["message"]


def _fail(status: int, message: str) -> int:
    _recent_error["message"] = f"{_STATUS_NAMES[status]} ({status}): {message}"
    return status


_STATUS_NAMES = {ACLNN_ERR_PARAM_NULLPTR: "ACLNN_ERR_PARAM_NULLPTR", ACLNN_ERR_PARAM_INVALID: "ACLNN_ERR_PARAM_INVALID",
                 ACLNN_ERR_RUNTIME_ERROR: "ACLNN_ERR_RUNTIME_ERROR", ACLNN_ERR_INNER: "ACLNN_ERR_INNER"}


# convolution_backward's argument names as this API spells them, for its messages
_CAMEL = {"grad_output": "gradOutput", "bias_sizes": "biasSizes", "output_padding": "outputPadding",
          "output_mask": "outputMask", "cube_math_type": "cubeMathType"}
_API_NAMES = re.compile(r"\b(" + "|".join(_CAMEL) + r")\b")


@dataclass(eq=False)
class aclOpExecutor:
    """What phase one prepared, and after phase two what ran (launches: one Run per kernel)."""

    plan: object
    inputs: tuple
    outputs: tuple
    workspace_size: int
    launches: list[Run] = field(default_factory=list)
    done: bool = False


def _padded(size: int, unit: int) -> int:
    return -(-size // unit) * unit


def _workspace_bytes(plan) -> int:
    a, r = plan.args, plan.route
    itemsize = DTYPES[r.math.dtype].itemsize
    c0 = 32 // itemsize
    v = r.view

    def fmap(shape):  # NDC1HWC0
        n, c, *dhw = shape
        return n * _padded(c, c0) * int(np.prod(dhw)) * itemsize
    cout, cin_g, *k = v.weight_shape
    weight = _padded(cout, 16) * _padded(cin_g, c0) * int(np.prod(k)) * itemsize  # FRACTAL_Z_3D
    total = fmap(v.grad_output_shape) + fmap(v.input_shape) + weight
    if a.output_mask[0]:
        total += fmap(v.input_shape)
    if a.output_mask[1]:
        total += weight // itemsize * 4
    return total


def _check_outputs(plan, gradInput, gradWeight, gradBias) -> str | None:
    """The output arrays' shapes and dtypes (CheckConvShape and the dtype rules of the API page)."""
    a = plan.args
    expect = ((gradInput, "gradInput", a.input_shape, a.dtype), (gradWeight, "gradWeight", a.weight_shape, a.dtype),
              (gradBias, "gradBias", (a.grad_output_shape[1],), a.dtype))
    for mask, (array, name, shape, dtype) in zip(a.output_mask, expect):
        if not mask:
            continue
        if not isinstance(array, np.ndarray):
            return f"{name} must be a numpy.ndarray, got {type(array).__name__}"
        if array.shape != tuple(shape):
            return f"{name}.shape={array.shape} must be {tuple(shape)}"
        if array.dtype != DTYPES[dtype]:
            return f"{name}.dtype={array.dtype} must be {dtype}"
        if not array.flags.writeable:
            return f"{name} is read-only"
    return None


def aclnnConvolutionBackwardGetWorkspaceSize(gradOutput, input, weight, biasSizes, stride, padding, dilation,
                                             transposed, outputPadding, groups, outputMask, cubeMathType, gradInput,
                                             gradWeight, gradBias, *, platform="Ascend910B2"):
    """Phase one: (status, workspaceSize, executor); executor is None unless status is ACLNN_SUCCESS."""
    required = {"gradOutput": gradOutput, "input": input, "weight": weight, "stride": stride, "padding": padding,
                "dilation": dilation, "outputPadding": outputPadding, "outputMask": outputMask}
    for name, value in required.items():
        if value is None:
            return _fail(ACLNN_ERR_PARAM_NULLPTR, f"{name} is a null pointer (None)"), 0, None
    try:
        mask = [bool(m) for m in outputMask]
    except (TypeError, ValueError):  # not iterable, or entries with no single truth value (arrays)
        return _fail(ACLNN_ERR_PARAM_INVALID, f"outputMask={outputMask!r} must be a sequence of 3 bools"), 0, None
    if len(mask) != 3:  # CheckNotNull checks the length, so this is a NULLPTR status on the real stack too
        return _fail(ACLNN_ERR_PARAM_NULLPTR, f"outputMask has {len(mask)} values; it must have 3"), 0, None
    asked = ("gradInput", gradInput), ("gradWeight", gradWeight), ("gradBias", gradBias)
    for wanted, (name, value) in zip(mask, asked):
        if wanted and value is None:
            return _fail(ACLNN_ERR_PARAM_NULLPTR, f"{name} is a null pointer (None) while outputMask asks for it"), \
                0, None
    if mask[2] and biasSizes is None:
        return _fail(ACLNN_ERR_PARAM_NULLPTR, "biasSizes is a null pointer (None) while outputMask[2] is True"), 0, \
            None
    try:
        plan = plan_convolution_backward(gradOutput, input, weight, biasSizes, stride, padding, dilation, transposed,
                                         outputPadding, groups, outputMask, cubeMathType, platform=platform)
    except (ValueError, TypeError) as err:
        return _fail(ACLNN_ERR_PARAM_INVALID, _API_NAMES.sub(lambda m: _CAMEL[m.group(0)], str(err))), 0, None
    problem = _check_outputs(plan, gradInput, gradWeight, gradBias)
    if problem:
        return _fail(ACLNN_ERR_PARAM_INVALID, problem), 0, None
    size = _workspace_bytes(plan)
    executor = aclOpExecutor(plan, (gradOutput, input, weight), (gradInput, gradWeight, gradBias), size)
    return ACLNN_SUCCESS, size, executor


def aclnnConvolutionBackward(workspace, workspaceSize, executor, stream=None) -> int:
    """Phase two: run the executor's kernels and fill its output arrays; the status."""
    if executor is None:
        return _fail(ACLNN_ERR_PARAM_NULLPTR, "executor is a null pointer (None)")
    if not isinstance(executor, aclOpExecutor):
        return _fail(ACLNN_ERR_PARAM_INVALID, f"executor must come from aclnnConvolutionBackwardGetWorkspaceSize, "
                                              f"got {type(executor).__name__}")
    if isinstance(workspaceSize, (bool, np.bool_)) or not isinstance(workspaceSize, numbers.Integral):
        return _fail(ACLNN_ERR_PARAM_INVALID, f"workspaceSize={workspaceSize!r} must be an integer (uint64_t), got "
                                              f"{type(workspaceSize).__name__}")
    if workspace is not None and not isinstance(workspace, np.ndarray):
        return _fail(ACLNN_ERR_PARAM_INVALID, f"workspace must be a numpy.ndarray (the device buffer) or None, got "
                                              f"{type(workspace).__name__}")
    if executor.done:
        return _fail(ACLNN_ERR_PARAM_INVALID, "this executor has already run; call "
                                              "aclnnConvolutionBackwardGetWorkspaceSize again")
    if workspaceSize < executor.workspace_size:
        return _fail(ACLNN_ERR_PARAM_INVALID, f"workspaceSize={workspaceSize} is smaller than the "
                                              f"{executor.workspace_size} bytes phase one asked for")
    if executor.workspace_size and workspace is None:
        return _fail(ACLNN_ERR_PARAM_NULLPTR, f"workspace is a null pointer (None); {workspaceSize} bytes expected")
    try:
        run = run_plan(executor.plan, *executor.inputs)
    except SimFault as fault:
        return _fail(ACLNN_ERR_RUNTIME_ERROR, f"simulated kernel fault: {fault}")
    except MemoryLimitError as err:  # the simulator's limit, not the device's: nothing was launched
        return _fail(ACLNN_ERR_RUNTIME_ERROR, f"refused by the simulator's size guard: {err}")
    executor.done = True
    executor.launches = run.launches
    for out, result in zip(executor.outputs, (run.grad_input, run.grad_weight, run.grad_bias)):
        if result is not None:
            out[...] = result
    return ACLNN_SUCCESS
