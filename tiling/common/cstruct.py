"""C structs of integers for tiling data: range-checked pydantic fields and their exact little-endian layout.

Shared by every tiling family (tiling.common.tiling_data.TilingData holds the structs). A struct is described by `FIELDS`, (name, C type) pairs in declaration
order; `c_format` turns that into a `struct` format with natural alignment, so the order *is* the blob layout.
"""
from __future__ import annotations

import difflib
import numbers
import struct
from collections.abc import Mapping
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

U32_MAX = 2**32 - 1
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
U64_MAX = 2**64 - 1

C_RANGES = {"u32": (0, U32_MAX), "i32": (I32_MIN, I32_MAX), "u64": (0, U64_MAX), "u8": (0, 255), "i8": (-128, 127),
            "bool": (0, 1)}
_CODES = {"u32": ("I", 4), "i32": ("i", 4), "u64": ("Q", 8), "u8": ("B", 1), "i8": ("b", 1), "bool": ("B", 1)}


def c_format(fields: tuple[tuple[str, str], ...]) -> str:
    """The little-endian `struct` format of a C struct with these members: holes before misaligned members
    and a tail pad to the struct's own alignment, as a C compiler lays it out."""
    parts, offset, align = [], 0, 1
    for _, ctype in fields:
        code, size = _CODES[ctype]
        hole = -offset % size
        if hole:
            parts.append(f"{hole}x")
        parts.append(code)
        offset += hole + size
        align = max(align, size)
    if -offset % align:
        parts.append(f"{-offset % align}x")
    return "<" + "".join(parts)


class CStruct(BaseModel):
    """A C struct of integers: every field range-checked against its C type."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    FIELDS: ClassVar[tuple[tuple[str, str], ...]] = ()
    RESERVED: ClassVar[int] = 0  # a trailing `uint8_t reserved[RESERVED]`, never written, so packed as zeros

    @model_validator(mode="after")
    def _c_ranges(self):
        for name, ctype in self.FIELDS:
            low, high = C_RANGES[ctype]
            value = getattr(self, name)
            if not low <= value <= high:
                raise ValueError(f"{name}={value} does not fit its C type {ctype} [{low}, {high}]")
        return self

    def as_tuple(self) -> tuple[int, ...]:
        return tuple(getattr(self, name) for name, _ in self.FIELDS)

    @classmethod
    def layout(cls) -> str:
        """The struct format of FIELDS and the reserved bytes."""
        return c_format(cls.FIELDS + tuple((f"reserved[{i}]", "u8") for i in range(cls.RESERVED)))

    @classmethod
    def size(cls) -> int:
        return struct.calcsize(cls.layout())

    def pack(self) -> bytes:
        return struct.pack(self.layout(), *self.as_tuple(), *([0] * self.RESERVED))

    @classmethod
    def unpack(cls, blob: bytes):
        values = struct.unpack(cls.layout(), blob)
        return cls(**dict(zip((name for name, _ in cls.FIELDS), values)))


def unknown_field_message(name: str, known: list[str]) -> str:
    by_lower = {k.lower(): k for k in known}
    if name.lower() in by_lower:  # only the case differs
        return f"unknown tiling field {name!r}; did you mean {by_lower[name.lower()]!r}?"
    close = [by_lower[m] for m in difflib.get_close_matches(name.lower(), list(by_lower), n=4, cutoff=0.6)]
    if close:
        return f"unknown tiling field {name!r}; did you mean {' or '.join(repr(c) for c in close)}?"
    return f"unknown tiling field {name!r}; the fields are: {', '.join(known)}"


def overrides_mapping(overrides) -> Mapping:
    """tiling_overrides as given to an operator: None or a mapping of field names to integers."""
    if overrides is None:
        return {}
    if not isinstance(overrides, Mapping):
        raise TypeError(f"tiling_overrides={overrides!r} must be a dict of tiling field names to integers, got "
                        f"{type(overrides).__name__}")
    for key in overrides:
        if not isinstance(key, str):
            raise TypeError(f"tiling_overrides key {key!r} must be a tiling field name (a string), got "
                            f"{type(key).__name__}")
    return overrides


def check_overrides(changes: Mapping, structs, other_names=()) -> None:
    """Refuse a set of overrides before any is applied, one line per broken rule: a name no struct (or the tiling
    around them, other_names) has, a value that is not an integer (TypeError when that is all that is wrong), a
    value outside its field's C type."""
    ctypes = {name: ctype for model in structs for name, ctype in model.FIELDS}
    known = [*ctypes, *other_names]
    problems, type_only = [], True
    for key, value in changes.items():
        if key not in ctypes:
            if key not in other_names:
                problems.append(unknown_field_message(key, known))
                type_only = False
        elif isinstance(value, bool) or not isinstance(value, numbers.Integral):
            problems.append(f"tiling field {key}={value!r} must be an integer, got {type(value).__name__}")
        else:
            low, high = C_RANGES[ctypes[key]]
            if not low <= value <= high:
                problems.append(f"tiling field {key}={value} does not fit its C type {ctypes[key]} [{low}, {high}]")
                type_only = False
    if len(problems) == 1:
        raise (TypeError if type_only else ValueError)(problems[0])
    if problems:
        raise (TypeError if type_only else ValueError)(
            f"tiling_overrides: {len(problems)} problems:\n" + "\n".join(f"- {p}" for p in problems))
