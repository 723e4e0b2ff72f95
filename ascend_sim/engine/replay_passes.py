"""The passes of a replay run (race checks, then the instructions' data work) on streams holding blocks, without
making the blocks' records (issue 23, step 3).

Once the compiled scheduler has timed the streams (replay_engine.run_lazy), a run with race checks or data
reads them flattened (replay_engine.flattened: a block whose template holds nested blocks becomes blocks of
templates that hold none, so no nested block's records are made), then:
- checks races with the compiled checker (passes/fast_races.py) on arrays encoded once per template
  (`fast_races.accesses`), moved to each block's core's buffers and shifted by its GM shifts. On a race (or a case the compiled checker leaves
  to the Python one) nothing has run yet: the caller materialises the blocks and runs the fast engine's passes,
  whose Python checker raises the fault with its own message, as on the exact engine;
- runs each record's semantics in the schedule's order, as the fast engine does, a block's records taking their
  operands from the template's, moved to the block's core (local buffers by name) and GM shifts (the `Xbuf` /
  `X0` fields, the rule of replay_engine._remap_args). The semantics read only a record's operands and
  registers (ascend_sim/isa), so they run on a small stand-in object, not on a record. With
  ASCEND_DATA_PROCESSES > 1 and AI cores that cannot depend on each other (`independent_groups`), the AI cores'
  records shared out among forked processes writing into the chip's shared memories (forked_data.py).
The results are the exact engine's byte for byte (tests/ascend_sim/engine/test_replay_passes.py, the engine
corpus and the fault tests on engine="replay").
"""
from __future__ import annotations

from bisect import bisect_right
from functools import partial

import numpy as np

from ascend_sim.engine import forked_data, replay_data, short_runs
from ascend_sim.engine.replay_engine import Block, _remap_args, flattened
from ascend_sim.machine.memory import Buffer


class _Operands:
    """What an instruction's semantics read of its record: its operands and the registers it was issued with."""

    __slots__ = ("args", "registers")

    def __init__(self, args, registers):
        self.args, self.registers = args, registers


def run(chip, cores, s) -> bool:
    """The race checks and data work of the scheduled streams (`s`: their fast_schedule.Schedule) as the chip
    asks for them; False (nothing run) when the race checks need the Python checkers."""
    made: dict = {}  # replay_engine.flattened's pieces, made once for both passes
    if chip.check_races and not race_free(chip, cores, s, made):
        return False
    if chip.execute:
        run_semantics(chip, cores, s, made)
    return True


def race_free(chip, cores, s, made=None) -> bool:
    """The compiled race checker finds no race in the scheduled streams (`made`: replay_engine.flattened's
    cache)."""
    from ascend_sim.passes.fast_races import CLEAN, accesses, first_race_of

    by_template: dict = {}  # id(template) -> its Accesses (None: the Python checkers must run)
    keys_on_core: dict = {}  # block_accesses' race keys lists
    real: list = []  # the real records of every core, encoded at once
    parts = []  # per part in the cores' order: (first, end) of its real records, or a block's Accesses
    made = {} if made is None else made
    for core in cores:
        start = len(real)
        for item in flattened(core.stream, made):
            if item.__class__ is not Block:
                real.append(item)
                continue
            if len(real) > start:
                parts.append((start, len(real)))
                start = len(real)
            encoded = by_template.get(id(item.template), False)
            if encoded is False:
                encoded = by_template[id(item.template)] = accesses(item.template.records)
            if encoded is None:
                return False
            parts.append(block_accesses(chip, item, encoded, keys_on_core))
        if len(real) > start:
            parts.append((start, len(real)))
    encoded = accesses(real)
    if encoded is None:
        return False
    parts = [encoded.part(*part) if part.__class__ is tuple else part for part in parts]
    return first_race_of(s, parts, chip.gm_races.granule, chip.gm_races.shared) == CLEAN


def block_accesses(chip, block, encoded, keys_on_core: dict):
    """The block's Accesses from its template's (`encoded`): on its core's buffers (each core's own buffers
    have race keys of their own: engine/core.py), GM ranges shifted. `keys_on_core`: the race keys lists made
    for one launch, by (template's Accesses, core): the blocks of a template on one core share one list, which
    fast_races.encode then numbers once (R3D's stem: 1,150 blocks, a few dozen lists)."""
    keys = keys_on_core.get((id(encoded), block.core))
    if keys is None:
        buffers = chip.cores[block.core].buffers
        keys = keys_on_core[id(encoded), block.core] = [key if name.startswith("GM:") else buffers[name].key
                                                         for key, name in zip(encoded.keys, encoded.names)]
    return encoded.moved(keys, {buf.name: shift for buf, shift in block.shifts.items() if shift})


def run_semantics(chip, cores, s, made=None) -> None:
    """Every record's data work, in the schedule's order (`s`), blocks' records included, their runs of LoadData
    and Mmad batched (replay_data.py); on forked processes (forked_data.py) when asked for, independent_groups
    allows it and the run is long enough. `made`: replay_engine.flattened's cache."""
    runs: list = []  # per record of the streams (cores one after another): its semantics, or None
    operands = _StreamOperands()  # ... and what they read
    kinds: list = []  # ... replay_data's NONE / RUN / OTHER, an array per block and per stretch of real records
    origins: list = []  # ... replay_data.origins, -1 for real records
    names_l0c: list = []  # ... whether its reads or writes name an L0C (replay_data.L0CChains)
    joins: list = []  # ... short_runs.copy_joins' (row copies run as one), on a core of its own, races checked
    real = _RealRecords(kinds, origins, names_l0c, joins)  # the stretch of real records since the last block
    plans: dict = {}  # id(template) -> _Plan
    atomic = False  # an atomic add in GM: its order across cores decides the bits
    # a core holding a buffer another core also uses (the 950's wiring) runs its records one by one
    unshared = [not any(buf.key in chip.shared_buffers for buf in core.buffers.values()) for core in cores]
    made = {} if made is None else made
    for c, core in enumerate(cores):
        real.joining = unshared[c] and chip.check_races  # row copies join: short_runs.copy_joins' conditions
        for item in flattened(core.stream, made):
            if item.__class__ is Block:
                plan = plans.get(id(item.template))
                if plan is None:
                    plan = plans[id(item.template)] = _Plan(item.template, len(plans) + 1)
                real.close()
                operands.add_block(len(runs), plan, chip.cores[item.core], item)
                runs += plan.runs
                kinds.append(plan.kinds if unshared[c] else plan.kinds_one_by_one)
                origins.append(plan.origins)
                names_l0c.append(plan.names_l0c)
                joins.append(plan.joins if unshared[c] and chip.check_races and plan.joins is not None
                             else np.zeros(len(plan.runs), np.int32))
                atomic = atomic or plan.atomic
            else:
                run = item.spec.execute if item.args is not None else None
                runs.append(run)
                operands.made.append(item)
                kind = replay_data.kind_of(run, item.name)
                real.kinds.append(kind if unshared[c] or kind != replay_data.RUN else replay_data.OTHER)
                real.names_l0c.append(run is not None and _names_l0c(item))
                real.records.append(item)
                atomic = atomic or _adds_atomically(item)
        real.close()  # a stretch's copies join only on one core
    from ascend_sim.passes.fast_schedule import _CORE

    batched = dict(kinds=np.concatenate(kinds), origins=np.concatenate(origins), core_of=s.R[:, _CORE],
                   buffers_of=[core.buffers for core in cores], plans={}, gathers={}, own_l0c=unshared,
                   names_l0c=np.concatenate(names_l0c), joins=np.concatenate(joins))
    processes = chip.data_processes
    parts = None
    if processes > 1 and not atomic and (batched["kinds"] != replay_data.NONE).sum() >= forked_data.FORK_FROM \
            and forked_data.can_fork(chip, cores, _semantic_records(cores, plans)):
        parts = independent_groups(chip, cores, s)
    if parts is None or len(parts) == 1:
        replay_data.run_in_order(runs, operands, s.order, **batched)
        return
    shares: list = [[] for _ in range(min(processes, len(parts)))]
    for part in sorted(parts, key=len, reverse=True):  # the longest first, each to the least loaded process
        min(shares, key=len).extend(part)
    position = np.empty(len(runs), np.int64)  # per record, its place in the schedule's order
    position[s.order] = np.arange(len(s.order))
    # each share in the schedule's order, so that its first fault is the one a single pass would meet first
    shares = [s.order[np.sort(position[share])] for share in shares]
    forked_data.run_shares([partial(replay_data.run_in_order, runs, operands, share, **batched) for share in shares],
                           lambda record: -1 if record is None else int(position[record]))


def _semantic_records(cores, plans) -> list:
    """The records whose semantics a data pass runs: the real records of the streams and each template's once."""
    real = [item for core in cores for item in core.stream if item.__class__ is not Block and item.args is not None]
    return real + [r for plan in plans.values() for r in plan.records if r.args is not None]


class _StreamOperands:
    """Per record of the streams (numbered as in run_semantics), what its semantics read, made when first asked
    for: most of a block's records run inside a batched run (replay_data.RunPlan), which reads only its core's
    buffers, so their operands are never made. A real record is its own operands."""

    def __init__(self):
        self.made: list = []  # per record: its operands once made, else None
        self.block_starts: list = []  # the first record of each block, in order
        self.blocks: list = []  # ... and (its _Plan, its core, the Block)

    def add_block(self, start: int, plan, core, block) -> None:
        """The block's records from `start` on (a real record is appended to `made` as itself)."""
        self.block_starts.append(start)
        self.blocks.append((plan, core, block, any(block.shifts.values())))
        self.made += plan.unmade

    def template_args(self, i: int):
        """Record i's operands tuple as its template holds it (a real record: its own), without moving it to the
        block's core and GM shifts: what RunPlan.compiled reads of a run of LoadData / Mmad records is the same
        either way (buffers by name, values and index arrays; no GM operand), and most of a run's operands are
        never made then."""
        b = bisect_right(self.block_starts, i) - 1
        if b >= 0:
            records = self.blocks[b][0].records
            j = i - self.block_starts[b]
            if j < len(records):
                return records[j].args
        return self.made[i].args

    def __getitem__(self, i: int):
        got = self.made[i]
        if got is None:
            b = bisect_right(self.block_starts, i) - 1
            plan, core, block, moved = self.blocks[b]
            got = self.made[i] = plan.operand(core, block, moved, i - self.block_starts[b])
        return got


class _RealRecords:
    """run_semantics' per-record arrays of a stretch of real records between blocks on one core, gathered as lists
    and added as one array each (not an array a record); its row copies alike joined as a template's are
    (short_runs.copy_joins: consecutive records of one core) when `joining` (Conv3DV2's VideoMAE: the 28,672
    LoadData2D(GM) of its templates' first calls)."""

    __slots__ = ("kinds", "names_l0c", "records", "joining", "_arrays")

    def __init__(self, kinds: list, origins: list, names_l0c: list, joins: list):
        self.kinds: list = []
        self.names_l0c: list = []
        self.records: list = []
        self.joining = False  # the core's buffers are its own and the race checks ran (and found no race)
        self._arrays = kinds, origins, names_l0c, joins

    def close(self) -> None:
        """Add the stretch's arrays (origin -1: a real record) and start a new one."""
        if self.kinds:
            kinds, origins, names_l0c, joins = self._arrays
            kinds.append(np.array(self.kinds, np.int8))
            origins.append(np.full(len(self.kinds), -1, np.int64))
            names_l0c.append(np.array(self.names_l0c, bool))
            joined = short_runs.copy_joins([r.name for r in self.records], [r.args for r in self.records]) \
                if self.joining else None
            joins.append(np.zeros(len(self.kinds), np.int32) if joined is None else np.array(joined, np.int32))
            self.kinds, self.names_l0c, self.records = [], [], []


def _names_l0c(rec) -> bool:
    """The record reads or writes an L0C."""
    for buf, _, _ in rec.reads:
        if buf.name == "L0C":
            return True
    for buf, _, _ in rec.writes:
        if buf.name == "L0C":
            return True
    return False


def independent_groups(chip, cores, s) -> list | None:
    """The schedule's order split by AI core (`core.group`: an AIC and its AIVs) when no record of one group
    can depend on another's: the race checks found no race (so two groups' accesses of one byte would need a
    flag between them), no SyncAll, and every CrossCoreWaitFlag released by sets of its own group. None
    otherwise. Each group's records keep the schedule's order, so its data work is the same as in one pass."""
    from ascend_sim.passes.fast_schedule import _CORE, _KIND, CROSS_WAIT, SYNC_ALL

    if not chip.check_races:
        return None
    R = s.R
    group_of_core = np.array([core.group for core in cores], np.int64)
    group = group_of_core[R[:, _CORE]]
    kind = R[:, _KIND]
    if (kind == SYNC_ALL).any():
        return None
    for i in np.flatnonzero(kind == CROSS_WAIT).tolist():
        r = s.rel[i]
        if (group[s.round_mem[s.round_off[r]:s.round_off[r + 1]]] != group[i]).any():
            return None
    order = s.order
    by_group = group[order]
    return [order[by_group == g].tolist() for g in np.unique(by_group).tolist()]


def _adds_atomically(rec) -> bool:
    return rec.footprint is not None and any(is_write == "atomic" for *_, is_write in rec.footprint)


class _Plan:
    """A template's records seen by the data pass: their semantics, and their operands per core (local buffers
    moved) and per block (GM addresses shifted), made record by record when asked for."""

    def __init__(self, template, number: int):
        self.template = template  # a template or a Stretch holding no nested block (replay_engine.flattened)
        self.records = records = template.records
        self.runs = [r.spec.execute if r.args is not None else None for r in records]
        self.unmade = [None] * len(records)  # _StreamOperands.made of a block's records before any is asked for
        self.kinds = np.array([replay_data.kind_of(run, r.name) for run, r in zip(self.runs, records)], np.int8)
        self.kinds_one_by_one = np.where(self.kinds == replay_data.RUN, replay_data.OTHER, self.kinds).astype(np.int8)
        self.origins = replay_data.origins(number, len(records))  # number: its place among the launch's templates
        self.atomic = any(map(_adds_atomically, records))
        self.names_l0c = np.array([run is not None and _names_l0c(r) for run, r in zip(self.runs, records)], bool)
        joins = short_runs.copy_joins([r.name for r in records], [r.args for r in records])
        self.joins = None if joins is None else np.array(joins, np.int32)  # row copies alike run as one
        self.per_core: dict = {}  # core index -> per record, its operands on that core's buffers once made
        self.fields: dict = {}  # record index -> its _buffer_fields, once its operands were made on a core

    def operand(self, core, block, moved: bool, j: int):
        """The operands of the block's record `j` (one with semantics); `moved`: the block has GM shifts. A
        record with GM address fields in a moved block is made in one pass from the template's (local buffers
        and GM addresses together); the others' operands depend only on the core, so they are kept per core."""
        own_core = block.core == self.template.core
        if own_core and not moved:
            return self.records[j]
        fields = self.fields.get(j)
        if fields is None:
            fields = self.fields[j] = _buffer_fields(self.records[j].args)
        if moved and fields[1]:
            return self._moved(core, own_core, block.shifts, j)
        if own_core:
            return self.records[j]
        on_core = self.per_core.get(block.core)
        if on_core is None:
            on_core = self.per_core[block.core] = [None] * len(self.records)
        ops = on_core[j]
        if ops is None:
            ops = on_core[j] = self._moved(core, False, None, j)
        return ops

    def _moved(self, core, own_core: bool, shifts, j: int) -> _Operands:
        """Record j's operands with its local buffers replaced by `core`'s (unless `own_core`: the template's
        own) and, with `shifts` (a block's GM shifts by buffer), its GM addresses shifted (the rule of
        replay_engine._remap_args)."""
        r = self.records[j]
        args = r.args
        local, gm = self.fields[j]
        if local is None:  # buffers nested in the fields: the general remap
            args = _remap_args(args, core, shifts or {})
        elif (local and not own_core) or (shifts and gm):
            values = list(args)
            if not own_core:
                buffers = core.buffers
                for i in local:
                    values[i] = buffers[values[i].name]
            if shifts:
                for at, buf in gm:
                    values[at] += shifts.get(buf, 0)
            args = args._make(values)
        return _Operands(args, r.registers)


def _buffer_fields(args) -> tuple:
    """An operands tuple's fields holding a local buffer (None: buffers nested in the fields, or not a named
    tuple) and its GM address fields [(address field, GM buffer)], those a block's shifts move (the rule of
    replay_engine._remap_args)."""
    if not hasattr(args, "_fields"):
        return None, []
    fields = args._fields
    local: list | None = []
    gm = []
    for i, v in enumerate(args):
        cls = v.__class__
        if cls in _HOLDS_NO_BUFFER:
            continue
        if cls is Buffer:
            if not v.name.startswith("GM:"):
                local.append(i)
            elif fields[i].endswith("buf"):
                gm.append((fields.index(fields[i][:-3] + "0"), v))
        elif isinstance(v, (tuple, list)) and _nests_buffer(v):
            local = None
    return local, gm


_HOLDS_NO_BUFFER = frozenset((int, bool, float, str, type(None), np.ndarray))  # most fields' types, passed by at once


def _nests_buffer(value) -> bool:
    """A plain tuple or list holding a buffer at any depth (what _remap_args walks into)."""
    if isinstance(value, list) or (isinstance(value, tuple) and not hasattr(value, "_fields")):
        return any(v.__class__ is Buffer or _nests_buffer(v) for v in value)
    return False
