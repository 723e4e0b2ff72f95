"""The data work of replayed blocks batched per template (issue 23, step 3): a cube core's runs of LoadData and
Mmad records compiled once into gathers from L1 and the same BLAS calls.

In the schedule's order, a core's records that move data only inside its own buffers (LoadData2D and
LoadData3Dv2 from L1 into L0A / L0B, Mmad from L0A and L0B into L0C) come in runs between the records that load
L1 or read L0C (R3D's stem: 98 Mmads a run; C3D conv3a: 3). No other record touches those buffers in between (a
core sharing them with another, as on the Ascend 950, is left out), so a run's data work can be done at once, in
its own order, with the same result. A run made of replayed blocks' records is the same list of operands (local
addresses do not move with the GM shifts) every time its (template, record) sequence comes back, so it is
compiled once into a `RunPlan`:
- per Mmad, where its A and B come from in L1: the load that last wrote the whole operand (an img2col's index map
  or a LoadData2D's fractals, put in the order the Mmad multiplies them in: shared by all plans of a launch, and
  as whole C0 blocks, one row index a block, where the img2col reads 32-byte blocks or the fractals are not
  transposed), else the element maps of the loads that wrote it applied in order;
- at run time, per batch of up to BATCH consecutive Mmads that gather alike, their A and B gathered in one take
  each (into two buffers made once a run) from a float32 image of the L1 range the run reads (or gathered and
  then converted, when that range is larger than the operands; float16 by passes/fast_fractals.py's compiled
  loop, the table's bits), pads filled, then stacked, the same array
  shapes, slices, HF32 rounding and BLAS call per Mmad as isa/cube.py's Mmad (machine/mmad.py's multiply,
  shared, takes stacks), so the float32 sums are the same bits;
- the Mmads writing one L0C block in a row kept as one (m, n) float32 array, C = A.B or C += A.B element by
  element as in L0C (a batch's products added in order by a compiled loop, passes/fast_sums.py), stored in NZ
  once;
- the bytes the run leaves in L0A / L0B: its last load of each range, run as the record itself.
A run is left to the records one by one (`FALLBACKS` counts why; engine/short_runs.py joins their LoadData2D
copies) when it has fewer than MIN_MMADS Mmads (short runs leave most of their loads' bytes in L0, so a plan
saves little) unless its Mmads read SHORT_RUN_IMAGE times more elements than the L1 window its loads read (an
img2col of a small window: converting the window once pays, X3D depthwise), or has an Mmad reading L0A / L0B
bytes loaded before the run, a GEMV or bias Mmad, mixed element sizes or an address not on an element. A run
holding real records (a template's first call, still in the stream) is planned by content each time it comes:
its origin does not name it, and its content is mostly a template's, whose plan it shares. Tests:
tests/ascend_sim/engine/test_replay_data.py (every byte of every local buffer, the cycles and the result against
the records run one by one, and the exact engine's result) and the engine corpus on engine="replay".
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

import numpy as np

from ascend_sim.engine.short_runs import ShortRun, copies
from ascend_sim.machine.dtypes import element_bits, to_float32
from ascend_sim.machine.gather import block_rows, block_rows_of_map
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.mmad import multiply

BATCHED = ("LoadData2D", "LoadData3Dv2", "Mmad")  # the specs a run is made of
NONE, RUN, OTHER = 0, 1, 2  # a record's part in the data pass: no data work, batchable, run one by one
FALLBACKS: Counter = Counter()  # why runs were run record by record (a process-wide tally, for benchmarks)
MIN_MMADS = 8  # shorter runs (C3D's: 3) leave most of their loads' bytes in L0: planned, they cost more ...
SHORT_RUN_IMAGE = 2  # ... unless their Mmads read this many times more elements than the L1 window their loads
# read: then converting the window once pays (X3D's img2col reads 12,288 elements of a 2,688-element window)
BATCH = 8  # Mmads gathered and multiplied at once: fewer numpy calls, while a batch's operands and products
# (R3D's stem: 2 x 8 x 64 KB) stay in the cache (all of a run's at once was slower: "Tried and dropped")
_UNTOUCHED = -1  # provenance of an L0 element the run has not written; pads are -2 - slot
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32}
_CONTENT_NUMBERS = "content numbers"  # RunPlan.compiled's entry in `shared`: (by id of operands, by content)


def run_in_order(runs, operands, order, kinds, origins, core_of, buffers_of, plans: dict, gathers: dict, own_l0c,
                 names_l0c, joins=None) -> None:
    """Every record's data work in `order`, one by one except the runs of RUN records of one core
    done at once. `operands`: per record what its semantics read, and its `template_args` (what a plan is compiled
    from); `kinds`: per record NONE, RUN or OTHER; `origins`: per record its template's number << 32 | its index in
    the template (`origin`); `core_of`: per record its core; `buffers_of`: per core its buffers; `plans`: key ->
    RunPlan, ShortRun or None, and `gathers` (RunPlan.compile's `shared`), both kept for one launch; `own_l0c`: per core
    whether no other core uses its buffers (its Mmads' sums are then kept between records: L0CChains);
    `names_l0c`: per record whether its reads or writes name an L0C; `joins`: per record short_runs.copy_joins'
    mark (k: the first of k row copies alike, run then as one copy; -1: one of the others, run by that), or
    None."""
    order = np.asarray(order, np.int64)
    kind = kinds[order]
    seq = order[kind != NONE]
    kind = kind[kind != NONE]
    core = core_of[seq]
    by_core = np.argsort(core, kind="stable")  # each core's records in the schedule's order
    batched = kind[by_core] == RUN
    same_core = np.zeros(len(by_core), bool)
    same_core[1:] = core[by_core][1:] == core[by_core][:-1]
    previous = np.zeros(len(by_core), bool)
    previous[1:] = batched[:-1]
    starts = batched & ~(previous & same_core)
    in_runs = by_core[batched]  # the runs' records (positions in seq), one run after another
    run_starts = np.flatnonzero(starts[batched])
    bounds = [*run_starts.tolist(), len(in_runs)]  # run w: in_runs[bounds[w]:bounds[w + 1]]
    run_records = seq[in_runs]
    run_origins = origins[run_records]
    keys = run_origins.tobytes()  # run w's key: its records' origins, bytes 8 * bounds[w] to 8 * bounds[w + 1]
    run_records = run_records.tolist()
    # what runs, by position in seq: a record of its own, or a run at its first record's position (a joined copy's
    # later records, run by its first, not at all: Conv3DV2's VideoMAE has 659k)
    singles = np.flatnonzero(kind == OTHER if joins is None else (kind == OTHER) & (joins[seq] >= 0))
    at = np.concatenate([singles, in_runs[run_starts]])
    what = np.concatenate([np.full(len(singles), -1, np.int64), np.arange(len(run_starts), dtype=np.int64)])
    by_position = np.argsort(at, kind="stable")
    seq_list, core_list, names = seq.tolist(), core.tolist(), names_l0c.tolist()
    joined = None if joins is None or not joins.any() else joins.tolist()
    chains = L0CChains(own_l0c)
    position = 0
    try:
        for position, w in zip(at[by_position].tolist(), what[by_position].tolist()):
            if w < 0:
                i = seq_list[position]
                if joined is not None and joined[i]:  # the first of k row copies alike (DataCopy, DataCopyPad,
                    # LoadData2D(GM)), which do not touch L0C: the sums stay kept
                    first, second = operands.template_args(i), operands.template_args(i + 1)
                    copies(operands[i].args, joined[i], second.s0 - first.s0, second.d0 - first.d0)
                    continue
                chains.run(runs[i], operands[i], core_list[position], names[i])
                continue
            lo, hi = bounds[w], bounds[w + 1]
            records = run_records[lo:hi]
            key = keys[8 * lo:8 * hi]
            plan = plans.get(key, False)
            if plan is False:
                args_list = [operands.template_args(i) for i in records]
                plan = RunPlan.compiled(args_list, gathers)
                if run_origins[lo:hi].min() >= 0:  # real records (-1) are not named by their origin: found by
                    plans[key] = plan  # content each time
            c = core_list[position]
            if plan is None:
                for i in records:
                    chains.run(runs[i], operands[i], c, names[i])
            elif plan.__class__ is ShortRun:
                plan.run(chains, c, buffers_of[c], records, runs, operands, names)
            else:
                chains.store(c)
                plan.run(buffers_of[c], records, runs, operands)
    except BaseException as fault:
        # the record whose data work (or whose run's) raised: data passes run apart compare their faults by it
        fault.data_pass_record = seq_list[position]
        raise
    finally:  # L0C holds every Mmad's sums, as after the records, even when a record's semantics raise
        chains.store_all()


class L0CChains:
    """Per core, the L0C block its last Mmads wrote, kept as (m, n) float32 sums and stored in NZ only when a
    record that may touch L0C runs on that core (or the pass ends): a chain of Mmads accumulating into one block
    (C3D conv3a: init, then += per K step, each between its own loads) pays one NZ store instead of an NZ
    read-modify-write per Mmad. The sums are the same float32 adds, element by element, in the same order, as
    isa/cube.py's Mmad (its product from machine/mmad.py; float16 A and B converted by passes/fast_fractals.py's
    compiled walk, the same float32 operands and BLAS call), so the bytes are the same; a bias Mmad's sums start
    from its bias row, added to the product element by element as isa/cube.py adds them. Only on a core whose L0C
    no other core uses (`own_l0c`); GEMV Mmads run as their records. Whether a record may touch L0C is
    read from its reads and writes (what the race checks see of it)."""

    __slots__ = ("own", "chains", "product")

    def __init__(self, own_l0c):
        from ascend_sim.passes.fast_fractals import product  # numba: loaded already by the compiled schedule

        self.own = own_l0c  # per core: True when its buffers are its own
        self.chains: dict = {}  # core -> [its L0C buffer, the block (address, m1, n1), its (m, n) sums]
        self.product = product  # machine/mmad.py's, float16 operands converted by a compiled walk

    def run(self, run, ops, core: int, names_l0c: bool) -> None:
        """A record's data work (`run` its semantics, `ops` what they read) on `core`; `names_l0c`: its reads or
        writes name an L0C."""
        args = ops.args
        fields = getattr(args, "_fields", None)
        chain = self.chains.get(core)
        if fields is not None and fields[0] == "abuf" and self.own[core] and not args.gemv:
            prod = self.product(args)
            if args.bias_bt is not None:  # C = the bias row (BT) + A.B: the same float32 adds as isa/cube.py's
                prod += args.bias_bt.view(np.float32, 0, args.n1 * 16)
            self.add(core, args.cbuf, (args.c0_addr, args.m1, args.n1), args.init or args.bias_bt is not None, prod)
            return
        if chain is not None and names_l0c:
            self.store(core)
        run(ops)

    def add(self, core: int, cbuf, block: tuple, init: bool, prod) -> None:
        """An Mmad's product `prod` into the L0C block (address, m1, n1) of `cbuf`: C = prod when `init`, else
        C += prod, kept as the core's chain (a chain on another block stored first)."""
        chain = self.chains.get(core)
        if chain is not None and chain[1] == block and chain[0] is cbuf:
            if init:
                chain[2] = prod
            else:
                chain[2] += prod
            return
        self.store(core)
        if not init:
            c = _load_c(cbuf.data.view(np.float32), block)
            c += prod
            prod = c
        self.chains[core] = [cbuf, block, prod]

    def store(self, core: int) -> None:
        """The core's kept sums written to L0C (NZ)."""
        chain = self.chains.pop(core, None)
        if chain is not None:
            cbuf, block, c = chain
            _store(cbuf.data.view(np.float32), block, c)

    def store_all(self) -> None:
        for core in list(self.chains):
            self.store(core)


def kind_of(run, name: str) -> int:
    """A record's part in the data pass (`run`: its semantics or None, `name`: its spec's)."""
    return NONE if run is None else RUN if name in BATCHED else OTHER


def origins(template_number: int, size: int) -> np.ndarray:
    """The origins of a block's records: its template's number and each record's index in it, as one int64."""
    return (template_number << 32) + np.arange(size, dtype=np.int64)


class RunPlan:
    """A run's data work compiled (the module's docstring): per Mmad, where its A and B come from in L1; the
    loads whose bytes the run leaves in L0A / L0B."""

    __slots__ = ("dtype", "c0", "lo", "hi", "via_image", "pad_row", "batches", "gathered", "last_loads",
                 "last_steps")

    @classmethod
    def compiled(cls, args_list: list, shared: dict) -> RunPlan | ShortRun | None:
        """compile's plan, or for a run of fewer than MIN_MMADS Mmads its ShortRun (None: its records one by
        one); compiled once per content: the runs of several templates are often the same operands (R3D's stem:
        132 runs to plan, 21 different; C3D conv3a: 448 short runs, 68 different), and a plan depends only on the
        operands' values, their buffers' names and their arrays (by identity: the entry keeps them alive, so no
        id is reused). Each operands object's content is numbered once per launch (the runs of real records and
        of blocks read the same templates' operands)."""
        by_id, by_content = shared.setdefault(_CONTENT_NUMBERS, ({}, {}))
        key = ["plan"]
        for args in args_list:
            known = by_id.get(id(args))
            if known is None:
                content = (args.__class__, *(v.name if v.__class__ is Buffer else id(v) if v.__class__ is np.ndarray
                                             else v for v in args))
                known = by_id[id(args)] = (by_content.setdefault(content, len(by_content)), args)  # args kept
            key.append(known[0])
        key = tuple(key)
        known = shared.get(key)
        if known is None:
            if sum(args._fields[0] == "abuf" for args in args_list) < MIN_MMADS and not _window_pays(args_list):
                FALLBACKS["fewer Mmads than MIN_MMADS"] += 1
                plan = None
            else:
                plan = cls.compile(args_list, shared)
            known = shared[key] = (plan or ShortRun.compiled(args_list), args_list)
        return known[0]

    @classmethod
    def compile(cls, args_list: list, shared: dict) -> RunPlan | None:
        """The plan of a run of LoadData / Mmad operands (in the run's order), or None (FALLBACKS says why).
        `shared`: the gathers of LoadData 3Dv2 index maps, by map, and the plans by content, for one launch."""
        reason = _refused(args_list)
        if reason:
            FALLBACKS[reason] += 1
            return None
        plan = cls()
        size = args_list[0].dtype.itemsize
        plan.dtype = next((a.dtype for a in args_list if a._fields[0] == "abuf"), args_list[0].dtype)
        plan.c0 = 32 // size
        loads: dict = {"L0A": [], "L0B": []}  # per L0 buffer: (first, end element, run index, full) of its loads
        mmads = []
        for j, args in enumerate(args_list):
            if args._fields[0] != "abuf":
                loads[args.dbuf.name].append((*_load_range(args, size), j))
                continue
            a_at, b_at = _mmad_positions(args, size)
            a_key = ("A", args.a_nz, args.m1, args.k1, args.n1, args.c0)  # "A" / "B" and _positions' arguments
            b_key = ("B", *a_key[1:])
            a = _operand(args_list, loads["L0A"], args.a0 // size, args.a_bytes // size, a_at, a_key, plan.dtype,
                         size, shared)
            b = _operand(args_list, loads["L0B"], args.b0 // size, args.b_bytes // size, b_at, b_key, plan.dtype,
                         size, shared)
            if a is None or b is None:
                FALLBACKS["an Mmad operand not loaded in the run"] += 1
                return None
            mmads.append((a, b, args))
        operands = [a for a, _, _ in mmads] + [b for _, b, _ in mmads]
        plan.lo = min((o[0] for o in operands), default=0)
        plan.hi = max((o[4] for o in operands), default=0)
        # L1 converted to float32 once when that is less work than converting every operand as gathered
        plan.via_image = plan.hi - plan.lo <= sum(_size(o[1]) for o in operands)
        plan.pad_row = _pad_row(mmads) if plan.via_image else None
        pad_block = -(-(plan.hi - plan.lo) // plan.c0)  # RunPlan.run's block of pads, after the window's blocks
        plan.batches = _batches([_step(_from_window(a, plan.lo, plan.pad_row, pad_block),
                                       _from_window(b, plan.lo, plan.pad_row, pad_block), ops) for a, b, ops in mmads])
        plan.gathered = tuple(max(len(batch[at]) * (plan.c0 if batch[at + 1] else 1) for batch in plan.batches)
                              for at in (0, 4))  # the most elements a batch gathers, of A and of B
        plan.last_loads = sorted(j for ranges in loads.values() for k, (lo, hi, full, j) in enumerate(ranges)
                                 if not any(full and (l, h) == (lo, hi) for l, h, full, _ in ranges[k + 1:]))
        plan.last_steps = ShortRun.compiled([args_list[j] for j in plan.last_loads])  # LoadData2D copies joined
        return plan

    def run(self, buffers, records, runs, operands) -> None:
        """The run's data work on a core's buffers (`records`: the run's, indices into `runs` / `operands`)."""
        from ascend_sim.passes.fast_fractals import to_float32  # numba: loaded already by the compiled schedule
        from ascend_sim.passes.fast_sums import add_in_order

        size, dtype, c0 = self.dtype.itemsize, self.dtype, self.c0
        l1 = element_bits(buffers["L1"].data[self.lo * size:self.hi * size], dtype)
        l0c = buffers["L0C"].data.view(np.float32)
        block, c = None, None  # the L0C block being accumulated: (address, m1, n1), its (m, n) float32 sums
        if self.pad_row is None:
            image = to_float32(l1, dtype) if self.via_image else None
            source = l1 if image is None else image
            rows = source[:len(source) // c0 * c0].reshape(-1, c0)  # the window's C0 blocks
        else:  # the window's C0 blocks and, last, a block of the pad value (the gathers' pad block)
            n = len(l1)
            rows = np.empty((-(-n // c0) + 1, c0), np.float32)
            source = image = to_float32(l1, dtype, out=rows.reshape(-1)[:n])
            rows[-1] = self.pad_row
        a_gathered, b_gathered = (np.empty(n, source.dtype) for n in self.gathered)  # reused by each batch
        for (a_index, a_rows, a_pads, a_pad_value, b_index, b_rows, b_pads, b_pad_value, a_shape, b_shape, k,
             hf32_rounding, segments) in self.batches:
            # the same gathers, shapes and product per Mmad (machine/mmad.py) as isa/cube.py's Mmad
            a = _take(rows, source, a_index, a_rows, a_gathered)
            b = _take(rows, source, b_index, b_rows, b_gathered)
            if image is None:
                a, b = to_float32(a, dtype), to_float32(b, dtype)
            if a_pads is not None:
                a.reshape(-1)[a_pads] = a_pad_value
            if b_pads is not None:
                b.reshape(-1)[b_pads] = b_pad_value
            products = multiply(a.reshape(a_shape), b.reshape(b_shape), k, hf32_rounding)
            flat = products.reshape(len(products), -1)
            for target, init, first, end in segments:  # the same float32 adds, in order, as `c += product`
                if target != block:
                    _store(l0c, block, c)
                    block, c = target, None
                if init:
                    c = products[first]
                    first += 1
                elif c is None:
                    c = np.ascontiguousarray(_load_c(l0c, target))
                add_in_order(c.reshape(-1), flat, first, end)
        _store(l0c, block, c)
        last = [records[j] for j in self.last_loads]  # the bytes the run leaves in L0A / L0B: its last load of
        if self.last_steps is None:  # each range
            for i in last:
                runs[i](operands[i])
        else:
            self.last_steps.run_loads(buffers, last, runs, operands)


def _pad_row(operands) -> np.float32 | None:
    """The pad value of a run whose padded C0-block gathers all pad with one value (bit for bit), else None:
    RunPlan.run then gathers their pads from a block of it after the window instead of writing them after each
    gather (R3D's stem: 866 pad elements an Mmad)."""
    values = {np.float32(o[3]).tobytes(): np.float32(o[3]) for a, b, _ in operands for o in (a, b)
              if o[1].__class__ is Rows and o[2] is not None}
    return next(iter(values.values())) if len(values) == 1 else None


def _take(rows, source, index, by_rows: bool, out) -> np.ndarray:
    """The gather of `index` (C0 blocks of `rows`, or elements of `source`) written to the front of `out`: every
    index is inside the window, so mode "clip" changes nothing, and lets numpy write into `out` unbuffered."""
    if by_rows:
        c0 = rows.shape[1]
        return rows.take(index, axis=0, out=out[:len(index) * c0].reshape(-1, c0), mode="clip")
    return source.take(index, out=out[:len(index)], mode="clip")


def _from_window(operand, lo: int, pad_row, pad_block: int) -> tuple:
    """An operand's gather (_operand's) from the first element of the run's L1 window (`lo`): (C0 block numbers
    and True, when it reads whole blocks of the window, else element numbers and False, its pads, their value).
    Pads that are whole blocks of `pad_row`'s value read block `pad_block` (RunPlan.run's pad block) instead."""
    at, index, pads, pad_value = operand[0] - lo, *operand[1:4]
    if index.__class__ is Rows and at % index.c0 == 0:
        blocks = index.blocks + at // index.c0
        if pads is not None and pad_row is not None and np.float32(pad_value).tobytes() == pad_row.tobytes():
            whole = _whole_pad_blocks(index, pads)
            if whole is not None:
                blocks[whole] = pad_block
                pads = None
        return blocks, True, pads, pad_value
    if index.__class__ is Rows:
        index = (index.blocks[:, None] * index.c0 + np.arange(index.c0)).reshape(-1)
    return index + at, False, pads, pad_value


def _step(a, b, ops) -> tuple:
    """What _batches reads of one Mmad: A's and B's gathers (_from_window), their (m, kp) and (kp, n) shapes,
    k, the HF32 rounding, the L0C block (address, m1, n1) and init."""
    kp = ops.k1 * ops.c0
    return (*a, *b, (ops.m1 * 16, kp), (kp, ops.n1 * 16), ops.k, ops.hf32_rounding, (ops.c0_addr, ops.m1, ops.n1),
            ops.init)


def _batches(steps) -> list:
    """The plan's Mmads (_step's) in batches of up to BATCH consecutive Mmads that gather alike (rows or elements,
    pad values, shapes, k, HF32): per batch, A's and B's gathers joined (their pads moved to each Mmad's place in
    the stack), the stacked shapes, k, the HF32 rounding, and its Mmads' L0C blocks and inits (_segments)."""
    groups: list = []  # [form, members]
    for step in steps:
        a_rows, a_pads, a_pad_value, b_rows, b_pads, b_pad_value = step[1:4] + step[5:8]
        form = (a_rows, a_pads is not None and np.float32(a_pad_value).tobytes(), b_rows,
                b_pads is not None and np.float32(b_pad_value).tobytes(), *step[8:12])
        if groups and groups[-1][0] == form and len(groups[-1][1]) < BATCH:
            groups[-1][1].append(step)
        else:
            groups.append([form, [step]])
    batches = []
    for _, members in groups:
        first = members[0]
        a_shape, b_shape = first[8], first[9]
        batches.append((np.concatenate([m[0] for m in members]), first[1],
                        _joined_pads([m[2] for m in members], a_shape[0] * a_shape[1]), first[3],
                        np.concatenate([m[4] for m in members]), first[5],
                        _joined_pads([m[6] for m in members], b_shape[0] * b_shape[1]), first[7],
                        (len(members), *a_shape), (len(members), *b_shape), first[10], first[11],
                        _segments([(m[12], m[13]) for m in members])))
    return batches


def _segments(blocks_and_inits: list) -> tuple:
    """A batch's Mmads (per Mmad its L0C block and init, in order) as runs (block, init, first, end) of
    consecutive Mmads into one block, only the first of a run an init: RunPlan.run adds each run's products into
    the block's sums at once."""
    runs: list = []
    for i, (block, init) in enumerate(blocks_and_inits):
        if runs and runs[-1][0] == block and not init:
            runs[-1][3] = i + 1
        else:
            runs.append([block, init, i, i + 1])
    return tuple(map(tuple, runs))


def _joined_pads(pads: list, size: int):
    """The pad positions of a stack of operands of `size` elements each (None: no pads)."""
    if pads[0] is None:
        return None
    return np.concatenate([p + i * size for i, p in enumerate(pads)])


def _refused(args_list) -> str | None:
    """Why a run cannot be planned, or None."""
    sizes = {args.dtype.itemsize for args in args_list}
    if len(sizes) != 1:
        return "mixed element sizes"
    size = sizes.pop()
    mmad_dtypes = {args.dtype for args in args_list if args._fields[0] == "abuf"}
    if len(mmad_dtypes) > 1:
        return "Mmads of several dtypes"
    for args in args_list:
        if args._fields[0] == "abuf":
            if args.gemv or args.bias_bt is not None:
                return "a GEMV or bias Mmad"
            if (args.abuf.name, args.bbuf.name, args.cbuf.name) != ("L0A", "L0B", "L0C") or args.c0_addr % 4:
                return "an Mmad off L0A / L0B / L0C"
            if args.a0 % size or args.b0 % size:
                return "an address not on an element"
        else:
            if args.sbuf.name != "L1" or args.dbuf.name not in ("L0A", "L0B"):
                return "a load off L1 -> L0A / L0B"
            pitches = (args.s_pitch, args.d_pitch) if _is_2d(args) else ()
            if any(v % size for v in (args.s0, args.d0, *pitches)):
                return "an address not on an element"
    return None


def _window_pays(args_list) -> bool:
    """A short run whose Mmads read SHORT_RUN_IMAGE times more elements than the L1 window its loads read (from
    the first to the last byte), counted in bytes from the operands, before anything is compiled."""
    lo, hi, read = None, 0, 0
    for args in args_list:
        if args._fields[0] == "abuf":
            read += args.a_bytes + args.b_bytes
            continue
        if args.sbuf.name != "L1":
            return False
        first = args.s0
        end = first + ((args.reps - 1) * args.s_pitch + 512 if _is_2d(args) else args.span * args.dtype.itemsize)
        lo = first if lo is None else min(lo, first)
        hi = max(hi, end)
    return lo is not None and read >= SHORT_RUN_IMAGE * (hi - lo)


def _size(index) -> int:
    return len(index.blocks) * index.c0 if index.__class__ is Rows else len(index)


def _is_2d(ops) -> bool:
    return ops._fields[2] == "s_pitch"


def _load_range(ops, size: int) -> tuple:
    """(first, end) L0 element of a load's destination, and whether it writes every element between."""
    if _is_2d(ops):
        return ops.d0 // size, (ops.d0 + (ops.reps - 1) * ops.d_pitch + 512) // size, ops.d_pitch == 512
    if ops.written is None:
        return ops.d0 // size, ops.d0 // size + ops.count, True
    return ops.d0 // size, ops.d0 // size + ops.extent, False


def _mmad_positions(ops, size: int) -> tuple:
    """The L0A and L0B elements an Mmad reads (from its a0 / b0), in the (m, k) and (k, n) orders it multiplies
    them in."""
    return _positions(ops.a_nz, ops.m1, ops.k1, ops.n1, ops.c0)


@lru_cache(maxsize=256)
def _positions(a_nz: bool, m1: int, k1: int, n1: int, c0: int) -> tuple:
    if a_nz:  # NZ [k1][m1][16][c0]
        a = np.arange(m1 * k1 * 16 * c0).reshape(k1, m1, 16, c0).transpose(1, 2, 0, 3)
    else:  # ZZ [m1][k1][16][c0]
        a = np.arange(m1 * k1 * 16 * c0).reshape(m1, k1, 16, c0).transpose(0, 2, 1, 3)
    b = np.arange(k1 * n1 * 16 * c0).reshape(k1, n1, 16, c0).transpose(0, 3, 1, 2)
    return a.reshape(-1), b.reshape(-1)


def _operand(args_list, loads, first: int, count: int, order, order_key, dtype, size: int, shared: dict):
    """Where an Mmad operand (L0 elements [first, first + count), read in `order`, named by `order_key`, from
    first) comes from: (an L1 element, the gather from there, its pad positions, their float32 value, the end of
    the L1 elements it reads); None when some element was not loaded in the run."""
    last = next((load for load in reversed(loads) if load[0] < first + count and load[1] > first), None)
    if last is None:
        return None
    lo, hi, full, j = last
    ops = args_list[j]
    if full and (lo, hi) == (first, first + count):  # one load wrote the whole operand
        base = ops.s0 // size
        if _is_2d(ops):
            index, pads, end = _fractal_gather(ops.reps, ops.s_pitch, ops.transpose, size, order_key)
            return base, index, pads, 0.0, base + end
        key = (id(ops.index), id(ops.pad_positions), ops.span, order_key)
        gather = shared.get(key)
        if gather is None:
            gather = shared[key] = (*_img2col_gather(ops, count, order, order_key, size),
                                    ops.index, ops.pad_positions)  # the maps kept: their ids are the key
        index, pads, end = gather[:3]
        return base, index, pads, _pad_f32(ops.dtype, ops.pad_value, dtype), base + end
    overlapping = [load for load in loads if load[0] < first + count and load[1] > first]
    # else the loads' element maps, applied in order to the operand's elements, from the last that wrote them all
    covering = [k for k, (lo, hi, full, _) in enumerate(overlapping) if full and lo <= first and hi >= first + count]
    provenance = np.full(count, _UNTOUCHED, np.int64)
    pads: list = []
    for lo, hi, full, j in overlapping[covering[-1] if covering else 0:]:
        at, sources = _load_map(args_list[j], size, pads)
        inside = (at >= first) & (at < first + count)
        provenance[at[inside] - first] = sources[inside]
    sources = provenance[order]
    if (sources == _UNTOUCHED).any():
        return None
    if len(pads) > 1:
        return None  # several pad values in one operand: not planned
    pad = np.flatnonzero(sources < 0) if pads else None
    real = sources[sources >= 0]
    low = int(real.min()) if real.size else 0
    index = sources - low
    if pad is not None:
        index[pad] = 0
    pad_value = _pad_f32_of_bits(pads[0], dtype, size) if pads else 0.0
    return low, index, pad, pad_value, (int(real.max()) + 1) if real.size else low


def _img2col_gather(ops, count: int, order, order_key, size: int) -> tuple:
    """A dense LoadData 3Dv2 that wrote a whole Mmad operand (`count` elements read in `order`, named by
    `order_key`): the gather from the load's source (a Rows when it reads whole C0 blocks), its pad positions
    (None: no pads) and the end of the source elements it reads. Worked out per C0 block from the block numbers
    the load itself takes (machine/gather.py's block_rows_of_map, clipped as its take clips them) when the
    operand's order moves whole blocks (every A of dx), else element by element."""
    c0 = 32 // size
    blocks = block_rows_of_map(ops.index, ops.pad_positions, c0) if ops.span % c0 == 0 else None
    by_block = _block_order(order_key, c0) if blocks is not None else None
    if by_block is None:
        pad = _pads_in_order(ops, count, order)
        index = np.clip(ops.index, 0, ops.span - 1)[order]
        pads = np.flatnonzero(pad) if ops.pad_positions.size else None
        return _as_rows(index, pad, c0), pads, int(index.max()) + 1
    rows = Rows(np.minimum(blocks[by_block], ops.span // c0 - 1), c0)
    pads = None
    if ops.pad_positions.size:
        padded = np.bincount(ops.pad_positions // c0, minlength=len(blocks))[by_block]  # pads per block
        whole = padded == c0
        if (whole | (padded == 0)).all():
            rows.whole = whole  # _whole_pad_blocks' answer
            pads = (np.flatnonzero(whole)[:, None] * c0 + np.arange(c0)).reshape(-1)
        else:
            pads = np.flatnonzero(_pads_in_order(ops, count, order))
    return rows, pads, (int(rows.blocks.max()) + 1) * c0


def _pads_in_order(ops, count: int, order) -> np.ndarray:
    """Whether each of the load's `count` L0 elements, read in `order`, is a pad."""
    pad = np.zeros(count, bool)
    pad[ops.pad_positions] = True
    return pad[order]


@lru_cache(maxsize=64)
def _block_order(order_key, c0: int):
    """The L0 block numbers an Mmad operand (_positions' order, `order_key`) reads, C0 elements a block in
    order, or None when its order does not move whole blocks."""
    runs = _positions(*order_key[1:])[0 if order_key[0] == "A" else 1].reshape(-1, c0)
    starts = runs[:, 0]
    if (starts % c0).any() or not (runs == starts[:, None] + np.arange(c0)).all():
        return None
    return starts // c0


class Rows:
    """An operand gathered as whole C0 blocks of L1 (an img2col of NC1HWC0 reads 32 bytes of one pixel at a
    time): the block numbers from the operand's first L1 element, C0 elements a block."""

    __slots__ = ("blocks", "c0", "whole")

    def __init__(self, blocks, c0):
        self.blocks, self.c0 = blocks, c0
        self.whole = False  # _whole_pad_blocks', once asked for


def _whole_pad_blocks(index: Rows, pads: np.ndarray):
    """Per block of a Rows gather, whether its pads fill it (a bool array), or None when some block is padded in
    part; worked out once per gather (a Rows comes with the same pads wherever it is used: _operand's shared
    gathers)."""
    if index.whole is False:
        padded = np.zeros(len(index.blocks) * index.c0, bool)
        padded[pads] = True
        padded = padded.reshape(-1, index.c0)
        whole = padded.all(axis=1)
        index.whole = whole if (whole | ~padded.any(axis=1)).all() else None
    return index.whole


def _as_rows(index, pad, c0: int):
    """`index` as a Rows when every C0 run of it (pads aside) is one C0 block of the source, else `index`."""
    blocks = block_rows(index, pad, c0)
    return index if blocks is None else Rows(blocks, c0)


@lru_cache(maxsize=64)
def _pad_f32(load_dtype, pad_value, dtype) -> float:
    """A LoadData 3Dv2's pad value as the element the load writes, read as float32 as the Mmad reads it."""
    one = np.zeros(1, load_dtype)
    one[np.zeros(1, np.intp)] = pad_value  # converted as the load writes it
    return to_float32(element_bits(one.view(np.uint8), dtype), dtype)[0]


@lru_cache(maxsize=64)
def _fractal_gather(reps: int, s_pitch: int, transpose: bool, size: int, order_key) -> tuple:
    """A LoadData2D that wrote a whole operand (contiguous fractals): the L1 elements from its source's, in the
    order the Mmad reads the operand (`order_key`: _positions' arguments), as a Rows when they are whole C0
    blocks (an untransposed B: the stem's 16 x 16 weights, 16 block rows instead of 256 elements to take), no
    pads, and their end."""
    dst, src = _load_map_2d(reps, 0, s_pitch, 512, transpose, size)
    order = _positions(*order_key[1:])[0 if order_key[0] == "A" else 1]
    index = src[np.argsort(dst)][order]
    return _as_rows(index, np.zeros(len(index), bool), 32 // size), None, int(index.max()) + 1


def _pad_f32_of_bits(bits: int, dtype, size: int):
    one = np.array([bits], _BITS[size])
    return to_float32(element_bits(one.view(np.uint8), dtype), dtype)[0]


def _load_map(ops, size: int, pads: list) -> tuple:
    """A load's destination elements and, for each, its L1 element or pad code (a slot of `pads`)."""
    if _is_2d(ops):
        dst, src = _load_map_2d(ops.reps, ops.d0, ops.s_pitch, ops.d_pitch, ops.transpose, size)
        return dst, src + ops.s0 // size
    # LoadData3Dv2: an img2col gather, pads at pad_positions
    if ops.written is None:  # taken with mode="clip" (pads read element 0 and are overwritten)
        dst = ops.d0 // size + np.arange(ops.count)
        src = ops.s0 // size + np.clip(ops.index, 0, ops.span - 1)
    else:
        dst = ops.d0 // size + ops.written
        src = ops.s0 // size + ops.index
    if ops.pad_positions.size:
        one = np.zeros(1, ops.dtype)
        one[np.zeros(1, np.intp)] = ops.pad_value  # converted as the load writes it
        bits = int(one.view(_BITS[size])[0])
        if bits not in pads:
            pads.append(bits)
        src = src.copy()
        src[ops.pad_positions] = -2 - pads.index(bits)
    return dst, src


def _load_map_2d(reps: int, d0: int, s_pitch: int, d_pitch: int, transpose: bool, size: int) -> tuple:
    """A LoadData2D's destination elements and the source elements (from its s0) they take: whole fractals,
    each transposed (16-bit) or not."""
    dst, src = _fractal_map(reps, s_pitch, d_pitch, transpose, size)
    return dst + d0 // size, src  # d0 is on an element (_refused)


@lru_cache(maxsize=256)
def _fractal_map(reps: int, s_pitch: int, d_pitch: int, transpose: bool, size: int) -> tuple:
    """_load_map_2d from destination element 0 (read-only arrays: kept for the launch's other loads alike)."""
    r = np.arange(reps).reshape(-1, 1, 1)
    if transpose:  # [r][i][j] <- [r][j][i]
        i, j = np.arange(16).reshape(1, -1, 1), np.arange(16).reshape(1, 1, -1)
        dst = (r * d_pitch + i * 32 + j * 2) // 2
        src = (r * s_pitch + j * 32 + i * 2) // 2
    else:
        e = np.arange(512 // size).reshape(1, 1, -1)
        dst = (r * d_pitch) // size + e
        src = (r * s_pitch) // size + e
    dst, src = dst.reshape(-1), src.reshape(-1)
    dst.flags.writeable = src.flags.writeable = False
    return dst, src


def _load_c(l0c, block) -> np.ndarray:
    """An L0C block (NZ) as its (m, n) float32 sums."""
    address, m1, n1 = block
    nz = l0c[address // 4:address // 4 + n1 * m1 * 256].reshape(n1, m1 * 16, 16)
    return nz.transpose(1, 0, 2).reshape(m1 * 16, n1 * 16)


def _store(l0c, block, c) -> None:
    if block is None:
        return
    address, m1, n1 = block
    nz = l0c[address // 4:address // 4 + n1 * m1 * 256].reshape(n1, m1 * 16, 16)
    nz[...] = c.reshape(m1 * 16, n1, 16).transpose(1, 0, 2)
