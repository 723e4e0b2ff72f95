"""Planning a dx run from the problem alone (shapes, attributes, dtype, platform; no data).

plan_conv3d_dx does what the host does before any launch: check the arguments, choose the route (aclnn's matmul
shortcuts or the conv kernel), rewrite the problem into the kernel's envelope, generate the tiling (clearing
enableKernelSplit, which the kernel entry does not run), apply the overrides and force initOutputFlag where the
kernel would leave dx elements unwritten, and pick the kernel's y format (the MIX NCDHW build or NDC1HWC0). The
operator runs the plan on the data; `ascend-sim tiling conv3d-dx` prints it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kernels.conv3d_backprop_input.arguments import check_problem
from kernels.conv3d_backprop_input.kernel.arch22.util import FORMAT_NCDHW, FORMAT_NDC1HWC0
from kernels.conv3d_backprop_input.matmul_route import aclnn_matmul_mode
from kernels.conv3d_backprop_input.rewrite import Rewrite, normalise_problem
from kernels.conv3d_backprop_input.routes import ROUTES
from tiling import check_conv3d_dx_args, tiling_for_args
from tiling.common.cstruct import overrides_mapping
from tiling.common.problem import ConvProblem
from tiling.conv3d_backprop_input.arch22.model import Conv3DBackpropInputV2TilingData


@dataclass(frozen=True)
class Conv3dDxPlan:
    """What a run needs, decided before any data is touched.

    problem: the user's checked problem (NCDHW). route: "v2" (the Conv3DBackpropInputV2 kernel) or "matmul"
    (aclnn's matmul shortcut; matmul_mode says which, and the matmul route tiles its own operands). For "v2":
    kernel_problem is the rewritten problem the kernel runs (rewrite says how it differs), tiling its TilingData
    and notes what the operator says about the rewrite and the tiling; y_format the y format of the kernel build
    (kernel_y_format). For "matmul" kernel_problem is problem."""

    problem: ConvProblem
    route: str
    kernel_problem: ConvProblem
    matmul_mode: str | None = None
    rewrite: Rewrite = Rewrite()
    tiling: Conv3DBackpropInputV2TilingData | None = None
    notes: list[str] = field(default_factory=list)
    y_format: str = FORMAT_NDC1HWC0


def plan_conv3d_dx(input_size, filter_shape, out_backprop_shape, dtype, *, strides, pads,
                   dilations=(1, 1, 1, 1, 1), groups=1, data_format=None, filter_format="NCDHW",
                   platform="Ascend910B2", enable_hf32=False, route="aclnn", tiling_overrides=None,
                   validate_overrides=True) -> Conv3dDxPlan:
    """The plan of conv3d_backprop_input_v2_run for arrays of these shapes (filter in filter_format, out_backprop
    in data_format) and dtype (a name or a numpy dtype); the other arguments are the operator's.

    Raises what the operator raises before a launch: TypeError/ValueError for a bad argument, ValueError for
    tiling_overrides on a matmul route, TilingValidationError for overrides that make an illegal tiling.
    validate_overrides=False applies the overrides unchecked, so that a caller can show what they break
    (tiling.conv3d_backprop_input.arch22.validate); the operator never launches such a tiling.
    """
    if not isinstance(route, str) or route not in ROUTES:
        raise ValueError(f"route={route!r} is not supported; allowed: {ROUTES}")
    tiling_overrides = overrides_mapping(tiling_overrides)
    user = check_problem(input_size, filter_shape, out_backprop_shape, dtype, strides, pads, dilations, groups,
                         data_format, filter_format, platform, enable_hf32)
    mode = (aclnn_matmul_mode(user, user.data_format, filter_format, user.dilations_given) if route == "aclnn"
            else None)
    if mode is not None:
        if tiling_overrides:
            raise ValueError(f"tiling_overrides set fields of the conv kernel's tiling, but with route='aclnn' this "
                             f"case runs as a matmul ({mode}); pass route='v2' to run the conv kernel")
        return Conv3dDxPlan(user, "matmul", kernel_problem=user, matmul_mode=mode)
    problem, rewrite = normalise_problem(user)
    try:
        args = check_conv3d_dx_args(problem.dy_shape, problem.filter_shape, problem.dx_shape, problem.strides,
                                    problem.pads, problem.dilations, problem.groups, problem.dtype,
                                    problem.platform, problem.enable_hf32)
    except ValueError as err:
        if rewrite.identity:
            raise
        raise ValueError(f"{err} (in the rewritten problem: {'; '.join(rewrite.describe())})") from None
    tiling = tiling_for_args(args)
    notes = rewrite.describe()
    if tiling.enableKernelSplit:
        # The real host marks two hard-wired shapes on 20/24-core chips for the kernel-split variant, which the
        # A2 Conv3DBackpropInputV2 entry does not run (it would return with dx unwritten; validate() refuses the
        # flag). The same tiling values are legal for the general driver, which computes dx.
        key = tiling.tiling_key
        tiling = tiling.with_overrides(enableKernelSplit=False)
        notes.append(f"enableKernelSplit cleared (tiling key {key} -> {tiling.tiling_key}): the A2 "
                     "Conv3DBackpropInputV2 entry runs no driver with it and would leave dx unwritten; the same "
                     "tiling values run on the general driver (docs/conv3d_backprop_input.md)")
    if tiling_overrides:
        # validated on the problem's platform (unless validate_overrides=False): refused here, before any launch
        tiling = tiling.with_overrides(validate=validate_overrides, **tiling_overrides)
    if tiling.conv3DDxTiling.initOutputFlag != 1 and needs_output_init(problem):
        tiling = tiling.with_overrides(validate=validate_overrides, initOutputFlag=1)
        notes.append("initOutputFlag forced to 1: some dx elements receive no contribution")
    return Conv3dDxPlan(user, "v2", kernel_problem=problem, rewrite=rewrite, tiling=tiling, notes=notes,
                        y_format=kernel_y_format(problem, user.data_format))


def kernel_y_format(p: ConvProblem, data_format: str) -> str:
    """The y format aclnn gives Conv3DBackpropInputV2 on this platform: "NCDHW" (the MIX AIC:AIV 1:1 build writes
    dx itself) or "NDC1HWC0" (the host converts).

    aclnn (convolutionbackward.cpp, Conv3DBackpropInputWithFlag) sets y's storage format to NCDHW when the V2
    kernel runs without HF32 on fp16/bf16 and the chip is not a regbase one (arch 3510, whose arch35 kernel is not
    modelled); aclnn's tensors are NCDHW, so data_format="NDHWC" (the graph interface) keeps NDC1HWC0."""
    if data_format == "NCDHW" and p.dtype != "float32" and not p.enable_hf32 and p.platform.npu_arch == 2201:
        return FORMAT_NCDHW
    return FORMAT_NDC1HWC0


def needs_output_init(p: ConvProblem) -> bool:
    """Whether some dx element receives no contribution that the kernel writes (exact, for a normalised problem).

    With zero insertion every dx row/column inside the computed range is written (zeros if nothing reaches it);
    the kernel leaves unwritten: output depths with no valid kernel plane, trailing planes/rows dropped by
    ReCalSingleCoreShapeForOutputPad, and tiles skipped by JudgeIterateSkip (only when the flag is already 1).
    """
    _, _, di, hi, _ = p.dx_shape
    dout = p.dy_shape[2]
    kd, kh = p.filter_shape[2], p.filter_shape[3]
    (sd, sh, _), (dd, dh, _) = p.strides, p.dilations
    pf, pb, pu, pdn = p.pads[:4]
    for d in range(di):
        if not any((t := d + pf - k * dd) >= 0 and t % sd == 0 and t < dout * sd for k in range(kd)):
            return True
    d_rest = (di + pf + pb - ((kd - 1) * dd + 1)) % sd
    h_rest = (hi + pu + pdn - ((kh - 1) * dh + 1)) % sh
    return d_rest > pb or h_rest > pdn
