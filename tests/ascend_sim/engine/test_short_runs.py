"""Short runs' LoadData2D records, and a template's consecutive DataCopies, joined into one strided copy
(ascend_sim/engine/short_runs.py) against the same records run one by one on isa/mte1.py's LoadData2D and
isa/mte2.py's DataCopy (and isa/load2d_gm.py's LoadData2D(GM)) semantics (every byte of the destination buffer),
which of them join, and dx and Conv3DV2 layers' runs with and without the joins (every byte of every core's
buffers, the result and the cycles; the exact engine's result)."""
import numpy as np
import pytest
from core_buffers import keep_buffers_after_passes

from ascend_sim.engine import replay_data, replay_passes, short_runs
from ascend_sim.engine.replay_data import L0CChains
from ascend_sim.engine.short_runs import ShortRun, copies, copy_joins, load2d_copies
from ascend_sim.isa.mte1 import Load2DOperands, _load2d_execute
from ascend_sim.isa.mte2 import CopyOperands, _datacopy_execute
from ascend_sim.machine.memory import Buffer
from ascend_sim.passes import fast_steps
from ascend_sim.isa.load2d_gm import LOAD_DATA_2D_GM
from kernels import conv3d_backprop_input_v2_run, conv3d_v2_run

F16 = np.dtype(np.float16)


def _buffers(seed: int):
    rng = np.random.default_rng(seed)
    l1, l0b = Buffer("L1", 64 * 1024, 32), Buffer("L0B", 64 * 1024, 512)
    l1.data[:] = rng.integers(0, 256, l1.capacity, dtype=np.uint8)
    l0b.data[:] = rng.integers(0, 256, l0b.capacity, dtype=np.uint8)
    return l1, l0b


def _loads(l1, l0b, count, s0, s_step, d0, d_step, s_pitch, d_pitch, reps, transpose):
    return [Load2DOperands(l1, s0 + k * s_step, s_pitch, l0b, d0 + k * d_step, d_pitch, reps, transpose, F16,
                           reps * 512) for k in range(count)]


# (count, s0, s_step, d0, d_step, s_pitch, d_pitch, reps, transpose): C3D's B loads (8 fractals, transposed,
# sources going down), X3D's (1 fractal each), plain copies, gaps between destination fractals, a source off
# the 16-bit grid (transposed by numpy, not by the compiled copy)
FORMS = [(3, 20480, -512, 0, 4096, 4608, 512, 8, True), (3, 15744, -512, 0, 512, 4608, 512, 1, True),
         (4, 1024, 2048, 512, 4096, 512, 1024, 4, False), (2, 0, 512, 8192, -8192, 1024, 512, 16, True),
         (2, 1025, 512, 0, 4096, 512, 512, 2, True)]


@pytest.mark.parametrize("form", FORMS)
def test_joined_loads_write_the_bytes_of_the_records_one_by_one(form):
    l1, l0b = _buffers(1)
    loads = _loads(l1, l0b, *form)
    for ops in loads:
        _load2d_execute(replay_passes._Operands(ops, ()))
    expected = l0b.data.copy()
    l1, l0b = _buffers(1)
    loads = _loads(l1, l0b, *form)
    load2d_copies(loads[0], len(loads), form[2], form[4])
    assert np.array_equal(l0b.data, expected)


@pytest.mark.parametrize("form, compiled", [(FORMS[0], True), (FORMS[3], True), (FORMS[4], False)])
def test_transposed_loads_on_the_16_bit_grid_take_the_compiled_copy(monkeypatch, form, compiled):
    from ascend_sim.passes import fast_fractals

    calls = []
    monkeypatch.setattr(fast_fractals, "transposed_fractals",
                        lambda *args, copy=fast_fractals.transposed_fractals: calls.append(args) or copy(*args))
    l1, l0b = _buffers(3)
    loads = _loads(l1, l0b, *form)
    load2d_copies(loads[0], len(loads), form[2], form[4])
    assert len(calls) == compiled


def test_a_transposed_fractal_against_numpy():
    """One 16 x 16 fp16 fractal, transposed, read by plain numpy from L1 and L0B."""
    l1, l0b = _buffers(2)
    load2d_copies(Load2DOperands(l1, 1024, 512, l0b, 2048, 512, 1, True, F16, 512), 2, 512, 512)
    for k in range(2):
        src = l1.data[1024 + 512 * k:1536 + 512 * k].view(np.float16).reshape(16, 16)
        dst = l0b.data[2048 + 512 * k:2560 + 512 * k].view(np.float16).reshape(16, 16)
        assert np.array_equal(dst.view(np.uint16), src.T.view(np.uint16))


def _steps(args_list):
    """(first record, records) of each step of the run's ShortRun, or None."""
    plan = ShortRun.compiled(args_list)
    return None if plan is None else [step[:2] for step in plan.steps]


def test_which_records_join():
    l1, l0b = _buffers(3)
    c3d = _loads(l1, l0b, *FORMS[0])
    other = object()  # a record that is neither a LoadData2D, a LoadData 3Dv2 nor an Mmad: run as itself
    assert _steps([other, *c3d, other]) == [(0, 1), (1, 3), (4, 1)]
    assert _steps([other, *c3d[:2], other, c3d[2]]) == [(0, 1), (1, 2), (3, 1), (4, 1)]
    # not a progression: the third does not join
    assert _steps([c3d[0], c3d[1], c3d[0]._replace(s0=0)]) == [(0, 2), (2, 1)]
    # another form (repeats, transpose, buffers) does not join
    assert _steps([c3d[0], c3d[1]._replace(reps=4)]) == [(0, 1), (1, 1)]
    assert _steps([c3d[0], c3d[1]._replace(transpose=False)]) == [(0, 1), (1, 1)]
    assert _steps([c3d[0], c3d[1]._replace(dbuf=Buffer("L0A", 64 * 1024, 512))]) == [(0, 1), (1, 1)]
    # destinations that interleave or overlap (the later record's bytes would have to win) run one by one
    assert _steps(_loads(l1, l0b, 3, 0, 512, 0, 512, 512, 1024, 2, True)) == [(0, 1), (1, 1), (2, 1)]
    assert _steps(_loads(l1, l0b, 3, 0, 512, 0, 2048, 512, 512, 8, True)) == [(0, 1), (1, 1), (2, 1)]
    assert _steps([other]) is None
    # a load whose own fractals overlap (pitch under a fractal) runs as its record
    overlapping = _loads(l1, l0b, 1, 0, 0, 0, 0, 512, 256, 2, False)
    assert [step[2] for step in ShortRun.compiled([overlapping[0], c3d[0]]).steps] == [None, short_runs._load2d]


def test_a_short_run_gives_the_bytes_of_its_records():
    """A run of the C3D form (three joined loads into L0B, another load between) through ShortRun.run and
    L0CChains, against each record's semantics one by one."""
    l1, l0b = _buffers(4)
    loads = _loads(l1, l0b, *FORMS[0]) + _loads(l1, l0b, *FORMS[2])
    runs = [_load2d_execute] * len(loads)
    operands = [replay_passes._Operands(ops, ()) for ops in loads]
    for run, ops in zip(runs, operands):
        run(ops)
    expected = l0b.data.copy()
    l1, l0b = _buffers(4)
    loads = _loads(l1, l0b, *FORMS[0]) + _loads(l1, l0b, *FORMS[2])
    operands = [replay_passes._Operands(ops, ()) for ops in loads]
    plan = ShortRun.compiled(loads)
    assert [step[:2] for step in plan.steps] == [(0, 3), (3, 4)]
    plan.run(L0CChains([True]), 0, {"L1": l1, "L0A": Buffer("L0A", 64 * 1024, 512), "L0B": l0b},  # a cube core's
             list(range(len(loads))), runs, operands,
             [False] * len(loads))
    assert np.array_equal(l0b.data, expected)


def _dx(engine, monkeypatch, joined=True):
    """A 3x3x3 dx layer's (result bytes, cycles, every core's local buffers after the data pass, joined
    copies)."""
    rng = np.random.default_rng(0)
    x, cout = (1, 32, 4, 8, 8), 32
    dy = rng.standard_normal((1, cout, 4, 8, 8)).astype(np.float16)
    w = rng.standard_normal((cout, 32, 3, 3, 3)).astype(np.float16)
    buffers, copies = [], []
    with monkeypatch.context() as m:
        m.setattr(replay_data, "SHORT_RUN_IMAGE", float("inf"))  # its short runs are not planned
        if not joined:
            m.setattr(ShortRun, "compiled", classmethod(lambda cls, args_list: None))
        real_copies = short_runs.load2d_copies
        keep_buffers_after_passes(m, buffers)
        m.setattr(short_runs, "load2d_copies", lambda *args: copies.append(args[1]) or real_copies(*args))

        def moves(program, *args, real=fast_steps.run_moves):  # the joined loads of fused steps, counted alike
            copies.extend(program[program[:, 0] == fast_steps.LOAD2D, 9].tolist())
            real(program, *args)
        m.setattr(fast_steps, "run_moves", moves)
        run = conv3d_backprop_input_v2_run(x, w, dy, strides=(1, 1, 1, 1, 1), pads=(1, 1, 1, 1, 1, 1),
                                           data_format="NCDHW", engine=engine)
    return run.result.tobytes(), run.report.cycles, buffers, copies


def test_a_dx_layer_joins_its_loads_with_the_bytes_of_the_records(monkeypatch):
    result, cycles, buffers, copies = _dx("replay", monkeypatch)
    assert copies and min(copies) > 1
    assert replay_data.MIN_MMADS > 1
    one_by_one = _dx("replay", monkeypatch, joined=False)
    assert not one_by_one[3]
    assert buffers and buffers == one_by_one[2]
    assert (result, cycles) == one_by_one[:2]
    assert result == _dx("exact", monkeypatch)[0]


def _gm_copies(count, s_step, d_step, rows, blen, s_pitch, d_pitch, d0=256):
    rng = np.random.default_rng(5)
    gm, l1 = Buffer("GM:out_backprop", 1 << 16, 1), Buffer("L1", 1 << 16, 32)
    gm.data[:] = rng.integers(0, 256, gm.capacity, dtype=np.uint8)
    l1.data[:] = rng.integers(0, 256, l1.capacity, dtype=np.uint8)
    return [CopyOperands(gm, 1024 + k * s_step, s_pitch, l1, d0 + k * d_step, d_pitch, rows, blen, rows * blen)
            for k in range(count)]


# (count, s_step, d_step, rows, blen, s_pitch, d_pitch): U-Net's L1 loads (32 rows of 32 bytes, destination rows
# 64 bytes apart), one row each, destinations going down
COPY_FORMS = [(4, 1024, 4032, 32, 32, 32, 64), (5, 96, 64, 1, 64, 64, 64), (3, 2048, -2048, 8, 128, 256, 256)]


@pytest.mark.parametrize("form", COPY_FORMS)
def test_joined_data_copies_write_the_bytes_of_the_records_one_by_one(form):
    ops = _gm_copies(*form, d0=8192)
    for args in ops:
        _datacopy_execute(replay_passes._Operands(args, ()))
    expected = ops[0].dbuf.data.copy()
    ops = _gm_copies(*form, d0=8192)
    copies(ops[0], len(ops), form[1], form[2])
    assert np.array_equal(ops[0].dbuf.data, expected)


def test_joined_weight_loads_from_gm_write_the_bytes_of_the_records_one_by_one():
    """LoadData2D(GM) (isa/load2d_gm.py: repeatTimes fractals, the same CopyOperands as DataCopy with 512-byte rows)
    in Conv3DV2's form with the weight bypassing L1 (VideoMAE's: one load per K C0 group, 2 fractals each, the
    sources 768 couts' fractals apart, the destinations 2 fractals apart), joined against run one by one."""
    form = (32, 24576, 1024, 2, 512, 512, 512)
    gm, l0b = Buffer("GM:filter", 1 << 20, 1), Buffer("L0B", 1 << 16, 512)
    gm.data[:] = np.random.default_rng(6).integers(0, 256, gm.capacity, dtype=np.uint8)
    ops = [args._replace(sbuf=gm, dbuf=l0b) for args in _gm_copies(*form, d0=0)]
    assert copy_joins([LOAD_DATA_2D_GM.name] * len(ops), ops) == [len(ops)] + [-1] * (len(ops) - 1)
    for args in ops:
        LOAD_DATA_2D_GM.execute(replay_passes._Operands(args, ()))
    expected = ops[0].dbuf.data.copy()
    ops[0].dbuf.data[:] = 0
    copies(ops[0], len(ops), form[1], form[2])
    assert np.array_equal(ops[0].dbuf.data, expected)


def test_which_data_copies_join():
    four = _gm_copies(*COPY_FORMS[0])
    names = ["DataCopy"] * 4
    assert copy_joins(["SetFlag", *names, "WaitFlag"], [None, *four, None]) == [0, 4, -1, -1, -1, 0]
    assert copy_joins(["DataCopy", "DataCopy(GM->UB)", "DataCopy", "DataCopy"], four) == [0, 0, 2, -1]
    # another form, no progression, destinations overlapping (the later copy's bytes would have to win)
    assert copy_joins(names[:2], [four[0], four[1]._replace(count=16)]) is None
    assert copy_joins(names[:3], [four[0], four[1], four[1]]) == [2, -1, 0]
    assert copy_joins(names[:2], _gm_copies(2, 1024, 1024, 32, 32, 32, 64)) is None
    # copies out (DataCopyPad UB -> GM) join alike; a spec not known to copy rows, or GM to GM, never
    out = [args._replace(sbuf=args.dbuf, dbuf=args.sbuf) for args in four]
    assert copy_joins(["DataCopyPad(UB->GM)"] * 4, out) == [4, -1, -1, -1]
    assert copy_joins(["DataCopyPad(UB->GM)", "DataCopy"], out[:2]) is None
    assert copy_joins(["DataCopy(UB->GM)"] * 4, out) is None
    assert copy_joins(names, [args._replace(dbuf=args.sbuf) for args in four]) is None


def _unet(engine, monkeypatch, joined=True, check_races=True):
    """A shrunk 3D U-Net down layer (stride 2): (result bytes, cycles, every core's local buffers after the data
    pass, the joined copies' sizes)."""
    rng = np.random.default_rng(0)
    x = (1, 32, 4, 16, 16)
    dy = rng.standard_normal((1, 32, 2, 8, 8)).astype(np.float16)
    w = rng.standard_normal((32, 32, 3, 3, 3)).astype(np.float16)
    return _captured(monkeypatch, joined, lambda: conv3d_backprop_input_v2_run(
        x, w, dy, strides=(1, 1, 2, 2, 2), pads=(1, 1, 1, 1, 1, 1), data_format="NCDHW", engine=engine,
        check_races=check_races))


def _captured(monkeypatch, joined, launch):
    """(result bytes, cycles, every core's local buffers after the data pass, the joined copies' sizes) of
    launch(), the copy joins on or off."""
    buffers, joins = [], []
    with monkeypatch.context() as m:
        if not joined:
            m.setattr(short_runs, "copy_joins", lambda names, args_list: None)
        real_copies = replay_data.copies
        keep_buffers_after_passes(m, buffers)
        m.setattr(replay_data, "copies", lambda *args: joins.append(args[1]) or real_copies(*args))
        run = launch()
    return run.result.tobytes(), run.report.cycles, buffers, joins


def _joins_write_what_the_records_write(run_of):
    """run_of(engine, joined) -> _captured's tuple: copies were joined, the buffers, result and cycles are those
    of the records one by one, and the result is the exact engine's; returns (result, cycles, buffers)."""
    result, cycles, buffers, joins = run_of("replay", True)
    assert joins and min(joins) > 1
    one_by_one = run_of("replay", False)
    assert not one_by_one[3]
    assert buffers and buffers == one_by_one[2]
    assert (result, cycles) == one_by_one[:2]
    assert result == run_of("exact", True)[0]
    return result, cycles, buffers


def test_a_strided_layer_joins_its_data_copies_with_the_bytes_of_the_records(monkeypatch):
    result, cycles, buffers = _joins_write_what_the_records_write(
        lambda engine, joined: _unet(engine, monkeypatch, joined))
    # without race checks nothing says no other core writes the rows in between: one by one
    unchecked = _unet("replay", monkeypatch, check_races=False)
    assert not unchecked[3] and unchecked[:3] == (result, cycles, buffers)


def _patch_embedding(engine, monkeypatch, joined=True):
    """A small VideoMAE-like patch embedding on Conv3DV2 (kernel = stride = 2x16x16, 3 -> 64 channels; the weight
    goes GM -> L0B by LoadData2D(GM), one per K C0 group of a K step): (result bytes, cycles, every core's local
    buffers after the data pass, the joined copies' sizes)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 4, 64, 64)).astype(np.float16)
    w = rng.standard_normal((64, 3, 2, 16, 16)).astype(np.float16)
    b = rng.standard_normal(64).astype(np.float16)
    return _captured(monkeypatch, joined,
                     lambda: conv3d_v2_run(x, w, b, strides=(1, 1, 2, 16, 16), pads=(0,) * 6, engine=engine))


def test_a_patch_embedding_joins_its_weight_loads_with_the_bytes_of_the_records(monkeypatch):
    _joins_write_what_the_records_write(lambda engine, joined: _patch_embedding(engine, monkeypatch, joined))
