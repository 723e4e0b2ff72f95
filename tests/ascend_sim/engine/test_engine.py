"""The engine: records that carry their effect, the scheduler as a pass (WaitFlag before SetFlag, deadlocks),
retime on another platform, replay, and core types."""
import re

import numpy as np
import pytest
from conftest import l1_and_l0a, mte2_copy, own_records, run_kernel

from ascend_sim import Chip, SyncFault
from ascend_sim.ascendc import (ASCEND_IS_AIV, DataCopy, DataCopyParams, GetBlockIdx, GetSubBlockIdx, GlobalTensor,
                                HardEvent, LoadData, LoadData2DParams, SetFlag, SetFmatrix, SetHF32Mode, TBuf, TPipe,
                                TPosition, WaitFlag)
from ascend_sim.machine.platform import get_platform
from kernels.matmul import run_matmul

pytestmark = pytest.mark.both_engines


def test_a_record_keeps_the_parameters_it_was_issued_with():
    def body(src):
        l1, l0a = l1_and_l0a()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        params = LoadData2DParams(repeatTimes=2)
        LoadData(l0a, l1, params)
        params.repeatTimes = 99  # the kernel reuses its struct: the issued instruction must not change
    _, report = run_kernel(body, np.zeros(1024, np.float16))
    load = [r for r in report.logs[0] if r.name == "LoadData2D"][0]
    assert load.params.repeatTimes == 2 and load.nbytes == 2 * 512
    with pytest.raises(AttributeError):
        load.params.repeatTimes = 5  # a snapshot, not the kernel's struct


def test_register_writes_are_records_and_loads_record_the_registers_they_read():
    def body():
        SetFmatrix(4, 8, (1, 1, 0, 0))
        SetHF32Mode(True)
    _, report = run_kernel(body)
    names = [(r.name, r.pipe.name, r.params["register"]) for r in report.logs[0]]
    assert names == [("SetFmatrix", "S", "FMATRIX_LEFT"), ("SetHF32Mode", "S", "hf32")]
    assert report.logs[0][0].params["value"].l1W == 8


def test_wait_flag_issued_before_its_set_flag_waits_for_it():
    # MTE1 waits for a flag that M sets later in program order, as hardware allows (pipes are separate queues)
    def body(src):
        l1, l0a = l1_and_l0a()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.M_MTE1, 3)  # nothing has set it yet (TPipe() set IDs 0-2)
        LoadData(l0a, l1, LoadData2DParams(repeatTimes=1))
        SetFlag(HardEvent.M_MTE1, 3)  # issued after the wait, on another pipe
    _, report = run_kernel(body, np.zeros(1024, np.float16))
    wait, load, setter = report.logs[0][6:9]  # after TPipe()'s three SetFlag<M_MTE1> and the copy's flags
    assert (wait.name, load.name, setter.name) == ("WaitFlag", "LoadData2D", "SetFlag")
    assert wait.released_by is setter
    assert wait.start >= setter.end and load.start >= wait.end


def test_a_wait_that_nothing_releases_is_a_deadlock_fault():
    def body():
        WaitFlag(HardEvent.M_MTE1, 1)
        SetFlag(HardEvent.MTE1_M, 1)
        WaitFlag(HardEvent.MTE1_M, 1)
    with pytest.raises(SyncFault, match=r"deadlock: #0 MTE1 WaitFlag .* no SetFlag<M_MTE1>\(1\) follows it"):
        run_kernel(body)


def test_retime_equals_a_fresh_timing_only_run_on_the_other_platform():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((512, 256)).astype(np.float16), rng.standard_normal((256, 384)).astype(np.float16)
    report = run_matmul(a, b, block_dim=4).report
    slow = get_platform("Ascend910B2").with_overrides(rates={"gm_to_l1": 20.0, "mte1_overhead": 50},
                                                      queue_depth=4, clock_mhz=1000)
    fresh = run_matmul(a, b, block_dim=4, platform=slow, execute=False).report
    again = report.retime(slow)
    assert again.cycles == fresh.cycles != report.cycles
    assert again.to_dict() == fresh.to_dict()
    for ours, theirs in zip(again.logs, fresh.logs):
        assert [(r.name, r.issue, r.start, r.end) for r in ours] == [(r.name, r.issue, r.start, r.end) for r in theirs]
    assert report.retime("Ascend910B2").to_dict() == report.to_dict()  # the original schedule is untouched


def test_replaying_the_executed_records_redoes_the_run():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((96, 80)).astype(np.float16), rng.standard_normal((80, 64)).astype(np.float16)
    chip = Chip()
    from kernels.matmul import MatmulTiling, matmul_kernel
    t = MatmulTiling.for_shape(96, 64, 80, "float16")
    from ascend_sim.machine.tensor import GmAddr
    a_gm, b_gm = GmAddr(chip.gm.upload("a", a)), GmAddr(chip.gm.upload("b", b))
    c_gm = GmAddr(chip.gm.alloc("c", 96 * 64 * 2))
    chip.launch(matmul_kernel, 2, a_gm, b_gm, c_gm, t)
    first = chip.gm["c"].data.copy()
    assert first.any()
    chip.gm["c"].data[:] = 0
    for core in chip.cores:
        for buf in core.buffers.values():
            buf.data[:] = 0
    for rec in chip.executed:
        rec.execute()
    assert np.array_equal(chip.gm["c"].data, first)


def test_mix_launch_numbers_the_aic_and_its_aivs():
    seen = []

    def body():
        seen.append(("AIV" if ASCEND_IS_AIV() else "AIC", GetBlockIdx(), GetSubBlockIdx()))
    chip = Chip()
    report = chip.launch(body, 2, kernel_type="MIX_AIC_1_2")
    assert seen == [("AIC", 0, 0), ("AIV", 0, 0), ("AIV", 1, 1), ("AIC", 1, 0), ("AIV", 2, 0), ("AIV", 3, 1)]
    assert [c.name for c in report.cores] == ["AIC 0", "AIV 0", "AIV 1", "AIC 1", "AIV 2", "AIV 3"]
    assert "UB" in chip.cores[1].buffers and "L0A" not in chip.cores[1].buffers
    with pytest.raises(ValueError, match="kernel_type='MIX'"):
        chip.launch(body, 1, kernel_type="MIX")
    with pytest.raises(ValueError, match="block_dim=25 outside"):
        chip.launch(body, 25, kernel_type="MIX_AIC_1_1")


def test_the_aiv_has_its_own_legal_events():
    chip = Chip()
    chip.launch(lambda: (SetFlag(HardEvent.MTE2_V, 0), WaitFlag(HardEvent.MTE2_V, 0)), 1, kernel_type="AIV_ONLY")
    with pytest.raises(SyncFault, match="not a legal event on the A2/A3 vector core"):
        chip.launch(lambda: SetFlag(HardEvent.MTE1_M, 0), 1, kernel_type="AIV_ONLY")


def test_cross_core_flags_order_an_aic_and_its_two_aivs():
    from ascend_sim.ascendc import PIPE_MTE2, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag
    from ascend_sim.machine.tensor import GmAddr

    def body(src):
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(3)  # the AIC's mode-2 set reaches both AIVs
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        else:
            mte2_copy(src)
            CrossCoreSetFlag(2, PIPE_MTE2, 3)  # after the copy has completed
            CrossCoreWaitFlag(4)  # needs the sets of both AIVs
    chip = Chip()
    src = GmAddr(chip.gm.upload("x", np.zeros(2048, np.float16)))
    report = chip.launch(body, 2, src, kernel_type="MIX_AIC_1_2")
    for group in (0, 3):  # AIC 0 with AIV 0, 1; AIC 1 with AIV 2, 3
        aic = own_records(report.logs[group])
        copy, aic_set, aic_wait = aic[0], aic[1], aic[2]
        assert aic_set.start >= copy.end
        aiv_sets = []
        for aiv in report.logs[group + 1:group + 3]:
            wait, aiv_set = own_records(aiv)
            assert wait.end >= aic_set.end
            aiv_sets.append(aiv_set)
        assert aic_wait.end >= max(s.end for s in aiv_sets)


def test_cross_core_flag_misuse_is_a_fault():
    from ascend_sim.ascendc import PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag

    def waits_forever():
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(1)
    with pytest.raises(SyncFault, match=r"^\[core 1 \(AIV 0\), S CrossCoreWaitFlag.*deadlock: #0 S CrossCoreWaitFlag"):
        Chip().launch(waits_forever, 1, kernel_type="MIX_AIC_1_1")

    def never_waited():
        if ASCEND_IS_AIV():
            CrossCoreSetFlag(2, PIPE_MTE3, 1)
    with pytest.raises(SyncFault, match="cross-core flag 1 of AIC 0 was set 1 more time") as info:
        Chip().launch(never_waited, 1, kernel_type="MIX_AIC_1_1")
    # the set nobody waited names its core, pipe and line (the mutation hunt: docs/testing.md)
    assert re.match(r"\[core 1 \(AIV 0\), MTE3 CrossCoreSetFlag, at test_engine.py:\d+\] .*missing on AIC 0\)$",
                    str(info.value))

    def one_core_syncs_again():  # a doubled SyncAll of the cube cores (mode 0) on core 0 only
        if not ASCEND_IS_AIV():
            for _ in range(2 if GetBlockIdx() == 0 else 1):
                CrossCoreSetFlag(0, PIPE_MTE3, 11)
                CrossCoreWaitFlag(11)
    with pytest.raises(SyncFault) as info:
        Chip().launch(one_core_syncs_again, 2, kernel_type="MIX_AIC_1_1")
    assert re.match(r"\[core 0, MTE3 CrossCoreSetFlag, at test_engine.py:\d+\] .*mode 0 on flag 11: only 1 of the cores "
                    r"it synchronises set it before the kernel ended \(cores \[0\]\)$", str(info.value))

    def overflow():
        if ASCEND_IS_AIV():
            for _ in range(16):
                CrossCoreSetFlag(2, PIPE_MTE3, 1)
    with pytest.raises(SyncFault) as info:
        Chip().launch(overflow, 1, kernel_type="MIX_AIC_1_1")
    # the 16th set heads the fault (the mutation hunt: docs/testing.md)
    assert re.match(r"\[core 1, MTE3 CrossCoreSetFlag, at test_engine.py:\d+\] .*cross-core flag 1 of core 0 counted "
                    r"past 15 pending sets", str(info.value))
    with pytest.raises(SyncFault, match="only for MIX kernel types"):
        Chip().launch(lambda: CrossCoreWaitFlag(1), 1)
    with pytest.raises(SyncFault, match="modeId=1 synchronises the AIVs"):
        Chip().launch(lambda: CrossCoreSetFlag(1, PIPE_MTE3, 1), 1, kernel_type="MIX_AIC_1_1")


def test_mode_0_cross_core_flags_are_a_barrier_of_the_cube_cores():
    from ascend_sim.ascendc import PIPE_MTE2, CrossCoreSetFlag, CrossCoreWaitFlag
    from ascend_sim.machine.tensor import GmAddr

    def body(src):
        if GetBlockIdx() == 1:
            mte2_copy(src, 64 * 1024)  # the slow core
        CrossCoreSetFlag(0, PIPE_MTE2, 11)
        CrossCoreWaitFlag(11)
    chip = Chip()
    src = GmAddr(chip.gm.upload("x", np.zeros(32768, np.float16)))
    report = chip.launch(body, 3, src, kernel_type="MIX_AIC_1_0")
    slow_copy = own_records(report.logs[1])[0]
    for log in map(own_records, report.logs):
        assert log[-1].name == "CrossCoreWaitFlag" and log[-1].end >= slow_copy.end


def _fixpipe_tile(out, offset_bytes):
    """One 16 x 16 fp32 tile from L0C to GM at `offset_bytes` (NZ), after an Mmad-free L0C: only the write matters."""
    from ascend_sim.ascendc import CFG_NZ, Fixpipe, FixpipeParamsV220
    pipe = TPipe()
    l0c = TBuf(TPosition.CO1)
    pipe.InitBuffer(l0c, 1024)
    Fixpipe(GlobalTensor(np.float32).SetGlobalBuffer(out + offset_bytes), l0c.Get(np.float32),
            FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=2), CFG_NZ)


def test_two_cores_writing_the_same_gm_bytes_without_sync_is_a_race():
    from ascend_sim import RaceFault
    from ascend_sim.ascendc import SyncAll

    def overlapping(out):
        _fixpipe_tile(out, 0 if GetBlockIdx() == 0 else 512)  # 1 KiB each: bytes [512, 1024) twice
    with pytest.raises(RaceFault, match=r"core 1.*race between cores: write of GM:out\[512, 1536\) is not ordered "
                                        r"after the write of some of its bytes by core 0's #3 FIX Fixpipe"):
        run_kernel(overlapping, block_dim=2, out_bytes=4096)

    def disjoint(out):
        _fixpipe_tile(out, 1024 * GetBlockIdx())
    run_kernel(disjoint, block_dim=3, out_bytes=4096)

    def ordered_by_sync_all(out):
        if GetBlockIdx() == 0:
            _fixpipe_tile(out, 0)
        SyncAll()
        if GetBlockIdx() == 1:
            _fixpipe_tile(out, 512)
    run_kernel(ordered_by_sync_all, block_dim=2, out_bytes=4096)


def test_a_cross_core_flag_orders_a_gm_write_before_another_cores_read():
    from ascend_sim import RaceFault
    from ascend_sim.ascendc import PIPE_FIX, CrossCoreSetFlag, CrossCoreWaitFlag
    from ascend_sim.machine.tensor import GmAddr

    def body(ws, flagged):
        if GetBlockIdx() == 0:
            _fixpipe_tile(ws, 0)
            if flagged:
                CrossCoreSetFlag(0, PIPE_FIX, 2)
                CrossCoreWaitFlag(2)
        else:
            if flagged:
                CrossCoreSetFlag(0, PIPE_FIX, 2)
                CrossCoreWaitFlag(2)
            mte2_copy(ws, 1024)  # reads what core 0 wrote
    for flagged in (True, False):
        chip = Chip()
        ws = GmAddr(chip.gm.alloc("ws", 4096))
        if flagged:
            chip.launch(body, 2, ws, True, kernel_type="MIX_AIC_1_0")
        else:
            with pytest.raises(RaceFault, match="read of GM:ws.*not ordered after the write"):
                chip.launch(body, 2, ws, False, kernel_type="MIX_AIC_1_0")


def test_queue_operations_are_named_on_their_flag_records():
    from ascend_sim.ascendc import TQue

    def body():
        pipe = TPipe()
        que = TQue(TPosition.A1, 1)
        pipe.InitBuffer(que, 2, 1024)
        for _ in range(3):
            t = que.AllocTensor(np.float16)
            que.EnQue(t)
            que.FreeTensor(que.DeQue())
    _, report = run_kernel(body)
    assert [r.params["api"] for r in report.logs[0]] == ["TPipe.Init"] * 3 + [
        "TQue.EnQue", "TQue.DeQue", "TQue.FreeTensor", "TQue.EnQue", "TQue.DeQue", "TQue.FreeTensor",
        "TQue.AllocTensor", "TQue.EnQue", "TQue.DeQue", "TQue.FreeTensor"] + ["TPipe.Destroy"] * 6


def test_the_trace_shows_aic_and_aiv_processes_and_cross_core_arrows(tmp_path):
    import json

    from ascend_sim.ascendc import PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag

    def body():
        if ASCEND_IS_AIV():
            CrossCoreSetFlag(2, PIPE_MTE3, 5)
        else:
            CrossCoreWaitFlag(5)
    report = Chip().launch(body, 1, kernel_type="MIX_AIC_1_2")
    report.write_trace(str(tmp_path / "t.json"))
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    assert names == {0: "AIC 0", 1: "AIV 0", 2: "AIV 1"}
    starts = sorted(e["pid"] for e in events if e.get("ph") == "s" and e["name"] == "cross-core flag")
    ends = [e["pid"] for e in events if e.get("ph") == "f" and e["name"] == "cross-core flag"]
    assert starts == [1, 2] and ends == [0, 0]


def test_a_dx_run_retimes_like_a_fresh_timing_only_run_with_the_same_tiling():
    from kernels import conv3d_backprop_input_v2_run
    rng = np.random.default_rng(3)
    dy = rng.standard_normal((1, 16, 4, 6, 6)).astype(np.float16)
    w = rng.standard_normal((16, 24, 2, 3, 3)).astype(np.float16)
    args = dict(strides=(1, 1, 1, 1, 1), pads=(0, 1, 1, 1, 1, 1), data_format="NCDHW", route="v2")
    run = conv3d_backprop_input_v2_run((1, 24, 4, 6, 6), w, dy, **args)
    other = get_platform("Ascend910B2").with_overrides(rates={"mte2_overhead": 200, "l1_to_l0a": 64.0}, clock_mhz=1000)
    overrides = {f: getattr(run.tiling.conv3DDxTiling, f) for f in ("baseM", "baseN", "baseK", "stepKa", "stepKb")}
    fresh = conv3d_backprop_input_v2_run((1, 24, 4, 6, 6), w, dy, platform=other, execute=False,
                                         tiling_overrides=overrides, **args)
    assert fresh.tiling.to_bytes() == run.tiling.to_bytes()  # the same tiling on both platforms
    again = run.retime(other)
    assert again.to_dict() == fresh.report.to_dict() and again.cycles != run.report.cycles


def test_an_unscheduled_copy_keeps_every_content_field_and_drops_the_schedule():
    from ascend_sim.record import Record
    _, report = run_kernel(lambda: (SetFlag(HardEvent.MTE2_MTE1, 0), WaitFlag(HardEvent.MTE2_MTE1, 0)))
    for rec in report.logs[0]:
        copy = rec.unscheduled()
        schedule = ("issue", "start", "end", "released_by")
        assert all(getattr(copy, s) is getattr(rec, s) for s in Record.__slots__ if s not in schedule)
        assert all(getattr(copy, s) is None for s in schedule) and rec.start is not None


def test_every_record_that_touches_gm_gives_its_exact_footprint():
    from kernels import conv3d_backprop_input_v2_run
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((80, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    logs = run_matmul(a, b, block_dim=2).report.logs
    dy = rng.standard_normal((1, 8, 3, 5, 5)).astype(np.float16)
    w = rng.standard_normal((8, 20, 2, 2, 2)).astype(np.float16)
    logs += conv3d_backprop_input_v2_run((1, 20, 4, 6, 6), w, dy, strides=(1,) * 5, pads=(0, 0, 0, 0, 0, 0),
                                         data_format="NCDHW", route="v2").report.logs
    touching = [r for log in logs for r in log if any(buf.key.__class__ is str for buf, _, _ in r.reads + r.writes)]
    assert {r.name for r in touching} >= {"DataCopy(Nd2Nz)", "Fixpipe", "DataCopy"}
    for rec in touching:
        assert rec.footprint, rec
        for buf, offset, shape, strides, is_write in rec.footprint:  # inside the span the record declares
            ranges = rec.writes if is_write else rec.reads
            last = offset + sum((n - 1) * s for n, s in zip(shape, strides))
            assert any(b is buf and lo <= offset and last < hi for b, lo, hi in ranges), rec
