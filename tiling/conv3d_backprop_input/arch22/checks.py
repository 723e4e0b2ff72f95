"""Argument checks for Conv3DBackpropInput on A2: one place that says what the operator accepts.

The limits are those of the real host code (`conv_backprop_input_context_utils.cpp`: CheckAttrRange, CheckParams,
CheckAttrs, CheckPadRange, CheckBackpropPadRange, CheckL1SizeLimit) plus the two rules the V2 kernel needs that the
host code leaves to aclnn routing (see docs/tiling.md, "Rejected inputs"). Every error names the parameter, its
value and what is allowed, so the operator layer can surface it unchanged.
"""
from __future__ import annotations

from tiling.common.problem import (FILTER_AXES, NCDHW, PAD_NAMES, ConvProblem, check_attribute_ranges, check_attributes,
                                   check_in_range, check_ints, check_kind, check_output_size, check_shape_ranges,
                                   effective_dilations)

INT32_MAX = 2**31 - 1
UINT32_MAX = 2**32 - 1
STRIDE_HW_MAX = 63
STRIDE_D_MAX = 255
DILATION_MAX = 255
PAD_MAX = 255
KERNEL_HW_MAX = 511
KERNEL_D_MAX = 255
GROUPS_MAX = 65535
W_MAX = 4096  # kDimWNormalUp: the kernel never splits W, so a dy or dx row must fit one L1 load
_AXES = ("d", "h", "w")


def _fmap_rows_min_load(hk_dilated: int, wi: int) -> int:
    """Rows of dilated dy that the smallest (16-pixel) M block needs; CheckL1SizeLimit's h_value_max."""
    if 16 < wi:
        return hk_dilated + 1
    if 16 % wi == 0:
        return hk_dilated - 1 + 16 // wi
    return hk_dilated - 1 + 16 // wi + 2


def _depth_factor(kd_factor: int, stride_d: int, dout: int, kd_dilated: int) -> int:
    """GetDfactor with l0c_din = 1 on a chip with fixpipe: dy planes one output plane can need."""
    if kd_dilated == stride_d:
        return 1  # GetDfactorSdEqKd with l0c_din == 1 always answers 1
    estimate = -(-(kd_factor - 1) // stride_d) + 1
    return min(estimate, dout)


def check_conv3d_dx_args(dy_shape, filter_shape, dx_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                         dilations=(1, 1, 1), groups=1, dtype="float16", platform="Ascend910B2",
                         enable_hf32=False) -> ConvProblem:
    """Check a Conv3DBackpropInput problem for the A2 V2 kernel and return it normalised.

    Shapes are NCDHW: dy (N, Cout, Do, Ho, Wo), filter (Cout, Cin/groups, kD, kH, kW), dx (N, Cin, Di, Hi, Wi).
    strides and dilations are (D, H, W); pads are (front, back, top, bottom, left, right).
    Raises TypeError for values of the wrong type and ValueError (naming the parameter) for the rest.
    """
    dtype, plat, enable_hf32 = check_kind(dtype, platform, enable_hf32)
    dy = check_ints("dy_shape", dy_shape, 5, NCDHW)
    wt = check_ints("filter_shape", filter_shape, 5, FILTER_AXES)
    dx = check_ints("dx_shape", dx_shape, 5, NCDHW)
    st, dil, pd, groups = check_attributes(strides, dilations, pads, groups)

    check_shape_ranges((("dy_shape", dy, NCDHW), ("dx_shape", dx, NCDHW), ("filter_shape", wt, FILTER_AXES)),
                       INT32_MAX)
    check_attribute_ranges(st, dil, pd, (STRIDE_D_MAX, STRIDE_HW_MAX, STRIDE_HW_MAX), (DILATION_MAX,) * 3,
                           (PAD_MAX,) * 6)
    check_in_range("filter_shape[2] (kernel_d)", wt[2], 1, KERNEL_D_MAX)
    check_in_range("filter_shape[3] (kernel_h)", wt[3], 1, KERNEL_HW_MAX)
    check_in_range("filter_shape[4] (kernel_w)", wt[4], 1, KERNEL_HW_MAX)
    check_in_range("groups", groups, 1, GROUPS_MAX)

    n, cout, dout, ho, wo = dy
    _, cin, di, hi, wi = dx
    if dx[0] != n:
        raise ValueError(f"dx_shape[0] (N)={dx[0]} must equal dy_shape[0] (N)={n}")
    if cin % groups:
        raise ValueError(f"groups={groups} must divide dx_shape[1] (Cin)={cin}")
    if cout % groups:
        raise ValueError(f"groups={groups} must divide dy_shape[1] (Cout)={cout}")
    if wt[0] != cout:
        raise ValueError(f"filter_shape[0] (Cout)={wt[0]} must equal dy_shape[1] (Cout)={cout}")
    if wt[1] * groups != cin:
        raise ValueError(f"filter_shape[1] (Cin/groups)={wt[1]} times groups={groups} must equal "
                         f"dx_shape[1] (Cin)={cin}")

    kernel = wt[2:]
    given, dil = dil, effective_dilations(kernel, dil)
    check_output_size("dx", dx, dy, kernel, st, dil, pd, "kernel_{axis}")
    if st[0] > kernel[0]:
        raise ValueError(f"strides[0] (stride_d)={st[0]} must not exceed filter_shape[2] (kernel_d)={kernel[0]}: "
                         "the A2 Conv3DBackpropInputV2 kernel gathers one kernel plane per output plane")
    for i, axis in ((1, "h"), (2, "w")):
        reach = (kernel[i] - 1) * dil[i]
        for j in (2 * i, 2 * i + 1):
            if pd[j] > reach:
                raise ValueError(
                    f"pads[{j}] ({PAD_NAMES[j]})={pd[j]} exceeds (kernel_{axis}-1)*dilation_{axis}={reach}: the "
                    "backprop pad would be negative, which the Load3D pad fields cannot express (aclnn routes "
                    "such shapes to the V1 operator)")
    # CheckBackpropPadRange: the padList entries of the img2col are 8-bit.
    for i, axis, lo_name, hi_name in ((1, "h", "top", "bottom"), (2, "w", "left", "right")):
        before = (kernel[i] - 1) * dil[i] - pd[2 * i]
        after = dx[2 + i] - dy[2 + i] * st[i] + pd[2 * i]
        if before > PAD_MAX:
            raise ValueError(f"backprop pad {lo_name} = (kernel_{axis}-1)*dilation_{axis} - pads[{2 * i}] = {before}"
                             f" exceeds {PAD_MAX} (8-bit Load3D pad)")
        if after > PAD_MAX:
            raise ValueError(f"backprop pad {hi_name} = dx {axis.upper()} - dy {axis.upper()}*stride_{axis} + "
                             f"pads[{2 * i}] = {after} exceeds {PAD_MAX} (8-bit Load3D pad)")
    if hi * wi > UINT32_MAX:
        raise ValueError(f"dx H*W={hi * wi} exceeds {UINT32_MAX} (Fixpipe dstStride is 32-bit)")
    for i, axis in enumerate(_AXES):
        if dy[2 + i] * st[i] > INT32_MAX:
            raise ValueError(f"dy {axis.upper()} * stride_{axis} = {dy[2 + i] * st[i]} exceeds {INT32_MAX}")

    # CheckL1SizeLimit: the smallest possible A1 + B1 load must fit L1, and rows are never split.
    w_expand = wo * st[2]
    if max(wi, w_expand) > W_MAX:
        raise ValueError(f"dx W={wi} / dy W*stride_w={w_expand}: rows wider than {W_MAX} are not supported "
                         "(the kernel never splits W)")
    c0_b = 32 // (4 if dtype == "float32" else 2)
    cout1 = -(-cout // c0_b)
    rows = min(_fmap_rows_min_load((kernel[1] - 1) * dil[1] + 1, wi), ho * st[1])
    planes = _depth_factor(kernel[0] if cout1 == 1 else 1, st[0], dout, (kernel[0] - 1) * dil[0] + 1)
    a_bytes = rows * w_expand * planes * c0_b * (4 if dtype == "float32" else 2)
    b_bytes = kernel[1] * kernel[2] * 16 * c0_b * (4 if dtype == "float32" else 2)
    fill_zero = 0 if dtype == "float32" else 16 * 16 * 2
    if a_bytes + b_bytes + fill_zero > plat.L1:
        raise ValueError(
            f"dy_shape/filter_shape: the smallest L1 load needs {a_bytes + b_bytes + fill_zero} bytes "
            f"(A1 {a_bytes} = {rows} rows x {w_expand} x {planes} planes x C0, B1 {b_bytes}, zero block "
            f"{fill_zero}) but L1 of {plat.name} has {plat.L1}")
    return ConvProblem(x_shape=dx, filter_shape=wt, y_shape=dy, strides=st, pads=pd, dilations=dil, groups=groups,
                       dtype=dtype, platform=plat, enable_hf32=enable_hf32, dilations_given=given)
