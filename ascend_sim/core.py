"""One AI Core (cube side): its buffers, its pipes, and the single path every instruction takes.

Each Ascend C call becomes an `Instruction` and passes through `AICore.issue`, which in order:
checks its accesses (bounds), schedules it on its pipe (timing), checks it against unordered accesses of
other pipes (races), moves the data (unless timing-only), records it (trace) and calls the hooks (stepper).
"""
from __future__ import annotations

import os
import sys
from bisect import bisect_right
from collections import deque
from operator import itemgetter

from .faults import RaceFault, SimFault, SyncFault
from .memory import Buffer
from .pipes import AIC_LEGAL, QUEUES, HardEvent, Pipe

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_N = len(QUEUES)
_EVENT_PIPES = {ev: (Pipe[ev.value.split("_")[0]], Pipe[ev.value.split("_")[1]]) for ev in HardEvent}
# event -> (src pipe, dst pipe, legal on the cube core, name): looked up once per SetFlag / WaitFlag
_EVENT_INFO = {ev: (src, dst, (src, dst) in AIC_LEGAL, ev.value) for ev, (src, dst) in _EVENT_PIPES.items()}
_EVENT_INFO_BY_NAME = {ev._name_: info for ev, info in _EVENT_INFO.items()}  # str keys: no Enum.__hash__ call
_STAMP = itemgetter(2)  # the clock stamp of a race-log record


# id(code) -> (code, True when it belongs to ascend_sim). Keyed by id because hashing a code object hashes its
# constants every time; the entry keeps the code object alive, so its id cannot be reused by another one.
_INSIDE: dict = {}


def caller_source() -> tuple:
    """(code, line) of the innermost frame outside ascend_sim: the kernel line that issued the instruction.

    Kept as a tuple and formatted only when shown, since every instruction records one."""
    frame = sys._getframe(2)
    inside = _INSIDE
    while frame is not None:
        code = frame.f_code
        entry = inside.get(id(code))
        if entry is None:
            entry = inside[id(code)] = (code, code.co_filename.startswith(_PKG_DIR))
        if not entry[1]:
            return code, frame.f_lineno
        frame = frame.f_back
    return None, 0


def format_source(src: tuple) -> str:
    code, line = src
    return f"{os.path.basename(code.co_filename)}:{line}" if code is not None else "?"


class Instruction:
    """One issued instruction with its schedule. `reads`/`writes` are (Buffer, start, end) byte ranges."""

    __slots__ = ("core", "seq", "name", "pipe", "params", "reads", "writes", "src", "issue", "start", "end",
                 "path", "nbytes", "event")

    def __init__(self, core, seq, name, pipe, params, reads, writes, source, path=None, nbytes=0, event=None):
        self.core = core
        self.seq = seq
        self.name = name
        self.pipe = pipe
        self.params = params
        self.reads = reads
        self.writes = writes
        self.src = source  # (code, line): see `source`
        self.path = path
        self.nbytes = nbytes
        self.event = event  # (HardEvent, id) for SetFlag / WaitFlag
        self.issue = self.start = self.end = 0.0

    @property
    def cycles(self) -> float:
        return self.end - self.start

    @property
    def source(self) -> str:
        """The kernel source line that issued this instruction, as file:line."""
        return format_source(self.src)

    def describe(self) -> str:
        return f"#{self.seq} {self.pipe.name} {self.name} at {self.source}"

    def __repr__(self) -> str:
        return f"<{self.describe()} [{self.start:.0f}, {self.end:.0f})>"


class AICore:
    """The cube core `index` of a chip: buffers, pipe timelines, flags, registers and the instruction log."""

    def __init__(self, index: int, block_dim: int, chip):
        self.index = index
        self.block_dim = block_dim
        self.chip = chip
        p = chip.platform
        self.platform = p
        self.execute = chip.execute
        self.check_races = chip.check_races
        self.buffers = {name: Buffer(f"{name}", p.capacity(name), p.alignment(name))
                        for name in ("L1", "L0A", "L0B", "L0C", "UB", "BT", "FB")}
        for buf in self.buffers.values():
            buf.key = (index, buf.name)
        # Timing state: when the scalar unit issues the next instruction, when each pipe is next free,
        # start times of the last `queue_depth` instructions per pipe (a full queue stalls issue).
        self.scalar_time = 0.0
        self.pipe_free = [0.0] * _N
        self.busy = [0.0] * _N
        self.queues = [deque(maxlen=p.queue_depth) for _ in range(_N)]
        # platform values read by every instruction, looked up once
        self.rates = p.rates
        self.alignments = p.alignments
        self.cube_k = {operand: p.cube.cube_k(operand) for operand in ("float16", "bfloat16", "float32", "hf32")}
        self.queue_depth = p.queue_depth
        self.scalar_issue_cycles = p.scalar_issue_cycles
        self.sync_latency = p.rates.sync_latency
        self.event_ids = p.event_ids
        # Flags: (src, dst, id) -> (set time, vector clock of src at the set, SetFlag instruction)
        self.flags: dict[tuple, tuple] = {}
        # Happens-before: one vector clock per pipe; the race log keeps recent accesses per (buffer, pipe).
        self.clock = [[0] * _N for _ in range(_N)]
        self.access_log: dict = {}
        self.log: list[Instruction] = []
        self.record = chip.record
        self.hooks = list(chip.hooks)
        self.bytes_by_path: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        # Registers set by SetFmatrix, SetLoadDataRepeat, SetHF32Mode ...
        self.registers: dict[str, object] = {"hf32": False, "hf32_trans_mode": 0}
        self.gm_read_rate = chip.gm_read_rate
        self.gm_write_rate = chip.gm_write_rate
        self.tpipes: list = []
        self._seq = 0

    # ------------------------------------------------------------------ issue path
    def issue(self, name: str, pipe: Pipe, params, reads: tuple, writes: tuple, cycles: float, run=None,
              path: str | None = None, nbytes: int = 0) -> Instruction:
        """Check, schedule, race-check, execute and record one data instruction."""
        instr = Instruction(self.index, self._seq, name, pipe, params, reads, writes, caller_source(),
                            path, nbytes)
        self._seq += 1
        try:
            for buf, lo, hi in reads:
                if lo < 0 or hi > buf.capacity or lo > hi:
                    buf.check(lo, hi, "read")
            for buf, lo, hi in writes:
                if lo < 0 or hi > buf.capacity or lo > hi:
                    buf.check(lo, hi, "write")
            self._schedule(instr, cycles)
            if self.check_races and (reads or writes):
                self._check_races(instr)
        except SimFault as fault:
            raise self._with_context(fault, instr) from None
        if run is not None and self.execute:
            run()
        if path is not None:
            by_path = self.bytes_by_path
            by_path[path] = by_path.get(path, 0) + nbytes
        counts = self.counts
        counts[name] = counts.get(name, 0) + 1
        if self.record:
            self.log.append(instr)
        for hook in self.hooks:
            hook(self, instr)
        return instr

    def fault(self, fault: SimFault, name: str, pipe: Pipe) -> SimFault:
        """Attach this core, the instruction and the kernel source line to a fault found before issue."""
        instr = Instruction(self.index, self._seq, name, pipe, None, (), (), caller_source())
        return self._with_context(fault, instr)

    def _with_context(self, fault: SimFault, instr: Instruction) -> SimFault:
        if fault.core is None:
            fault.core = self.index
        if fault.instruction is None:
            fault.instruction, fault.pipe, fault.source = instr.name, instr.pipe.name, instr.source
        fault.args = (str(fault),)
        return fault

    def _finish(self, instr: Instruction) -> None:
        self.counts[instr.name] = self.counts.get(instr.name, 0) + 1
        if self.record:
            self.log.append(instr)
        for hook in self.hooks:
            hook(self, instr)

    def _schedule(self, instr: Instruction, cycles: float, not_before: float = 0.0) -> None:
        p = instr.pipe
        issue = self.scalar_time
        queue = self.queues[p]
        if len(queue) == self.queue_depth:  # queue full: the scalar unit stalls until the oldest entry starts
            oldest = queue[0]
            if oldest > issue:
                issue = oldest
        pipe_free = self.pipe_free
        start = pipe_free[p]
        if issue > start:
            start = issue
        if not_before > start:
            start = not_before
        end = start + cycles
        instr.issue = issue
        instr.start = start
        instr.end = end
        queue.append(start)
        pipe_free[p] = end
        self.busy[p] += cycles
        self.scalar_time = issue + self.scalar_issue_cycles
        self.clock[p][p] += 1

    # ------------------------------------------------------------------ synchronisation
    def _event_pipes(self, event: HardEvent, name: str) -> tuple[Pipe, Pipe]:
        src, dst = _EVENT_PIPES[event]
        if (src, dst) not in AIC_LEGAL:
            raise self.fault(SyncFault(f"HardEvent::{event.value} is not a legal event on the A2/A3 cube core; "
                                       "same-pipe ordering needs PipeBarrier"), name, src)
        return src, dst

    def set_flag(self, event: HardEvent, event_id: int) -> Instruction:
        src, dst, legal, value = (_EVENT_INFO_BY_NAME[event._name_] if event.__class__ is HardEvent
                                  else _EVENT_INFO[event])
        if not legal:
            self._event_pipes(event, "SetFlag")
        if event_id.__class__ is not int or not 0 <= event_id < self.event_ids:
            self._check_event_id(event_id, "SetFlag", src)
        key = (src, dst, event_id)
        instr = Instruction(self.index, self._seq, "SetFlag", src, {"event": value, "id": event_id},
                            (), (), caller_source(), None, 0, (event, event_id))
        self._seq += 1
        flags = self.flags
        if key in flags:
            raise self._with_context(SyncFault(
                f"SetFlag<{value}>({event_id}) while the flag is already set by "
                f"{flags[key][2].describe()} and not yet waited (undefined on hardware)"), instr)
        self._schedule(instr, 0.0)
        flags[key] = (instr.end, self.clock[src][:], instr)
        self._finish(instr)
        return instr

    def wait_flag(self, event: HardEvent, event_id: int) -> Instruction:
        src, dst, legal, value = (_EVENT_INFO_BY_NAME[event._name_] if event.__class__ is HardEvent
                                  else _EVENT_INFO[event])
        if not legal:
            self._event_pipes(event, "WaitFlag")
        if event_id.__class__ is not int or not 0 <= event_id < self.event_ids:
            self._check_event_id(event_id, "WaitFlag", dst)
        key = (src, dst, event_id)
        params = {"event": value, "id": event_id}
        instr = Instruction(self.index, self._seq, "WaitFlag", dst, params, (), (), caller_source(), None, 0,
                            (event, event_id))
        self._seq += 1
        entry = self.flags.pop(key, None)
        if entry is None:
            raise self._with_context(SyncFault(
                f"WaitFlag<{value}>({event_id}) with no SetFlag issued before it: the {dst.name} pipe "
                "would wait forever (the simulator requires the SetFlag to be issued first)"), instr)
        set_time, set_clock, set_instr = entry
        self._schedule(instr, 0.0, set_time + self.sync_latency)
        clock = self.clock[dst]
        for i in range(_N):  # what dst has seen now includes what src had seen at the set
            if set_clock[i] > clock[i]:
                clock[i] = set_clock[i]
        params["released_by"] = set_instr.seq
        self._finish(instr)
        return instr

    def pipe_barrier(self, pipe: Pipe) -> Instruction:
        if pipe == Pipe.S:
            raise self.fault(SyncFault("PipeBarrier<PIPE_S> is not supported (scalar ordering is automatic)"),
                             "PipeBarrier", pipe)
        instr = Instruction(self.index, self._seq, "PipeBarrier", pipe, {"pipe": pipe.name}, (), (),
                            caller_source())
        self._seq += 1
        if pipe == Pipe.ALL:
            t = max(max(self.pipe_free), self.scalar_time)
            self.pipe_free = [t] * _N
            self.scalar_time = t
            merged = [max(c[i] for c in self.clock) for i in range(_N)]
            self.clock = [list(merged) for _ in range(_N)]
            instr.issue = instr.start = instr.end = t
            instr.pipe = Pipe.S
        else:  # pipes are in order and serial in this model, so a same-pipe barrier only costs its issue slot
            self._schedule(instr, 0.0)
        self._finish(instr)
        return instr

    def _check_event_id(self, event_id: int, name: str, pipe: Pipe) -> None:
        if not 0 <= event_id < self.platform.event_ids:
            from .faults import ParameterOutOfRange
            raise self.fault(ParameterOutOfRange(f"event id {event_id} outside [0, {self.platform.event_ids})"),
                             name, pipe)

    def sync_to(self, time: float) -> None:
        """Cross-core barrier: nothing on this core starts before `time`."""
        self.pipe_free = [max(t, time) for t in self.pipe_free]
        self.scalar_time = max(self.scalar_time, time)

    # ------------------------------------------------------------------ race checking
    def _check_races(self, instr: Instruction) -> None:
        p = instr.pipe
        known = self.clock[p]
        stamp = known[p]
        log = self.access_log
        for is_write, accesses in ((False, instr.reads), (True, instr.writes)):
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
                    for rec in reversed(records):
                        if rec[2] <= seen:  # this and every older access of q happened before us
                            break
                        if rec[0] < hi and lo < rec[1] and (is_write or rec[3]):
                            self._race(instr, rec, buf, lo, hi, is_write)
                if mine is None:
                    mine = per_pipe[p] = []
                mine.append((lo, hi, stamp, is_write, instr))
                if len(mine) > 64:
                    self._prune(per_pipe, p)

    @staticmethod
    def _race(instr, rec, buf, lo, hi, is_write):
        kind, okind = ("write" if is_write else "read"), ("write" if rec[3] else "read")
        raise RaceFault(f"{kind} of {buf.name}[{lo}, {hi}) is not ordered after the {okind} of "
                        f"[{rec[0]}, {rec[1]}) by {rec[4].describe()}: no SetFlag/WaitFlag or barrier orders them",
                        buffer=buf.name, addr_range=(lo, hi))

    def _prune(self, per_pipe: dict, p: int) -> None:
        """Forget accesses of pipe p that every other pipe touching this buffer already knows happened."""
        clock = self.clock
        horizon = min((clock[q][p] for q in per_pipe if q != p), default=clock[p][p])
        records = per_pipe[p]
        # stamps only grow along the list (a pipe's own clock never goes back), so the kept ones are a suffix
        drop = max(bisect_right(records, horizon, key=_STAMP), len(records) - 256)
        if drop > 0:
            del records[:drop]  # bounded memory: very old unordered accesses are no longer checked

    # ------------------------------------------------------------------ results
    @property
    def cycles(self) -> float:
        return max(max(self.pipe_free), 0.0)

    def check_flags_at_end(self) -> None:
        """A flag set and never waited leaves state that breaks the next kernel on hardware."""
        if self.flags:
            (src, dst, eid), (_, _, instr) = next(iter(self.flags.items()))
            raise self._with_context(SyncFault(
                f"SetFlag<{src.name}_{dst.name}>({eid}) was never waited before the kernel ended "
                f"({len(self.flags)} flag(s) left set)"), instr)
