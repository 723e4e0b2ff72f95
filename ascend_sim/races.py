"""The race checker pass: two accesses of one buffer by different pipes, at least one a write, with nothing
ordering them (no SetFlag/WaitFlag chain, no barrier) are a race.

Happens-before is tracked with one vector clock per pipe: every scheduled record ticks its pipe's own entry, a
SetFlag keeps a copy of its pipe's clock, the WaitFlag it releases merges that copy into the waiting pipe's
clock, and PipeBarrier(PIPE_ALL) merges every pipe's clock. Records are observed in schedule order.
"""
from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

from .faults import RaceFault
from .pipes import QUEUES, Pipe

_N = len(QUEUES)
_ALL = Pipe.ALL
_STAMP = itemgetter(2)  # the clock stamp of a logged access


class RaceChecker:
    """Per core: the pipes' vector clocks and, per (buffer, pipe), its recent accesses."""

    def __init__(self):
        self.clock = [[0] * _N for _ in range(_N)]
        self.access_log: dict = {}
        self.set_clocks: dict[int, list] = {}  # SetFlag seq -> its pipe's clock when it ran

    def observe(self, rec) -> None:
        """Advance the clocks past `rec` and check its accesses (raises RaceFault)."""
        p = rec.pipe
        if p == _ALL:  # PipeBarrier(PIPE_ALL) / SyncAll: every pipe has seen everything before it
            merged = [max(c[i] for c in self.clock) for i in range(_N)]
            self.clock = [list(merged) for _ in range(_N)]
            return
        clock = self.clock[p]
        clock[p] += 1
        name = rec.name
        if name == "SetFlag":
            self.set_clocks[rec.seq] = clock[:]
        elif name == "WaitFlag":  # what the waiting pipe has seen now includes what the setter had seen
            seen = self.set_clocks.pop(rec.released_by.seq)
            for i in range(_N):
                if seen[i] > clock[i]:
                    clock[i] = seen[i]
        elif rec.reads or rec.writes:
            self._check(rec, p, clock)

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
