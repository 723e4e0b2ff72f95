"""Routing: which kernel computes each gradient, as aclnnConvolutionBackward decides on A2 (npu_arch 2201).

Source: hicann/ops-nn `conv/convolution_backward/op_api/aclnn_convolution_backward.cpp` (CalculateConvolutionBackward,
CalculateConv1DBackward, CalculateConv1DTransposeBackward, CalculateConv2DBp, CalculateConv3DBp,
CalculateConv3DBackward, CalculateConv3DTransposeBackward, CalculateConv3DBackwardByMatmulImpl, CalculateBiasGrad)
and `convolutionbackward.cpp`. What is followed:

* 1D: A2 has no 1D matmul route (SupportConv1DBp2Matmul is Ascend 950 only). PreConv1DBackwardTo2D views NCL as
  NC1L (L on W) with groups 1, and as NCL1 (L on H) with groups > 1 (unless dilation is 45); a transposed 1D
  convolution is always NC1L (CalculateConv1DTransposeBackward). Then as 2D.
* 2D: CalculateConv2DBp runs the problem as 3D with unit depth (isConv2dTo3d) when IsConv2DBp2MmMode holds
  (padding 0, dilation 1, groups 1, not transposed, and kernel == feature map, or kernel == stride > 1 with only
  grad_input asked for) or the shape is on a 2D->3D white list. Otherwise real A2 runs the 2D operators
  Conv2DBackpropInput / Conv2DBackpropFilter (CalculateConv2DBackward; transposed: Conv2D / Conv2DBackpropFilter,
  CalculateConv2DTransposeBackward), which this simulator does not model: we
  run those problems as 3D with unit depth on the V2 kernels as well, with the conv kernel (no matmul shortcut),
  and say so in the notes. The white lists are not consulted.
* 3D (and 2D as 3D): grad_bias first (CalculateBiasGrad: ReduceSum of gradOutput over N and the spatial axes, on
  the AIV here: bias_grad.py); then the matmul shortcuts (dx: the dx operator's route="aclnn"; dw: kernel ==
  feature map, CONV3D_BP_MM_FEATURE_MAP_EQ_KERNEL, a MatMul of dy^T and x); then Conv3DBackpropInputV2 and
  Conv3DBackpropFilterV2. Where real A2 picks the TBE Conv3DBackpropInput / Conv3DBackpropFilter instead
  (IsConv3DBackpropInputV2 / IsConv3DBackpropFilterV2, for some float16 / bfloat16 shapes) we still run V2.
* transposed (CalculateConv3DTransposeBackward): grad_input is the forward Conv3DV2 of gradOutput with the
  weight; grad_weight is Conv3DBackpropFilter with input and gradOutput swapped.
* CheckSupportedForConv3dBackpropFilter (3D on A2): grad_weight of a grouped float32 convolution with USE_FP16 is
  refused (ValueError naming cube_math_type).
The D/H swap white list (NeedSwapDHForConv3DBackward) and the deterministic-mode branches are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kernels.convolution_backward.arguments import ConvBackwardArgs
from kernels.convolution_backward.cube_math import USE_FP16, CubeMath, cube_math

DILATION_45 = 45  # PreConv1DBackwardTo2D keeps L on W for this dilation even with groups > 1
FM_EQ_KERNEL = "FM_EQ_KERNEL"


@dataclass(frozen=True)
class View3d:
    """The problem as the 3D kernels see it: NCDHW shapes, (D, H, W) attributes, pads (front, back, top, bottom,
    left, right)."""

    grad_output_shape: tuple[int, ...]
    input_shape: tuple[int, ...]
    weight_shape: tuple[int, ...]
    strides: tuple[int, int, int]
    pads: tuple[int, int, int, int, int, int]
    dilations: tuple[int, int, int]


@dataclass
class Route:
    view: View3d
    math: CubeMath
    as_3d_in_aclnn: bool  # False: real A2 would run the 2D operators (not modelled) for this 1D / 2D problem
    dx_route: str  # the dx operator's route: "aclnn" (its matmul shortcuts allowed) or "v2"
    dw_matmul: str | None  # FM_EQ_KERNEL or None
    notes: list[str] = field(default_factory=list)


def _one_d_on_h(a: ConvBackwardArgs) -> bool:
    """PreConv1DBackwardTo2D puts L on H (NCL1) for grouped convolutions, else on W (NC1L)."""
    return not a.transposed and a.groups > 1 and a.dilation[0] != DILATION_45


def _view_1d_as_2d(a: ConvBackwardArgs) -> tuple[tuple, tuple, tuple, tuple, tuple, tuple]:
    """(grad_output, input, weight shapes, stride, padding pairs, dilation) of the 2D view of a 1D problem."""
    on_h = _one_d_on_h(a)

    def shape(s):
        return (*s[:2], s[2], 1) if on_h else (*s[:2], 1, s[2])
    (s,), (p,), (d,) = a.stride, a.padding, a.dilation
    if on_h:
        return (shape(a.grad_output_shape), shape(a.input_shape), shape(a.weight_shape), (s, 1), (p, (0, 0)), (d, 1))
    return shape(a.grad_output_shape), shape(a.input_shape), shape(a.weight_shape), (1, s), ((0, 0), p), (1, d)


def view_as_3d(a: ConvBackwardArgs) -> View3d:
    if a.spatial == 3:
        go, x, w, st, pd, dl = a.grad_output_shape, a.input_shape, a.weight_shape, a.stride, a.padding, a.dilation
    else:
        if a.spatial == 1:
            go, x, w, st, pd, dl = _view_1d_as_2d(a)
        else:
            go, x, w, st, pd, dl = a.grad_output_shape, a.input_shape, a.weight_shape, a.stride, a.padding, a.dilation
        go, x, w = ((*s[:2], 1, *s[2:]) for s in (go, x, w))  # View4Das5D: D = 1
        st, pd, dl = (1, *st), ((0, 0), *pd), (1, *dl)
    return View3d(tuple(go), tuple(x), tuple(w), tuple(st), tuple(v for pair in pd for v in pair), tuple(dl))


def mm_capable(a: ConvBackwardArgs) -> bool:
    """IsConvBpSupportMatmulMode: padding 0, outputPadding 0, dilation 1, not transposed, groups 1."""
    return (not a.transposed and a.groups == 1 and not any(v for pair in a.padding for v in pair)
            and not any(a.output_padding) and all(d == 1 for d in a.dilation))


def fm_eq_kernel(v: View3d) -> bool:
    return all(v.weight_shape[i] == v.input_shape[i] and v.grad_output_shape[i] == 1 for i in (2, 3, 4))


def _conv2d_bp_to_mm(a: ConvBackwardArgs, v: View3d) -> bool:
    """IsConv2DBp2MmMode (A2), on the H and W axes of the view."""
    if not mm_capable(a):
        return False
    if fm_eq_kernel(v):
        return True
    stride_eq_kernel = all(v.weight_shape[i] == v.strides[i - 2] and v.input_shape[i] % v.weight_shape[i] == 0
                           and v.input_shape[i] // v.weight_shape[i] == v.grad_output_shape[i] for i in (3, 4))
    return (stride_eq_kernel and max(v.strides[1:]) > 1 and a.output_mask[0] and not a.output_mask[1])


def cube_math_note(a: ConvBackwardArgs, math: CubeMath) -> str:
    """What the cube computes in, for the run's notes."""
    return (f"cube_math_type={a.cube_math_type}: the cube computes in {'HF32' if math.hf32 else math.dtype}"
            + (" (gradOutput, input and weight cast to float16 before the kernels, results cast back)"
               if math.dtype != a.dtype else ""))


def route(a: ConvBackwardArgs) -> Route:
    """The route of a checked problem on A2 (npu_arch 2201); raises ValueError where A2 refuses it. The Ascend 950
    (npu_arch 3510) has its own routing (routing_arch35.py), picked by the operator."""
    math = cube_math(a.dtype, a.cube_math_type)
    v = view_as_3d(a)
    notes = [cube_math_note(a, math)]
    as_3d = a.spatial == 3 or _conv2d_bp_to_mm(a, v)
    if a.spatial == 1:
        notes.append(f"1D: viewed as 2D {'NCL1 (L on H)' if _one_d_on_h(a) else 'NC1L (L on W)'} "
                     "(PreConv1DBackwardTo2D / CalculateConv1DTransposeBackward), then as 2D")
    if a.spatial < 3:
        real_2d = ("Conv2D / Conv2DBackpropFilter (CalculateConv2DTransposeBackward" if a.transposed
                   else "Conv2DBackpropInput / Conv2DBackpropFilter (CalculateConv2DBackward")
        notes.append("2D: run as 3D with unit depth (CalculateConv2DBp, isConv2dTo3d: IsConv2DBp2MmMode)" if as_3d
                     else f"2D: real A2 runs {real_2d}; not modelled) here; simulated as 3D with unit depth on the "
                     "V2 kernels, no matmul shortcut")
    if a.spatial == 3 and a.output_mask[1] and a.groups > 1 and a.dtype == "float32" and a.cube_math_type == USE_FP16:
        raise ValueError(f"cube_math_type={a.cube_math_type} (USE_FP16) is not allowed for grad_weight of a grouped "
                         f"(groups={a.groups}) float32 3D convolution on A2; allowed: 0, 1 or 3 "
                         "(CheckSupportedForConv3dBackpropFilter)")
    dw_mm = FM_EQ_KERNEL if as_3d and mm_capable(a) and fm_eq_kernel(v) else None
    return Route(v, math, as_3d, "aclnn" if as_3d else "v2", dw_mm, notes)
