"""What the run commands share in their output: the check against a reference, progress, and where text goes.

With --json, stdout carries the JSON document alone: every line of text goes to stderr instead.
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import TextIO

import numpy as np

# Tolerance of |got - ref| / (|ref| + rms(ref)): one rounding to the output dtype after fp32 accumulation
# (half an ulp: 2^-11 fp16, 2^-8 bf16), with margin; HF32 rounds the fp32 operands to 11 mantissa bits.
# The 950's 8-bit types (the debugger's comparison; the matmul command checks them on their grid, check_on_grid):
# half a step relative to |ref| + rms is at most 2^-4 for float8_e4m3fn (3 mantissa bits) and 2^-3 for hifloat8
# (2 mantissa bits at the magnitudes of a matmul's results, fewer beyond 2^8).
TOLERANCE = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3, "float8_e4m3fn": 0.07,
             "hifloat8": 0.13}


def text_stream(json_output: bool) -> TextIO:
    return sys.stderr if json_output else sys.stdout


def print_json(document: dict) -> None:
    print(json.dumps(document, indent=1, default=str))


def print_summary(report, wall: float, trace, say: TextIO) -> None:
    """The run report, the simulator's own speed and where the trace went."""
    print(report.summary(), file=say)
    print(f"simulated in {wall:.2f} s ({report.instructions / wall:,.0f} instructions/s)", file=say)
    if trace:
        print(f"trace written to {trace} (open in https://ui.perfetto.dev)", file=say)


def check_fields(check: "Check | None") -> dict:
    """The check's part of a command's JSON document (None for a timing-only run)."""
    return {"check_passed": check.passed if check else None, "check": check.to_dict() if check else None}


@dataclass(frozen=True)
class Check:
    """The result against a float64 reference: the largest error relative to |ref| + rms(ref)."""

    passed: bool
    error: float
    tolerance: float
    measure: str = "relative"  # or "grid": steps of the result type's grid from the reference rounded once

    def line(self, name: str) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        if self.measure == "grid":
            return (f"check against the numpy reference: {verdict} (max steps of {name}'s grid from ref rounded "
                    f"once = {self.error:g}, tolerance {self.tolerance:g})")
        return (f"check against the numpy reference: {verdict} "
                f"(max |{name} - ref| / (|ref| + rms) = {self.error:.2e}, tolerance {self.tolerance:.0e})")

    def to_dict(self) -> dict:
        return {"passed": self.passed, "max_error": self.error, "tolerance": self.tolerance, "measure": self.measure}


def check_against(got: np.ndarray, expect: np.ndarray, dtype: str, hf32: bool,
                  tolerance: float | None = None) -> Check:
    """tolerance: instead of the dtype's (a run that rounds its operands further, e.g. to float16)."""
    got = got.astype(np.float64)
    rms = float(np.sqrt(np.mean(expect ** 2))) or 1.0
    error = float((np.abs(got - expect) / (np.abs(expect) + rms)).max())
    tolerance = tolerance or TOLERANCE["hf32" if hf32 and dtype == "float32" else dtype]
    return Check(bool(np.isfinite(got).all() and error <= tolerance), error, tolerance)


def check_on_grid(got: np.ndarray, expect: np.ndarray) -> Check:
    """An 8-bit result against the float64 reference on got's own grid (its finite values in order): how many
    grid steps each element lies from the reference rounded once (to the nearest grid value, saturating at the
    largest as the 950 does by default); one step allows for the fp32 accumulation moving a value across a
    rounding boundary."""
    values = np.arange(256, dtype=np.uint8).view(got.dtype).astype(np.float64)
    grid = np.unique(values[np.isfinite(values)])
    got64 = got.astype(np.float64).reshape(-1)
    if not np.isfinite(got64).all():
        return Check(False, float("inf"), 1.0, "grid")
    want = np.clip(expect.reshape(-1), grid[0], grid[-1])
    upper = np.clip(np.searchsorted(grid, want), 1, grid.size - 1)
    nearest = np.where(grid[upper] - want < want - grid[upper - 1], upper, upper - 1)
    steps = float(np.abs(np.searchsorted(grid, got64) - nearest).max())
    return Check(steps <= 1, steps, 1.0, "grid")


class Progress:
    """A simulator hook that shows which core is running, on stderr and only when stderr is a terminal."""

    def __init__(self, cores: int):
        self.cores, self.current, self.start = cores, -1, time.perf_counter()

    @classmethod
    def hooks(cls, cores: int) -> list | None:
        return [cls(cores)] if sys.stderr.isatty() else None

    def __call__(self, core, instruction) -> None:
        if core.index != self.current:
            self.current = core.index
            sys.stderr.write(f"\r  simulating core {core.index + 1} of at most {self.cores} "
                             f"({time.perf_counter() - self.start:.1f} s)")
            sys.stderr.flush()

    @staticmethod
    def done(hooks: list | None) -> None:
        if hooks and hooks[0].current >= 0:
            sys.stderr.write("\r" + " " * 60 + "\r")
