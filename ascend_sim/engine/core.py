"""One AI Core: its buffers and registers, the front end that turns Ascend C calls into records, and the
passes each record goes through on the exact engine.

An Ascend C call checks its operands (faults name the kernel line), then `AICore.issue` makes the record,
bounds-checks its byte ranges and hands it to the scheduler (schedule.py). When the scheduler runs the record
(`_run`), the passes follow in order: the race checker (races.py), the semantics (the spec's execute; not in
timing-only mode) and the hooks (the stepping point). The stream is logged in program order.
"""
from __future__ import annotations

import sys
import weakref

from ascend_sim.machine.coretypes import DATA_PATHS, CoreType, missing_path
from ascend_sim.machine.faults import MissingDataPath, SimFault, SyncFault, UnwrittenRead
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.written import CHECKED_PIPE, WATCHED, WrittenRanges
from ascend_sim.passes.races import RaceChecker
from ascend_sim.passes.schedule import CoreSchedule
from ascend_sim.record import _PKG_DIR, GM_ORDERING_KINDS, Kind, Record, RegisterWrite, format_source, snapshot

# id(code) -> True when the code belongs to ascend_sim; (id(code), lasti) -> (code, line), one tuple per call site
# that its records share. Keyed by id because hashing a code object hashes its constants every time; _CODES keeps
# the code objects alive so no id is reused.
_INSIDE: dict = {}
_SOURCES: dict = {}
_CODES: list = []
_NO_SOURCE = (None, 0)
_getframe = sys._getframe



def _inside(code) -> bool:
    is_inside = _INSIDE[id(code)] = code.co_filename.startswith(_PKG_DIR)
    _CODES.append(code)
    return is_inside


def kernel_source(frame) -> tuple:
    """(code, line) of the innermost frame outside ascend_sim from `frame` outwards: the kernel line that issued
    the instruction; one tuple per call site (code and f_lasti), shared by the records issued there (and naming,
    by its id, the site of a cached entry called from inside ascend_sim in the front end's keys). (None, 0) when
    no kernel frame is on the stack."""
    inside = _INSIDE
    while frame is not None:
        code = frame.f_code
        is_inside = inside.get(id(code))
        if is_inside is None:
            is_inside = _inside(code)
        if not is_inside:
            where = (id(code), frame.f_lasti)
            source = _SOURCES.get(where)
            if source is None:  # computing f_lineno walks the line table: once per call site
                source = _SOURCES[where] = (code, frame.f_lineno)
            return source
        frame = frame.f_back
    return _NO_SOURCE


class Registers(dict):
    """A core's registers (name -> value). `state` is None after any write, until the cached front end names the
    values again (front_end_cache.py): a decoded instruction depends on the registers it reads."""

    __slots__ = ("state",)

    def __init__(self, *args):
        super().__init__(*args)
        self.state = None

    def __setitem__(self, name, value) -> None:
        self.state = None
        dict.__setitem__(self, name, value)


class AICore:
    """Core `index` of a launch (an AIC or an AIV): buffers, registers, the scheduler and race checker, and the
    instruction log. `block_idx` / `sub_block_idx` are what GetBlockIdx / GetSubBlockIdx return on it."""

    def __init__(self, index: int, block_dim: int, chip, core_type: CoreType, model, launch, block_idx: int = None,
                 sub_block_idx: int = 0, group: int = 0):
        self.index = index
        self.block_dim = block_dim
        self.block_idx = index if block_idx is None else block_idx
        self.sub_block_idx = sub_block_idx
        self.chip = chip
        self.core_type = core_type
        self.name = f"{core_type.name} {self.block_idx}"
        p = self.platform = chip.platform
        self.execute = chip.execute
        self.buffers = {name: Buffer(name, p.capacity(name), p.alignment(name), allocate=self.execute,
                                     shared=chip.gm.shared)
                        for name in core_type.buffers}  # timing-only: size-only buffers
        for buf in self.buffers.values():
            buf.key = (index, buf.name)
            if buf.name in WATCHED:
                buf.written = WrittenRanges()
        self.alignments = p.alignments
        self.paths = DATA_PATHS[p.npu_arch][core_type.name]  # the data paths this core has (coretypes.py)
        self.event_ids = p.event_ids
        self.group = group  # the AI core (an AIC and its AIVs) this core belongs to
        self.schedule = CoreSchedule(index, p, model, self._run, launch, core_type.name, group)
        self.races = RaceChecker(index, chip.gm_races) if chip.check_races else None
        self.log: list[Record] = []
        # exact engine: each record goes to the scheduler at once; fast engine: to the stream, scheduled after
        # the kernel's Python (fast_engine.py)
        self.stream: list[Record] = []
        self.submit = self.stream.append if chip.deferred else self.schedule.submit
        self.record = chip.record
        self.hooks = list(chip.hooks)
        self.bytes_by_path: dict[str, int] = {}
        self.counts: dict[str, int] = {}
        # Registers set by SetFmatrix, SetLoadDataRepeat, SetHF32Mode ... (each write is a record too)
        self.registers = Registers({"hf32": False, "hf32_trans_mode": 0})
        # the launch's cached front end (front_end_cache.py): key -> Descriptor, or None when it is off
        self.front_end_cache = chip.front_end_cache
        self.last = None  # the record issued last
        self.flag_balance: dict[tuple, int] = {}  # (event, id) -> SetFlags minus WaitFlags, when not 0 (isa/sync.py)
        self.tpipes: list = []
        self.api: tuple = ()  # the high-level API calls running (api_call.py), stored on each record issued
        self._seq = 0

    # ------------------------------------------------------------------ front end
    def issue(self, spec, pipe: Pipe, params, reads: tuple = (), writes: tuple = (), args=None,
              path: str | None = None, nbytes: int = 0, registers: tuple = (), event=None, footprint=None) -> Record:
        """Record one instruction, bounds-check it and submit it to the scheduler."""
        if path is not None and path not in self.paths:
            self.check_path(spec.name, pipe, path)
        return self.accept(Record(self.index, self._seq, spec, pipe, snapshot(params), args, reads, writes,
                                  kernel_source(_getframe(1)), path, nbytes, event, registers, footprint,
                                  self.api))

    def issue_sync(self, spec, pipe: Pipe, params, event=None, caller=None) -> Record:
        """Record a flag, barrier or SyncAll (isa/sync.py): no operands, byte ranges or data path, and `params`
        already checked and never changed (a SetFlag's or WaitFlag's shared by the calls decoded alike), so
        nothing is decoded or copied here. The kernel line is looked for from `caller` (the frame of the API
        call's caller, when the API entry passes it: fewer frames to walk) or else from this call's caller."""
        source = kernel_source(_getframe(1) if caller is None else caller)
        return self.accept(Record(self.index, self._seq, spec, pipe, params, None, (), (), source, None, 0, event,
                                  (), None, self.api), True)

    def accept(self, rec: Record, checked: bool = False) -> Record:
        """Take a record made by `issue` (or by the cached front end): bounds-check its byte ranges (a cached
        instruction at a shifted GM address too, so it faults as a decoded one), count, log, submit.
        The cube's reads of a watched buffer (machine/written.py) must be of bytes written before on this core.
        checked=True skips the checks where they cannot fail: a record without ranges (a flag, a barrier), or a
        cached hit at the ranges of a record accepted on this core before (a buffer's capacity never changes
        within a launch, and its written bytes only grow)."""
        self._seq += 1
        if not checked:
            for buf, lo, hi in rec.reads:
                if lo < 0 or hi > buf.capacity or lo > hi:
                    self._checked(buf.check, lo, hi, "read", rec=rec)
                if buf.written is not None and rec.pipe is CHECKED_PIPE:
                    self._check_written(buf, lo, hi, rec)
            for buf, lo, hi in rec.writes:
                if lo < 0 or hi > buf.capacity or lo > hi:
                    self._checked(buf.check, lo, hi, "write", rec=rec)
                if buf.written is not None:
                    buf.written.add(lo, hi)
        path = rec.path
        if path is not None:
            by_path = self.bytes_by_path
            by_path[path] = by_path.get(path, 0) + rec.nbytes
        counts = self.counts
        name = rec.name
        counts[name] = counts.get(name, 0) + 1
        self.last = rec
        if self.record:
            self.log.append(rec)
        self.submit(rec)
        return rec

    def _check_written(self, buf: Buffer, lo: int, hi: int, rec: Record) -> None:
        gap = buf.written.first_gap(lo, hi)
        if gap is not None:
            raise self.with_context(UnwrittenRead(
                f"read of bytes [{lo}, {hi}) of {buf.name}, of which [{gap[0]}, {gap[1]}) no instruction of this "
                "launch wrote: the hardware reads what the previous kernel left there", buffer=buf.name,
                addr_range=gap), rec)

    def check_path(self, name: str, pipe: Pipe, path: str) -> None:
        """Fault when this core has no data path `path` ("L1->GM"): the table in coretypes.py decides."""
        why = missing_path(self.platform.npu_arch, self.core_type, path)
        if why is not None:
            raise self.fault(MissingDataPath(why), name, pipe)

    def write_register(self, spec, name: str, value) -> Record:
        """A register write (SetFmatrix, SetHF32Mode, ...): a record on the scalar pipe."""
        self.registers[name] = value
        return self.issue(spec, Pipe.S, {"register": name, "value": value},
                          args=RegisterWrite(name, value))

    def _run(self, rec: Record) -> None:
        """The passes of a record the scheduler has just run: races, semantics, hooks."""
        if self.races is not None:
            try:
                self.races.observe(rec)
                # what the GM race checker looks at (GmRaceChecker.observes, inline: no call per record on A2)
                if rec.footprint is not None or rec.spec.kind in GM_ORDERING_KINDS or self.chip.gm_races.shared:
                    self.chip.gm_races.observe(self.index, rec)
            except SimFault as fault:
                raise self.with_context(fault, rec) from None
        self.run_checked(rec)

    def run_checked(self, rec: Record) -> None:
        """The passes after the race checks (the fast engine calls it directly when the compiled race checker
        found no race: fast_races.py)."""
        if self.execute and rec.args is not None:  # no args: a NOP (a zero count) that only takes its slot
            run = rec.spec.execute
            if run is not None:
                run(rec)
        if self.record:
            self.chip.executed.append(rec)
        for hook in self.hooks:
            hook(self, rec)

    def _checked(self, check, *args, rec: Record) -> None:
        try:
            check(*args)
        except SimFault as fault:
            raise self.with_context(fault, rec) from None

    def fault(self, fault: SimFault, name: str, pipe: Pipe) -> SimFault:
        """Attach this core, the instruction and the kernel source line to a fault found before issue."""
        if fault.core is None:
            fault.core, fault.core_name = self.index, self._fault_name()
        if fault.instruction is None:
            fault.instruction, fault.pipe = name, pipe.name
            fault.source = format_source(kernel_source(_getframe(1)))
        fault.args = (str(fault),)
        return fault

    def with_context(self, fault: SimFault, rec: Record) -> SimFault:
        if fault.core is None:
            fault.core, fault.core_name = self.index, self._fault_name()
        if fault.instruction is None:
            fault.instruction, fault.pipe, fault.source = rec.name, rec.pipe.name, rec.source
        fault.args = (str(fault),)
        return fault

    def _fault_name(self) -> str | None:
        """This core's name in a fault, when its launch index alone would not say it (AIVs, MIX launches)."""
        return None if self.name == f"AIC {self.index}" else self.name

    def release(self) -> None:
        """Break the launch's reference cycles (core <-> chip, core <-> its schedule, schedules <-> launch, core
        <-> its TPipes) once the report is built: a run nobody holds any more is then freed by reference counting,
        not left to the cyclic collector. The buffers, log, counts and schedule figures stay, and `chip` still
        reaches the chip (a weak proxy) while something holds it."""
        self.chip = weakref.proxy(self.chip)
        self.submit = None
        self.tpipes = []
        self.schedule.on_start = None
        self.schedule.launch = None

    # ------------------------------------------------------------------ results
    @property
    def cycles(self) -> float:
        return self.schedule.cycles

    @property
    def busy(self) -> list[float]:
        return self.schedule.busy

    def _cross_core_deadlock(self, wait: Record) -> str:
        """Why a CrossCoreWaitFlag never ran: where each core that could still set its flag stopped (the other
        cores of this AI core, or in a launch of one core type the other cores of that type)."""
        cores = self.chip.cores
        partners = ([c for c in cores if c is not self and c.group == self.group]
                    or [c for c in cores if c is not self and c.core_type is self.core_type])
        states = []
        for other in partners:
            blocked = other.schedule.stuck()
            states.append(f"{other.name} is stuck at {blocked[0].describe()}" if blocked else f"{other.name} ended")
        return (f"on {self.name} waits for cross-core flag {wait.params['flagId']}, which no core sets any more: "
                f"{'; '.join(states) or 'no other core'}")

    def check_at_end(self) -> None:
        """Every instruction ran, and no flag is left set (that would break the next kernel on hardware)."""
        stuck = self.schedule.stuck()
        if stuck:
            # the root: a WaitFlag whose flag has more waits than sets; else the first blocked record
            unset = [r for r in stuck if r.spec.kind is Kind.WAIT_FLAG and self.flag_balance.get(r.event, 0) < 0]
            if unset:
                root, what = unset[0], f"waits, but no SetFlag<{unset[0].event[0]}>({unset[0].event[1]}) follows it"
            elif stuck[0].spec.kind is Kind.CROSS_CORE_WAIT:
                root, what = stuck[0], self._cross_core_deadlock(stuck[0])
            else:
                root, what = stuck[0], "can never run: what it waits for is blocked behind it"
            raise self.with_context(SyncFault(f"deadlock: {root.describe()} {what}"), root)
        pending = next(((flag, sets) for flag, sets in self.schedule.cross_flags.items() if sets), None)
        if pending is not None:
            flag, arrivals = pending
            _, made_by = arrivals[0]  # the first count no wait took: its last set's core, pipe and line head the fault
            setter = made_by[-1]
            raise self.chip.cores[setter.core].with_context(SyncFault(
                f"cross-core flag {flag} of {self.name} was set {len(arrivals)} more time(s) than waited before the "
                f"kernel ended (a CrossCoreWaitFlag is missing on {self.name})"), setter)
        left = self.schedule.left_set()
        if left is not None:
            (event, eid), rec, count = left
            raise self.with_context(SyncFault(
                f"SetFlag<{event}>({eid}) was never waited before the kernel ended "
                f"({count} flag(s) left set)"), rec)
