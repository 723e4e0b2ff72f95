"""`ascend-sim sweep <operator>`: the tiling lab on the command line (a thin layer over frontends.lab.sweep).

    ascend-sim sweep conv3d-dx|conv3d-dw|conv3d|matmul [problem flags] --budget 40 --out lab/
        [--search local|grid|random|optuna] [--vary stepKa=1..12 --vary baseN=16,32,64] [--seed 0] [--workers N]
        [--backend local|dask|ray] [--scheduler ADDRESS] [--top K | --no-prune] [--no-plots]

Each operator is a sub-command with its own problem flags (the conv operators: those of `ascend-sim conv3d-dx`;
matmul: --m --n --k --batch --dtype --hf32 --platform); the sweep flags are the same for all. Exit 0 when the
sweep ran (pruned or faulted candidates are results, not errors), 2 for bad flags or a missing cluster backend
(one line naming the flag).
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from ascend_sim.machine.dtypes import DTYPES
from frontends.cli.conv_problem import add_conv_problem_arguments, conv_problem
from frontends.cli.flags import FlagError, int_in_range, platform_value
from frontends.cli.report import print_json
from frontends.lab.options import BACKENDS, SEARCHES

DEBUG_HELP = "show the full traceback of an error"


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "sweep", help="sweep an operator's tiling on the simulator (the tiling lab)",
        description="Try many legal tilings of one problem: the generator's own and tilings around it built to "
                    "satisfy the tiling rules, checked by the validator, timed on the simulator (timing-only, the "
                    "auto engine: replay where the kernel declares units) on worker processes. See docs/tiling_lab.md.")
    operators = parser.add_subparsers(dest="operator", required=True, metavar="{conv3d-dx,conv3d-dw,conv3d,matmul}")
    for name, target, help_text in (
            ("conv3d-dx", conv3d_dx_target, "Conv3DBackpropInputV2 (route v2: the conv kernel; the arch35 one on an "
                                            "Ascend 950)"),
            ("conv3d-dw", conv3d_dw_target, "Conv3DBackpropFilterV2"),
            ("conv3d", conv3d_v2_target, "Conv3DV2, the forward 3D convolution")):
        conv = operators.add_parser(name, help=help_text, description=f"Sweep the {help_text} tiling of one problem.")
        add_conv_problem_arguments(conv)
        for action in conv._actions:  # --set fixes fields of one run; a sweep refuses it (run_conv says why)
            if action.dest == "set":
                action.help = argparse.SUPPRESS
        add_sweep_arguments(conv)
        conv.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        conv.set_defaults(run=run_conv, target=target, prog=conv.prog, parser=conv)
    mm = operators.add_parser("matmul", help="the example matmul kernel (kernels/matmul/)",
                              description="Sweep the MatmulTiling of one product.")
    mm.add_argument("--m", type=int_in_range(1), default=512, help="rows of A and C (default 512)")
    mm.add_argument("--n", type=int_in_range(1), default=512, help="columns of B and C (default 512)")
    mm.add_argument("--k", type=int_in_range(1), default=256, help="columns of A, rows of B (default 256)")
    mm.add_argument("--batch", type=int_in_range(1), default=1, help="independent products (default 1)")
    mm.add_argument("--dtype", default="float16", choices=sorted(DTYPES), help="of A, B and C (default float16)")
    mm.add_argument("--hf32", action="store_true", help="round float32 operands to HF32 (--dtype float32 only)")
    mm.add_argument("--platform", type=platform_value, default="Ascend910B2",
                    help="a preset name or a platform JSON file (default Ascend910B2)")
    add_sweep_arguments(mm)
    mm.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    mm.set_defaults(run=run_matmul, prog=mm.prog, parser=mm)
    return parser


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    lab = parser.add_argument_group("sweep")
    lab.add_argument("--budget", type=int_in_range(1, 1_000_000), default=100,
                     help="candidates to try, the generator's own included (default 100)")
    lab.add_argument("--out", type=output_dir, metavar="DIR", help="write results.json, results.csv and plots here")
    lab.add_argument("--search", choices=SEARCHES, default="local",
                     help="local: from the generator's tiling, every legal one-knob change of the best so far "
                          "(default); grid: points spread evenly over the legal space; random: distinct legal "
                          "points; optuna: TPE on the analytical estimate, then on the simulated cycles")
    lab.add_argument("--vary", action="append", default=[], metavar="FIELD=RANGE",
                     help="narrow a field to these values: LOW..HIGH, LOW..HIGH:STEP or A,B,C; repeatable (default: "
                          "the operator's legal space around its generator's tiling; the other knobs stay at the "
                          "generator's values)")
    lab.add_argument("--seed", type=int_in_range(0), default=0, help="seed of the random and optuna searches")
    lab.add_argument("--workers", type=int_in_range(1, 1024), default=os.cpu_count() or 1,
                     help=f"local worker processes (default: the CPU count, {os.cpu_count()})")
    lab.add_argument("--backend", choices=BACKENDS, default="local",
                     help="local: worker processes on this machine (default); dask: a dask.distributed cluster; "
                          "ray: a Ray cluster")
    lab.add_argument("--scheduler", metavar="ADDRESS",
                     help="with --backend dask: the scheduler's address (default: a LocalCluster of --workers "
                          "processes); with --backend ray: the cluster's address, or auto (default: a local Ray "
                          "of --workers CPUs)")
    lab.add_argument("--top", type=int_in_range(1, 1_000_000), default=1, metavar="K",
                     help="keep simulating every candidate that could be among the K best (default 1: skip those "
                          "whose lower bound exceeds the best simulated cycles so far)")
    lab.add_argument("--no-prune", action="store_true",
                     help="simulate every legal candidate, whatever its lower bound")
    lab.add_argument("--no-plots", action="store_true", help="write no PNG plots")
    lab.add_argument("--json", action="store_true", help="print the result table as JSON")


def output_dir(text: str) -> str:
    """type= for --out: a directory that exists or can be made (its parent exists and is writable)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
    parent = path if path.exists() else path.parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: the directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: {str(parent)!r} is not writable")
    return text


# the lab is imported when a sweep runs, not when the parser is built (`sweep --help`)
def conv3d_dx_target(problem):
    """conv3d-dx's target for the problem's platform: the arch35 tiling and kernel on an Ascend 950."""
    from frontends.lab import Conv3dDxArch35Target, Conv3dDxTarget
    return Conv3dDxArch35Target(problem) if problem.arch35 else Conv3dDxTarget(problem)


def conv3d_dw_target(problem):
    from frontends.lab import Conv3dDwTarget
    return Conv3dDwTarget(problem)


def conv3d_v2_target(problem):
    from frontends.lab import Conv3dV2Target
    return Conv3dV2Target(problem)


def run_conv(args: argparse.Namespace) -> int:
    if args.set:
        raise FlagError("argument --set: a sweep varies fields with --vary (a single value fixes one: "
                        "--vary baseM=128)")
    return run_sweep(args.target(conv_problem(args)), args)


def run_matmul(args: argparse.Namespace) -> int:
    from frontends.lab import MatmulProblem, MatmulTarget
    if args.hf32 and args.dtype != "float32":
        raise FlagError(f"argument --hf32: rounds float32 operands, and --dtype is {args.dtype}; "
                        f"use --dtype float32 or drop --hf32")
    return run_sweep(MatmulTarget(MatmulProblem(args.m, args.n, args.k, args.batch, args.dtype, args.platform,
                                                args.hf32)), args)


def run_sweep(target, args: argparse.Namespace) -> int:
    from frontends.lab import SpaceError, parse_vary, sweep
    from frontends.lab.sweep import check_backend
    try:
        space = parse_vary(args.vary, target.fields) if args.vary else None
    except SpaceError as err:
        raise FlagError(f"argument --vary: {err}") from None
    if args.scheduler and args.backend == "local":
        raise FlagError("argument --scheduler: names a dask scheduler or a Ray cluster; add --backend dask or ray")
    if args.no_prune and args.top != 1:
        raise FlagError("argument --top: keeps the K best when pruning; --no-prune simulates every candidate")
    try:
        check_backend(args.backend)
    except SpaceError as err:
        raise FlagError(f"argument --backend: {err}") from None
    result = sweep(target, space, search=args.search, budget=args.budget, workers=args.workers, seed=args.seed,
                   backend=args.backend, scheduler=args.scheduler, prune=not args.no_prune, top=args.top)
    if args.out:
        result.write(args.out, plots=not args.no_plots)
    if args.json:
        print_json(result.to_dict())
    else:
        print(result.summary())
        if result.files:
            print("wrote " + ", ".join(result.files))
    return 0
