"""The cached front end: an Ascend C call that decodes to an instruction already decoded in this launch reuses it.

Kernels issue the same decoded instruction again and again: the same parameters on the same on-chip addresses
from the same kernel line, only the GM address moving from tile to tile. An isa entry point wrapped with `cached`
looks each call up by its key:

    (entry, the kernel line calling it (the id of its code and f_lasti; from inside ascend_sim, the id of
     core.kernel_source's tuple), the core type,
     the core's register values, and per argument: a LocalTensor by buffer name, address, dtype and size (of an
     entry wrapped with `cached(on_chip_alignment=...)`: by buffer name, address modulo the buffer's alignment,
     dtype and position); a GlobalTensor by its allocation and dtype, not its address; a parameter struct by its
     snapshot and field types; a scalar by type and value)

A miss runs the entry as it is, so every check stays written once, in isa/. When the call issued exactly one
COMPUTE or MOVE record, changed no register and returned nothing, its decoded parts become a `Descriptor`
(descriptor.py) with the GM addresses of its GlobalTensors (and a relative entry's LocalTensors' addresses). A
hit makes the record from the descriptor: the calling core's buffers, each GM operand's addresses shifted by its
GlobalTensor's move (and each on-chip one by its LocalTensor's), the API calls running.
`AICore.accept` bounds-checks the byte ranges of every hit whose addresses moved, so a shifted GM access past its
allocation faults as the decoded call would have; a hit at a view's own addresses, checked once on its core, is
accepted unchecked (a buffer's capacity never changes within a launch). No check in isa/ reads a GM address
otherwise (GM has no alignment rule, costs read sizes only), and the differential tests
(tests/ascend_sim/engine/test_front_end_cache.py) compare every record field, cycle, result byte and fault with
the cache on and off.

`Chip(front_end_cache=False)` turns it off.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import sys
from operator import attrgetter

import numpy as np

from ascend_sim.engine.chip import _running
from ascend_sim.engine.core import _INSIDE, _inside, kernel_source
from ascend_sim.engine.descriptor import UNCACHED, describe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, Record, snapshot

_CACHED_KINDS = frozenset((Kind.COMPUTE, Kind.MOVE))
_SCALARS = frozenset((int, float, bool, str, type(None), type))
_getframe = sys._getframe


class _Uncached(Exception):
    """An argument the key cannot name (a mutable object): the call runs the front end."""


def _arg_key(value, key: list, gm: list) -> None:
    """Append the key of one argument to `key`; a GlobalTensor goes to `gm` too (its address is the shift)."""
    cls = value.__class__
    if cls is LocalTensor:
        key += (cls, value.buffer.name, value.address, value.dtype, value.size, value.position_name)
    elif cls is GlobalTensor:
        gm.append(value)
        key += (cls, value.buffer, value.dtype)
    elif cls in _SCALARS or isinstance(value, (enum.Enum, np.generic, np.dtype)):
        key += (cls, value)
    elif cls is tuple or cls is list:
        key += (cls, len(value))
        for item in value:
            _arg_key(item, key, gm)
    else:
        got = (_VALUES.get(cls) or _values_getter(cls))(value)
        key.append(cls)
        key += got
        key += map(type, got)


# parameter struct class -> its values as a tuple. A struct's key is its class, its values, then their types (2
# and 2.0 are equal keys but not equal calls: a field check refuses the float).
_VALUES: dict = {}


def _values_getter(cls):
    """The values of a parameter struct (a dataclass) as a tuple: the plain fields as they are, then each sequence
    field (padList) as a tuple (a list cannot be hashed, and one the kernel changes later must key as it was)."""
    if not dataclasses.is_dataclass(cls):
        raise _Uncached
    fields = dataclasses.fields(cls)
    sequences = [f.name for f in fields if f.default_factory is not dataclasses.MISSING
                 or isinstance(f.default, (tuple, list))]
    plain = [f.name for f in fields if f.name not in sequences]
    if len(plain) < 2:
        get = snapshot  # attrgetter of one name gives the value, not a tuple
    elif not sequences:
        get = attrgetter(*plain)
    else:
        get = _with_sequences(attrgetter(*plain), sequences)
    _VALUES[cls] = get
    return get


def _with_sequences(plain, sequences: list):
    """The getter of a struct with sequence fields: its plain values, then each sequence as a tuple."""
    if len(sequences) == 1:  # padList: one sequence, without a loop
        sequence = attrgetter(sequences[0])
        return lambda struct: plain(struct) + (tuple(sequence(struct)),)
    each = attrgetter(*sequences)
    return lambda struct: plain(struct) + tuple(map(tuple, each(struct)))


def _relative_names(args: tuple, kwargs: dict, moduli: dict) -> tuple | None:
    """The buffer names of the positional LocalTensors a relative entry keyed by place (those of `local`); None
    when a LocalTensor is passed otherwise (by keyword, in a sequence): a record's range in its buffer could not
    be told from one of a moved tensor's."""
    if any(v.__class__ is LocalTensor for v in kwargs.values()):
        return None
    for value in (*args, *kwargs.values()):
        if value.__class__ in (tuple, list) and any(v.__class__ is LocalTensor for v in value):
            return None
    return tuple([a.buffer.name for a in args if a.__class__ is LocalTensor and a.buffer.name in moduli])


def _register_state(cache, registers) -> int:
    """A small int naming the registers' values (recomputed after a write only)."""
    values = tuple(sorted((name, repr(value)) for name, value in registers.items()))
    state = registers.state = cache.register_states.setdefault(values, len(cache.register_states))
    return state


def cached(entry=None, *, on_chip_alignment=None):
    """Wrap an isa entry point (a function issuing one instruction) with the launch's cache.

    `cached(on_chip_alignment=moduli)` (a function of the platform's `Alignments` giving {buffer name: A}, each A
    a multiple of every alignment the entry checks in that buffer) declares that the entry's checks read a
    positional LocalTensor's address only modulo its buffer's A and never its size, and that its record's on-chip
    addresses move with the tensor's: such a LocalTensor keys by its buffer, `address % A`, dtype and position, so
    calls at other on-chip addresses of the same buffer hit one relative descriptor (its on-chip ranges and
    operand addresses moved by the tensor's move, as GM's are). A misaligned address keys apart and runs the
    entry's check; `accept` bounds-checks the moved ranges. A LocalTensor in a buffer without an A keys by its
    address and size, as in the other entries."""
    if entry is None:
        return functools.partial(cached, on_chip_alignment=on_chip_alignment)

    @functools.wraps(entry)
    def call(*args, **kwargs):
        core = _running[0]
        cache = core.front_end_cache if core is not None else None
        if cache is None:
            return entry(*args, **kwargs)
        moduli = None
        if on_chip_alignment is not None:  # the platform's: once per launch
            moduli = cache.alignments.get(call)
            if moduli is None:
                moduli = cache.alignments[call] = on_chip_alignment(core.alignments)
        state = core.registers.state
        if state is None:
            state = _register_state(cache, core.registers)
        # the call site: the calling kernel line's code and instruction, or from inside ascend_sim (a TQue, an
        # API helper) the id of the site's kernel_source tuple
        frame = _getframe(1)
        code = frame.f_code
        inside = _INSIDE.get(id(code))
        if inside is None:
            inside = _inside(code)
        site, lasti = (id(kernel_source(frame)), None) if inside else (id(code), frame.f_lasti)
        key = [call, site, lasti, core.core_type.name, state]
        gm: list = []
        local: list = []  # the addresses of the positional LocalTensors keyed relative (on_chip_alignment)
        try:
            for value in args:  # the common classes inline, the rest in _arg_key
                cls = value.__class__
                if cls is LocalTensor:
                    name = value.buffer.name
                    modulus = None if moduli is None else moduli.get(name)
                    if modulus is None:
                        key += (cls, name, value.address, value.dtype, value.size, value.position_name)
                    else:
                        address = value.address
                        local.append(address)
                        key += (cls, name, address % modulus, value.dtype, value.position_name)
                elif cls is GlobalTensor:
                    gm.append(value)
                    key += (cls, value.buffer, value.dtype)
                else:
                    values = _VALUES.get(cls)
                    if values is not None:
                        got = values(value)
                        key.append(cls)
                        key += got
                        key += map(type, got)
                    else:
                        _arg_key(value, key, gm)
            if kwargs:
                for name in sorted(kwargs):
                    key.append(name)
                    _arg_key(kwargs[name], key, gm)
            key = tuple(key)
            found = cache.entries.get(key)
        except (_Uncached, TypeError):  # TypeError: a value that cannot be hashed
            return entry(*args, **kwargs)
        if found is not None and found is not UNCACHED:
            view = found.views.get(core.index) or found.view(core)
            if view is not None:
                if local:  # a relative descriptor: the view at the LocalTensors' place
                    local = tuple(local)
                    if local != view.local_bases:
                        view = view.moved.get(local) or found.moved_on_chip(view, local)
                cache.hits += 1
                operands, reads, writes, footprint = view.args, view.reads, view.writes, view.footprint
                bases = view.gm_bases
                moved = False
                if bases:
                    if len(bases) == 1:
                        shifts = (gm[0].address - bases[0],)
                        moved = shifts[0]
                    else:
                        shifts = [t.address - base for t, base in zip(gm, bases)]
                        moved = any(shifts)
                    if moved:
                        operands, reads, writes, footprint = found.shifted(view, shifts)
                rec = Record(core.index, core._seq, found.spec, found.pipe, found.params, operands, reads, writes,
                             found.src, found.path, found.nbytes, found.event, found.registers, footprint, core.api)
                # new GM ranges are checked on every call, the view's own once on this core
                core.accept(rec, view.checked and not moved)
                if not moved:
                    view.checked = True
                return None
        if found is UNCACHED:
            return entry(*args, **kwargs)
        cache.misses += 1
        seq = core._seq
        result = entry(*args, **kwargs)
        rec = core.last
        if (result is not None or core._seq != seq + 1 or rec.spec.kind not in _CACHED_KINDS
                or core.registers.state is None):
            cache.entries[key] = UNCACHED
            return result
        gm_buffers = tuple(t.buffer for t in gm)
        gm_bases = tuple(t.address for t in gm)
        local_bases = tuple(local)
        names = None if moduli is None else _relative_names(args, kwargs, moduli)
        described = None
        if len(set(map(id, gm_buffers))) == len(gm_buffers) and (moduli is None or names is not None):
            described = describe(rec, core.index, gm_buffers, gm_bases, names, local_bases)
        if described is None:
            cache.entries[key] = UNCACHED
        elif found is not None:  # decoded on another core, not portable: this core's own view
            found.add_view(core.index, rec, gm_bases, local_bases)
        else:
            cache.entries[key] = described
        return result
    return call
