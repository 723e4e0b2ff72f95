"""The fast engine's scheduler pass (ascend_sim/passes/fast_schedule.py) against the exact one (schedule.py): the same
issue, start and end for every record, the same busy cycles and cycles for every core, the same report, the
same releases, and the same faults, on real kernels, hand-written synchronisation corner cases and random
synthetic streams, each retimed on platforms with other rates, overheads, queue depths, issue cost and clock."""
import numpy as np
import pytest
from conftest import l1_and_l0a, mte2_copy, own_records, run_kernel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim import Chip, SyncFault
from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_MTE2, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy,
                                DataCopyParams, GetBlockIdx, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                                SetFlag, WaitFlag)
from ascend_sim.isa.sync import CROSS_CORE_SET_FLAG, CROSS_CORE_WAIT_FLAG, PIPE_BARRIER, SET_FLAG, SYNC_ALL, WAIT_FLAG
from ascend_sim.machine.coretypes import KernelType, launch_cores
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.platform import get_platform
from ascend_sim.machine.tensor import GmAddr
from ascend_sim.passes.report import CoreReport, RunReport
from ascend_sim.record import Kind, Record, Spec, operands_type
from kernels import conv3d_backprop_input_v2_run
from kernels.matmul import run_matmul

BASE = get_platform("Ascend910B2")
PLATFORMS = [
    BASE,
    BASE.with_overrides(rates={"gm_to_l1": 20.0, "mte1_overhead": 50, "sync_latency": 7, "l1_to_l0b": 96.0},
                        queue_depth=2, clock_mhz=1000, scalar_issue_cycles=3),
    get_platform("Ascend950PR_9599").with_overrides(queue_depth=5, rates={"mmad_overhead": 3, "fixpipe_overhead": 1}),
]


def _key(rec):
    return None if rec is None else (rec.core, rec.seq)


def assert_same(report, platforms=PLATFORMS):
    """Exact and fast retime of `report` agree on every platform, record by record; returns the fast reports."""
    out = []
    for platform in platforms:
        exact = report.retime(platform, engine="exact")
        fast = report.retime(platform, engine="fast")
        assert fast.to_dict() == exact.to_dict()
        for e, f in zip(exact.cores, fast.cores):
            assert (f.cycles, f.busy) == (e.cycles, e.busy)
        for original, e_log, f_log in zip(report.logs, exact.logs, fast.logs):
            assert [(r.seq, r.name, r.issue, r.start, r.end) for r in f_log] == \
                [(r.seq, r.name, r.issue, r.start, r.end) for r in e_log]
            for e, f, rec in zip(e_log, f_log, original):
                assert f is not rec and f.params is rec.params and f.args is rec.args
                if isinstance(e.released_by, tuple):
                    assert tuple(map(_key, f.released_by)) == tuple(map(_key, e.released_by))
                else:
                    assert _key(f.released_by) == _key(e.released_by)
        out.append(fast)
    return out


# ------------------------------------------------------------------------------------------------ kernels
@pytest.mark.parametrize("m, k, n, block_dim", [(512, 256, 384, 4), (96, 80, 64, 2), (300, 200, 130, 1),
                                                (1024, 512, 256, 8)])
def test_matmul(m, k, n, block_dim):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    report = run_matmul(a, b, block_dim=block_dim, execute=False).report
    fast = assert_same(report)
    fresh = run_matmul(a, b, block_dim=block_dim, platform=PLATFORMS[1], execute=False).report
    assert fast[1].to_dict() == fresh.to_dict()  # and both equal a timing-only run there


# small dx problems of tests/kernels/conv3d_backprop_input/test_conv3d_dx.py's GRID (same names and values; timing only, so the data is zeros):
# (dtype, x NCDHW, filter NCDHW, strides DHW, pads, dilations DHW, groups)
DX_CASES = {
    "s1_3x3x3": ("float16", (1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 1, 1, 1, 1, 1), (1, 1, 1), 1),
    "stride_gt_kernel_hw": ("float16", (1, 5, 3, 8, 8), (7, 5, 1, 2, 2), (1, 3, 3), (0,) * 6, (1, 1, 1), 1),
    "bf16_s2_groups": ("bfloat16", (2, 12, 4, 7, 7), (18, 4, 2, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1), (1, 1, 1), 3),
    "fp32_s2_odd": ("float32", (2, 12, 3, 7, 5), (10, 12, 2, 3, 3), (1, 2, 2), (1, 0, 1, 0, 1, 1), (1, 1, 1), 1),
    "fp32_groups": ("float32", (1, 16, 2, 6, 6), (16, 4, 2, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 4),
    "groups_real_g": ("float16", (1, 64, 2, 8, 8), (64, 4, 2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 16),
    "dilation_s2": ("float16", (1, 8, 6, 11, 9), (8, 8, 2, 3, 2), (2, 2, 2), (1, 0, 2, 1, 0, 1), (2, 2, 3), 1),
    "fp32_1x1x1": ("float32", (1, 8, 3, 6, 6), (8, 8, 1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), 1),
}


def same_fault(report, platform) -> str:
    """The SyncFault message a retime on `platform` raises, the same on both engines."""
    with pytest.raises(SyncFault) as exact:
        report.retime(platform, engine="exact")
    with pytest.raises(SyncFault) as fast:
        report.retime(platform, engine="fast")
    assert str(fast.value) == str(exact.value)
    return str(fast.value)


def _out_size(size, k, s, d, before, after):
    return (size + before + after - (k - 1) * d - 1) // s + 1


@pytest.mark.parametrize("name", sorted(DX_CASES))
def test_conv3d_dx(name):
    dtype, x, w, s, p, d, g = DX_CASES[name]
    dtype = DTYPES[dtype]
    dy = (x[0], w[0]) + tuple(_out_size(x[2 + i], w[2 + i], s[i], d[i], p[2 * i], p[2 * i + 1]) for i in range(3))
    run = conv3d_backprop_input_v2_run(x, np.zeros(w, dtype), np.zeros(dy, dtype), strides=(1, 1, *s), pads=p,
                                       dilations=(1, 1, *d), groups=g, data_format="NCDHW", route="v2",
                                       execute=False, check_races=False)
    if name == "stride_gt_kernel_hw":  # the init-output pass: zero y, then the cube cores' cross-core barrier
        aics = sum(c.kind == "AIC" for c in run.report.cores)
        assert run.tiling.conv3DDxTiling.initOutputFlag == 1
        assert sum(r.name == "CrossCoreSetFlag" and r.params["modeId"] == 0 for log in run.report.logs
                   for r in log) == aics
    assert_same(run.report)


# ------------------------------------------------------------------------------------------------ corner cases
def _wait_before_set(loads):
    def body(src):
        l1, l0a = l1_and_l0a()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.M_MTE1, 3)  # issued before its SetFlag: MTE1 waits, the other pipes go on
        for _ in range(loads):
            LoadData(l0a, l1, LoadData2DParams(repeatTimes=1))
        for _ in range(3):
            DataCopy(l1[4096], GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
        SetFlag(HardEvent.M_MTE1, 3)  # IDs 0-2 are the ones TPipe() set
    return body


def test_wait_flag_before_its_set_flag():
    _, report = run_kernel(_wait_before_set(1), np.zeros(1024, np.float16))
    fast = assert_same(report)
    wait, setter = own_records(fast[0].logs[0])[3], [r for r in fast[0].logs[0] if r.name == "SetFlag"][-1]
    assert wait.event == setter.event == ("M_MTE1", 3)
    assert wait.released_by is setter and wait.start >= setter.end


def test_queue_full_stalls_and_deadlock():
    # five loads behind the waiting WaitFlag: a queue of 2 (or 5) stalls the scalar unit, and since the SetFlag
    # comes after them it never issues: both engines report the same deadlock
    _, report = run_kernel(_wait_before_set(5), np.zeros(1024, np.float16))
    assert_same(report, [BASE, BASE.with_overrides(queue_depth=8)])
    for depth in (2, 5):
        assert "cannot be scheduled: #6 MTE1 WaitFlag" in same_fault(report, BASE.with_overrides(queue_depth=depth))
    # queue full without a deadlock: a long run of loads on one pipe
    def loads(src):
        l1, l0a = l1_and_l0a()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        for i in range(12):
            LoadData(l0a[(i % 4) * 256], l1, LoadData2DParams(repeatTimes=1))
    _, report = run_kernel(loads, np.zeros(1024, np.float16))
    assert_same(report, [BASE.with_overrides(queue_depth=d, scalar_issue_cycles=s) for d, s in ((1, 1), (3, 2))])


def test_cross_core_flags_mix_aic_1_2():
    def body(src):
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(3)  # the AIC's mode-2 set reaches both AIVs
            CrossCoreSetFlag(1, PIPE_MTE3, 5)  # the two AIVs of the AI core
            CrossCoreWaitFlag(5)
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        else:
            mte2_copy(src, 4096 * (1 + GetBlockIdx()))
            CrossCoreSetFlag(2, PIPE_MTE2, 3)  # after the copy has completed
            CrossCoreWaitFlag(4)  # needs the sets of both AIVs
            CrossCoreSetFlag(0, PIPE_MTE2, 6)  # every AIC
            CrossCoreWaitFlag(6)
    chip = Chip(execute=False)
    src = GmAddr(chip.gm.upload("x", np.zeros(8192, np.float16)))
    report = chip.launch(body, 3, src, kernel_type="MIX_AIC_1_2")
    fast = assert_same(report)
    aiv_wait = fast[0].logs[1][0]
    aic_set = own_records(fast[0].logs[0])[1]
    assert aiv_wait.name == "CrossCoreWaitFlag" and aiv_wait.released_by == (aic_set,)


def test_cross_core_flags_mix_aic_1_0():
    def body(src):
        if GetBlockIdx() == 1:
            mte2_copy(src, 64 * 1024)  # the slow core
        for _ in range(2):
            CrossCoreSetFlag(0, PIPE_MTE2, 11)
            CrossCoreWaitFlag(11)
    chip = Chip(execute=False)
    src = GmAddr(chip.gm.upload("x", np.zeros(32768, np.float16)))
    report = chip.launch(body, 3, src, kernel_type="MIX_AIC_1_0")
    fast = assert_same(report)
    waits = [own_records(log)[-1] for log in fast[0].logs]
    assert all(len(w.released_by) == 3 for w in waits)


def test_engine_argument():
    _, report = run_kernel(_wait_before_set(1), np.zeros(1024, np.float16))
    with pytest.raises(ValueError, match="engine='slow' must be 'fast' or 'exact'"):
        report.retime(BASE, engine="slow")


# ------------------------------------------------------------------------------------------------ synthetic
_AIC_PIPES = (Pipe.S, Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3)
_AIV_PIPES = (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3)
_EVENTS = {"AIC": (("MTE2_MTE1", Pipe.MTE2, Pipe.MTE1), ("M_MTE1", Pipe.M, Pipe.MTE1), ("M_FIX", Pipe.M, Pipe.FIX)),
           "AIV": (("MTE2_V", Pipe.MTE2, Pipe.V), ("V_MTE3", Pipe.V, Pipe.MTE3))}
# a plain instruction whose cost depends on the platform and the launch (the GM read rate is shared by the cores)
_Synthetic = operands_type("Synthetic", "scale cycles", "scale x 110 bytes at the GM read rate, plus cycles")
_OP = Spec("SyntheticOp", None, Kind.COMPUTE, _Synthetic,
           lambda ops, model: ops.scale * (110.0 / model.gm_read_rate) + ops.cycles, None, None, "")


def _synthetic_report(seed: int) -> RunReport:
    """A random launch: per core a stream of plain instructions, SetFlag/WaitFlag pairs (the wait sometimes
    before its set), barriers, SyncAll (as many per core) and cross-core flags of legal modes. Not every stream
    can be scheduled (a wait can come before its set behind a full queue); then both engines must fault alike."""
    rng = np.random.default_rng(seed)
    kernel_type = KernelType(str(rng.choice(["AIC_ONLY", "MIX_AIC_1_0", "MIX_AIC_1_1", "MIX_AIC_1_2"])))
    layout = launch_cores(kernel_type, int(rng.integers(1, 4)))
    kinds, groups = [t.name for t, *_ in layout], [g for *_, g in layout]
    streams = [[] for _ in layout]

    def op(c, spec, pipe, args=None, event=None):
        streams[c].append((spec, pipe, args, event))

    def insert(c, item, after=None):  # at a random place (after index `after` if given)
        lo = 0 if after is None else after + 1
        pos = int(rng.integers(lo, len(streams[c]) + 1))
        streams[c].insert(pos, item)
        return pos

    for c, kind in enumerate(kinds):
        pipes = _AIC_PIPES if kind == "AIC" else _AIV_PIPES
        for _ in range(int(rng.integers(0, 25))):
            cost = float(rng.choice([0.0, 1.0, 2.5, 7.0, 1 / 3, 13.75]))
            op(c, _OP, pipes[int(rng.integers(len(pipes)))], _Synthetic(cost, float(rng.integers(0, 3))))
        for _ in range(int(rng.integers(0, 5))):  # flag pairs on one key
            name, src, dst = _EVENTS[kind][int(rng.integers(len(_EVENTS[kind])))]
            event = (name, int(rng.integers(0, 2)))
            s = insert(c, (SET_FLAG, src, None, event))
            insert(c, (WAIT_FLAG, dst, None, event), after=None if rng.random() < 0.3 else s)
        for _ in range(int(rng.integers(0, 3))):
            insert(c, (PIPE_BARRIER, Pipe.ALL if rng.random() < 0.5 else pipes[1 + int(rng.integers(len(pipes) - 1))],
                       None, None))
    for _ in range(int(rng.integers(0, 3))):  # SyncAll: every core, as many times
        for c in range(len(layout)):
            insert(c, (SYNC_ALL, Pipe.ALL, None, None))
    if kernel_type.cross_core_flags:
        for _ in range(int(rng.integers(0, 4))):
            flag = int(rng.integers(0, 16))
            cores = list(range(len(layout)))
            mode = int(rng.integers(0, 3)) if kernel_type.aiv_per_aic else 0
            if mode == 0:
                kind = kinds[int(rng.integers(len(kinds)))]
                setters = receivers = [c for c in cores if kinds[c] == kind]
            else:
                group = groups[int(rng.integers(len(groups)))]
                aics = [c for c in cores if groups[c] == group and kinds[c] == "AIC"]
                aivs = [c for c in cores if groups[c] == group and kinds[c] == "AIV"]
                if mode == 1:
                    setters = receivers = aivs
                elif rng.random() < 0.5:
                    setters, receivers = aics, aivs
                else:
                    setters, receivers = aivs, aics
            for c in setters:
                pipes = _AIC_PIPES if kinds[c] == "AIC" else _AIV_PIPES
                insert(c, (CROSS_CORE_SET_FLAG, pipes[1 + int(rng.integers(len(pipes) - 1))], None, (mode, flag)))
            for c in receivers:
                insert(c, (CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, flag)))
    return _report(kinds, groups, streams)


def _report(kinds, groups, streams) -> RunReport:
    """A report of hand-made streams: per core a list of (spec, pipe, args, event)."""
    logs, cores = [], []
    for c, items in enumerate(streams):
        log = [Record(c, seq, spec, pipe, None, args, (), (), (None, 0), event=event)
               for seq, (spec, pipe, args, event) in enumerate(items)]
        counts = {}
        for rec in log:
            counts[rec.name] = counts.get(rec.name, 0) + 1
        busy = {p.name: 0.0 for p in (Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3, Pipe.V)}
        cores.append(CoreReport(c, 0.0, busy, {}, counts, f"{kinds[c]} {c}", kinds[c], groups[c]))
        logs.append(log)
    return RunReport(BASE, cores, logs)


def test_cross_core_count_overflow_is_the_same_fault():
    aic = [(CROSS_CORE_SET_FLAG, Pipe.MTE2, None, (2, 1))] * 16
    aiv = [(CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, 1))] * 16
    report = _report(["AIC", "AIV"], [0, 0], [aic, aiv])
    assert "counted past 15" in same_fault(report, BASE)
    report = _report(["AIC", "AIV"], [0, 0], [aic[:15], aiv[:15]])  # 15 pending counts are fine
    assert_same(report, [BASE])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 4), st.sampled_from([1, 2, 3]), st.sampled_from([0, 2, 5]))
def test_random_streams(seed, depth, issue_cycles, latency):
    report = _synthetic_report(seed)
    platform = BASE.with_overrides(queue_depth=depth, scalar_issue_cycles=issue_cycles,
                                   rates={"sync_latency": latency, "gm_to_l1": 37.0})
    try:
        exact = report.retime(platform, engine="exact")
    except SyncFault as fault:
        with pytest.raises(SyncFault) as fast:
            report.retime(platform, engine="fast")
        assert str(fast.value) == str(fault)
        return
    assert_same(report, [platform])
    assert exact.cycles >= 0


# ------------------------------------------------------------------------------------------------ the pass's shortcuts
# The compiled pass takes submit's inline path when nothing is pending, and does not pump a core whose scalar unit
# is stalled on an earlier record (only another step can free it). Streams where each shortcut applies, and where
# what frees the core comes from another core, a later record of the same core, or nothing (a fault).
def _ops(pipe, k, cost=1.0):
    return [(_OP, pipe, _Synthetic(cost, 0.0), None)] * k


_WAIT = (WAIT_FLAG, Pipe.MTE1, None, ("MTE2_MTE1", 0))
_SET = (SET_FLAG, Pipe.MTE2, None, ("MTE2_MTE1", 0))


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_stall_freed_by_another_core(depth):
    # the AIC waits for its AIVs' count with a long backlog behind; the AIVs set it after work of their own, one
    # of them from its inline path (nothing pending), the other behind a WaitFlag issued before its SetFlag
    aic = [(CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, 4))] + _ops(Pipe.MTE2, 12, 3.0) + _ops(Pipe.MTE1, 6) + \
        [(PIPE_BARRIER, Pipe.ALL, None, None), (CROSS_CORE_SET_FLAG, Pipe.FIX, None, (2, 5))] + _ops(Pipe.M, 3)
    aiv = [(WAIT_FLAG, Pipe.V, None, ("MTE2_V", 1))] + _ops(Pipe.MTE2, 5, 13.75) + \
        [(SET_FLAG, Pipe.MTE2, None, ("MTE2_V", 1)), (CROSS_CORE_SET_FLAG, Pipe.V, None, (2, 4)),
         (CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, 5))] + _ops(Pipe.V, 4)
    plain = _ops(Pipe.MTE2, 7, 2.5) + [(CROSS_CORE_SET_FLAG, Pipe.MTE3, None, (2, 4)),
                                       (CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, 5))]
    report = _report(["AIC", "AIV", "AIV"], [0, 0, 0], [aic, aiv, plain])
    assert_same(report, [BASE.with_overrides(queue_depth=depth), BASE.with_overrides(queue_depth=depth,
                                                                                      scalar_issue_cycles=3)])


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_stall_freed_by_the_same_core(depth):
    # a full MTE1 queue behind a WaitFlag whose SetFlag comes after slow loads (issued, so it runs): the scalar
    # unit stalls and records pile up in the backlog until the SetFlag has started; then a SyncAll with another
    # core that arrives late
    aic = _ops(Pipe.MTE2, 3, 7.0) + [_SET, _WAIT] + _ops(Pipe.MTE1, 9) + _ops(Pipe.M, 4, 1 / 3) + \
        [(SYNC_ALL, Pipe.ALL, None, None)] + _ops(Pipe.FIX, 2)
    other = _ops(Pipe.MTE2, 20, 13.75) + [(SYNC_ALL, Pipe.ALL, None, None)] + _ops(Pipe.MTE1, 2)
    report = _report(["AIC", "AIC"], [0, 1], [aic, other])
    assert_same(report, [BASE.with_overrides(queue_depth=depth)])


def test_stalled_core_faults_alike():
    # a WaitFlag with no SetFlag behind a full queue: the backlog never issues (a deadlock); a cross-core wait
    # whose count never comes; both engines give the same fault on each
    stuck = [_WAIT] + _ops(Pipe.MTE1, 6) + _ops(Pipe.MTE2, 3)
    never = [(CROSS_CORE_WAIT_FLAG, Pipe.S, None, (0, 2))] + _ops(Pipe.MTE2, 5)
    for streams, kinds, groups in (([stuck], ["AIC"], [0]), ([_ops(Pipe.MTE2, 2), never], ["AIC", "AIV"], [0, 0])):
        report = _report(kinds, groups, streams)
        for depth in (1, 2):
            assert "never runs" in same_fault(report, BASE.with_overrides(queue_depth=depth))
