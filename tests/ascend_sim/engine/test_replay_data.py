"""The batched data work of replayed blocks (ascend_sim/engine/replay_data.py) against the same records run one
by one: every result byte, cycle and byte of every core's local buffers (L1, L0A, L0B, L0C, ...) after the run,
and the exact engine's result bytes; each case checks that runs were really planned and run."""
import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.engine import replay_data, replay_passes, short_runs
from ascend_sim.isa.cube import MmadOperands
from ascend_sim.isa.mte1 import Load2DOperands, Load3DOperands
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.memory import Buffer
from ascend_sim.record import Record
from kernels import conv3d_backprop_input_v2_run

# (x, cout, kernel, strides, pads): a stem like R3D's (3 channels, 7x7, stride 2: long runs of Mmads on one L1),
# and a 3x3x3 layer with short runs
SHAPES = [((1, 3, 2, 14, 14), 16, (1, 7, 7), (1, 2, 2), (0, 0, 3, 3, 3, 3)),
          ((1, 32, 4, 8, 8), 32, (3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1))]
CASES = [(shape, dtype, False) for shape in SHAPES for dtype in ("float16", "bfloat16", "float32")]
CASES += [(SHAPES[1], "float32", True)]  # HF32
# fp32 on the stem: its Mmads read L0 bytes loaded before the run (half-used b32 fractals), so the runs fall back
FALLS_BACK = [(SHAPES[0], "float32", False)]
SMALL_3X3X3 = (SHAPES[1], "float16", False)


def _dy_shape(x, cout, kernel, strides, pads):
    out = [(size + pads[2 * i] + pads[2 * i + 1] - k) // s + 1
           for i, (size, k, s) in enumerate(zip(x[2:], kernel, strides))]
    return (x[0], cout, *out)


def _run(case, engine, monkeypatch, batched=True, min_mmads=None):
    """(result bytes, cycles, every core's local buffers after the data pass, plans run)."""
    (x, cout, kernel, strides, pads), dtype_name, hf32 = case
    dtype = DTYPES[dtype_name]
    rng = np.random.default_rng(0)
    dy = rng.standard_normal(_dy_shape(x, cout, kernel, strides, pads)).astype(dtype)
    w = rng.standard_normal((cout, x[1], *kernel)).astype(dtype)
    buffers, plans = [], []
    with monkeypatch.context() as m:
        if min_mmads is not None:
            m.setattr(replay_data, "MIN_MMADS", min_mmads)
        if not batched:
            m.setattr(replay_data.RunPlan, "compile", classmethod(lambda cls, *args: None))
        real_run, real_plan_run = replay_passes.run, replay_data.RunPlan.run

        def passes(chip, cores, s):
            done = real_run(chip, cores, s)
            buffers.append([(c, name, buf.data.tobytes()) for c, core in enumerate(cores)
                            for name, buf in sorted(core.buffers.items()) if buf.data is not None])
            return done

        def plan_run(plan, *args):
            plans.append(plan)
            return real_plan_run(plan, *args)

        m.setattr(replay_passes, "run", passes)
        m.setattr(replay_data.RunPlan, "run", plan_run)
        run = conv3d_backprop_input_v2_run(x, w, dy, strides=(1, 1, *strides), pads=pads, data_format="NCDHW",
                                           enable_hf32=hf32, engine=engine)
    return run.result.tobytes(), run.report.cycles, buffers, len(plans)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0][2]}-{c[1]}{'-hf32' if c[2] else ''}")
def test_batched_runs_give_the_bytes_of_the_records_run_one_by_one(case, monkeypatch):
    """Every run planned (MIN_MMADS 1), against no run planned and the exact engine."""
    result, cycles, buffers, plans = _run(case, "replay", monkeypatch, min_mmads=1)
    one_by_one = _run(case, "replay", monkeypatch, batched=False)
    assert plans > 0 or case in FALLS_BACK
    assert one_by_one[3] == 0
    assert buffers and buffers == one_by_one[2]
    assert (result, cycles) == one_by_one[:2]
    assert result == _run(case, "exact", monkeypatch)[0]


def test_the_stem_plans_its_runs_at_the_default_threshold(monkeypatch):
    result, cycles, buffers, plans = _run(CASES[0], "replay", monkeypatch)
    assert plans > 0
    assert (result, cycles, buffers) == _run(CASES[0], "replay", monkeypatch, batched=False)[:3]


@pytest.mark.parametrize("batch, pad_block", [(1, True), (3, True), (3, False)])
def test_the_stem_s_mmads_run_in_batches(batch, pad_block, monkeypatch):
    """A plan multiplies up to BATCH consecutive Mmads in one stack (BATCH 3 here: some batches are full, some
    end early), their pads from the pad block or written per element at each Mmad's place in the stack: the
    same bytes as the records run one by one."""
    sizes, padded = [], []
    real = replay_data._batches

    def batches(steps):
        made = real(steps)
        sizes.extend(b[8][0] for b in made)  # the stack of A operands: (Mmads, m, k)
        padded.extend(b[8][0] > 1 and b[2] is not None for b in made)
        return made
    monkeypatch.setattr(replay_data, "BATCH", batch)
    monkeypatch.setattr(replay_data, "_batches", batches)
    if not pad_block:
        monkeypatch.setattr(replay_data, "_pad_row", lambda operands: None)
    result, cycles, buffers, plans = _run(CASES[0], "replay", monkeypatch)
    assert plans > 0 and max(sizes) == batch
    assert any(padded) != pad_block
    assert (result, cycles, buffers) == _run(CASES[0], "replay", monkeypatch, batched=False)[:3]


def test_a_template_s_first_call_is_planned_too(monkeypatch):
    """A run holding real records (a unit's first call, still in the stream) is planned, by content: the bytes
    of the records run one by one."""
    real_records = []
    real_run = replay_data.RunPlan.run

    def plan_run(plan, buffers, records, runs, operands):
        real_records.append(any(operands.made[i].__class__ is Record for i in records))
        return real_run(plan, buffers, records, runs, operands)
    monkeypatch.setattr(replay_data.RunPlan, "run", plan_run)
    result, cycles, buffers, plans = _run(CASES[0], "replay", monkeypatch)
    assert any(real_records) and not all(real_records)
    assert (result, cycles, buffers) == _run(CASES[0], "replay", monkeypatch, batched=False)[:3]


def test_a_short_run_is_left_to_the_records(monkeypatch):
    """Runs of fewer than MIN_MMADS Mmads are not planned (they would cost more than the records), unless their
    Mmads read SHORT_RUN_IMAGE times the L1 window their loads read."""
    monkeypatch.setattr(replay_data, "MIN_MMADS", 10 ** 6)
    monkeypatch.setattr(replay_data, "SHORT_RUN_IMAGE", float("inf"))
    assert _run(CASES[0], "replay", monkeypatch)[3] == 0


def test_a_short_run_reading_a_small_window_is_planned(monkeypatch):
    """The 3x3x3 layer's runs (3 Mmads) read a small L1 window many times over (img2col): planned, with the
    bytes of the records run one by one, and the exact engine's result."""
    assert replay_data.MIN_MMADS > 3
    result, cycles, buffers, plans = _run(SMALL_3X3X3, "replay", monkeypatch)
    assert plans > 0
    one_by_one = _run(SMALL_3X3X3, "replay", monkeypatch, batched=False)
    assert one_by_one[3] == 0
    assert (result, cycles, buffers) == one_by_one[:3]
    assert result == _run(SMALL_3X3X3, "exact", monkeypatch)[0]
    monkeypatch.setattr(replay_data, "SHORT_RUN_IMAGE", float("inf"))
    assert _run(SMALL_3X3X3, "replay", monkeypatch)[3] == 0  # the plans were the window's


def test_a_plan_s_last_loads_join_their_copies(monkeypatch):
    """The 3x3x3 layer's runs, all planned, leave their last B loads (LoadData2D alike) in L0B: run as joined
    copies (short_runs.ShortRun), with the bytes of the records run one by one."""
    joined = []
    real = short_runs.ShortRun.run_loads
    monkeypatch.setattr(short_runs.ShortRun, "run_loads",
                        lambda self, *args: joined.append(max(step[1] for step in self.steps)) or real(self, *args))
    result, cycles, buffers, plans = _run(SMALL_3X3X3, "replay", monkeypatch, min_mmads=1)
    assert plans > 0 and joined and max(joined) > 1
    assert (result, cycles, buffers) == _run(SMALL_3X3X3, "replay", monkeypatch, batched=False)[:3]


def test_which_short_runs_read_a_small_window():
    """_window_pays from the operands: X3D's run (a 2,688-element img2col window read as 12,288 elements an
    Mmad) pays, C3D's (a window as large as what its Mmads read) does not, nor a load from outside L1."""
    l1, l0a, l0b, l0c = (Buffer(name, 1 << 20, 32) for name in ("L1", "L0A", "L0B", "L0C"))
    f16 = np.dtype(np.float16)

    def run(a_span, b_s0, mmads):
        a = Load3DOperands(l1, 0, a_span, l0a, 0, 12288, 12288, f16, None, None, None, 0, 1, 1, 24576)
        b = Load2DOperands(l1, b_s0, 4608, l0b, 0, 512, 1, True, f16, 512)
        m = MmadOperands(l0a, 0, 24576, l0b, 0, 1536, l0c, 0, 16384, f16, 256, 48, 16, 1, 3, 16, True, False,
                         "float16", None, None, False)
        return [a, b, b, b, m] * mmads

    assert replay_data._window_pays(run(2688, 15744, 3))
    assert not replay_data._window_pays(run(29568, 132224, 3))
    assert not replay_data._window_pays(run(2688, 15744, 3)[1:4])  # no Mmad
    far = run(2688, 15744, 3)
    far[0] = far[0]._replace(sbuf=l0b)
    assert not replay_data._window_pays(far)


def test_the_buffers_cores_share_are_known_without_race_checks():
    """run_semantics leaves the cores holding one of chip.shared_buffers to their records one by one: the chip
    knows them when it checks no races too."""
    chip = Chip("Ascend950PR_9589", check_races=False)
    chip.launch(lambda: None, 1, kernel_type="MIX_AIC_1_2")
    assert chip.shared_buffers == {(0, "L1"), (1, "UB")}  # AIC 0's L1 (both AIVs), AIV 0's UB (the AIC)
    a2 = Chip("Ascend910B2", check_races=False)
    a2.launch(lambda: None, 2)
    assert a2.shared_buffers == frozenset()


def test_runs_of_the_same_operands_share_one_plan(monkeypatch):
    """RunPlan.compiled compiles a run's operands once per content: a run of a 3x7x7 stem's is planned with the
    bytes of the records run one by one, the same operands (copied: other objects) get the same plan, operands
    that differ in one field a plan of their own. (Runs of the same template records share their plan before
    it: run_in_order keys plans by the records' origins. On the full R3D stem 78 runs to plan a launch still
    come to 21 contents; this small stem's runs share none.)"""
    case = (((1, 3, 4, 28, 28), 16, (3, 7, 7), (1, 2, 2), (1, 1, 3, 3, 3, 3)), "float16", False)
    calls: dict = {"compiled": 0, "compile": []}
    real_compiled, real_compile = replay_data.RunPlan.compiled.__func__, replay_data.RunPlan.compile.__func__

    def compiled(cls, args_list, shared):
        calls["compiled"] += 1
        return real_compiled(cls, args_list, shared)

    def compile(cls, args_list, shared):
        calls["compile"].append(args_list)
        return real_compile(cls, args_list, shared)
    monkeypatch.setattr(replay_data.RunPlan, "compiled", classmethod(compiled))
    monkeypatch.setattr(replay_data.RunPlan, "compile", classmethod(compile))
    result, cycles, buffers, plans = _run(case, "replay", monkeypatch)
    assert plans > 0 and 0 < len(calls["compile"]) <= calls["compiled"]
    assert (result, cycles, buffers) == _run(case, "replay", monkeypatch, batched=False)[:3]
    args_list = calls["compile"][0]
    shared: dict = {}
    plan = real_compiled(replay_data.RunPlan, args_list, shared)
    assert plan is not None
    assert real_compiled(replay_data.RunPlan, [args._replace() for args in args_list], shared) is plan
    mmad = next(j for j, args in enumerate(args_list) if args._fields[0] == "abuf")
    other = list(args_list)
    other[mmad] = other[mmad]._replace(init=not other[mmad].init)
    assert real_compiled(replay_data.RunPlan, other, shared) is not plan


def test_the_stem_gathers_its_pads_from_a_pad_block(monkeypatch):
    """The stem's img2col pads whole C0 blocks with one value: its plans read them from a block of that value
    after the L1 window (_pad_row), with the bytes of the records run one by one."""
    pad_rows = []
    real = replay_data._pad_row
    monkeypatch.setattr(replay_data, "_pad_row", lambda operands: pad_rows.append(real(operands)) or pad_rows[-1])
    for case in CASES[:2]:  # float16, bfloat16
        pad_rows.clear()
        result, cycles, buffers, plans = _run(case, "replay", monkeypatch)
        assert plans > 0 and any(row is not None for row in pad_rows)
        assert (result, cycles, buffers) == _run(case, "replay", monkeypatch, batched=False)[:3]


def _calls_of(monkeypatch, name: str) -> list:
    """Every (arguments, result) of replay_data's function `name` from now on."""
    calls = []
    real = getattr(replay_data, name)

    def recorded(*args):
        made = real(*args)
        calls.append((args, made))
        return made
    monkeypatch.setattr(replay_data, name, recorded)
    return calls


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[3], CASES[5]], ids=["stem-fp16", "stem-bf16", "3x3-fp16",
                                                                              "3x3-fp32"])
def test_an_img2col_operand_gathers_what_the_load_wrote(case, monkeypatch):
    """_img2col_gather (worked out per C0 block from the load's own block numbers where it can) against plain
    numpy on every LoadData 3Dv2 a plan reads: the L0 elements the load writes (its source taken at its index,
    pads set), read in the Mmad's order, equal the gather's elements with its pads set, on a random source."""
    calls = _calls_of(monkeypatch, "_img2col_gather")
    _run(case, "replay", monkeypatch, min_mmads=1)
    assert calls
    rng = np.random.default_rng(1)
    by_block = 0
    for (ops, count, order, order_key, size), (index, pads, end) in calls:
        source = rng.integers(1, 1000, ops.span).astype(np.float32)
        written = source.take(ops.index, mode="clip")
        written[ops.pad_positions] = -1.0
        want = written[order]
        if index.__class__ is replay_data.Rows:
            by_block += 1
            got = source.reshape(-1, index.c0)[index.blocks].reshape(-1)
            assert (index.blocks.max() + 1) * index.c0 <= ops.span
        else:
            got = source.take(index)
        if pads is not None:
            got[pads] = -1.0
        assert np.array_equal(got, want)
        assert end <= ops.span or ops.span % (32 // ops.dtype.itemsize)
        assert np.array_equal(np.flatnonzero(want == -1.0), np.array([] if pads is None else pads))
    assert by_block > 0 or case[1] == "float32"


@pytest.mark.parametrize("case", CASES[:2], ids=["stem-fp16", "stem-bf16"])  # the 3x3 layer's plans: no such B
def test_a_load2d_operand_gathers_what_the_mmad_reads(case, monkeypatch):
    """_fractal_gather (whole C0 blocks where the fractals are not transposed) against plain numpy on every
    LoadData2D that wrote a whole operand of a plan: the load's fractals copied from a random source (each
    transposed for a 16-bit transposing load), read in the Mmad's layout (A: ZZ or NZ, B: ZN, as isa/cube.py
    reads them), equal the gather's elements."""
    calls = _calls_of(monkeypatch, "_fractal_gather")
    _run(case, "replay", monkeypatch, min_mmads=1)
    assert calls
    rng = np.random.default_rng(2)
    by_block = 0
    for (reps, s_pitch, transpose, size, (name, a_nz, m1, k1, n1, c0)), (index, pads, end) in set(calls):
        per_fractal = 512 // size
        source = rng.integers(1, 1000, (reps - 1) * s_pitch // size + per_fractal).astype(np.float32)
        l0 = np.concatenate([source[r * s_pitch // size:][:per_fractal] for r in range(reps)])
        if transpose:
            l0 = l0.reshape(reps, 16, 16).transpose(0, 2, 1).reshape(-1)
        if name == "B":  # ZN [k1][n1][16 n][c0 k] -> (k, n)
            want = l0.reshape(k1, n1, 16, c0).transpose(0, 3, 1, 2)
        elif a_nz:  # NZ [k1][m1][16][c0] -> (m, k)
            want = l0.reshape(k1, m1, 16, c0).transpose(1, 2, 0, 3)
        else:  # ZZ [m1][k1][16][c0] -> (m, k)
            want = l0.reshape(m1, k1, 16, c0).transpose(0, 2, 1, 3)
        if index.__class__ is replay_data.Rows:
            by_block += 1
            got = source.reshape(-1, index.c0)[index.blocks].reshape(-1)
        else:
            got = source.take(index)
        assert pads is None and end <= len(source)
        assert np.array_equal(got, want.reshape(-1))
    assert by_block > 0
