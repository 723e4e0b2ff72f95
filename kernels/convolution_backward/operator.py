"""The host operator: convolution_backward(grad_output, input, weight, ...) on the simulated A2 chip or Ascend 950.

On the 950 (npu_arch 3510) the route is routing_arch35.py's: grad_input on the arch35 dx kernel or aclnn's 950
matmul shortcuts, grad_weight only by aclnn's dw matmul shortcuts (the arch35 dw kernel is not ported: other
problems are refused by name), no transposed convolution, no 1D. Steps, as aclnnConvolutionBackward on A2
(routing.py says which function each follows):
1. check every argument (arguments.py), route the problem (routing.py) and plan each asked-for cube kernel (its
   argument checks and tiling), all before the first launch;
2. grad_bias: the AIV reduction kernel (bias_grad.py) on gradOutput in its own dtype;
3. grad_input: Conv3DBackpropInputV2 or its matmul shortcut (the dx operator, kernels/conv3d_backprop_input), or
   for a transposed convolution the forward Conv3DV2 of gradOutput with the weight;
4. grad_weight: Conv3DBackpropFilterV2 (kernels/conv3d_backprop_filter; input and gradOutput swapped when
   transposed) or the kernel == feature map MatMul;
5. the results viewed back to NCL / NCHW and cast to their dtypes (grad_input: input's, grad_weight: weight's).
The Cast / TransData / view kernels aclnn launches around the cube kernels are done on the host, in numpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.passes.trace import write_chrome_trace_of_launches
from kernels.common.operands import stand_in
from kernels.common.run import Run
from kernels.common.run_options import check_run_options
from kernels.common.size_guard import RunEstimate, check_fits, combined
from kernels.conv3d_backprop_filter.operator import (conv3d_backprop_filter_v2_run, estimate_conv3d_dw,
                                                     rows_beyond_reach)
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run, estimate_conv3d_dx
from kernels.conv3d_backprop_input.operator_arch35 import estimate_dx_arch35, plan_dx_arch35
from kernels.conv3d_backprop_input.plan import plan_conv3d_dx
from kernels.conv3d_v2.operator import conv3d_v2_run, estimate_conv3d_v2, plan_conv3d_v2_tiling
from kernels.convolution_backward.arguments import ConvBackwardArgs, check_arguments
from kernels.convolution_backward.bias_grad import bias_grad_tiling, estimate_bias_grad, run_bias_grad
from kernels.convolution_backward.routing import FM_EQ_KERNEL, Route, route
from kernels.convolution_backward.routing_arch35 import route_arch35
from kernels.convolution_backward.v2_or_tbe import conv3d_dw_tbe_reason, conv3d_dx_tbe_reason
from kernels.matmul import MatmulTiling, run_matmul
from kernels.matmul.operator import default_block_dim, estimate_matmul
from tiling import check_conv3d_dw_args, conv3d_backprop_filter_tiling
from tiling.conv3d_v2 import check_conv3d_v2_args

BIAS_NOTE = ("grad_bias: ReduceSum over N and the spatial axes (CalculateBiasGrad) by our own AIV kernel; the real "
             "ReduceSum kernel and tiling are not modelled")


@dataclass
class ConvBackwardRun:
    grad_input: np.ndarray | None
    grad_weight: np.ndarray | None
    grad_bias: np.ndarray | None
    args: ConvBackwardArgs
    route: Route
    launches: list[Run]  # one per kernel launched, in launch order (gradient and kernel name it)

    @property
    def cycles(self) -> float:
        """The launches run one after another on one stream."""
        return sum(launch.report.cycles for launch in self.launches)

    @property
    def microseconds(self) -> float:
        return sum(launch.report.microseconds for launch in self.launches)

    @property
    def notes(self) -> list[str]:
        return [*self.route.notes, *(note for launch in self.launches for note in launch.notes)]


def _plan(a: ConvBackwardArgs, r: Route) -> list:
    """The cube kernels' own argument checks and tilings, before any launch (their errors name their limits).
    Returns each launch's size estimate, a function of (execute, check_races) (kernels/common/size_guard.py)."""
    v, m = r.view, r.math
    estimates = []
    if a.output_mask[2]:
        n, c = a.grad_output_shape[:2]
        bias = bias_grad_tiling(n, c, math.prod(a.grad_output_shape[2:]), DTYPES[a.dtype].itemsize,
                                a.platform.aiv_cores)
        estimates.append(lambda execute, check_races: estimate_bias_grad(
            bias, DTYPES[a.dtype].itemsize, execute=execute, check_races=check_races))
    if a.output_mask[0] and a.transposed:
        forward = check_conv3d_v2_args(v.grad_output_shape, v.weight_shape, v.strides, v.pads, v.dilations, a.groups,
                                       m.dtype, a.platform, False, m.hf32)
        tiling = plan_conv3d_v2_tiling(forward)
        estimates.append(lambda execute, check_races: estimate_conv3d_v2(forward, tiling, execute=execute,
                                                                         check_races=check_races))
    if a.output_mask[0] and not a.transposed:
        dx_args = dict(strides=(1, 1, *v.strides), pads=v.pads, dilations=(1, 1, *v.dilations), groups=a.groups,
                       data_format="NCDHW", filter_format="NCDHW", platform=a.platform, enable_hf32=m.hf32,
                       route=r.dx_route)
        if a.platform.npu_arch == 3510:
            dx = plan_dx_arch35(v.input_shape, v.weight_shape, v.grad_output_shape, m.dtype, **dx_args)
            estimates.append(lambda execute, check_races: estimate_dx_arch35(
                *dx, DTYPES[m.dtype].itemsize, execute=execute, check_races=check_races))
        else:
            dx = plan_conv3d_dx(v.input_shape, v.weight_shape, v.grad_output_shape, m.dtype, **dx_args)
            estimates.append(lambda execute, check_races: estimate_conv3d_dx(dx, execute=execute,
                                                                             check_races=check_races))
    if a.output_mask[1] and r.dw_matmul is None:
        fmap, dy = (v.grad_output_shape, v.input_shape) if a.transposed else (v.input_shape, v.grad_output_shape)
        kh = v.weight_shape[3]
        fmap, pads = rows_beyond_reach(fmap, v.pads, kh, v.dilations[1] if kh > 1 else 1)  # as dw will launch
        check_conv3d_dw_args(fmap, v.weight_shape, dy, v.strides, pads, v.dilations, a.groups, m.dtype, a.platform,
                             m.hf32, False)
        estimates.append(lambda execute, check_races: estimate_conv3d_dw(
            conv3d_backprop_filter_tiling(fmap, v.weight_shape, dy, v.strides, pads, v.dilations, a.groups,
                                          dtype=m.dtype, platform=a.platform, enable_hf32=m.hf32),
            fmap, dy, v.weight_shape, a.groups, DTYPES[m.dtype].itemsize, execute=execute, check_races=check_races))
    if a.output_mask[1] and r.dw_matmul is not None:
        gemm = _dw_matmul_tiling(r)
        estimates.append(lambda execute, check_races: estimate_matmul(
            gemm, default_block_dim(gemm, a.platform.aic_cores), execute=execute, check_races=check_races))
    return estimates


def _dw_matmul_tiling(r: Route) -> MatmulTiling:
    """The GEMM of grad_weight's MatMul shortcut r.dw_matmul: CalculateConv3DBackwardDwByMmMode's dy^T (Cout x N) .
    x (N x Cin*D*H*W), or Is1x1DwTransToMm's (Ascend 950, batch 1) dy (Cout x D*H*W) . x^T (D*H*W x Cin)."""
    v, m = r.view, r.math
    if r.dw_matmul == FM_EQ_KERNEL:
        n, cout = v.grad_output_shape[:2]
        return MatmulTiling.for_shape(cout, math.prod(v.input_shape[1:]), n, m.dtype, hf32=m.hf32)
    cout, cin = v.weight_shape[:2]
    return MatmulTiling.for_shape(cout, cin, math.prod(v.input_shape[2:]), m.dtype, hf32=m.hf32)


def _grad_input(a, r, go, x, w, kw) -> Run:
    v, m = r.view, r.math
    common = dict(strides=(1, 1, *v.strides), pads=v.pads, dilations=(1, 1, *v.dilations), groups=a.groups,
                  data_format="NCDHW", filter_format="NCDHW", platform=a.platform, enable_hf32=m.hf32)
    if a.transposed:
        run = conv3d_v2_run(go, w, **common, **kw)
        return replace(run, gradient="grad_input", kernel="Conv3DV2",
                       notes=["grad_input: the forward Conv3DV2 of gradOutput with the weight "
                              "(CalcConv3DBackTransposeInputGrad)", *run.notes])
    run = conv3d_backprop_input_v2_run(v.input_shape, w, go, **common, route=r.dx_route, **kw)
    kernel = "Conv3DBackpropInputV2" if run.route == "v2" else f"MatMul ({run.matmul_mode})"
    notes = list(run.notes)
    tbe = (conv3d_dx_tbe_reason(v, a.groups, m.dtype, 3 if a.spatial == 3 else 6)
           if r.as_3d_in_aclnn and a.platform.npu_arch == 2201 else None)  # the 950 always takes V2
    if run.route == "v2" and tbe:
        notes.append(f"grad_input: real A2 runs the TBE Conv3DBackpropInput here ({tbe}; white lists not "
                     "consulted); simulated with Conv3DBackpropInputV2")
    return replace(run, gradient="grad_input", kernel=kernel, notes=notes)


def _grad_weight_by_matmul(a, r, go, x, kw) -> Run:
    """grad_weight by one of aclnn's MatMul shortcuts (r.dw_matmul), the operands arranged on the host as aclnn's
    transposes flag them (copied by the upload)."""
    v, m = r.view, r.math
    if r.dw_matmul == FM_EQ_KERNEL:  # CalculateConv3DBackwardDwByMmMode: dy^T (Cout x N) . x (N x Cin*D*H*W)
        n, cout = v.grad_output_shape[:2]
        left, right = go.reshape(n, cout).T, x.reshape(n, -1)  # isLeftTranspose
        note = ("grad_weight: kernel == feature map, computed by a MatMul of gradOutput^T and input "
                "(CONV3D_BP_MM_FEATURE_MAP_EQ_KERNEL, CalculateConv3DBackwardDwByMmMode)")
    else:  # DW_1X1, Is1x1DwTransToMm (950): dy (Cout x DHW) . x^T (DHW x Cin), batch 1
        cout, cin = v.weight_shape[:2]
        left, right = go.reshape(cout, -1), x.reshape(cin, -1).T  # isRightTranspose
        note = ("grad_weight: 1x1x1 kernel, batch 1, computed by a MatMul of gradOutput and input^T "
                "(Is1x1DwTransToMm, GenConvMmDwInputBy1x1Mode; Ascend 950)")
    run = run_matmul(left, right, platform=a.platform, tiling=_dw_matmul_tiling(r), hf32=m.hf32,
                     execute=kw["execute"], check_races=kw["check_races"], engine=kw["engine"], hooks=kw["hooks"],
                     max_memory=kw["max_memory"])
    result = run.result.reshape(v.weight_shape) if kw["execute"] else None
    return replace(run, result=result, notes=[note], gradient="grad_weight", kernel=f"MatMul ({r.dw_matmul})")


def _grad_weight(a, r, go, x, kw) -> Run:
    v, m = r.view, r.math
    if r.dw_matmul is not None:
        return _grad_weight_by_matmul(a, r, go, x, kw)
    fmap, dy = (go, x) if a.transposed else (x, go)
    run = conv3d_backprop_filter_v2_run(fmap, v.weight_shape, dy, strides=(1, 1, *v.strides), pads=v.pads,
                                        dilations=(1, 1, *v.dilations), groups=a.groups, data_format="NCDHW",
                                        filter_format="NCDHW", platform=a.platform, enable_hf32=m.hf32, **kw)
    notes = ["grad_weight: Conv3DBackpropFilterV2 with input and gradOutput swapped (transposed)"] if a.transposed \
        else []
    tbe = (conv3d_dw_tbe_reason(v, a.groups, m.dtype, 32 // DTYPES[m.dtype].itemsize)
           if r.as_3d_in_aclnn and not a.transposed and a.platform.npu_arch == 2201 else None)
    if tbe:
        notes.append(f"grad_weight: real A2 runs the TBE Conv3DBackpropFilter here ({tbe}; white lists not "
                     "consulted); simulated with Conv3DBackpropFilterV2")
    return replace(run, gradient="grad_weight", kernel="Conv3DBackpropFilterV2", notes=notes)


@dataclass(frozen=True)
class ConvBackwardPlan:
    """A checked and routed problem whose cube kernels have passed their own checks: nothing is refused after
    this, short of a simulated kernel fault (and the dw operator's L1 check after its pad-row rewrite, which runs
    at its call: docs/convolution_backward.md)."""

    args: ConvBackwardArgs
    route: Route
    estimates: tuple = ()  # each launch's size estimate, a function of (execute, check_races)


# what makes a convolution_backward run need less (size_guard.REMEDIES): it keeps every record
CONV_BACKWARD_REMEDIES = ("execute", "check_races")


def estimate_convolution_backward(plan: ConvBackwardPlan, *, execute: bool = True,
                                  check_races: bool = True) -> RunEstimate:
    """What the plan's launches take together (kernels/common/size_guard.py): each launch's own estimate, all
    held at the end (the run keeps every launch's result and report)."""
    return combined([estimate(execute, check_races) for estimate in plan.estimates])


def plan_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                              output_padding, groups, output_mask, cube_math_type=0, *,
                              platform="Ascend910B2") -> ConvBackwardPlan:
    """Every check of convolution_backward, with nothing launched (ValueError / TypeError)."""
    a = check_arguments(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                        output_padding, groups, output_mask, cube_math_type, platform)
    r = route_arch35(a) if a.platform.npu_arch == 3510 else route(a)
    return ConvBackwardPlan(a, r, tuple(_plan(a, r)))


def run_plan(plan: ConvBackwardPlan, grad_output, input, weight, *, execute=True, trace=None, check_races=True,
             engine="auto", hooks: dict | None = None, max_memory=None) -> ConvBackwardRun:
    """Launch the kernels of a plan on arrays of the planned shapes and dtype. hooks: {gradient: [hook, ...]}, the
    simulator hooks of that gradient's launch (`ascend-sim debug conv-backward` captures one launch); max_memory:
    the run is refused before anything is allocated if its launches are estimated to need more together
    (estimate_convolution_backward; each launch also checks its own)."""
    check_run_options(trace=trace, execute=execute, check_races=check_races)
    a, r = plan.args, plan.route
    v, cube = r.view, DTYPES[r.math.dtype]
    check_fits(estimate_convolution_backward(plan, execute=execute, check_races=check_races), max_memory,
               CONV_BACKWARD_REMEDIES)  # before the operands' casts and the first launch
    if execute:
        go = np.ascontiguousarray(grad_output).reshape(v.grad_output_shape).astype(cube, copy=False)
        x = np.ascontiguousarray(input).reshape(v.input_shape).astype(cube, copy=False)
        w = np.ascontiguousarray(weight).reshape(v.weight_shape).astype(cube, copy=False)
    else:  # timing-only: size-only stand-ins, no cast or copy of operands whose bytes nothing reads
        go, x, w = (stand_in(shape, cube) for shape in (v.grad_output_shape, v.input_shape, v.weight_shape))
    kw = dict(execute=execute, check_races=check_races, engine=engine)
    hooks = hooks or {}
    cube_kw = {**kw, "max_memory": max_memory}
    launches, grads = [], [None, None, None]
    if a.output_mask[2]:  # CalculateBiasGrad runs first
        bias = run_bias_grad(grad_output, platform=a.platform, hooks=hooks.get("grad_bias"), **kw)
        grads[2] = bias.result
        launches.append(replace(bias, gradient="grad_bias", kernel="ReduceSum (AIV)", notes=[BIAS_NOTE]))
    # each launch's result becomes the gradient as returned (the kernel's own array is not kept beside it)
    if a.output_mask[0]:
        launch = _grad_input(a, r, go, x, w, {**cube_kw, "hooks": hooks.get("grad_input")})
        if launch.result is not None:
            launch.result = grads[0] = launch.result.reshape(a.input_shape).astype(input.dtype)
        launches.append(launch)
    if a.output_mask[1]:
        launch = _grad_weight(a, r, go, x, {**cube_kw, "hooks": hooks.get("grad_weight")})
        if launch.result is not None:
            launch.result = grads[1] = launch.result.reshape(a.weight_shape).astype(weight.dtype)
        launches.append(launch)
    if trace is not None:  # one trace: the launches one after the other, as the stream runs them
        write_chrome_trace_of_launches([(launch.gradient, launch.report) for launch in launches], str(trace))
        for launch in launches:
            launch.trace_path = str(trace)
    return ConvBackwardRun(*grads, a, r, launches)


def convolution_backward_run(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                             output_padding, groups, output_mask, cube_math_type=0, *, platform="Ascend910B2",
                             execute=True, trace=None, check_races=True, engine="auto",
                             hooks: dict | None = None, max_memory=None) -> ConvBackwardRun:
    """Run convolution_backward on the simulator and return the whole record (see convolution_backward).

    execute=False is the timing-only mode (results None). trace: a path for one Chrome/Perfetto trace of every
    launch, one after the other (launch i's cores are processes i * 1000 + core, named by the gradient). hooks:
    {gradient: [hook, ...]} for that gradient's launch (Chip hooks). engine: "auto" | "exact" | "fast"
    (ascend_sim.Chip). max_memory: the bytes the run may take (run_plan; kernels/common/size_guard.py)."""
    plan = plan_convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                     output_padding, groups, output_mask, cube_math_type, platform=platform)
    return run_plan(plan, grad_output, input, weight, execute=execute, trace=trace, check_races=check_races,
                    engine=engine, hooks=hooks, max_memory=max_memory)


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask, cube_math_type=0, *, platform="Ascend910B2"):
    """The gradients of a 1D / 2D / 3D convolution, as torch.ops.aten.convolution_backward, on the simulated A2
    (or on an Ascend 950, where its kernels are ported: routing_arch35.py).

    grad_output, input, weight: numpy arrays, NCL / NCHW / NCDHW, one dtype of float16, bfloat16 (ml_dtypes) or
    float32. bias_sizes: [Cout] (None when grad_bias is not asked for). stride, dilation, output_padding: one
    value per spatial axis; padding: one per spatial axis (2D also [up, down, left, right]). transposed: a
    transposed convolution. groups: int. output_mask: 3 bools (grad_input, grad_weight, grad_bias).
    cube_math_type: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32 (A2 meaning: cube_math.py).
    Returns (grad_input, grad_weight, grad_bias), None where output_mask is False; grad_input has input's dtype,
    grad_weight weight's and grad_bias grad_output's.
    """
    run = convolution_backward_run(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                                   output_padding, groups, output_mask, cube_math_type, platform=platform)
    return run.grad_input, run.grad_weight, run.grad_bias
