"""`ascend-sim conv3d-dx`: run Conv3DBackpropInputV2 on the simulated chip, check it, report cycles."""
from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np

from ascend_sim.machine.dtypes import EIGHT_BIT_DTYPES
from ascend_sim.machine.platform import get_platform
from frontends.cli.conv_problem import ConvProblem, add_conv_problem_arguments, conv_problem
from frontends.cli.flags import FlagError, add_run_arguments
from frontends.cli.report import (Progress, check_against, check_fields, check_on_grid, print_json, print_summary,
                                  text_stream)
from kernels.conv3d_backprop_input.operator import ROUTES, Conv3dDxRun, conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.operator_arch35 import DTYPES_950
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from tiling import TilingValidationError


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "conv3d-dx", help="run Conv3DBackpropInputV2 on the simulated chip and check it",
        description="Run Conv3DBackpropInputV2 (dx of a 3D convolution) instruction by instruction on the "
                    "simulated chip, check it against a numpy reference, and report cycles.")
    add_conv_problem_arguments(parser)
    parser.add_argument("--route", default="aclnn", choices=ROUTES,
                        help="aclnn (default): the shapes aclnn computes with a matmul run the matmul kernel; "
                             "v2: always the Conv3DBackpropInputV2 kernel")
    add_run_arguments(parser, "dy and filter")
    parser.set_defaults(run=run)
    return parser


@dataclass
class ConvDxRun:
    """What `simulate` ran: the problem, the operands, the operator's run record and the wall time."""

    problem: ConvProblem
    dy: np.ndarray
    weight: np.ndarray
    result: Conv3dDxRun
    wall: float

    @property
    def headline(self) -> str:
        p = self.problem
        return (f"Conv3DBackpropInputV2 {p.dtype}: dy {p.dy_shape} * w {p.filter_shape} -> dx {p.dx_shape} "
                f"(NCDHW), stride {p.stride}, pad {p.pad}, dilation {p.dilation}, groups {p.groups}")


def simulate(args: argparse.Namespace, hooks: list | None = None) -> ConvDxRun:
    """Build the problem the flags describe and run the operator on the simulated chip, with `hooks` added to the
    progress display (`ascend-sim debug conv3d-dx` passes a Capture). Writes --trace."""
    problem = conv_problem(args)
    overrides = dict(args.set)
    arch35 = get_platform(problem.platform).npu_arch == 3510  # the 950: the arch35 kernel, no matmul routes
    if not arch35:
        plan = problem.plan(args.route)  # the operator's own checks and routing, before any data is made
    if overrides and not arch35 and plan.route == "matmul":
        raise FlagError(f"argument --set: this problem runs as a matmul on --route aclnn ({plan.matmul_mode}), "
                        f"which has no conv tiling to override; add --route v2 to run the conv kernel")
    dtype = DTYPES_950[args.dtype]
    rng = np.random.default_rng(args.seed)
    dy = rng.standard_normal(problem.dy_shape).astype(dtype)
    weight = rng.standard_normal(problem.filter_shape).astype(dtype)
    progress = Progress.hooks(get_platform(problem.platform).aic_cores) if args.engine != "fast" else None
    wall = time.perf_counter()
    try:
        result = conv3d_backprop_input_v2_run(
            problem.dx_shape, weight, dy, execute=not args.timing_only, trace=args.trace,
            tiling_overrides=overrides or None, hooks=(progress or []) + list(hooks or []) or None,
            route=args.route, check_races=not args.no_race_check, engine=args.engine, **problem.operator_arguments())
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err
    finally:
        Progress.done(progress)
    return ConvDxRun(problem, dy, weight, result, time.perf_counter() - wall)


def run(args: argparse.Namespace) -> int:
    say = text_stream(args.json)
    ran = simulate(args)
    problem, dy, weight, result, wall = ran.problem, ran.dy, ran.weight, ran.result, ran.wall
    print(ran.headline, file=say)
    print(_tiling_line(result), file=say)
    for note in result.notes:
        print(f"note: {note}", file=say)
    check = None
    if not args.timing_only:
        expect = conv3d_dx_reference(dy.astype(np.float64), weight.astype(np.float64), problem.dx_shape,
                                     problem.stride, problem.pad, problem.dilation, problem.groups)
        check = (check_on_grid(result.result, expect) if args.dtype in EIGHT_BIT_DTYPES
                 else check_against(result.result, expect, args.dtype, args.hf32))
        print(check.line("dx"), file=say)
    report = result.report
    print_summary(report, wall, args.trace, say)
    if args.json:
        tiling = json.loads(result.tiling.model_dump_json()) if result.route == "v2" else vars(result.tiling)
        print_json({**check_fields(check), "route": result.route, "matmul_mode": result.matmul_mode, "tiling": tiling,
                    "notes": result.notes, "report": report.to_dict()})
    return 0 if check is None or check.passed else 1


def _tiling_line(result) -> str:
    t = result.tiling
    if result.route == "v2" and not hasattr(t, "conv3DDxTiling"):  # the arch35 tiling (the 950)
        return (f"tiling key {t.tiling_key} ({t.template}): block_dim {t.block_dim}, baseM/K/N {t.baseM}/{t.baseK}/"
                f"{t.baseN}, stepKa/Kb {t.stepKa}/{t.stepKb}, al1/bl1 {t.al1Pbuffer}/{t.bl1Pbuffer}, singleCoreM "
                f"{t.singleCoreM}, enableVecTrans {t.enableVecTrans}")
    if result.route == "v2":
        c = t.conv3DDxTiling
        return (f"tiling key {t.tiling_key} ({t.template}): coreNum {t.params.coreNum}, baseM/K/N "
                f"{c.baseM}/{c.baseK}/{c.baseN}, stepKa/Kb {c.stepKa}/{c.stepKb}, al1/bl1 {c.al1Pbuffer}/"
                f"{c.bl1Pbuffer}, singleCoreM {c.singleCoreM}, initOutputFlag {c.initOutputFlag}")
    return (f"routed like aclnn to the matmul kernel ({result.matmul_mode}): M/N/K {t.M}/{t.N}/{t.K}, batch "
            f"{t.batch}, baseM/N/K {t.baseM}/{t.baseN}/{t.baseK}, stepK {t.stepK}")
