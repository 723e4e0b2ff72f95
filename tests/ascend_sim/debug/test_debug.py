"""The replay debugger (ascend_sim/debug.py): stepping, rewinding, breakpoints, views and provenance, checked
against what live hooks saw during the run and against numpy."""
import numpy as np
import pytest
from paths import ROOT

from ascend_sim import Chip, RaceFault, SyncFault
from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams, SetFlag,
                                TBuf, TPipe, TPosition)
from ascend_sim.debug import Debugger, break_on
from ascend_sim.machine.tensor import GmAddr
from kernels.matmul import MatmulTiling, matmul_kernel

M, N, K = 64, 48, 80
BASE = 32  # baseM = baseN = baseK: four 32 x 32 output tiles (the last N tile 16 wide), two per core


def _state(chip):
    """Every core buffer and GM allocation of the live chip, copied."""
    state = {("GM", name): buf.data.copy() for name, buf in chip.gm.allocations.items()}
    for core in chip.cores:
        for name, buf in core.buffers.items():
            state[(core.index, name)] = buf.data.copy()
    return state


def _dbg_state(dbg):
    state = {("GM", name): dbg.gm(name).copy() for name in dbg.chip.gm.allocations}
    for core in dbg.chip.cores:
        for name in core.buffers:
            state[(core.index, name)] = dbg.buffer(core.index, name).copy()
    return state


def _same(s1, s2):
    return s1.keys() == s2.keys() and all(np.array_equal(s1[k], s2[k]) for k in s1)


def _matmul(hooks=(), poison=False, **options):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    chip = Chip(hooks=list(hooks))
    a_gm, b_gm = GmAddr(chip.gm.upload("a", a)), GmAddr(chip.gm.upload("b", b))
    c = chip.gm.alloc("c", M * N * 2)
    if poison:
        c.data.view(np.float16)[:] = np.nan
    t = MatmulTiling(M, N, K, baseM=BASE, baseN=BASE, baseK=BASE, stepK=2)
    dbg = Debugger.launch(chip, matmul_kernel, 2, a_gm, b_gm, GmAddr(c), t)
    if options:  # another debugger on the same run (Debugger.launch kept the initial GM on the chip)
        dbg = Debugger(chip, **options)
    return dbg, a, b


@pytest.fixture(scope="module")
def live():
    """A debugger on the 2-core matmul, and the state a live hook copied after every 5th record and the last."""
    seen = {}

    def hook(core, rec):
        index = len(core.chip.executed) - 1
        assert core.chip.executed[index] is rec
        seen[index] = _state(core.chip) if index % 5 == 0 else None
    dbg, a, b = _matmul([hook])
    last = len(dbg) - 1
    seen[last] = _state(dbg.chip)
    assert dbg.fault is None and len(dbg) > 150 and {r.core for r in dbg.records} == {0, 1}
    return dbg, {k: s for k, s in seen.items() if s is not None}, a, b


def test_stepping_to_every_record_gives_what_the_live_hook_saw(live):
    dbg, seen, a, b = live
    dbg.goto(0)
    assert dbg.record is None and not dbg.gm("c").any() and not dbg.buffer(0, "L1").any()
    assert np.array_equal(dbg.gm("a").view(np.float16).reshape(M, K), a)
    compared = 0
    while not dbg.at_end:
        rec = dbg.step()
        assert rec is dbg.records[dbg.seq - 1]
        if dbg.seq - 1 in seen:
            assert _same(_dbg_state(dbg), seen[dbg.seq - 1]), f"state differs after {rec}"
            compared += 1
    assert compared == len(seen) >= 30
    # the chip's own buffers are the run's final state, untouched by the replay
    assert _same(_state(dbg.chip), seen[len(dbg) - 1])
    assert dbg.step() is dbg.records[-1] and dbg.seq == len(dbg)  # stepping past the end stays there


def test_back_and_goto_give_the_state_of_forward_replay():
    dbg, _, _ = _matmul(checkpoint_every=16)  # many checkpoints on a small run
    forward = []
    for k in range(len(dbg) + 1):
        dbg.goto(k)
        forward.append(_dbg_state(dbg))
    assert len(dbg._checkpoints) == -(-len(dbg) // 16)
    for _ in range(len(dbg)):  # back(1) all the way: the undo log and the checkpoints
        dbg.back()
        assert _same(_dbg_state(dbg), forward[dbg.seq])
    rng = np.random.default_rng(3)
    for k in rng.integers(0, len(dbg) + 1, 40):
        dbg.goto(int(k))
        assert _same(_dbg_state(dbg), forward[int(k)])
        n = int(rng.integers(1, 40))
        dbg.back(n)
        assert dbg.seq == max(0, int(k) - n) and _same(_dbg_state(dbg), forward[dbg.seq])
    with pytest.raises(IndexError):
        dbg.goto(len(dbg) + 1)


def test_breakpoints_stop_at_the_matching_records(live):
    dbg, _, _, _ = live
    records = dbg.records

    def expect(predicate):
        return [i for i, r in enumerate(records) if predicate(r)]

    cases = [
        (break_on(name="Mmad"), expect(lambda r: r.name == "Mmad")),
        (break_on(pipe="FIX"), expect(lambda r: r.pipe.name == "FIX")),
        (break_on(name="LoadData2D", core=1), expect(lambda r: r.name == "LoadData2D" and r.core == 1)),
        (break_on(source=records[-1].source), expect(lambda r: r.source == records[-1].source)),
        (break_on(name="Mmad", condition=lambda r: r.params.cmatrixInitVal),
         expect(lambda r: r.name == "Mmad" and r.params.cmatrixInitVal)),
        (break_on(seq=100), [100]),
    ]
    for predicate, where in cases:
        assert where
        dbg.goto(0)
        stops = []
        while dbg.continue_(until=predicate) is not None:
            stops.append(dbg.seq - 1)
        assert stops == where and dbg.at_end
        back = []
        while dbg.reverse_continue(until=predicate) is not None:
            back.append(dbg.seq - 1)
        # from the end, the last record is the current one: reverse_continue stops at matches before it
        assert back == [i for i in where[::-1] if i < len(records) - 1]
        assert dbg.seq == 0
    # a plain callable works too, and several breakpoints stop at the first that matches
    first = next(i for i, r in enumerate(records) if r.name == "Fixpipe" or (r.name == "Mmad" and r.core == 1))
    dbg.goto(0)
    assert dbg.continue_([lambda r: r.name == "Fixpipe", break_on(name="Mmad", core=1)]) is records[first]


def test_registers_flags_and_pipe_clocks_follow_the_applied_records(live):
    dbg, _, _, _ = live
    records = dbg.records
    k = next(i for i, r in enumerate(records) if r.name == "SetFlag") + 1
    dbg.goto(k)
    rec = dbg.record
    assert dbg.flags(rec.core)[rec.event] == 1
    wait = next(i for i in range(k, len(records)) if records[i].name == "WaitFlag" and records[i].event == rec.event
                and records[i].core == rec.core)
    dbg.goto(wait + 1)
    assert rec.event not in dbg.flags(rec.core) or any(r.name == "SetFlag" and r.event == rec.event
                                                       for r in records[k:wait + 1])
    clocks = dbg.pipe_clocks()
    for (core, pipe), end in clocks.items():
        last = [r for r in records[:wait + 1] if r.core == core and r.pipe.name == pipe][-1]
        assert end == last.end
    assert dbg.registers(0) == {"hf32": False, "hf32_trans_mode": 0}
    dbg.goto(0)
    assert dbg.pipe_clocks() == {} and dbg.flags(0) == {}


def test_the_logical_views_are_the_mmad_operands(live):
    dbg, _, a, b = live
    dbg.goto(0)
    mmads = 0
    while dbg.continue_(break_on(name="Mmad")) is not None:
        rec = dbg.record
        a0, b0, c_0 = rec.args.a0, rec.args.b0, rec.args.c0_addr
        p = rec.params
        va = dbg.l0a(rec.core, a0, p.m, p.k, np.float16)
        vb = dbg.l0b(rec.core, b0, p.k, p.n, np.float16)
        after = dbg.l0c(rec.core, c_0, p.m, p.n)
        dbg.back()
        before = dbg.l0c(rec.core, c_0, p.m, p.n)
        dbg.step()
        # the operands are slices of A and B (the tiles are aligned on 32)
        assert any(np.array_equal(va, a[r:r + p.m, kk:kk + p.k]) for r in range(0, M, BASE)
                   for kk in range(0, K, BASE))
        assert any(np.array_equal(vb, b[kk:kk + p.k, c:c + p.n]) for kk in range(0, K, BASE)
                   for c in range(0, N, BASE))
        product = va.astype(np.float64) @ vb.astype(np.float64)
        expected = product if p.cmatrixInitVal else before + product
        np.testing.assert_allclose(after, expected, rtol=1e-5, atol=1e-5)
        mmads += 1
    assert mmads == 2 * 2 * 3  # four tiles of three K steps


def test_who_wrote_names_the_fixpipe_and_its_mmads():
    wrote = {}  # element of C -> index of the Fixpipe that changed it (seen live: C starts as NaN)

    def hook(core, rec):
        if rec.name == "Fixpipe":
            c = core.chip.gm["c"].data.view(np.float16).reshape(M, N)
            for r, col in zip(*np.nonzero(~np.isnan(c))):
                wrote.setdefault((int(r), int(col)), len(core.chip.executed) - 1)
    dbg, a, b = _matmul([hook], poison=True)
    assert len(wrote) == M * N
    dbg.goto(len(dbg))
    c = dbg.gm("c", np.float16).reshape(M, N).copy()
    for r, col in [(0, 0), (5, 3), (31, 31), (32, 0), (50, 40), (63, 47), (10, 33)]:
        found = dbg.who_wrote("c", 2 * (r * N + col))
        fix, mmads = found[0], found[1:]
        assert fix.name == "Fixpipe" and fix.seq == wrote[(r, col)] and fix.pipe == "FIX"
        assert fix.source == dbg.records[fix.seq].source and fix.end > fix.start
        assert [m.name for m in mmads] == ["Mmad"] * 3 and all(m.core == fix.core for m in mmads)
        assert mmads[-1].record.params.cmatrixInitVal and not any(m.record.params.cmatrixInitVal for m in mmads[:-1])
        assert all(m.seq < fix.seq for m in mmads) and [m.seq for m in mmads] == sorted(m.seq for m in mmads)[::-1]
        # the three Mmads' products at the element's place in the tile sum to the value Fixpipe wrote
        total = 0.0
        for m in mmads:
            rec = m.record
            dbg.goto(m.seq + 1)
            p = rec.params
            va = dbg.l0a(rec.core, rec.args.a0, p.m, p.k, np.float16).astype(np.float64)
            vb = dbg.l0b(rec.core, rec.args.b0, p.k, p.n, np.float16).astype(np.float64)
            total += (va @ vb)[r % BASE, col % BASE]
        assert np.float16(total) == c[r, col] or abs(total - float(c[r, col])) < 2e-2
        assert abs(float(c[r, col]) - float(a[r].astype(np.float64) @ b[:, col].astype(np.float64))) < 2e-2
        dbg.goto(len(dbg))
    dbg.goto(0)
    assert dbg.who_wrote("c", 0) == []


def test_a_faulting_run_is_replayed_up_to_the_fault():
    def body(src):
        pipe = TPipe()
        l1, l0a = TBuf(TPosition.A1), TBuf(TPosition.A2)
        pipe.InitBuffer(l1, 4096)
        pipe.InitBuffer(l0a, 4096)
        DataCopy(l1.Get(np.float16), GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 16, 0, 0))
        LoadData(l0a.Get(np.float16), l1.Get(np.float16), LoadData2DParams(repeatTimes=1))  # no MTE2 -> MTE1 flag
    chip = Chip()
    x = np.arange(256, dtype=np.float16)
    src = GmAddr(chip.gm.upload("x", x))
    dbg = Debugger.launch(chip, body, 1, src)
    assert isinstance(dbg.fault, RaceFault)
    assert dbg.continue_() is None and dbg.at_end
    assert dbg.record.name == "DataCopy"
    assert np.array_equal(dbg.buffer(0, "L1")[:512].view(np.float16), x)
    bad = dbg.fault_record
    assert bad is not None and bad.name == "LoadData2D" and bad not in dbg.records

    def twice():  # a fault found when the kernel issues the call: no record was made
        SetFlag(HardEvent.MTE2_MTE1, 0)
        SetFlag(HardEvent.MTE2_MTE1, 0)
    dbg = Debugger.launch(Chip(), twice, 1)
    assert isinstance(dbg.fault, SyncFault) and dbg.fault_record is None
    assert [r.name for r in dbg.records] == ["SetFlag"]
    dbg.step()
    assert dbg.flags(0) == {dbg.records[0].event: 1}


def test_a_debugger_needs_the_initial_gm_and_a_recorded_executed_run():
    chip = Chip()
    chip.launch(lambda: None, 1)
    with pytest.raises(ValueError, match="GM contents before the launch"):
        Debugger(chip)
    assert len(Debugger(chip, initial_gm={})) == 0
    with pytest.raises(ValueError, match="record=False"):
        Debugger(Chip(record=False), initial_gm={})
    with pytest.raises(ValueError, match="timing-only"):
        Debugger(Chip(execute=False), initial_gm={})


def test_capture_debugs_a_run_the_operator_launched():
    from ascend_sim.debug import Capture
    from kernels.matmul import run_matmul
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, 24)).astype(np.float16)
    b = rng.standard_normal((24, 20)).astype(np.float16)
    capture = Capture()
    c = run_matmul(a, b, hooks=[capture], poison_output=True).result
    dbg = capture.debugger()
    assert np.isnan(dbg.gm("C", np.float16)).all()  # GM as the launch started: C poisoned
    assert np.array_equal(dbg.gm("A", np.float16).reshape(a.shape), a)
    dbg.goto(len(dbg))
    assert np.array_equal(dbg.gm("C", np.float16).reshape(c.shape), c)
    fix, *mmads = dbg.who_wrote("C", 2 * (39 * 20 + 19))
    assert fix.name == "Fixpipe" and mmads and mmads[-1].record.params.cmatrixInitVal
    with pytest.raises(ValueError, match="no launch"):
        Capture().debugger()


def test_the_python_in_docs_debugging_runs(capsys):
    import re
    text = (ROOT / "docs" / "debugging.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/debugging.md", "exec"), {"__name__": "__doc__"})
    assert "Fixpipe" in capsys.readouterr().out


def test_who_wrote_buffer_names_the_last_writer_of_a_local_byte():
    last_change = {}  # (core, buffer, byte) -> index of the last record after which the byte changed (live)
    watched = [(0, "L0C", 0), (1, "L0C", 4096 + 8), (0, "L1", 64), (1, "L0A", 32768 + 2), (0, "L0B", 100)]
    previous = {key: bytes(4) for key in watched}  # local buffers start zeroed

    def hook(core, rec):
        for key in watched:
            c, name, byte = key
            value = core.chip.cores[c].buffers[name].data[byte:byte + 4].tobytes()
            if previous[key] != value:
                previous[key] = value
                last_change[key] = len(core.chip.executed) - 1
    dbg, _, _ = _matmul([hook])
    dbg.goto(len(dbg))
    for key in watched:
        c, name, byte = key
        writers = dbg.who_wrote_buffer(c, name, byte)
        assert writers[0].seq == last_change[key], key
        if name == "L0C":
            assert [w.name for w in writers] == ["Mmad"] * 3 and writers[-1].record.params.cmatrixInitVal
    dbg.goto(0)
    assert dbg.who_wrote_buffer(0, "L0C", 0) == []


def test_capture_on_the_conv3d_dx_operator_replays_its_run():
    from ascend_sim.debug import Capture
    from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
    rng = np.random.default_rng(0)
    w = rng.standard_normal((32, 32, 3, 3, 3)).astype(np.float16)
    dy = rng.standard_normal((1, 32, 4, 8, 8)).astype(np.float16)
    capture = Capture()
    conv3d_backprop_input_v2_run((1, 32, 4, 8, 8), w, dy, strides=(1, 1, 1, 1, 1), pads=(1, 1, 1, 1, 1, 1),
                                 data_format="NCDHW", hooks=[capture], route="v2")
    dbg = capture.debugger(checkpoint_every=64)
    assert np.isnan(dbg.gm("y", np.float16)).all()  # the operator poisons dx before the launch
    dbg.goto(len(dbg))
    assert all(np.array_equal(dbg.gm(name), buf.data) for name, buf in dbg.chip.gm.allocations.items())  # bytes
    middle = len(dbg) // 2
    dbg.goto(middle)
    l0c = dbg.buffer(0, "L0C").copy()
    dbg.goto(len(dbg))
    dbg.back(len(dbg) - middle)
    assert np.array_equal(dbg.buffer(0, "L0C"), l0c)
