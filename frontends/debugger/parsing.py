"""What the `ascend-sim debug` command modules share: the one-line command error, a breakpoint or watchpoint, and the
parsing of integers, numpy indices and arrays to print."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


class CommandError(ValueError):
    """A bad command or argument: printed as one line `error: ...`."""


@dataclass
class Breakpoint:
    number: int
    text: str
    predicate: Callable
    kind: str = "breakpoint"  # or "watchpoint"
    show: Callable | None = None  # a watchpoint's value now, as text


def integer(text: str, what: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise CommandError(f"{what}: {text!r} is not an integer") from None


def parse_index(text: str):
    """A numpy index from `a:b, c, ::2` (integers and slices only)."""
    parts = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            bounds = [(integer(b, "slice") if b.strip() else None) for b in part.split(":")]
            if len(bounds) > 3:
                raise CommandError(f"{part!r} is not a slice")
            parts.append(slice(*bounds))
        elif part:
            parts.append(integer(part, "index"))
        else:
            raise CommandError(f"[{text}] is not an index")
    return tuple(parts)


def format_array(array: np.ndarray, full: bool = False) -> str:
    if full:
        return np.array2string(array, threshold=sys.maxsize, max_line_width=120, floatmode="unique")
    return np.array2string(array, threshold=256, edgeitems=3, max_line_width=120, precision=4)
