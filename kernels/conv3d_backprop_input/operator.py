"""The host operator: conv3d_backprop_input_v2(input_size, filter, out_backprop, ...) on the simulated chip.

Steps (what aclnn + the V2 op do on A2, done here on the host in numpy where the real stack uses TransData):
1. check the arguments (type, rank, format, dtype, ranges, the convolution formula, groups; arguments.py)
   before any launch;
   with route="aclnn" (the default), the cases aclnn computes with a (Batch)MatMul instead of the conv kernel
   (kernel == stride with x exactly tiled, feature map == kernel, 1x1x1 on Ascend 950) run the matmul kernel
   and stop here (see matmul_route.py); route="v2" always runs the conv kernel;
2. rewrite the problem into the kernel's envelope where the real stack would route it elsewhere (see
   `normalise_problem`): pads larger than the kernel reach become extra dx rows/planes that are cropped at the
   end, and strideD > kD becomes a kernel padded with zero planes;
3. dy -> NDC1HWC0, filter -> FRACTAL_Z_3D (with the groups enlarge rule);
4. the tiling (tiling.tiling_for_args), optional overrides;
5. launch the kernel entry on coreNum simulated cube cores; the output buffer starts as NaN ("GM garbage"), so
   any element the kernel fails to write shows up;
6. NDC1HWC0 -> data_format, crop.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ascend_sim import Chip
from ascend_sim.dtypes import DTYPES
from ascend_sim.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0, ndc1hwc0_to_ncdhw, ndc1hwc0_to_ndhwc
from ascend_sim.report import RunReport
from ascend_sim.tensor import GmAddr

from .arguments import DATA_FORMATS, FILTER_FORMATS, Problem, check_arguments  # noqa: F401 (re-exported)
from .kernel import conv3d_backprop_input_v2 as _kernel_entry
from .matmul_route import aclnn_matmul_mode, dx_by_matmul

ROUTES = ("aclnn", "v2")


# ------------------------------------------------------------------------------------------------- rewriting
@dataclass(frozen=True)
class Rewrite:
    """How the problem handed to the kernel differs from the user's: extra dx entries before/after (D, H, W)
    that are cropped from the result, and zero kernel planes appended in depth."""

    extra_before: tuple[int, int, int] = (0, 0, 0)
    extra_after: tuple[int, int, int] = (0, 0, 0)
    zero_kernel_planes: int = 0
    depth_dilation: int = 1

    @property
    def identity(self) -> bool:
        return self.extra_before == (0, 0, 0) and self.extra_after == (0, 0, 0) and not self.zero_kernel_planes

    def describe(self) -> list[str]:
        notes = []
        depth_zero = self.zero_kernel_planes * self.depth_dilation
        for i, axis in enumerate("DHW"):
            after = self.extra_after[i] - (depth_zero if i == 0 else 0)
            if self.extra_before[i] or after:
                notes.append(f"{axis}: pads beyond the kernel reach moved into dx ({self.extra_before[i]} entries "
                             f"before, {after} after; cropped from the result)")
        if self.zero_kernel_planes:
            notes.append(f"D: strideD > kD, {self.zero_kernel_planes} zero kernel planes appended (kD = strideD) "
                         f"and {depth_zero} dx planes added at the end; cropped from the result")
        return notes


def normalise_problem(p: Problem) -> tuple[Problem, Rewrite]:
    """An equivalent problem inside the A2 V2 kernel's envelope.

    - pad > (k-1)*dilation on any side (aclnn sends these to the V1 operator): the rows/planes of the padded
      input that lie beyond the kernel's reach become extra zero dx entries, e = pad - (k-1)*dilation, and the
      pad shrinks to (k-1)*dilation; the gradient of the extra entries is cropped away.
    - strideD > kD (not supported by the V2 kernel): append z = strideD - kD zero planes to the kernel and z*dilD
      extra planes at the end of dx; dy and every real gradient are unchanged.
    """
    n, cin, *sizes = p.dx_shape
    pads = list(p.pads)
    kernel = list(p.weight.shape[2:])
    before, after = [0, 0, 0], [0, 0, 0]
    for i in range(3):
        reach = (kernel[i] - 1) * p.dilations[i]
        for j, extra in ((2 * i, before), (2 * i + 1, after)):
            if pads[j] > reach:
                extra[i] = pads[j] - reach
                pads[j] = reach
    weight = p.weight
    dilations = list(p.dilations)
    zero_planes = 0
    if p.strides[0] > kernel[0]:
        zero_planes = p.strides[0] - kernel[0]
        weight = np.concatenate([weight, np.zeros(weight.shape[:2] + (zero_planes,) + weight.shape[3:],
                                                  dtype=weight.dtype)], axis=2)
        after[0] += zero_planes * dilations[0]
    new_sizes = tuple(s + b + a for s, b, a in zip(sizes, before, after))
    rewrite = Rewrite(tuple(before), tuple(after), zero_planes, dilations[0])
    return replace(p, dx_shape=(n, cin, *new_sizes), weight=np.ascontiguousarray(weight), pads=tuple(pads),
                   dilations=tuple(dilations)), rewrite


def needs_output_init(p: Problem) -> bool:
    """Whether some dx element receives no contribution that the kernel writes (exact, for a normalised problem).

    With zero insertion every dx row/column inside the computed range is written (zeros if nothing reaches it);
    the kernel leaves unwritten: output depths with no valid kernel plane, trailing planes/rows dropped by
    ReCalSingleCoreShapeForOutputPad, and tiles skipped by JudgeIterateSkip (only when the flag is already 1).
    """
    _, _, di, hi, _ = p.dx_shape
    dout = p.dy.shape[2]
    kd, kh = p.weight.shape[2], p.weight.shape[3]
    (sd, sh, _), (dd, dh, _) = p.strides, p.dilations
    pf, pb, pu, pdn = p.pads[:4]
    for d in range(di):
        if not any((t := d + pf - k * dd) >= 0 and t % sd == 0 and t < dout * sd for k in range(kd)):
            return True
    d_rest = (di + pf + pb - ((kd - 1) * dd + 1)) % sd
    h_rest = (hi + pu + pdn - ((kh - 1) * dh + 1)) % sh
    return d_rest > pb or h_rest > pdn


# ------------------------------------------------------------------------------------------------- run
@dataclass
class Conv3dDxRun:
    """What one operator call did: the result, the tiling it used, the simulator's report, and notes.

    route: "v2" (the Conv3DBackpropInputV2 kernel; tiling is its TilingData) or "matmul" (aclnn's matmul shortcut,
    matmul_mode says which; tiling is the matmul kernel's MatmulTiling)."""

    result: np.ndarray | None
    tiling: Any
    report: RunReport
    rewrite: Rewrite
    notes: list[str] = field(default_factory=list)
    trace_path: str | None = None
    route: str = "v2"
    matmul_mode: str | None = None

    @property
    def cycles(self) -> float:
        return self.report.cycles

    @property
    def microseconds(self) -> float:
        return self.report.microseconds


def _launch(problem: Problem, tiling_data, *, execute: bool, check_races: bool, poison_output: bool, hooks):
    dtype = DTYPES[problem.dtype]
    n, cin, di, hi, wi = problem.dx_shape
    c0 = 32 // dtype.itemsize
    cin1 = -(-cin // c0)
    chip = Chip(problem.platform, execute=execute, check_races=check_races, hooks=hooks)
    dy_5hd = ncdhw_to_ndc1hwc0(problem.dy.astype(dtype, copy=False))
    w_fz = filter_to_fractal_z_3d(problem.weight.astype(dtype, copy=False), problem.groups, "NCDHW")
    dy_gm = chip.gm.upload("out_backprop", dy_5hd)
    w_gm = chip.gm.upload("filter", w_fz)
    y_elems = n * di * cin1 * hi * wi * c0
    y_gm = chip.gm.alloc("y", y_elems * dtype.itemsize)
    if poison_output and execute:
        y_gm.data.view(dtype)[:] = np.nan
    report = chip.launch(_kernel_entry, tiling_data.params.coreNum, None, GmAddr(w_gm), GmAddr(dy_gm), GmAddr(y_gm),
                         None, tiling_data, tiling_key=tiling_data.tiling_key, dtype=dtype)
    y = y_gm.data.view(dtype).reshape(n, di, cin1, hi, wi, c0).copy() if execute else None
    return y, report


def conv3d_backprop_input_v2_run(input_size, filter, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1),
                                 groups=1, data_format="NDHWC", filter_format="NCDHW", platform="Ascend910B2",
                                 enable_hf32=False, execute=True, trace=None, tiling_overrides=None,
                                 check_races=True, poison_output=True, hooks=None, route="aclnn") -> Conv3dDxRun:
    """Run Conv3DBackpropInputV2 on the simulator and return the whole record (see conv3d_backprop_input_v2).

    route="aclnn" (default): like aclnnConvolutionBackward on the platform, the cases it computes with a
    (Batch)MatMul (matmul_route.py) run the matmul kernel; everything else runs the conv kernel.
    route="v2": always the Conv3DBackpropInputV2 kernel. run.route / run.matmul_mode say what ran.

    execute=False runs the timing-only mode (no data moved, result None). trace: a path for the
    Chrome/Perfetto trace. tiling_overrides: {field: value} applied to the generated tiling by real field name;
    the result is validated (tiling.validate) before the launch, and an illegal one raises TilingValidationError
    (a ValueError) naming each broken rule as field=value, an unknown field ValueError with the close matches.
    poison_output fills y with NaN before the launch so that an element the kernel never writes is visible.
    hooks: callables `hook(core, instruction)` run after every instruction (progress, stepping, inspection).
    """
    from tiling import check_conv3d_dx_args, tiling_for_args

    if not isinstance(route, str) or route not in ROUTES:
        raise ValueError(f"route={route!r} is not supported; allowed: {ROUTES}")
    if tiling_overrides is not None and not isinstance(tiling_overrides, Mapping):
        raise TypeError(f"tiling_overrides={tiling_overrides!r} must be a dict of tiling field names to integers")
    user = check_arguments(input_size, filter, out_backprop, strides, pads, dilations, groups, data_format,
                           filter_format, platform, enable_hf32)
    mode = aclnn_matmul_mode(user, data_format, filter_format, user.dilations_given) if route == "aclnn" else None
    if mode is not None:
        if tiling_overrides:
            raise ValueError(f"tiling_overrides set fields of the conv kernel's tiling, but with route='aclnn' this "
                             f"case runs as a matmul ({mode}); pass route='v2' to run the conv kernel")
        mm = dx_by_matmul(user, mode, execute=execute, check_races=check_races, poison_output=poison_output,
                          hooks=hooks)
        trace_path = None
        if trace is not None:
            trace_path = str(trace)
            mm.report.write_trace(trace_path)
        # mm.result is NCDHW, which is data_format: every matmul mode needs NCDHW data
        return Conv3dDxRun(mm.result, mm.tiling, mm.report, Rewrite(), mm.notes, trace_path, "matmul", mode)
    problem, rewrite = normalise_problem(user)
    try:
        args = check_conv3d_dx_args(problem.dy.shape, problem.weight.shape, problem.dx_shape, problem.strides,
                                    problem.pads, problem.dilations, problem.groups, problem.dtype,
                                    problem.platform, problem.enable_hf32)
    except ValueError as err:
        if rewrite.identity:
            raise
        raise ValueError(f"{err} (in the rewritten problem: {'; '.join(rewrite.describe())})") from None
    tiling_data = tiling_for_args(args)
    notes = rewrite.describe()
    if tiling_overrides:
        # validated on the problem's platform: an illegal tiling is refused here, before any launch
        tiling_data = tiling_data.with_overrides(**tiling_overrides)
    if tiling_data.conv3DDxTiling.initOutputFlag != 1 and needs_output_init(problem):
        tiling_data = tiling_data.with_overrides(initOutputFlag=1)
        notes.append("initOutputFlag forced to 1: some dx elements receive no contribution")
    y5, report = _launch(problem, tiling_data, execute=execute, check_races=check_races,
                         poison_output=poison_output, hooks=hooks)
    result = None
    if y5 is not None:
        (bd, bh, bw), (_, _, di, hi, wi) = rewrite.extra_before, user.dx_shape
        y5 = y5[:, bd:bd + di, :, bh:bh + hi, bw:bw + wi]
        cin = user.dx_shape[1]
        result = ndc1hwc0_to_ndhwc(y5, cin) if data_format == "NDHWC" else ndc1hwc0_to_ncdhw(y5, cin)
    trace_path = None
    if trace is not None:
        trace_path = str(trace)
        report.write_trace(trace_path)
    return Conv3dDxRun(result, tiling_data, report, rewrite, notes, trace_path)


def conv3d_backprop_input_v2(input_size, filter, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1),
                             groups=1, data_format="NDHWC", filter_format="NCDHW", platform="Ascend910B2",
                             enable_hf32=False, route="aclnn") -> np.ndarray:
    """dx of a 3D convolution, computed by the simulated A2 Conv3DBackpropInputV2 kernel.

    input_size: the 5 dims of x in data_format order. filter: (Cout, Cin/groups, kD, kH, kW) in filter_format
    (NCDHW, NDHWC = (Cout, kD, kH, kW, Cin/groups) or DHWCN). out_backprop: dy in data_format. strides and
    dilations: 5 ints in data_format order (N and C must be 1); pads: (front, back, top, bottom, left, right).
    dtype: float16, bfloat16 (ml_dtypes) or float32, the same for filter and out_backprop; fp32 uses HF32 only if
    enable_hf32. route: "aclnn" computes the cases aclnn sends to a matmul with the matmul kernel, "v2" always
    uses the conv kernel (see conv3d_backprop_input_v2_run). Returns dx as a numpy array of that dtype in
    data_format.
    """
    return conv3d_backprop_input_v2_run(
        input_size, filter, out_backprop, strides=strides, pads=pads, dilations=dilations, groups=groups,
        data_format=data_format, filter_format=filter_format, platform=platform, enable_hf32=enable_hf32,
        route=route).result
