"""The replay engine's back end: blocks (replayed API units, replay.py) in the cores' streams, scheduled from
arrays encoded once per template, and their records made only when asked for.

A run schedules the streams as they are: real records and blocks are encoded into the compiled scheduler's
arrays (`stream_arrays`, then fast_schedule.encode_arrays; a block, and the run of records its template was made
from, by the template's arrays, encoded once per launch, as costs depend only on the operands and the core
type's cost model); the race checks and the data work, when the chip asks for
them, run on the blocks too (replay_passes.py, passed in as `run_lazy`'s `passes`), and the logs become
`LazyLog`s that build the records, with their schedule and releases, when first read. A run that faults (in the
kernel's Python, a race, a stream that does not end cleanly) first materialises the blocks into records
(`materialise`) and continues as the fast engine does.
"""
from __future__ import annotations

import gc
import os
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from operator import attrgetter

import numpy as np

from ascend_sim.record import Record

_new = object.__new__
_seq = attrgetter("seq")


def replay_mode(value=None):
    """"on", "off", "verify" or a fraction of the hits to verify, from `Chip(replay=)` or env ASCEND_REPLAY."""
    value = os.environ.get("ASCEND_REPLAY", "on") if value is None else value
    if value in ("on", "off", "verify"):
        return value
    try:
        fraction = float(value)
    except (TypeError, ValueError):
        fraction = -1.0
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"replay={value!r} is not one of 'on', 'off', 'verify' or a fraction in (0, 1]")
    return fraction


class Block:
    """A replayed call in a core's stream: its template's records on core `core` from sequence number `seq`, GM
    addresses shifted by `shifts` ({GM buffer: bytes}), issued inside the API calls `api`. A template's records
    may hold the blocks of units nested in it (replayed while it ran for real)."""

    __slots__ = ("template", "core", "seq", "shifts", "api")

    def __init__(self, template, core, seq, shifts, api):
        self.template, self.core, self.seq, self.shifts, self.api = template, core, seq, shifts, api

    def __len__(self) -> int:
        return self.template.size

    def records(self, chip) -> list:
        """The records the call would have issued on its core: the template's (its nested blocks' made), on this
        core's buffers, with GM addresses shifted, numbered from `seq`."""
        core = chip.cores[self.core]
        same = self.core == self.template.core and not any(self.shifts.values())
        shifts = self.shifts
        out = []
        for i, r in enumerate(expand(self.template.records, chip, {})):
            rec = _new(Record)
            rec.core, rec.seq, rec.spec, rec.name, rec.pipe = self.core, self.seq + i, r.spec, r.name, r.pipe
            rec.params, rec.registers, rec.src, rec.path = r.params, r.registers, r.src, r.path
            rec.nbytes, rec.event, rec.api = r.nbytes, r.event, self.api
            if same:
                rec.args, rec.reads, rec.writes, rec.footprint = r.args, r.reads, r.writes, r.footprint
            else:
                rec.args = _remap_args(r.args, core, shifts)
                rec.reads = _remap_ranges(r.reads, core, shifts)
                rec.writes = _remap_ranges(r.writes, core, shifts)
                rec.footprint = None if r.footprint is None else tuple(
                    (_remap_buffer(b, core), off + shifts.get(b, 0), *rest) for b, off, *rest in r.footprint)
            rec.issue = rec.start = rec.end = rec.released_by = None
            out.append(rec)
        return out


def stream_arrays(chip, cores, kinds, models, every_template: bool = True) -> tuple:
    """(records per core, a pool of records' arrays (pipes, kind codes, costs, event ids: fast_schedule.record_arrays,
    joined), starts, sizes) of the cores' streams, the cores one after another: the streams are the pool's runs
    starts[p]:starts[p] + sizes[p] in order, what fast_schedule.encode_arrays takes. Every entry of the pool is a
    record of the streams (a template's records may be in it twice: as records, and in the template's arrays), so
    what is in the pool is what is in the streams. A block is its template's
    arrays, encoded once per launch (costs depend only on the operands and the core type's cost model), and so
    is the run of records a template was made from (its unit's first call, still in the stream, and in the
    records of the templates it is nested in). The other records, of every core of one type and of the templates
    not yet encoded, are encoded in one call per core type: a call costs a few dozen numpy steps besides its
    records, which, made per core and per template, were most of the encoding. every_template=False (a streamed
    launch, which keeps the arrays of the templates replayed only) takes a first call's run as its template only
    where the template is encoded already."""
    from ascend_sim.passes.fast_schedule import join, record_arrays

    replayer = chip.replayer
    templates = () if replayer is None else [t for t in replayer.templates.values()
                                             if t is not None and (every_template or t.encoded)]
    layout = _Layout(templates)
    parts = [layout.parts(core.stream, core.index, kind) for core, kind in zip(cores, kinds)]
    arrays = {kind: record_arrays(batch, models[kind]) for kind, batch in layout.batches.items()}
    for template, kind, template_parts in layout.queued:
        template.encoded[kind] = join([_part_arrays(p, arrays[kind], kind) for p in template_parts])
    # the streams as runs of one pool: the encoded records, then each template's arrays once
    pool, at, lengths, starts, sizes = [], 0, [], [], []
    where: dict = {}  # core type or (template id, core type) -> where its arrays are in the pool
    for kind, encoded in arrays.items():
        where[kind], at = at, at + len(encoded[0])
        pool.append(encoded)
    for core_parts, kind in zip(parts, kinds):
        n = 0
        for part in core_parts:
            if part.__class__ is tuple:
                starts.append(where[kind] + part[0])
                size = part[1] - part[0]
            else:
                size = part.size
                key = (id(part), kind)
                start = where.get(key)
                if start is None:
                    start = where[key] = at
                    at += size
                    pool.append(part.encoded[kind])
                starts.append(start)
            sizes.append(size)
            n += size
        lengths.append(n)
    return lengths, join(pool), np.array(starts, np.int64), np.array(sizes, np.int64)


class _Layout:
    """Streams (and templates' records) as parts: (start, stop) of records appended to `batches[kind]`, or a
    template, for a block or for the run of records the template was made from."""

    def __init__(self, templates):
        self.batches: dict = {}  # core type -> the records to encode
        self.queued: list = []  # (template, core type, its parts), nested templates first
        self.seen: set = set()  # (id(template), core type) queued
        # A template's records were the slice of its core's stream its call issued: items in sequence-number
        # order (a block holds its template's numbers), so its run is found by its first item's number, and
        # checked by its first and last items.
        self.by_core: dict = {}  # core index -> its templates by first number, longest first, and the numbers
        for template in templates:
            if template.records:
                self.by_core.setdefault(template.core, ([], []))[0].append(template)
        for found, numbers in self.by_core.values():
            found.sort(key=lambda t: (t.records[0].seq, -len(t.records)))
            numbers += [t.records[0].seq for t in found]

    def parts(self, items, core: int, kind, own=None) -> list:
        """The parts of `items` (core `core`'s stream, or the records of template `own`) on core type `kind`:
        the templates' runs, and between them records and blocks (each item looked at once, in its innermost
        template or in the stream)."""
        parts: list = []
        at = 0
        for i, template in sorted(self._runs(items, core, own).items()):
            if i >= at:  # not inside a longer run
                self._between(items[at:i], kind, parts)
                parts.append(self._template(template, kind))
                at = i + len(template.records)
        self._between(items[at:] if at else items, kind, parts)
        return parts

    def _between(self, items, kind, parts: list) -> None:
        """Records and blocks as parts: runs of records into the core type's batch, blocks by their templates."""
        if not items:
            return
        batch = self.batches.setdefault(kind, [])
        at = 0
        for i in [i for i, item in enumerate(items) if item.__class__ is Block]:
            if i > at:
                parts.append((len(batch), len(batch) + i - at))
                batch += items[at:i]
            parts.append(self._template(items[i].template, kind))
            at = i + 1
        if at < len(items):
            parts.append((len(batch), len(batch) + len(items) - at))
            batch += items[at:] if at else items

    def _template(self, template, kind):
        """The template, queued to be encoded (after those nested in it) unless it is or will be (its records
        are its own core's, wherever its block is)."""
        if kind not in template.encoded and (id(template), kind) not in self.seen:
            self.seen.add((id(template), kind))
            self.queued.append((template, kind, self.parts(template.records, template.core, kind, template)))
        return template

    def _runs(self, items, core, own) -> dict:
        """{position: template} of the templates' runs in `items`, the longest where several start at one item
        (shorter than `own`'s: a template is never encoded from itself or from one holding it)."""
        found, numbers = self.by_core.get(core, ((), ()))
        if not items or not found:
            return {}
        runs: dict = {}
        limit = len(items) if own is None else len(own.records) - 1
        for j in range(bisect_left(numbers, items[0].seq), bisect_right(numbers, items[-1].seq)):
            template = found[j]
            i = bisect_left(items, numbers[j], key=_seq)
            n = len(template.records)
            if (i not in runs and n <= min(limit, len(items) - i) and items[i] is template.records[0]
                    and items[i + n - 1] is template.records[-1]):
                runs[i] = template
        return runs


def _part_arrays(part, arrays, kind) -> tuple:
    if part.__class__ is tuple:
        start, stop = part
        return tuple(a[start:stop] for a in arrays)
    return part.encoded[kind]


def _remap_buffer(buf, core):
    return buf if buf.name.startswith("GM:") else core.buffers[buf.name]


def _remap_ranges(ranges, core, shifts):
    return tuple((_remap_buffer(b, core), lo + shifts.get(b, 0), hi + shifts.get(b, 0)) for b, lo, hi in ranges)


def _remap_args(args, core, shifts):
    """An operands tuple on another core / with shifted GM: local buffers by name; a GM buffer in a field `Xbuf`
    has its address in field `X0` (the convention of every operands type that takes GM: mte2, mte3, fixpipe,
    the vector DataCopyPad); anything else a shift would move is caught by verify mode."""
    if args is None:
        return None
    if not hasattr(args, "_fields"):
        return _remap_value(args, core)
    values = [_remap_value(v, core) for v in args]
    fields = args._fields
    for i, name in enumerate(fields):
        buf = args[i]
        if name.endswith("buf") and buf.__class__.__name__ == "Buffer":
            shift = shifts.get(buf, 0)
            if shift:
                j = fields.index(name[:-3] + "0")
                values[j] = args[j] + shift
    return type(args)(*values)


def _remap_value(value, core):
    if value.__class__.__name__ == "Buffer":
        return _remap_buffer(value, core)
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_remap_value(v, core) for v in value)
    if isinstance(value, list):
        return [_remap_value(v, core) for v in value]
    return value


def stream_records(cores) -> int:
    """The records in the cores' streams, a block's counted as its template's."""
    return sum(len(item) if item.__class__ is Block else 1 for core in cores for item in core.stream)


def has_blocks(cores) -> bool:
    return any(item.__class__ is Block for core in cores for item in core.stream)


def expand(items, chip, made: dict) -> list:
    """Records and blocks -> records (a block's made once per `made`)."""
    out = []
    for item in items:
        if item.__class__ is Block:
            records = made.get(id(item))
            if records is None:
                records = made[id(item)] = item.records(chip)
            out.extend(records)
        else:
            out.append(item)
    return out


class Stretch:
    """A stretch of a template's own records between the blocks nested in it, standing as a template (its
    records, its core, its size) in the blocks `flattened` makes."""

    __slots__ = ("records", "core", "size")

    def __init__(self, records, core):
        self.records, self.core, self.size = records, core, len(records)


def flattened(items, made: dict) -> list:
    """Records and blocks, a block whose template holds nested blocks replaced by blocks of templates that hold
    none: the stretches of its template's own records (Stretch) and its nested blocks' templates, each on the
    block's core with the block's GM shifts added to the nested block's. Their records are, one for one, those
    of `Block.records` (local buffers are taken by name on the block's core, and GM shifts add up), so the passes
    read operands and accesses from templates and shifts without making the records of nested blocks. `made`:
    the pieces per template (id), kept for one launch (the stretches' ids key the passes' caches)."""
    out = []
    for item in items:
        pieces = _pieces(item.template, made) if item.__class__ is Block else None
        if pieces is None:
            out.append(item)
            continue
        seq, core, shifts, api = item.seq, item.core, item.shifts, item.api
        out += [Block(template, core, seq + offset, _added(inner, shifts), api) for offset, template, inner in pieces]
    return out


def _pieces(template, made: dict):
    """(offset, template, GM shifts) of the template's records flattened (`flattened`), or None when it holds no
    block."""
    pieces = made.get(id(template), False)
    if pieces is not False:
        return pieces
    records = template.records
    if not any(item.__class__ is Block for item in records):
        made[id(template)] = None
        return None
    pieces, at, start = [], 0, 0  # start: where the current stretch of own records began in `records`
    for i, item in enumerate(records):
        if item.__class__ is not Block:
            continue
        if i > start:
            pieces.append((at, Stretch(records[start:i], template.core), {}))
            at += i - start
        inner = _pieces(item.template, made)
        if inner is None:
            pieces.append((at, item.template, item.shifts))
        else:
            pieces += [(at + offset, t, _added(shifts, item.shifts)) for offset, t, shifts in inner]
        at += item.template.size
        start = i + 1
    if start < len(records):
        pieces.append((at, Stretch(records[start:], template.core), {}))
    made[id(template)] = pieces
    return pieces


def _added(shifts: dict, outer: dict) -> dict:
    """GM shifts of a nested block's records moved again by its holder's block's shifts."""
    if not any(outer.values()):
        return shifts
    added = dict(shifts)
    for buf, shift in outer.items():
        added[buf] = added.get(buf, 0) + shift
    return added


def materialise(chip, cores) -> None:
    """Replace the blocks of the cores' streams and logs by their records (the same objects in both)."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for core in cores:
            made: dict = {}
            if any(item.__class__ is Block for item in core.stream):
                core.stream[:] = expand(core.stream, chip, made)
            if isinstance(core.log, list) and any(item.__class__ is Block for item in core.log):
                core.log[:] = expand(core.log, chip, made)
    finally:
        if gc_was_enabled:
            gc.enable()


def run_lazy(chip, cores, passes=None) -> bool:
    """Schedule streams holding blocks with the compiled pass, the records left unmade, then run `passes(chip,
    cores, schedule)` (replay_passes.run: race checks, data) if given. False (nothing changed) when the streams do
    not end cleanly or the passes decline."""
    from ascend_sim.passes.fast_schedule import encode_arrays, schedule
    from ascend_sim.passes.schedule import CostModel
    from ascend_sim.passes.small_pages import small_pages

    kinds = [core.core_type.name for core in cores]
    groups = [core.group for core in cores]
    models = {kind: CostModel(chip.platform, kinds.count(kind)) for kind in set(kinds)}
    with small_pages():  # arrays of one entry per record or access, for this launch only
        lengths, pool, starts, sizes = stream_arrays(chip, cores, kinds, models)
        s = schedule(None, kinds, groups, chip.platform,
                     encoded=encode_arrays(lengths, pool, kinds, groups, starts, sizes))
        if not s.clean or (passes is not None and not passes(chip, cores, s)):
            return False
    run_records = _RunRecords(_LaunchBuffers(chip.cores), [core.stream for core in cores], s)  # handed over
    for c, (core, free, busy, n) in enumerate(zip(cores, s.pipe_free(), s.busy(), lengths)):
        core.schedule.pipe_free = free
        core.schedule.busy = busy
        core.stream = []
        if chip.record:
            core.log = LazyLog(run_records, c, n)
    if chip.record:
        chip.executed = LazyLog(run_records, None, len(s.order))
    return True


class _LaunchBuffers:
    """What making a block's records reads of a launch (`Block.records`): each core's buffers, `cores[i].buffers`,
    held without the chip and its cores. The logs are the cores' (`core.log`), so a lazy log holding the chip was
    a reference cycle: a launch nobody held any more stayed until the cyclic collector ran, and the next launch's
    arrays were made on fresh pages."""

    __slots__ = ("cores",)

    def __init__(self, cores):
        self.cores = [_CoreBuffers(core.buffers) for core in cores]


class _CoreBuffers:
    __slots__ = ("buffers",)

    def __init__(self, buffers):
        self.buffers = buffers


class _RunRecords:
    """A lazily scheduled run: every record, made with its schedule and release the first time one is read."""

    def __init__(self, chip, streams, s):
        self.chip, self.streams, self.s = chip, streams, s  # chip: the launch's buffers (_LaunchBuffers)
        self.records = None

    def all(self) -> list:
        if self.records is None:
            gc_was_enabled = gc.isenabled()
            gc.disable()
            try:
                made: dict = {}
                records = [rec for items in self.streams for rec in expand(items, self.chip, made)]
                for rec, issue, start, end in zip(records, *self.s.times()):
                    rec.issue = issue
                    rec.start = start
                    rec.end = end
                for i, by in self.s.releases(records):
                    records[i].released_by = by
            finally:
                if gc_was_enabled:
                    gc.enable()
            self.records = records
            self.streams = None
        return self.records

    def core_log(self, c) -> list:
        off = self.s.core_off
        return self.all()[int(off[c]):int(off[c + 1])]

    def executed(self) -> list:
        return list(map(self.all().__getitem__, self.s.order.tolist()))

    def core_timing(self, c) -> tuple[list, list, list]:
        """Core c's records as their templates hold them, with each one's start and end (see `log_timing`)."""
        if self.records is not None:
            return _with_times(self.core_log(c))
        return template_records(self.streams[c]), *self.s.core_times(c)


def template_records(items) -> list:
    """Records and blocks -> records, a block's as its template holds them (nested blocks flattened): no record
    is made, so core, addresses and times are the template's."""
    out = []
    for item in items:
        if item.__class__ is Block:
            out += template_records(item.template.records)
        else:
            out.append(item)
    return out


def log_timing(log) -> tuple[list, list, list]:
    """(records, starts, ends) of a core's log: for what reads only each record's pipe, name, spec and event
    with its schedule (a pass over one core's timing). A lazily made log (`LazyLog`) is not made: its blocks'
    records are given as their templates hold them (the same pipe, name, spec and event; not the same core,
    addresses or times, which are the lists')."""
    if isinstance(log, LazyLog) and log._core is not None:
        return log._run.core_timing(log._core)
    return _with_times(log)


def _with_times(records) -> tuple[list, list, list]:
    return records, [r.start for r in records], [r.end for r in records]


class LazyLog(Sequence):
    """A core's log (core c) or the chip's executed order (core None) of a lazily scheduled run: a read-only
    list of records, made on first use; len() does not make them."""

    def __init__(self, run: _RunRecords, core, length: int):
        self._run, self._core, self._len, self._list = run, core, length, None

    def _records(self) -> list:
        if self._list is None:
            self._list = self._run.executed() if self._core is None else self._run.core_log(self._core)
        return self._list

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i):
        return self._records()[i]

    def __iter__(self):
        return iter(self._records())

    def __eq__(self, other):
        return list(self) == (list(other) if isinstance(other, Sequence) else other)

    def __reduce__(self):  # pickled (a sweep's worker) as the plain list
        return list, (self._records(),)

    def __repr__(self) -> str:
        return f"LazyLog({self._len} records)"
