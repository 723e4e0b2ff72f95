"""convolution_backward on an Ascend 950 (routing_arch35.py) against torch.ops.aten.convolution_backward in float64:
grad_input on the arch35 dx kernel or aclnn's 950 matmul shortcuts, grad_weight by aclnn's dw matmul shortcuts
(feature map == kernel, Is1x1DwTransToMm), grad_bias by the AIV reduction, for float16, bfloat16 and float32 (8-bit
data is refused before launch, as InterceptConvFor8bit does: test_convolution_backward_errors.py)."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import aclnn
from tests.kernels.convolution_backward.test_convolution_backward import BF16, TOL, check, error, torch_grads

P = "Ascend950PR_9589"
DTYPES = [np.float16, BF16, np.float32]
DX_ONLY = (True, False, True)  # grad_weight of these shapes needs the arch35 dw kernel (refused)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups", [
    ((2, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 1),  # 3D
    ((1, 20, 3, 8, 7), (12, 20, 3, 3, 3), (2, 2, 2), (1, 1, 1), (1, 1, 1), 1),  # stride 2, odd channels
    ((1, 32, 3, 7, 7), (32, 16, 1, 3, 3), (1, 1, 1), (0, 2, 2), (1, 2, 2), 2),  # groups (ORIGIN), dilation
    ((2, 16, 9, 9), (16, 16, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # 2D: always as 3D on the 950
], ids=["3D", "stride2", "groups-dilation", "2D"])
def test_grad_input_and_bias_on_the_arch35_kernel(dtype, x_shape, w_shape, stride, padding, dilation, groups):
    run = check(x_shape, w_shape, stride, padding, dilation, groups, dtype, DX_ONLY, platform=P)
    assert [(launch.gradient, launch.kernel) for launch in run.launches] == [
        ("grad_bias", "ReduceSum (AIV)"), ("grad_input", "Conv3DBackpropInputV2")]
    assert any(note.startswith("arch35 kernel") for note in run.launches[1].notes)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_1x1x1_batch_1_runs_every_gradient_as_a_matmul(dtype):
    run = check((1, 16, 4, 8, 8), (24, 16, 1, 1, 1), (1, 1, 1), (0, 0, 0), dtype=dtype, platform=P)
    assert [launch.kernel for launch in run.launches] == ["ReduceSum (AIV)", "MatMul (W1B1_1X1X1)", "MatMul (DW_1X1)"]
    assert all(launch.report.platform.npu_arch == 3510 for launch in run.launches)


def test_feature_map_equal_to_the_kernel_runs_both_matmuls():
    run = check((2, 16, 3, 4, 4), (8, 16, 3, 4, 4), (1, 1, 1), (0, 0, 0), dtype=np.float32, mask=(True, True, False),
                platform=P)
    assert [launch.kernel for launch in run.launches] == ["MatMul (FM_EQ_KERNEL)", "MatMul (FM_EQ_KERNEL)"]


def test_hf32_on_float32():
    run = check((1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1), dtype=np.float32, mask=DX_ONLY,
                cube_math_type=3, tol=TOL["hf32"], platform=P)
    assert run.launches[1].tiling.hf32Flag == 1


def test_1x1_dw_needs_batch_1():
    """Is1x1DwTransToMm takes batch 1 only; batch 2 would need the arch35 dw kernel."""
    with pytest.raises(ValueError, match="needs the arch35 Conv3DBackpropFilter kernel"):
        check((2, 16, 4, 8, 8), (24, 16, 1, 1, 1), (1, 1, 1), (0, 0, 0), dtype=np.float32, platform=P)


def test_aclnn_two_phase_api_on_the_950():
    """aclnn.py on the 950: phase one plans (and refuses what the 950 cannot run, as a status), phase two fills the
    outputs with what convolution_backward computes there (the 950 matmul shortcuts for a 1x1x1 batch-1 problem)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 16, 2, 4, 4)).astype(np.float32)
    w = rng.standard_normal((8, 16, 1, 1, 1)).astype(np.float32)
    go = rng.standard_normal((1, 8, 2, 4, 4)).astype(np.float32)
    outs = np.zeros_like(x), np.zeros_like(w), np.zeros(8, np.float32)
    status, size, executor = aclnn.aclnnConvolutionBackwardGetWorkspaceSize(
        go, x, w, [8], (1, 1, 1), (0, 0, 0), (1, 1, 1), False, (0, 0, 0), 1, (True, True, True), 0, *outs,
        platform=P)
    assert status == aclnn.ACLNN_SUCCESS
    assert aclnn.aclnnConvolutionBackward(np.empty(size, np.uint8), size, executor) == aclnn.ACLNN_SUCCESS
    assert [launch.kernel for launch in executor.launches] == ["ReduceSum (AIV)", "MatMul (W1B1_1X1X1)",
                                                               "MatMul (DW_1X1)"]
    refs = torch_grads(go, x, w, (1, 1, 1), (0, 0, 0), (1, 1, 1), False, (0, 0, 0), 1, (True, True, True))
    assert all(error(out, ref) <= TOL["float32"] for out, ref in zip(outs, refs))
    status, _, executor = aclnn.aclnnConvolutionBackwardGetWorkspaceSize(
        go, x, w, [8], (1, 1, 1), (0, 0, 0), (2, 1, 1), False, (0, 0, 0), 1, (True, True, True), 0, *outs,
        platform=P)  # dilation 2: no 1x1 dw shortcut, and no arch35 dw kernel
    assert (status, executor) == (aclnn.ACLNN_ERR_PARAM_INVALID, None)
    assert "outputMask[1]=True (grad_weight) on Ascend950PR_9589" in aclnn.aclGetRecentErrMsg()
