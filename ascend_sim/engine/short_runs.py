"""Runs of LoadData / Mmad records too short to plan (replay_data.RunPlan refuses them: fewer than MIN_MMADS
Mmads, on an L1 window as large as what they read), run step by step: their LoadData2D copies that go alike as
one strided copy, and their dense LoadData 3Dv2 gathers, float16 Mmads and other LoadData2D from the template's
operands on the core's buffers (no record's operands made: Conv3DV2 and dw run one to four Mmads between their
L1 or weight loads, so all their runs are short; tests/ascend_sim/engine/test_short_run_steps.py), anything else
as its record.
Each stretch of those steps that are 16-bit and on L1 / L0A / L0B runs as one compiled call
(passes/fast_steps.py: its loads, and its Mmads' operands converted where they stand in the run), then its Mmads'
GEMMs and sums in order (`_fused`; dw's VideoMAE: two img2col loads and an Mmad, 40k times a launch).

C3D conv3a and X3D load each Mmad's B with three LoadData2D in a row (C3D: 8 fractals each, transposed, their
sources 512 bytes apart going down and their destinations 4096 bytes apart going up): 12,672 records on C3D, each
a record's Python and a numpy copy. Consecutive LoadData2D records of one run that copy alike (the same buffers,
pitches, repeats, transpose and dtype, each one's source and destination start a fixed step after the one
before) are one strided copy over a leading axis of those steps, when no two of their destination fractals
overlap (then the order the records wrote them in cannot matter: the source is L1, never the destination, and
is read only). The bytes are those of isa/mte1.py's LoadData2D run record by record; transposed fractals on the
16-bit grid (C3D's B) are copied by a compiled loop (passes/fast_fractals.py's transposed_fractals), numpy's
strided transpose costing about twice as much at C3D's 3 x 8 fractals. A plan's last loads (RunPlan.run) are
joined the same way.

The same for the DataCopies (GM -> a core's buffer) and DataCopyPads (UB -> GM) a template holds in a row
(copy_joins: 3D U-Net down loads its L1 in runs of 17, 4 or 5 at a time alike; C3D's vector cores write dx
rows in runs of DataCopyPad; Conv3DV2 with the weight bypassing L1 loads L0B by LoadData2D(GM), one per K C0
group, VideoMAE's patch embedding 32 a K step alike): run_in_order runs them as one copy at the first one's
place, on a core of its own and only when the race checks found no race (the caller's conditions), so no other
core touches the GM rows they read or write in between; so do a core's consecutive real records (a template's
first call: Conv3DV2's VideoMAE's 28,672 LoadData2D(GM), replay_passes._RealRecords). The bytes are those of isa/mte2.py's DataCopy,
isa/load2d_gm.py's LoadData2D(GM) and isa/vector/datacopy.py's DataCopyPad(UB->GM) (tests:
tests/ascend_sim/engine/test_short_runs.py).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascend_sim.machine.memory import Buffer

FRACTAL = 512  # bytes a LoadData2D repeat moves


class ShortRun:
    """A short run's records as steps (first record of the step, how many records, the function that runs it and
    what that reads): LoadData2D records alike joined into one copy (load2d_copies; a step of one record is a
    copy of one), dense LoadData 3Dv2 gathers and float16 Mmads (into the pass's L0C chains) run from the
    template's operands on the core's buffers; anything else (function None) as its record. The local addresses
    are the same on every core, so no record's operands are made (each costs a tuple and an object a record:
    dw's VideoMAE has 166k in its runs)."""

    __slots__ = ("steps", "fused")

    def __init__(self, steps: list, sizes: dict):
        self.steps = steps
        self.fused = _fused(steps, sizes)  # what runs: the steps, each stretch of 16-bit ones as one compiled call

    @classmethod
    def compiled(cls, args_list: list) -> ShortRun | None:
        """The run's steps from its records' operands (in the run's order; they depend only on local addresses,
        the same on every core), or None when every step would run as its record."""
        steps = []
        j = 0
        while j < len(args_list):
            count, s_step, d_step = _alike_after(args_list, j, _is_load2d, _same_form, _load2d_apart)
            steps.append((j, count, *_how(args_list[j], count, s_step, d_step)))
            j += count
        if not any(step[2] is not None for step in steps):
            return None
        sizes = {v.name: v.capacity for args in args_list if hasattr(args, "_fields") for v in (args[0], args[3])
                 if v.__class__ is Buffer}  # fields 0 and 3: the source and destination, or A and B
        return cls(steps, sizes)

    def run(self, chains, core: int, buffers: dict, records: list, runs, operands, names) -> None:
        """The run's data work on `core` (`buffers`: its buffers by name; `records`: the run's records, indices
        into `runs` / `operands` / `names`; `chains`: the pass's replay_data.L0CChains, which its Mmads go
        into; a run is only made on a core whose buffers are its own). Loads neither read nor write L0C: the
        kept sums stay kept."""
        for j, _, function, step in self.fused:
            if function is None:
                i = records[j]
                chains.run(runs[i], operands[i], core, names[i])
            else:
                function(chains, core, buffers, step)

    def run_loads(self, buffers: dict, records: list, runs, operands) -> None:
        """The steps of a list of loads (RunPlan's last loads: none reads or writes L0C) run in order on a
        core's `buffers`."""
        for j, _, function, step in self.fused:
            if function is None:
                i = records[j]
                runs[i](operands[i])
            else:
                function(None, 0, buffers, step)


def _how(args, count: int, s_step: int, d_step: int) -> tuple:
    """(the function that runs a step of `count` records from one with operands `args`, or None: as its record;
    what the function reads)."""
    fields = getattr(args, "_fields", ())  # the operands types of isa/ told apart by their fields, as in
    # replay_data (the engine sits below isa/)
    if _is_load2d(args) and (count > 1 or args.reps == 1 or args.d_pitch >= FRACTAL):  # no fractal written twice
        return _load2d, (args.sbuf.name, *args[1:3], args.dbuf.name, *args[4:9], count, s_step, d_step)
    if fields[:3] == ("sbuf", "s0", "span") and args.written is None:  # isa/mte1.py's Load3DOperands
        return _load3d, _load3d_step(args)
    if (fields[:1] == ("abuf",) and args.dtype == np.float16 and not args.gemv  # isa/cube.py's MmadOperands
            and not (args.a0 | args.b0) & 1):
        from ascend_sim.machine.mmad import multiply
        from ascend_sim.passes.fast_fractals import _walks, f16_operands  # numba: loaded by the compiled schedule

        bias = None if args.bias_bt is None else (args.bias_bt.name, args.n1 * 16)  # C starts from BT's row
        return _mmad, (args.abuf.name, args.a0 >> 1, args.bbuf.name, args.b0 >> 1, args.cbuf.name,
                       _walks(args.a_nz, args.m1, args.k1, args.n1, args.c0), args.k, args.hf32_rounding,
                       (args.c0_addr, args.m1, args.n1), args.init or bias is not None, bias, f16_operands, multiply)
    return None, None


def _load2d(chains, core: int, buffers: dict, step: tuple) -> None:
    """LoadData2D records alike as one copy (load2d_copies) on a core's `buffers`."""
    s_name, s0, s_pitch, d_name, d0, d_pitch, reps, transpose, dtype, count, s_step, d_step = step
    load2d_copies((buffers[s_name], s0, s_pitch, buffers[d_name], d0, d_pitch, reps, transpose, dtype, None), count,
                  s_step, d_step)


def _load3d_step(ops) -> tuple:
    """isa/mte1.py's LoadData 3Dv2 straight into L0 (Load3DOperands, `written` None) as what _load3d reads: the
    source and destination byte ranges, and its gather (whole C0 blocks when its map moves them)."""
    from ascend_sim.machine.gather import block_rows_of_map

    size = ops.dtype.itemsize
    c0 = 32 // size
    blocks = block_rows_of_map(ops.index, ops.pad_positions, c0) if ops.span % c0 == 0 else None
    return (ops.sbuf.name, ops.s0, ops.s0 + ops.span * size, ops.dbuf.name, ops.d0, ops.d0 + ops.count * size,
            ops.dtype, c0, blocks, ops.index, ops.pad_positions if ops.pad_positions.size else None, ops.pad_value)


def _load3d(chains, core: int, buffers: dict, step: tuple) -> None:
    """The bytes of isa/mte1.py's _load3d_execute (its gather straight into L0) on a core's `buffers`."""
    s_name, s0, s1, d_name, d0, d1, dtype, c0, blocks, index, pads, pad_value = step
    source = buffers[s_name].data[s0:s1].view(dtype)
    values = buffers[d_name].data[d0:d1].view(dtype)
    if blocks is None:
        source.take(index, out=values, mode="clip")
    else:
        source.reshape(-1, c0).take(blocks, axis=0, out=values.reshape(-1, c0), mode="clip")
    if pads is not None:
        values[pads] = pad_value


def _mmad(chains, core: int, buffers: dict, step: tuple) -> None:
    """A float16 Mmad's product (passes/fast_fractals.py's: the same float32 operands and BLAS call as
    isa/cube.py's) on a core's `buffers`, into the chains' sums of its L0C block."""
    a_name, a0, b_name, b0, c_name, walks, k, hf32_rounding, block, init, bias, f16_operands, multiply = step
    a, b = f16_operands(buffers[a_name].data.view(np.uint16), a0, buffers[b_name].data.view(np.uint16), b0, walks)
    chains.add(core, buffers[c_name], block, init, _biased(multiply(a, b, k, hf32_rounding), bias, buffers))


def _biased(prod, bias, buffers: dict):
    """An Mmad's product, plus its bias row when `bias` is (BT's name, n): the float32 adds of isa/cube.py's
    C = bias + A . B, element by element."""
    if bias is not None:
        prod += buffers[bias[0]].data[:4 * bias[1]].view(np.float32)
    return prod


def _fused(steps: list, sizes: dict) -> list:
    """The steps with each stretch of 16-bit loads and float16 Mmads on L1 / L0A / L0B (passes/fast_steps.py's
    buffers) as one step, `_run_fused`: its loads and its Mmads' conversions in one compiled call, then its
    Mmads' GEMMs in order."""
    fused, stretch = [], []
    for step in [*steps, None]:  # None: the end, which closes the last stretch
        row = None if step is None else _program_rows(step[2], step[3], sizes)
        if row is not None:
            stretch.append((step, row))
            continue
        if stretch:
            first, last = stretch[0][0], stretch[-1][0]
            fused.append((first[0], last[0] + last[1] - first[0], _run_fused, _fused_step([r for _, r in stretch])))
            stretch = []
        if step is not None:
            fused.append(step)
    return fused


def _program_rows(function, step, sizes: dict):
    """A step as fast_steps.run_moves' rows and maps ((rows, maps, Mmad or None): an Mmad's two CONVERT rows,
    their walks, and what its GEMM needs), or None when it stays as it is (not 16-bit, another buffer, or a range
    outside its buffers: its own step or record then runs, and faults, as before)."""
    from ascend_sim.passes.fast_steps import BUFFERS, CONVERT, LOAD2D, LOAD3D

    if function is _load2d:
        s_name, s0, s_pitch, d_name, d0, d_pitch, reps, transpose, dtype, count, s_step, d_step = step
        if dtype.itemsize != 2 or (s0 | s_pitch | s_step | d0 | d_pitch | d_step) & 1 or not (
                _inside(sizes, s_name, s0, (count - 1) * s_step, (reps - 1) * s_pitch, FRACTAL)
                and _inside(sizes, d_name, d0, (count - 1) * d_step, (reps - 1) * d_pitch, FRACTAL)):
            return None
        return [(LOAD2D, BUFFERS.index(s_name), s0 >> 1, s_step >> 1, s_pitch >> 1, BUFFERS.index(d_name), d0 >> 1,
                 d_step >> 1, d_pitch >> 1, count, reps, int(transpose))], [], None
    if function is _load3d:
        s_name, s0, s1, d_name, d0, d1, dtype, c0, blocks, index, pads, pad_value = step
        if dtype.itemsize != 2 or (s0 | d0) & 1 or not (_inside(sizes, s_name, s0, s1 - s0)
                                                         and _inside(sizes, d_name, d0, d1 - d0)):
            return None
        count = (d1 - d0) >> 1
        if pads is not None and (pads.min() < 0 or pads.max() >= count):
            return None
        span = (s1 - s0) >> 1
        maps = [_clipped(index, span - 1) if blocks is None else _clipped(blocks, span // c0 - 1)]
        if pads is not None:
            maps.append(np.concatenate([np.array([len(pads)]), pads]))
        return [(LOAD3D, BUFFERS.index(s_name), s0 >> 1, (s1 - s0) >> 1, BUFFERS.index(d_name), d0 >> 1, count, c0,
                 0, int(blocks is not None), -1 if pads is None else 1, _pad_bits(dtype, pad_value))], maps, None
    if function is _mmad:
        a_name, a0, b_name, b0, c_name, walks, k, hf32_rounding, block, init, bias, _, _ = step
        if not (_walk_inside(sizes, a_name, a0, walks[0]) and _walk_inside(sizes, b_name, b0, walks[1])):
            return None
        return ([(CONVERT, BUFFERS.index(a_name), a0, 0, 0), (CONVERT, BUFFERS.index(b_name), b0, 1, 0)],
                list(walks), (c_name, k, hf32_rounding, block, init, bias))
    return None


def _fused_step(rows: list) -> tuple:
    """_run_fused's step from a stretch's _program_rows: the program and its maps, the scratch array it
    converts into (_scratch's) and per Mmad (A and B as float32 views of the scratch, k, HF32 rounding, its L0C
    buffer's name, block and init)."""
    from ascend_sim.passes.fast_steps import CONVERT, LOAD3D, WIDTH

    program, side, size, mmads, at = [], [], 0, [], 0  # size: of `side`'s maps; at: the next free scratch
    # element, on a 64-byte line
    shapes = []  # per Mmad: its A's and B's (first scratch element, rows, columns)
    for these, maps, mmad in rows:
        offsets = []
        for m in maps:
            offsets.append(size)
            side.append(m)
            size += len(m)
        if mmad is None:  # a load (a LoadData 3Dv2's map and pads in `side`)
            op = list(these[0])
            if op[0] == LOAD3D:
                op[8] = offsets[0]
                op[10] = offsets[1] if op[10] >= 0 else -1
            program.append(op + [0] * (WIDTH - len(op)))
            continue
        placed = []
        for (_, buf, first, walk, _), offset in zip(these, offsets):
            rows_, cols = int(maps[walk][8]), int(maps[walk][9])
            program.append([CONVERT, buf, first, offset, at] + [0] * (WIDTH - 5))
            placed.append((at, rows_, cols))
            at += -(-rows_ * cols // 16) * 16
        shapes.append((placed, mmad))
    scratch = _scratch(at)
    as_f32 = scratch.view(np.float32)
    for (a, b), (c_name, k, hf32_rounding, block, init, bias) in shapes:
        a = as_f32[a[0]:a[0] + a[1] * a[2]].reshape(a[1], a[2])
        b = as_f32[b[0]:b[0] + b[1] * b[2]].reshape(b[1], b[2])
        if hf32_rounding is None:  # machine/mmad.py's multiply without HF32: K masked by these slices, then a @ b
            a, b = a[:, :k], b[:k]
        mmads.append((a, b, k, hf32_rounding, c_name, block, init, bias))
    side = np.concatenate(side).astype(np.int64, copy=False) if side else np.zeros(0, np.int64)
    return np.array(program, np.int64).reshape(-1, WIDTH), side, scratch, tuple(mmads)


_SCRATCH = [np.empty(0, np.uint32)]  # the fused steps' converted operands: each step's Mmads read theirs before
# the next step runs, so one array serves all (made larger when a step needs more: a step keeps the one it got)


def _scratch(size: int) -> np.ndarray:
    if _SCRATCH[0].size < size:
        _SCRATCH[0] = np.empty(max(size, 2 * _SCRATCH[0].size), np.uint32)
    return _SCRATCH[0]


def _run_fused(chains, core: int, buffers: dict, step: tuple) -> None:
    """A stretch of steps (_fused) on a core's `buffers`: its loads and conversions in one compiled call, then
    per Mmad machine/mmad.py's multiply of its operands into the chains' sums of its L0C block."""
    from ascend_sim.machine.mmad import multiply
    from ascend_sim.passes.fast_steps import run_moves  # numba: loaded by the compiled schedule

    program, side, scratch, mmads = step
    run_moves(program, side, buffers["L1"].data.view(np.uint16), buffers["L0A"].data.view(np.uint16),
              buffers["L0B"].data.view(np.uint16), scratch)
    for a, b, k, hf32_rounding, c_name, block, init, bias in mmads:
        prod = a @ b if hf32_rounding is None else multiply(a, b, k, hf32_rounding)
        chains.add(core, buffers[c_name], block, init, _biased(prod, bias, buffers))


@lru_cache(maxsize=64)
def _pad_bits(dtype, pad_value) -> int:
    """The 16 bits of a LoadData 3Dv2's pad value as `values[pads] = pad_value` writes it."""
    one = np.zeros(1, dtype)
    one[np.zeros(1, np.intp)] = pad_value
    return int(one.view(np.uint16)[0])


_CLIPPED: dict = {}  # (id(map), last) -> (map, the map clipped): LoadData 3Dv2's maps are shared by the loads
# that decode alike (machine/gather.py keeps them), so most short runs' maps were clipped for an earlier one


def _clipped(index: np.ndarray, last: int) -> np.ndarray:
    """`index` clipped to [0, last] as numpy's take(mode="clip") clips it, as int64."""
    known = _CLIPPED.get((id(index), last))
    if known is None:
        if len(_CLIPPED) >= 256:
            _CLIPPED.clear()
        known = _CLIPPED[id(index), last] = (index, np.clip(index, 0, last).astype(np.int64, copy=False))
    return known[1]


def _inside(sizes: dict, name: str, start: int, *extents: int) -> bool:
    """Bytes start + sums of `extents` (the first and last of each, either sign) stay inside buffer `name`
    (`sizes`: fast_steps' buffers' bytes, by name)."""
    lo = hi = start
    for e in extents:
        if e < 0:
            lo += e
        else:
            hi += e
    return lo >= 0 and hi <= sizes.get(name, 0)


def _walk_inside(sizes: dict, name: str, first: int, walk) -> bool:
    """fast_fractals' walk from element `first` reads only elements of buffer `name`."""
    dims, steps = walk[:4].tolist(), walk[4:8].tolist()
    return _inside(sizes, name, 2 * first, *[2 * (n - 1) * step for n, step in zip(dims, steps)], 2)


def load2d_copies(ops, count: int, s_step: int, d_step: int) -> None:
    """`count` LoadData2D (isa/mte1.py's Load2DOperands `ops` of the first; the k-th's source and destination
    k * s_step and k * d_step bytes later) as one strided copy; their destination fractals do not overlap."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, transpose, dtype, _ = ops
    if transpose and not (s0 | s_pitch | s_step | d0 | d_pitch | d_step) & 1:  # [r][c] of a fractal to [c][r]
        from ascend_sim.passes.fast_fractals import transposed_fractals  # numba: loaded by the compiled schedule

        transposed_fractals(sbuf.data.view(np.uint16), s0 >> 1, s_step >> 1, s_pitch >> 1, dbuf.data.view(np.uint16),
                            d0 >> 1, d_step >> 1, d_pitch >> 1, count, reps)
    elif transpose:
        dbuf.strided(d0, (count, reps, 16, 16), (d_step, d_pitch, 32, 2), dtype)[...] = \
            sbuf.strided(s0, (count, reps, 16, 16), (s_step, s_pitch, 32, 2), dtype).transpose(0, 1, 3, 2)
    else:
        dbuf.strided(d0, (count, reps, FRACTAL), (d_step, d_pitch, 1))[...] = \
            sbuf.strided(s0, (count, reps, FRACTAL), (s_step, s_pitch, 1))


def _alike_after(args_list: list, j: int, kind, same_form, apart) -> tuple:
    """How many records from j on copy alike with j (1 when j is not of the kind or the next does not join),
    and their source and destination steps (`kind`: whether operands are of the kind, `same_form`: two
    operands differ at most in their starts, `apart`: (destination step, the first's operands) -> no
    destination byte written twice)."""
    first = args_list[j]
    if not kind(first) or j + 1 == len(args_list):
        return 1, 0, 0
    second = args_list[j + 1]
    if not (kind(second) and same_form(first, second)):
        return 1, 0, 0
    s_step, d_step = second.s0 - first.s0, second.d0 - first.d0
    if not apart(d_step, first):
        return 1, 0, 0
    count = 2
    while j + count < len(args_list):
        nxt = args_list[j + count]
        if not (kind(nxt) and same_form(first, nxt) and nxt.s0 == first.s0 + count * s_step
                and nxt.d0 == first.d0 + count * d_step):
            break
        count += 1
    return count, s_step, d_step


def _is_load2d(args) -> bool:
    fields = getattr(args, "_fields", None)
    return fields is not None and len(fields) == 10 and fields[2] == "s_pitch" and fields[7] == "transpose"


def _same_form(a, b) -> bool:
    """Two LoadData2D operands that differ at most in their source and destination starts (buffers by name:
    a run's records come from templates made on other cores)."""
    return (a.sbuf.name == b.sbuf.name and a.dbuf.name == b.dbuf.name != a.sbuf.name and a.s_pitch == b.s_pitch
            and a.d_pitch == b.d_pitch and a.reps == b.reps and a.transpose == b.transpose and a.dtype == b.dtype)


def _load2d_apart(d_step: int, ops) -> bool:
    return _apart(d_step, ops.d_pitch, ops.reps)


def _apart(d_step: int, d_pitch: int, reps: int) -> bool:
    """Loads d_step bytes apart, each of `reps` fractals d_pitch apart, write no fractal twice: each load's
    fractals are apart, and each load's span fits in the step (a sufficient rule; interleaved loads, which it
    refuses, run record by record)."""
    return (reps == 1 or d_pitch >= FRACTAL) and abs(d_step) >= (reps - 1) * d_pitch + FRACTAL


# specs whose semantics copy rows of blen bytes (LoadData2D(GM): repeatTimes fractals, rows of 512 bytes)
JOINED_COPIES = frozenset(("DataCopy", "DataCopyPad(UB->GM)", "LoadData2D(GM)"))


def copy_joins(names: list, args_list: list):
    """Per record of a template (`names`: their specs' names, `args_list`: their operands): k > 1 at the first of
    k consecutive copies of one spec of JOINED_COPIES (GM -> a core's buffer or back, rows of blen bytes) that
    copy alike, -1 at the k - 1 after it, 0 elsewhere (3D U-Net down loads L1 in runs of 17 DataCopies, 4 or 5
    at a time alike; C3D's vector cores write dx to GM in runs of DataCopyPad); None when none join.
    Consecutive in the template: no record of the core comes between them, and on a run whose race checks
    found none no other core's record can read or write the GM rows they touch in between either (the
    caller's condition), so they may all run at the first one's place."""
    joins = [0] * len(args_list)
    j = 0
    while j < len(args_list):
        count = 1
        if names[j] in JOINED_COPIES and j + 1 < len(names) and names[j + 1] == names[j]:
            count = _alike_after(args_list, j, _is_gm_copy, _same_copy_form, _copies_apart)[0]
        if count > 1:
            joins[j:j + count] = [count] + [-1] * (count - 1)
        j += count
    return joins if any(joins) else None


def copies(ops, count: int, s_step: int, d_step: int) -> None:
    """`count` DataCopy or DataCopyPad(UB->GM) (rows of blen bytes; `ops` the first's operands, the k-th's
    source and destination k * s_step and k * d_step bytes later) as one strided copy; their destination rows
    do not overlap."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, rows, blen, _ = ops
    dbuf.strided(d0, (count, rows, blen), (d_step, d_pitch, 1))[...] = \
        sbuf.strided(s0, (count, rows, blen), (s_step, s_pitch, 1))


def _is_gm_copy(args) -> bool:
    fields = getattr(args, "_fields", None)
    return (fields is not None and len(fields) == 9 and fields[6:8] == ("count", "blen")
            and args.sbuf.name.startswith("GM:") != args.dbuf.name.startswith("GM:"))


def _same_copy_form(a, b) -> bool:
    return (a.sbuf.name == b.sbuf.name and a.dbuf.name == b.dbuf.name and a.s_pitch == b.s_pitch
            and a.d_pitch == b.d_pitch and a.count == b.count and a.blen == b.blen)


def _copies_apart(d_step: int, ops) -> bool:
    """Copies d_step bytes apart write no byte twice: each one's rows are apart, and its span fits in the step."""
    return ops.d_pitch >= ops.blen and abs(d_step) >= (ops.count - 1) * ops.d_pitch + ops.blen
