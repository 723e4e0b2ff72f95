"""The vector core's records in the engine's passes: the race checker between its pipes (V / MTE2 / MTE3) and
between cores in GM, timing-only runs, retime (exact and fast engines), replay of the executed records, and
the cost model's constants."""
import numpy as np
import pytest
from vector_reference import run_aiv

from ascend_sim import Chip, CrossCoreRace, RaceFault
from ascend_sim.ascendc import (Add, DataCopy, DataCopyExtParams, DataCopyPad, Exp, GetBlockIdx, GlobalTensor,
                                HardEvent, SetFlag, SyncAll, TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.isa.vector.timing import vector_cycles
from ascend_sim.machine.platform import get_platform
from ascend_sim.machine.tensor import GmAddr


def _ub(nbytes=8192):
    pipe = TPipe()
    buf = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(buf, nbytes)
    return buf.Get(np.float32)


def test_copy_out_racing_the_vector_write_is_a_race_fault():
    def kernel(x, out):
        ub = _ub()
        DataCopy(ub, GlobalTensor(np.float32).SetGlobalBuffer(x), 256)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Exp(ub[256], ub, 256)
        DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(out), ub[256], 256)  # no V_MTE3 flag
    with pytest.raises(RaceFault, match="read of UB") as info:
        run_aiv(kernel, np.zeros(256, np.float32), out_bytes=1024)
    assert info.value.pipe == "MTE3" and "Exp" in str(info.value)


def test_next_load_overwriting_what_v_still_reads_is_a_race_fault():
    def kernel(x):
        ub = _ub()
        g = GlobalTensor(np.float32).SetGlobalBuffer(x)
        DataCopy(ub, g, 256)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Add(ub[512], ub, ub, 256)
        DataCopy(ub, g, 256)  # no V_MTE2 flag: MTE2 may overwrite before Add has read
    with pytest.raises(RaceFault, match="write of UB") as info:
        run_aiv(kernel, np.zeros(256, np.float32))
    assert info.value.pipe == "MTE2"


def _gm_writer(sync: bool):
    def kernel(out):
        ub = _ub()
        SetFlag(HardEvent.MTE3_V, 0)  # (a legal AIV pair; nothing to order here)
        WaitFlag(HardEvent.MTE3_V, 0)
        from ascend_sim.ascendc import Duplicate
        Duplicate(ub, np.float32(GetBlockIdx()), 64)
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        if sync and GetBlockIdx() == 1:
            SyncAll()
        DataCopyPad(GlobalTensor(np.float32).SetGlobalBuffer(out), ub, DataCopyExtParams(1, 100, 0, 0))
        if sync and GetBlockIdx() == 0:
            SyncAll()
    return kernel


def test_two_aivs_writing_the_same_gm_bytes_is_a_cross_core_race():
    with pytest.raises(CrossCoreRace):
        run_aiv(_gm_writer(False), out_bytes=256, block_dim=2)


def test_sync_all_between_the_writes_orders_them():
    chip, _ = run_aiv(_gm_writer(True), out_bytes=256, block_dim=2)
    np.testing.assert_array_equal(chip.gm["out"].data[:100].view(np.float32), np.ones(25, np.float32))


def _add_run(execute=True, platform="Ascend910B2"):
    from vector_kernels import add_kernel
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(8192).astype(np.float32), rng.standard_normal(8192).astype(np.float32)
    return run_aiv(add_kernel(8192, 1024, 2), x, y, out_bytes=8192 * 4, block_dim=2, platform=platform,
                   execute=execute)


def test_timing_only_run_has_the_same_cycles():
    (_, full), (chip, timing) = _add_run(True), _add_run(False)
    assert timing.cycles == full.cycles and chip.gm["out"].data is None  # size-only GM: no bytes


def test_retime_exact_and_fast_agree_with_a_timing_run_on_another_platform():
    _, report = _add_run()
    slow = get_platform("Ascend910B2").with_overrides(rates={"gm_to_l1": 20.0, "mte2_overhead": 400},
                                                      clock_mhz=1000)
    _, direct = _add_run(False, platform=slow)
    exact, fast = report.retime(slow, engine="exact"), report.retime(slow, engine="fast")
    assert exact.to_dict() == fast.to_dict() == direct.to_dict()
    assert exact.cycles > report.cycles


def test_replaying_the_executed_records_redoes_the_run():
    chip, _ = _add_run()
    want = chip.gm["out"].data.copy()
    chip.gm["out"].data[:] = 0
    for core in chip.cores:
        core.buffers["UB"].data[:] = 0
    for rec in chip.executed:
        rec.execute()
    np.testing.assert_array_equal(chip.gm["out"].data, want)


@pytest.mark.parametrize("name, dtype, repeats, per_repeat, cycles", [
    ("Add", np.float16, 4, 128, 4 * 1 + 6),  # 128 elements per cycle (Vector指令理论性能汇总 table 6), vadd delay 6
    ("Add", np.int32, 4, 64, 4 * 1 + 4),  # int delay 4 (pypto def.h)
    ("Exp", np.float16, 2, 128, 2 * 4 + 12),  # 32 elements per cycle
    ("Exp", np.float32, 2, 64, 2 * 2 + 12),
    ("Div", np.float32, 1, 64, 2 + 13),
    ("WholeReduceSum", np.float32, 3, 64, 3 + 20),
    ("Add", np.float16, 0, 128, 0),
])
def test_vector_cycles_follow_the_published_parallelism(name, dtype, repeats, per_repeat, cycles):
    assert vector_cycles(name, dtype, repeats, per_repeat, "published") == cycles


def test_ub_to_gm_rate_is_capped_at_the_ini_64_bytes_per_cycle():
    def kernel(out):
        ub = _ub(65536)
        DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(out), ub, 16384)
    _, report = run_aiv(kernel, out_bytes=65536)
    rec = next(r for r in report.logs[0] if r.name == "DataCopy(UB->GM)")
    p = get_platform("Ascend910B2")
    assert rec.end - rec.start == pytest.approx(p.rates.mte3_overhead + 65536 / 64)


def test_mix_kernel_aivs_compute_on_what_the_aic_published():
    """MIX_AIC_1_2: each AIV waits for its AIC's cross-core flag (mode 2), then copies its half of x into UB,
    scales it with Muls and writes it out; the AIC only signals (its data would come from Fixpipe)."""
    from ascend_sim.ascendc import ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, GetSubBlockIdx, Muls

    def kernel(x, out):
        if not ASCEND_IS_AIV():
            CrossCoreSetFlag(2, PIPE_MTE3, 5)
            return
        CrossCoreWaitFlag(5)
        half = 512 * GetSubBlockIdx()
        ub = _ub()
        DataCopy(ub, GlobalTensor(np.float32).SetGlobalBuffer(x)[half], 512)
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        Muls(ub[512], ub, np.float32(3.0), 512)
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(out)[half], ub[512], 512)

    x = np.arange(1024, dtype=np.float32)
    chip = Chip("Ascend910B2")
    gx, out = GmAddr(chip.gm.upload("x", x)), GmAddr(chip.gm.alloc("out", 4096))
    report = chip.launch(kernel, 1, gx, out, kernel_type="MIX_AIC_1_2")
    np.testing.assert_array_equal(chip.gm["out"].data.view(np.float32), x * 3)
    assert [c.kind for c in report.cores] == ["AIC", "AIV", "AIV"]
