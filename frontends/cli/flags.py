"""Flag parsing for every `ascend-sim` command: one-line errors and value types that check what they read.

Every error the user can cause reads `ascend-sim <command>: error: argument --flag: <value> ... <what is allowed>`
on one line of stderr, with exit code 2: argparse's own errors (through OneLineParser.error), the value types
below (argparse prefixes their ArgumentTypeError with the flag) and the checks that need several flags at once
(FlagError, raised by a command and printed by the app in the same format).

Importing this module (and building a parser with it) imports no numpy or pydantic: a limit may be given as a
function, and the platform and dtype types import what they check against when a value is parsed.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from pathlib import Path

INT32_MAX = 2**31 - 1


class FlagError(ValueError):
    """A value that each flag accepts alone but not together with the others; the message names the flags."""


def check_run_flags(args) -> None:
    """The run flags that exclude each other (add_run_arguments)."""
    if args.no_records and args.trace:
        raise FlagError("argument --trace: a trace is drawn from the instruction records, which --no-records drops")


def refuse_no_records(args) -> None:
    """For the commands whose operators keep every record (matmul, conv-backward)."""
    if args.no_records:
        raise FlagError(f"argument --no-records: not supported by {args.prog}; the conv3d-dx, conv3d-dw and conv3d "
                        "commands take it")


def one_line(message: object) -> str:
    """Any message as one line: the lines of a multi-line one joined, runs of spaces collapsed."""
    return " ".join(str(message).split())


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (`prog: error: message`, exit 2) and that takes no
    abbreviations (`--strid` is an error, not `--stride`)."""

    missing_command_hint: str | None = None  # said instead when its sub-command is missing or unknown

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        self._arguments = list(sys.argv[1:] if args is None else args)  # to show a value argparse did not take
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        if self.missing_command_hint and ("invalid choice" in message or "arguments are required" in message):
            self.exit(2, f"{self.prog}: error: {self.missing_command_hint}\n")
        missing = re.fullmatch(r"argument (--[\w-]+): expected one argument", message)
        arguments = getattr(self, "_arguments", [])
        if missing and missing.group(1) in arguments:
            flag = missing.group(1)
            value = (arguments[arguments.index(flag) + 1:] or [""])[0]
            if value.startswith("-"):
                # argparse reads a value such as -1,1,1 as an option; the = form hands it to the flag's check
                message += f" (got {value!r}, which reads as an option: write {flag}={value})"
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")

    def unrecognized(self, extras: list[str]):
        """Refuse leftover arguments, suggesting the closest option of this parser."""
        message = f"unrecognized arguments: {' '.join(extras)}"
        options = [option for action in self._actions for option in action.option_strings]
        unknown = next((item.split("=")[0] for item in extras if item.startswith("--")), None)
        close = difflib.get_close_matches(unknown, options, n=1, cutoff=0.75) if unknown else []
        if close:
            message += f" (did you mean {close[0]}?)"
        self.error(f"{message}; see {self.prog} --help")


class Renamed(argparse.Action):
    """An old flag spelling: using it is a one-line error naming the new flag (exit 2)."""

    def __init__(self, option_strings, dest, new: str, **kwargs):
        self.new = new
        super().__init__(option_strings, dest, nargs="?", **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        value = f" {values}" if values is not None else ""
        parser.error(f"argument {option_string}: renamed {self.new}; write {self.new}{value}")


def read_integer(text: str, whole: str, label: str | None = None) -> int:
    """int(text), or an ArgumentTypeError that shows the flag's whole value (and which part, by its label)."""
    try:
        return int(text.strip())
    except ValueError:
        where = f"{label}={text.strip()!r} in {whole!r}" if label else repr(whole)
        raise argparse.ArgumentTypeError(f"{where} is not an integer") from None


def _resolve(limit):
    """A limit given as a function (to import its module only when a value is parsed) or as a value."""
    return limit() if callable(limit) else limit


def int_in_range(low: int, high=INT32_MAX):
    """type= for one integer in [low, high] (high: an int, or a function returning one)."""

    def parse(text: str) -> int:
        high_value = _resolve(high)
        value = read_integer(text, text)
        if not low <= value <= high_value:
            raise argparse.ArgumentTypeError(f"{value} is outside the allowed range [{low}, {high_value}]")
        return value

    return parse


def int_list(labels: tuple[str, ...], low: int, limits=INT32_MAX, per_axis: int = 1):
    """type= for len(labels) integers separated by ',' or 'x' (8,56,56 or 8x56x56), each in [low, its high]; one
    value means all of them, and with per_axis > 1 (pads: before and after each axis) len(labels) // per_axis
    values give each axis its value on both sides. limits: one high for all, a tuple of one per label, or a function
    returning either."""
    axes = len(labels) // per_axis

    def parse(text: str) -> tuple[int, ...]:
        highs = _resolve(limits)
        highs = highs if isinstance(highs, tuple) else (highs,) * len(labels)
        parts = text.replace("x", ",").split(",")
        if len(parts) == 1:
            parts = parts * len(labels)
        elif per_axis > 1 and len(parts) == axes:
            parts = [part for part in parts for _ in range(per_axis)]
        if len(parts) != len(labels):
            counts = " or ".join(map(str, sorted({1, axes, len(labels)})))
            raise argparse.ArgumentTypeError(
                f"{text!r} has {len(parts)} values; expected {counts} comma-separated integers ({','.join(labels)})")
        values = tuple(read_integer(part, text, label) for part, label in zip(parts, labels))
        for value, label, high in zip(values, labels, highs):
            if not low <= value <= high:
                raise argparse.ArgumentTypeError(
                    f"{label}={value} in {text!r} is outside the allowed range [{low}, {high}]")
        return values

    return parse


def dtype_value(text: str) -> str:
    """type= for --dtype: a name of ascend_sim.machine.dtypes.DTYPES or EIGHT_BIT_DTYPES (the operator refuses an
    8-bit type on a platform without it, by name)."""
    from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
    names = [*DTYPES, *EIGHT_BIT_DTYPES]
    if text not in names:
        raise argparse.ArgumentTypeError(f"{text!r} is not a dtype; choose from {', '.join(names)}")
    return text


# DTYPES' and EIGHT_BIT_DTYPES' names (a test keeps them equal)
dtype_value.help = "float16, bfloat16 or float32 (default float16); hifloat8 or float8_e4m3fn on an Ascend 950"


def platform_value(text: str):
    """type= for --platform: a preset name, or the path of a platform JSON file (read and checked here)."""
    from pydantic import ValidationError

    from ascend_sim.machine.platform import PRESETS, Platform
    presets = ", ".join(sorted(PRESETS))
    path = Path(text)
    if text in PRESETS:
        return text
    if path.suffix == ".json" and not path.exists():
        raise argparse.ArgumentTypeError(f"there is no file {text!r}; presets: {presets}")
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a preset nor a platform JSON file; presets: {presets}")
    try:
        return Platform.model_validate_json(path.read_bytes())
    except OSError as err:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {err.strerror}; presets: {presets}") from None
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}"
                             for e in err.errors(include_url=False))
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid platform file: {problems}") from None


def writable_path(text: str) -> str:
    """type= for an output file: its directory must exist and be writable (checked before a long run)."""
    folder = Path(text).parent
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file path")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: the directory {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: the directory {str(folder)!r} is not writable")
    return text


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30, "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def memory_size(text: str) -> int:
    """type= for a memory size: bytes, or a number with K, M, G or T (binary units: 8G = 8 GiB, 1.5G)."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", text)
    unit = found.group(2).upper() if found else None
    if not found or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"{text!r} is not a memory size; give bytes or a number with K, M, G or T "
                                         "(8G, 512M, 1.5G)")
    size = int(float(found.group(1)) * _UNITS[unit])
    if size < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is outside the allowed range: at least 1 byte")
    return size


def add_run_arguments(parser, seeded: str) -> None:
    """The flags every run command shares: timing-only mode, the trace, JSON output and the data's seed."""
    parser.add_argument("--timing-only", action="store_true", help="no data: same cycles, faster, no check")
    parser.add_argument("--trace", type=writable_path, metavar="PATH",
                        help="write a Chrome/Perfetto trace (open in https://ui.perfetto.dev)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (text goes to stderr)")
    parser.add_argument("--seed", type=int_in_range(0), default=0, help=f"seed of the random {seeded}")
    parser.add_argument("--no-race-check", action="store_true",
                        help="skip the race checks between pipes and between cores (faster; no shadow memory of GM)")
    parser.add_argument("--engine", choices=("auto", "exact", "fast", "replay"), default="auto",
                        help="exact: each instruction scheduled as it is issued; fast: the stream "
                             "scheduled afterwards, compiled; replay: fast, and repeated API units replayed from "
                             "their first call (env ASCEND_REPLAY=verify checks each against a real run); the "
                             "same results and cycles (default auto: replay without hooks)")
    parser.add_argument("--no-records", action="store_true",
                        help="keep no instruction records: each is scheduled as issued and dropped (except those "
                             "waiting for another core), for long timing-only runs (same cycles; no --trace)")
    parser.add_argument("--max-memory", type=memory_size, metavar="SIZE",
                        help="refuse a run estimated to need more memory than this (8G, 512M; default 80%% of the "
                             "memory available now)")
