"""`ascend-sim conv3d`: run Conv3DV2 (the forward 3D convolution) on the simulated chip, check it, report cycles.

The problem flags are the shared ones (x is NCDHW; y has the shape conv3d-dx calls dy); --bias adds a bias; --set
overrides fields of the Conv3DV2 tiling (convApiTiling, convRunInfo) by their real names.
"""
from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from frontends.cli.conv_problem import (CliProblem, add_conv_problem_arguments, add_format_argument, conv_problem,
                                        field_override)
from frontends.cli.flags import FlagError, add_run_arguments, check_run_flags
from frontends.cli.reference_alongside import ReferenceAlongside, reference_alongside
from frontends.cli.report import (check_cli_run, launch_entry, print_json, print_summary, random_operands,
                                  reference_precision, run_document, text_stream)

if TYPE_CHECKING:
    import numpy as np

    from kernels.common.run import Run


def conv3d_field_ranges() -> dict:
    """The Conv3DV2 tiling fields (convApiTiling, convRunInfo) with their C type's range."""
    from tiling.conv3d_v2.model import Conv3DV2TilingData
    return Conv3DV2TilingData.field_ranges()


conv3d_tiling_override = field_override(conv3d_field_ranges, "Conv3DV2 tiling field", "docs/conv3d_v2_tiling.md")


def add_command(commands) -> argparse.ArgumentParser:
    # conflict_handler="resolve": the --set below (Conv3DV2 fields) replaces the conv problem flags' one (dx fields)
    parser = commands.add_parser(
        "conv3d", help="run Conv3DV2 (forward 3D convolution) on the simulated chip and check it",
        conflict_handler="resolve",
        description="Run Conv3DV2 (the forward 3D convolution, y = conv3d(x, w) + bias) instruction by instruction "
                    "on the simulated chip, check it against a numpy reference, and report cycles.")
    add_problem_arguments(parser)
    add_run_arguments(parser, "x, filter and bias")
    parser.set_defaults(run=run)
    return parser


def add_problem_arguments(parser) -> None:
    """The problem flags (`ascend-sim tiling conv3d` takes them too)."""
    add_conv_problem_arguments(parser)
    add_format_argument(parser)
    parser.add_argument("--bias", action="store_true", help="add a bias (one value per output channel)")
    parser.add_argument("--set", type=conv3d_tiling_override, action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the Conv3DV2 tiling, repeatable (e.g. --set mL0=128)")


def tilings(args: argparse.Namespace) -> tuple[list, list, list]:
    """`ascend-sim tiling conv3d`: [(launch name, kernel, tiling)], notes, broken rules (none:
    --set is refused when it breaks one): the tiling conv3d_v2_run plans, on the
    pointwise kernel where aclnn picks it."""
    from kernels.conv3d_v2.operator import NCDHW, NDC1HWC0, kernel_class, plan_conv3d_v2_tiling
    from kernels.conv3d_v2.routing import use_point_wise_kernel
    from tiling import TilingValidationError
    from tiling.conv3d_v2 import check_conv3d_v2_args
    p = conv_problem(args)
    checked = check_conv3d_v2_args(p.dx_shape, p.filter_shape, p.stride, p.pad, p.dilation, p.groups, p.dtype,
                                   p.platform, args.bias, p.hf32)
    fmap_format = NCDHW if use_point_wise_kernel(checked, p.data_format) else NDC1HWC0
    try:
        t = plan_conv3d_v2_tiling(checked, dict(args.set) or None, fmap_format)
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err
    kernel = kernel_class(t.tiling_key, fmap_format).__name__
    return [("y", "Conv3DV2", t)], [*t.notes, f"kernel: {kernel} (tiling key {t.tiling_key}, fmap {fmap_format})"], []


@dataclass
class Conv3dCommandRun:
    """What `simulate` ran: the problem, the operands, the operator's run and the wall time."""

    problem: CliProblem
    x: np.ndarray
    w: np.ndarray
    bias: np.ndarray | None
    run: Run
    wall: float
    reference: ReferenceAlongside | None = None  # computed alongside the launch, when simulate was given one

    @property
    def headline(self) -> str:
        p = self.problem
        return (f"Conv3DV2 {p.dtype}: x {p.dx_shape} * w {p.filter_shape}{' + bias' if self.bias is not None else ''}"
                f" -> y {p.dy_shape} ({p.layout}), stride {p.stride}, pad {p.pad}, dilation {p.dilation}, groups "
                f"{p.groups}")


def simulate(args: argparse.Namespace, hooks: list | None = None, check: bool = False) -> Conv3dCommandRun:
    """Build the problem the flags describe and run it, with `hooks` added to the progress display (`ascend-sim
    debug conv3d` passes a Capture). The GM allocations are x, filter, bias and y (operator.py). check: the
    reference is computed in a second process during the launch (frontends/cli/reference_alongside.py)."""
    from ascend_sim.machine.dtypes import DTYPES
    from frontends.cli.progress import LaunchProgress
    from kernels.common.operands import stand_in
    from kernels.conv3d_v2.operator import conv3d_v2_run, estimate_conv3d_v2, plan_conv3d_v2_run
    from tiling import TilingValidationError
    check_run_flags(args)
    problem = conv_problem(args)
    dtype = DTYPES[args.dtype]
    shapes = (problem.dx_shape, problem.filter_shape, problem.cout if args.bias else None)
    try:
        # the size guard with the CLI's own operands and check, before they are drawn
        x_in, w_in, bias_in = (shape and stand_in(shape, dtype) for shape in shapes)
        plan_args, _, tiling = plan_conv3d_v2_run(problem.to_format(x_in), w_in, bias_in,
                                                  tiling_overrides=dict(args.set) or None,
                                                  **problem.operator_arguments())
        check_cli_run(estimate_conv3d_v2(plan_args, tiling, execute=not args.timing_only,
                                         check_races=not args.no_race_check, record=not args.no_records),
                      math.prod(problem.dx_shape) + math.prod(problem.filter_shape), math.prod(problem.dy_shape),
                      args.dtype, timing_only=args.timing_only, max_memory=args.max_memory)
        x, w, bias = random_operands(args.seed, dtype, args.timing_only, *shapes)
        with reference_alongside(y_reference(problem, x, w, bias, args.dtype) if check else None) as expected:
            wall = time.perf_counter()
            with LaunchProgress():
                result = conv3d_v2_run(problem.to_format(x), w, bias, execute=not args.timing_only,
                                       trace=args.trace, tiling_overrides=dict(args.set) or None,
                                       hooks=hooks or None, check_races=not args.no_race_check, engine=args.engine,
                                       max_memory=args.max_memory, record=not args.no_records,
                                       **problem.operator_arguments())
            wall = time.perf_counter() - wall
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err
    return Conv3dCommandRun(problem, x, w, bias, result, wall, expected)


def y_reference(problem: CliProblem, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None,
                dtype: str) -> Callable[[], np.ndarray]:
    """The check's reference, y in the dtype's reference precision, as a picklable task for the child process."""
    from kernels.conv3d_v2.reference import conv3d_reference
    return partial(conv3d_reference, x, w, bias, problem.stride, problem.pad, problem.dilation, problem.groups,
                   precision=reference_precision(dtype))


def run(args: argparse.Namespace) -> int:
    say = text_stream(args.json)
    ran = args.outcome = simulate(args, check=not args.timing_only)  # freed by the process's end (app.py)
    problem, result, wall = ran.problem, ran.run, ran.wall
    print(ran.headline, file=say)
    t, a = result.tiling, result.tiling.convApiTiling
    print(f"tiling key {t.tiling_key}: {t.block_dim} cores, mL0/kL0/nL0 {a.mL0}/{a.kL0}/{a.nL0}, mAL1/kAL1 "
          f"{a.mAL1}/{a.kAL1}, BL1 bypass {a.bl1BypassFlag}, iterateMNOrder {a.iterateMNOrder}", file=say)
    for note in result.notes:
        print(f"note: {note}", file=say)
    check = None
    if ran.reference is not None:
        check = ran.reference.check(problem.from_format(result.result), args.dtype, args.hf32)
        print(check.line("y"), file=say)
    report = result.report
    print_summary(report, wall, args.trace, say, check)
    if args.json:
        print_json(run_document("conv3d", {"y": check} if check else {},
                                [launch_entry("y", "Conv3DV2", t, report, args.trace)], result.notes, wall))
    return 0 if check is None or check.passed else 1
