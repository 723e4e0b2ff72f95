"""A run command's operands drawn on a second thread while the command imports its operator and plans the run.

The draw (numpy's seeded generator, then the cast to the data's dtype) releases the GIL, so on a machine with a core
to spare it runs beside the imports of the planner, the kernel and the simulator, which hold it: the default
`ascend-sim conv3d-dx` took 30-40 ms to draw its 1.7 million standard normals after those imports, on the process's
critical path (issue 22's wall time). The same generator draws the same operands in the same order on one thread
either way, so the bits do not change.

It starts before the size guard (kernels/common/size_guard.py), which needs the plan: only when the operands are
small enough that a run the guard then refuses has drawn little (their float64 draw at most EARLY_DRAW_BYTES, and
within --max-memory), and only with a core to spare (reference_alongside.spare_core: on a loaded machine the
thread would only take turns with the imports). Otherwise result() draws them when it is called, after the guard,
as before.
"""
from __future__ import annotations

import math
import threading

from frontends.cli.reference_alongside import spare_core
from frontends.cli.report import random_operands

EARLY_DRAW_BYTES = 64 << 20  # float64 bytes of the largest draw started before the size guard


class EarlyOperands:
    """random_operands(seed, dtype, timing_only, *shapes), started on a thread now when it may (the module's
    docstring); result() waits for it, or draws them itself."""

    def __init__(self, seed: int, dtype, timing_only: bool, *shapes, max_memory: int | None = None,
                 alongside: bool | None = None):
        """alongside: draw on a thread (None: when the rules above allow it)."""
        self._arguments = (seed, dtype, timing_only, *shapes)
        self._operands: list | None = None
        self._error: BaseException | None = None  # the thread's, raised again by result()
        self._thread: threading.Thread | None = None
        if alongside is None:
            drawn = 8 * sum(math.prod(shape) for shape in shapes if shape is not None)
            alongside = not timing_only and drawn <= min(EARLY_DRAW_BYTES, max_memory or EARLY_DRAW_BYTES) \
                and spare_core()
        if alongside:
            # a daemon: a run refused before result() ends without waiting for it
            self._thread = threading.Thread(target=self._draw, name="operands", daemon=True)
            self._thread.start()

    def _draw(self) -> None:
        try:
            self._operands = random_operands(*self._arguments)
        except BaseException as err:  # MemoryError: raised by result(), in the command
            self._error = err

    def result(self) -> list:
        """The operands (drawn here when no thread drew them); the thread's error, if its draw raised one."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error
        if self._operands is None:
            self._operands = random_operands(*self._arguments)
        return self._operands
