"""TQue on the vector core: the queue operations are the flags of asc-devkit's TQueBind (VECIN: MTE2 -> V,
VECOUT: V -> MTE3, FreeTensor back the other way), with the event ID taken at each EnQue / FreeTensor and given
back at the DeQue / AllocTensor that waits on it; double buffering; misuse faults."""
import numpy as np
import pytest
from vector_kernels import add_kernel
from vector_reference import run_aiv

from ascend_sim import CapacityExceeded, RaceFault, SyncFault
from ascend_sim.ascendc import DataCopy, Exp, GlobalTensor, TPipe, TPosition, TQue


def _flags(report, core=0):
    return [(r.name, r.params["event"], r.params["id"]) for r in report.logs[core] if r.name in ("SetFlag",
                                                                                                 "WaitFlag")]


def run_add(n=4096, tile=512, buffers=2, block_dim=1):
    rng = np.random.default_rng(n + tile)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    chip, report = run_aiv(add_kernel(n, tile, buffers), x, y, out_bytes=n * 4, block_dim=block_dim)
    np.testing.assert_array_equal(chip.gm["out"].data.view(np.float32), x + y)
    return report


def test_queue_operations_are_the_vecin_vecout_flags():
    report = run_add(n=1024, tile=512, buffers=1)
    flags = _flags(report)
    first_tile = flags[:7]
    assert first_tile == [("SetFlag", "MTE2_V", 0), ("SetFlag", "MTE2_V", 1),  # EnQue x, EnQue y
                          ("WaitFlag", "MTE2_V", 0), ("WaitFlag", "MTE2_V", 1),  # DeQue x, DeQue y
                          ("SetFlag", "V_MTE3", 0),  # EnQue z
                          ("SetFlag", "V_MTE2", 0), ("SetFlag", "V_MTE2", 1)]  # FreeTensor x, y
    # the second tile's AllocTensor waits for those frees; the ids were given back at DeQue and are reused
    assert ("WaitFlag", "V_MTE2", 0) in flags[7:] and flags.count(("SetFlag", "MTE2_V", 0)) == 2


def test_event_ids_are_taken_at_enque_and_given_back_at_deque():
    def kernel(x):
        pipe = TPipe()
        q = TQue(TPosition.VECIN, 2)
        pipe.InitBuffer(q, 2, 1024)
        g = GlobalTensor(np.float16).SetGlobalBuffer(x)
        a, b = q.AllocTensor(np.float16), q.AllocTensor(np.float16)
        DataCopy(a, g, 512)
        DataCopy(b, g, 512)
        q.EnQue(a)
        q.EnQue(b)  # two flags outstanding: ids 0 and 1
        q.FreeTensor(q.DeQue())
        q.FreeTensor(q.DeQue())
        c = q.AllocTensor(np.float16)
        DataCopy(c, g, 512)
        q.EnQue(c)  # id 0 is free again
        q.FreeTensor(q.DeQue())
    _, report = run_aiv(kernel, np.zeros(512, np.float16))
    sets = [f for f in _flags(report) if f[:2] == ("SetFlag", "MTE2_V")]
    assert [f[2] for f in sets] == [0, 1, 0]


def _loads_during_adds(report):
    """GM -> UB copies that start while an Add of an earlier tile is still running (or before it started)."""
    log = report.logs[0]
    adds = [r for r in log if r.name == "Add"]
    loads = [r for r in log if r.name == "DataCopy(GM->UB)"]
    return sum(1 for i, add in enumerate(adds) for load in loads[2 * (i + 1):2 * (i + 2)] if load.start < add.end)


def test_double_buffering_overlaps_copies_and_compute():
    single, double = run_add(buffers=1), run_add(buffers=2)
    # one buffer: the next tile's loads wait for FreeTensor after the Add; two: they run while it computes
    assert _loads_during_adds(single) == 0 and _loads_during_adds(double) > 0
    assert double.cycles < single.cycles


def test_multi_core_aiv_only_split():
    report = run_add(n=8192, tile=512, buffers=2, block_dim=4)
    assert len(report.logs) == 4 and report.bytes_by_path["UB->GM"] == 8192 * 4


def test_alloc_with_every_buffer_in_use_faults():
    def kernel():
        pipe = TPipe()
        q = TQue(TPosition.VECOUT, 1)
        pipe.InitBuffer(q, 1, 256)
        q.AllocTensor(np.float32)
        q.AllocTensor(np.float32)
    with pytest.raises(CapacityExceeded, match="all 1 buffers in use"):
        run_aiv(kernel)


def test_deque_of_an_empty_queue_and_double_free_fault():
    def empty():
        pipe = TPipe()
        q = TQue(TPosition.VECIN, 1)
        pipe.InitBuffer(q, 1, 256)
        q.DeQue(np.float32)
    with pytest.raises(SyncFault, match="DeQue on an empty VECIN queue"):
        run_aiv(empty)

    def twice():
        pipe = TPipe()
        q = TQue(TPosition.VECOUT, 1)
        pipe.InitBuffer(q, 1, 256)
        t = q.AllocTensor(np.float32)
        q.FreeTensor(t)
        q.FreeTensor(t)
    with pytest.raises(SyncFault, match="double free"):
        run_aiv(twice)


def test_skipping_deque_is_a_race_between_mte2_and_v():
    def kernel(x):
        pipe = TPipe()
        q, out = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        pipe.InitBuffer(q, 1, 1024)
        pipe.InitBuffer(out, 1, 1024)
        a = q.AllocTensor(np.float16)
        DataCopy(a, GlobalTensor(np.float16).SetGlobalBuffer(x), 512)
        q.EnQue(a)
        Exp(out.AllocTensor(np.float16), a, 512)  # reads `a` without q.DeQue(): nothing orders it after MTE2
    with pytest.raises(RaceFault, match="read of UB") as info:
        run_aiv(kernel, np.zeros(512, np.float16))
    assert info.value.instruction == "Exp"


def test_veccalc_queue_orders_the_vector_pipe_with_barriers():
    def kernel():
        pipe = TPipe()
        q = TQue(TPosition.VECCALC, 1)
        pipe.InitBuffer(q, 1, 256)
        t = q.AllocTensor(np.float32)
        q.EnQue(t)
        q.FreeTensor(q.DeQue(np.float32))
    _, report = run_aiv(kernel)
    # EnQue and FreeTensor are V_V barriers; TPipe's Destroy closes with PipeBarrier<PIPE_ALL>
    assert [(r.name, r.pipe.name) for r in report.logs[0]] == [("PipeBarrier", "V")] * 2 + [("PipeBarrier", "ALL")]


def test_a_ub_queue_on_the_cube_core_and_an_l1_buffer_on_the_vector_core_fault():
    from conftest import run_kernel

    from ascend_sim import ParameterOutOfRange
    from ascend_sim.ascendc import TBuf

    def cube():
        TPipe().InitBuffer(TQue(TPosition.VECIN, 1), 1, 256)
    with pytest.raises(ParameterOutOfRange, match="VECIN is in UB, which the cube core \\(AIC\\) does not have"):
        run_kernel(cube)

    def vector():
        TPipe().InitBuffer(TBuf(TPosition.A1), 256)
    with pytest.raises(ParameterOutOfRange, match="A1 is in L1, which the vector core \\(AIV\\) does not have; "
                                                  "it has UB"):
        run_aiv(vector)
