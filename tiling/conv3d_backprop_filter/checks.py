"""Argument checks for Conv3DBackpropFilterV2 (dw) on A2: one place that says what the operator accepts.

The limits are those of the real host code (`conv_backprop_filter_context_utils.cpp`: the shape, stride, dilation,
pad and group checks of SetConv3dBpFilterV2RunInfo, and CheckGradOutputShape), plus the instruction ranges the
arch22 kernel's Load3Dv2 of the feature map needs (stride 6 bits, kernel 9 bits, padding 8 bits), which the real
host leaves unchecked. Every error names the parameter, its value and what is allowed.
"""
from __future__ import annotations

import math

from tiling.common.problem import (FILTER_AXES, NCDHW, ConvProblem, check_attribute_ranges, check_attributes,
                                   check_flag, check_in_range, check_ints, check_kind, check_output_size,
                                   check_shape_ranges, effective_dilations)

SHAPE_UPPER = 2**31 - 2      # SHAPE_UPPER = INT32_MAX - 1
DILATION_HW_MAX = 255        # DILATION_UPPER (arch22)
PAD_HW_MAX = 255             # PAD_UPPER (arch22); also the 8-bit Load3Dv2 padList
GROUPS_MAX = 65535           # UINT16_MAX
STRIDE_HW_MAX = 63           # Load3Dv2 strideH/strideW are 6-bit (the real host allows up to INT32_MAX - 1)
KERNEL_HW_MAX = 511          # Load3Dv2 filterH/W are 8-bit plus the filterSize 9th bit


def check_conv3d_dw_args(x_shape, filter_shape, dy_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                         dilations=(1, 1, 1), groups=1, dtype="bfloat16", platform="Ascend910B2",
                         enable_hf32=False, deterministic=False) -> ConvProblem:
    """Check a Conv3DBackpropFilter problem for the A2 V2 kernel and return it normalised.

    Shapes are NCDHW: x (N, Cin, Di, Hi, Wi), filter (Cout, Cin/groups, kD, kH, kW), dy (N, Cout, Do, Ho, Wo).
    strides and dilations are (D, H, W) (or the 5-value NCDHW form with N = C = 1); pads are (front, back, top,
    bottom, left, right). groups=1 with filter_shape[1] < Cin means Cin / filter_shape[1] groups, as in the real
    host (ValidateGroupsValue). Raises TypeError for values of the wrong type and ValueError naming the parameter.
    """
    dtype, plat, enable_hf32 = check_kind(dtype, platform, enable_hf32)
    deterministic = check_flag("deterministic", deterministic)
    x = check_ints("x_shape", x_shape, 5, NCDHW)
    wt = check_ints("filter_shape", filter_shape, 5, FILTER_AXES)
    dy = check_ints("dy_shape", dy_shape, 5, NCDHW)
    st, dil, pd, groups = check_attributes(strides, dilations, pads, groups)

    check_shape_ranges((("x_shape", x, NCDHW), ("dy_shape", dy, NCDHW), ("filter_shape", wt, FILTER_AXES)),
                       SHAPE_UPPER)
    check_attribute_ranges(st, dil, pd, (SHAPE_UPPER, STRIDE_HW_MAX, STRIDE_HW_MAX),
                           (SHAPE_UPPER, DILATION_HW_MAX, DILATION_HW_MAX), (SHAPE_UPPER,) * 2 + (PAD_HW_MAX,) * 4)
    check_in_range("filter_shape[3] (kH)", wt[3], 1, KERNEL_HW_MAX)
    check_in_range("filter_shape[4] (kW)", wt[4], 1, KERNEL_HW_MAX)
    check_in_range("groups", groups, 1, GROUPS_MAX)

    n, cin = x[0], x[1]
    cout = dy[1]
    if dy[0] != n:
        raise ValueError(f"dy_shape[0] (N)={dy[0]} must equal x_shape[0] (N)={n}")
    if wt[0] != cout:
        raise ValueError(f"filter_shape[0] (Cout)={wt[0]} must equal dy_shape[1] (Cout)={cout}")
    if cin % wt[1]:
        raise ValueError(f"filter_shape[1] (Cin/groups)={wt[1]} must divide x_shape[1] (Cin)={cin}")
    actual = cin // wt[1]
    if groups == 1:
        groups = actual  # ValidateGroupsValue: groups=1 takes x channels / filter channels
    elif groups != actual:
        raise ValueError(f"groups={groups} disagrees with the shapes: x_shape[1] (Cin)={cin} / filter_shape[1] "
                         f"(Cin/groups)={wt[1]} = {actual}")
    check_in_range("groups", groups, 1, GROUPS_MAX)
    if cout % groups:
        raise ValueError(f"groups={groups} must divide dy_shape[1] (Cout)={cout}")

    kernel = wt[2:]
    given, dil = dil, effective_dilations(kernel, dil)  # SetDilationsAttr
    check_output_size("x", x, dy, kernel, st, dil, pd, "k{AXIS}")
    # L1 must hold at least one B1 load next to the smallest A1 block (16 couts x 16 dy pixels). The host sizes a
    # B1 load with CalcHo (a part-row load is taken to straddle two rows) over full-width x rows of one C0 block
    # (the kernel never splits W): the fewest rows it can ask for decide whether any tiling fits.
    dtype_bytes = 4 if dtype == "float32" else 2
    rows = min((fewest_host_dy_rows(dy[4]) - 1) * st[1] + (kernel[1] - 1) * dil[1] + 1, x[3])
    b1 = rows * x[4] * fewest_host_channels(kernel[1] * kernel[2], 32 // dtype_bytes) * dtype_bytes
    a1 = 16 * 16 * dtype_bytes
    if a1 + b1 > plat.L1:
        raise ValueError(f"x_shape[4] (W)={x[4]} is too wide for L1: the smallest B1 load holds {rows} x rows of W "
                         f"x the fewest channels ({b1} bytes; kH={kernel[1]}, dilation_h={dil[1]}, stride_h={st[1]}, "
                         f"dy W={dy[4]}) and the smallest A1 block {a1}, more than the {plat.L1} bytes of L1 on "
                         f"{plat.name} (the kernel never splits W)")
    return ConvProblem(x_shape=x, filter_shape=wt, y_shape=dy, strides=st, pads=pd, dilations=dil, groups=groups,
                       dtype=dtype, platform=plat, enable_hf32=enable_hf32, dilations_given=given,
                       deterministic=deterministic)


def fewest_host_dy_rows(wo: int) -> int:
    """The fewest dy rows the host's CalcHo assigns a B1 load of k dy pixels, over k = 16, 32, ...: one when some
    such k divides wo, otherwise the best of a part-row load (two rows) and whole rows (lcm(wo, 16) / wo)."""
    if wo % 16 == 0:
        return 1
    whole_rows = 16 // math.gcd(wo, 16)
    if wo > 16:
        return min(2, whole_rows)
    part = 16 // wo if 16 % wo == 0 else -(-16 // wo) + 1
    return min(part, whole_rows)


def fewest_host_channels(kernel_hw: int, c0: int) -> int:
    """The host's CalCin for the smallest N block (16 columns): x channels one B1 load holds, with the extra
    C0 row a tail that does not fill a kernel window can straddle."""
    blocks = 16 // c0
    rows = -(-blocks // kernel_hw)
    if kernel_hw > blocks:
        rows += 1 if kernel_hw % blocks else 0
    elif blocks % kernel_hw:
        rows += 1 if 2 * blocks % kernel_hw == 0 else 2
    return rows * c0
