"""`ascend-sim conv3d-dw`: run Conv3DBackpropFilterV2 (dw) on the simulated chip, check it, report cycles.

The problem flags are conv3d-dx's (x is the NCDHW input of the convolution); --set overrides fields of the dw
tiling (params, dwTiling, basicBlockTiling, tiling_key) by their real names.
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



def dw_field_ranges() -> dict:
    """The dw tiling fields (params, dwTiling, basicBlockTiling) with their C type's range, and the tiling key."""
    from tiling.conv3d_backprop_filter.model import Conv3DBackpropFilterV2TilingData
    return {**Conv3DBackpropFilterV2TilingData.field_ranges(), "tiling_key": (0, 4)}


dw_tiling_override = field_override(dw_field_ranges, "dw tiling field", "docs/conv3d_backprop_filter_tiling.md")


def add_command(commands) -> argparse.ArgumentParser:
    # conflict_handler="resolve": the --set below (dw fields) replaces the conv problem flags' one (dx fields)
    parser = commands.add_parser(
        "conv3d-dw", help="run Conv3DBackpropFilterV2 on the simulated chip and check it", conflict_handler="resolve",
        description="Run Conv3DBackpropFilterV2 (dw of a 3D convolution) instruction by instruction on the "
                    "simulated chip, check it against a numpy reference, and report cycles.")
    add_problem_arguments(parser)
    add_run_arguments(parser, "x and dy")
    parser.set_defaults(run=run)
    return parser


def add_problem_arguments(parser) -> None:
    """The problem flags (`ascend-sim tiling conv3d-dw` takes them too)."""
    add_conv_problem_arguments(parser)
    add_format_argument(parser)
    parser.add_argument("--set", type=dw_tiling_override, action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the dw tiling, repeatable (e.g. --set baseN=64)")
    parser.add_argument("--deterministic", action="store_true",
                        help="the deterministic build (stream-K tails summed by the vector cores in a fixed order)")


def plan_tiling(args: argparse.Namespace):
    """The dw tiling the operator generates for the flags' problem (x with the rows beyond the kernel's reach
    written out, as kernels/conv3d_backprop_filter/operator.py launches it)."""
    from tiling import TilingValidationError, conv3d_backprop_filter_tiling
    p = conv_problem(args)
    x_shape, pads = _launched_x(p)
    try:
        return conv3d_backprop_filter_tiling(x_shape, p.filter_shape, p.dy_shape, p.stride, pads, p.dilation,
                                             p.groups, dtype=p.dtype, platform=p.platform, enable_hf32=p.hf32,
                                             deterministic=args.deterministic,
                                             tiling_overrides=dict(args.set) or None)
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err


def _launched_x(p: CliProblem) -> tuple[tuple, tuple]:
    """(x's shape, pads) as the operator launches them: the rows beyond the kernel's reach written out."""
    from kernels.conv3d_backprop_filter.operator import rows_beyond_reach
    kh = p.kernel[1]
    return rows_beyond_reach(p.dx_shape, p.pad, kh, p.dilation[1] if kh > 1 else 1)


def tilings(args: argparse.Namespace) -> tuple[list, list, list]:
    """`ascend-sim tiling conv3d-dw`: [(launch name, kernel, tiling)], notes, broken rules (none: --set is
    refused when it breaks one)."""
    return [("dw", "Conv3DBackpropFilterV2", plan_tiling(args))], [], []


@dataclass
class ConvDwRun:
    """What `simulate` ran: the problem, the operands, the operator's run record, the wall time of the launch and
    the reference computed alongside it (None when none was asked for)."""

    problem: CliProblem
    x: np.ndarray
    dy: np.ndarray
    result: Run
    wall: float
    reference: ReferenceAlongside | None = None

    @property
    def headline(self) -> str:
        p = self.problem
        return (f"Conv3DBackpropFilterV2 {p.dtype}: x {p.dx_shape} * dy {p.dy_shape} -> dw {p.filter_shape} "
                f"({p.layout}), stride {p.stride}, pad {p.pad}, dilation {p.dilation}, groups {p.groups}")


def simulate(args: argparse.Namespace, hooks: list | None = None, check: bool = False) -> ConvDwRun:
    """Build the problem the flags describe and run the operator on the simulated chip, with `hooks` added to the
    progress display (`ascend-sim debug conv3d-dw` passes a Capture). Writes --trace. check: the reference is
    computed in a second process during the launch (frontends/cli/reference_alongside.py)."""
    from ascend_sim.machine.dtypes import DTYPES
    from frontends.cli.progress import LaunchProgress
    from kernels.conv3d_backprop_filter.operator import DW_REMEDIES, conv3d_backprop_filter_v2_run, estimate_conv3d_dw
    from tiling import TilingValidationError
    check_run_flags(args)
    problem = conv_problem(args)
    dtype = DTYPES[args.dtype]
    # the size guard with the CLI's own operands and check, before they are drawn
    check_cli_run(estimate_conv3d_dw(plan_tiling(args), _launched_x(problem)[0], problem.dy_shape,
                                     problem.filter_shape, problem.groups, dtype.itemsize,
                                     execute=not args.timing_only, check_races=not args.no_race_check),
                  math.prod(problem.dx_shape) + math.prod(problem.dy_shape), math.prod(problem.filter_shape),
                  args.dtype, timing_only=args.timing_only, max_memory=args.max_memory,
                  remedies=DW_REMEDIES)
    x, dy = random_operands(args.seed, dtype, args.timing_only, problem.dx_shape, problem.dy_shape)
    with reference_alongside(dw_reference(problem, x, dy, args.dtype) if check else None) as expected:
        wall = time.perf_counter()
        try:
            with LaunchProgress():
                result = conv3d_backprop_filter_v2_run(
                    problem.to_format(x), problem.filter_shape, problem.to_format(dy), execute=not args.timing_only,
                    trace=args.trace, tiling_overrides=dict(args.set) or None, hooks=hooks or None,
                    check_races=not args.no_race_check, engine=args.engine, max_memory=args.max_memory,
                    record=not args.no_records, deterministic=args.deterministic, **problem.operator_arguments())
        except TilingValidationError as err:
            raise FlagError(f"argument --set: {err}") from err
        wall = time.perf_counter() - wall
    return ConvDwRun(problem, x, dy, result, wall, expected)


def dw_reference(problem: CliProblem, x: np.ndarray, dy: np.ndarray, dtype: str) -> Callable[[], np.ndarray]:
    """The check's reference, dw in the dtype's reference precision, as a picklable task for the child process."""
    from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
    return partial(conv3d_dw_reference, x, dy, problem.filter_shape, problem.stride, problem.pad, problem.dilation,
                   problem.groups, precision=reference_precision(dtype))


def run(args: argparse.Namespace) -> int:
    say = text_stream(args.json)
    ran = args.outcome = simulate(args, check=not args.timing_only)  # freed by the process's end (app.py)
    result, wall = ran.result, ran.wall
    print(ran.headline, file=say)
    t, d = result.tiling, result.tiling.dwTiling
    print(f"tiling key {t.tiling_key} ({t.template}): {t.block_dim} cores, baseM/K/N {d.baseM}/{d.baseK}/{d.baseN}, "
          f"stepKa/Kb {d.stepKa}/{d.stepKb}, al1/bl1 {d.al1Pbuffer}/{d.bl1Pbuffer}, iterateOrder {d.iterateOrder}",
          file=say)
    check = None
    if ran.reference is not None:
        check = ran.reference.check(result.result, args.dtype, args.hf32)
        print(check.line("dw"), file=say)
    report = result.report
    print_summary(report, wall, args.trace, say, check)
    if args.json:
        print_json(run_document("conv3d-dw", {"dw": check} if check else {},
                                [launch_entry("dw", "Conv3DBackpropFilterV2", t, report, args.trace)], [], wall))
    return 0 if check is None or check.passed else 1
