"""The `ascend-sim` parser and how a command's outcome becomes an exit code.

Exit codes: 0 done (and checked); 1 a check failed, a tiling override broke a rule (tiling), or the simulator
found a kernel fault (printed as one paragraph); 2 bad input, printed as one line `ascend-sim <command>: error:
...`. --debug shows the traceback of an error or a fault instead.
"""
from __future__ import annotations

import argparse
import os
import sys

from ascend_sim import SimFault, __version__
from frontends.cli import (conv3d_command, conv3d_dw_command, conv3d_dx_command, conv_backward_command, debug_command,
                           matmul_command, sweep_command, tiling_command)
from frontends.cli.flags import OneLineParser, one_line

COMMANDS = (conv3d_dx_command, tiling_command, matmul_command, debug_command, conv3d_dw_command, sweep_command,
            conv_backward_command, conv3d_command)
DEBUG_HELP = "show the full traceback of an error or a simulated fault"


def build_parser() -> tuple[OneLineParser, dict[str, OneLineParser]]:
    """The top-level parser and each command's parser by name."""
    parser = OneLineParser(prog="ascend-sim", description="A simulated Ascend AI Core: run, time, check and debug Ascend C kernels.")
    parser.add_argument("--version", action="version", version=f"ascend-sim {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    by_name = {}
    for command in COMMANDS:
        sub = command.add_command(commands)
        # also after the command; SUPPRESS keeps `ascend-sim --debug <command>` from being reset to False
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        sub.set_defaults(prog=sub.prog)
        by_name[sub.prog.split()[-1]] = sub
    commands.metavar = "{" + ",".join(by_name) + "}"
    return parser, by_name


def main(argv: list[str] | None = None) -> int:
    parser, by_name = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            (getattr(args, "parser", None) or by_name[args.command]).unrecognized(extras)
    except SystemExit as stop:  # --help, --version, or a usage error already printed on one line
        return stop.code if isinstance(stop.code, int) else 2
    try:
        return args.run(args)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except SimFault as fault:
        if args.debug:
            raise
        print(f"{args.prog}: simulated kernel fault: {one_line(fault)} (--debug shows the traceback)",
              file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError, MemoryError) as err:
        if args.debug:
            raise
        print(f"{args.prog}: error: {_describe(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{args.prog}: interrupted", file=sys.stderr)
        return 130


def _describe(err: BaseException) -> str:
    if isinstance(err, MemoryError):
        return "the problem needs more memory than this machine has; try smaller shapes"
    if isinstance(err, OSError) and err.filename is not None:
        return one_line(f"{err.filename}: {err.strerror}")
    return one_line(err)
