"""What the cached front end keeps per launch: one `Descriptor` per distinct decoded instruction.

A descriptor is the decoded part of a record (spec, pipe, parameter snapshot, operands, byte ranges, path, bytes,
registers read, event, GM footprint, kernel line) as the front end made it on a miss, with the GM addresses of
its GlobalTensor operands as they were then (`gm_bases`). The lookup and the rules of what may be cached are in
front_end_cache.py.
"""
from __future__ import annotations

import enum

import numpy as np

from ascend_sim.machine.memory import Buffer


class FrontEndCache:
    """The cache of one launch: key -> Descriptor (or UNCACHED), the register states named so far, counts, the
    SetFlag / WaitFlag calls decoded so far (isa/sync.py: (spec, core type, event, id, api) -> the flag), and the
    relative entries' on-chip key moduli (front_end_cache.cached's on_chip_alignment)."""

    __slots__ = ("entries", "register_states", "hits", "misses", "flags", "alignments")

    def __init__(self):
        self.entries: dict = {}
        self.flags: dict = {}
        self.alignments: dict = {}  # a relative entry -> the modulus its on-chip addresses key by in this launch
        self.register_states: dict = {}  # the registers' values, as a tuple -> a small int for the keys
        self.hits = 0
        self.misses = 0


UNCACHED = object()  # a key whose calls always run the front end (it issued more or other than one record)


class View:
    """A descriptor's operands on one core (its own buffers), at the GM addresses `gm_bases` of the call's
    GlobalTensors and, for a relative descriptor, the on-chip addresses `local_bases` of its positional
    LocalTensors (in argument order)."""

    __slots__ = ("args", "reads", "writes", "footprint", "gm_bases", "local_bases", "moved", "checked")

    def __init__(self, args, reads, writes, footprint, gm_bases: tuple, local_bases: tuple = (),
                 checked: bool = False):
        self.args, self.reads, self.writes, self.footprint = args, reads, writes, footprint
        self.gm_bases, self.local_bases = gm_bases, local_bases
        # whether `AICore.accept` has bounds-checked these byte ranges on the view's core: a hit at the view's own
        # addresses then skips the check (a shifted or moved hit is checked every time)
        self.checked = checked
        # a relative descriptor's views at other on-chip places, by the LocalTensors' addresses: the records made
        # there share their operands (a cost is worked out once per operands object) as those of one place do
        self.moved: dict = {}


class Descriptor:
    """One decoded instruction. `gm_slots` per GM operand of the call (in argument order): which byte range, args
    field and footprint entry hold an address in it, so a call at another GM address shifts exactly those.
    Made by `describe`, which works out the slots in one pass over the record."""

    __slots__ = ("spec", "pipe", "params", "src", "path", "nbytes", "event", "registers", "portable",
                 "views", "read_slots", "write_slots", "arg_slots", "footprint_slots", "local_reads",
                 "local_writes", "local_args", "on_chip_slots")

    def __init__(self, rec, core_index: int, gm_bases: tuple, reads: tuple, writes: tuple, args: tuple,
                 footprint_slots: tuple, on_chip_slots: tuple = ((), (), ()), local_bases: tuple = ()):
        self.spec, self.pipe, self.params, self.src = rec.spec, rec.pipe, rec.params, rec.src
        self.path, self.nbytes, self.event, self.registers = rec.path, rec.nbytes, rec.event, rec.registers
        self.views = {}
        self.add_view(core_index, rec, gm_bases, local_bases)
        # a relative descriptor's (index, LocalTensor operand) of each on-chip read range, write range and
        # operands address field (front_end_cache.cached's on_chip_alignment)
        self.on_chip_slots = on_chip_slots
        # (index, GM operand) of each byte range, operands field and footprint entry holding a GM address, and
        # where the core's own buffers are, for the view on another core (local_args None: anywhere in the operands)
        self.read_slots, self.local_reads = reads
        self.write_slots, self.local_writes = writes
        self.arg_slots, self.local_args, self.portable = args
        self.footprint_slots = footprint_slots

    def add_view(self, core_index: int, rec, gm_bases: tuple, local_bases: tuple = ()) -> None:
        """The operands of `rec`, decoded on core `core_index` with its GlobalTensors at `gm_bases` (and a
        relative descriptor's LocalTensors at `local_bases`)."""
        self.views[core_index] = View(rec.args, rec.reads, rec.writes, rec.footprint, gm_bases, local_bases,
                                      checked=True)  # `rec` was accepted on that core

    def view(self, core) -> View | None:
        """The operands on `core`: the miss's, with the core's own buffers in place of the miss's core's (None
        when the descriptor is not portable and `core` has not decoded it itself)."""
        view = self.views.get(core.index)
        if view is None and self.portable:
            first = next(iter(self.views.values()))
            buffers = core.buffers
            args = first.args
            if self.local_args is None:
                args = _remap(args, buffers)
            elif self.local_args:
                fields = list(args)
                for i in self.local_args:
                    fields[i] = buffers[fields[i].name]
                args = args._make(fields)
            view = self.views[core.index] = View(
                args, _remap_ranges(first.reads, self.local_reads, buffers),
                _remap_ranges(first.writes, self.local_writes, buffers),
                first.footprint, first.gm_bases, first.local_bases)  # a footprint names GM only
        return view

    def shifted(self, view: View, shifts: list) -> tuple:
        """(args, reads, writes, footprint) of `view` with each GM operand's addresses moved by its shift."""
        reads, writes, args, footprint = view.reads, view.writes, view.args, view.footprint
        if self.read_slots:
            reads = _shift_ranges(reads, self.read_slots, shifts)
        if self.write_slots:
            writes = _shift_ranges(writes, self.write_slots, shifts)
        if self.arg_slots:
            fields = list(args)
            for i, s in self.arg_slots:
                fields[i] += shifts[s]
            args = _new_tuple(args.__class__, fields)  # a named tuple of the same fields, without _make's checks
        if self.footprint_slots:
            if len(footprint) == 1:  # the common case: one GM access
                buf, offset, shape, strides, is_write = footprint[0]
                footprint = ((buf, offset + shifts[self.footprint_slots[0][1]], shape, strides, is_write),)
            else:
                footprint = list(footprint)
                for i, s in self.footprint_slots:
                    f = footprint[i]
                    footprint[i] = (f[0], f[1] + shifts[s]) + f[2:]
                footprint = tuple(footprint)
        return args, reads, writes, footprint

    def moved_on_chip(self, view: View, addresses: tuple) -> View:
        """`view` with each on-chip range and address field moved with its LocalTensor to `addresses` (a relative
        descriptor), made once per place."""
        moves = [address - base for address, base in zip(addresses, view.local_bases)]
        read_slots, write_slots, arg_slots = self.on_chip_slots
        args, reads, writes = view.args, view.reads, view.writes
        if read_slots:
            reads = _shift_ranges(reads, read_slots, moves)
        if write_slots:
            writes = _shift_ranges(writes, write_slots, moves)
        if arg_slots:
            fields = list(args)
            for i, s in arg_slots:
                fields[i] += moves[s]
            args = _new_tuple(args.__class__, fields)
        moved = view.moved[addresses] = View(args, reads, writes, view.footprint, view.gm_bases, view.local_bases)
        return moved


def describe(rec, core_index: int, gm_buffers: tuple, gm_bases: tuple, local_names: tuple | None = None,
             local_bases: tuple = ()) -> Descriptor | None:
    """The descriptor of `rec`, decoded on core `core_index` from a call whose GlobalTensors are `gm_buffers` at
    `gm_bases`; None when it cannot be reused: a GM buffer the call's GlobalTensors do not name, or one inside
    the operands where `Descriptor.shifted` cannot move it (an operands field that is a GM buffer is followed by
    its address field: sbuf s0, dbuf d0, ...). With `local_names` (a relative entry: the buffer names of the
    call's positional LocalTensors, at `local_bases`) every on-chip range and operand must be in one of those
    buffers, named by one tensor, the operand a top-level field followed by its address, and no footprint entry
    in a core buffer, or None."""
    slot = {id(buf): i for i, buf in enumerate(gm_buffers)}.get
    reads = _range_slots(rec.reads, slot)
    writes = _range_slots(rec.writes, slot)
    footprint = _range_slots(rec.footprint or (), slot)
    operands = rec.args if rec.args is not None else ()
    args = _operand_slots(operands, slot)
    if reads is None or writes is None or footprint is None or args is None:
        return None
    on_chip = ((), (), ())
    if local_names is not None:  # (a footprint in a core buffer would not move: refused)
        on_chip = None if footprint[1] else _on_chip_slots(rec, operands, local_names, reads[1], writes[1], args[1])
        if on_chip is None:
            return None
    return Descriptor(rec, core_index, gm_bases, reads, writes, args, footprint[0], on_chip, local_bases)


def _on_chip_slots(rec, operands: tuple, names: tuple, local_reads: tuple, local_writes: tuple,
                   local_args: tuple | None) -> tuple | None:
    """A relative descriptor's ((index, tensor) of the on-chip reads, writes, operands address fields), from the
    core-buffer entries `_range_slots` and `_operand_slots` found; None when a core buffer is not named by exactly
    one of the call's LocalTensors, sits inside an operands field, or is not followed by its address."""
    if local_args is None or len(set(names)) != len(names):
        return None
    tensor = {name: i for i, name in enumerate(names)}.get
    slots = []
    for ranges, local in ((rec.reads, local_reads), (rec.writes, local_writes)):
        found = [(i, tensor(ranges[i][0].name)) for i in local]
        slots.append(tuple(found))
    last = len(operands) - 1
    found = [(i + 1, tensor(operands[i].name)) for i in local_args if i < last and operands[i + 1].__class__ is int]
    slots.append(tuple(found))
    if len(found) != len(local_args) or any(k is None for part in slots for _, k in part):
        return None
    return tuple(slots)


def _range_slots(entries, slot) -> tuple | None:
    """((index, GM operand) of the entries (buffer first) in a GM operand's allocation, indices of the entries in
    the core's own buffers), or None when an entry is in a GM buffer the call does not name."""
    slots, local = [], []
    for i, entry in enumerate(entries):
        buf = entry[0]
        if buf.key.__class__ is tuple:
            local.append(i)
        else:
            s = slot(id(buf))
            if s is None:
                return None
            slots.append((i, s))
    return tuple(slots), tuple(local)


_LEAVES = (int, float, bool, str, type(None), np.ndarray, np.dtype, np.generic, type, enum.Enum, Buffer)
_LEAF_CLASSES = {int, float, bool, str, type(None), np.ndarray}  # grows with the classes met that are leaves


def _operand_slots(args: tuple, slot) -> tuple | None:
    """(arg slots: (index of the address field, GM operand) per GM buffer field; local args: the indices of the
    core-buffer fields, None when a core buffer sits inside a field; portable: whether a remap (`_remap`) reaches
    every core buffer, i.e. the operands are tuples of known leaves), or None when a GM buffer is not a top-level
    field followed by an int address, or is not one of the call's."""
    arg_slots, local, nested_local, portable = [], [], False, True
    last = len(args) - 1
    for i, value in enumerate(args):
        cls = value.__class__
        if cls in _LEAF_CLASSES:
            continue
        if cls is Buffer:
            if value.key.__class__ is tuple:
                local.append(i)
                continue
            s = slot(id(value))
            if s is None or i == last or args[i + 1].__class__ is not int:
                return None
            arg_slots.append((i + 1, s))
        elif isinstance(value, tuple):
            if holds_buffer(value, False):
                return None
            if holds_buffer(value, True):
                nested_local = True
            portable = portable and _portable(value)
        elif _portable(value):
            _LEAF_CLASSES.add(cls)
        else:
            portable = False
    return tuple(arg_slots), (None if nested_local else tuple(local)), portable


def _portable(value) -> bool:
    if isinstance(value, tuple):
        return all(_portable(v) for v in value)
    return isinstance(value, _LEAVES) or callable(value)


_new_tuple = tuple.__new__


def _shift_ranges(ranges: tuple, slots: tuple, shifts: list) -> tuple:
    if len(ranges) == 1:  # the common case: one range, in GM
        buf, lo, hi = ranges[0]
        shift = shifts[slots[0][1]]
        return ((buf, lo + shift, hi + shift),)
    ranges = list(ranges)
    for i, s in slots:
        buf, lo, hi = ranges[i]
        ranges[i] = (buf, lo + shifts[s], hi + shifts[s])
    return tuple(ranges)


def holds_buffer(value, local: bool) -> bool:
    """Whether `value` is or holds (in tuples) a core's buffer (local) or a GM allocation (not local)."""
    if value.__class__ is Buffer:
        return (value.key.__class__ is tuple) == local
    return isinstance(value, tuple) and any(holds_buffer(v, local) for v in value)


def _remap_ranges(ranges: tuple, local: tuple, buffers: dict) -> tuple:
    if not local:
        return ranges
    ranges = list(ranges)
    for i in local:
        buf, lo, hi = ranges[i]
        ranges[i] = (buffers[buf.name], lo, hi)
    return tuple(ranges)


def _remap(value, buffers: dict):
    """`value` with every core buffer (key (core, name)) replaced by the buffer of that name in `buffers`."""
    cls = value.__class__
    if cls is Buffer:
        return buffers[value.name] if value.key.__class__ is tuple else value
    if isinstance(value, tuple):
        items = [_remap(v, buffers) for v in value]
        return value._make(items) if hasattr(value, "_make") else tuple(items)
    return value
