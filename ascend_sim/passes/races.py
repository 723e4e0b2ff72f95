"""The race checker pass: two accesses of one buffer by different pipes, at least one a write, with nothing
ordering them (no SetFlag/WaitFlag chain, no barrier) are a race.

Happens-before is tracked with one vector clock per pipe: every scheduled record ticks its pipe's own entry, a
SetFlag keeps a copy of its pipe's clock, the WaitFlag it releases merges that copy into the waiting pipe's
clock, and PipeBarrier(PIPE_ALL) merges every pipe's clock. Records are observed in schedule order.

A cross-core round trip orders a core's own work too: this core's CrossCoreSetFlag #k (on pipe p, after p's
earlier work), another core's wait and set, then this core's CrossCoreWaitFlag. The GM race checker's vector
clocks over the cores say which of this core's own sets the releasing sets knew of; the wait then gives every
pipe the clocks those sets had, from the first record issued after the wait on that pipe on (the wait blocks
issue, not the pipes: what was issued before it may still run after it, unordered). Like the GM checker's
snapshots, a set carries what its core knew when it ran, and a core's own sets are counted in the order they
ran: a set issued before a wait that runs after it is credited with more than the hardware guarantees
(docs/simulator.md, known limits).
"""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

import numpy as np

from ascend_sim.machine.faults import CrossCoreRace, RaceFault
from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.record import GM_ORDERING_KINDS, Kind

_N = len(QUEUES)
_ALL = Pipe.ALL
_STAMP = itemgetter(2)  # the clock stamp of a logged access


class RaceChecker:
    """Per core: the pipes' vector clocks and, per (buffer, pipe), its recent accesses."""

    def __init__(self, core: int = 0, gm=None):
        self.clock = [[0] * _N for _ in range(_N)]
        self.access_log: dict = {}
        self.set_clocks: dict[int, list] = {}  # SetFlag seq -> its pipe's clock when it ran
        self.core, self.gm = core, gm  # gm: the launch's GmRaceChecker (its clocks over the cores)
        self.cross_set_clocks: list[list] = []  # this core's k-th CrossCoreSetFlag -> its pipe's clock then
        self.learned: list[tuple] = []  # (CrossCoreWaitFlag seq, the clock it gives the pipes after it)
        self.applied = [0] * _N  # per pipe: how many of `learned` it has taken in

    def observe(self, rec) -> None:
        """Advance the clocks past `rec` and check its accesses (raises RaceFault)."""
        p = rec.pipe
        if p == _ALL:  # PipeBarrier(PIPE_ALL) / SyncAll: every pipe has seen everything before it
            merged = [max(c[i] for c in self.clock) for i in range(_N)]
            self.clock = [list(merged) for _ in range(_N)]
            return
        clock = self.clock[p]
        if self.applied[p] < len(self.learned):
            self._take_learned(p, rec.seq)
        clock[p] += 1
        kind = rec.spec.kind
        if kind is Kind.SET_FLAG:
            self.set_clocks[rec.seq] = clock[:]
        elif kind is Kind.WAIT_FLAG:  # what the waiting pipe has seen now includes what the setter had seen
            seen = self.set_clocks.pop(rec.released_by.seq)
            for i in range(_N):
                if seen[i] > clock[i]:
                    clock[i] = seen[i]
        elif rec.reads or rec.writes:
            self._check(rec, p, clock)
        elif kind is Kind.CROSS_CORE_SET:
            self.cross_set_clocks.append(clock[:])
        elif kind is Kind.CROSS_CORE_WAIT and self.gm is not None:
            known = self.gm.own_sets_known(self.core, rec)  # how many of this core's own sets the trip carried
            if known:
                seen = [max(c[i] for c in self.cross_set_clocks[:known]) for i in range(_N)]
                self.learned.append((rec.seq, seen))

    def _take_learned(self, p: int, seq: int) -> None:
        """Pipe p's first records issued after a CrossCoreWaitFlag take in what that wait learned."""
        clock, learned = self.clock[p], self.learned
        while self.applied[p] < len(learned) and learned[self.applied[p]][0] < seq:
            for i, tick in enumerate(learned[self.applied[p]][1]):
                if tick > clock[i]:
                    clock[i] = tick
            self.applied[p] += 1

    def _check(self, rec, p: int, known: list) -> None:
        stamp = known[p]
        log = self.access_log
        for is_write, accesses in ((False, rec.reads), (True, rec.writes)):
            for buf, lo, hi in accesses:
                per_pipe = log.get(buf.key)
                if per_pipe is None:
                    per_pipe = log[buf.key] = {}
                mine = None
                for q, records in per_pipe.items():
                    if q == p:
                        mine = records
                        continue
                    seen = known[q]
                    for entry in reversed(records):
                        if entry[2] <= seen:  # this and every older access of q happened before us
                            break
                        if entry[0] < hi and lo < entry[1] and (is_write or entry[3]):
                            _race(entry, buf, lo, hi, is_write)
                if mine is None:
                    mine = per_pipe[p] = []
                mine.append((lo, hi, stamp, is_write, rec))
                if len(mine) > 64:
                    self._prune(per_pipe, p)

    def _prune(self, per_pipe: dict, p: int) -> None:
        """Forget accesses of pipe p that every other pipe touching this buffer already knows happened."""
        clock = self.clock
        horizon = min((clock[q][p] for q in per_pipe if q != p), default=clock[p][p])
        records = per_pipe[p]
        # stamps only grow along the list (a pipe's own clock never goes back), so the kept ones are a suffix
        drop = max(bisect_right(records, horizon, key=_STAMP), len(records) - 256)
        if drop > 0:
            del records[:drop]  # bounded memory: very old unordered accesses are no longer checked


def _race(entry, buf, lo, hi, is_write):
    kind, okind = ("write" if is_write else "read"), ("write" if entry[3] else "read")
    raise RaceFault(f"{kind} of {buf.name}[{lo}, {hi}) is not ordered after the {okind} of "
                    f"[{entry[0]}, {entry[1]}) by {entry[4].describe()}: no SetFlag/WaitFlag or barrier orders them",
                    buffer=buf.name, addr_range=(lo, hi))


# The records that order GM accesses between cores are those of GM_ORDERING_KINDS (record.py); the GM accesses
# themselves are the records' footprints (every instruction that reads or writes GM gives its exact bytes).
# Bytes per shadow entry: on arch 2201 every GM element the instructions move is 2 or 4 bytes, 2-aligned; the
# Ascend 950 (arch 3510) moves 1-byte elements (hifloat8, float8_e4m3fn), whose neighbours another core may write.
_GRANULE = 2
GRANULE_BY_ARCH = {3510: 1}


def _in_granules(shape: tuple, strides: tuple, offset: int, span: int, granule: int) -> tuple[tuple, tuple, int]:
    """A byte box (shape, byte strides, offset) as a box of granules; an odd box becomes its whole span."""
    if (offset % granule == 0 and strides[-1] == 1 and shape[-1] % granule == 0
            and all(s % granule == 0 for s in strides[:-1])):
        return (*shape[:-1], shape[-1] // granule), (*(s // granule for s in strides[:-1]), 1), offset // granule
    lo = offset // granule
    return (-(-span // granule) - lo,), (1,), lo


class GmRaceChecker:
    """Races between cores in GM and in the on-chip buffers cores share: two accesses by different cores, at
    least one a write, that neither SyncAll nor a chain of cross-core flags orders.

    The shared on-chip buffers (`shared`: their race keys, from the chip's wiring) are the Ascend 950's: an AIC's
    L1, which its AIVs write on MTE3 (UB -> L1), and AIV 0's UB, which its AIC's Fixpipe writes (L0C -> UB). Their
    accesses are each record's byte ranges (`Record.reads` / `writes`, as the per-core checker sees them) on those
    buffers, ordered by the same rule as in GM, with shadows per buffer and core (`shared_shadows`): an access is
    checked against the other cores' shadows only, where the newest access of a granule is the one with the
    highest clock tick, so a core's many accesses of its own UB cost a store each. On A2/A3 no buffer is shared.

    Each core has a vector clock over the cores: a CrossCoreSetFlag takes a copy of its core's clock and ticks
    the core's own entry; the CrossCoreWaitFlag it releases merges the copy. SyncAll splits the run into
    generations, and every access of one generation runs before any of the next, so accesses of different
    generations are ordered. Each GM allocation that some core writes gets two shadow arrays (last write and
    last read of every granule: 2 bytes, 1 on the 950; 4 or 8 bytes of memory per byte of the allocation),
    holding the index of that access in `accesses`: (core, generation, clock tick, record). Accesses are checked on their exact bytes
    (`Record.footprint`). Only the last reader of a byte is kept, so a write can miss a race with an earlier
    reader of another core.
    """

    def __init__(self, n_cores: int, granule: int = _GRANULE, shared: frozenset = frozenset()):
        self.granule = granule  # bytes per shadow entry (GRANULE_BY_ARCH)
        self.shared = shared  # race keys of the on-chip buffers several cores access
        self.clock = [[1 if i == c else 0 for i in range(n_cores)] for c in range(n_cores)]
        self.generation = [0] * n_cores
        self.snapshots: dict[int, list] = {}  # id(CrossCoreSetFlag record) -> its core's clock then
        self.accesses: list[tuple] = []
        self.current = 0  # the newest generation any core has reached
        self.generation_start = 0  # accesses before this index belong to earlier generations
        self.shadows: dict[str, dict] = {}  # GM allocation -> {"write": ids, "read": ids} (int32 per byte)
        self.shared_shadows: dict = {}  # shared buffer's race key -> {core: {"write": ids, "read": ids}}

    def observe(self, c: int, rec) -> None:
        kind = rec.spec.kind
        if kind is Kind.SYNC_ALL:
            self.generation[c] += 1
            if self.generation[c] > self.current:  # the first core past the barrier
                self.current = self.generation[c]
                self.generation_start = len(self.accesses)
        elif kind is Kind.CROSS_CORE_SET:
            self.snapshots[id(rec)] = self.clock[c][:]
            self.clock[c][c] += 1
        elif kind is Kind.CROSS_CORE_WAIT:
            clock = self.clock[c]
            for setter in rec.released_by:
                for i, tick in enumerate(self.snapshots[id(setter)]):
                    if tick > clock[i]:
                        clock[i] = tick
        else:
            if rec.footprint is not None:
                for buf, offset, shape, strides, is_write in rec.footprint:
                    self._access(c, rec, buf, offset, shape, strides, is_write)
            if self.shared:
                self._shared_accesses(c, rec)

    def observes(self, rec) -> bool:
        """Whether `rec` is something this checker looks at (AICore._run asks before calling observe)."""
        return rec.footprint is not None or rec.spec.kind in GM_ORDERING_KINDS or bool(self.shared)

    def _shared_accesses(self, c: int, rec) -> None:
        """The record's reads, then its writes, of the shared on-chip buffers, each as one run of granules checked
        against the other cores' shadows of that buffer (a granule's newest access there has its core's highest
        tick: if that one is ordered before this core's clock, all are)."""
        shared, granule = self.shared, self.granule
        for is_write, accesses in ((False, rec.reads), (True, rec.writes)):
            for buf, lo, hi in accesses:
                if hi <= lo or buf.key not in shared:
                    continue
                first, end = lo // granule, -(-hi // granule)
                per_core = self.shared_shadows.setdefault(buf.key, {})
                for d, shadow in per_core.items():
                    if d == c:
                        continue
                    for kind in ("write", "read") if is_write else ("write",):
                        last = shadow[kind][first:end].max()
                        if last >= self.generation_start and self.accesses[last][2] > self.clock[c][d]:
                            raise CrossCoreRace(
                                # the buffer with the core that owns it (its race key, engine/core.py)
                                f"{'write' if is_write else 'read'} of core {buf.key[0]}'s {buf.name}[{lo}, {hi}) is "
                                f"not ordered after the {kind} of some of its bytes by core {d}'s "
                                f"{self.accesses[last][3].describe()}: no SyncAll or cross-core flag orders them",
                                buffer=buf.name, addr_range=(lo, hi))
                mine = per_core.get(c)
                if mine is None:
                    granules = -(-buf.capacity // granule)
                    mine = per_core[c] = {kind: np.full(granules, -1, np.int32) for kind in ("write", "read")}
                mine["write" if is_write else "read"][first:end] = len(self.accesses)
                self.accesses.append((c, self.generation[c], self.clock[c][c], rec))

    def own_sets_known(self, c: int, wait) -> int:
        """How many of core c's own CrossCoreSetFlags the sets releasing its CrossCoreWaitFlag `wait` knew of
        (a set's snapshot holds the number of its core's sets so far, counting itself, in its own entry)."""
        return max((self.snapshots[id(setter)][c] for setter in wait.released_by), default=0)

    def _access(self, c: int, rec, buf, offset: int, shape: tuple, strides: tuple, is_write: bool) -> None:
        shadow = self.shadows.get(buf.key)
        if shadow is None:
            if not is_write:
                return  # never written in this launch: reads cannot race
            granules = -(-buf.capacity // self.granule)
            shadow = self.shadows[buf.key] = {kind: np.full(granules, -1, np.int32) for kind in ("write", "read")}
        span = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        shape, strides, offset = _in_granules(shape, strides, offset, span, self.granule)
        strides4 = tuple(s * 4 for s in strides)
        # an atomic add (footprint kind "atomic", SetAtomicAdd) races with plain accesses, not with other adds
        mine = "atomic" if is_write == "atomic" else ("write" if is_write else "read")
        if mine == "atomic" and "atomic" not in shadow:
            shadow["atomic"] = np.full(shadow["write"].size, -1, np.int32)
        checks = ("write", "read") if is_write else ("write",)
        if mine != "atomic" and "atomic" in shadow:
            checks += ("atomic",)
        for kind in checks:
            seen = np.ndarray(shape, np.int32, shadow[kind], offset * 4, strides4)
            last = seen.max()
            if last < self.generation_start:
                continue  # untouched, or touched in an earlier generation only
            # one access covers them all (a slot rewritten whole, as the workspaces are) without np.unique's hash
            for index in ((last,) if seen.min() == last else np.unique(seen)):
                if index < self.generation_start:
                    continue
                d, generation, tick, other = self.accesses[index]
                if d != c and tick > self.clock[c][d]:
                    lo = offset * self.granule
                    raise CrossCoreRace(f"{'write' if is_write else 'read'} of {buf.name}[{lo}, {span}) is not ordered "
                                        f"after the {kind} of some of its bytes by core {d}'s {other.describe()}: no "
                                        "SyncAll or cross-core flag orders them", buffer=buf.name, addr_range=(lo, span))
        np.ndarray(shape, np.int32, shadow[mine], offset * 4, strides4)[...] = \
            len(self.accesses)
        self.accesses.append((c, self.generation[c], self.clock[c][c], rec))


def first_fault(records, order, n_cores: int, granule: int = _GRANULE, shared: frozenset = frozenset()) -> tuple:
    """Both checkers over a whole launch's records in `order` (indices into `records`), driven as AICore._run
    drives them: (position in `order` of the first race, the fault), or (-1, None). The reference the compiled
    checker (fast_races.py) is tested and measured against."""
    gm = GmRaceChecker(n_cores, granule, shared)
    checkers = [RaceChecker(c, gm) for c in range(n_cores)]
    for pos, i in enumerate(order):
        rec = records[i]
        try:
            checkers[rec.core].observe(rec)
            if gm.observes(rec):
                gm.observe(rec.core, rec)
        except RaceFault as fault:  # CrossCoreRace too
            return pos, fault
    return -1, None
