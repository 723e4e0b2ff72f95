"""The chip: global memory shared by the cores of a launch, and the launcher.

A launch runs the kernel's Python once per core, one core after the other, with no threads: each Ascend C call
becomes a record that the core's scheduler runs as soon as its dependencies allow. A record that must wait for
another core (SyncAll, CrossCoreWaitFlag) stays pending until that core's kernel has issued what it waits for,
so the order in which the cores' Python runs does not change any result, cycle or fault.
"""
from __future__ import annotations

import gc
import sys
from typing import Callable

from ascend_sim.engine import fast_engine, forked_data, replay_engine, replay_passes
from ascend_sim.engine.core import AICore
from ascend_sim.engine.streamed import StreamedLaunch, streams_by_ai_core
from ascend_sim.engine.descriptor import FrontEndCache
from ascend_sim.machine.blas import blas_threads
from ascend_sim.machine.coretypes import KernelType, launch_cores
from ascend_sim.machine.faults import SimFault, SyncFault
from ascend_sim.machine.memory import GlobalMemory
from ascend_sim.machine.platform import Platform, get_platform
from ascend_sim.passes.races import GRANULE_BY_ARCH, GmRaceChecker
from ascend_sim.passes.report import RunReport
from ascend_sim.passes.schedule import CostModel, Launch

_running: list = [None]  # the core whose kernel Python is running


def current_core() -> AICore:
    core = _running[0]
    if core is None:
        raise RuntimeError("no kernel is running: Ascend C calls must run inside Chip.launch")
    return core


ENGINES = ("auto", "exact", "fast", "replay")
# callables observer(chip), called when a launch has made its cores and before any kernel Python runs: a progress
# display polls the cores' counts from its own thread (no per-instruction cost and no hook, so the engine stays)
LAUNCH_OBSERVERS: list[Callable] = []
# records: loading numba and the cached compiled passes costs a process about 0.3 s of CPU, and they save 6-10 us a
# record (full, race-checked and timing-only runs alike), so a process whose launches' records reach this many pays
# it back (measured: docs/performance.md, "auto's compiled rule")
AUTO_COMPILED_FROM = 50_000
_python_records = [0]  # records this process's launches ran while numba was not loaded (the passes' Python share)


class Chip:
    """A simulated SoC. `execute=False` is the timing-only mode (same schedule, no data moved).

    `engine`: "exact" schedules and runs each record as it is issued, with hooks (the stepping point);
    "fast" schedules the whole stream once the kernel's Python has run, with the compiled scheduler
    (fast_engine.py), and runs no hooks; both give the same results, cycles, records and faults. "auto" (the
    default) is "exact" when hooks are attached; otherwise it schedules after the kernel's Python too, with the
    compiled scheduler from AUTO_COMPILED_FROM records on (below that, importing numba costs more than it saves),
    unless record=False: then "auto" is "exact", which schedules each record as it is issued and keeps none once
    it has run (the report has no per-instruction logs); a record waiting for another core (SyncAll, a cross-core
    flag) stays until that core's Python has issued what it waits for. A timing-only run with record=False and
    no race checks streams the replay instead, on "auto" and "replay": each AI core's streams are scheduled
    once its Python has run, then dropped (engine/streamed.py).
    "replay" is "fast" plus the replay of API units declared replayable (engine/replay.py): a unit's later calls
    with the same key reuse the records and state change of its first; "auto" replays too whenever it does not
    use the exact engine, and leaves the replayed calls' records unmade (compiled passes) from AUTO_COMPILED_FROM
    records on. `replay`: "on", "off", "verify" (each replayed call is also run for real and compared)
    or a fraction of the replayed calls to verify; default: env ASCEND_REPLAY, else "on".

    `blas_threads` (default 1) limits numpy's OpenBLAS during each launch: one thread makes full runs several
    times faster and the fp32 sums of every Mmad independent of the machine's core count (ascend_sim/machine/blas.py);
    None leaves OpenBLAS as it is.

    `front_end_cache` (default on): a call that decodes to an instruction already decoded in the launch reuses
    the decoded parts (front_end_cache.py); the same records, cycles, results and faults, with fewer checks run.
    """

    def __init__(self, platform: str | Platform = "Ascend910B2", *, execute: bool = True,
                 check_races: bool = True, record: bool = True, hooks: list[Callable] | None = None,
                 blas_threads: int | None = 1, engine: str = "auto", front_end_cache: bool = True,
                 replay: str | float | None = None):
        if engine not in ENGINES:
            raise ValueError(f"engine={engine!r} is not one of {ENGINES}")
        if engine in ("fast", "replay") and hooks:
            raise ValueError(f"engine={engine!r} runs no hooks: use engine='exact' (or 'auto') with hooks")
        self.replay_mode = replay_engine.replay_mode(replay)
        self.data_processes = forked_data.data_processes()  # env ASCEND_DATA_PROCESSES, checked before any launch
        self.replayer = None  # the launch's templates (engine/replay.py)
        self.platform = get_platform(platform)
        self.engine = engine
        self.blas_threads = blas_threads
        # timing-only: size-only allocations; in shared mappings only when the data pass may fork (forked_data)
        self.gm = GlobalMemory(allocate=execute, shared=self.data_processes > 1)
        self.execute = execute
        self.check_races = check_races
        self.record = record
        self.hooks = list(hooks or [])
        self.cores: list[AICore] = []
        self.executed: list = []  # every record of the last launch in the order it ran: replaying it redoes the run
        self.kernel_type = KernelType.AIC_ONLY
        self.gm_races = None
        self.caches_front_end = front_end_cache
        self.front_end_cache = None  # the last launch's FrontEndCache (its hits and misses), when on

    @property
    def deferred(self) -> bool:
        """Whether launches schedule the stream after the kernel's Python (not "exact", no hooks)."""
        return self.engine in ("fast", "replay") or (self.engine == "auto" and not self.hooks and
                                                     (self.record or self.streams))

    @property
    def streams(self) -> bool:
        """Whether launches schedule each AI core's streams once its Python has run and drop them (a replay run
        keeping no records, timing-only, without race checks: engine/streamed.py)."""
        return streams_by_ai_core(self.engine, record=self.record, hooks=self.hooks, execute=self.execute,
                                  check_races=self.check_races, replay_mode=self.replay_mode)

    @property
    def replaying(self) -> bool:
        """Whether launches replay the API units declared replayable (engine/replay.py)."""
        return self.replay_mode != "off" and (self.engine == "replay" or (self.engine == "auto" and self.deferred))

    def launch(self, kernel: Callable, block_dim: int, *args, kernel_type: KernelType | str = KernelType.AIC_ONLY,
               **kwargs) -> RunReport:
        """Run `kernel(*args, **kwargs)` on the cores of `block_dim` blocks and return the run's report.

        kernel_type: AIC_ONLY (block_dim cube cores), AIV_ONLY (block_dim vector cores), MIX_AIC_1_0 /
        MIX_AIV_1_0 (the same with cross-core flags), MIX_AIC_1_1 or MIX_AIC_1_2 (block_dim AI cores, each an AIC
        with one or two AIVs)."""
        p = self.platform
        kernel_type = _kernel_type(kernel_type)
        vector_only = kernel_type in (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0)
        aiv_needed = block_dim if vector_only else block_dim * kernel_type.aiv_per_aic
        limit, what = (p.aiv_cores, "vector cores") if vector_only else (p.aic_cores, "cube cores")
        if not 1 <= block_dim <= limit or aiv_needed > p.aiv_cores:
            raise ValueError(f"block_dim={block_dim} outside [1, {limit}] {what} of {p.name} for a "
                             f"{kernel_type.value} kernel")
        layout = launch_cores(kernel_type, block_dim)
        # cores of one type share the chip's GM bandwidth
        kinds = [kind for kind, *_ in layout]
        models = {kind: CostModel(p, kinds.count(kind)) for kind in set(kinds)}
        launch = Launch()
        self.kernel_type = kernel_type
        self.executed = []
        self.front_end_cache = FrontEndCache() if self.caches_front_end else None
        self.replayer = None
        self.gm_races = GmRaceChecker(len(layout), GRANULE_BY_ARCH.get(self.platform.npu_arch, 2)) \
            if self.check_races else None
        self.cores = [AICore(i, block_dim, self, kind, models[kind], launch, block_idx, sub, group)
                      for i, (kind, block_idx, sub, group) in enumerate(layout)]
        _share_l1_with_aivs(self.cores)
        _wire_l0c_to_ub(self.cores)
        self.shared_buffers = shared_buffer_keys(self.cores)  # race-checked across cores; not batched (replay_data)
        if self.gm_races is not None:
            self.gm_races.shared = self.shared_buffers
        launch.schedules = [core.schedule for core in self.cores]
        for hook in self.hooks:  # a hook object may want the chip as it is before the launch (the debugger's GM)
            before = getattr(hook, "before_launch", None)
            if before is not None:
                before(self)
        for observe in LAUNCH_OBSERVERS:
            observe(self)
        # The run allocates a few long-lived objects per instruction (the log); the cyclic garbage collector
        # would traverse the whole heap again and again for them (a third of the run time when torch is
        # loaded). Nothing the simulator keeps per instruction is cyclic, so it is paused for the run only.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        deferred = self.deferred
        streamed = StreamedLaunch(self, _compiled_pays) if self.streams else None
        try:
            with blas_threads(self.blas_threads if self.execute else None):
                try:
                    for core in self.cores:
                        _running[0] = core
                        kernel(*args, **kwargs)
                        for pipe in core.tpipes:
                            pipe.Destroy()
                        if streamed is not None:
                            streamed.core_done(core)
                except BaseException:
                    # a fault the exact engine would have raised first, while this kernel ran (unless it is the
                    # exact scheduler's own, raised on a streamed AI core's records)
                    if deferred and not (streamed is not None and streamed.submitting):
                        _running[0] = None
                        try:
                            replay_engine.materialise(self, self.cores)
                            fast_engine.submit_all(self.cores)
                        except SimFault as fault:
                            raise fault from None
                    raise
                _running[0] = None
                if deferred and not (streamed is not None and streamed.finish()) and not self._replayed_lazily():
                    records = sum(len(core.stream) for core in self.cores)
                    compiled = self.engine in ("fast", "replay") or _compiled_pays(records)
                    # submit_all: a short stream, or a faulty end (found and reported as the exact engine does)
                    if not (compiled and fast_engine.run_passes(self, self.cores)):
                        fast_engine.submit_all(self.cores)
        finally:
            _running[0] = None
            if gc_was_enabled:
                # the run's objects go straight to the oldest generation, so the first allocation after the
                # launch does not traverse them all in a young collection (unless the caller froze objects of
                # its own: unfreezing would thaw those too)
                if not gc.get_freeze_count():
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
        waiting = launch.waiting_cores()
        if waiting:
            done = next(core.index for core in self.cores if core.index not in waiting)
            raise SyncFault(f"cores {waiting} wait at SyncAll but core {done} ended without reaching it: the chip "
                            "would hang", core=done, instruction="SyncAll")
        for (mode, group, flag), sets in launch.rounds.items():  # the round's last set heads the fault
            raise self.cores[sets[-1].core].with_context(SyncFault(
                f"CrossCoreSetFlag mode {mode} on flag {flag}: only {len(sets)} of the cores it synchronises set it "
                f"before the kernel ended (cores {sorted(r.core for r in sets)})"), sets[-1])
        for core in self.cores:
            core.check_at_end()
        report = RunReport.from_cores(p, self.cores)
        if "numba" not in sys.modules:
            _python_records[0] += report.instructions
        for core in self.cores:
            core.release()
        return report

    def _replayed_lazily(self) -> bool:
        """Streams with replayed units: scheduled, race-checked and run with their records left unmade
        (replay_engine.py, replay_passes.py), else (a race, an unclean end) materialised for the fast engine's
        passes."""
        if not replay_engine.has_blocks(self.cores):
            return False
        if self.engine == "auto" and not _compiled_pays(replay_engine.stream_records(self.cores)):
            replay_engine.materialise(self, self.cores)
            return False
        passes = replay_passes.run if self.execute or self.check_races else None
        if replay_engine.run_lazy(self, self.cores, passes):
            return True
        replay_engine.materialise(self, self.cores)
        return False


def _compiled_pays(records: int) -> bool:
    """Whether "auto" takes the compiled passes for a stream of `records`: once numba is loaded, always; before,
    once this stream and the earlier launches' streams of the process reach AUTO_COMPILED_FROM records (the load
    is then won back, by this launch alone or by the records to come, as the earlier ones were)."""
    return "numba" in sys.modules or _python_records[0] + records >= AUTO_COMPILED_FROM


def _share_l1_with_aivs(cores: list) -> None:
    """Where the vector core has a UB -> L1 path (the 950), each AIV of a MIX launch addresses its own AIC's L1:
    a TBuf in B1 on the AIV takes the same L1 addresses as on the AIC, as the two TPipes allocate alike. The
    cores' accesses of that L1 are race-checked between them by the GM rule (passes/races.py, GmRaceChecker)."""
    l1_of_group = {core.group: core.buffers["L1"] for core in cores if "L1" in core.buffers}
    for core in cores:
        if "UB->L1" in core.paths and core.group in l1_of_group:
            core.buffers["L1"] = l1_of_group[core.group]


def _wire_l0c_to_ub(cores) -> None:
    """Arch 3510 has an L0C -> UB path: an AIC's Fixpipe writes the UB of its AI core's vector core (subBlockId 0,
    asc-devkit Fixpipe（L0C到UB数据搬运）.md; the dual-destination modes are not modelled). In a MIX launch the AIC
    sees AIV sub-block 0's UB as its own "UB" (TPipe.InitBuffer of a VECIN/VECOUT buffer there, Fixpipe into it).
    Each core's race checker orders its own pipes' accesses of that UB; between the AIC and the AIV only the
    kernel's cross-core flags and SyncAll order them, checked by the GM rule (passes/races.py, GmRaceChecker)."""
    aics = {core.group: core for core in cores if core.core_type.name == "AIC" and "L0C->UB" in core.paths}
    for core in cores:
        aic = aics.get(core.group)
        if aic is not None and core.core_type.name == "AIV" and core.sub_block_idx == 0:
            aic.buffers["UB"] = core.buffers["UB"]


def shared_buffer_keys(cores) -> frozenset:
    """The race keys of the on-chip buffers more than one core of the launch addresses (the wiring above)."""
    owners: dict = {}
    for core in cores:
        for buf in core.buffers.values():
            owners.setdefault(buf.key, set()).add(core.index)
    return frozenset(key for key, users in owners.items() if len(users) > 1)


def _kernel_type(value) -> KernelType:
    if isinstance(value, KernelType):
        return value
    try:
        return KernelType(value)
    except ValueError:
        raise ValueError(f"kernel_type={value!r} is not one of {[k.value for k in KernelType]}") from None


__all__ = ["Chip", "current_core", "SimFault"]
