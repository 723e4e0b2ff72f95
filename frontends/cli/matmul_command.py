"""`ascend-sim matmul`: the example multi-core tiled matmul (kernels/matmul) on random operands, checked against
a float64 numpy product of the operands as stored (decoded), with the same report as conv3d-dx. On the Ascend 950
(`--platform Ascend950PR_9589`) the arch35 kernel runs, and --dtype may be hifloat8 or float8_e4m3fn: C is then of
that type too and is checked on its grid (at most one step from the float64 product rounded once)."""
from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass

import numpy as np

from ascend_sim.machine.dtypes import EIGHT_BIT_DTYPES
from ascend_sim.machine.platform import get_platform
from frontends.cli.flags import FlagError, add_run_arguments, int_in_range, platform_value
from frontends.cli.report import (Progress, check_against, check_fields, check_on_grid, print_json, print_summary,
                                  text_stream)
from kernels.matmul import MatmulTiling, run_matmul
from tiling.matmul import OPERAND_DTYPES


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "matmul", help="the example multi-core tiled matmul (kernels/matmul.py), checked against numpy",
        description="C[b] = A[b] (M x K) . B[b] (K x N) with the example Ascend C matmul kernel on the simulated "
                    "chip, checked against a float64 numpy product.")
    parser.add_argument("--m", type=int_in_range(1), default=512, help="rows of A and C (default 512)")
    parser.add_argument("--n", type=int_in_range(1), default=512, help="columns of B and C (default 512)")
    parser.add_argument("--k", type=int_in_range(1), default=256, help="columns of A, rows of B (default 256)")
    parser.add_argument("--batch", type=int_in_range(1), default=1, help="independent products (default 1)")
    parser.add_argument("--dtype", default="float16", choices=sorted(OPERAND_DTYPES),
                        help="of A, B and C (default float16; hifloat8 and float8_e4m3fn on an Ascend 950 platform)")
    parser.add_argument("--hf32", action="store_true", help="round float32 operands to HF32 (--dtype float32 only)")
    parser.add_argument("--platform", type=platform_value, default="Ascend910B2",
                        help="a preset name or a platform JSON file (default Ascend910B2)")
    add_run_arguments(parser, "A and B")
    parser.set_defaults(run=run)
    return parser


@dataclass
class MatmulRun:
    """What `simulate` ran: the operands, the tiling, C, the report and the wall time."""

    a: np.ndarray
    b: np.ndarray
    tiling: MatmulTiling
    c: np.ndarray
    report: object
    wall: float

    @property
    def headline(self) -> str:
        return (f"Matmul {self.tiling.dtype}{' (HF32)' if self.tiling.hf32 else ''}: A {self.a.shape} . "
                f"B {self.b.shape} -> C {self.c.shape}")


def simulate(args: argparse.Namespace, hooks: list | None = None) -> MatmulRun:
    """Build the problem the flags describe and run it on the simulated chip, with `hooks` added to the progress
    display (`ascend-sim debug matmul` passes a Capture). Writes --trace."""
    if args.hf32 and args.dtype != "float32":
        raise FlagError(f"argument --hf32: rounds float32 operands, and --dtype is {args.dtype}; "
                        f"use --dtype float32 or drop --hf32")
    dtype = OPERAND_DTYPES[args.dtype]
    rng = np.random.default_rng(args.seed)
    a = rng.standard_normal((args.batch, args.m, args.k)).astype(dtype)
    b = rng.standard_normal((args.batch, args.k, args.n)).astype(dtype)
    tiling = MatmulTiling.for_shape(args.m, args.n, args.k, args.dtype, batch=args.batch, hf32=args.hf32)
    progress = Progress.hooks(get_platform(args.platform).aic_cores) if args.engine != "fast" else None
    wall = time.perf_counter()
    try:
        c, report = run_matmul(a, b, platform=args.platform, tiling=tiling, execute=not args.timing_only,
                               hooks=(progress or []) + list(hooks or []) or None, poison_output=True,
                               check_races=not args.no_race_check, engine=args.engine)
    finally:
        Progress.done(progress)
    wall = time.perf_counter() - wall
    if args.trace:
        report.write_trace(args.trace)
    return MatmulRun(a, b, tiling, c, report, wall)


def run(args: argparse.Namespace) -> int:
    say = text_stream(args.json)
    result = simulate(args)
    a, b, tiling, c, report, wall = result.a, result.b, result.tiling, result.c, result.report, result.wall
    print(result.headline, file=say)
    print(f"tiling: baseM/N/K {tiling.baseM}/{tiling.baseN}/{tiling.baseK}, stepK {tiling.stepK}, L1 buffers "
          f"{tiling.l1_buffers}", file=say)
    check = None
    if not args.timing_only:
        exact = np.matmul(a.astype(np.float64), b.astype(np.float64))  # the operands as stored, decoded
        check = (check_on_grid(c, exact) if args.dtype in EIGHT_BIT_DTYPES
                 else check_against(c, exact, args.dtype, args.hf32))
        print(check.line("C"), file=say)
    print_summary(report, wall, args.trace, say)
    if args.json:
        print_json({**check_fields(check), "tiling": asdict(tiling), "report": report.to_dict()})
    return 0 if check is None or check.passed else 1
