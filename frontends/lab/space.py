"""--vary: which fields a sweep narrows and to which values.

A space maps tiling field names (the real names the generator's overrides take) to the values to try. `--vary`
ranges read `FIELD=LOW..HIGH` (every integer), `FIELD=LOW..HIGH:STEP` or `FIELD=A,B,C`. Without any --vary the
sweep draws from the operator's whole legal space (frontends/lab/legal.py).
"""
from __future__ import annotations

from collections.abc import Mapping

MAX_VALUES = 100_000  # values in one range: a typo such as 1..1000000 is refused, not enumerated


class SpaceError(ValueError):
    """A bad --vary: names the field or the range and what is allowed."""


def parse_range(text: str) -> tuple[int, ...]:
    """`1..12`, `16..256:16` or `16,32,64` as a sorted tuple of distinct integers."""
    text = text.strip()
    try:
        if ".." in text:
            low_text, _, rest = text.partition("..")
            high_text, _, step_text = rest.partition(":")
            low, high, step = int(low_text), int(high_text), int(step_text) if step_text else 1
            if step < 1:
                raise SpaceError(f"{text!r}: the step must be at least 1")
            if low > high:
                raise SpaceError(f"{text!r}: the range is empty (low {low} > high {high})")
            if (high - low) // step + 1 > MAX_VALUES:
                raise SpaceError(f"{text!r} has more than {MAX_VALUES} values")
            return tuple(range(low, high + 1, step))
        values = tuple(sorted({int(part) for part in text.split(",")}))
    except ValueError as err:
        if isinstance(err, SpaceError):
            raise
        raise SpaceError(f"{text!r} is not a range: write LOW..HIGH, LOW..HIGH:STEP or A,B,C (integers)") from None
    return values


def parse_vary(items: list[str], fields: Mapping[str, tuple[int, int]]) -> dict[str, tuple[int, ...]]:
    """`FIELD=RANGE` items as a space; each field must be one of `fields` (name -> allowed [low, high])."""
    space: dict[str, tuple[int, ...]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name or not text.strip():
            raise SpaceError(f"{item!r} must look like FIELD=RANGE, e.g. stepKa=1..12 or baseN=16,32,64")
        if name not in fields:
            import difflib
            close = difflib.get_close_matches(name, list(fields), n=3)
            hint = f"did you mean {' or '.join(close)}?" if close else f"fields: {', '.join(sorted(fields))}"
            raise SpaceError(f"{item!r}: {name} is not a tiling field; {hint}")
        values = parse_range(text)
        low, high = fields[name]
        bad = [v for v in values if not low <= v <= high]
        if bad:
            raise SpaceError(f"{item!r}: {name}={bad[0]} is outside its allowed range [{low}, {high}]")
        if name in space:
            raise SpaceError(f"{item!r}: {name} is varied twice")
        space[name] = values
    return space
