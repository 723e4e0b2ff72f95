"""What the run commands share in their output: the operands, the check against a reference, where text goes, and
the one JSON document every run command prints (run_document; docs/cli.md describes it). numpy and the operators
are imported where used: `ascend-sim --help` imports this module.

With --json, stdout carries the JSON document alone: every line of text goes to stderr instead.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    import numpy as np

STARTED = time.perf_counter()  # where /proc is missing: the time since this module loaded
# Python's start-up and the imports before this module take well under this; more means the process was exec'd
# by a program that ran before it (the last command of `bash -c`), whose start time it keeps
_EXEC_SLACK = 1.0


def seconds_since_start() -> float:
    """Wall seconds since the process started (Linux /proc: its start in clock ticks after boot), imports included;
    since this module loaded where /proc is missing or counts an earlier program's time (a shell's `exec`)."""
    since_load = time.perf_counter() - STARTED
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()  # after "pid (comm)": field 3 (state) onwards
        with open("/proc/uptime") as uptime:
            now = float(uptime.read().split()[0])
        since_start = now - int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
    except (OSError, ValueError, IndexError):
        return since_load
    return since_start if since_start < since_load + _EXEC_SLACK else since_load

# Tolerance of |got - ref| / (|ref| + rms(ref)): one rounding to the output dtype after fp32 accumulation
# (half an ulp: 2^-11 fp16, 2^-8 bf16), with margin; HF32 rounds the fp32 operands to 11 mantissa bits.
# The 950's 8-bit types (the debugger's comparison; the matmul command checks them on their grid, check_on_grid):
# half a step relative to |ref| + rms is at most 2^-4 for float8_e4m3fn (3 mantissa bits) and 2^-3 for hifloat8
# (2 mantissa bits at the magnitudes of a matmul's results, fewer beyond 2^8).
TOLERANCE = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3, "float8_e4m3fn": 0.07,
             "hifloat8": 0.13}


def random_operands(seed: int, dtype, timing_only: bool, *shapes) -> list:
    """Standard-normal operands of these shapes drawn in order from one seeded generator (None for a shape
    None); with timing_only, size-only stand-ins instead, which take no memory (nothing reads their bytes)."""
    import numpy as np
    if timing_only:
        from kernels.common.operands import stand_in
        return [None if shape is None else stand_in(shape, dtype) for shape in shapes]
    rng = np.random.default_rng(seed)
    return [None if shape is None else rng.standard_normal(shape).astype(dtype) for shape in shapes]


def check_cli_run(estimate, input_elements: int, output_elements: int, dtype: str, *, timing_only: bool,
                  max_memory: int | None, remedies: tuple[str, ...] = ("execute", "check_races", "record")) -> None:
    """The size guard of a run command, before it draws its operands: the operator's estimate
    (kernels/common/size_guard.py) plus, in a full run, the operands (drawn in float64, kept in dtype) and the
    reference check (the operands and the output in its precision, about twice; and the operands in dtype twice
    more: the task file and the copy of the child process that computes it, frontends/cli/reference_alongside.py).
    max_memory: --max-memory; remedies: what the command's operator takes to need less (size_guard.REMEDIES)."""
    import numpy as np

    from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
    from kernels.common.size_guard import check_fits
    extra = 0
    if not timing_only:
        precision = np.dtype(reference_precision(dtype)).itemsize
        stored = np.dtype({**DTYPES, **EIGHT_BIT_DTYPES}[dtype]).itemsize
        extra = input_elements * (8 + 3 * stored) + 2 * precision * (input_elements + output_elements)
    check_fits(estimate.with_extra(extra), max_memory, remedies)


def text_stream(json_output: bool) -> TextIO:
    return sys.stderr if json_output else sys.stdout


def print_json(document: dict) -> None:
    print(json.dumps(document, indent=1, default=str))


def print_summary(report, wall: float, trace, say: TextIO, check: Check | None = None) -> None:
    """The run report, the simulator's own speed, the check's time, the time since start and where the trace
    went."""
    print(report.summary(), file=say)
    print(f"simulated in {wall:.2f} s ({report.instructions / max(wall, 1e-9):,.0f} instructions/s)"
          + (f"; reference check {check.seconds:.2f} s" + (" alongside it" if check.alongside else "")
             if check is not None and check.seconds is not None else "")
          + f"; {seconds_since_start():.2f} s since start", file=say)
    if trace:
        print(f"trace written to {trace} (open in https://ui.perfetto.dev)", file=say)


def tiling_fields(tiling) -> dict:
    """A tiling as JSON data: a pydantic model's fields (with its int32 blob when it has one) or a dataclass's."""
    if hasattr(tiling, "model_dump_json"):
        fields = json.loads(tiling.model_dump_json(exclude={"platform"}))
        if hasattr(tiling, "to_words"):
            fields["blob_int32"] = tiling.to_words()
        return fields
    return dataclasses.asdict(tiling)


def launch_entry(name: str, kernel: str, tiling, report, trace: str | None = None) -> dict:
    """One kernel launch of a run in the JSON document: what it computed (its output's name), the kernel, its
    tiling and its report."""
    return {"name": name, "kernel": kernel, "tiling": tiling_fields(tiling), "report": report.to_dict(),
            "trace": trace}


def run_document(command: str, checks: dict, launches: list[dict], notes: list, wall: float) -> dict:
    """The JSON document of every run command (docs/cli.md): checks {output: Check} (empty when timing-only),
    the launches (launch_entry), in the order they ran."""
    return {"command": command,
            "check_passed": all(c.passed for c in checks.values()) if checks else None,
            "checks": {name: c.to_dict() for name, c in checks.items()},
            "launches": launches,
            "cycles": sum(launch["report"]["cycles"] for launch in launches),
            "microseconds": sum(launch["report"]["microseconds"] for launch in launches),
            "notes": list(notes), "wall_seconds": wall}


@dataclass(frozen=True)
class Check:
    """The result against a reference: the largest error relative to |ref| + rms(ref) (or in grid steps);
    seconds: the time the reference and the comparison took (frontends/cli/reference_alongside.py); alongside: the
    reference was computed in a second process during the simulation."""

    passed: bool
    error: float
    tolerance: float
    measure: str = "relative"  # or "grid": steps of the result type's grid from the reference rounded once
    seconds: float | None = None
    alongside: bool = False  # the reference was computed alongside the simulation (frontends/cli/reference_alongside.py)

    def line(self, name: str) -> str:
        verdict = "PASSED" if self.passed else "FAILED"
        if self.measure == "grid":
            return (f"check against the numpy reference: {verdict} (max steps of {name}'s grid from ref rounded "
                    f"once = {self.error:g}, tolerance {self.tolerance:g})")
        return (f"check against the numpy reference: {verdict} "
                f"(max |{name} - ref| / (|ref| + rms) = {self.error:.2e}, tolerance {self.tolerance:.0e})")

    def to_dict(self) -> dict:
        return {"passed": self.passed, "max_error": self.error, "tolerance": self.tolerance, "measure": self.measure,
                "seconds": self.seconds}


def reference_precision(dtype: str):
    """The dtype the reference computes in: float32 for float16/bfloat16 data (its rounding error, about 1e-6 of
    rms, is far below their tolerances of 1e-3 and 8e-3), float64 for the rest (float32's tolerance is 1e-5; the
    8-bit grid check rounds the reference to the grid, where float32 sums could cross a rounding boundary)."""
    import numpy as np
    return np.float32 if dtype in ("float16", "bfloat16") else np.float64


CHECK_BLOCK = 1 << 16  # elements compared at a time by check_against


def check_against(got: np.ndarray, expect: np.ndarray, dtype: str, hf32: bool,
                  tolerance: float | None = None) -> Check:
    """tolerance: instead of the dtype's (a run that rounds its operands further, e.g. to float16)."""
    import numpy as np
    rms = float(np.sqrt(np.mean(np.square(expect, dtype=np.float64)))) or 1.0
    # |got - ref| / (|ref| + rms) block by block, in place: each element's bits are the plain expression's and max
    # does not depend on the order. Whole-size temporaries were fresh pages to fault in right after the launch:
    # 27-35 ms for the default conv3d-dx's 1.6M elements, against 4-5 ms in blocks.
    got, expect = got.reshape(-1), expect.reshape(-1)
    finite, error = True, 0.0
    for start in range(0, got.size, CHECK_BLOCK):
        block = got[start:start + CHECK_BLOCK].astype(np.float64)
        finite = finite and bool(np.isfinite(block).all())
        np.abs(np.subtract(block, expect[start:start + CHECK_BLOCK], out=block), out=block)
        scale = np.abs(expect[start:start + CHECK_BLOCK])
        scale += rms
        error = float(np.maximum(error, np.divide(block, scale, out=block).max()))  # a NaN stays, as in one max
    tolerance = tolerance or TOLERANCE["hf32" if hf32 and dtype == "float32" else dtype]
    return Check(finite and error <= tolerance, error, tolerance)


def check_on_grid(got: np.ndarray, expect: np.ndarray) -> Check:
    """An 8-bit result against the float64 reference on got's own grid (its finite values in order): how many
    grid steps each element lies from the reference rounded once (to the nearest grid value, saturating at the
    largest as the 950 does by default); one step allows for the fp32 accumulation moving a value across a
    rounding boundary."""
    import numpy as np  # here: `--help` imports no numpy
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


def compare(got: np.ndarray, expect: np.ndarray, dtype: str, hf32: bool, tolerance: float | None = None,
            on_grid: bool = False) -> Check:
    """check_on_grid(got, expect) with on_grid, else check_against(got, expect, dtype, hf32, tolerance)."""
    return check_on_grid(got, expect) if on_grid else check_against(got, expect, dtype, hf32, tolerance)
