"""The fp16/bf16 NCDHW dx path as aclnn runs it: a MIX AIC:AIV 1:1 launch whose vector cores write NCDHW.

Per tile the AIC Fixpipes into its workspace slot and raises cross-core flag 6; the AIV copies the tile into UB,
raises flag 5, transposes it with TransDataTo5HD and writes it with DataCopyPad. Results against PyTorch float64
(test_conv3d_dx.check_case); the instruction streams of both sides; fp32 and NDHWC keep the cube-only NDC1HWC0
build; an AIV that never frees the workspace slot is a deadlock naming both cores.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from ascend_sim import SyncFault
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input import plan_conv3d_dx
from kernels.conv3d_backprop_input.kernel.arch22 import vec_post
from tests.kernels.conv3d_backprop_input.test_conv3d_dx import BF16, F16, F32, check_case

AIV_SIDE = ("DataCopy(GM->UB)", "TransDataTo5HD", "DataCopyPad(UB->GM)")


def _cores(run, kind):
    return [i for i, c in enumerate(run.report.cores) if c.kind == kind]


def _names(run, kind):
    return {r.name for i in _cores(run, kind) for r in run.report.logs[i]}


def _flags(run, kind):
    """(modeId, pipe, flagId) of every CrossCoreSetFlag the cores of `kind` issued."""
    return {(r.params["modeId"], r.pipe.name, r.params["flagId"]) for i in _cores(run, kind)
            for r in run.report.logs[i] if r.name == "CrossCoreSetFlag"}


# (dtype, x NCDHW, filter NCDHW, strides DHW, pads, groups, tiling overrides): what each case exercises
CASES = {
    # baseUseM = 48, a multiple of 16: one DataCopyPad of blockCount channels per tile
    "f16_whole_rows": (F16, (1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1,) * 6, 1, {}),
    # Cin 20 (a partial C0 block: 4 channels written of the last 16), batch 2, M tail 36 of 48
    "f16_odd_channels_batch2_tail": (F16, (2, 20, 3, 7, 12), (24, 20, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), 1,
                                     {"baseM": 48}),
    # stride > kernel: the init pass zeroes NCDHW (Cin, not cin1 x C0, elements) and tiles are skipped
    "bf16_stride_gt_kernel": (BF16, (1, 5, 3, 8, 8), (7, 5, 1, 2, 2), (1, 3, 3), (0,) * 6, 1, {}),
    # groups (general driver, super-groups with channels per group not a multiple of 16)
    "bf16_groups": (BF16, (2, 12, 4, 7, 7), (18, 4, 2, 3, 3), (2, 2, 2), (1,) * 6, 3, {}),
    "f16_depthwise": (F16, (1, 32, 3, 6, 6), (32, 1, 1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), 32, {}),
}


@pytest.mark.parametrize("name", CASES)
def test_mix_ncdhw_matches_torch(name):
    dtype, x, w, s, p, g, over = CASES[name]
    run = check_case(dtype, x, w, s, p, groups=g, tiling_overrides=over or None)
    aic, aiv = _cores(run, "AIC"), _cores(run, "AIV")
    assert len(aic) == len(aiv) == run.tiling.params.coreNum
    assert set(AIV_SIDE) <= _names(run, "AIV")
    assert _flags(run, "AIC") >= {(2, "FIX", 6)} and _flags(run, "AIV") == {(2, "MTE2", 5)}
    pads = [r.params for i in aiv for r in run.report.logs[i] if r.name == "DataCopyPad(UB->GM)"]
    if name == "f16_whole_rows":
        assert {q.blockCount for q in pads} == {16} and {q.blockLen for q in pads} == {48 * 2}
    if name == "f16_odd_channels_batch2_tail":  # 48-row tiles: one copy of the 20 real channels (of 32 in UB);
        # the 36-row tail tiles: one copy per channel row (UB rows are not whole 32-byte blocks apart then)
        assert {(q.blockCount, q.blockLen) for q in pads} == {(20, 48 * 2), (1, 36 * 2)}
    if name == "bf16_stride_gt_kernel":
        assert run.tiling.conv3DDxTiling.initOutputFlag == 1
        assert _flags(run, "AIC") == {(0, "FIX", 11), (2, "FIX", 6)}  # the init pass's barrier: FIX-pipe flag 11
        assert "SyncAll" not in _names(run, "AIC")


def test_fp32_and_ndhwc_stay_on_the_cube_cores():
    """fp32 (and HF32) NCDHW and fp16 NDHWC: the NDC1HWC0 build, converted on the host; no vector core runs."""
    for dtype, fmt in ((F32, "NCDHW"), (F16, "NDHWC")):
        run = check_case(dtype, (1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1,) * 6, data_format=fmt)
        assert not _cores(run, "AIV")
        names = _names(run, "AIC")
        assert not names & set(AIV_SIDE) and "Fixpipe" in names
    for dtype, fmt, hf32, want in ((F16, "NCDHW", False, "NCDHW"), (BF16, "NCDHW", False, "NCDHW"),
                                   (F32, "NCDHW", True, "NDC1HWC0"), (F16, "NDHWC", False, "NDC1HWC0")):
        shape = (1, 16, 2, 6, 8) if fmt == "NCDHW" else (1, 2, 6, 8, 16)
        dy = (1, 16, 2, 6, 8) if fmt == "NCDHW" else (1, 2, 6, 8, 16)
        stride = (1, 1, 1, 1, 1)
        plan = plan_conv3d_dx(shape, (16, 16, 3, 3, 3), dy, dtype, strides=stride, pads=(1,) * 6,
                              data_format=fmt, enable_hf32=hf32, route="v2")
        assert plan.y_format == want, (dtype, fmt, hf32)
    arch35 = plan_conv3d_dx((1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 16, 2, 6, 8), F16, strides=(1,) * 5,
                            pads=(1,) * 6, data_format="NCDHW", platform="Ascend950PR_9599", route="v2")
    assert arch35.y_format == "NDC1HWC0"  # regbase chips run the arch35 kernel (not modelled)


def test_the_aiv_copies_each_tile_after_its_fixpipe_and_the_aic_reuses_the_slot_after_the_copy():
    run = check_case(F16, (1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1,) * 6)
    logs = run.report.logs
    for aic, aiv in zip(_cores(run, "AIC"), _cores(run, "AIV")):
        fixpipes = [r for r in logs[aic] if r.name == "Fixpipe"]
        copies = [r for r in logs[aiv] if r.name == "DataCopy(GM->UB)"]
        waits = [r for r in logs[aic] if r.name == "CrossCoreWaitFlag"]
        assert len(fixpipes) == len(copies) >= 1 and len(waits) == len(fixpipes)
        for fix, copy in zip(fixpipes, copies):
            assert copy.start >= fix.end
        for copy, nxt in zip(copies, fixpipes[1:]):  # the next Fixpipe into the slot waits for the copy
            assert nxt.start >= copy.end


def test_an_aiv_that_never_frees_the_slot_deadlocks_naming_both_cores(monkeypatch):
    real = vec_post.CrossCoreSetFlag

    def skip_flag_5(mode, pipe, flag):
        if flag != vec_post.SYNC_AIV_AIC_FLAG:
            real(mode, pipe, flag)
    monkeypatch.setattr(vec_post, "CrossCoreSetFlag", skip_flag_5)
    w = np.ones((16, 16, 3, 3, 3), np.float16)
    dy = np.ones((1, 16, 2, 6, 8), np.float16)
    messages = []
    for engine in ("exact", "fast"):
        with pytest.raises(SyncFault) as info:
            conv3d_backprop_input_v2_run((1, 16, 2, 6, 8), w, dy, strides=(1,) * 5, pads=(1,) * 6,
                                         data_format="NCDHW", route="v2", tiling_overrides={"baseM": 16},
                                         engine=engine)
        messages.append(str(info.value))
    # the AIC waits for flag 5 before its second Fixpipe; its AIV waits for flag 6 of that second tile
    assert re.search(r"deadlock: #\d+ S CrossCoreWaitFlag at drivers.py:\d+ on AIC 0 waits for cross-core flag 5, "
                     r"which no core sets any more: AIV 0 is stuck at #\d+ S CrossCoreWaitFlag", messages[0])
    assert messages[0] == messages[1]


def test_the_trace_shows_each_aic_and_aiv_with_its_pipes_and_the_flags_between_them(tmp_path):
    import json
    path = tmp_path / "dx.json"
    check_case(F16, (1, 16, 2, 6, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1,) * 6, trace=str(path))
    events = json.loads(path.read_text())["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
    threads = {(e["pid"], e["args"]["name"]) for e in events if e.get("name") == "thread_name"}
    assert sorted(processes.values()) == ["AIC 0", "AIC 1", "AIV 0", "AIV 1"]
    aiv = next(pid for pid, name in processes.items() if name == "AIV 0")
    aic = next(pid for pid, name in processes.items() if name == "AIC 0")
    assert {"V", "MTE2", "MTE3"} <= {name for pid, name in threads if pid == aiv}
    assert {"M", "MTE1", "FIX"} <= {name for pid, name in threads if pid == aic}
    arrows = [(e["ph"], e["pid"]) for e in events if e.get("name") == "cross-core flag"]
    assert ("s", aic) in arrows and ("f", aiv) in arrows and ("s", aiv) in arrows and ("f", aic) in arrows
