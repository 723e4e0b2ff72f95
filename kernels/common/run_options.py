"""The run options every operator shares (execute, check_races, poison_output, record, trace), checked before
anything is planned or launched: a flag that is not a bool was taken for its truth value (execute="no" ran the
data path), and a trace path whose folder does not exist failed only after the whole run."""
from __future__ import annotations

import os

from tiling.common.problem import check_flag


def check_run_options(*, trace=None, **flags) -> None:
    """TypeError for a flag that is not a bool or a trace that is not a path; ValueError for a trace path whose
    folder does not exist (named with its value)."""
    for name, value in flags.items():
        check_flag(name, value)
    if trace is None:
        return
    if not isinstance(trace, (str, os.PathLike)):
        raise TypeError(f"trace={trace!r} must be a path (str or os.PathLike) or None, got {type(trace).__name__}")
    folder = os.path.dirname(os.path.abspath(os.fspath(trace)))
    if not os.path.isdir(folder):
        raise ValueError(f"trace={os.fspath(trace)!r}: its folder {folder!r} does not exist")
