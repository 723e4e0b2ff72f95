"""`ascend-sim debug <operator command> [its flags]`: run the operator as that command would, then open a gdb-like
prompt over the replay debugger (ascend_sim.debug; the commands are in frontends/debugger/shell.py).

The command's own `simulate(args, hooks)` runs the problem, with a Capture among the hooks, so the run is exactly
the command's. On a terminal the prompt reads lines as gdb does; otherwise stdin is a script (each line echoed
after the prompt, so the output is a transcript). `-x FILE` runs a command file first.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from frontends.cli import conv3d_command, conv3d_dw_command, conv3d_dx_command, conv_backward_command, matmul_command
from frontends.cli.flags import FlagError

OPERATORS = (conv3d_dx_command, conv3d_dw_command, matmul_command, conv3d_command, conv_backward_command)


def command_file(text: str) -> tuple[str, str]:
    """type= for -x: a readable text file of debugger commands (read before the long run)."""
    try:
        return text, Path(text).read_text()
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a text file") from None


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "debug", help="run an operator command, then step through its run at a gdb-like prompt",
        description="Run conv3d-dx, conv3d-dw, matmul, conv3d or conv-backward (one of its launches) exactly as "
                    "that command would, then open a gdb-like prompt "
                    "over the replay debugger: breakpoints, step and reverse-step, the L0 operands as matrices, GM, who "
                    "wrote a byte. `help` at the prompt lists the commands; docs/debugging.md describes them.")
    x_help = "run the debugger commands in FILE first"
    parser.add_argument("-x", dest="command_file", type=command_file, metavar="FILE", help=x_help)
    operators = parser.add_subparsers(dest="operator", required=True)
    names = []
    for module in OPERATORS:
        sub = module.add_command(operators)
        if hasattr(module, "add_debug_arguments"):
            module.add_debug_arguments(sub)
        sub.add_argument("-x", dest="command_file", type=command_file, metavar="FILE", default=argparse.SUPPRESS,
                         help=x_help)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show the full traceback of an error")
        sub.set_defaults(run=run, simulate=module.simulate, prog=sub.prog, parser=sub)
        names.append(sub.prog.split()[-1])
    operators.metavar = "{" + ",".join(names) + "}"
    return parser


def run(args: argparse.Namespace) -> int:
    from ascend_sim import SimFault
    from ascend_sim.debug import Capture
    from frontends.debugger import shell as debug_shell
    from frontends.debugger.tensors import operator_tensors
    if args.timing_only:
        raise FlagError("argument --timing-only: the debugger replays the data the run moved; drop --timing-only")
    if args.json:
        raise FlagError("argument --json: the debugger's output is text; drop --json")
    if args.no_records:
        raise FlagError("argument --no-records: the debugger replays the instruction records; drop --no-records")
    if getattr(args, "format", "NCDHW") != "NCDHW":
        raise FlagError(f"argument --format: the debugger maps the tensors of NCDHW runs; drop --format "
                        f"{args.format}")
    capture = Capture()
    fault = None
    try:
        ran = args.simulate(args, hooks=[capture])
    except SimFault as err:
        if capture.chip is None:  # it faulted before the launch: nothing to replay
            raise
        ran, fault = None, err  # post-mortem: the records that ran, applied, are the state just before the fault
    operator = operator_tensors(args, capture.initial_gm)
    dbg = capture.debugger(tensors=operator.tensors if operator else {}, fault=fault)
    shell = debug_shell.DebugShell(dbg, args.dtype, sys.stdout, operator)
    if fault is not None:
        shell.open_post_mortem()
        if operator:
            print(operator.banner())
    else:
        cores = len({rec.core for rec in dbg.records})
        print(ran.headline)
        if operator:
            print(operator.banner())
        print(f"{len(dbg)} records on {cores} core{'s' if cores != 1 else ''}; at the start (no record applied). "
              f"`help` lists the commands.")
    if args.command_file is not None:
        _, text = args.command_file
        shell.run_lines(text.splitlines(), echo=True, repeat=False)
    if not shell.done:
        shell.interact(sys.stdin)
    return 0


__all__ = ["add_command", "run"]
