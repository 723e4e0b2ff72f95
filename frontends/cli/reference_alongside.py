"""The run commands' reference check, computed by a second Python process while the simulation runs in this one.

The reference depends only on the operands, so it starts as soon as they are drawn: a child interpreter computes
it (numpy's GEMMs and additions) on the machine's other core while the simulation keeps this one, and sends it
back through a file (below); the comparison with the simulated result follows the launch. A fresh interpreter, neither a
thread nor a fork: a thread shares the GIL with the simulation, which then waits each time the reference's
Python wants it back (about twice per kernel tap, much longer on a loaded machine); a forked child shares this
process's pages copy-on-write, and the simulation's writes then fault and copy them (measured: about 17,000
faults, +6% of the default conv3d-dx launch's CPU time). Either would slow the simulation whose printed time the
check must not touch. The child costs this process only the task's file (the operands, pickled) and the
result's file: the child writes its result to a file and exits, so nothing waits for this process to read it.
Through a pipe (64 KiB of buffer), the child stopped at the first 64 KiB of the default run's 6.4 MB result until
the launch had ended, and the transfer and the child's exit then ran on the process's critical path (20-70 ms).

Only with a core to spare: on a machine whose load average is at or above its usable cores, a second process
cannot run beside the simulation, only compete with it (measured at load 8.5 on 2 cores: the printed simulation
time grew by 40% and the process by 12%), so the reference is then computed after the launch, as before.

What is printed does not change: the same reference bits (the same code, numpy's OpenBLAS on one thread as in the
simulation), the same comparison, and the check's own time (the reference's wall time in the child and the
comparison's), marked as taken alongside the simulation. The task is a picklable callable (a module-level
function with its arguments, e.g. a functools.partial). The child is stopped when the launch fails.

OpenBLAS on one thread (ascend_sim/machine/blas.py): the checks' GEMMs are small (K = Cout/groups per kernel
tap), and OpenBLAS's spinning threads tripled the default conv3d-dx check's CPU time (0.41 s against 0.13 s on
this 2-core machine) for no gain in wall time.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from frontends.cli.report import Check, compare

if TYPE_CHECKING:
    import numpy as np

CHILD = "from frontends.cli.reference_alongside import child_main; child_main()"


def spare_core() -> bool:
    """Whether a second process can run beside this one: the 1-minute load average below the usable cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] < cores
    except (AttributeError, OSError):  # no load average on this system (Windows) or none readable
        return cores > 1


class ReferenceAlongside:
    """A reference computed by a child process (reference_alongside) or, without one, by expected() itself after
    the launch; check() compares a result with it."""

    def __init__(self, reference: Callable[[], np.ndarray]):
        self._reference = reference
        self._child: subprocess.Popen | None = None
        self._files: list[str] = []  # the task's file and the result's, until the child is done
        self._outcome: tuple | None = None
        self.alongside = False  # a child was started

    def start(self) -> None:
        """Write the task and start the child that computes it."""
        handle, task = tempfile.mkstemp(prefix="ascend-sim-reference-", suffix=".pickle")
        self._files.append(task)
        with os.fdopen(handle, "wb") as file:
            pickle.dump(self._reference, file, protocol=pickle.HIGHEST_PROTOCOL)
        handle, result = tempfile.mkstemp(prefix="ascend-sim-reference-", suffix=".result.pickle")
        os.close(handle)
        self._files.append(result)
        # the child imports what this process imports (sys.path), and its OpenBLAS starts no threads
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OPENBLAS_NUM_THREADS": "1"}
        self._child = subprocess.Popen([sys.executable, "-c", CHILD, task, result], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, env=env)
        self.alongside = True

    def expected(self) -> np.ndarray:
        """The reference, once it is done; its error, if it raised one."""
        if self._outcome is None:
            self._outcome = self._received() if self.alongside else computed(self._reference)
        expect, error, _ = self._outcome
        if error is not None:
            raise error
        return expect

    def check(self, got: np.ndarray, dtype: str, hf32: bool, tolerance: float | None = None,
              on_grid: bool = False) -> Check:
        """compare(got, the reference, ...), timed: the reference's own wall time and the comparison's."""
        expect = self.expected()
        start = time.perf_counter()
        check = compare(got, expect, dtype, hf32, tolerance, on_grid)
        return replace(check, seconds=self._outcome[2] + time.perf_counter() - start, alongside=self.alongside)

    def cancel(self) -> None:
        """Stop the child: its reference is no longer wanted (the launch failed)."""
        if self._child is not None:
            self._child.kill()
            self._child.communicate()
            self._child = None
        self._remove_files()

    def _received(self) -> tuple:
        _, err = self._child.communicate()
        code, self._child = self._child.returncode, None
        with open(self._files[1], "rb") as file:
            payload = file.read()
        self._remove_files()
        if code != 0 or not payload:
            lines = err.decode(errors="replace").strip().splitlines() or [f"exit status {code}"]
            return None, RuntimeError(f"the reference check's process failed: {lines[-1]}"), 0.0
        return pickle.loads(payload)

    def _remove_files(self) -> None:
        while self._files:
            os.remove(self._files.pop())


def computed(reference: Callable[[], np.ndarray]) -> tuple[np.ndarray | None, BaseException | None, float]:
    """(the reference or None, its error or None, its wall seconds), with OpenBLAS on one thread."""
    from ascend_sim.machine.blas import blas_threads
    start = time.perf_counter()
    try:
        with blas_threads(1):
            return reference(), None, time.perf_counter() - start
    except Exception as err:  # raised again by expected(), in the command's process
        return None, err, time.perf_counter() - start


def child_main() -> None:
    """The child: load the task from the file its command line names first, compute it, write (result, error,
    seconds) pickled to the file named second (an error that does not pickle as its text), and end at once: its
    interpreter's teardown (numpy's and the task's objects) is nobody's business, and it would take CPU time from
    the simulation on a machine with few cores."""
    with open(sys.argv[1], "rb") as task:
        reference = pickle.load(task)
    expect, error, seconds = computed(reference)
    try:
        payload = pickle.dumps((expect, error, seconds), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        payload = pickle.dumps((None, RuntimeError(f"{type(error).__name__}: {error}"), seconds))
    with open(sys.argv[2], "wb") as result:
        result.write(payload)
    sys.stderr.flush()
    os._exit(0)


@contextmanager
def reference_alongside(reference: Callable[[], np.ndarray] | None,
                        alongside: bool | None = None) -> Iterator[ReferenceAlongside | None]:
    """Start `reference` in a second process for the body (the launch) when `alongside` (None: when there is a
    core to spare, spare_core()), else leave it to check() after the body; None (a timing-only run) yields None.
    The child is stopped if the body raises; otherwise check() collects its result."""
    if reference is None:
        yield None
        return
    pending = ReferenceAlongside(reference)
    if spare_core() if alongside is None else alongside:
        pending.start()
    try:
        yield pending
    except BaseException:
        pending.cancel()
        raise
