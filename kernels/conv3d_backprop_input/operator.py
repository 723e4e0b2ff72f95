"""The host operator: conv3d_backprop_input_v2(input_size, filter, out_backprop, ...) on the simulated chip.

Steps (what aclnn + the V2 op do on A2, done here on the host in numpy where the real stack uses TransData):
1. check the arrays (arguments.check_operands), then plan the run from their shapes (plan.plan_conv3d_dx): the
   argument checks; with route="aclnn" (the default), the cases aclnn computes with a (Batch)MatMul instead of the
   conv kernel (kernel == stride with x exactly tiled, feature map == kernel, 1x1x1 on Ascend 950) run the matmul
   kernel and stop here (see matmul_route.py), route="v2" always runs the conv kernel; the rewrite of the problem
   into the kernel's envelope where the real stack would route it elsewhere (rewrite.py: pads larger than the
   kernel reach become extra dx rows/planes that are cropped at the end, strideD > kD becomes a kernel padded
   with zero planes); the tiling (tiling.tiling_for_args), optional overrides, initOutputFlag where needed;
2. dy -> NDC1HWC0, filter -> FRACTAL_Z_3D (with the groups enlarge rule);
3. launch the kernel entry on coreNum AI cores; the output buffer starts as NaN ("GM garbage"), so any element
   the kernel fails to write shows up. For fp16/bf16 NCDHW (plan.y_format "NCDHW", as aclnn runs it) the launch
   is MIX_AIC_1_1 with a user workspace of coreNum x L0C bytes (the tiling's GetWorkspaceSize), and the vector
   cores write NCDHW themselves; otherwise the kernel writes NDC1HWC0 on the cube cores (MIX_AIC_1_0: the init
   pass's barrier is a cross-core flag);
4. NDC1HWC0 -> data_format on the host (the NDC1HWC0 build only), crop.
"""
from __future__ import annotations

import math

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import (filter_to_fractal_z_3d, fractal_z_3d_shape, ncdhw_to_ndc1hwc0,
                                        ndc1hwc0_to_ncdhw, ndc1hwc0_to_ndhwc)
from ascend_sim.machine.platform import get_platform
from ascend_sim.machine.tensor import GmAddr
from kernels.common.operands import default_data_format, require_arch22_kernel
from kernels.common.run import Run, output_buffer, read_output, write_trace
from kernels.common.run_options import check_run_options
from kernels.common.size_guard import RunEstimate, check_fits, conv_estimate, gemm_tiles, streams, tensor_bytes
from kernels.common.tiling_reads import ReadRecorder, flag_unread_overrides
from kernels.conv3d_backprop_input.arguments import check_operands, operands_to_ncdhw
from kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2 import \
    conv3d_backprop_input_v2 as _kernel_entry
from kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2 import driver_class
from kernels.conv3d_backprop_input.kernel.arch22.util import FORMAT_NCDHW
from kernels.conv3d_backprop_input.matmul_route import dx_by_matmul, matmul_gemm
from kernels.conv3d_backprop_input.plan import ROUTES, plan_conv3d_dx  # noqa: F401 (ROUTES re-exported)
from tiling.common.problem import ConvProblem


def estimate_conv3d_dx(plan, *, execute: bool = True, check_races: bool = True, record: bool = True,
                       engine: str = "auto", hooks=None) -> RunEstimate:
    """What a run of this plan will take (kernels/common/size_guard.py); the matmul route is estimated as the GEMM
    aclnn runs (matmul_gemm) with 128 x 128 x 64 tiles on every cube core, and keeps its records whatever `record`
    says (run_matmul has none).
    With record=False, records stay alive behind the init pass's all-core barrier (initOutputFlag 1), or one AIC's
    stream waiting for its AIVs in the MIX NCDHW build; a streamed replay run (`engine`, `hooks`: size_guard.streams)
    holds one AI core's."""
    p = plan.kernel_problem
    itemsize = DTYPES[p.dtype].itemsize
    c0 = 32 // itemsize
    n, cin, di, hi, wi = p.dx_shape
    cout, cin_g, *kernel = p.filter_shape
    k = cout // p.groups * math.prod(kernel)
    pending = 1.0
    if plan.route == "matmul":
        batch, m, n_cols, k_rows = matmul_gemm(p, plan.matmul_mode)
        tiles, cores, workspace = gemm_tiles(batch * m, n_cols, k_rows, 128, 128, 64), p.platform.aic_cores, 0
    else:
        c = plan.tiling.conv3DDxTiling
        cores = plan.tiling.params.coreNum
        tiles = gemm_tiles(n * di * hi * wi, cin_g, k, c.baseM, c.baseN, c.baseK, p.groups)
        workspace = cores * p.platform.L0C if plan.y_format == FORMAT_NCDHW else 0
        if c.initOutputFlag != 1:
            pending = 1 / cores if plan.y_format == FORMAT_NCDHW else 0.0
    inputs = (tensor_bytes(p.dy_shape, itemsize, c0), tensor_bytes(p.filter_shape, itemsize, c0))
    streamed = plan.route != "matmul" and streams(engine, record=record, hooks=hooks, execute=execute,
                                                  check_races=check_races)
    return conv_estimate(inputs, tensor_bytes(p.dx_shape, itemsize, c0), workspace=workspace, tiles=tiles,
                         cores=cores, execute=execute, check_races=check_races, record=record, pending=pending,
                         streamed=streamed)


def _launch(problem: ConvProblem, weight: np.ndarray | None, dy: np.ndarray | None, tiling_data, y_format: str, *,
            execute: bool, check_races: bool, poison_output: bool, hooks, engine: str, record: bool = True):
    """(y in y_format, report): y NCDHW, or NDC1HWC0 as (N, D, C1, H, W, C0). weight and dy (NCDHW) are None in
    timing-only mode: GM then holds size-only allocations of the device shapes and nothing is converted."""
    dtype = DTYPES[problem.dtype]
    n, cin, di, hi, wi = problem.dx_shape
    _, cout, do, ho, wo = problem.dy_shape
    c0 = 32 // dtype.itemsize
    cin1 = -(-cin // c0)
    core_num = tiling_data.params.coreNum
    chip = Chip(problem.platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine,
                record=record)
    dy_gm = chip.gm.place("out_backprop", (n, do, -(-cout // c0), ho, wo, c0), dtype,
                          lambda: ncdhw_to_ndc1hwc0(dy.astype(dtype, copy=False)))
    cout_w, cin_g, *kernel = problem.filter_shape
    w_gm = chip.gm.place("filter", fractal_z_3d_shape(cout_w, cin_g, kernel, problem.groups, dtype), dtype,
                         lambda: filter_to_fractal_z_3d(weight.astype(dtype, copy=False), problem.groups, "NCDHW"))
    ncdhw = y_format == FORMAT_NCDHW
    y_shape = (n, cin, di, hi, wi) if ncdhw else (n, di, cin1, hi, wi, c0)
    y_gm = output_buffer(chip, "y", y_shape, dtype, poison_output)
    workspace = GmAddr(chip.gm.alloc("workspace", core_num * problem.platform.L0C)) if ncdhw else None
    report = chip.launch(_kernel_entry, core_num, None, GmAddr(w_gm), GmAddr(dy_gm), GmAddr(y_gm), workspace,
                         tiling_data, tiling_key=tiling_data.tiling_key, dtype=dtype, yFormat=y_format,
                         kernel_type="MIX_AIC_1_1" if ncdhw else "MIX_AIC_1_0")
    return read_output(chip, y_gm, y_shape, dtype), report


def conv3d_backprop_input_v2_run(input_size, filter, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1),
                                 groups=1, data_format=None, filter_format="NCDHW", platform="Ascend910B2",
                                 enable_hf32=False, execute=True, trace=None, tiling_overrides=None,
                                 check_races=True, poison_output=True, hooks=None, route="aclnn",
                                 engine="auto", max_memory=None, record=True) -> Run:
    """Run Conv3DBackpropInputV2 on the simulator and return the whole record (see conv3d_backprop_input_v2).

    route="aclnn" (default): like aclnnConvolutionBackward on the platform, the cases it computes with a
    (Batch)MatMul (matmul_route.py) run the matmul kernel; everything else runs the conv kernel.
    route="v2": always the Conv3DBackpropInputV2 kernel. run.route / run.matmul_mode say what ran.

    execute=False runs the timing-only mode (no data moved, result None). trace: a path for the
    Chrome/Perfetto trace. tiling_overrides: {field: value} applied to the generated tiling by real field name;
    the result is validated (tiling.conv3d_backprop_input.arch22.validate) before the launch, and an illegal one raises TilingValidationError
    (a ValueError) naming each broken rule as field=value, an unknown field ValueError with the close matches.
    poison_output fills y with NaN before the launch so that an element the kernel never writes is visible.
    hooks: callables `hook(core, instruction)` run after every instruction (progress, stepping, inspection).
    engine: "auto" | "exact" | "fast" (ascend_sim.Chip): the same results, cycles and faults; "auto" is fast
    unless hooks are given. max_memory: the bytes the run may take (default: a fraction of the machine's
    available memory); a run estimated to need more is refused before anything is allocated
    (kernels/common/size_guard.py, MemoryLimitError, a ValueError). record=False keeps no instruction records (the conv
    kernel's route; with engine "auto" each is scheduled as issued and dropped, except those waiting for another
    core: one AIC's stream in the MIX NCDHW build, all behind the init pass's barrier): long timing-only runs in
    much less memory, with the same cycles; the report then has no logs (no trace, no retime).
    """
    check_run_options(trace=trace, execute=execute, check_races=check_races, poison_output=poison_output,
                      record=record)
    platform = get_platform(platform)  # normalised once, here: everything below gets the Platform
    if platform.npu_arch == 3510:
        return _run_arch35(input_size, filter, out_backprop, strides=strides, pads=pads, dilations=dilations,
                           groups=groups, data_format=default_data_format(data_format)[0],
                           filter_format=filter_format, platform=platform,
                           enable_hf32=enable_hf32, execute=execute, trace=trace, tiling_overrides=tiling_overrides,
                           check_races=check_races, poison_output=poison_output, hooks=hooks, engine=engine,
                           route=route, max_memory=max_memory, record=record)
    check_operands(filter, out_backprop)
    require_arch22_kernel("Conv3DBackpropInputV2", platform)  # both routes: the matmul route's kernel is A2's too
    plan = plan_conv3d_dx(input_size, filter.shape, out_backprop.shape, filter.dtype, strides=strides, pads=pads,
                          dilations=dilations, groups=groups, data_format=data_format, filter_format=filter_format,
                          platform=platform, enable_hf32=enable_hf32, route=route, tiling_overrides=tiling_overrides)
    data_format = plan.problem.data_format  # None became NDHWC in the argument checks (with their warning)
    check_fits(estimate_conv3d_dx(plan, execute=execute, check_races=check_races, record=record, engine=engine,
                                  hooks=hooks), max_memory)
    weight, dy = None, None  # timing-only: no host conversion, the operands' bytes are never read
    if execute:
        weight, dy = operands_to_ncdhw(filter, out_backprop, data_format, filter_format)
    if plan.route == "matmul":
        run = dx_by_matmul(plan.problem, weight, dy, plan.matmul_mode, execute=execute, check_races=check_races,
                           poison_output=poison_output, hooks=hooks, engine=engine, max_memory=max_memory)
        # run.result is NCDHW, which is data_format: every matmul mode needs NCDHW data
        run.trace_path = write_trace(run.report, trace)
        return run
    reads: set[str] = set()
    launched = ReadRecorder(plan.tiling, reads) if tiling_overrides else plan.tiling
    kernel_weight = plan.rewrite.filter(weight) if execute else None
    y, report = _launch(plan.kernel_problem, kernel_weight, dy, launched, plan.y_format,
                        execute=execute, check_races=check_races, poison_output=poison_output, hooks=hooks,
                        engine=engine, record=record)
    driver = driver_class(plan.tiling.tiling_key)
    ignored = flag_unread_overrides(tiling_overrides, plan.tiling.fields(), reads,
                                    f"{driver.__name__} (tiling key {plan.tiling.tiling_key})",
                                    driver.COPIED_NOT_USED) if tiling_overrides else []
    result = None
    if y is not None and plan.y_format == FORMAT_NCDHW:
        result = plan.rewrite.crop_ncdhw(y, plan.problem.dx_shape)
    elif y is not None:
        y5 = plan.rewrite.crop(y, plan.problem.dx_shape)
        cin = plan.problem.dx_shape[1]
        result = ndc1hwc0_to_ndhwc(y5, cin) if data_format == "NDHWC" else ndc1hwc0_to_ncdhw(y5, cin)
    return Run(result, plan.tiling, report, [*plan.notes, *ignored], write_trace(report, trace), "v2")


def _run_arch35(input_size, filter, out_backprop, *, strides, pads, dilations, groups, data_format, filter_format,
                platform, enable_hf32, execute, trace, tiling_overrides, check_races, poison_output, hooks,
                engine, route, max_memory, record) -> Run:
    """The Ascend 950: the arch35 tiling (every argument check), aclnn's matmul shortcuts on the 950 with
    route="aclnn" (the 950 example matmul kernel), else the arch35 kernel on the arrays as given
    (operator_arch35.py)."""
    # imported here, where a 950 run needs them: an A2 run does not load the arch35 kernel and tiling
    from kernels.conv3d_backprop_input.operator_arch35 import (ARCH35_REMEDIES, check_operands_950, estimate_arch35,
                                                               launch_arch35, plan_dx_arch35)
    if not isinstance(route, str) or route not in ROUTES:
        raise ValueError(f"route={route!r} is not supported; allowed: {ROUTES}")
    dtype = check_operands_950(filter, out_backprop)
    attributes = dict(strides=strides, pads=pads, dilations=dilations, groups=groups, data_format=data_format,
                      filter_format=filter_format, platform=platform, enable_hf32=enable_hf32)
    tiling, routed, mode = plan_dx_arch35(input_size, filter.shape, out_backprop.shape, dtype, route=route,
                                          tiling_overrides=tiling_overrides, **attributes)
    if mode is not None:  # run_matmul guards the GEMM's size
        run = dx_by_matmul(routed, filter if execute else None, out_backprop if execute else None, mode,
                           execute=execute, check_races=check_races, poison_output=poison_output, hooks=hooks,
                           engine=engine, max_memory=max_memory)
        run.trace_path = write_trace(run.report, trace)
        return run
    check_fits(estimate_arch35(tiling, filter.dtype.itemsize, execute=execute, check_races=check_races), max_memory,
               ARCH35_REMEDIES)
    reads: set[str] = set()
    launched = ReadRecorder(tiling, reads) if tiling_overrides else tiling
    y, report = launch_arch35(launched, filter, out_backprop, input_size, platform=platform, data_format=data_format,
                              filter_format=filter_format, execute=execute, check_races=check_races,
                              poison_output=poison_output, hooks=hooks, engine=engine, record=record)
    notes = [f"arch35 kernel, template {tiling.template}, tiling key {tiling.tiling_key}", *tiling.notes]
    if tiling_overrides:
        reads.add("coreNum")  # the host launches block_dim = coreNum blocks (override_arch35)
        notes += flag_unread_overrides(tiling_overrides, tiling.fields(), reads,
                                       f"the arch35 kernel (tiling key {tiling.tiling_key})")
    return Run(y, tiling, report, notes, write_trace(report, trace), "v2")


def conv3d_backprop_input_v2(input_size, filter, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1),
                             groups=1, data_format=None, filter_format="NCDHW", platform="Ascend910B2",
                             enable_hf32=False, route="aclnn") -> np.ndarray:
    """dx of a 3D convolution, computed by the simulated Conv3DBackpropInputV2 kernel of the platform's arch (the A2
    kernel on npu_arch 2201, the arch35 kernel on the Ascend 950, npu_arch 3510: see operator_arch35.py).

    input_size: the 5 dims of x in data_format order. filter: (Cout, Cin/groups, kD, kH, kW) in filter_format
    (NCDHW, NDHWC = (Cout, kD, kH, kW, Cin/groups) or DHWCN). out_backprop: dy in data_format. strides and
    dilations: 5 ints in data_format order (N and C must be 1); pads: (front, back, top, bottom, left, right).
    dtype: float16, bfloat16 (ml_dtypes) or float32 (on the 950 also hifloat8 (en_dtypes) and float8_e4m3fn,
    NCDHW only), the same for filter and out_backprop; fp32 uses HF32 only if enable_hf32. route: "aclnn" computes the cases aclnn sends to a matmul with the matmul kernel, "v2" always
    uses the conv kernel (see conv3d_backprop_input_v2_run). Returns dx as a numpy array of that dtype in
    data_format. data_format not given is NDHWC, as the real operator; when the shapes also fit NCDHW a
    DataFormatAssumedWarning says so.
    """
    return conv3d_backprop_input_v2_run(
        input_size, filter, out_backprop, strides=strides, pads=pads, dilations=dilations, groups=groups,
        data_format=data_format, filter_format=filter_format, platform=platform, enable_hf32=enable_hf32,
        route=route).result
