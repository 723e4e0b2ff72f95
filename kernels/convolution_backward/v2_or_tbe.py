"""Which kernel real A2 picks for a 3D dx / dw: the V2 (Ascend C) kernel or the older TBE one.

hicann/ops-nn `conv/convolution_backward/op_api/convolutionbackward.cpp`, IsConv3DBackpropInputV2 (with
CheckV2Functionality, CheckOutputPadding, CheckV2Dilation, CheckV2Perf) and IsConv3DBackpropFilterV2 (with
CheckV2BasicBlockSupport), for npu_arch 2201 outside deterministic mode. The white lists they also consult are not
(a shape on one runs V2 even where these rules say TBE). The simulator runs the V2 kernels in every case; the
answer only goes into the run's notes, so a user knows where the real chip would run something else.
"""
from __future__ import annotations

from kernels.convolution_backward.routing import View3d

L1_ROWS_LIMIT = 4096  # CheckV2Functionality on 2201: fmapH * Wo * strideW


def _dims(v: View3d):
    return v.input_shape[2:], v.grad_output_shape[2:], v.weight_shape[2:]


def conv3d_dx_tbe_reason(v: View3d, groups: int, dtype: str, pads_given: int) -> str | None:
    """Why real A2 would run the TBE Conv3DBackpropInput for this dx, or None when it runs V2.

    pads_given: how many padding values aclnn holds at this point (3 for a 3D call, 6 for a 2D call viewed as
    3D, whose D/H/W loop in CheckV2Functionality then runs past the kernel dims and answers "not V2")."""
    if groups > 1 or dtype == "float32":
        return None
    x, out, k = _dims(v)
    pads = (v.pads[0], v.pads[2], v.pads[4]) if pads_given == 3 else v.pads
    if v.strides[0] > k[0]:
        return "stride_d > kernel_d (CheckV2Functionality)"
    if pads_given != 3 or any(p >= k[i] for i, p in enumerate(pads)):
        return "a padding value >= its kernel size, or a 2D padding array (CheckV2Functionality)"
    fmap_h = min((out[1] - 1) * v.strides[1] + 1, 2 + (k[1] - 1) * v.dilations[1])
    if fmap_h * out[2] * v.strides[2] > L1_ROWS_LIMIT:
        return f"fmapH * Wo * strideW > {L1_ROWS_LIMIT} (CheckV2Functionality)"
    output_padding = any(x[i] - ((out[i] - 1) * v.strides[i] + (k[i] - 1) * v.dilations[i] - 2 * pads[i] + 1) > 0
                         for i in range(3))
    if output_padding or max(v.dilations) > 1:
        return None
    if max(v.strides) > 2 or max(pads) > 2 or max(k) > 4:
        return "stride > 2, padding > 2 or kernel > 4 (CheckV2Perf)"
    if x[1] * x[2] < 5500 or x[0] > 85:
        return "H*W < 5500 or D > 85 (CheckV2Perf)"
    return None


def conv3d_dw_tbe_reason(v: View3d, groups: int, dtype: str, c0: int) -> str | None:
    """Why real A2 would run the TBE Conv3DBackpropFilter for this dw, or None when it runs V2."""
    if dtype == "float32" or max(v.dilations) > 1 or groups > 1:
        return None
    k = v.weight_shape[2:]
    kernel_hw = k[1] * k[2]
    m = -(-v.grad_output_shape[1] // c0) * c0
    n = k[0] * kernel_hw * -(-v.input_shape[1] // c0) * c0
    if kernel_hw == 1 or (kernel_hw in (4, 9, 16) and m >= 128 and n >= 128):
        return None
    return "kernel H*W not 1, or not 4/9/16 with Cout and kD*kH*kW*Cin of at least 128 (CheckV2BasicBlockSupport)"
