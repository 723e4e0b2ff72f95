"""The run commands' reference check, computed on a second thread while the simulation runs on the first.

The reference depends only on the operands, so it starts as soon as they are drawn: its GEMMs and array additions
run in numpy with the GIL released, on the machine's other core, while the simulation (Python) keeps the first;
the comparison with the simulated result follows the launch. What is printed does not change: the same reference
bits, the same comparison, and the check's own time (the reference's wall time on its thread plus the
comparison), marked as taken alongside the simulation.

numpy's OpenBLAS runs on one thread, as in the simulation (ascend_sim/machine/blas.py): the checks' GEMMs are
small (K = Cout/groups per kernel tap), and OpenBLAS's spinning threads tripled the default conv3d-dx check's CPU
time (0.41 s against 0.13 s on this 2-core machine) for no gain in wall time. The limit is process-wide, so it is
set once around the launch and the reference together: a restore at the end of either could not change the
thread count the other computes with.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from frontends.cli.report import Check, compare

if TYPE_CHECKING:
    import numpy as np


class ReferenceAlongside:
    """A reference being computed on its own thread (reference_alongside); check() compares a result with it."""

    def __init__(self, reference: Callable[[], np.ndarray]):
        self._reference = reference
        self._expect = None
        self._error: BaseException | None = None
        self._seconds = 0.0
        self._thread = threading.Thread(target=self._compute, name="reference check", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wait(self) -> None:
        self._thread.join()

    def _compute(self) -> None:
        start = time.perf_counter()
        try:
            self._expect = self._reference()
        except BaseException as err:  # raised again by expected(), on the command's thread
            self._error = err
        self._seconds = time.perf_counter() - start

    def expected(self) -> np.ndarray:
        """The reference, once it is done; its error, if it raised one."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._expect

    def check(self, got: np.ndarray, dtype: str, hf32: bool, tolerance: float | None = None,
              on_grid: bool = False) -> Check:
        """compare(got, the reference, ...), timed with the reference."""
        expect = self.expected()
        start = time.perf_counter()
        check = compare(got, expect, dtype, hf32, tolerance, on_grid)
        return replace(check, seconds=self._seconds + time.perf_counter() - start, alongside=True)


@contextmanager
def reference_alongside(reference: Callable[[], np.ndarray] | None) -> Iterator[ReferenceAlongside | None]:
    """Start `reference` on a second thread for the body (the launch) and wait for it at the end; None (a
    timing-only run) starts nothing and yields None. numpy's OpenBLAS stays on one thread until both are done."""
    if reference is None:
        yield None
        return
    from ascend_sim.machine.blas import blas_threads
    pending = ReferenceAlongside(reference)
    with blas_threads(1):
        pending.start()
        try:
            yield pending
        finally:
            pending.wait()
