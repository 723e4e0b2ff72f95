"""The chip: global memory shared by `block_dim` cube cores, and the launcher that runs a kernel on them.

Cores run one at a time (deterministic, steppable), each in its own thread so that a cross-core barrier
(`SyncAll`) can suspend one core while the others catch up. Only one thread ever runs at once.
"""
from __future__ import annotations

import gc
import threading
from typing import Callable

from .blas import blas_threads
from .core import AICore
from .faults import SimFault, SyncFault
from .memory import GlobalMemory
from .platform import Platform, get_platform
from .report import RunReport

_current = threading.local()


def current_core() -> AICore:
    core = getattr(_current, "core", None)
    if core is None:
        raise RuntimeError("no kernel is running: Ascend C calls must run inside Chip.launch")
    return core


class _Abort(BaseException):
    """Unwinds a suspended core when another core faulted."""


class Chip:
    """A simulated SoC. `execute=False` is the timing-only mode (same schedule, no data moved).

    `blas_threads` (default 1) limits numpy's OpenBLAS during each launch: one thread makes full runs several
    times faster and the fp32 sums of every Mmad independent of the machine's core count (ascend_sim/blas.py);
    None leaves OpenBLAS as it is.
    """

    def __init__(self, platform: str | Platform = "Ascend910B2", *, execute: bool = True,
                 check_races: bool = True, record: bool = True, hooks: list[Callable] | None = None,
                 blas_threads: int | None = 1):
        self.platform = get_platform(platform)
        self.blas_threads = blas_threads
        self.gm = GlobalMemory()
        self.execute = execute
        self.check_races = check_races
        self.record = record
        self.hooks = list(hooks or [])
        self.cores: list[AICore] = []
        self.gm_read_rate = self.platform.rates.gm_to_l1
        self.gm_write_rate = self.platform.rates.l0c_to_gm

    def launch(self, kernel: Callable, block_dim: int, *args, **kwargs) -> RunReport:
        """Run `kernel(*args, **kwargs)` on cores 0..block_dim-1 and return the run's report."""
        p = self.platform
        if not 1 <= block_dim <= p.aic_cores:
            raise ValueError(f"block_dim={block_dim} outside [1, {p.aic_cores}] cube cores of {p.name}")
        # All cores share the chip's GM bandwidth; each also has its own per-core ceiling.
        share = p.rates.chip_gm_bytes_per_cycle / block_dim
        self.gm_read_rate = min(p.rates.gm_to_l1, share)
        self.gm_write_rate = min(p.rates.l0c_to_gm, share)
        self.cores = [AICore(i, block_dim, self) for i in range(block_dim)]
        # The run allocates a few long-lived objects per instruction (the log); the cyclic garbage collector
        # would traverse the whole heap again and again for them (a third of the run time when torch is
        # loaded). Nothing the simulator keeps per instruction is cyclic, so it is paused for the run only.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with blas_threads(self.blas_threads if self.execute else None):
                _Runner(self.cores, kernel, args, kwargs).run()
        finally:
            if gc_was_enabled:
                gc.enable()
        for core in self.cores:
            core.check_flags_at_end()
        return RunReport.from_cores(p, self.cores)

    def sync_all(self, core: AICore) -> None:
        """Cross-core barrier (SyncAll): suspends the calling core until every core arrives."""
        runner: _Runner = core.runner
        runner.arrive(core)


class _Runner:
    """Runs cores in turn; a core gives up its turn when it finishes or reaches SyncAll."""

    def __init__(self, cores, kernel, args, kwargs):
        self.cores = cores
        self.kernel, self.args, self.kwargs = kernel, args, kwargs
        self.turn = [threading.Semaphore(0) for _ in cores]
        self.back = threading.Semaphore(0)
        self.state = ["ready"] * len(cores)  # ready | barrier | done
        self.error: BaseException | None = None
        self.abort = False
        for core in cores:
            core.runner = self

    def _body(self, i: int) -> None:
        self.turn[i].acquire()
        _current.core = self.cores[i]
        try:
            if not self.abort:
                self.kernel(*self.args, **self.kwargs)
                for pipe in self.cores[i].tpipes:
                    pipe.Destroy()
        except _Abort:
            pass
        except BaseException as exc:  # reported by the main thread
            self.error = exc
        finally:
            self.state[i] = "done"
            _current.core = None
            self.back.release()

    def arrive(self, core: AICore) -> None:
        i = core.index
        self.state[i] = "barrier"
        self.back.release()
        self.turn[i].acquire()
        if self.abort:
            raise _Abort()

    def run(self) -> None:
        threads = [threading.Thread(target=self._body, args=(i,), daemon=True) for i in range(len(self.cores))]
        for t in threads:
            t.start()
        try:
            while True:
                for i, core in enumerate(self.cores):
                    if self.state[i] == "done":
                        continue
                    self.state[i] = "running"
                    self.turn[i].release()
                    self.back.acquire()
                    if self.error is not None:
                        raise self.error
                waiting = [i for i, s in enumerate(self.state) if s == "barrier"]
                if not waiting:
                    break
                finished = [i for i, s in enumerate(self.state) if s == "done"]
                if finished:
                    raise SyncFault(f"cores {waiting} wait at SyncAll but core {finished[0]} ended without "
                                    "reaching it: the chip would hang", core=finished[0], instruction="SyncAll")
                t = max(core.cycles for core in self.cores)
                for core in self.cores:
                    core.sync_to(t)
        except BaseException:
            self.abort = True
            for i, s in enumerate(self.state):
                if s != "done":  # wake every core so that its thread sees the abort and ends
                    self.turn[i].release()
            raise
        finally:
            for t in threads:
                t.join(timeout=5)


__all__ = ["Chip", "current_core", "SimFault"]
