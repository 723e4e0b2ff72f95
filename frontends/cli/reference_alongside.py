"""The run commands' reference check, computed in a second process while the simulation runs in this one.

The reference depends only on the operands, so it starts as soon as they are drawn: a child forked then computes
it (numpy's GEMMs and additions) on the machine's other core while the simulation (Python) keeps this one, and
sends it back through a pipe; the comparison with the simulated result follows the launch. A process and not a
thread: a thread would share the GIL with the simulation, which then waits each time the reference's Python
wants it back (about twice per kernel tap), and much longer on a loaded machine, where the thread is not
scheduled at once: the simulation's own printed time would grow with the check. What is printed does not change:
the same reference bits (the same code, OpenBLAS on one thread as in the simulation), the same comparison, and the
check's own time (the reference's wall time in the child, its transfer and the comparison), marked as taken
alongside the simulation. Where there is no fork (not POSIX), the reference is computed after the launch.

numpy's OpenBLAS runs on one thread (ascend_sim/machine/blas.py): the checks' GEMMs are small (K = Cout/groups
per kernel tap), and OpenBLAS's spinning threads tripled the default conv3d-dx check's CPU time (0.41 s against
0.13 s on this 2-core machine) for no gain in wall time.
"""
from __future__ import annotations

import os
import pickle
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from frontends.cli.report import Check, compare

if TYPE_CHECKING:
    import numpy as np


def _computed(reference: Callable[[], np.ndarray]) -> tuple[np.ndarray | None, BaseException | None, float]:
    """(the reference or None, its error or None, its wall seconds), computed with OpenBLAS on one thread."""
    from ascend_sim.machine.blas import blas_threads
    start = time.perf_counter()
    try:
        with blas_threads(1):
            return reference(), None, time.perf_counter() - start
    except Exception as err:  # raised again by expected(), in the command's process
        return None, err, time.perf_counter() - start


class ReferenceAlongside:
    """A reference being computed in a forked child (reference_alongside); check() compares a result with it."""

    def __init__(self, reference: Callable[[], np.ndarray]):
        self._reference = reference
        self._child: tuple[int, int] | None = None  # (pid, read end of its pipe) while it computes
        self._outcome: tuple | None = None

    def start(self) -> None:
        """Fork the child that computes the reference (without fork: nothing now, expected() computes it)."""
        if not hasattr(os, "fork"):
            return
        import ascend_sim.machine.blas  # noqa: F401 - imported here, not in the child: no import after a fork
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            _send_and_exit(self._reference, read, write)
        os.close(write)
        self._child = (pid, read)

    def expected(self) -> np.ndarray:
        """The reference, once it is done; its error, if it raised one."""
        if self._outcome is None:
            self._outcome = self._received() if self._child is not None else _computed(self._reference)
        expect, error, _ = self._outcome
        if error is not None:
            raise error
        return expect

    def check(self, got: np.ndarray, dtype: str, hf32: bool, tolerance: float | None = None,
              on_grid: bool = False) -> Check:
        """compare(got, the reference, ...), timed with the reference."""
        start = time.perf_counter()
        expect = self.expected()
        check = compare(got, expect, dtype, hf32, tolerance, on_grid)
        return replace(check, seconds=self._outcome[2] + time.perf_counter() - start, alongside=True)

    def cancel(self) -> None:
        """Stop a child whose reference is no longer wanted (the launch failed)."""
        if self._child is not None:
            pid, read = self._child
            self._child = None
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)

    def _received(self) -> tuple:
        pid, read = self._child
        self._child = None
        with os.fdopen(read, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if not data:
            return None, RuntimeError(f"the reference check's process ended without its result (wait status "
                                      f"{status})"), 0.0
        return pickle.loads(data)


def _send_and_exit(reference: Callable[[], np.ndarray], read: int, write: int) -> None:
    """In the child: compute the reference, send (it, error, seconds) pickled, and end without running anything
    of the parent's (no atexit handler, no finally, no buffered output of the parent flushed twice)."""
    try:
        os.close(read)
        outcome = _computed(reference)
        try:
            payload = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # an error that does not pickle: its text
            payload = pickle.dumps((None, RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]}"), outcome[2])
                                   if outcome[1] is not None else (None, err, outcome[2]))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(0)


@contextmanager
def reference_alongside(reference: Callable[[], np.ndarray] | None) -> Iterator[ReferenceAlongside | None]:
    """Start `reference` in a second process for the body (the launch); None (a timing-only run) starts nothing
    and yields None. The child is stopped if the body raises; otherwise check() collects its result."""
    if reference is None:
        yield None
        return
    pending = ReferenceAlongside(reference)
    pending.start()
    try:
        yield pending
    except BaseException:
        pending.cancel()
        raise
