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
# 8-bit: one step of the widest-spaced mantissa the outputs use (hifloat8 2 bits at |x| in [16, 256), e4m3fn 3 bits)
TOLERANCE = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3, "hifloat8": 0.25,
             "float8_e4m3fn": 0.125}


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

    def line(self, name: str) -> str:
        return (f"check against the numpy reference: {'PASSED' if self.passed else 'FAILED'} "
                f"(max |{name} - ref| / (|ref| + rms) = {self.error:.2e}, tolerance {self.tolerance:.0e})")

    def to_dict(self) -> dict:
        return {"passed": self.passed, "max_error": self.error, "tolerance": self.tolerance}


def check_against(got: np.ndarray, expect: np.ndarray, dtype: str, hf32: bool,
                  tolerance: float | None = None) -> Check:
    """tolerance: instead of the dtype's (a run that rounds its operands further, e.g. to float16)."""
    got = got.astype(np.float64)
    rms = float(np.sqrt(np.mean(expect ** 2))) or 1.0
    error = float((np.abs(got - expect) / (np.abs(expect) + rms)).max())
    tolerance = tolerance or TOLERANCE["hf32" if hf32 and dtype == "float32" else dtype]
    return Check(bool(np.isfinite(got).all() and error <= tolerance), error, tolerance)


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
