"""The `ascend-sim` parser and how a command's outcome becomes an exit code.

Exit codes: 0 done (and checked); 1 a check failed, a tiling override broke a rule (tiling), or the simulator
found a kernel fault (printed as one paragraph); 2 bad input, printed as one line `ascend-sim <command>: error:
...`. --debug shows the traceback of an error or a fault instead.
"""
from __future__ import annotations

import argparse
import atexit
import gc
import os
import sys
import threading
from importlib import import_module

from frontends.cli import collector
from frontends.cli.flags import OneLineParser, one_line

# Each command's module and summary; a module is imported only when its command is chosen (`ascend-sim --help` lists
# the summaries without importing any operator), and its add_command(commands) adds its parser.
COMMANDS = {
    "conv3d-dx": ("conv3d_dx_command", "run Conv3DBackpropInputV2 on the simulated chip and check it"),
    "tiling": ("tiling_command", "the Conv3DBackpropInputV2 host tiling of a problem (Atlas A2)"),
    "matmul": ("matmul_command", "the example multi-core tiled matmul (kernels/matmul/), checked against numpy"),
    "debug": ("debug_command", "run an operator command, then step through its run at a gdb-like prompt"),
    "conv3d-dw": ("conv3d_dw_command", "run Conv3DBackpropFilterV2 on the simulated chip and check it"),
    "sweep": ("sweep_command", "sweep an operator's tiling fields on the simulator (the tiling lab)"),
    "conv-backward": ("conv_backward_command",
                      "run aclnnConvolutionBackward (dx, dw, db; 1D/2D/3D) on the simulated chip"),
    "conv3d": ("conv3d_command", "run Conv3DV2 (forward 3D convolution) on the simulated chip and check it"),
}
DEBUG_HELP = "show the full traceback of an error or a simulated fault"


class _Version(argparse.Action):
    """--version, reading the version (ascend_sim) only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from ascend_sim import __version__
        print(f"ascend-sim {__version__}")
        parser.exit(0)


def chosen_command(argv: list[str]) -> str | None:
    """The command argv names: its first word that is not an option (the top-level options take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_parser(argv: list[str] | None = None) -> tuple[OneLineParser, dict[str, OneLineParser]]:
    """The top-level parser and the chosen command's parser by name (every command's when argv is None: for the
    tests and docs that look at all of them). The other commands get an empty parser, which lists them."""
    parser = OneLineParser(prog="ascend-sim", description="A simulated Ascend AI Core: run, time, check and debug Ascend C kernels.")
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", required=True)
    chosen = chosen_command(argv) if argv is not None else None
    by_name = {}
    for name, (module, summary) in COMMANDS.items():
        if argv is not None and name != chosen:
            commands.add_parser(name, help=summary)
            continue
        sub = import_module(f".{module}", __package__).add_command(commands)
        # also after the command; SUPPRESS keeps `ascend-sim --debug <command>` from being reset to False
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
        sub.set_defaults(prog=sub.prog)
        by_name[name] = sub
    commands.metavar = "{" + ",".join(COMMANDS) + "}"
    return parser, by_name


def main(argv: list[str] | None = None) -> int:
    """Run the command argv names; without argv, the process's own command line (the `ascend-sim` script and
    `python -m frontends.cli`), and then the process ends here: see _end_process."""
    if argv is None:
        gc.disable()  # until the command's modules are imported: see _run
        return _run(sys.argv[1:], process=True)  # returns only when a thread of the command's still runs
    return _run(list(argv))


def _end_process(code: int) -> None:
    """End the process now, without the interpreter's teardown, which frees every object of the run after its
    output was printed: a default `conv3d-dx` run's chip and modules took 22 ms of CPU to free (and, before,
    0.2-0.4 s to garbage-collect: its records and chip form reference cycles), and its records, which the command
    keeps on its arguments (args.outcome) so that they are not freed when it returns, 11 ms. What the teardown does
    that matters is done first: the atexit handlers run and stdout and stderr are flushed (the command's own files
    are closed by their `with` blocks). Only when no other non-daemon thread runs: Python's exit waits for one,
    and its final collection then leaves the run's objects alone (gc.freeze)."""
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        gc.freeze()
        return
    atexit._run_exitfuncs()  # CPython's: what the interpreter calls at exit
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _run(argv: list[str], process: bool = False) -> int:
    """process: argv is the process's own command line (main() without argv). The collector was paused by main()
    while the parser imports the chosen command's modules (its flags' types import numpy and pydantic, some the
    operator and the simulator); it resumes before the command runs (frontends/cli/collector.py; conv3d-dx pauses
    it again while it imports its operator). Once the command has returned, the process ends here (_end_process), with
    `args` and the run the command kept on it still referenced."""
    parser, by_name = build_parser(argv)
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            (getattr(args, "parser", None) or by_name[args.command]).unrecognized(extras)
    except SystemExit as stop:  # --help, --version, or a usage error already printed on one line
        code = stop.code if isinstance(stop.code, int) else 2
    else:
        if process:
            collector.resume()
        code = _command(args)
    if process:
        _end_process(code)
    return code


def _command(args: argparse.Namespace) -> int:
    """Run the parsed command; its outcome as an exit code (the module's docstring)."""
    from ascend_sim import SimFault  # the command imported the simulator already
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
