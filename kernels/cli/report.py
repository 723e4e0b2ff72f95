"""What the run commands share in their output: the operands, the check against a reference, and where text goes.

With --json, stdout carries the JSON document alone: every line of text goes to stderr instead.
"""
from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TextIO

import numpy as np

from ascend_sim.dtypes import DTYPES

from kernels.operands import stand_in
from kernels.size_guard import check_fits

STARTED = time.perf_counter()  # where /proc is missing: the time since this module loaded


def seconds_since_start() -> float:
    """Wall seconds since the process started (Linux /proc: its start in clock ticks after boot), imports included."""
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # after "pid (comm)": field 3 (state) onwards
        with open("/proc/uptime") as uptime:
            now = float(uptime.read().split()[0])
        return now - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - STARTED

# Tolerance of |got - ref| / (|ref| + rms(ref)): one rounding to the output dtype after fp32 accumulation
# (half an ulp: 2^-11 fp16, 2^-8 bf16), with margin; HF32 rounds the fp32 operands to 11 mantissa bits.
TOLERANCE = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3}


def random_operands(seed: int, dtype, timing_only: bool, *shapes) -> list:
    """Standard-normal operands of these shapes drawn in order from one seeded generator (None for a shape
    None); with timing_only, size-only stand-ins instead, which take no memory (nothing reads their bytes)."""
    if timing_only:
        return [None if shape is None else stand_in(shape, dtype) for shape in shapes]
    rng = np.random.default_rng(seed)
    return [None if shape is None else rng.standard_normal(shape).astype(dtype) for shape in shapes]


def check_cli_run(estimate, input_elements: int, output_elements: int, dtype: str, args) -> None:
    """The size guard of a run command, before it draws its operands: the operator's estimate (size_guard.py)
    plus, in a full run, the operands (drawn in float64, kept in dtype) and the reference check (the operands and
    the output in its precision, about twice)."""
    extra = 0
    if not args.timing_only:
        precision = np.dtype(reference_precision(dtype)).itemsize
        extra = input_elements * (8 + np.dtype(DTYPES[dtype]).itemsize) + 2 * precision * (input_elements
                                                                                             + output_elements)
    check_fits(estimate.with_extra(extra), args.max_memory)


def text_stream(json_output: bool) -> TextIO:
    return sys.stderr if json_output else sys.stdout


def print_json(document: dict) -> None:
    print(json.dumps(document, indent=1, default=str))


def print_summary(report, wall: float, trace, say: TextIO, check: "Check | None" = None) -> None:
    """The run report, the simulator's own speed, the check's time and where the trace went."""
    print(report.summary(), file=say)
    print(f"simulated in {wall:.2f} s ({report.instructions / max(wall, 1e-9):,.0f} instructions/s)"
          + (f"; reference check {check.seconds:.2f} s" if check is not None and check.seconds is not None else "")
          + f"; {seconds_since_start():.2f} s since start", file=say)
    if trace:
        print(f"trace written to {trace} (open in https://ui.perfetto.dev)", file=say)


def check_fields(check: "Check | None") -> dict:
    """The check's part of a command's JSON document (None for a timing-only run)."""
    return {"check_passed": check.passed if check else None, "check": check.to_dict() if check else None}


@dataclass(frozen=True)
class Check:
    """The result against a reference: the largest error relative to |ref| + rms(ref); seconds: the time the
    reference and the comparison took (timed_check)."""

    passed: bool
    error: float
    tolerance: float
    seconds: float | None = None

    def line(self, name: str) -> str:
        return (f"check against the numpy reference: {'PASSED' if self.passed else 'FAILED'} "
                f"(max |{name} - ref| / (|ref| + rms) = {self.error:.2e}, tolerance {self.tolerance:.0e})")

    def to_dict(self) -> dict:
        return {"passed": self.passed, "max_error": self.error, "tolerance": self.tolerance, "seconds": self.seconds}


def reference_precision(dtype: str):
    """The dtype the reference computes in: float32 for float16/bfloat16 data (its rounding error, about 1e-6 of
    rms, is far below their tolerances of 1e-3 and 8e-3), float64 for float32 data (tolerance 1e-5)."""
    return np.float64 if dtype == "float32" else np.float32


def check_against(got: np.ndarray, expect: np.ndarray, dtype: str, hf32: bool,
                  tolerance: float | None = None) -> Check:
    """tolerance: instead of the dtype's (a run that rounds its operands further, e.g. to float16)."""
    got = got.astype(np.float64)
    rms = float(np.sqrt(np.mean(np.square(expect, dtype=np.float64)))) or 1.0
    error = float((np.abs(got - expect) / (np.abs(expect) + rms)).max())
    tolerance = tolerance or TOLERANCE["hf32" if hf32 and dtype == "float32" else dtype]
    return Check(bool(np.isfinite(got).all() and error <= tolerance), error, tolerance)


def timed_check(reference: Callable[[], np.ndarray], got: np.ndarray, dtype: str, hf32: bool,
                tolerance: float | None = None) -> Check:
    """check_against(got, reference()), with the time both took."""
    start = time.perf_counter()
    check = check_against(got, reference(), dtype, hf32, tolerance)
    return replace(check, seconds=time.perf_counter() - start)
