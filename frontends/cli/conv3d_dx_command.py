"""`ascend-sim conv3d-dx`: run Conv3DBackpropInputV2 on the simulated chip, check it, report cycles."""
from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from frontends.cli import collector
from frontends.cli.conv_problem import CliProblem, add_conv_problem_arguments, add_format_argument, conv_problem
from frontends.cli.early_operands import EarlyOperands
from frontends.cli.flags import FlagError, add_run_arguments, check_run_flags
from frontends.cli.reference_alongside import ReferenceAlongside, reference_alongside
from frontends.cli.report import (check_cli_run, launch_entry, print_json, print_summary, reference_precision,
                                  run_document, text_stream)

if TYPE_CHECKING:
    import numpy as np

    from kernels.common.run import Run


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "conv3d-dx", help="run Conv3DBackpropInputV2 on the simulated chip and check it",
        description="Run Conv3DBackpropInputV2 (dx of a 3D convolution) instruction by instruction on the "
                    "simulated chip, check it against a numpy reference, and report cycles.")
    add_problem_arguments(parser)
    parser.add_argument("--route", default="aclnn", type=_route, metavar="{aclnn,v2}",
                        help="aclnn (default): the shapes aclnn computes with a matmul run the matmul kernel; "
                             "v2: always the Conv3DBackpropInputV2 kernel")
    add_run_arguments(parser, "dy and filter")
    parser.set_defaults(run=run)
    return parser


def add_problem_arguments(parser) -> None:
    """The problem flags (`ascend-sim tiling conv3d-dx` takes them too)."""
    add_conv_problem_arguments(parser)
    add_format_argument(parser)


def tilings(args: argparse.Namespace) -> tuple[list, list, list]:
    """`ascend-sim tiling conv3d-dx`: [(launch name, kernel, tiling)], notes, broken rules: the tiling `conv3d-dx
    --route v2` runs. --set overrides fields without re-deriving anything and the result is validated field by
    field (an override that breaks a rule is reported, not refused)."""
    from tiling import validate
    problem = conv_problem(args)
    if problem.arch35:
        return _tilings_arch35(problem, dict(args.set))
    planned = problem.plan("v2", dict(args.set), validate_overrides=False)
    notes = list(planned.notes)
    default = problem.plan("aclnn")
    if default.route == "matmul":
        notes.append(f"conv3d-dx's default --route aclnn runs this problem as a matmul ({default.matmul_mode}); "
                     f"this is the tiling of --route v2")
    report = validate(planned.tiling)
    return [("dx", "Conv3DBackpropInputV2", planned.tiling)], notes, [str(p) for p in report.problems]


def _tilings_arch35(problem: CliProblem, overrides: dict[str, int]) -> tuple[list, list, list]:
    """`ascend-sim tiling conv3d-dx` on an Ascend 950: the arch35 tiling the run takes, overrides checked by the
    arch35 rules (a broken one reported, not refused; a field copied from the problem refused as bad input)."""
    from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import unported_features
    from tiling import TilingValidationError
    try:
        tiling = problem.tiling_arch35(overrides or None, validate_overrides=False, refuse_unported=False)
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err
    mode = problem.matmul_mode_arch35()
    notes = [f"conv3d-dx's default --route aclnn runs this problem as a matmul ({mode}); this is the tiling of "
             f"--route v2" if mode else "the Ascend 950 runs the arch35 kernel with this tiling"]
    missing = unported_features(tiling.tiling_key, tiling, "NCDHW")  # the CLI's filter is NCDHW (conv_problem.py)
    if missing:
        notes.append(f"not ported to the simulated arch35 kernel yet, so `conv3d-dx` refuses it: {'; '.join(missing)}")
    report = tiling.check()
    return [("dx", "Conv3DBackpropInputV2", tiling)], notes, [str(p) for p in report.problems]


@dataclass
class ConvDxRun:
    """What `simulate` ran: the problem, the operands, the operator's run record, the wall time of the launch and
    the reference computed alongside it (None when none was asked for)."""

    problem: CliProblem
    dy: np.ndarray
    weight: np.ndarray
    result: Run
    wall: float
    reference: ReferenceAlongside | None = None

    @property
    def headline(self) -> str:
        p = self.problem
        return (f"Conv3DBackpropInputV2 {p.dtype}: dy {p.dy_shape} * w {p.filter_shape} -> dx {p.dx_shape} "
                f"({p.layout}), stride {p.stride}, pad {p.pad}, dilation {p.dilation}, groups {p.groups}")


def simulate(args: argparse.Namespace, hooks: list | None = None, check: bool = False) -> ConvDxRun:
    """Build the problem the flags describe and run the operator on the simulated chip, with `hooks` added to the
    progress display (`ascend-sim debug conv3d-dx` passes a Capture). Writes --trace. check: the reference is
    computed in a second process during the launch (frontends/cli/reference_alongside.py)."""
    from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
    check_run_flags(args)
    problem = conv_problem(args)
    overrides = dict(args.set)
    dtype = {**DTYPES, **EIGHT_BIT_DTYPES}[args.dtype]  # the A2 dtypes and the 950's 8-bit ones
    # small operands are drawn on a thread while the operator is imported and planned (early_operands.py)
    operands = EarlyOperands(args.seed, dtype, args.timing_only, problem.dy_shape, problem.filter_shape,
                             max_memory=args.max_memory)
    with collector.paused():  # the operator's, the kernel's and the simulator's imports
        from frontends.cli.progress import LaunchProgress
        from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
        from tiling import TilingValidationError
        estimate, remedies, mode = _estimate(args, problem, dtype)
    if overrides and mode:
        raise FlagError(f"argument --set: this problem runs as a matmul on --route aclnn ({mode}), "
                        f"which has no conv tiling to override; add --route v2 to run the conv kernel")
    check_cli_run(estimate, math.prod(problem.dy_shape) + math.prod(problem.filter_shape),
                  math.prod(problem.dx_shape), args.dtype, timing_only=args.timing_only, max_memory=args.max_memory,
                  remedies=remedies)
    dy, weight = operands.result()
    with reference_alongside(dx_reference(problem, dy, weight, args.dtype) if check else None) as expected:
        wall = time.perf_counter()
        try:
            with LaunchProgress():
                result = conv3d_backprop_input_v2_run(
                    problem.in_format(problem.dx_shape), weight, problem.to_format(dy), execute=not args.timing_only,
                    trace=args.trace, tiling_overrides=overrides or None, hooks=hooks or None, route=args.route,
                    check_races=not args.no_race_check, engine=args.engine, max_memory=args.max_memory,
                    record=not args.no_records, **problem.operator_arguments())
        except TilingValidationError as err:
            raise FlagError(f"argument --set: {err}") from err
        wall = time.perf_counter() - wall
    return ConvDxRun(problem, dy, weight, result, wall, expected)


def _estimate(args: argparse.Namespace, problem: CliProblem, dtype) -> tuple:
    """(the size guard's estimate, its remedies, the matmul mode or None) of the run: the operator's own checks,
    routing and tiling, before the guard lets any data be made (EarlyOperands may have begun a small draw)."""
    from ascend_sim.machine.platform import get_platform
    if get_platform(problem.platform).npu_arch == 3510:  # the 950: the arch35 kernel or aclnn's 950 matmuls
        from kernels.conv3d_backprop_input.operator_arch35 import ARCH35_REMEDIES, estimate_dx_arch35, plan_dx_arch35
        tiling, routed, mode = plan_dx_arch35(problem.in_format(problem.dx_shape), problem.filter_shape,
                                              problem.in_format(problem.dy_shape), args.dtype, route=args.route,
                                              **problem.operator_arguments())
        return (estimate_dx_arch35(tiling, routed, mode, dtype.itemsize, execute=not args.timing_only,
                                   check_races=not args.no_race_check), ARCH35_REMEDIES, mode)
    from kernels.conv3d_backprop_input.operator import estimate_conv3d_dx
    plan = problem.plan(args.route)
    mode = plan.matmul_mode if plan.route == "matmul" else None
    return (estimate_conv3d_dx(plan, execute=not args.timing_only, check_races=not args.no_race_check,
                               record=not args.no_records), ("execute", "check_races", "record"), mode)


def _route(text: str) -> str:
    """type= for --route: one of the operator's ROUTES (their module imports nothing else)."""
    from kernels.conv3d_backprop_input.routes import ROUTES
    if text not in ROUTES:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(ROUTES)})")
    return text


def dx_reference(problem: CliProblem, dy: np.ndarray, weight: np.ndarray, dtype: str) -> Callable[[], np.ndarray]:
    """The check's reference, dx in the dtype's reference precision, as a picklable task for the child process."""
    from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
    return partial(conv3d_dx_reference, dy, weight, problem.dx_shape, problem.stride, problem.pad, problem.dilation,
                   problem.groups, precision=reference_precision(dtype))


def run(args: argparse.Namespace) -> int:
    from ascend_sim.machine.dtypes import EIGHT_BIT_DTYPES
    say = text_stream(args.json)
    ran = args.outcome = simulate(args, check=not args.timing_only)  # freed by the process's end (app.py)
    problem, result, wall = ran.problem, ran.result, ran.wall
    print(ran.headline, file=say)
    print(_tiling_line(result), file=say)
    for note in result.notes:
        print(f"note: {note}", file=say)
    check = None
    if ran.reference is not None:
        check = ran.reference.check(problem.from_format(result.result), args.dtype, args.hf32,
                                    on_grid=args.dtype in EIGHT_BIT_DTYPES)
        print(check.line("dx"), file=say)
    report = result.report
    print_summary(report, wall, args.trace, say, check)
    if args.json:
        kernel = "Conv3DBackpropInputV2" if result.route == "v2" else f"MatMul ({result.matmul_mode})"
        print_json(run_document("conv3d-dx", {"dx": check} if check else {},
                                [launch_entry("dx", kernel, result.tiling, report, args.trace)], result.notes, wall))
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
