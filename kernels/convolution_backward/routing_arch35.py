"""Routing on the Ascend 950 (npu_arch 3510, "regbase"): which kernel computes each gradient, as
aclnnConvolutionBackward decides there, and what the simulator refuses because its 950 kernel is not ported.

Source: hicann/ops-nn @ e5c3fa93 `conv/convolution_backward/op_api/aclnn_convolution_backward.cpp`
(CalculateConvolutionBackward, isConv2dTo3d, CalculateConv3DBp, CalculateConv3DBackward,
CalculateConv3DBackwardByMatmulImpl, Is1x1DwTransToMm, GenConvMmDwInputBy1x1Mode, CalculateBiasGrad) and
`convolution_backward_checker.cpp` (InterceptConvFor8bit).

* 8-bit data: refused by the dtype check (arguments.py), as InterceptConvFor8bit refuses it unless transposed;
  a transposed convolution's 8-bit grad_input would need the arch35 Conv3DV2, which is not ported.

* 2D: always run as 3D with unit depth (isConv2dTo3d returns true on regbase; the 950 has no 2D prototypes).
* 1D: refused [not modelled]: the 950 first tries SupportConv1DBp2Matmul (a 950-only BatchMatMul of the whole
  1D problem), then views the problem as 2D.
* transposed with grad_input or grad_weight: refused [not ported]: grad_input is Conv3dv2NCDHW, the arch35 Conv3DV2
  forward kernel, and grad_weight the arch35 Conv3DBackpropFilter.
* grad_bias: CalculateBiasGrad's ReduceSum, by our own AIV kernel as on A2 (bias_grad.py).
* grad_input: the dx operator with route "aclnn" on the 950: aclnn's 950 matmul shortcuts (W1B1 1x1x1, feature map
  == kernel, kernel == stride with the regbase stride rule) on the 950 example matmul kernel, else the arch35
  Conv3DBackpropInputV2 kernel (on regbase aclnn always takes V2: no TBE kernel, no white lists).
* grad_weight: only aclnn's two dw matmul shortcuts run (the feature map == kernel MatMul, FM_EQ_KERNEL, first;
  then Is1x1DwTransToMm, DW_1X1: a 1x1x1 kernel, batch 1, groups 1, stride 1, pad 0, dilation 1 and at most 128 MiB
  of operands, dw (Cout x Cin) = dy (Cout x DHW) . x^T (DHW x Cin)), on the 950 matmul kernel. Every other
  grad_weight needs the arch35 Conv3DBackpropFilter kernel, which is not ported, and is refused by name before
  anything runs. The A2 dw kernel is not run in its place: the 950 reads L0A as NZ and has other load paths, so the
  real hardware never runs the arch22 kernel (kernels/common/operands.require_arch22_kernel).
* cube_math_type: A2's meaning (cube_math.py); on regbase CheckCubeMathTypeFor3D only warns and
  CheckSupportedForConv3dBackpropFilter is not called, so the grouped float32 USE_FP16 refusal of A2 does not apply.
"""
from __future__ import annotations

import math

from ascend_sim.machine.dtypes import DTYPES
from kernels.convolution_backward.arguments import ConvBackwardArgs
from kernels.convolution_backward.cube_math import cube_math
from kernels.convolution_backward.routing import (FM_EQ_KERNEL, Route, View3d, cube_math_note, fm_eq_kernel, mm_capable,
                                                  view_as_3d)

DW_1X1 = "DW_1X1"
L2_CACHE_BYTES = 128 * 1024 * 1024  # IsGreaterL2CacheForDw1x1


def is_1x1_dw(a: ConvBackwardArgs, v: View3d) -> bool:
    """Is1x1DwTransToMm: 1x1x1 kernel, batch 1, groups 1, every stride 1, pad 0 and dilation 1, and
    (Cout*DHW + DHW*Cin + Cin*Cout) * the input's bytes within L2 (IsGreaterL2CacheForDw1x1)."""
    if v.weight_shape[2:] != (1, 1, 1) or v.input_shape[0] != 1 or a.groups != 1:
        return False
    if any(s != 1 for s in v.strides) or any(v.pads) or any(d != 1 for d in v.dilations):
        return False
    cout, cin, dhw = v.weight_shape[0], v.weight_shape[1], math.prod(v.input_shape[2:])
    return (cout * dhw + dhw * cin + cin * cout) * DTYPES[a.dtype].itemsize <= L2_CACHE_BYTES


def route_arch35(a: ConvBackwardArgs) -> Route:
    """The route of a checked problem on the Ascend 950; ValueError naming what is not modelled or not ported."""
    if a.spatial == 1:
        raise ValueError(f"input has 1 spatial axis (shape {a.input_shape}) on {a.platform.name}: the 950's 1D flow "
                         "(SupportConv1DBp2Matmul, then the 2D view) is not modelled; give the problem as 2D "
                         "(N, C, 1, L) or 3D")
    if a.transposed and (a.output_mask[0] or a.output_mask[1]):
        raise ValueError(f"transposed=True with output_mask={a.output_mask} on {a.platform.name}: grad_input needs "
                         "the arch35 Conv3DV2 (Conv3dv2NCDHW) and grad_weight the arch35 Conv3DBackpropFilter, "
                         "neither ported; only grad_bias runs")
    math_ = cube_math(a.dtype, a.cube_math_type)
    v = view_as_3d(a)
    notes = [cube_math_note(a, math_)]
    if a.spatial == 2:
        notes.append("2D: run as 3D with unit depth (isConv2dTo3d: always on the Ascend 950)")
    dw = None
    if a.output_mask[1]:
        if mm_capable(a) and fm_eq_kernel(v):
            dw = FM_EQ_KERNEL
        elif is_1x1_dw(a, v):
            dw = DW_1X1
        else:
            raise ValueError(f"output_mask[1]=True (grad_weight) on {a.platform.name}: this problem needs the arch35 "
                             "Conv3DBackpropFilter kernel, which is not ported; on the 950 only aclnn's dw matmul "
                             "shortcuts run (feature map == kernel; or a 1x1x1 kernel with batch 1, groups 1, stride "
                             "1, pad 0, dilation 1: Is1x1DwTransToMm)")
    return Route(v, math_, True, "aclnn", dw, notes)
