"""The integer helpers the tiling generators share (CeilDiv, CeilAlign/AlignUp, GetMaxDivisor of the real sources)."""
from __future__ import annotations


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(a: int, b: int) -> int:
    """CeilAlign / AlignUp: `a` rounded up to a multiple of `b`."""
    return ceil_div(a, b) * b


def max_divisor_at_most(number: int, start: int, step: int) -> int:
    """GetMaxDivisor: the largest value <= start (stepping down by `step`) that divides `number`, or 0."""
    value = start
    while value >= step:
        if number % value == 0:
            return value
        value -= step
    return 0
