"""Streamed launches: a replay run that keeps no records, timing-only and without race checks, schedules each AI
core's streams as soon as its cores' Python has run, then drops them (issue 23).

Why it is the exact engine's schedule: the compiled scheduler's state is per core, except what cross-core flags
and SyncAll share. Within one launch, only SyncAll and a mode-0 CrossCoreSetFlag reach past an AI core (an AIC
and its AIVs: `core.group`); modes 1, 2 and 4 stay inside it (fast_schedule._descriptor). An AI core whose
streams hold neither is timed by the compiled pass on its own cores exactly as in the whole launch's pass, and
its cost model is the launch's (CostModel counts the cores of each type). So the memory a run holds is one AI
core's stream (its records and blocks) plus the templates, not the launch's.

The first AI core whose streams hold a SyncAll or a mode-0 set ends the streaming: it and every later one are
held. If no AI core was scheduled before, the launch's end path runs on all the cores as before; otherwise the
held cores' records go to the exact scheduler (the cores scheduled before it are clean and idle, which is what
the exact scheduler has of them at that point), so the fault, if any, is the exact engine's. An AI core whose
compiled schedule does not end cleanly also goes to the exact scheduler, which raises (or, at the launch's end
checks, reports) the fault the exact engine does.
"""
from __future__ import annotations

from ascend_sim.engine import fast_engine, replay_engine


def streams_by_ai_core(engine: str, *, record: bool, hooks, execute: bool, check_races: bool,
                       replay_mode) -> bool:
    """Whether a chip so configured streams its launches (also what the size guard's estimate follows)."""
    return (engine in ("auto", "replay") and not record and not hooks and not execute and not check_races
            and replay_mode != "off")


class StreamedLaunch:
    """One launch's streaming: `core_done` after each core's Python, `finish` once all have run."""

    def __init__(self, chip, compiled_pays):
        from ascend_sim.passes.schedule import CostModel

        self.chip = chip
        self.compiled_pays = compiled_pays  # records -> bool: whether the compiled pass is worth loading
        kinds = [core.core_type.name for core in chip.cores]
        self.models = {kind: CostModel(chip.platform, kinds.count(kind)) for kind in set(kinds)}
        self.n_groups = len({core.group for core in chip.cores})
        self.scheduled = 0  # AI cores scheduled and dropped
        self.held: list = []  # cores left for the end (from the first AI core that reaches past itself)
        self.submitting = False  # records on their way to the exact scheduler (a fault there is final)

    def core_done(self, core) -> None:
        cores = self.chip.cores
        if core.index + 1 < len(cores) and cores[core.index + 1].group == core.group:
            return  # the AI core's other cores have not run yet
        group = [c for c in cores if c.group == core.group]
        if self.held or not self._schedule(group):
            self.held += group

    def finish(self) -> bool:
        """Time the held cores; False when nothing was streamed (the launch's own end path then runs)."""
        if not self.scheduled:
            return False
        if self.held:
            self._exact(self.held)
        return True

    def _schedule(self, group) -> bool:
        """Schedule one AI core's streams and drop them; False (untouched) when they reach past it."""
        from ascend_sim.passes.fast_schedule import CROSS_SET, SYNC_ALL, encode_arrays, event_of, schedule

        kinds = [core.core_type.name for core in group]
        lengths, pool, starts, sizes = replay_engine.stream_arrays(self.chip, group, kinds, self.models,
                                                                   every_template=False)
        kind, event = pool[1], pool[3]  # every entry of the pool is a record of the streams
        if (kind == SYNC_ALL).any() or any(event_of(e)[0] == 0 for e in set(event[kind == CROSS_SET].tolist())):
            return False
        records = sum(lengths)
        self.scheduled += 1
        if self.chip.engine == "auto" and not self.compiled_pays(records * self.n_groups):
            self._exact(group)
            return True
        groups = [core.group for core in group]
        s = schedule(None, kinds, groups, self.chip.platform,
                     encoded=encode_arrays(lengths, pool, kinds, groups, starts, sizes))
        if not s.clean:
            self._exact(group)
            return True
        for core, free, busy in zip(group, s.pipe_free(), s.busy()):
            core.schedule.pipe_free = free
            core.schedule.busy = busy
            core.stream = []
        return True

    def _exact(self, cores) -> None:
        """The cores' records, their blocks made, to the exact scheduler in the exact engine's order."""
        self.submitting = True
        replay_engine.materialise(self.chip, cores)
        fast_engine.submit_all(cores)
        self.submitting = False
