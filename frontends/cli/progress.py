"""Progress of long runs on a terminal: the estimate, then a tqdm bar of the instructions issued (rate, time left).

Shown only when stdout and stderr are terminals and the run is estimated to issue more than LONG_RUN
instructions (kernels/common/size_guard.py's estimate); the bar goes to stderr. It needs no hook (a hook would force the
exact engine and cost time per instruction): a thread reads the running launch's per-core instruction counts a few
times a second (ascend_sim.engine.chip.LAUNCH_OBSERVERS). The kernel's Python issues the records; with the fast engine
the schedule runs after them, so the bar reaches the count and then waits for the schedule.
"""
from __future__ import annotations

import sys
import threading

from ascend_sim.engine import chip as chip_module
from kernels.common.size_guard import ESTIMATE_OBSERVERS

LONG_RUN = 100_000  # instructions: about 5 s or more at the simulator's usual 10,000-20,000 instructions/s
POLL_SECONDS = 0.25


def on_terminal() -> bool:
    return sys.stdout.isatty() and sys.stderr.isatty()


class LaunchProgress:
    """`with LaunchProgress():` around an operator call (or `LaunchProgress(instructions)` where the caller has
    the estimate): the bar appears once an estimate above LONG_RUN is known, on a terminal only."""

    def __init__(self, instructions: int | None = None):
        self.enabled = on_terminal()
        self.total = 0
        self.bar = None
        self.chips: list = []
        self.stop = threading.Event()
        self.thread = None
        if instructions is not None:
            self._estimated(instructions)

    def __enter__(self) -> LaunchProgress:
        if self.enabled:
            ESTIMATE_OBSERVERS.append(self._on_estimate)
            chip_module.LAUNCH_OBSERVERS.append(self.chips.append)
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        ESTIMATE_OBSERVERS.remove(self._on_estimate)
        chip_module.LAUNCH_OBSERVERS.remove(self.chips.append)
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        if self.bar is not None:
            self._update()
            self.bar.close()

    def _on_estimate(self, estimate) -> None:
        self._estimated(estimate.instructions)

    def _estimated(self, instructions: int) -> None:
        self.total += instructions  # a command may launch several kernels (convolution_backward)
        if not self.enabled or self.total <= LONG_RUN:
            return
        if self.bar is None:
            from tqdm import tqdm  # only on a terminal, for a long run

            print(f"estimated ~{self.total:,} instructions: a long run", file=sys.stderr)
            self.bar = tqdm(total=self.total, unit=" instr", unit_scale=True, file=sys.stderr, leave=False,
                            dynamic_ncols=True)
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()
        else:
            self.bar.total = self.total

    def _issued(self) -> int:
        count = 0
        for chip in list(self.chips):
            for core in list(chip.cores):
                try:
                    count += sum(list(core.counts.values()))
                except RuntimeError:  # the kernel added an instruction name meanwhile: counted at the next poll
                    pass
        return count

    def _update(self) -> None:
        issued = self._issued()
        if issued > self.bar.total:  # the estimate is within a factor of about 3
            self.bar.total = issued
        self.bar.update(issued - self.bar.n)

    def _poll(self) -> None:
        while not self.stop.wait(POLL_SECONDS):
            self._update()
