"""The scheduler pass: when each record of a core's stream issues, starts and ends.

The model: the scalar unit issues the stream in program order, one instruction every `scalar_issue_cycles`,
into one in-order queue per pipe; a pipe runs one instruction at a time. A full queue (`queue_depth` entries
not yet started) stalls the scalar unit until its oldest entry starts. WaitFlag holds its pipe until the
matching SetFlag (the oldest one not yet consumed on the same (src, dst, id)) has ended plus the sync latency,
so a WaitFlag may be issued before its SetFlag, as on the hardware. PipeBarrier(PIPE_ALL) waits until every
pipe has drained; SyncAll does the same across all cores of the launch.

Records are scheduled as soon as their dependencies allow; `on_start(record)` is called for each, in the order
they are scheduled, which respects every dependency (a valid order to execute them in). Costs come from a
`CostModel`, so a recorded stream can be scheduled again on another platform (`retime`).
"""
from __future__ import annotations

from collections import deque

from ascend_sim.machine.coretypes import mode4_route
from ascend_sim.machine.faults import SyncFault
from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.record import SYNC_KINDS, Kind

_N = len(QUEUES)
_ALL = Pipe.ALL
_BLOCKED, _ISSUED, _DONE = 0, 1, 2
_WAIT, _SET, _SYNC_ALL = Kind.WAIT_FLAG, Kind.SET_FLAG, Kind.SYNC_ALL
_CROSS_SET, _CROSS_WAIT = Kind.CROSS_CORE_SET, Kind.CROSS_CORE_WAIT


class CostModel:
    """The platform values instruction costs read, with the launch's share of the chip's GM bandwidth."""

    def __init__(self, platform, block_dim: int):
        self.platform = platform
        rates = self.rates = platform.rates
        share = rates.chip_gm_bytes_per_cycle / block_dim  # all cores share the chip's GM bandwidth
        self.gm_read_rate = min(rates.gm_to_l1, share)
        self.gm_write_rate = min(rates.l0c_to_gm, share)
        self.cube_k = platform.cube.model_dump()  # operand dtype (or "hf32") -> cube_k


class CoreSchedule:
    """The per-pipe timing of one core. `submit` records in program order."""

    def __init__(self, core_index: int, platform, model: CostModel, on_start, launch: "Launch", kind: str = "AIC",
                 group: int = 0):
        self.core = core_index
        self.kind = kind  # the core type's name
        self.group = group  # the AI core (AIC and its AIVs) this core belongs to
        self.model = model
        self.on_start = on_start
        self.launch = launch
        self.cross_flags: dict[int, deque] = {}  # flag id -> (arrival time, the sets that made it) per count
        self.depth = platform.queue_depth
        self.issue_cycles = platform.scalar_issue_cycles
        self.sync_latency = platform.rates.sync_latency
        self.scalar_time = 0.0
        self.pipe_free = [0.0] * _N
        self.busy = [0.0] * _N
        self.recent = [deque(maxlen=self.depth) for _ in range(_N)]  # the last `depth` records issued per pipe
        self.backlog: deque = deque()  # records the scalar unit has not issued yet (it is stalled)
        self.waiting = [deque() for _ in range(_N)]  # issued records whose pipe has not started them yet
        self.pending = 0  # records in backlog + waiting
        self.sets: dict[tuple, deque] = {}  # (event name, id) -> SetFlag records started and not yet waited

    # ------------------------------------------------------------------ entry
    def submit(self, rec) -> None:
        kind = rec.spec.kind
        if not self.pending and (kind not in SYNC_KINDS or kind is _WAIT and self.sets.get(rec.event)):
            # The common case, inline (the hot path): nothing is pending, so the record issues (as in _issue)
            # and starts at once (a WaitFlag: its SetFlag has run).
            issue = self.scalar_time
            recent = self.recent[rec.pipe]
            if len(recent) == self.depth:
                oldest = recent[0].start
                if oldest > issue:
                    issue = oldest
            recent.append(rec)
            rec.issue = issue
            self.scalar_time = issue + self.issue_cycles
            self._start(rec)
        elif self.pending:
            self.backlog.append(rec)
            self.pending += 1
            self.pump()
        else:
            state = self._issue(rec)
            if state == _DONE:
                self.on_start(rec)
            elif state == _BLOCKED:
                self.backlog.append(rec)
                self.pending += 1
            elif self._ready(rec):
                self._start(rec)
            else:
                self.waiting[rec.pipe].append(rec)
                self.pending += 1
        if self.launch.woken:
            self.launch.drain()

    def pump(self) -> None:
        """Schedule whatever has become possible, until nothing more is."""
        progress = True
        while progress and self.pending:
            progress = False
            for queue in self.waiting:
                while queue and self._ready(queue[0]):
                    self._start(queue.popleft())
                    self.pending -= 1
                    progress = True
            backlog = self.backlog
            while backlog:
                rec = backlog[0]
                state = self._issue(rec)
                if state == _BLOCKED:
                    break
                backlog.popleft()
                if state == _DONE:
                    self.pending -= 1
                    self.on_start(rec)
                elif not self.waiting[rec.pipe] and self._ready(rec):
                    self.pending -= 1
                    self._start(rec)
                else:
                    self.waiting[rec.pipe].append(rec)
                progress = True

    # ------------------------------------------------------------------ steps
    def _drained(self) -> bool:
        return not any(self.waiting)

    def _issue(self, rec) -> int:
        """Give `rec` its issue cycle if the scalar unit can issue it now."""
        kind = rec.spec.kind
        if kind is _CROSS_WAIT:  # blocks the issue of everything after it until a set has arrived
            arrived = self.cross_flags.get(rec.event[1])
            if not arrived:
                return _BLOCKED
            time, setters = arrived.popleft()
            rec.released_by = setters
            rec.issue = rec.start = self.scalar_time
            rec.end = max(self.scalar_time, time + self.sync_latency)
            self.scalar_time = rec.end + self.issue_cycles
            return _DONE
        if rec.pipe == _ALL or kind is _SYNC_ALL:  # PipeBarrier(PIPE_ALL) / SyncAll: every pipe drained first
            if not self._drained():
                return _BLOCKED
            if kind is _SYNC_ALL and not self.launch.arrive(self, rec):
                return _BLOCKED
            t = max(max(self.pipe_free), self.scalar_time)
            self.pipe_free = [t] * _N
            self.scalar_time = t
            rec.issue = rec.start = rec.end = t
            return _DONE
        issue = self.scalar_time
        recent = self.recent[rec.pipe]
        if len(recent) == self.depth:  # queue full: the scalar unit stalls until the oldest entry starts
            oldest = recent[0].start
            if oldest is None:
                return _BLOCKED
            if oldest > issue:
                issue = oldest
        rec.issue = issue
        recent.append(rec)
        self.scalar_time = issue + self.issue_cycles
        return _ISSUED

    def _ready(self, rec) -> bool:
        return rec.spec.kind is not _WAIT or bool(self.sets.get(rec.event))

    def _start(self, rec) -> None:
        p = rec.pipe
        pipe_free = self.pipe_free
        start = pipe_free[p]
        if rec.issue > start:
            start = rec.issue
        spec = rec.spec
        kind = spec.kind
        if kind is _WAIT:
            set_rec = self.sets[rec.event].popleft()
            rec.released_by = set_rec
            released = set_rec.end + self.sync_latency
            if released > start:
                start = released
        args = rec.args
        cycles = 0.0 if args is None else spec.cost(args, self.model)  # no args: a NOP
        end = start + cycles
        rec.start = start
        rec.end = end
        pipe_free[p] = end
        self.busy[p] += cycles
        if kind is _SET:
            queue = self.sets.get(rec.event)
            if queue is None:
                queue = self.sets[rec.event] = deque()
            queue.append(rec)
        elif kind is _CROSS_SET:
            self.launch.cross_core_set(self, rec)
        self.on_start(rec)

    def sync_to(self, time: float) -> None:
        """Cross-core barrier: nothing on this core starts before `time`."""
        self.pipe_free = [max(t, time) for t in self.pipe_free]
        self.scalar_time = max(self.scalar_time, time)

    # ------------------------------------------------------------------ results
    @property
    def cycles(self) -> float:
        return max(max(self.pipe_free), 0.0)

    def stuck(self) -> list:
        """The records that block the stream (at the head of a pipe or of the scalar unit): a deadlock."""
        heads = [queue[0] for queue in self.waiting if queue]
        return sorted(heads, key=lambda rec: rec.seq) + ([self.backlog[0]] if self.backlog else [])

    def left_set(self):
        """SetFlag records never waited: (key, record, how many are left)."""
        left = [(key, queue) for key, queue in self.sets.items() if queue]
        if not left:
            return None
        key, queue = left[0]
        return key, queue[0], sum(len(q) for _, q in left)


class Launch:
    """What the cores of one launch share: the SyncAll barrier and the cross-core flags. A core that something
    has released is pumped after the current record, never from inside another core's pump."""

    def __init__(self):
        self.schedules: list[CoreSchedule] = []
        self.arrived: dict[int, object] = {}  # SyncAll: core -> its record, until every core has arrived
        self.rounds: dict[tuple, list] = {}  # collective cross-core sets so far: (mode, group key, flag) -> records
        self.woken: list[CoreSchedule] = []
        self.draining = False

    def wake(self, schedule: CoreSchedule) -> None:
        if schedule not in self.woken:
            self.woken.append(schedule)

    def drain(self) -> None:
        if self.draining:
            return
        self.draining = True
        try:
            while self.woken:
                self.woken.pop(0).pump()
        finally:
            self.draining = False

    # ------------------------------------------------------------------ SyncAll
    def arrive(self, schedule: CoreSchedule, rec) -> bool:
        """SyncAll: released when every core has arrived, at the latest core's time."""
        if rec.start is not None:  # released while this core was waiting
            return True
        self.arrived[schedule.core] = rec
        if len(self.arrived) < len(self.schedules):
            return False
        t = max(max(max(s.pipe_free), s.scalar_time) for s in self.schedules)
        arrived, self.arrived = self.arrived, {}
        for s in self.schedules:
            s.sync_to(t)
            other = arrived[s.core]
            if other is not rec:
                other.issue = other.start = other.end = t
                self.wake(s)
        return True

    def waiting_cores(self) -> list[int]:
        return sorted(self.arrived)

    # ------------------------------------------------------------------ cross-core flags
    def cross_core_set(self, schedule: CoreSchedule, rec) -> None:
        """CrossCoreSetFlag has taken effect at rec.end (A2 modes; see isa/sync.py):
        0: once every core of this type has set it, each of them gets one count;
        1: once every AIV of this AI core has set it, each of them gets one count;
        2: an AIC's set gives each of its AIVs one count; the AIC gets one once all its AIVs have set it;
        4 (arch 3510): one count on the one core `mode4_route` names."""
        mode, flag = rec.event
        if mode == 4:
            aivs = [s for s in self.schedules if s.kind == "AIV" and s.group == schedule.group]
            kind, sub, counted = mode4_route(schedule.kind, aivs.index(schedule) if schedule in aivs else 0, flag)
            target = aivs[sub] if kind == "AIV" else next(
                s for s in self.schedules if s.kind == "AIC" and s.group == schedule.group)
            self._count(target, counted, rec.end, (rec,))
            return
        same_type = [s for s in self.schedules if s.kind == schedule.kind]
        if mode == 0:
            self._collective((0, schedule.kind, flag), same_type, same_type, flag, rec)
        elif mode == 1:
            group = [s for s in same_type if s.group == schedule.group]
            self._collective((1, schedule.group, flag), group, group, flag, rec)
        elif schedule.kind == "AIC":
            for s in self.schedules:
                if s.kind == "AIV" and s.group == schedule.group:
                    self._count(s, flag, rec.end, (rec,))
        else:
            group = [s for s in self.schedules if s.group == schedule.group]
            self._collective((2, schedule.group, flag), [s for s in group if s.kind == "AIV"],
                             [s for s in group if s.kind == "AIC"], flag, rec)

    def _collective(self, key, setters: list, receivers: list, flag: int, rec) -> None:
        sets = self.rounds.setdefault(key, [])
        sets.append(rec)
        if len(sets) == len(setters):
            del self.rounds[key]
            for s in receivers:
                self._count(s, flag, max(r.end for r in sets), tuple(sets))

    def _count(self, schedule: CoreSchedule, flag: int, time: float, setters: tuple) -> None:
        arrived = schedule.cross_flags.setdefault(flag, deque())
        arrived.append((time, setters))
        if len(arrived) > 15:
            raise overflow_fault(flag, schedule.core, setters[-1])
        self.wake(schedule)


def overflow_fault(flag: int, receiver: int, last_set) -> SyncFault:
    """A cross-core flag counted past 15 on core `receiver`, headed by the set (its round's last) that counted it."""
    return SyncFault(f"cross-core flag {flag} of core {receiver} counted past 15 pending sets (the hardware traps): "
                     "a CrossCoreWaitFlag is missing", core=last_set.core, instruction=last_set.name,
                     pipe=last_set.pipe.name, source=last_set.source)


def retime(streams: list[list], kinds: list[str], groups: list[int], platform) -> list[CoreSchedule]:
    """Schedule recorded streams (one list of records per core, with its core type name and AI core) again with
    `platform`'s costs. The records keep their own schedule: copies are timed (`schedule.records`)."""
    models = {kind: CostModel(platform, kinds.count(kind)) for kind in set(kinds)}
    launch = Launch()
    schedules = [CoreSchedule(i, platform, models[kind], _ignore, launch, kind, group)
                 for i, (kind, group) in enumerate(zip(kinds, groups))]
    launch.schedules = schedules
    for schedule, stream in zip(schedules, streams):
        schedule.records = [rec.unscheduled() for rec in stream]
        for rec in schedule.records:
            schedule.submit(rec)
    for schedule in schedules:
        stuck = schedule.stuck()
        if stuck:
            rec = stuck[0]
            raise SyncFault(f"the recorded stream cannot be scheduled: {rec.describe()} never runs",
                            core=schedule.core, instruction=rec.name, pipe=rec.pipe.name, source=rec.source)
    return schedules


def _ignore(rec) -> None:
    pass
