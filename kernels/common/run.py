"""One run type for every operator, and the launch steps they share.

Every operator's `_run` function (dx, dw, Conv3DV2) and each launch of convolution_backward returns a `Run`: the
result, the tiling, the simulator's report, the notes, the trace path, and a few named extras a front end reads.
The helpers below are the steps each host operator repeats around `Chip.launch`: the output buffer that starts as
NaN, the result read back from GM, the trace file written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ascend_sim.machine.platform import Platform
from ascend_sim.passes.report import RunReport


@dataclass
class Run:
    """What one kernel launch of an operator did: result (None in timing-only mode), tiling, report, notes.

    route / matmul_mode: dx only, "v2" (the conv kernel) or "matmul" (aclnn's matmul shortcut, matmul_mode says
    which). gradient / kernel: a launch of convolution_backward, which gradient it computed with which kernel."""

    result: np.ndarray | None
    tiling: Any
    report: RunReport
    notes: list[str] = field(default_factory=list)
    trace_path: str | None = None
    route: str | None = None
    matmul_mode: str | None = None
    gradient: str | None = None
    kernel: str | None = None

    @property
    def platform(self) -> Platform:
        return self.report.platform

    @property
    def cycles(self) -> float:
        return self.report.cycles

    @property
    def microseconds(self) -> float:
        return self.report.microseconds

    def retime(self, platform) -> RunReport:
        """The report of this run's recorded instruction streams on another platform (other rates, overheads,
        clock), without running the kernel again. The tiling stays this run's: for the tiling the generator would
        choose on that platform, run again there."""
        return self.report.retime(platform)


def output_buffer(chip, name: str, shape: tuple, dtype, poison: bool):
    """The GM allocation of an output; filled with NaN when poison (and executing) so that an element the kernel
    never writes shows up."""
    dtype = np.dtype(dtype)
    buffer = chip.gm.alloc(name, int(np.prod(shape)) * dtype.itemsize)
    if poison and chip.execute:
        buffer.data.view(dtype)[:] = np.nan
    return buffer


def read_output(chip, buffer, shape: tuple, dtype) -> np.ndarray | None:
    """An output as a numpy array of `shape`, or None in timing-only mode (GM holds no bytes)."""
    return buffer.data.view(dtype).reshape(shape).copy() if chip.execute else None


def write_trace(report: RunReport, trace) -> str | None:
    """The Chrome/Perfetto trace of the report written to `trace` (a path, or None for none): the path written."""
    if trace is None:
        return None
    report.write_trace(str(trace))
    return str(trace)
