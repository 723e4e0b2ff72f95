"""A replay data pass's loads into L0A / L0B held pending per cube core, and Mmads that gather their operands
straight from L1 (issue 23).

C3D conv3a's cube cores go through runs of three Mmads (`[LoadData 3Dv2, LoadData2D x 3, Mmad] x 3`), too short
to plan (replay_data.RunPlan), so record by record; nearly every load there is overwritten two Mmads later with
no other reader. Copied, each load costs a gather into L0 and the Mmad then converts L0's fractals to float32.
Held pending instead, a load is only what it would write (its operands: its L1 source and its map), and an Mmad
whose A or B the pending loads wrote whole gathers it from L1 in the order it multiplies it
(replay_data._operand's maps, by the loads' form and their places relative to each other and to the operand,
worked out once a launch) and converts it as it gathers: one gather instead of a copy and a conversion. The
float32 operand holds the same values in the same layout as machine/mmad.py's product makes from L0, and is
multiplied by the same BLAS call, so the sums are the same bits.

A pending load is made real (its semantics run, in the order the loads came) before anything else can see L0A /
L0B or change its L1 source: any record of the core other than a load from L1 into L0A / L0B or an Mmad of the
plain form (a DataCopy into L1, a record reading L0A, a GEMV or bias Mmad, ...), an Mmad reading L0 bytes some of
which were not written by the pending loads, a planned run and a joined row copy on the core (run_in_order's
flush), the end of the pass and a record that raised (store_all). A pending load that a later pending load of
the same buffer overwrites whole is dropped: its bytes could not be seen. Only on a core whose buffers are its
own (`own`), so no other core's record can read or write them in between. A load's semantics raise nothing its
front end did not check (isa/mte1.py), so deferring it moves no fault. Hooks, the debugger and verify mode run
on the exact engine, which runs every record. Tests: tests/ascend_sim/engine/test_pending_loads.py.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.engine.replay_data import L0CChains, Rows, _load_range, _operand, _positions, _refused
from ascend_sim.engine.short_runs import FRACTAL, _is_gm_copy, load2d_copies
from ascend_sim.machine.dtypes import element_bits, to_float32
from ascend_sim.machine.mmad import multiply, operand_a, operand_b, product

_L0 = ("L0A", "L0B")
_NOT_GATHERED = "not gathered"  # a gathers entry: the operand is read from L0 once its loads are made real


class PendingLoads(L0CChains):
    """L0CChains whose cores' loads from L1 into L0A / L0B are held pending (the module's docstring)."""

    __slots__ = ("pending", "gathers", "images")

    def __init__(self, own_l0c):
        super().__init__(own_l0c)
        self.pending: dict = {}  # core -> its pending loads in order: _Held
        self.gathers: dict = {}  # an operand's key (_gather_key) -> _Gather or _NOT_GATHERED, for the pass
        self.images: dict = {}  # core -> its _L1Image

    def run(self, run, ops, core: int, names_l0c: bool) -> None:
        args = ops.args
        if self.own[core]:
            fields = getattr(args, "_fields", None)
            if fields is not None:
                if fields[0] == "abuf" and not args.gemv and args.bias_bt is None:
                    super().run(run, ops, core, names_l0c)  # its product: self.product
                    return
                held = _held(run, ops, args, fields)
                if held is not None:
                    self._hold(core, held)
                    return
                if _is_gm_copy(args):
                    self._before_copy(core, args)
                    super().run(run, ops, core, names_l0c)
                    return
        self.before_other(core)
        super().run(run, ops, core, names_l0c)

    def before_other(self, core: int) -> None:
        """Before data work on the core that may read L0A / L0B or write L1 (a record of another kind, a joined
        row copy): its pending loads made real, its L1 image forgotten."""
        if core in self.pending:
            self.flush(core)
        self.images.pop(core, None)

    def joined_loads(self, core: int, ops, count: int, s_step: int, d_step: int) -> None:
        if self.own[core] and _on_elements(ops) and ops.s_pitch % ops.dtype.itemsize == 0:
            self._hold(core, _held_2d(None, None, ops, count, s_step, d_step))
        else:
            self.flush(core)
            load2d_copies(ops, count, s_step, d_step)

    def product(self, args, core: int) -> np.ndarray:
        """The Mmad's A . B, its operands gathered from L1 where the pending loads wrote them whole."""
        pending = self.pending.get(core)
        if pending is None:
            return product(args)
        a = self._operand(core, pending, args, "L0A", args.a0, args.a_bytes)
        b = self._operand(core, pending, args, "L0B", args.b0, args.b_bytes) if a is not None else None
        if a is None or b is None:
            self.flush(core)
            return product(args)
        if a is False and b is False:
            return product(args)
        m1, n1, kp = args.m1, args.n1, args.k1 * args.c0
        if a is False:  # read from L0 as isa/cube.py's Mmad reads it
            a = operand_a(args)
        if b is False:
            b = operand_b(args)
        return multiply(a.reshape(m1 * 16, kp), b.reshape(kp, n1 * 16), args.k, args.hf32_rounding)

    def flush(self, core: int) -> None:
        """The core's pending loads made real, in order."""
        for held in self.pending.pop(core, ()):
            if held.count:
                load2d_copies(held.args, held.count, held.s_step, held.d_step)
            else:
                held.run(held.ops)

    def _before_copy(self, core: int, args) -> None:
        """Before a row copy between GM and a buffer of the core (DataCopy's operands) runs: the pending loads up
        to the last one whose L1 source it overwrites made real (those after it stay pending: made real later,
        they still come after the ones made now), all of them when it reads or writes L0A / L0B."""
        if args.sbuf.name in _L0 or args.dbuf.name in _L0:
            self.flush(core)
            return
        if args.dbuf.name != "L1":
            return
        lo, hi = args.d0, args.d0 + (args.count - 1) * args.d_pitch + args.blen
        image = self.images.get(core)
        if image is not None:
            image.forget(lo, hi)
        pending = self.pending.get(core)
        if pending is None:
            return
        last = max((k for k, p in enumerate(pending) if p.s_lo < hi and p.s_hi > lo), default=-1)
        if last == len(pending) - 1:
            self.flush(core)
        elif last >= 0:
            self.pending[core] = pending[:last + 1]
            self.flush(core)
            self.pending[core] = pending[last + 1:]

    def store_all(self) -> None:
        for core in list(self.pending):
            self.flush(core)
        super().store_all()

    def _hold(self, core: int, held: _Held) -> None:
        pending = self.pending.setdefault(core, [])
        if held.full:  # the loads it overwrites whole can never be seen
            pending[:] = [p for p in pending if not (p.buffer == held.buffer and held.lo <= p.lo and p.hi <= held.hi)]
        pending.append(held)

    def _operand(self, core: int, pending: list, args, buffer: str, start: int, nbytes: int):
        """An Mmad operand (`buffer` bytes [start, start + nbytes)) as float32 gathered from L1 (_Gather.take),
        False when no pending load wrote any of it (L0 holds it), None when pending loads wrote only part of it."""
        end = start + nbytes
        loads = [p for p in pending if p.buffer == buffer and p.lo < end and p.hi > start]
        if not loads:
            return False
        key = _gather_key(loads, args, buffer, start)
        gather = self.gathers.get(key)
        if gather is None:
            gather = self.gathers[key] = _Gather.compiled(loads, args, buffer, start, nbytes, key) or _NOT_GATHERED
        if gather is _NOT_GATHERED:
            return None
        image = self.images.get(core)
        if image is None or image.dtype != args.dtype:
            image = self.images[core] = _L1Image(loads[0].args.sbuf, args.dtype)
        return gather.take(image, loads[0].args.s0 // args.dtype.itemsize)


class _Held:
    """A pending load: its semantics and operands (`ops`, a record's or its block's), or a ShortRun step of
    `count` LoadData2D joined (`args` the first's); the bytes [lo, hi) of its L0 buffer it writes, whether every
    one, and the L1 bytes [s_lo, s_hi) it reads."""

    __slots__ = ("run", "ops", "args", "count", "s_step", "d_step", "buffer", "lo", "hi", "full", "s_lo", "s_hi",
                 "form")

    def __init__(self, run, ops, args, count: int, s_step: int, d_step: int, lo: int, hi: int, full: bool,
                 s_lo: int, s_hi: int):
        self.run, self.ops, self.args, self.count, self.s_step, self.d_step = run, ops, args, count, s_step, d_step
        self.buffer, self.lo, self.hi, self.full, self.s_lo, self.s_hi = args.dbuf.name, lo, hi, full, s_lo, s_hi
        self.form = None  # _form's, when an Mmad first reads it

    def loads(self) -> list:
        """Its LoadData operands, one a record."""
        if not self.count:
            return [self.args]
        return [self.args._replace(s0=self.args.s0 + k * self.s_step, d0=self.args.d0 + k * self.d_step)
                for k in range(self.count)]


def _held_2d(run, ops, args, count: int = 0, s_step: int = 0, d_step: int = 0) -> _Held:
    """A LoadData2D (`count` of them joined: each one's source and destination s_step and d_step bytes after the
    one before, none overlapping another, short_runs._apart) as a pending load."""
    d0, s0, reps, d_pitch = args.d0, args.s0, args.reps, args.d_pitch
    d_span, s_span = (reps - 1) * d_pitch + FRACTAL, (reps - 1) * args.s_pitch + FRACTAL
    full = d_pitch == FRACTAL  # as replay_data._load_range
    if count > 1:
        full = full and abs(d_step) == d_span  # back to back
        d_far, s_far = (count - 1) * d_step, (count - 1) * s_step
        return _Held(run, ops, args, count, s_step, d_step, d0 + min(0, d_far), d0 + d_span + max(0, d_far), full,
                     s0 + min(0, s_far), s0 + s_span + max(0, s_far))
    return _Held(run, ops, args, count, s_step, d_step, d0, d0 + d_span, full, s0, s0 + s_span)


def _held_3d(run, ops, args) -> _Held:
    """A LoadData 3Dv2 as a pending load (dense, or at `written` of its extent)."""
    size = args.dtype.itemsize
    d0, s0 = args.d0, args.s0
    if args.written is None:
        return _Held(run, ops, args, 0, 0, 0, d0, d0 + args.count * size, True, s0, s0 + args.span * size)
    return _Held(run, ops, args, 0, 0, 0, d0, d0 + args.extent * size, False, s0, s0 + args.span * size)


def _form(held: _Held) -> tuple:
    """What decides a pending load's map apart from its addresses (the maps by identity: _Gather keeps the
    operands holding them, so no id is reused while its entry is kept)."""
    args = held.args
    if held.form is None:
        if args._fields[2] == "s_pitch":
            held.form = ("2D", args.reps, args.s_pitch, args.d_pitch, args.transpose, args.dtype, held.count,
                         held.s_step, held.d_step)
        else:
            held.form = ("3Dv2", id(args.index), id(args.pad_positions), id(args.written), args.span, args.count,
                         args.extent, args.dtype, args.pad_value)
    return held.form


def _held(run, ops, args, fields) -> _Held | None:
    """A record's load as a pending load, or None when it is not a LoadData2D / 3Dv2 from L1 into L0A / L0B on
    elements."""
    if fields[0] != "sbuf" or args.sbuf.name != "L1" or args.dbuf.name not in _L0 or not _on_elements(args):
        return None
    if len(fields) == 10 and fields[7] == "transpose":  # LoadData2D
        return _held_2d(run, ops, args) if args.s_pitch % args.dtype.itemsize == 0 else None
    if len(fields) > 10 and fields[8] == "index":  # LoadData 3Dv2
        return _held_3d(run, ops, args)
    return None


def _on_elements(args) -> bool:
    size = args.dtype.itemsize
    return args.s0 % size == 0 and args.d0 % size == 0 and (args._fields[2] != "s_pitch" or args.d_pitch % size == 0)


def _gather_key(loads: list, args, buffer: str, start: int) -> tuple:
    """What decides an operand's gather: the Mmad's shape and order, and each load's form and place (its source
    relative to the first's, its destination relative to the operand)."""
    s0 = loads[0].args.s0
    return (buffer, args.a_nz, args.m1, args.k1, args.n1, args.c0, args.dtype,
            *[(_form(p), p.args.s0 - s0, p.args.d0 - start) for p in loads])


class _Gather:
    """An operand's gather from L1 (replay_data._operand's): from its first load's source element on, C0 blocks
    (a Rows) or elements, its pads and their float32 value."""

    __slots__ = ("at", "end", "index", "pads", "pad_value", "kept")

    @classmethod
    def compiled(cls, loads: list, args, buffer: str, start: int, nbytes: int, kept) -> _Gather | None:
        records = [ops for held in loads for ops in held.loads()]
        if _refused(records + [args]):
            return None
        size = args.dtype.itemsize
        ranges = [(*_load_range(ops, size), j) for j, ops in enumerate(records)]
        order_key = ("A" if buffer == "L0A" else "B", args.a_nz, args.m1, args.k1, args.n1, args.c0)
        order = _positions(*order_key[1:])[0 if buffer == "L0A" else 1]
        found = _operand(records, ranges, start // size, nbytes // size, order, order_key, args.dtype, size, {})
        if found is None:
            return None
        gather = cls()
        low, gather.index, gather.pads, gather.pad_value, end = found
        base = loads[0].args.s0 // size
        gather.at, gather.end = low - base, end - base
        gather.kept = (records, kept)  # the maps whose ids the key holds
        return gather

    def take(self, image: _L1Image, first: int) -> np.ndarray:
        """The operand as float32 (flat, in the order the Mmad multiplies it) from the L1 image, its first load
        reading from L1 element `first`."""
        lo, hi = first + self.at, first + self.end
        index = self.index
        if index.__class__ is Rows:  # C0 blocks of the image: an img2col reads each about 27 times (C3D)
            c0 = index.c0
            rows = image.converted(lo, hi)[lo:lo + (hi - lo) // c0 * c0].reshape(-1, c0)
            gathered = rows.take(index.blocks, axis=0).reshape(-1)
        else:  # elements read about once between two refills (C3D's B): gathered, then converted
            dtype = image.dtype
            gathered = to_float32(element_bits(image.l1.data, dtype)[lo:hi].take(index), dtype)
        if self.pads is not None:
            gathered[self.pads] = self.pad_value
        return gathered


class _L1Image:
    """A core's L1 as float32 elements of one dtype, converted range by range as Mmads gather from it, each
    range kept until a record may write L1 there (PendingLoads forgets it): C3D's img2col reads each L1 element
    of the feature map about 27 times between two refills, converted once."""

    __slots__ = ("l1", "dtype", "values", "ranges")

    def __init__(self, l1, dtype):
        self.l1, self.dtype = l1, dtype
        self.values = np.empty(l1.capacity // dtype.itemsize, np.float32)
        self.ranges: list = []  # [first, end) elements converted and unchanged since, sorted and apart

    def converted(self, lo: int, hi: int) -> np.ndarray:
        """The image, its elements [lo, hi) converted from L1's bytes (those not converted yet)."""
        ranges = self.ranges
        for first, end in ranges:
            if first <= lo and hi <= end:
                return self.values
        at = lo
        for first, end in ranges:  # the gaps of [lo, hi) between the converted ranges (sorted, apart)
            if end <= at:
                continue
            if first >= hi:
                break
            if first > at:
                self._convert(at, first)
            at = max(at, end)
        if at < hi:
            self._convert(at, hi)
        joined = []
        for first, end in sorted(ranges + [(lo, hi)]):
            if joined and first <= joined[-1][1]:
                joined[-1][1] = max(joined[-1][1], end)
            else:
                joined.append([first, end])
        self.ranges = [tuple(r) for r in joined]
        return self.values

    def _convert(self, lo: int, hi: int) -> None:
        size = self.dtype.itemsize
        to_float32(element_bits(self.l1.data[lo * size:hi * size], self.dtype), self.dtype, out=self.values[lo:hi])

    def forget(self, lo: int, hi: int) -> None:
        """L1 bytes [lo, hi) are written: their elements are converted again when next read."""
        size = self.dtype.itemsize
        lo, hi = lo // size, -(-hi // size)
        kept = []
        for first, end in self.ranges:
            if first < lo:
                kept.append((first, min(end, lo)))
            if end > hi:
                kept.append((max(first, hi), end))
        self.ranges = kept
