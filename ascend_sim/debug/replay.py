"""A replay debugger: step forwards and backwards through a finished run, one executed record at a time.

The run is not run again: `chip.executed` (every record in the order it ran across the cores) is replayed on the
debugger's own copies of every core's buffer and of GM, starting from zeroed buffers and the GM contents the
launch started from. The chip's own buffers (the run's final state) are never changed.

    dbg = Debugger.launch(chip, kernel, block_dim, *args)   # snapshots GM, launches, keeps a fault if one happens
    dbg.continue_(until=break_on(name="Mmad", core=1))
    dbg.record, dbg.l0c(1, 0, 32, 32), dbg.back(), dbg.gm("c")

Rewinding is exact: the debugger keeps the bytes every replayed record overwrote since the last checkpoint (an
undo log, so back(1) costs about one forward step) and a full copy of the state every `checkpoint_every` records
(further back: restore the nearest checkpoint, then replay forward). Checkpoints share the arrays of buffers that
did not change since the previous one, and the interval grows so that they stay within `checkpoint_budget` bytes.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable

import numpy as np

from ascend_sim.debug.dataflow import DataFlow
from ascend_sim.debug.provenance import trace_element
from ascend_sim.debug.writers import Writer, fixpipe_source_byte, strided_index
from ascend_sim.machine.blas import blas_threads
from ascend_sim.machine.faults import SimFault
from ascend_sim.machine.formats import nz_to_nd, zn_to_nd, zz_to_nd

__all__ = ["ApiCall", "Capture", "Debugger", "Writer", "break_on"]

_INITIAL_REGISTERS = {"hf32": False, "hf32_trans_mode": 0}


def break_on(name: str | None = None, pipe=None, core: int | None = None, source: str | None = None,
             seq: int | None = None, condition: Callable | None = None) -> Callable:
    """A breakpoint: a predicate over a record that holds when every given criterion does.

    name: the instruction name ("Mmad", "DataCopy(Nd2Nz)"); pipe: a Pipe or its name ("M", "MTE2"); core: the core
    index in the launch; source: "file.py:123" (or just "file.py", or a full path ending in it); seq: the record's
    index in chip.executed; condition: any callable over the record."""
    pipe_name = None if pipe is None else getattr(pipe, "name", pipe)
    if source is not None:
        file, _, line = source.rpartition(":") if ":" in source else (source, "", "")
        file = os.path.basename(file)
        line = int(line) if line else None

    def predicate(rec, index: int | None = None) -> bool:
        if name is not None and rec.name != name:
            return False
        if pipe_name is not None and rec.pipe.name != pipe_name:
            return False
        if core is not None and rec.core != core:
            return False
        if seq is not None and index != seq:
            return False
        if source is not None:
            code, rec_line = rec.src
            if code is None or os.path.basename(code.co_filename) != file:
                return False
            if line is not None and rec_line != line:
                return False
        return condition is None or bool(condition(rec))
    predicate.takes_index = True
    return predicate


def _matches(predicate, rec, index: int) -> bool:
    if getattr(predicate, "takes_index", False):
        return predicate(rec, index)
    return bool(predicate(rec))


class ApiCall:
    """One call of a high-level API method: its name, core, nesting depth, and the indices of its first and last
    record in the executed order."""

    __slots__ = ("name", "core", "depth", "first", "last")

    def __init__(self, name: str, core: int, depth: int, first: int, last: int):
        self.name, self.core, self.depth, self.first, self.last = name, core, depth, first, last

    def __repr__(self) -> str:
        return f"<{self.name} on core {self.core}: records #{self.first} .. #{self.last}>"


class Debugger:
    """Steps through `chip.executed` of the chip's last launch. `seq` is the index of the next record to apply;
    `record` the last applied one (None at the start).

    initial_gm: {allocation name: bytes} of GM before the launch; by default `chip.initial_gm`, which
    `Debugger.launch` sets. fault: the SimFault that ended the run, if one did (the records that ran before it
    can be stepped through; the faulting record itself never ran, so it is not among them)."""

    def __init__(self, chip, initial_gm: dict | None = None, *, fault: SimFault | None = None,
                 checkpoint_every: int = 2000, checkpoint_budget: int = 1 << 30, tensors: dict | None = None):
        if not chip.record:
            raise ValueError("the chip ran with record=False: there are no records to replay")
        if not chip.execute:
            raise ValueError("the chip ran in timing-only mode (execute=False): records have no data to replay")
        if initial_gm is None:
            initial_gm = getattr(chip, "initial_gm", None)
        if initial_gm is None:
            raise ValueError("the GM contents before the launch are unknown: use Debugger.launch(chip, kernel, ...) "
                             "or pass initial_gm={name: bytes}")
        self.chip = chip
        self.records = chip.executed
        self.tensors = dict(tensors or {})  # {argument name: gm_tensors.GmTensor}, from the operator
        self._flow = None
        self._api_calls = None
        self.fault = fault if fault is not None else getattr(chip, "fault", None)
        # the machine state: key -> array; keys (core index, buffer name) and ("GM", allocation name)
        self._buffers = []  # (Buffer, key)
        for core in chip.cores:
            for name, buf in core.buffers.items():
                self._buffers.append((buf, (core.index, name)))
        for name, buf in chip.gm.allocations.items():
            self._buffers.append((buf, ("GM", name)))
        known = {id(buf) for buf, _ in self._buffers}
        for rec in self.records:
            for buf, _, _ in rec.reads + rec.writes:
                if id(buf) not in known:
                    raise ValueError(f"{rec.describe()} touches {buf.name}, which is neither a buffer of a core nor "
                                     "a GM allocation of this chip")
        self._key = {id(buf): key for buf, key in self._buffers}
        state = {}
        for buf, key in self._buffers:
            if key[0] == "GM":
                raw = np.asarray(initial_gm[key[1]]) if key[1] in initial_gm else None
                if raw is None:
                    raise ValueError(f"initial_gm has no allocation {key[1]!r}")
                state[key] = np.ascontiguousarray(raw).reshape(-1).view(np.uint8).copy()
            else:
                state[key] = np.zeros(buf.capacity, np.uint8)
        self._state = state
        state_bytes = sum(a.nbytes for a in state.values())
        most = max(1, checkpoint_budget // max(state_bytes, 1))
        self.checkpoint_every = max(checkpoint_every, -(-len(self.records) // most))
        self._checkpoints = [self._copy_state(None)]  # checkpoint j: the state before record j * checkpoint_every
        self._undo: list = []  # per applied record since _undo_base: [(key, lo, saved bytes), ...]
        self._undo_base = 0
        self.seq = 0

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def launch(cls, chip, kernel: Callable, block_dim: int, *args, **kwargs) -> "Debugger":
        """Snapshot GM, run `chip.launch(kernel, block_dim, *args, **kwargs)` and return a debugger on the run.
        A SimFault does not propagate: it is kept as `dbg.fault` and the records that ran before it can be
        stepped through (post-mortem up to the fault)."""
        chip.initial_gm = {name: buf.data.copy() for name, buf in chip.gm.allocations.items()}
        chip.fault = None
        try:
            chip.launch(kernel, block_dim, *args, **kwargs)
        except SimFault as fault:
            chip.fault = fault
        return cls(chip)

    @property
    def fault_record(self):
        """When the run ended in a fault found as a record ran (a race): that record, issued but never applied
        (the debugger stops before it, at the end of `records`). None otherwise (no fault, or one found when the
        kernel issued the call: then no record was made)."""
        fault = self.fault
        if fault is None or fault.core is None or fault.core >= len(self.chip.cores):
            return None
        ran = {id(rec) for rec in self.records}
        for rec in self.chip.cores[fault.core].log:
            if id(rec) not in ran and rec.name == fault.instruction and rec.source == fault.source:
                return rec
        return None

    # ------------------------------------------------------------------ position
    @property
    def record(self):
        """The last applied record (None before the first)."""
        return self.records[self.seq - 1] if self.seq else None

    @property
    def at_end(self) -> bool:
        return self.seq == len(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def step(self, n: int = 1):
        """Apply the next n records (fewer at the end). Returns the last applied record."""
        self.goto(min(self.seq + n, len(self.records)))
        return self.record

    def back(self, n: int = 1):
        """Undo the last n applied records (fewer at the start). Returns the last applied record."""
        self.goto(max(self.seq - n, 0))
        return self.record

    def goto(self, k: int):
        """Go to position k: records 0 .. k-1 applied. Returns the last applied record."""
        if not 0 <= k <= len(self.records):
            raise IndexError(f"position {k} outside [0, {len(self.records)}]")
        with self._installed():
            if k < self.seq:
                if k >= self._undo_base:
                    self._undo_to(k)
                else:
                    j = k // self.checkpoint_every
                    self._restore(j)
            self._forward(k)
        return self.record

    def continue_(self, until: Callable | Iterable[Callable] | None = None):
        """Apply records until one matches a breakpoint (it is applied: `record` is it) or the end. Returns the
        record it stopped at, or None at the end (then `fault` says whether the run ended in a fault)."""
        preds = _predicates(until)
        i = self.seq
        n = len(self.records)
        while i < n:
            if any(_matches(p, self.records[i], i) for p in preds):
                self.goto(i + 1)
                return self.record
            i += 1
        self.goto(n)
        return None

    def reverse_continue(self, until: Callable | Iterable[Callable] | None = None):
        """Undo records until the last applied one matches a breakpoint (it stays applied), or the start. Returns
        the record it stopped at, or None at the start."""
        preds = _predicates(until)
        i = self.seq - 2  # the current record does not count: search strictly before it
        while i >= 0:
            if any(_matches(p, self.records[i], i) for p in preds):
                self.goto(i + 1)
                return self.record
            i -= 1
        self.goto(0)
        return None

    def watch(self, key: tuple, lo: int, hi: int) -> Callable:
        """A watchpoint: a breakpoint that holds on the records that write any byte of [lo, hi) of `key`, a core's
        buffer (core, "L0C") or a GM allocation ("GM", "y"). Exact: a strided write whose span covers the bytes
        without writing them does not hold (dataflow.DataFlow.written)."""
        if key not in self._state:
            raise KeyError(f"no buffer {key!r}; e.g. (0, 'L0C') or ('GM', {next(iter(self.chip.gm.allocations), 'y')!r})")
        size = self._state[key].size
        if not 0 <= lo < hi <= size:
            raise ValueError(f"watch: bytes [{lo}, {hi}) outside {key[1]} of {size} bytes")
        keys, offsets = self._key, np.arange(lo, hi)

        def predicate(rec, index: int | None = None) -> bool:
            if not any(keys[id(b)] == key and l < hi and h > lo for b, l, h in rec.writes):
                return False
            if index is None:
                index = self.records.index(rec)
            return bool(self.flow.written_of(index, key, offsets).any())
        predicate.takes_index = True
        return predicate

    # ------------------------------------------------------------------ API calls (Record.api, api_call.py)
    @property
    def api_calls(self) -> dict:
        """{call id: ApiCall(name, core, depth, first, last)}: each high-level API call (Iterate, GetTensorC, ...)
        with the indices of its first and last record in `records` (executed order)."""
        if self._api_calls is None:
            calls: dict = {}
            for i, rec in enumerate(self.records):
                for depth, (name, call) in enumerate(rec.api):
                    found = calls.get(call)
                    if found is None:
                        calls[call] = ApiCall(name, rec.core, depth, i, i)
                    else:
                        found.last = i
            self._api_calls = calls
        return self._api_calls

    def break_on_api(self, name: str) -> Callable:
        """A breakpoint on the entry of every call of API method `name`: the first record each call issued (in the
        order the records ran)."""
        calls = self.api_calls
        if not any(c.name == name for c in calls.values()):
            known = sorted({c.name for c in calls.values()}) or ["none: no record carries an API call"]
            raise ValueError(f"no API call {name!r} in this run; calls: {', '.join(known)}")

        def predicate(rec, index: int | None = None) -> bool:
            return any(n == name and calls[call].first == index for n, call in rec.api)
        predicate.takes_index = True
        return predicate

    def finish(self):
        """Run to the end of the innermost API call the current record belongs to (its last record applied).
        Returns that record, or None when the current record is in no API call (nothing to finish)."""
        rec = self.record
        if rec is None or not rec.api:
            return None
        return self.goto(self.api_calls[rec.api[-1][1]].last + 1)

    def next(self):
        """Step over one unit of the current core: its next record, or, when that record is in an API call the
        current record is not in, the whole of that call (to its last record), as gdb's `next` steps over a call.
        Returns the last applied record."""
        rec = self.record
        core = rec.core if rec is not None else (self.records[0].core if self.records else 0)
        here = rec.api if rec is not None else ()
        for i in range(self.seq, len(self.records)):
            following = self.records[i]
            if following.core != core:
                continue
            common = 0
            while common < min(len(here), len(following.api)) and here[common] == following.api[common]:
                common += 1
            if len(following.api) > common:  # it enters a call: step over the whole call
                return self.goto(max(i, self.api_calls[following.api[common][1]].last) + 1)
            return self.goto(i + 1)
        return self.goto(len(self.records))

    def until(self, name: str):
        """Continue to the entry of the next call of API method `name` (its first record applied), or the end."""
        return self.continue_(self.break_on_api(name))

    # ------------------------------------------------------------------ state
    def buffer(self, core: int, name: str) -> np.ndarray:
        """The raw bytes of a core's buffer at this position (a read-only view)."""
        return self._view(self._state[(core, name)])

    def gm(self, name: str, dtype=None) -> np.ndarray:
        """A GM allocation at this position: raw bytes, or viewed as `dtype` (read-only)."""
        data = self._view(self._state[("GM", name)])
        return data if dtype is None else data.view(dtype)

    def registers(self, core: int) -> dict:
        """The core's registers as the records applied so far left them."""
        regs = dict(_INITIAL_REGISTERS)
        for rec in self.records[:self.seq]:
            if rec.core == core and isinstance(rec.params, dict) and "register" in rec.params:
                regs[rec.params["register"]] = rec.params["value"]
        return regs

    def flags(self, core: int) -> dict:
        """{(event, id): count} of the flags set (SetFlag applied, its WaitFlag not yet) on the core."""
        count: dict = {}
        for rec in self.records[:self.seq]:
            if rec.core == core and rec.event is not None:
                if rec.name == "SetFlag":
                    count[rec.event] = count.get(rec.event, 0) + 1
                elif rec.name == "WaitFlag":
                    count[rec.event] = count.get(rec.event, 0) - 1
        return {key: c for key, c in count.items() if c > 0}

    def pipe_clocks(self, core: int | None = None) -> dict:
        """{(core, pipe name): end cycle of the last applied record on that pipe} (of one core if given)."""
        clocks = {}
        for rec in self.records[:self.seq]:
            if core is None or rec.core == core:
                clocks[(rec.core, rec.pipe.name)] = rec.end
        return clocks

    # ------------------------------------------------------------------ logical views
    def l0a(self, core: int, address: int, m: int, k: int, dtype) -> np.ndarray:
        """(The views are copies: they keep the values of this position.) The (m, k) A operand stored in L0A at
        `address` as ZZ fractals [m1][k1][16][c0], or on a platform whose l0a_layout is NZ (the 950) as
        [k1][m1][16][c0]."""
        dtype = np.dtype(dtype)
        c0 = 32 // dtype.itemsize
        m1, k1 = -(-m // 16), -(-k // c0)
        z = self._typed((core, "L0A"), address, m1 * k1 * 16 * c0, dtype)
        if self.chip.platform.l0a_layout == "NZ":
            return nz_to_nd(z.reshape(k1, m1 * 16, c0), m, k).copy()
        return zz_to_nd(z.reshape(m1, k1, 16, c0), m, k).copy()  # a copy: the converters may return a view

    def l0b(self, core: int, address: int, k: int, n: int, dtype) -> np.ndarray:
        """The (k, n) B operand stored in L0B at `address` as ZN fractals [k1][n1][16 n][c0 k]."""
        dtype = np.dtype(dtype)
        c0 = 32 // dtype.itemsize
        k1, n1 = -(-k // c0), -(-n // 16)
        z = self._typed((core, "L0B"), address, k1 * n1 * 16 * c0, dtype).reshape(k1, n1, 16, c0)
        return zn_to_nd(z, k, n).copy()

    def l0c(self, core: int, address: int, m: int, n: int) -> np.ndarray:
        """The (m, n) fp32 accumulator in L0C at `address` in NZ [n1][m1*16][16]."""
        m16, n1 = -(-m // 16) * 16, -(-n // 16)
        z = self._typed((core, "L0C"), address, n1 * m16 * 16, np.dtype(np.float32)).reshape(n1, m16, 16)
        return nz_to_nd(z, m, n).copy()

    # ------------------------------------------------------------------ GM tensors by argument name
    def tensor(self, name: str, index=(), device: bool = False) -> np.ndarray:
        """An operator argument (`tensors`) at this position: the logical tensor, or with device=True its GM
        allocation in the device format; `index` (integers and slices) selects part of it. A copy."""
        t = self._tensor(name)
        data = self._state[("GM", t.allocation)]
        return np.array(t.device(data)[index] if device else t.logical(data, index))

    def trace(self, name: str, index: tuple):
        """The provenance (provenance.Provenance) of one logical element of an operator argument."""
        t = self._tensor(name)
        return self.provenance(t.allocation, t.byte_offset(tuple(index)))

    def _tensor(self, name: str):
        if name not in self.tensors:
            known = ", ".join(self.tensors) or "none: the debugger was given no tensors"
            raise KeyError(f"no tensor {name!r}; tensors: {known}")
        return self.tensors[name]

    def l1_nz(self, core: int, address: int, rows: int, cols: int, dtype) -> np.ndarray:
        """The (rows, cols) matrix stored in L1 at `address` as NZ [ceil(cols/C0)][align16(rows)][C0], the layout
        DataCopy with Nd2NzParams writes (a matmul's A or B slice)."""
        dtype = np.dtype(dtype)
        c0 = 32 // dtype.itemsize
        cols1, rows16 = -(-cols // c0), -(-rows // 16) * 16
        z = self._typed((core, "L1"), address, cols1 * rows16 * c0, dtype).reshape(cols1, rows16, c0)
        return nz_to_nd(z, rows, cols).copy()

    def l1_fmap(self, core: int, address: int, c1: int, h: int, w: int, dtype) -> np.ndarray:
        """A feature map stored in L1 at `address` as [C1][H][W][C0] (NC1HWC0 of one batch), as (C1*C0, H, W):
        the rows of dy a conv kernel loads for img2col."""
        dtype = np.dtype(dtype)
        c0 = 32 // dtype.itemsize
        z = self._typed((core, "L1"), address, c1 * h * w * c0, dtype).reshape(c1, h, w, c0)
        return np.ascontiguousarray(z.transpose(0, 3, 1, 2).reshape(c1 * c0, h, w))

    # ------------------------------------------------------------------ provenance
    @property
    def flow(self):
        """The exact written bytes and move sources of the records (dataflow.DataFlow, cached per record)."""
        if self._flow is None:
            self._flow = DataFlow(self)
        return self._flow

    def provenance(self, gm_name: str, byte_offset: int):
        """Where byte `byte_offset` of a GM allocation came from among the applied records: the store, the Mmads
        that accumulated its L0C cell and the loads that brought their operands, back to the GM bytes they read
        (provenance.Provenance)."""
        return trace_element(self, gm_name, byte_offset)

    def who_wrote(self, gm_name: str, byte_offset: int, before: int | None = None) -> list:
        """Who wrote byte `byte_offset` of GM allocation `gm_name` among the records applied so far (or before
        index `before`): [the last record whose exact GM footprint writes it] followed, when that is a Fixpipe, by
        the Mmads that accumulated the L0C bytes it read, back to the last one that initialised them
        (cmatrixInitVal). Each a Writer (record, seq, core, pipe, start, end, source). [] when none wrote it."""
        buf = self.chip.gm[gm_name]
        for i in range(min(self.seq, len(self.records) if before is None else before) - 1, -1, -1):
            rec = self.records[i]
            if rec.footprint is None or not any(b is buf and w for b, *_, w in rec.footprint):
                continue
            if not _footprint_covers(rec.footprint, buf, byte_offset):
                continue
            found = [Writer(rec, i)]
            if rec.name == "Fixpipe":
                found += self._accumulators(rec, i, buf, byte_offset)
            return found
        return []

    def who_wrote_buffer(self, core: int, name: str, byte_offset: int) -> list:
        """Who last wrote byte `byte_offset` of a core's buffer (L1, L0A, L0B, L0C, ...) among the records applied
        so far: [the last record whose write span covers it] (spans, not exact footprints: a strided write is
        taken to cover the gaps inside its span), followed, for L0C, by the earlier Mmads that accumulated into
        it back to the initialising one. [] when no applied record wrote it."""
        buf = self.chip.cores[core].buffers[name]
        for i in range(self.seq - 1, -1, -1):
            rec = self.records[i]
            if rec.core == core and any(b is buf and lo <= byte_offset < hi for b, lo, hi in rec.writes):
                found = [Writer(rec, i)]
                if rec.name == "Mmad" and not rec.params.cmatrixInitVal:
                    found += self._l0c_writers(rec.core, buf, byte_offset, i)
                return found
        return []

    def _l0c_writers(self, core: int, cbuf, l0c_byte: int, before: int) -> list:
        """The records of `core` before index `before` that wrote L0C byte l0c_byte, latest first, back to the
        Mmad that initialised it (or the first record that was not an Mmad)."""
        found = []
        for i in range(before - 1, -1, -1):
            rec = self.records[i]
            if rec.core != core or not any(b is cbuf and lo <= l0c_byte < hi for b, lo, hi in rec.writes):
                continue
            found.append(Writer(rec, i))
            if rec.name != "Mmad" or rec.params.cmatrixInitVal:  # the accumulation started here
                break
        return found

    def _accumulators(self, fix, index: int, gm_buf, byte_offset: int) -> list:
        """The Mmads (latest first) that wrote the L0C bytes the Fixpipe `fix` turned into GM byte byte_offset."""
        l0c_byte = fixpipe_source_byte(fix, gm_buf, byte_offset)
        if l0c_byte is None:
            return []
        return self._l0c_writers(fix.core, fix.args[0], l0c_byte, index)

    # ------------------------------------------------------------------ machinery
    @staticmethod
    def _view(array: np.ndarray) -> np.ndarray:
        view = array.view()
        view.flags.writeable = False
        return view

    def _typed(self, key, address: int, count: int, dtype: np.dtype) -> np.ndarray:
        data = self._state[key]
        end = address + count * dtype.itemsize
        if address < 0 or end > data.size:
            raise IndexError(f"bytes [{address}, {end}) outside {key[1]} of {data.size} bytes")
        return data[address:end].view(dtype)

    @contextlib.contextmanager
    def _installed(self):
        """Point every Buffer of the chip at the debugger's arrays while records execute, then back. numpy's
        OpenBLAS runs with the threads the launch used (Chip.blas_threads): the Mmads' fp32 sums are then the
        run's to the last bit, and a small product is not slowed by spinning worker threads."""
        saved = [(buf, buf.data) for buf, _ in self._buffers]
        try:
            for buf, key in self._buffers:
                buf.data = self._state[key]
            with blas_threads(getattr(self.chip, "blas_threads", None)):
                yield
        finally:
            for buf, data in saved:
                buf.data = data

    def _copy_state(self, previous: dict | None) -> dict:
        copy = {}
        for key, array in self._state.items():
            if previous is not None and np.array_equal(previous[key], array):
                copy[key] = previous[key]  # unchanged since the previous checkpoint: share its (never written) array
            else:
                copy[key] = array.copy()
        return copy

    def _forward(self, k: int) -> None:
        records, every, undo = self.records, self.checkpoint_every, self._undo
        state, keys = self._state, self._key
        i = self.seq
        while i < k:
            if i % every == 0 and i // every >= len(self._checkpoints):
                self._checkpoints.append(self._copy_state(self._checkpoints[-1]))
            if i % every == 0:
                undo.clear()
                self._undo_base = i
            rec = records[i]
            undo.append([(keys[id(buf)], lo, state[keys[id(buf)]][lo:hi].copy()) for buf, lo, hi in rec.writes])
            self.seq = i  # so that a fault in execute leaves a consistent position
            rec.execute()
            i += 1
            self.seq = i

    def _undo_to(self, k: int) -> None:
        state, undo = self._state, self._undo
        while self.seq > k:
            for key, lo, saved in reversed(undo.pop()):
                state[key][lo:lo + saved.size] = saved
            self.seq -= 1

    def _restore(self, j: int) -> None:
        checkpoint = self._checkpoints[j]
        for key, array in checkpoint.items():
            np.copyto(self._state[key], array)
        self.seq = self._undo_base = j * self.checkpoint_every
        self._undo.clear()


class Capture:
    """A hook that keeps what a debugger needs from a launch it cannot start itself (an operator such as
    conv3d_backprop_input_v2_run or run_matmul makes its own Chip but takes `hooks=`): the chip, and GM as it was
    before the launch (the chip calls `before_launch`). Then `capture.debugger()`.

        capture = Capture()
        run = conv3d_backprop_input_v2_run(..., hooks=[capture])
        dbg = capture.debugger()
    """

    def __init__(self):
        self.chip = None
        self.initial_gm = None

    def before_launch(self, chip) -> None:
        self.chip = chip
        self.initial_gm = {name: buf.data.copy() for name, buf in chip.gm.allocations.items()}

    def __call__(self, core, rec) -> None:
        pass  # everything it needs was taken before the launch

    def debugger(self, **options) -> Debugger:
        """A Debugger on the captured launch (options: fault=, checkpoint_every=, checkpoint_budget=)."""
        if self.chip is None:
            raise ValueError("no launch ran with this capture among its hooks")
        return Debugger(self.chip, self.initial_gm, **options)


def _predicates(until) -> list:
    if until is None:
        return []
    if callable(until):
        return [until]
    return list(until)


def _footprint_covers(footprint, buf, byte_offset: int) -> bool:
    for b, offset, shape, strides, is_write in footprint:
        if b is not buf or not is_write:
            continue
        rel = byte_offset - offset
        if rel < 0:
            continue
        if strided_index(rel, shape, strides) is not None:
            return True
    return False
