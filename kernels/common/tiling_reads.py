"""Which tiling fields a launch reads, so that an override of a field the chosen kernel never reads is flagged by
name instead of passing silently (issue 22: `--set mDim=2` or `--set baseD=2` on the basic-block dx kernel were
accepted, validated and changed nothing).

Which fields matter depends on the kernel variant the tiling key selects (the basic-block dx driver reads coreNum,
not mDim; no dx driver reads baseD), so the answer is taken from the run itself: the host launch code and the
kernel get a ReadRecorder in place of the tiling, which records every field read through it (also inside a
property such as block_dim, or a method of the tiling class such as key_from_fields). An inherited pydantic method
(model_dump, ...) counts as reading everything, since its reads are not seen. A driver that copies fields into its
members as the C++ does and then never uses some of them says so (COPIED_NOT_USED); the operator subtracts those.
The recorder is used only when overrides were given: plain runs pay nothing.
"""
from __future__ import annotations

import warnings
from typing import Iterable

from pydantic import BaseModel

EVERYTHING = "*"


class IgnoredOverrideWarning(UserWarning):
    """A tiling override named a field that the kernel which ran never read: it changed nothing."""


class ReadRecorder:
    """Stands in for a tiling (or one of its structs) and adds each field name read through it to `reads`.

    A field (or struct) read once is kept on the recorder, so that its later reads are plain attribute lookups
    (a kernel reads its tiling's fields about once per instruction); the tiling is read-only during a launch, so
    the kept value stays the tiling's."""

    def __init__(self, target, reads: set[str]):
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_reads", reads)

    def __getattr__(self, name: str):  # called only for names not kept yet
        target, reads = object.__getattribute__(self, "_target"), object.__getattribute__(self, "_reads")
        own = type(target).__dict__.get(name)
        if isinstance(own, property):  # e.g. block_dim: record the fields it reads
            return own.fget(self)
        if callable(own):  # a method of the tiling class itself (key_from_fields): its reads go through here too
            return own.__get__(self)
        value = getattr(target, name)
        if isinstance(value, BaseModel):
            value = ReadRecorder(value, reads)
        elif callable(value):  # an inherited pydantic method (model_dump, ...): its reads are not seen
            reads.add(EVERYTHING)
            reads.add(name)
            return value
        else:
            reads.add(name)
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name, value):
        raise AttributeError(f"the tiling is read-only during a launch (set {name})")


def unread_overrides(overrides: Iterable[str], kernel_fields: Iterable[str], reads: set[str]) -> list[str]:
    """The overridden kernel-visible fields that were never read (none when a method call hid the reads)."""
    if EVERYTHING in reads:
        return []
    fields = set(kernel_fields)
    return [name for name in overrides if name in fields and name not in reads]


def flag_unread_overrides(overrides, kernel_fields, reads: set[str], kernel: str, unused=()) -> list[str]:
    """Warn (IgnoredOverrideWarning) about each override the launch never read, or read only to copy it into a
    member the driver never uses (`unused`); the messages, for the run's notes."""
    notes = [f"tiling override {name}={overrides[name]} changed nothing: {kernel} never uses {name}"
             for name in unread_overrides(overrides, kernel_fields, reads - set(unused))]
    for note in notes:
        warnings.warn(note, IgnoredOverrideWarning, stacklevel=3)
    return notes
