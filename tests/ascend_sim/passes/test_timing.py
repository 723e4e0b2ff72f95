"""Properties of the per-pipe timing model."""
import numpy as np
import pytest
from conftest import run_kernel

from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams, SetFlag,
                                TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.machine.platform import get_platform
from kernels.matmul import MatmulTiling, run_matmul


def _operands(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)


def test_cube_bound_matmul_m_pipe_cycles_are_fractals_over_rate_plus_overheads():
    # Fast memories make the cube the bottleneck.
    fast = get_platform("Ascend910B2").with_overrides(rates={"gm_to_l1": 1e6, "chip_gm_bytes_per_cycle": 1e9,
                                                             "l1_to_l0a": 1e6, "l1_to_l0b": 1e6})
    m, n, k = 256, 256, 512
    t = MatmulTiling(m, n, k, baseM=128, baseN=128, baseK=64)
    report = run_matmul(*_operands(m, n, k), platform=fast, block_dim=1, tiling=t).report
    mmads = (m // 128) * (n // 128) * (k // 64)
    fractals = (128 // 16) * (128 // 16) * (64 // 16)  # fp16: one fractal triple per cycle (cube_k = 16)
    expected = mmads * (fractals + fast.rates.mmad_overhead)
    assert report.counts["Mmad"] == mmads
    assert report.cores[0].busy["M"] == expected
    assert report.bound == "M"
    assert report.cycles < expected * 1.15  # little exposed load/store time around the cube work


def test_fp32_mmad_runs_at_a_quarter_of_fp16_and_hf32_at_half():
    p = get_platform("Ascend910B2")
    assert p.cube.float16 / p.cube.float32 == 4 and p.cube.float16 / p.cube.hf32 == 2


def _load_then_copy(with_sync: bool):
    def body(src):
        pipe = TPipe()
        l1, l0a = TBuf(TPosition.A1), TBuf(TPosition.A2)
        pipe.InitBuffer(l1, 64 * 1024)
        pipe.InitBuffer(l0a, 4096)
        DataCopy(l1.Get(np.float16), GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 2048, 0, 0))
        if with_sync:
            SetFlag(HardEvent.MTE2_MTE1, 0)
            WaitFlag(HardEvent.MTE2_MTE1, 0)
        # reads a part of L1 the copy also writes: only the flag orders them
        LoadData(l0a.Get(np.float16), l1.Get(np.float16), LoadData2DParams(repeatTimes=8))
    return run_kernel(body, np.zeros(32768, np.float16), check_races=False)[1]


def test_removing_a_wait_flag_shortens_the_schedule():
    synced, unsynced = _load_then_copy(True), _load_then_copy(False)
    assert unsynced.cycles < synced.cycles
    load = [i for i in synced.logs[0] if i.name == "LoadData2D"][0]
    copy = [i for i in synced.logs[0] if i.name == "DataCopy"][0]
    assert load.start >= copy.end  # the flag made MTE1 wait for MTE2


def test_double_buffering_overlaps_mte2_with_the_cube():
    m, n, k = 128, 128, 2048
    a, b = _operands(m, n, k)
    single = run_matmul(a, b, block_dim=1, tiling=MatmulTiling(m, n, k, stepK=2, l1_buffers=1)).report
    double = run_matmul(a, b, block_dim=1, tiling=MatmulTiling(m, n, k, stepK=2, l1_buffers=2)).report
    assert double.cycles < single.cycles

    def overlap(report):
        log = report.logs[0]
        copies = [(i.start, i.end) for i in log if i.name == "DataCopy(Nd2Nz)"]
        mmads = [(i.start, i.end) for i in log if i.name == "Mmad"]
        return sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in copies for s2, e2 in mmads)

    assert overlap(double) > overlap(single)


def test_timing_only_mode_gives_the_same_cycles():
    a, b = _operands(256, 128, 256)
    full = run_matmul(a, b, block_dim=2).report
    run = run_matmul(a, b, block_dim=2, execute=False)
    c, fast = run.result, run.report
    assert fast.cycles == full.cycles and fast.counts == full.counts
    assert c is None  # no data moved


def test_cores_share_the_chip_gm_bandwidth():
    a, b = _operands(128, 128, 512)
    p = get_platform("Ascend910B2")
    one = run_matmul(a, b, block_dim=1).report
    copy = [i for i in one.logs[0] if i.name == "DataCopy(Nd2Nz)"][0]
    assert copy.cycles == p.rates.mte2_overhead + copy.nbytes / p.rates.gm_to_l1
    a24, b24 = _operands(128 * 24, 128, 512)
    many = run_matmul(a24, b24, block_dim=24).report
    copy = [i for i in many.logs[5] if i.name == "DataCopy(Nd2Nz)"][0]
    assert copy.cycles == p.rates.mte2_overhead + copy.nbytes / (p.rates.chip_gm_bytes_per_cycle / 24)


def test_report_accounts_bytes_and_utilisation():
    a, b = _operands(128, 256, 128)
    report = run_matmul(a, b, block_dim=1, tiling=MatmulTiling(128, 256, 128)).report
    paths = report.bytes_by_path
    assert paths["GM->L1"] == (2 * 128 * 128 + 128 * 256) * 2  # A is loaded again for each of the 2 N tiles
    assert paths["L0C->GM"] == 128 * 256 * 2
    assert paths["L1->L0A"] == 2 * 128 * 128 * 2  # A is loaded once per N tile
    util = report.utilisation
    assert all(0 <= u <= 1 for u in util.values())
    assert report.microseconds == report.cycles / 1800
    assert "bound by" in report.summary()


def test_openblas_runs_on_one_thread_during_a_launch_and_is_restored():
    from ascend_sim.machine.blas import blas_thread_count, blas_threads

    if blas_thread_count() is None:
        pytest.skip("this numpy has no recognisable OpenBLAS to limit")
    seen = []
    with blas_threads(2):
        run_kernel(lambda: seen.append(blas_thread_count()))
        assert seen == [1] and blas_thread_count() == 2
        run_kernel(lambda: seen.append(blas_thread_count()), blas_threads=None)
        assert seen == [1, 2]
