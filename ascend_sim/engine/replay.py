"""Replay of repeated API units: a kernel API method declared a unit runs for real the first time it is called
with a given key and becomes a template; later calls with the same key append a `Block` to the core's stream
and apply the state change the template made, without running the kernel's Python or the instructions' front
end (issue 23, step 2; the design is in docs/performance.md).

A unit is declared next to an operator's API, outside the kernel's own lines (records carry their source line),
with `replay_unit(name, roots=, exclude=, fixed=, extra=, anchors=, key=, core_types=, verified=)`:
- the full key is the unit's name, the core type, the state of the objects reachable from `roots(*args)` (attribute
  by attribute, recursively: TQue / TPipe slots, event IDs and queued tensors included) without the root's
  `exclude`d attributes, `fixed` attributes taken by identity (the tiling), the core's flag balance and
  registers, and `extra(*args)` (what the excluded attributes and the call's arguments decide: the arguments
  are not in the key otherwise);
- `key(*args)`, when declared, is the short key: the few values that decide the unit's records and state change
  within a launch (with extra, the fixed objects, the flag balance and the registers). A call looks its short key
  up first; the walk of the whole state (the full key) runs only on a short-key miss, and in verify mode, where a
  short-key hit whose full key differs from its template's raises ReplayMismatch naming the attribute;
- `core_types`, when declared, names the core types the unit is replayed on; on the others it always runs for
  real, with no key (dx's tile on the AIV only walks indices: its first calls would each cost a walk to learn that);
- `verified`, the digest of the kernel folder's sources the declaration was checked against in verify mode: an
  edited kernel (another digest) is not replayed (its keys repeat some of its logic, which the edit may change);
- `anchors(*args)` gives, per GM buffer, the address the unit's GM accesses move with: a hit shifts every GM
  address of the template on that buffer by (anchor now - anchor then), and rechecks the shifted ranges against
  the buffer's bounds (GM has no alignment rule of its own: Buffer.alignment 1). Buffers without an anchor are
  not shifted.
A hit writes the template's state change (precompiled at the template's first hit, with its GM spans: plain values
set as they are, containers and tensors made new) into the objects it changed, reached from the roots along the
paths the walk found them by. A call that
faults never becomes a template (the fault propagates as on the exact engine). A template is refused (the unit
then always runs for real with that key) when the call changed an excluded attribute or a GlobalTensor, made a
new stateful object, or ran a nested API call (its records would carry their own call ids). Units nest: a unit
that runs for real calls the units inside it as usual (dx's tile and its kernel planes), and its template keeps
their blocks. A unit whose first FIRST_CALLS calls on a core type issue fewer than MIN_RECORDS records runs for
real there (a call that only walks indices): its key would cost more than the call.

Modes (`Chip(replay=...)`, else env ASCEND_REPLAY): "on" (default), "off", "verify" (every hit is replayed on a
snapshot, then undone and run for real; records, state and core counters are compared field by field and a
difference raises ReplayMismatch naming the unit, record and field), or a fraction such as 0.01 (every
round(1/fraction)-th hit is verified).

Blocks are scheduled by the compiled scheduler from arrays encoded once per template; their records are made
only when asked for (`report.logs`, `chip.executed`: `LazyLog`), with the exact engine's values. Race checks and
data work run on the blocks without their records (replay_passes.py); a race or an unclean end materialises them
for the fast engine's passes.
"""
from __future__ import annotations

import enum
import functools
import hashlib
import operator
import warnings
from collections import defaultdict, deque
from pathlib import Path

import numpy as np

from ascend_sim.engine.chip import current_core
from ascend_sim.engine.core import AICore, Registers
from ascend_sim.engine.replay_engine import Block, expand
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.machine.written import CHECKED_PIPE, WrittenRanges
from ascend_sim.record import Record

__all__ = ["replay_unit", "ReplayMismatch", "Replayer", "EditedKernelWarning", "kernel_sources_digest"]

MIN_RECORDS = 8  # a unit whose first calls on a core type issue fewer records is run for real there
FIRST_CALLS = 3  # ... judged on its first calls
_new = object.__new__


class ReplayMismatch(AssertionError):
    """Verify mode: a replayed unit differs from the same call run for real."""


# ------------------------------------------------------------------------------------------ state as values
class _Ref(tuple):
    """A reference to the i-th stateful object of a walk."""


_LEAVES = (int, float, bool, str, bytes, type(None), np.dtype, enum.Enum, np.generic, type)
# what _Walk.freeze does with a value, by its type (decided once per type: isinstance chains cost per value)
# the classes frozen as they are: the plain ones, then every LEAF class met (enums, dtypes, numpy scalars); the
# walk and the short keys test a value's class against it inline, without a call
_AS_IS = {int, bool, float, str, type(None)}
LEAF, BUFFER, CORE, LOCAL, GLOBAL, SEQUENCE, SET, DICT, ARRAY, CALLABLE, OBJECT = range(11)
_KINDS: dict = {}


def _kind_of(cls) -> int:
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _KINDS[cls] = (
            LEAF if issubclass(cls, _LEAVES) else BUFFER if issubclass(cls, Buffer)
            else CORE if issubclass(cls, AICore) else LOCAL if issubclass(cls, LocalTensor)
            else GLOBAL if issubclass(cls, GlobalTensor) else SEQUENCE if issubclass(cls, (tuple, list, deque))
            else SET if issubclass(cls, (set, frozenset)) else DICT if issubclass(cls, dict)
            else ARRAY if issubclass(cls, np.ndarray)
            else CALLABLE if any("__call__" in vars(base) for base in cls.__mro__)  # functions, methods
            else OBJECT)
        if kind == LEAF:
            _AS_IS.add(cls)
    return kind


def _attrs(obj) -> dict:
    d = getattr(obj, "__dict__", None)
    if d is not None:
        return d
    slots = getattr(type(obj), "__slots__", ())
    read = _SLOTS.get(type(obj))
    if read is None:
        read = _SLOTS[type(obj)] = operator.attrgetter(*slots) if len(slots) > 1 else False
    if read:
        try:  # every slot set (a struct): its values in one call
            return dict(zip(slots, read(obj)))
        except AttributeError:
            pass
    return {name: getattr(obj, name) for name in slots if hasattr(obj, name)}


_SLOTS: dict = {}  # slotted class -> an attrgetter of its slots (False: fewer than two)


class _Walk:
    """One pass over the objects reachable from the roots: each stateful object (not a tensor, buffer, container
    or the core) gets an index in the order it is first met (the roots first), and its attributes are frozen:
    buffers by name, tensors by (buffer, address, dtype, size), references to other stateful objects by index,
    fixed objects and functions by identity, containers element by element."""

    __slots__ = ("objects", "index", "values", "paths", "_at")

    def __init__(self, roots, fixed_ids):
        self.objects = list(roots)
        self.index = index = {id(obj): i for i, obj in enumerate(self.objects)}
        for fixed in fixed_ids:
            index.setdefault(fixed, -1)
        # how each object is reached: (None, root number) or (owner index, attribute, positions in containers...);
        # None inside a set (no position to find it by)
        self.paths = [(None, i) for i in range(len(self.objects))]
        values = []
        i = 0
        freeze, as_is, kinds = self.freeze, _AS_IS, _KINDS
        while i < len(self.objects):  # grows while freezing
            frozen = []
            for name, v in _attrs(self.objects[i]).items():
                cls = v.__class__
                if cls not in as_is:
                    # the two commonest kinds inline, as freeze makes them: a tensor, an object already indexed
                    kind = kinds.get(cls)
                    if kind == LOCAL:
                        v = ("LT", cls, v.buffer.name, v.address, v.dtype, v.size, v.position_name)
                    elif kind == OBJECT and id(v) in index:
                        j = index[id(v)]
                        v = _Ref((j,)) if j >= 0 else ("id", id(v))
                    else:
                        self._at = (i, name)
                        v = freeze(v)
                frozen.append((name, v))
            values.append(tuple(frozen))
            i += 1
        self.values = tuple(values)

    def freeze(self, value, inside=False):
        """A hashable value of `value`. inside: a value held by a frozen-by-value struct (no new objects)."""
        kind = _KINDS.get(value.__class__)
        if kind is None:
            kind = _kind_of(value.__class__)
        if kind == LEAF:
            return value
        if kind == SEQUENCE:
            if inside:
                return (value.__class__, tuple([self.freeze(v, True) for v in value]))
            at, out = self._at, []
            for j, v in enumerate(value):
                self._at = None if at is None else at + (j,)
                out.append(self.freeze(v))
            self._at = at
            return (value.__class__, tuple(out))
        if kind == LOCAL:
            return ("LT", value.__class__, value.buffer.name, value.address, value.dtype, value.size,
                    value.position_name)
        if kind == OBJECT:
            i = self.index.get(id(value))
            if i is None:
                if inside:
                    return ("obj", value.__class__, tuple([(k, self.freeze(v, True))
                                                          for k, v in _attrs(value).items()]))
                i = self.index[id(value)] = len(self.objects)
                self.objects.append(value)
                self.paths.append(self._at)
            return _Ref((i,)) if i >= 0 else ("id", id(value))  # i < 0: a fixed object (the tiling)
        if kind == BUFFER:
            return ("B", value.name)
        if kind == CORE:  # the core the state belongs to: TPipe.core
            return ("core",)
        if kind == GLOBAL:
            return ("GT", value.__class__, value.buffer.name if value.buffer is not None else None, value.address,
                    value.dtype, value.size)
        if kind == SET:
            at, self._at = getattr(self, "_at", None), None  # an object in a set has no path
            frozen = (value.__class__, frozenset([self.freeze(v, inside) for v in value]))
            self._at = at
            return frozen
        if kind == DICT:
            if inside:
                return (dict, tuple([(self.freeze(k, True), self.freeze(v, True)) for k, v in value.items()]))
            at, out = self._at, []
            for k, v in value.items():
                self._at = None
                fk = self.freeze(k)
                self._at = None if at is None else at + (k,)
                out.append((fk, self.freeze(v)))
            self._at = at
            return (dict, tuple(out))
        if kind == ARRAY:
            return ("A", value.dtype, value.shape, value.tobytes())
        return ("id", id(value))  # functions, methods: by identity


def _thaw(frozen, objects, core, by_id):
    if isinstance(frozen, _Ref):
        return objects[frozen[0]]
    if not isinstance(frozen, tuple):
        return frozen
    tag = frozen[0]
    if tag == "B":
        return _buffer(frozen[1], core)
    if tag == "core":
        return core
    if tag == "LT" or tag == "GT":
        cls, name, address, dtype, size = frozen[1:6]
        t = _new(cls)
        t.buffer = None if name is None else _buffer(name, core)
        t.address, t.dtype, t.size = address, dtype, size
        t.position_name = frozen[6] if tag == "LT" else "GM"
        return t
    if tag == "A":
        return np.frombuffer(frozen[3], frozen[1]).reshape(frozen[2]).copy()
    if tag == "id":
        return by_id[frozen[1]]
    if tag == "obj":
        obj = _new(frozen[1])
        _set_attrs(obj, {name: _thaw(v, objects, core, by_id) for name, v in frozen[2]})
        return obj
    if tag is dict:
        return {_thaw(k, objects, core, by_id): _thaw(v, objects, core, by_id) for k, v in frozen[1]}
    values = [_thaw(v, objects, core, by_id) for v in frozen[1]]
    return tag(*values) if hasattr(tag, "_fields") else tag(values)  # a named tuple takes its fields


def _maker(frozen):
    """_thaw compiled once: a function (objects, core, by_id) -> a new value of `frozen` (a template's state change
    is made on every hit: containers and tensors are new objects each time, as the real call makes them)."""
    if isinstance(frozen, _Ref):
        i = frozen[0]
        return lambda objects, core, by_id: objects[i]
    if not isinstance(frozen, tuple):
        return lambda objects, core, by_id: frozen
    tag = frozen[0]
    if tag == "LT" and not frozen[2].startswith("GM:"):
        cls, name, address, dtype, size, position = frozen[1:7]

        def tensor(objects, core, by_id):
            t = _new(cls)
            t.buffer, t.address, t.dtype, t.size, t.position_name = core.buffers[name], address, dtype, size, position
            return t
        return tensor
    if tag == "obj":  # a struct held by value (a register's parameters)
        cls, makers = frozen[1], tuple((name, _maker(v)) for name, v in frozen[2])

        def struct(objects, core, by_id):
            obj = _new(cls)
            for name, make in makers:
                setattr(obj, name, make(objects, core, by_id))
            return obj
        return struct
    if tag is dict:
        items = frozen[1]
        if not any(isinstance(k, tuple) or isinstance(v, tuple) for k, v in items):
            return lambda objects, core, by_id: dict(items)
        if all([_plain_set(v) and not isinstance(k, tuple) for k, v in items]):  # TPipe's event IDs: no maker each
            sets = tuple((k, v[0], v[1]) for k, v in items)
            return lambda objects, core, by_id: {k: cls(values) for k, cls, values in sets}
        pairs = tuple((_maker(k), _maker(v)) for k, v in items)
        return lambda objects, core, by_id: {k(objects, core, by_id): v(objects, core, by_id) for k, v in pairs}
    if isinstance(tag, type):  # a container
        values = frozen[1]
        if not any(isinstance(v, tuple) for v in values):  # of plain values
            if tag is tuple:
                return lambda objects, core, by_id: values
            if not hasattr(tag, "_fields"):
                return lambda objects, core, by_id: tag(values)
        makers = tuple(map(_maker, values))
        if hasattr(tag, "_fields"):  # a named tuple takes its fields
            return lambda objects, core, by_id: tag(*[make(objects, core, by_id) for make in makers])
        return lambda objects, core, by_id: tag([make(objects, core, by_id) for make in makers])
    return lambda objects, core, by_id: _thaw(frozen, objects, core, by_id)


def _plain_set(frozen) -> bool:
    """Whether `frozen` is a set of plain values (a set class and a frozenset of leaves)."""
    return (isinstance(frozen, tuple) and len(frozen) == 2 and isinstance(frozen[0], type)
            and issubclass(frozen[0], (set, frozenset)) and not any(isinstance(v, tuple) for v in frozen[1]))


def _buffer(name: str, core):
    if name.startswith("GM:"):
        return core.chip.gm.allocations[name[3:]]
    return core.buffers[name]


def _identities(value, out):
    """id -> object for what _Walk.freeze keeps by identity, so that _thaw can give the same objects back."""
    if isinstance(value, (tuple, list, set, frozenset, deque)):
        for v in value:
            _identities(v, out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _identities(k, out)
            _identities(v, out)
    elif not isinstance(value, (_LEAVES, Buffer, LocalTensor, GlobalTensor, np.ndarray, AICore)):
        out[id(value)] = value


class _State:
    """The frozen state of a unit's objects and of its core at one moment."""

    __slots__ = ("objects", "index", "values", "paths", "flag_balance", "registers", "_registers")

    def __init__(self, core, roots, fixed_ids):
        walk = _Walk(roots, fixed_ids)
        self.objects, self.index, self.values, self.paths = walk.objects, walk.index, walk.values, walk.paths
        # sorted: the balances' order is no state (a flag back at 0 leaves the dict, isa/sync.py, and comes back last)
        self.flag_balance = tuple(sorted(core.flag_balance.items()))
        self._registers = list(core.registers.values())
        # register values (parameter structs) outside the walk: by value
        self.registers = tuple([(k, walk.freeze(v, True)) for k, v in core.registers.items()])

    @property
    def by_id(self) -> dict:
        """id -> object of what the state holds by identity (made when needed: the hits do not need it)."""
        by_id: dict = {}
        for obj in self.objects:
            _identities(list(_attrs(obj).values()), by_id)
        _identities(self._registers, by_id)
        return by_id

    def key(self, exclude) -> tuple:
        root = tuple(item for item in self.values[0] if item[0] not in exclude)
        return (root, self.values[1:], self.flag_balance, self.registers)

    def restore(self, core, by_id) -> None:
        """Write this state back into the objects (the same objects, found by the same walk) and the core."""
        for obj, values in zip(self.objects, self.values):
            _set_attrs(obj, {name: _thaw(v, self.objects, core, by_id) for name, v in values})
        core.flag_balance = dict(self.flag_balance)
        core.registers = Registers({k: _thaw(v, self.objects, core, by_id) for k, v in self.registers})


def _set_attrs(obj, values: dict) -> None:
    d = getattr(obj, "__dict__", None)
    if d is not None:
        d.clear()
        d.update(values)
    else:
        for name, value in values.items():
            setattr(obj, name, value)


# ------------------------------------------------------------------------------------------ templates and blocks
class Template:
    """A unit's call run for real: its records, the state change it made, and its GM anchors.

    What only a hit uses (the state change compiled into makers, the GM spans, the paths to the objects) is made
    at the template's first hit (`ready`): a third of the templates of the dx layers are never hit."""

    __slots__ = ("unit", "records", "core", "anchors", "gm_spans", "bounds", "changes", "flag_balance",
                 "registers", "counts", "bytes_by_path", "result", "encoded", "size", "by_id", "key", "paths",
                 "pending", "written_ranges")

    def __init__(self, unit, records, core, anchors, changes, flag_balance, registers, counts, bytes_by_path,
                 result, by_id, key, paths, used, size):
        self.unit, self.records, self.core, self.anchors = unit, records, core, anchors
        self.flag_balance, self.counts, self.bytes_by_path = flag_balance, counts, bytes_by_path
        self.by_id = by_id
        self.key = key  # the full key of the call it was made from (verify mode checks a short key against it)
        self.encoded = {}  # core type name -> (pipes, kinds, costs, event ids) on this launch's cost model
        self.size = size  # records, those of nested blocks included
        # the frozen state change, the call's walk paths and the objects a hit writes or refers to, until `ready`
        self.pending = (changes, registers, result, paths, used)

    def ready(self) -> Template:
        """Make the hit side once: changes ((object index, ((attribute, value or maker, plain?) ...)) ...),
        registers (maker per register, None when the call wrote none), result (a maker), gm_spans, bounds, and
        paths (how to reach the objects a hit writes or refers to; None: a hit needs the walk)."""
        pending = self.pending
        if pending is not None:
            changes, registers, result, paths, used = pending
            # plain values are set as they are, the others made on each hit
            self.changes = tuple((i, tuple((name, v, True) if not isinstance(v, tuple) else (name, _maker(v), False)
                                           for name, v in diff)) for i, diff in changes)
            self.registers = None if registers is None else tuple((name, _maker(v)) for name, v in registers)
            self.result = _maker(result)
            self.gm_spans = spans = _gm_spans(self.records)
            # per anchored buffer: (buffer, anchor then, lowest and highest shift its span allows); a span on a
            # buffer without an anchor is not shifted (None when out of bounds already: no hit replays)
            self.bounds = tuple((buf, then, -spans[buf][0], buf.capacity - spans[buf][1]) if buf in spans
                                else (buf, then, -_INF, _INF) for buf, then in self.anchors.items())
            if any(lo < 0 or hi > buf.capacity for buf, (lo, hi) in spans.items() if buf not in self.anchors):
                self.bounds = None
            self.written_ranges = _written_ranges(self.records)
            self.paths = _paths_needed(paths, used)
            self.pending = None
        return self


def _gm_spans(records) -> dict:
    """{GM buffer: (lowest, highest) byte} over the records' ranges and footprints (a nested block's: its
    template's, shifted)."""
    lows: dict = {}
    highs: dict = {}
    ranges = []
    for r in records:
        if r.__class__ is Block:
            for buf, (lo, hi) in r.template.ready().gm_spans.items():
                shift = r.shifts.get(buf, 0)
                _widen(lows, highs, buf, lo + shift, hi + shift)
        else:
            ranges += r.reads
            ranges += r.writes
    gm: dict = {}  # buffer -> whether it is in GM (its name read once per buffer, not per range)
    for buf, lo, hi in ranges:
        in_gm = gm.get(buf)
        if in_gm is None:
            in_gm = gm[buf] = buf.name.startswith("GM:")
        if in_gm:
            _widen(lows, highs, buf, lo, hi)
    return {buf: (lo, highs[buf]) for buf, lo in lows.items()}


_INF = float("inf")


def _written_ranges(records) -> tuple:
    """((watched buffer name, the byte ranges the records' Mmads read that the records did not write before, the
    byte ranges they write) ...) for the buffers an Mmad starts from (machine/written.py): what a hit needs written
    on its core, and what it writes there."""
    seen = defaultdict(lambda: ([], WrittenRanges()))  # name -> (needed ranges, WrittenRanges)

    def read(name, lo, hi):
        needed, written = seen[name]
        gap = written.first_gap(lo, hi)
        while gap is not None:
            needed.append(gap)
            gap = written.first_gap(gap[1], hi)

    for item in records:
        if item.__class__ is Block:
            for name, needed, gives in item.template.ready().written_ranges:
                for lo, hi in needed:
                    read(name, lo, hi)
                for lo, hi in gives:
                    seen[name][1].add(lo, hi)
            continue
        for buf, lo, hi in item.reads:
            if buf.written is not None and item.pipe is CHECKED_PIPE:  # as AICore.accept checks them
                read(buf.name, lo, hi)
        for buf, lo, hi in item.writes:
            if buf.written is not None:
                seen[buf.name][1].add(lo, hi)
    return tuple((name, tuple(needed), tuple(zip(written.starts, written.ends)))
                 for name, (needed, written) in seen.items())


def _reads_written(core, template) -> bool:
    """Whether the bytes a hit reads of the watched buffers were written on `core` (else the call runs for real
    and faults as the exact engine does)."""
    for name, needed, _ in template.written_ranges:
        written = core.buffers[name].written
        for lo, hi in needed:
            if written.first_gap(lo, hi) is not None:
                return False
    return True


def _widen(lows, highs, buf, lo, hi) -> None:
    if lo < lows.get(buf, lo + 1):
        lows[buf] = lo
    if hi > highs.get(buf, hi - 1):
        highs[buf] = hi


def _size(records) -> int:
    """The records of a call's stream items, those of nested blocks (their templates') included."""
    return len(records) + sum([item.template.size - 1 for item in records if item.__class__ is Block])


# ------------------------------------------------------------------------------------------ units
class _Unit:
    __slots__ = ("name", "method", "roots", "exclude", "fixed", "extra", "anchors", "key", "core_types")

    def __init__(self, name, method, roots, exclude, fixed, extra, anchors, key, core_types):
        self.name, self.method, self.roots, self.exclude = name, method, roots, frozenset(exclude)
        self.fixed, self.extra, self.anchors, self.key = tuple(fixed), extra, anchors, key
        self.core_types = None if core_types is None else frozenset(core_types)


class EditedKernelWarning(UserWarning):
    """A kernel's sources differ from those its replay units were verified against: they run for real."""


def kernel_sources_digest(folder) -> str:
    """SHA-1 of a kernel folder's Python sources (every .py file but replay_keys.py, by name, line ends as \\n):
    what a unit's declaration is verified against."""
    digest = hashlib.sha1()
    for path in sorted(Path(folder).glob("*.py")):
        if path.name != "replay_keys.py":
            digest.update(path.name.encode() + b"\0" + path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


_DIGESTS: dict = {}  # kernel folder -> its sources' digest, computed once per process


def _sources_verified(method, verified: str) -> bool:
    """Whether the folder of `method`'s file holds the sources `verified` names; warns once per folder if not."""
    folder = str(Path(method.__code__.co_filename).parent)
    digest = _DIGESTS.get(folder)
    if digest is None:
        digest = _DIGESTS[folder] = kernel_sources_digest(folder)
        if digest != verified:
            warnings.warn(EditedKernelWarning(
                f"{folder}: the kernel's sources differ from those its replay units were verified against, so its "
                "units run for real on every engine (the results stay exact, runs are slower). Once its tests pass "
                f"with ASCEND_REPLAY=verify, set VERIFIED_SOURCES in its replay_keys.py to {digest!r}"), stacklevel=4)
    return digest == verified


def replay_unit(name: str, *, roots=None, exclude=(), fixed=(), extra=None, anchors=None, key=None,
                core_types=None, verified=None):
    """Declare a kernel API method (or function) a replayable unit. roots(*args) -> the objects whose state the
    key holds and the call changes (default: the first argument, the API object); exclude: attributes of the
    first root left out of the key (they must not change in the call); fixed: attributes of the first root taken
    by identity (never changed: the tiling); extra(*args) -> the key parts the excluded attributes decide;
    anchors(*args) -> {GM Buffer: byte address} the unit's GM accesses move with; key(*args) -> the short key:
    the few values that decide the unit's stream and its state change within a launch (with extra, the fixed
    objects, the core's flag balance and registers), so that a hit needs no walk of the state; core_types: the
    names of the core types the unit is replayed on (default: all), on the others it runs for real; verified: the
    kernel_sources_digest of the method's folder when the declaration was last checked in verify mode. The keys
    repeat some of the kernel's logic, so an edited kernel (another digest) is not replayed: the method is
    returned as it is, with an EditedKernelWarning."""
    def wrap(method):
        if verified is not None and not _sources_verified(method, verified):
            return method
        declared = _Unit(name, method, roots or (lambda *args: (args[0],)), exclude, fixed,
                         extra or (lambda *args: ()), anchors or (lambda *args: {}), key, core_types)
        replayed_on = declared.core_types

        @functools.wraps(method)
        def call(*args):
            core = current_core()
            chip = core.chip
            if not chip.replaying or (replayed_on is not None and core.core_type.name not in replayed_on):
                return method(*args)
            replayer = chip.replayer
            if replayer is None:  # the launch's first unit call: templates live for one launch
                replayer = chip.replayer = Replayer(chip.replay_mode)
            return replayer.call(declared, core, args)
        call.unit = declared
        return call
    return wrap


class Replayer:
    """One launch's templates and counters (`chip.replayer`, made at the launch's first unit call)."""

    def __init__(self, mode):
        self.mode = mode
        self.templates: dict = {}  # full key -> Template (None: refused)
        self.short: dict = {}  # short key -> Template (None: refused), for units that declare one
        self.small: dict = {}  # (unit, core type) -> calls so far that issued fewer than MIN_RECORDS
        self.hits = self.verified = 0

    def _verify_this_hit(self) -> bool:
        if self.mode == "verify":
            return True
        if isinstance(self.mode, float):
            return self.hits % max(1, round(1 / self.mode)) == 0
        return False

    def call(self, u: _Unit, core, args):
        kind = core.core_type.name
        small = self.small.get((u.name, kind), 0)
        if small >= FIRST_CALLS:  # not worth a key on this core type
            return self._run(u, core, args)
        roots = u.roots(*args)
        short = None
        if u.key is not None:
            short = _short_key(u, kind, core, roots, args)
            template = self.short.get(short, _MISSING)
            if template is None:  # refused: always run for real
                return self._run(u, core, args)
            if template is not _MISSING and template.ready().paths is not None:
                shifts = self._shifts(u, args, template)
                if shifts is None or not _reads_written(core, template):
                    return self._run(u, core, args)  # the real call faults with the exact message
                self.hits += 1
                objects = _reach(template.paths, roots)
                if self._verify_this_hit():
                    return self._verify(u, core, args, template, shifts, roots, objects)
                return self._replay(core, objects, template, shifts)
        fixed_ids = {id(getattr(roots[0], name)) for name in u.fixed}
        before = _State(core, roots, fixed_ids)
        key = _full_key(u, kind, before, roots, args)
        template = self.templates.get(key)
        if template is not None:
            if short is not None:
                self.short[short] = template
            shifts = self._shifts(u, args, template.ready())
            if shifts is not None and _reads_written(core, template):
                self.hits += 1
                if self._verify_this_hit():
                    return self._verify(u, core, args, template, shifts, roots, before.objects, before)
                return self._replay(core, before.objects, template, shifts)
            return self._run(u, core, args)  # the real call faults with the exact message
        if key in self.templates:  # refused: always run for real
            if short is not None:
                self.short[short] = None
            return self._run(u, core, args)
        anchors = u.anchors(*args)
        start = len(core.stream)
        counts, nbytes = dict(core.counts), dict(core.bytes_by_path)
        result = self._run(u, core, args)  # a fault propagates: no template
        records = core.stream[start:]  # with the blocks of units nested in it that replayed
        size = _size(records)
        if size < MIN_RECORDS:
            self.small[(u.name, kind)] = small + 1
        else:
            self.small[(u.name, kind)] = -1_000_000  # the unit is worth replaying on this core type
        template = self.templates[key] = _template(u, core, roots, before, records, anchors, counts, nbytes, result,
                                                   fixed_ids, key, size)
        if short is not None:
            self.short[short] = template
        return result

    @staticmethod
    def _shifts(u, args, template):
        """{GM buffer: shift} of a hit, or None when a shifted range would leave its buffer."""
        if template.bounds is None:
            return None
        anchors = u.anchors(*args)
        shifts = {}
        for buf, then, lowest, highest in template.bounds:
            shift = shifts[buf] = anchors[buf] - then
            if shift < lowest or shift > highest:
                return None
        return shifts

    def _run(self, u, core, args):
        return u.method(*args)

    def _replay(self, core, objects, template, shifts):
        """Append the template's block and apply its state change to `objects` (index -> object)."""
        block = Block(template, core.index, core._seq, shifts, core.api)
        core._seq += template.size
        core.stream.append(block)
        if core.record:
            core.log.append(block)
        counts, by_path = core.counts, core.bytes_by_path
        for name, n in template.counts.items():
            counts[name] = counts.get(name, 0) + n
        for path, n in template.bytes_by_path.items():
            by_path[path] = by_path.get(path, 0) + n
        for name, _, gives in template.written_ranges:
            add = core.buffers[name].written.add
            for lo, hi in gives:
                add(lo, hi)
        by_id = template.by_id
        for i, changes in template.changes:
            obj = objects[i]
            for name, value, plain in changes:
                setattr(obj, name, value if plain else value(objects, core, by_id))
        core.flag_balance = dict(template.flag_balance)
        if template.registers is not None:  # None: the call wrote no register (they are in the key)
            core.registers = Registers({k: make(objects, core, by_id) for k, make in template.registers})
        return template.result(objects, core, by_id)

    def _verify(self, u, core, args, template, shifts, roots, objects, before=None):
        """Replay on the current state, keep what it gave, undo it, run the call for real, compare. A short-key
        hit (before None) is first checked against the full key its template was made with."""
        self.verified += 1
        where = f"unit {u.name} on {core.name} (call at record #{core._seq})"
        fixed_ids = {id(getattr(roots[0], name)) for name in u.fixed}
        if before is None:
            before = _State(core, roots, fixed_ids)
            key = _full_key(u, core.core_type.name, before, roots, args)
            if key != template.key:
                raise ReplayMismatch(f"{where}: the short key matched a template whose full key differs (the short "
                                     f"key misses it): {_key_difference(key, template.key)}")
            for i, obj in objects.items():
                if obj is not before.objects[i]:
                    raise ReplayMismatch(f"{where}: object {i} reached by path {template.paths[i]} is not the one "
                                         f"the walk finds")
        start, seq = len(core.stream), core._seq
        log_len = len(core.log)
        counts, nbytes = dict(core.counts), dict(core.bytes_by_path)
        by_id = before.by_id  # before the replay changes the objects
        result = self._replay(core, objects, template, shifts)
        replayed = _State(core, u.roots(*args), fixed_ids)
        replayed_records = core.stream[start].records(core.chip)
        replayed_counts, replayed_bytes = dict(core.counts), dict(core.bytes_by_path)
        # undo: the snapshot back into the objects and the core
        del core.stream[start:]
        del core.log[log_len:]
        core._seq = seq
        core.counts, core.bytes_by_path = counts, nbytes
        before.restore(core, by_id)
        real_result = self._run(u, core, args)
        real = _State(core, u.roots(*args), fixed_ids)
        real_records = expand(core.stream[start:], core.chip, {})
        if len(replayed_records) != len(real_records):
            raise ReplayMismatch(f"{where}: the template has {len(replayed_records)} records, the real call issued "
                                 f"{len(real_records)}")
        for i, (a, b) in enumerate(zip(replayed_records, real_records)):
            for field in Record.__slots__:
                if not _equal(getattr(a, field), getattr(b, field)):
                    raise ReplayMismatch(f"{where}: record {i} (#{b.seq} {b.name}) field {field}: replayed "
                                         f"{getattr(a, field)!r}, real {getattr(b, field)!r}")
        for what, x, y in (("state", replayed.values, real.values), ("flag balance", replayed.flag_balance,
                                                                      real.flag_balance),
                           ("registers", replayed.registers, real.registers),
                           ("counts", replayed_counts, core.counts), ("bytes_by_path", replayed_bytes,
                                                                       core.bytes_by_path),
                           ("result", _NO_WALK.freeze(result, True), _NO_WALK.freeze(real_result, True))):
            if x != y:
                raise ReplayMismatch(f"{where}: {what} after the call differs: {_first_difference(x, y)}")
        return real_result


def _short_key(u, kind, core, roots, args) -> tuple:
    """The declared key with what every unit's key holds: the core type, extra, the fixed objects, the core's flag
    balances (sorted, as in _State) and registers."""
    registers = core.registers
    return (u.name, kind, _key_values(u.key(*args)), u.extra(*args),
            tuple([id(getattr(roots[0], name)) for name in u.fixed]), tuple(sorted(core.flag_balance.items())),
            tuple(registers.items()) if _AS_IS.issuperset(map(type, registers.values()))  # plain: as they are
            else tuple([(name, _key_value(value)) for name, value in registers.items()]))


def _key_values(values) -> tuple:
    """_key_value of each of `values` (a key's parts, a struct's fields), only those not plain converted: which
    they are is looked up by the values' classes, in C (a key of 50 attributes holds a few tensors and structs)."""
    classes = tuple(map(type, values))
    convert = _CONVERT.get(classes)
    if convert is None:
        convert = _CONVERT[classes] = tuple([i for i, cls in enumerate(classes) if cls not in _AS_IS])
    if not convert:
        return values if values.__class__ is tuple else tuple(values)
    values = list(values)
    for i in convert:
        values[i] = _key_value(values[i])
    return tuple(values)


_CONVERT: dict = {}  # the classes of a key's values -> the positions of those _key_value converts


def _key_value(value):
    """A hashable value of a short key's part: what decides it, without the walk's bookkeeping. Tuples are taken
    as they are (protocol_state's)."""
    cls = value.__class__
    if cls in _AS_IS or cls is tuple:
        return value
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _kind_of(cls)
    if kind == LEAF:
        return value
    if kind == LOCAL:
        return (value.buffer.name, value.address, value.dtype, value.size, value.position_name)
    if kind == OBJECT:  # a parameter struct
        names = _FIELDS.get(cls)
        if names is None or names.__class__ is not operator.attrgetter:
            names = tuple(_attrs(value))
            if "__dataclass_fields__" in cls.__dict__ and "__slots__" in cls.__dict__ and len(names) > 1:
                names = _FIELDS[cls] = operator.attrgetter(*names)  # a slotted dataclass: every field always set
            else:
                return (cls, names, tuple([_key_value(getattr(value, name)) for name in names]))
        return (cls, _key_values(names(value)))
    if kind == SEQUENCE:
        return tuple(value) if _AS_IS.issuperset(map(type, value)) else tuple(map(_key_value, value))
    return _NO_WALK.freeze(value, True)


_FIELDS: dict = {}  # slotted struct class -> attrgetter of its attributes


def _full_key(u, kind, state, roots, args) -> tuple:
    return (u.name, kind, state.key(u.exclude), u.extra(*args), tuple([id(getattr(roots[0], name))
                                                                        for name in u.fixed]))


def _key_difference(key, template_key) -> str:
    """Where a call's full key differs from its template's: an attribute of the unit's objects by name."""
    def first(x, y, what):
        x, y = dict(x), dict(y)
        for name in sorted(x.keys() | y.keys(), key=str):
            if x.get(name, _MISSING) != y.get(name, _MISSING):
                return (f"{what} {name}: this call {x.get(name, 'unset')!r}, the template's "
                        f"{y.get(name, 'unset')!r}")
        return what
    state, old = key[2], template_key[2]
    if state[0] != old[0]:
        return first(state[0], old[0], "attribute")
    if len(state[1]) != len(old[1]):
        return f"the objects reached: this call {len(state[1]) + 1}, the template's {len(old[1]) + 1}"
    for i, (a, b) in enumerate(zip(state[1], old[1]), start=1):
        if a != b:
            return first(a, b, f"object {i}'s attribute")
    for what, a, b in (("flag balance", state[2], old[2]), ("registers", state[3], old[3])):
        if a != b:
            return first(a, b, what)
    return f"extra or fixed: this call {key[3:]!r}, the template's {template_key[3:]!r}"


def _reach(paths, roots) -> dict:
    """index -> object, found along `paths` ((index, path) with owners first) from the unit's roots."""
    objects = {}
    for i, path in paths:
        owner = path[0]
        if owner is None:
            objects[i] = roots[path[1]]
            continue
        value = getattr(objects[owner], path[1])
        for position in path[2:]:
            value = value[position]
        objects[i] = value
    return objects


def _refs(frozen, out, identities) -> None:
    """The object indices a frozen value refers to (into out) and the ids it holds objects by (into identities)."""
    todo = [frozen]
    while todo:
        v = todo.pop()
        cls = v.__class__
        if cls in _AS_IS:
            continue
        if cls is _Ref:
            out.add(v[0])
        elif cls is tuple:
            if len(v) == 2 and v[0] == "id":
                identities.add(v[1])
            todo += v
        elif isinstance(v, _Ref):
            out.add(v[0])
        elif isinstance(v, (tuple, frozenset)):
            todo += v


def _paths_needed(paths, indices):
    """((index, path) ...) for `indices` and their owners, owners first, from a walk's paths; None when one has no
    path (in a set)."""
    needed = set()
    todo = list(indices)
    while todo:
        i = todo.pop()
        if i in needed:
            continue
        needed.add(i)
        path = paths[i]
        if path is None:
            return None
        if path[0] is not None:
            todo.append(path[0])
    return tuple((i, paths[i]) for i in sorted(needed))


def _first_difference(x, y) -> str:
    """The first item of two equally long tuples that differs (an attribute by its name), else both whole."""
    if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
        for i, (a, b) in enumerate(zip(x, y)):
            if a != b:
                name = a[0] if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) else f"[{i}]"
                return f"{name}: replayed {a!r}, real {b!r}"
    return f"replayed {x!r}, real {y!r}"


def _equal(a, b) -> bool:
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and bool(np.array_equal(a, b)))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except (ValueError, TypeError):
        return False


def _template(u, core, roots, before, records, anchors, counts, nbytes, result, fixed_ids, key, size):
    """The template of a call just run for real, or None when it cannot be replayed (see the module doc)."""
    after = _State(core, roots, fixed_ids)
    if list(map(id, after.objects)) != list(map(id, before.objects)):
        return None  # the call made (or dropped) a stateful object
    apis = list(map(_api_of, records))
    if apis.count(core.api) != len(apis):  # (count: by identity first, then ==)
        return None  # a nested API call (its records carry call ids)
    changes = []
    for i, (old, new) in enumerate(zip(before.values, after.values)):
        if old == new:
            continue
        diff = _changed(old, new)
        if diff is None:
            return None
        if i == 0 and any(name in u.exclude or name in u.fixed for name, _ in diff):
            return None
        if any(isinstance(v, tuple) and v and v[0] == "GT" for _, v in diff):
            return None
        if diff:
            changes.append((i, diff))
    delta_counts = {k: v - counts.get(k, 0) for k, v in core.counts.items() if v != counts.get(k, 0)}
    delta_bytes = {k: v - nbytes.get(k, 0) for k, v in core.bytes_by_path.items() if v != nbytes.get(k, 0)}
    frozen_result = _NO_WALK.freeze(result, True)
    registers = None if after.registers == before.registers else after.registers
    used, identities = {i for i, _ in changes}, set()
    _refs((tuple(v for _, diff in changes for _, v in diff), registers, frozen_result), used, identities)
    by_id: dict = {}
    if identities:  # objects the change holds by identity (functions, the tiling): found once
        by_id.update(before.by_id)
        by_id.update(after.by_id)
        _identities(result, by_id)
    return Template(u.name, records, core.index, dict(anchors), changes, after.flag_balance, registers,
                    delta_counts, delta_bytes, frozen_result, by_id, key, before.paths, used, size)


def _changed(old: tuple, new: tuple) -> tuple | None:
    """The (attribute, value) pairs of `new` whose value is not the one in `old` (frozen attributes of one
    object before and after a call), or None when the call removed an attribute. Usually the call changed
    values only: the attributes then line up, and only the pairs that differ are looked at."""
    if len(old) == len(new):
        pairs = [(a, b) for a, b in zip(old, new) if a != b]
        if all([a[0] == b[0] for a, b in pairs]):  # lined up (an equal pair has the same name)
            return tuple([b for _, b in pairs])
    old_d = dict(old)
    if old_d.keys() - dict(new).keys():
        return None
    return tuple((name, v) for name, v in new if old_d.get(name, _MISSING) != v)


_MISSING = object()
_api_of = operator.attrgetter("api")
_NO_WALK = _Walk((), ())  # freezes values by value (inside=True), which needs no walk
