"""Timing-only runs (execute=False) allocate no bytes they never read: GM and the on-chip buffers are size-only, the
operators neither convert nor copy their operands, and the checks on addresses and sizes still fire.

A real layer is far too long to time whole in a test, so the operator runs stop after their first records (a hook
raises): everything the operator allocates before and during the launch is then measured (tracemalloc peak)
against the problem's tensor bytes. Cycles and records of timing-only runs equal the full runs' in
test_engines.py, test_fast_retime.py and each operator's tests."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from ml_dtypes import bfloat16

from ascend_sim import Chip, Misaligned, OutOfBounds
from ascend_sim.ascendc import DataCopy, DataCopyParams, GlobalTensor, TBuf, TPipe, TPosition
from ascend_sim.engine.core import AICore
from ascend_sim.engine.replay import Replayer
from ascend_sim.machine.memory import GlobalMemory
from ascend_sim.machine.tensor import GmAddr
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run, convolution_backward_run
from kernels.common.operands import stand_in
from tiling import TilingValidationError

NO_LIMIT = 1 << 50  # the size guard would refuse these layers' records (tests/test_size_guard.py): stopped early here


class _Enough(Exception):
    """Stops a launch after its first records."""


@pytest.fixture
def stop_after(monkeypatch):
    """stop_after(count): the next launches raise _Enough when `count` records have been issued (issued, not run:
    the exact engine may hold a core's records until the other cores reach a barrier), a replayed unit's block
    counting its template's records (else a run with many hits gets further: its blocks are made into records
    when the launch stops)."""
    def arm(count: int):
        issued = [0]

        def counted(original, records):  # AICore.issue, issue_sync for the flags and barriers, a replayed block
            def issue(self, *args, **kwargs):
                issued[0] += records(args)
                if issued[0] > count:
                    raise _Enough
                return original(self, *args, **kwargs)
            return issue

        one = lambda args: 1  # noqa: E731
        monkeypatch.setattr(AICore, "issue", counted(AICore.issue, one))
        monkeypatch.setattr(AICore, "issue_sync", counted(AICore.issue_sync, one))
        monkeypatch.setattr(Replayer, "_replay", counted(Replayer._replay, lambda args: args[2].size))

    return arm


def _peak(run) -> int:
    """The peak bytes allocated while run() runs (until _Enough stops it)."""
    tracemalloc.start()
    try:
        with pytest.raises(_Enough):
            run()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


# dy (1, 256, 122, 130, 130) bf16: the second Conv3DTransposeV2 kernel-split UT shape (1.05 GB of tensors)
DX = dict(dx=(1, 3, 240, 256, 256), w=(256, 3, 4, 4, 4), dy=(1, 256, 122, 130, 130))


def _tensor_bytes(*shapes, itemsize=2) -> int:
    return sum(int(np.prod(s)) for s in shapes) * itemsize


def test_dx_timing_only_of_a_gigabyte_layer_allocates_little(stop_after):
    stop_after(3000)
    w, dy = stand_in(DX["w"], bfloat16), stand_in(DX["dy"], bfloat16)
    peak = _peak(lambda: conv3d_backprop_input_v2_run(
        DX["dx"], w, dy, strides=(1, 1, 2, 2, 2), pads=(3,) * 6, data_format="NCDHW", platform="Ascend910B3",
        route="v2", execute=False, check_races=False, max_memory=NO_LIMIT))
    assert peak < 0.02 * _tensor_bytes(DX["dx"], DX["w"], DX["dy"]), peak


def test_dx_forced_kernel_split_is_refused_by_name_before_any_allocation():
    w, dy = stand_in(DX["w"], bfloat16), stand_in(DX["dy"], bfloat16)
    issued = []

    def run():
        conv3d_backprop_input_v2_run(DX["dx"], w, dy, strides=(1, 1, 2, 2, 2), pads=(3,) * 6, data_format="NCDHW",
                                     platform="Ascend910B3", route="v2", execute=False,
                                     tiling_overrides={"enableKernelSplit": 1},
                                     hooks=[lambda core, rec: issued.append(rec)])

    tracemalloc.start()
    with pytest.raises(TilingValidationError, match="enableKernelSplit=1"):
        run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not issued and peak < 4 * 2**20, peak


def test_dw_timing_only_of_a_big_layer_allocates_little(stop_after):
    stop_after(3000)
    x, dy = (2, 64, 16, 224, 224), (2, 64, 16, 224, 224)
    peak = _peak(lambda: conv3d_backprop_filter_v2_run(
        stand_in(x, np.float16), (64, 64, 3, 3, 3), stand_in(dy, np.float16), strides=(1,) * 5, pads=(1,) * 6,
        data_format="NCDHW", execute=False, check_races=False, max_memory=NO_LIMIT))
    assert peak < 0.02 * _tensor_bytes(x, dy), peak


@pytest.mark.parametrize("pointwise", [False, True])
def test_forward_timing_only_of_a_big_layer_allocates_little(pointwise, stop_after):
    stop_after(3000)
    kernel = (1, 1, 1) if pointwise else (3, 3, 3)
    x, w = (4, 64, 16, 224, 224), (64, 64, *kernel)
    pads = (0,) * 6 if pointwise else (1,) * 6
    if pointwise:  # NeedPointWiseKernel: Di*Hi*Wi < 65535
        x = (64, 64, 16, 60, 60)
    peak = _peak(lambda: conv3d_v2_run(stand_in(x, np.float16), stand_in(w, np.float16), strides=(1,) * 5,
                                       pads=pads, execute=False, check_races=False, max_memory=NO_LIMIT))
    assert peak < 0.02 * _tensor_bytes(x, x, w), peak


def test_convolution_backward_timing_only_allocates_little(stop_after):
    stop_after(3000)
    x, w = (2, 64, 16, 224, 224), (64, 64, 3, 3, 3)
    args = (stand_in(x, np.float16), stand_in(x, np.float16), stand_in(w, np.float16), [64], [1, 1, 1],
            [1, 1, 1], [1, 1, 1], False, [0, 0, 0], 1, [True, True, True])
    peak = _peak(lambda: convolution_backward_run(*args, execute=False, check_races=False, max_memory=NO_LIMIT))
    assert peak < 0.02 * _tensor_bytes(x, x, x, w), peak


def test_size_only_memories_hold_no_bytes_and_still_check_bounds():
    gm = GlobalMemory(allocate=False)
    buf = gm.upload("x", stand_in((1 << 20,), np.float32))
    assert buf.data is None and buf.capacity == 4 << 20
    with pytest.raises(OutOfBounds, match="GM:x"):
        buf.check(0, (4 << 20) + 2)
    with pytest.raises(RuntimeError, match="size-only"):
        buf.view(np.float32, 0, 4)
    assert gm.place("y", (8, 8), np.float16, lambda: pytest.fail("converted in timing-only mode")).capacity == 128


def _copy_past_the_end(src):
    pipe = TPipe()
    buf = TBuf(TPosition.A1)
    pipe.InitBuffer(buf, 4096)
    DataCopy(buf.Get(np.float16), GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 2, 0, 0))


def _copy_misaligned(src):
    pipe = TPipe()
    buf = TBuf(TPosition.A1)
    pipe.InitBuffer(buf, 4096)
    DataCopy(buf.Get(np.float16)[3], GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 1, 0, 0))


@pytest.mark.parametrize("body, fault", [(_copy_past_the_end, OutOfBounds), (_copy_misaligned, Misaligned)])
def test_timing_only_faults_as_the_full_run(body, fault):
    messages = []
    for execute in (True, False):
        chip = Chip(execute=execute)
        src = chip.gm.upload("in0", np.zeros(16, np.float16))
        with pytest.raises(fault) as info:
            chip.launch(body, 1, GmAddr(src))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert all(buf.data is None for buf in chip.cores[0].buffers.values())


@pytest.mark.parametrize("operator", ["dx", "dw", "forward"])
def test_without_records_a_timing_only_run_keeps_constant_memory_and_the_same_cycles(operator):
    x_shape, w_shape = (1, 32, 16, 48, 48), (32, 32, 3, 3, 3)
    x, w = stand_in(x_shape, np.float16), stand_in(w_shape, np.float16)
    common = dict(strides=(1,) * 5, pads=(1,) * 6, execute=False, check_races=False)
    run = {"dx": lambda **kw: conv3d_backprop_input_v2_run(x_shape, w, x, data_format="NCDHW", route="v2", **kw),
           "dw": lambda **kw: conv3d_backprop_filter_v2_run(x, w_shape, x, data_format="NCDHW", **kw),
           "forward": lambda **kw: conv3d_v2_run(x, w, **kw)}[operator]
    peaks, reports = [], []
    for record in (True, False):  # the kept records made on the fast engine (the replay engine makes them lazily)
        tracemalloc.start()
        reports.append(run(record=record, **common, **({"engine": "fast"} if record else {})).report)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    kept, dropped = reports
    assert dropped.cycles == kept.cycles and dropped.counts == kept.counts and dropped.instructions > 10_000
    # what is left is the instruction helpers' caches (LoadData 3Dv2 index maps, about 7 MiB), not per record;
    # a record takes about 350 B on dx (830 B with Chip(front_end_cache=False): cached records share their
    # decoded parts)
    assert not any(dropped.logs) and peaks[0] - peaks[1] > 250 * kept.instructions and peaks[1] < peaks[0] / 2, peaks
