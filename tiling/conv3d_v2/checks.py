"""Argument checks for Conv3DV2 (forward 3D convolution) on A2: one place that says what the port accepts.

The limits are the engine's own (CheckAllParams: positive shapes, strides, dilations; pads >= 0; the padded input
at least the dilated kernel; groups dividing both channel counts; the Load3D instruction limits: stride H/W <= 63,
dilation H/W <= 255, pad top/bottom/left/right <= 255, kernel H/W <= 511, kH*kW*k0 <= 65535), checked up front so
the error names the parameter, its value and the allowed range. The output shape is derived, as the engine checks
it against the input (CheckOutputShapeConsistency).
"""
from __future__ import annotations

from tiling.common.problem import (FILTER_AXES, ConvProblem, check_attribute_ranges, check_attributes, check_flag,
                                   check_in_range, check_ints, check_kind, check_shape_ranges)

SHAPE_UPPER = 2**31 - 1
STRIDE_HW_MAX = 63        # LOAD3D_MAX_STRIDE_H_W
DILATION_HW_MAX = 255     # LOAD3D_MAX_DILATION_H_W
PAD_HW_MAX = 255          # LOAD3D_MAX_PAD (front/back pads are not Load3D's and have no such limit)
KERNEL_HW_MAX = 511       # LOAD3D_MAX_FILTER_H_W
POSK_MAX = 65535          # kH * kW * k0 (Load3D posK)
K0 = {"float16": 16, "bfloat16": 16, "float32": 8}


def check_conv3d_v2_args(x_shape, filter_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0), dilations=(1, 1, 1),
                         groups=1, dtype="bfloat16", platform="Ascend910B2", bias=False, enable_hf32=False,
                         pointwise=False) -> ConvProblem:
    """x (N, Cin, Di, Hi, Wi), filter (Cout, Cin/groups, kD, kH, kW); strides/dilations (D, H, W) or the 5-value
    NCDHW form with N = C = 1; pads (front, back, top, bottom, left, right). pointwise=True asks for the NCDHW
    pointwise path (1x1x1 kernel, strides and dilations 1, no pads, groups 1); otherwise the NDC1HWC0 path."""
    dtype, plat, enable_hf32 = check_kind(dtype, platform, enable_hf32)
    bias, pointwise = check_flag("bias", bias), check_flag("pointwise", pointwise)
    x_axes = ("N", "Cin", "D", "H", "W")
    x = check_ints("x_shape", x_shape, 5, x_axes)
    wt = check_ints("filter_shape", filter_shape, 5, FILTER_AXES)
    st, dil, pd, groups = check_attributes(strides, dilations, pads, groups)

    check_shape_ranges((("x_shape", x, x_axes), ("filter_shape", wt, FILTER_AXES)), SHAPE_UPPER)
    check_attribute_ranges(st, dil, pd, (SHAPE_UPPER, STRIDE_HW_MAX, STRIDE_HW_MAX),
                           (SHAPE_UPPER, DILATION_HW_MAX, DILATION_HW_MAX), (SHAPE_UPPER,) * 2 + (PAD_HW_MAX,) * 4)
    check_in_range("filter_shape[3] (kH)", wt[3], 1, KERNEL_HW_MAX, by_label=False)
    check_in_range("filter_shape[4] (kW)", wt[4], 1, KERNEL_HW_MAX, by_label=False)
    if wt[3] * wt[4] * K0[dtype] > POSK_MAX:
        raise ValueError(f"filter_shape kH*kW={wt[3] * wt[4]} with dtype={dtype!r} gives kH*kW*k0="
                         f"{wt[3] * wt[4] * K0[dtype]}, above the Load3D limit {POSK_MAX}")
    check_in_range("groups", groups, 1, x[1])
    if x[1] % groups or wt[0] % groups:
        raise ValueError(f"groups={groups} must divide both Cin={x[1]} and Cout={wt[0]}")
    if wt[1] * groups != x[1]:
        raise ValueError(f"filter_shape[1] (Cin/groups)={wt[1]} must equal Cin/groups = {x[1]}/{groups}")

    out = []
    for axis, size, k, s, d, before, after in zip("DHW", x[2:], wt[2:], st, dil, pd[0::2], pd[1::2]):
        extent = size + before + after - d * (k - 1) - 1
        if extent < 0:
            raise ValueError(f"the dilated kernel {axis} ({d * (k - 1) + 1}) is larger than the padded input "
                             f"{axis} ({size + before + after}): x_shape, filter_shape, pads or dilations")
        out.append(extent // s + 1)
    if pointwise:
        if wt[2:] != (1, 1, 1) or st != (1, 1, 1) or dil != (1, 1, 1) or any(pd) or groups != 1:
            raise ValueError("pointwise=True needs a 1x1x1 kernel, strides (1, 1, 1), dilations (1, 1, 1), "
                             f"zero pads and groups=1; got filter {wt[2:]}, strides {st}, dilations {dil}, "
                             f"pads {pd}, groups {groups}")
    return ConvProblem(x_shape=x, filter_shape=wt, y_shape=(x[0], wt[0], *out), strides=st, pads=pd, dilations=dil,
                       groups=groups, dtype=dtype, platform=plat, enable_hf32=enable_hf32, bias=bias,
                       pointwise=pointwise)
