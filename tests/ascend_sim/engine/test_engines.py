"""The exact and the fast engine agree on every record, cycle count, per-pipe figure, result byte and fault.

The fast engine schedules after the kernel's Python with the compiled scheduler (ascend_sim/engine/fast_engine.py); the
exact one schedules each record as it is issued. Each case runs on both, and everything observable is compared:
the records with their parameters, schedule and releases, the order the passes ran them in, the report, the GM
bytes, and the fault's type and message. (test_faults.py and test_engine.py also run whole on both engines.)
"""
import numpy as np
import pytest
from conftest import l1_and_l0a, mte2_copy

from ascend_sim import Chip, SimFault
from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_MTE2, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy,
                                DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams, SetFlag, SyncAll,
                                WaitFlag)
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.tensor import GmAddr
from kernels import conv3d_backprop_input_v2_run
from kernels.matmul import MatmulTiling, matmul_kernel, run_matmul


def _released(rec):
    by = rec.released_by
    if by is None:
        return None
    return tuple((r.core, r.seq) for r in by) if isinstance(by, tuple) else (by.core, by.seq)


def plain(value):
    """A record field comparable across chips: buffers by name, arrays by their bytes."""
    if isinstance(value, Buffer):
        return value.name
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if hasattr(value, "__code__"):  # a vector instruction's element function, made per call
        return ("function", value.__qualname__)
    if isinstance(value, (tuple, list)):
        return type(value).__name__, tuple(map(plain, value))
    return value


def all_fields(report):
    """Every field of every record; API call ids (unique in the process) numbered in order of appearance."""
    ids: dict = {}
    out = []
    for log in report.logs:
        for r in log:
            by = r.released_by
            released = None if by is None else (tuple((x.core, x.seq) for x in by) if isinstance(by, tuple)
                                                else (by.core, by.seq))
            out.append((r.core, r.seq, r.name, r.pipe, plain(r.params), plain(r.args), plain(r.reads),
                        plain(r.writes), plain(r.registers), r.src, r.path, r.nbytes, r.event, plain(r.footprint),
                        tuple((name, ids.setdefault(call, len(ids))) for name, call in r.api), r.issue, r.start,
                        r.end, released))
    return out


def _records(report):
    return [[(r.core, r.seq, r.name, r.pipe, r.params, r.nbytes, r.source, r.issue, r.start, r.end, _released(r))
             for r in log] for log in report.logs]


def observe(engine, launch):
    """Everything a run shows on `engine`: ("fault", type, message) or its records, order, report and GM."""
    chip = Chip(engine=engine)
    try:
        report = launch(chip)
    except SimFault as fault:
        return ("fault", type(fault).__name__, str(fault))
    return (all_fields(report), [(r.core, r.seq) for r in chip.executed], report.to_dict(),
            {name: bytes(buf.data) for name, buf in chip.gm.allocations.items()})


def _agree(launch):
    exact, fast, replay = observe("exact", launch), observe("fast", launch), observe("replay", launch)
    assert fast == exact
    assert replay == exact
    return exact


# ------------------------------------------------------------------------------------------ kernels
def matmul_launch(m, n, k, block_dim, dtype=np.float16, batch=1):
    def launch(chip):
        rng = np.random.default_rng(m * n + k)  # the same operands on each engine
        a = rng.standard_normal((batch, m, k) if batch > 1 else (m, k)).astype(dtype)
        b = rng.standard_normal((k, n)).astype(dtype)
        t = MatmulTiling.for_shape(m, n, k, np.dtype(dtype).name, batch=batch, shared_b=batch > 1)
        a_gm, b_gm = GmAddr(chip.gm.upload("a", a)), GmAddr(chip.gm.upload("b", b))
        c_gm = GmAddr(chip.gm.alloc("c", batch * m * n * np.dtype(dtype).itemsize))
        return chip.launch(matmul_kernel, block_dim, a_gm, b_gm, c_gm, t)
    return launch


MATMUL_SHAPES = [(96, 64, 80, 2), (256, 384, 512, 8), (33, 17, 300, 1), (128, 256, 64, 20)]  # (m, n, k, cores)


@pytest.mark.parametrize("shape", MATMUL_SHAPES)
def test_matmul_kernels_agree(shape):
    records, *_ = _agree(matmul_launch(*shape))
    assert sum(map(len, records)) > 10


def test_a_batched_fp32_matmul_agrees():
    _agree(matmul_launch(64, 96, 40, 4, np.float32, batch=3))


def _kernel(body, *arrays, block_dim=1, kernel_type="AIC_ONLY"):
    def launch(chip):
        addrs = [GmAddr(chip.gm.upload(f"in{i}", a)) for i, a in enumerate(arrays)]
        return chip.launch(body, block_dim, *addrs, kernel_type=kernel_type)
    return launch


def _racy_copy_then(after):
    """An MTE2 -> MTE1 race (no flag), then `after()`: the exact engine meets the race before `after` is issued."""
    def body(src):
        l1, l0a = l1_and_l0a()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 16, 0, 0))
        LoadData(l0a, l1, LoadData2DParams(repeatTimes=1))
        after(src)
    return body


def _out_of_bounds(src):
    l1, _ = l1_and_l0a()
    DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 4096, 0, 0))


def _python_error(src):
    raise KeyError("a bug in the kernel's own Python")


def _deadlock():
    WaitFlag(HardEvent.M_MTE1, 1)
    SetFlag(HardEvent.MTE1_M, 1)
    WaitFlag(HardEvent.MTE1_M, 1)


def _cross_core_overflow():
    if ASCEND_IS_AIV():
        for _ in range(16):
            CrossCoreSetFlag(2, PIPE_MTE3, 1)


def _half_sync_all():
    from ascend_sim.ascendc import GetBlockIdx
    if GetBlockIdx() == 0:
        SyncAll()


FAULTS = {
    "race": _kernel(_racy_copy_then(lambda src: None), np.zeros(256, np.float16)),
    "race before an out-of-bounds copy": _kernel(_racy_copy_then(_out_of_bounds), np.zeros(256, np.float16)),
    "race before a Python error": _kernel(_racy_copy_then(_python_error), np.zeros(256, np.float16)),
    "out of bounds": _kernel(_out_of_bounds, np.zeros(256, np.float16)),
    "deadlock": _kernel(_deadlock),
    "flag left set": _kernel(lambda: SetFlag(HardEvent.M_FIX, 1)),
    "flag set twice": _kernel(lambda: (SetFlag(HardEvent.M_FIX, 1), SetFlag(HardEvent.M_FIX, 1))),
    "cross-core overflow": _kernel(_cross_core_overflow, kernel_type="MIX_AIC_1_1"),
    "cross-core wait never set": _kernel(lambda: CrossCoreWaitFlag(1) if ASCEND_IS_AIV() else None,
                                         kernel_type="MIX_AIC_1_1"),
    "SyncAll on one core of two": _kernel(_half_sync_all, block_dim=2),
}


@pytest.mark.parametrize("case", list(FAULTS))
def test_faults_agree(case):
    observed = _agree(FAULTS[case])
    assert observed[0] == "fault", observed


def test_a_race_found_after_the_kernel_python_still_wins_over_a_later_python_error():
    # the exact engine stops at the race while the kernel runs; the fast engine finds it afterwards
    kind, message = observe("fast", FAULTS["race before a Python error"])[1:]
    assert kind == "RaceFault" and "LoadData2D" in message


def test_cross_core_kernels_agree():
    def body(src):
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(3)
            CrossCoreSetFlag(2, PIPE_MTE3, 4)
        else:
            mte2_copy(src)
            CrossCoreSetFlag(2, PIPE_MTE2, 3)
            CrossCoreWaitFlag(4)
        SyncAll()
    _agree(_kernel(body, np.zeros(2048, np.float16), block_dim=3, kernel_type="MIX_AIC_1_2"))


# ------------------------------------------------------------------------------------------ the dx operator
DX_CASES = {  # (input NCDHW, cout, kernel, strides, pads, dilations, groups, dtype)
    "C3D conv3a, shrunk": ((1, 32, 4, 8, 8), 64, (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1, np.float16),
    "R3D stem, shrunk": ((1, 3, 4, 16, 16), 16, (3, 7, 7), (1, 2, 2), (1, 1, 3, 3, 3, 3), (1, 1, 1), 1, np.float16),
    "U-Net down, shrunk, bf16": ((2, 16, 4, 8, 8), 32, (3, 3, 3), (2, 2, 2), (1,) * 6, (1, 1, 1), 1, "bfloat16"),
    "depthwise, fp32": ((1, 8, 3, 6, 6), 8, (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 8, np.float32),
    "stride > kernel, dilation": ((1, 5, 5, 9, 9), 20, (2, 2, 2), (3, 3, 3), (0, 1, 1, 0, 2, 1), (1, 2, 2), 1,
                                  np.float16),
    # the MIX NCDHW build on the general driver: super-groups, a partial C0 block, per-channel DataCopyPad tails
    "MIX NCDHW, groups, odd channels, bf16": ((2, 12, 3, 7, 7), 18, (2, 3, 3), (1, 2, 2), (1,) * 6, (1, 1, 1), 3,
                                              "bfloat16"),
}


def dx_run(case, execute, engine, check_races=True):
    """The dx operator on DX_CASES[case] (the same operands every time) on `engine`."""
    from ascend_sim.machine.dtypes import DTYPES

    x, cout, kernel, strides, pads, dilations, groups, dtype = DX_CASES[case]
    dtype = DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    n, cin, *spatial = x
    out = [(size + pads[2 * i] + pads[2 * i + 1] - dilations[i] * (k - 1) - 1) // s + 1
           for i, (size, k, s) in enumerate(zip(spatial, kernel, strides))]
    rng = np.random.default_rng(7)
    dy = rng.standard_normal((n, cout, *out)).astype(dtype)
    w = rng.standard_normal((cout, cin // groups, *kernel)).astype(dtype)
    return conv3d_backprop_input_v2_run(x, w, dy, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dilations),
                                        groups=groups, data_format="NCDHW", execute=execute, engine=engine,
                                        check_races=check_races)


@pytest.mark.parametrize("case", list(DX_CASES))
@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_dx_operator_runs_agree(case, execute):
    from ascend_sim.machine.dtypes import DTYPES

    dtype = DX_CASES[case][-1]
    dtype = DTYPES[dtype] if isinstance(dtype, str) else np.dtype(dtype)
    exact, fast, replay = [dx_run(case, execute, engine) for engine in ("exact", "fast", "replay")]
    # fp16/bf16 NCDHW runs as aclnn runs it: MIX AIC:AIV 1:1 (the vector cores write NCDHW); fp32 on the AICs only
    assert any(c.kind == "AIV" for c in exact.report.cores) == (dtype != np.float32)
    assert _records(fast.report) == _records(exact.report)
    assert fast.report.to_dict() == exact.report.to_dict()
    assert all_fields(replay.report) == all_fields(exact.report)  # every record field
    assert replay.report.to_dict() == exact.report.to_dict()
    if execute:
        assert fast.result.tobytes() == exact.result.tobytes()
        assert replay.result.tobytes() == exact.result.tobytes()


@pytest.mark.parametrize("case", list(DX_CASES))
def test_dx_timing_runs_without_race_checks_agree_on_replay(case):
    """The replay engine's lazy path: blocks scheduled from their templates' arrays, records made when read."""
    exact, replay = [dx_run(case, False, engine, check_races=False) for engine in ("exact", "replay")]
    assert all_fields(replay.report) == all_fields(exact.report)
    assert replay.report.to_dict() == exact.report.to_dict()


def test_auto_uses_the_exact_engine_with_hooks_and_fast_refuses_them():
    seen = []
    run_matmul(np.ones((32, 32), np.float16), np.ones((32, 32), np.float16), hooks=[lambda core, rec: seen.append(rec)])
    assert seen  # auto ran the hooks, on the exact engine
    with pytest.raises(ValueError, match="engine='fast' runs no hooks"):
        Chip(engine="fast", hooks=[print])
    with pytest.raises(ValueError, match="engine='quick' is not one of"):
        Chip(engine="quick")


def dw_run(deterministic, engine):
    """The dw operator on the corpus's case (the same operands every time) on `engine`."""
    from kernels import conv3d_backprop_filter_v2_run

    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 9, 9, 20)).astype(np.float16)  # NDHWC
    dy = rng.standard_normal((2, 3, 4, 5, 24)).astype(np.float16)
    return conv3d_backprop_filter_v2_run(x, (24, 20, 3, 3, 3), dy, strides=(1, 2, 2, 2, 1), pads=(1, 1, 0, 0, 1, 1),
                                         deterministic=deterministic, engine=engine)


@pytest.mark.parametrize("deterministic", [False, True], ids=["atomic", "deterministic"])
def test_dw_operator_runs_agree(deterministic):
    runs = [dw_run(deterministic, engine) for engine in ("exact", "fast", "replay")]
    exact = runs[0]
    for other in runs[1:]:
        assert all_fields(other.report) == all_fields(exact.report)
        assert other.report.to_dict() == exact.report.to_dict()
        assert other.result.tobytes() == exact.result.tobytes()


def conv3d_v2_case_run(execute, engine):
    """Conv3DV2 on the corpus's case (strides, pads, dilations, bias) on `engine`."""
    from kernels import conv3d_v2_run

    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 20, 5, 9, 10)).astype(np.float16)
    w = rng.standard_normal((33, 20, 3, 3, 2)).astype(np.float16)
    b = rng.standard_normal(33).astype(np.float16)
    return conv3d_v2_run(x, w, b, strides=(1, 1, 2, 2, 3), pads=(1, 1, 2, 0, 1, 1), dilations=(1, 1, 1, 2, 1),
                         execute=execute, engine=engine)


@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_conv3d_v2_operator_runs_agree(execute):
    runs = [conv3d_v2_case_run(execute, engine) for engine in ("exact", "fast", "replay")]
    exact = runs[0]
    assert not any(c.kind == "AIV" for c in exact.report.cores)  # Conv3DV2 runs on the cube cores only
    for other in runs[1:]:
        assert all_fields(other.report) == all_fields(exact.report)
        assert other.report.to_dict() == exact.report.to_dict()
        if execute:
            assert other.result.tobytes() == exact.result.tobytes()


def pointwise_run(dtype, engine):
    """Conv3DV2's pointwise kernel on the corpus's case on `engine`."""
    from kernels import conv3d_v2_run

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 37, 3, 5, 7)).astype(dtype)
    w = rng.standard_normal((21, 37, 1, 1, 1)).astype(dtype)
    b = rng.standard_normal(21).astype(dtype)
    return conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0,) * 6, engine=engine)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_conv3d_v2_pointwise_runs_agree(dtype):
    """The pointwise kernel (NCDHW, LoadData 2D transposes or LoadDataWithTranspose, the bias Mmad, NZ2ND Fixpipe)."""
    exact, *others = [pointwise_run(dtype, engine) for engine in ("exact", "fast", "replay")]
    assert any(n.startswith("kernel: KernelConv3DV2PointWise") for n in exact.notes)
    for other in others:
        assert all_fields(other.report) == all_fields(exact.report)
        assert other.report.to_dict() == exact.report.to_dict()
        assert other.result.tobytes() == exact.result.tobytes()
