"""aclnn's matmul shortcuts for dx: the cases aclnnConvolutionBackward computes with a (Batch)MatMul, not a conv kernel.

Source: hicann/ops-nn `conv/convolution_backward/op_api/aclnn_convolution_backward.cpp` (read at e5c3fa9327ea),
`CalculateConv3DBackwardByMatmulImpl`, which runs before any conv kernel is chosen:

1. `IsW1B1FmNDxTransToMm` (checked first): **Ascend 950 (regbase) only**. gradOutput, input and weight all stored
   NCDHW; groups 1; every pad 0; every dilation 1; every stride 1; kernel 1x1x1; batch 1; D, H, W of x not all 1;
   (Cout*Cin + Cin*DHW + DHW*Cout) * dtype bytes <= 128 MiB (`IsGreaterL2Cache`).
   dx (Cin, DHW) = weight^T (Cin x Cout) . dy (Cout x DHW), one MatMul (`CalculateW1B1FmNDxByMm`).
2. `GetConv3DBp2MmMode`, after `IsConvBpSupportMatmulMode`: input (x) stored NCDHW; every pad 0; no output
   padding; every dilation 1; not transposed; groups 1. Then, over D, H, W:
   - FEATURE_MAP_EQ_KERNEL: kernel == x size and dy size == 1 on every axis (any arch);
   - STRIDE_EQ_KERNEL: kernel == stride, x size % kernel == 0 and x size / kernel == dy size on every axis, and
     on A2/A3 some stride > 1; on Ascend 950 instead `strideH != strideW or strideH > 2` (the kernel-split conv
     is faster for 1x1 and 2x2).
   `GenDxInOutByConvBp2MmMode` / `DoPostMatmulForConv3dBpInput` give the BatchMatMul operands:
   - STRIDE_EQ_KERNEL: left = dy viewed (N, Cout, DoHoWo) with isLeftTranspose, right = weight viewed
     (1, Cout, Cin*kD*kH*kW): out (N, DoHoWo, Cin*kD*kH*kW), then viewed (N, Do, Ho, Wo, Cin, kD, kH, kW) and
     permuted (0, 4, 1, 5, 2, 6, 3, 7) to (N, Cin, Do, kD, Ho, kH, Wo, kW) = dx.
   - FEATURE_MAP_EQ_KERNEL: left = dy viewed (N, 1, Cout), right = weight viewed (1, Cout, Cin*D*H*W):
     out (N, 1, Cin*D*H*W) = dx.

Choices where the source depends on what is not modelled here:
- "stored NCDHW" is our data_format == "NCDHW" (and, for the 950 rule, filter_format == "NCDHW" too); an NDHWC
  call is not what aclnn's matmul paths accept, so it runs the conv kernel.
- dilations are the user's values: aclnn checks its dilation attribute even on kernel-1 axes, where it does not
  change the result.
- transposes: our matmul kernel reads A as ND (M x K) only, so STRIDE_EQ_KERNEL's left transpose and the 950
  weight^T are done on the host (the product is the same); FEATURE_MAP_EQ_KERNEL's batch of 1-row matrices
  that share one right matrix is computed as one (N x Cout) matmul (an exact reshape).
- BatchMatMul's own shortcuts (K = Cout = 1 becomes a vector Mul, `ProcessEqual1Cases`) are not modelled: the
  cube matmul computes the same products. fp32 with enable_hf32 runs the matmul in HF32 (aclnn's
  ALLOW_FP32_DOWN_PRECISION / USE_HF32 sets enableHf32 for BatchMatMulV3).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from kernels.common.operands import stand_in
from kernels.common.run import Run

STRIDE_EQ_KERNEL = "STRIDE_EQ_KERNEL"
FM_EQ_KERNEL = "FM_EQ_KERNEL"
W1B1_1X1X1 = "W1B1_1X1X1"
L2_CACHE_BYTES = 128 * 1024 * 1024  # IsGreaterL2Cache
_DESCRIPTION = {
    STRIDE_EQ_KERNEL: "kernel == stride and x exactly tiled (GetConv3DBp2MmMode, CONV3D_BP_MM_STRIDE_EQ_KERNEL)",
    FM_EQ_KERNEL: "feature map == kernel (GetConv3DBp2MmMode, CONV3D_BP_MM_FEATURE_MAP_EQ_KERNEL)",
    W1B1_1X1X1: "1x1x1 kernel, batch 1, stride 1 on Ascend 950 (IsW1B1FmNDxTransToMm)",
}


def aclnn_matmul_mode(p, data_format: str, filter_format: str, dilations_given: tuple[int, int, int]) -> str | None:
    """Which matmul shortcut aclnn takes for this checked problem (arguments.Problem, NCDHW), or None (conv kernel)."""
    regbase = p.platform.npu_arch == 3510
    if regbase and _is_w1b1_fm_nd_dx(p, data_format, filter_format, dilations_given):
        return W1B1_1X1X1
    supported = (data_format == "NCDHW" and not any(p.pads) and all(d == 1 for d in dilations_given)
                 and p.groups == 1)
    if not supported:
        return None
    x, dy, kernel = p.dx_shape[2:], p.dy_shape[2:], p.filter_shape[2:]
    if all(k == size and o == 1 for k, size, o in zip(kernel, x, dy)):
        return FM_EQ_KERNEL
    stride_eq_kernel = all(k == s and size % k == 0 and size // k == o
                           for k, s, size, o in zip(kernel, p.strides, x, dy))
    _, s_h, s_w = p.strides
    wanted = (s_h != s_w or s_h > 2) if regbase else any(s > 1 for s in p.strides)
    return STRIDE_EQ_KERNEL if stride_eq_kernel and wanted else None


def _is_w1b1_fm_nd_dx(p, data_format, filter_format, dilations_given) -> bool:
    n, cin, *x = p.dx_shape
    cout = p.filter_shape[0]
    if data_format != "NCDHW" or filter_format != "NCDHW" or p.groups != 1 or any(p.pads):
        return False
    if any(d != 1 for d in dilations_given) or any(s != 1 for s in p.strides) or p.filter_shape[2:] != (1, 1, 1):
        return False
    if n != 1 or x == [1, 1, 1]:
        return False
    dhw = int(np.prod(x))
    return (cout * cin + cin * dhw + dhw * cout) * DTYPES[p.dtype].itemsize <= L2_CACHE_BYTES


def matmul_gemm(p, mode: str) -> tuple[int, int, int, int]:
    """(batch, M, N, K) of the GEMM aclnn runs for `mode` on the checked problem p."""
    n, cin, di, hi, wi = p.dx_shape
    cout, _, kd, kh, kw = p.filter_shape
    if mode == STRIDE_EQ_KERNEL:
        return n, math.prod(p.dy_shape[2:]), cin * kd * kh * kw, cout
    if mode == FM_EQ_KERNEL:
        return 1, n, cin * di * hi * wi, cout
    if mode == W1B1_1X1X1:
        return 1, cin, di * hi * wi, cout
    raise ValueError(f"mode={mode!r} is not a matmul route; one of {sorted(_DESCRIPTION)}")


def dx_by_matmul(p, weight: np.ndarray | None, dy: np.ndarray | None, mode: str, *, execute: bool = True,
                 check_races: bool = True, poison_output: bool = True, hooks=None, engine: str = "auto",
                 max_memory: int | None = None) -> Run:
    """dx of the checked problem p by the matmul aclnn uses for `mode`, on p.platform's simulated chip; weight and
    dy are p's operands as NCDHW arrays (None in timing-only mode: size-only stand-ins run instead)."""
    from kernels.matmul import MatmulTiling, run_matmul  # here: a conv-kernel run does not load the matmul kernel
    if not execute:
        weight, dy = stand_in(p.filter_shape, DTYPES[p.dtype]), stand_in(p.dy_shape, DTYPES[p.dtype])
    n, cin, di, hi, wi = p.dx_shape
    cout, _, kd, kh, kw = p.filter_shape
    if mode == STRIDE_EQ_KERNEL:
        do, ho, wo = dy.shape[2:]
        left = dy.reshape(n, cout, do * ho * wo).transpose(0, 2, 1)  # isLeftTranspose (copied by the upload)
        right = weight.reshape(cout, cin * kd * kh * kw)
        how = (f"BatchMatMul: batch {n} of dy^T ({do * ho * wo} x {cout}, transposed on the host) . weight "
               f"({cout} x {cin * kd * kh * kw}), then the (Do, kD, Ho, kH, Wo, kW) permute to dx on the host")
    elif mode == FM_EQ_KERNEL:
        left, right = dy.reshape(n, cout), weight.reshape(cout, cin * di * hi * wi)
        how = f"MatMul: dy ({n} x {cout}) . weight ({cout} x {cin * di * hi * wi}), viewed as dx"
    elif mode == W1B1_1X1X1:
        left = weight.reshape(cout, cin).T  # the weight^T view aclnn hands to MatMul (copied by the upload)
        right = dy.reshape(cout, di * hi * wi)
        how = f"MatMul: weight^T ({cin} x {cout}, transposed on the host) . dy ({cout} x {di * hi * wi}), viewed as dx"
    hf32 = p.enable_hf32 and p.dtype == "float32"
    batch, m, n_cols, k = matmul_gemm(p, mode)
    tiling = MatmulTiling.for_shape(m, n_cols, k, p.dtype, batch=batch, shared_b=batch > 1, hf32=hf32)
    run = run_matmul(left, right, platform=p.platform, tiling=tiling, execute=execute, check_races=check_races,
                     hooks=hooks, poison_output=poison_output, engine=engine, max_memory=max_memory)
    out, result = run.result, None
    if execute:
        if mode == STRIDE_EQ_KERNEL:
            do, ho, wo = dy.shape[2:]
            out = out.reshape(n, do, ho, wo, cin, kd, kh, kw).transpose(0, 4, 1, 5, 2, 6, 3, 7)
        result = np.ascontiguousarray(out.reshape(n, cin, di, hi, wi))
    notes = [f"route: aclnn computes this dx with a matmul, not Conv3DBackpropInputV2: {mode}, {_DESCRIPTION[mode]}; "
             f"{how}{' in HF32' if hf32 else ''} (route='v2' runs the conv kernel)"]
    return replace(run, result=result, notes=notes, route="matmul", matmul_mode=mode)
