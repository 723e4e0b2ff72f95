"""Streamed launches (ascend_sim/engine/streamed.py): a replay run keeping no records, timing-only and without race
checks, schedules each AI core's streams once its Python has run and drops them. The cycles, per-pipe figures and
faults are the exact engine's (record=False there too), and the memory held is one AI core's stream."""
import tracemalloc

import numpy as np
import pytest
from conftest import mte2_copy

from ascend_sim import Chip, SimFault
from ascend_sim.ascendc import ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, GetBlockIdx, SyncAll
from ascend_sim.engine import streamed
from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run
from kernels.common.operands import stand_in
from tests.ascend_sim.engine.test_engines import DX_CASES, FAULTS, _kernel
from tests.dx_ut_cases import TILED, operator_arguments, real_overrides

TIMING = dict(execute=False, check_races=False, record=False)


@pytest.fixture
def launches(monkeypatch):
    """Each streamed launch's (AI cores scheduled as they ended, cores held for the end), as `finish` sees them."""
    seen = []
    finish = streamed.StreamedLaunch.finish

    def spy(self):
        seen.append((self.scheduled, len(self.held)))
        return finish(self)
    monkeypatch.setattr(streamed.StreamedLaunch, "finish", spy)
    return seen


def dx_timing(case, engine):
    x, cout, kernel, strides, pads, dilations, groups, dtype = DX_CASES[case]
    dtype = DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    n, cin, *spatial = x
    out = [(size + pads[2 * i] + pads[2 * i + 1] - dilations[i] * (k - 1) - 1) // s + 1
           for i, (size, k, s) in enumerate(zip(spatial, kernel, strides))]
    return conv3d_backprop_input_v2_run(x, stand_in((cout, cin // groups, *kernel), dtype),
                                        stand_in((n, cout, *out), dtype), strides=(1, 1, *strides), pads=pads,
                                        dilations=(1, 1, *dilations), groups=groups, data_format="NCDHW",
                                        engine=engine, **TIMING)


@pytest.mark.parametrize("case", list(DX_CASES))
def test_dx_corpus_streamed_gives_the_exact_engines_report(case, launches):
    run = dx_timing(case, "exact")
    exact = run.report
    assert not launches  # the exact engine does not stream
    replayed = dx_timing(case, "replay").report
    assert replayed.to_dict() == exact.to_dict()
    if run.tiling.conv3DDxTiling.initOutputFlag == 1:  # the init pass's barrier (mode-0 flags): held to the end
        assert launches == [(0, len(exact.cores))]
    else:  # every AI core streamed
        assert launches == [(len({c.group for c in exact.cores}), 0)]


def test_auto_streams_a_run_keeping_no_records_and_the_compiled_pass_times_it(launches, monkeypatch):
    from ascend_sim.engine import chip

    case = "R3D stem, shrunk"
    exact = dx_timing(case, "exact").report
    monkeypatch.setattr(chip, "AUTO_COMPILED_FROM", 0)  # the compiled pass also for this short run
    scheduled = []
    schedule = streamed.StreamedLaunch._schedule
    monkeypatch.setattr(streamed.StreamedLaunch, "_schedule",
                        lambda self, group: scheduled.append(group[0].group) or schedule(self, group))
    assert dx_timing(case, "auto").report.to_dict() == exact.to_dict()
    assert launches and launches[0][1] == 0 and len(scheduled) == launches[0][0] > 1


@pytest.mark.parametrize("name", ["Conv3d_bp_input_dilation", "Conv3ddx_whitebox_3"])
def test_the_two_smallest_real_tilings_streamed_give_the_exact_cycles(name, launches):
    case = next(c for c in TILED if c["case_name"] == name)
    dtype = DTYPES[case["dtype"]]

    def run(engine):
        return conv3d_backprop_input_v2_run(
            tuple(case["y_ori_shape"]), stand_in(case["filter_ori_shape"], dtype),
            stand_in(case["out_backprop_ori_shape"], dtype), route="v2", engine=engine,
            tiling_overrides=real_overrides(case), **operator_arguments(case), **TIMING)
    exact, replayed = run("exact").report, run("replay")
    assert replayed.report.to_dict() == exact.to_dict() and replayed.report.instructions == exact.instructions
    barrier = replayed.tiling.conv3DDxTiling.initOutputFlag == 1  # the init pass's: held to the end
    assert launches == ([(0, len(exact.cores))] if barrier else [(len({c.group for c in exact.cores}), 0)])


def _observe(engine, launch):
    chip = Chip(engine=engine, **TIMING)
    try:
        return launch(chip).to_dict()
    except SimFault as fault:
        return ("fault", type(fault).__name__, str(fault))


@pytest.mark.parametrize("case", [name for name in FAULTS if "race" not in name])  # no race checks here
def test_faults_streamed_are_the_exact_engines(case):
    exact = _observe("exact", FAULTS[case])
    assert _observe("replay", FAULTS[case]) == exact
    assert exact[0] == "fault"


def _reach_past_from(block):
    """AI cores before `block` are on their own; from it on, each sets a mode-0 flag (every AIC) or SyncAll."""
    def body(src):
        mte2_copy(src)
        if GetBlockIdx() >= block:
            SyncAll()
    return body


@pytest.mark.parametrize("block", [0, 2, 3])
def test_an_ai_core_reaching_past_itself_holds_the_rest_and_faults_as_the_exact_engine(block, launches):
    launch = _kernel(_reach_past_from(block), np.zeros(2048, np.float16), block_dim=3)
    exact = _observe("exact", launch)
    assert _observe("replay", launch) == exact
    assert isinstance(exact, tuple) == (0 < block < 3)  # a SyncAll on some cores only never completes
    assert launches == [(block, 3 - block)]


def test_cross_core_flags_inside_each_ai_core_stream_and_agree(launches):
    def body(src):
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(3)
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        else:
            mte2_copy(src)
            CrossCoreSetFlag(2, PIPE_MTE3, 3)
            CrossCoreWaitFlag(4)
    launch = _kernel(body, np.zeros(2048, np.float16), block_dim=3, kernel_type="MIX_AIC_1_2")
    assert _observe("replay", launch) == _observe("exact", launch)
    assert launches == [(3, 0)]


def c3d_timing(depth_hw, engine, record):
    """C3D conv3a's dx (fp16, NCDHW: the MIX build, 24 AI cores) at depth x height x width `depth_hw`, timing-only."""
    x = (1, 128, *depth_hw)
    return conv3d_backprop_input_v2_run(x, stand_in((256, 128, 3, 3, 3), np.float16), stand_in((1, 256, *depth_hw),
                                        np.float16), strides=(1,) * 5, pads=(1,) * 6, data_format="NCDHW",
                                        execute=False, check_races=False, record=record, engine=engine)


def traced_peak(run):
    """(what run() returned, its tracemalloc peak in bytes)."""
    tracemalloc.start()
    try:
        out = run()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_streamed_run_holds_far_less_than_one_keeping_its_blocks():
    """310k instructions in about 2,700 blocks: kept as blocks (record=True, records unmade) the run peaks at about
    48 MiB, streamed at about 9 MiB (one AI core's stream of 24, plus the templates)."""
    c3d_timing((16, 56, 56), "replay", False)  # warm: imports, compiled functions, the plan's caches
    streamed_run, streamed = traced_peak(lambda: c3d_timing((16, 56, 56), "replay", False))
    kept_run, kept = traced_peak(lambda: c3d_timing((16, 56, 56), "replay", True))
    assert streamed_run.report.to_dict() == kept_run.report.to_dict()
    assert streamed_run.report.instructions > 300_000
    assert streamed < 0.3 * kept, (streamed, kept)
