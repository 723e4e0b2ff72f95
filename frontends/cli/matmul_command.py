"""`ascend-sim matmul`: the example multi-core tiled matmul (kernels/matmul) on random operands, checked against
a float64 numpy product of the operands as stored (decoded), with the same report as conv3d-dx. On the Ascend 950
(`--platform Ascend950PR_9589`) the arch35 kernel runs, and --dtype may be hifloat8 or float8_e4m3fn: C is then of
that type too and is checked on its grid (at most one step from the float64 product rounded once)."""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from frontends.cli.flags import (FlagError, add_run_arguments, dtype_value, int_in_range, platform_value,
                                 refuse_no_records)
from frontends.cli.reference_alongside import ReferenceAlongside, reference_alongside
from frontends.cli.report import (check_cli_run, launch_entry, print_json, print_summary, random_operands,
                                  reference_precision, run_document, text_stream)

if TYPE_CHECKING:
    import numpy as np

    from kernels.matmul import MatmulTiling


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "matmul", help="the example multi-core tiled matmul (kernels/matmul/), checked against numpy",
        description="C[b] = A[b] (M x K) . B[b] (K x N) with the example Ascend C matmul kernel on the simulated "
                    "chip, checked against a float64 numpy product.")
    add_problem_arguments(parser)
    add_run_arguments(parser, "A and B")
    parser.set_defaults(run=run)
    return parser


def add_problem_arguments(parser) -> None:
    """The problem flags (`ascend-sim tiling matmul` takes them too)."""
    parser.add_argument("--m", type=int_in_range(1), default=512, help="rows of A and C (default 512)")
    parser.add_argument("--n", type=int_in_range(1), default=512, help="columns of B and C (default 512)")
    parser.add_argument("--k", type=int_in_range(1), default=256, help="columns of A, rows of B (default 256)")
    parser.add_argument("--batch", type=int_in_range(1), default=1, help="independent products (default 1)")
    parser.add_argument("--dtype", default="float16", type=dtype_value, help=f"of A, B and C: {dtype_value.help}")
    parser.add_argument("--hf32", action="store_true", help="round float32 operands to HF32 (--dtype float32 only)")
    parser.add_argument("--platform", type=platform_value, default="Ascend910B2",
                        help="a preset name or a platform JSON file (default Ascend910B2)")


def tilings(args: argparse.Namespace) -> tuple[list, list, list]:
    """`ascend-sim tiling matmul`: [(launch name, kernel, tiling)], notes, broken rules (none: --set is
    refused when it breaks one)."""
    from kernels.matmul import MatmulTiling
    _check_hf32(args)
    tiling = MatmulTiling.for_shape(args.m, args.n, args.k, args.dtype, batch=args.batch, hf32=args.hf32)
    return [("c", "matmul (kernels/matmul/)", tiling)], [], []


def _check_hf32(args) -> None:
    if args.hf32 and args.dtype != "float32":
        raise FlagError(f"argument --hf32: rounds float32 operands, and --dtype is {args.dtype}; "
                        f"use --dtype float32 or drop --hf32")


@dataclass
class MatmulRun:
    """What `simulate` ran: the operands, the tiling, C, the report, the wall time of the launch and the reference
    computed alongside it (None when none was asked for)."""

    a: np.ndarray
    b: np.ndarray
    tiling: MatmulTiling
    c: np.ndarray | None  # None in timing-only mode
    report: object
    wall: float
    reference: ReferenceAlongside | None = None

    @property
    def headline(self) -> str:
        return (f"Matmul {self.tiling.dtype}{' (HF32)' if self.tiling.hf32 else ''}: A {self.a.shape} . "
                f"B {self.b.shape} -> C {(self.a.shape[0], self.a.shape[1], self.b.shape[2])}")


def simulate(args: argparse.Namespace, hooks: list | None = None, check: bool = False) -> MatmulRun:
    """Build the problem the flags describe and run it on the simulated chip, with `hooks` added to the progress
    display (`ascend-sim debug matmul` passes a Capture). Writes --trace. check: the reference is computed in a
    second process during the launch (frontends/cli/reference_alongside.py)."""
    from ascend_sim.machine.platform import get_platform
    from frontends.cli.progress import LaunchProgress
    from kernels.matmul import MatmulTiling, run_matmul
    from kernels.matmul.operator import MATMUL_REMEDIES, default_block_dim, estimate_matmul
    from tiling.matmul import OPERAND_DTYPES
    refuse_no_records(args)
    _check_hf32(args)
    dtype = OPERAND_DTYPES[args.dtype]
    tiling = MatmulTiling.for_shape(args.m, args.n, args.k, args.dtype, batch=args.batch, hf32=args.hf32)
    estimate = estimate_matmul(tiling, default_block_dim(tiling, get_platform(args.platform).aic_cores),
                               execute=not args.timing_only, check_races=not args.no_race_check)
    check_cli_run(estimate, args.batch * args.k * (args.m + args.n), args.batch * args.m * args.n, args.dtype,
                  timing_only=args.timing_only, max_memory=args.max_memory,
                  remedies=MATMUL_REMEDIES)  # before the operands are drawn
    a, b = random_operands(args.seed, dtype, args.timing_only, (args.batch, args.m, args.k),
                           (args.batch, args.k, args.n))
    task = partial(product, a, b, reference_precision(args.dtype)) if check else None
    with reference_alongside(task) as expected:
        wall = time.perf_counter()
        with LaunchProgress():
            run = run_matmul(a, b, platform=args.platform, tiling=tiling, execute=not args.timing_only,
                             hooks=hooks or None, poison_output=True, check_races=not args.no_race_check,
                             engine=args.engine, max_memory=args.max_memory)
            c, report = run.result, run.report
        wall = time.perf_counter() - wall
    if args.trace:
        report.write_trace(args.trace)
    return MatmulRun(a, b, tiling, c, report, wall, expected)


def product(a: np.ndarray, b: np.ndarray, precision) -> np.ndarray:
    """The check's reference: A . B in the dtype's reference precision (float64 for the 8-bit types: the product
    as stored, decoded)."""
    import numpy as np
    return np.matmul(a.astype(precision), b.astype(precision))


def run(args: argparse.Namespace) -> int:
    from ascend_sim.machine.dtypes import EIGHT_BIT_DTYPES
    say = text_stream(args.json)
    result = args.outcome = simulate(args, check=not args.timing_only)  # freed by the process's end (app.py)
    tiling, c, report, wall = result.tiling, result.c, result.report, result.wall
    print(result.headline, file=say)
    print(f"tiling: baseM/N/K {tiling.baseM}/{tiling.baseN}/{tiling.baseK}, stepK {tiling.stepK}, L1 buffers "
          f"{tiling.l1_buffers}", file=say)
    check = None
    if result.reference is not None:
        check = result.reference.check(c, args.dtype, args.hf32, on_grid=args.dtype in EIGHT_BIT_DTYPES)
        print(check.line("C"), file=say)
    print_summary(report, wall, args.trace, say, check)
    if args.json:
        print_json(run_document("matmul", {"c": check} if check else {},
                                [launch_entry("c", "matmul (kernels/matmul/)", tiling, report, args.trace)], [],
                                wall))
    return 0 if check is None or check.passed else 1
