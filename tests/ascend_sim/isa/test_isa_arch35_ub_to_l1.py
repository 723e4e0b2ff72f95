"""The Ascend 950's UB -> L1 copy on the AIV's MTE3 (DataCopy(L1, UB, DataCopyParams | count)) into its own AIC's
L1, with the dx kernel's FLAG_MTE1_ID_1 / _2 handshake (mode 4: AIV0 sets 6, AIV1's 6 reaches the AIC as 22;
the AIC answers 7 / 23): the bytes against the loop reference, the order the flags give, both engines alike, and
the refusals by name."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip, ParameterOutOfRange
from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_MTE1, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy,
                                DataCopyParams, GetSubBlockIdx, GlobalTensor, GmAddr, HardEvent, SetFlag, TBuf,
                                TPipe, TPosition, WaitFlag)
from ascend_sim.machine.faults import Misaligned

A5 = "Ascend950PR_9589"
L1_HALF = 64 * 1024  # AIV sub-block s fills L1 from s * L1_HALF
FLAG_MTE1_ID_1, FLAG_MTE1_ID_2, AIV1 = 6, 7, 16


def fill_l1_kernel(x, params, count_form=False, rounds=2):
    """Each AIV copies GM -> UB -> its AIC's L1 (its half) `rounds` times, each round after the AIC has released
    the buffer (flag 7), then tells the AIC (flag 6); the AIC waits for both AIVs and releases them."""
    pipe = TPipe()
    b1 = TBuf(TPosition.B1)
    pipe.InitBuffer(b1, 2 * L1_HALF)
    if ASCEND_IS_AIV():
        ub = TBuf(TPosition.VECIN)
        pipe.InitBuffer(ub, 64 * 1024)
        sub = GetSubBlockIdx()
        src = ub.Get(np.float16)
        DataCopy(src, GlobalTensor(np.float16).SetGlobalBuffer(x), DataCopyParams(1, 2048 // 16, 0, 0))
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        for _ in range(rounds):
            CrossCoreWaitFlag(FLAG_MTE1_ID_2, 4)  # WaitForCubeBeforeLoadToB1
            DataCopy(b1.Get(np.float16)[sub * L1_HALF // 2], src, params)
            CrossCoreSetFlag(4, PIPE_MTE3, FLAG_MTE1_ID_1)  # NotifyCubeAfterLoadToB1
    else:
        for _ in range(rounds):
            CrossCoreSetFlag(4, PIPE_MTE1, FLAG_MTE1_ID_2)  # NotifyVecAfterLoadToB2 (the head: the buffer is free)
            CrossCoreSetFlag(4, PIPE_MTE1, FLAG_MTE1_ID_2 + AIV1)
            CrossCoreWaitFlag(FLAG_MTE1_ID_1, 4)  # WaitForVecBeforeLoadToB2
            CrossCoreWaitFlag(FLAG_MTE1_ID_1 + AIV1, 4)


def run_fill(params, engine="auto", data=None):
    chip = Chip(A5, engine=engine)
    data = np.arange(2048, dtype=np.float16) if data is None else data
    x = GmAddr(chip.gm.upload("x", data))
    report = chip.launch(fill_l1_kernel, 1, x, params, kernel_type="MIX_AIC_1_2")
    return chip, report, data


@settings(max_examples=8, deadline=None)
@given(count=st.integers(1, 6), blen=st.integers(1, 8), src_gap=st.integers(0, 3), dst_gap=st.integers(0, 3),
       seed=st.integers(0, 2**16))
def test_ub_to_l1_lands_in_the_aic_l1_as_the_loop_reference(count, blen, src_gap, dst_gap, seed):
    data = np.random.default_rng(seed).standard_normal(2048).astype(np.float16)
    chip, _, _ = run_fill(DataCopyParams(count, blen, src_gap, dst_gap), data=data)
    l1 = chip.cores[0].buffers["L1"].data.view(np.float16)
    ub = np.zeros(64 * 1024 // 2, np.float16)
    ub[:2048] = data
    for sub in (0, 1):
        want = ref35.ref_ub_to_l1(np.zeros(L1_HALF // 2, np.float16), ub, 0, 0, count, blen, src_gap, dst_gap, 16)
        got = l1[sub * L1_HALF // 2:(sub + 1) * L1_HALF // 2]
        written = (count - 1) * (blen + dst_gap) * 16 + blen * 16
        np.testing.assert_array_equal(got[:written], want[:written])
    assert chip.cores[1].buffers["L1"] is chip.cores[0].buffers["L1"]  # the AIV addresses its AIC's L1


def test_the_count_form_rounds_down_to_32_bytes():
    chip, _, data = run_fill(40)  # 40 halves = 80 B: two DataBlocks
    l1 = chip.cores[0].buffers["L1"].data.view(np.float16)
    np.testing.assert_array_equal(l1[:32], data[:32])
    assert not l1[32:40].any()


@pytest.mark.parametrize("engine", ["exact", "fast"])
def test_the_handshake_orders_the_copies_and_the_cube(engine):
    _, report, _ = run_fill(DataCopyParams(4, 8, 0, 0), engine=engine)
    aic, aiv0, aiv1 = ([r for r in log if r.name.startswith(("CrossCore", "DataCopy(UB->L1)"))]
                       for log in report.logs[:3])
    for aiv in (aiv0, aiv1):
        waits, copies, sets = aiv[0::3], aiv[1::3], aiv[2::3]
        assert [r.name for r in copies] == ["DataCopy(UB->L1)"] * 2
        for wait, copy, done in zip(waits, copies, sets):
            assert copy.start >= wait.end and done.start >= copy.end  # the set follows its MTE3 copy
    aic_waits = [r for r in aic if r.name == "CrossCoreWaitFlag"]
    for i, (w0, w1) in enumerate(zip(aic_waits[0::2], aic_waits[1::2])):
        assert w0.end >= aiv0[1 + 3 * i].end and w1.end >= aiv1[1 + 3 * i].end
    assert report.bytes_by_path["UB->L1"] == 2 * 2 * 4 * 8 * 32


def test_engines_agree():
    times = []
    for engine in ("exact", "fast"):
        _, report, _ = run_fill(DataCopyParams(3, 5, 1, 2), engine=engine)
        times.append([[(r.name, r.start, r.end) for r in log] for log in report.logs])
    assert times[0] == times[1]


def test_refused_on_a2_where_the_vector_core_has_no_l1():
    def kernel():
        if ASCEND_IS_AIV():
            TPipe().InitBuffer(TBuf(TPosition.B1), 1024)
    with pytest.raises(ParameterOutOfRange, match="B1 is in L1, which the vector core"):
        Chip("Ascend910B2").launch(kernel, 1, kernel_type="MIX_AIC_1_2")


@pytest.mark.parametrize("params, error, match", [
    (DataCopyParams(0, 1, 0, 0), ParameterOutOfRange, r"blockCount=0"),
    (DataCopyParams(1, 0, 0, 0), ParameterOutOfRange, r"blockLen=0"),
])
def test_ub_to_l1_refusals_name_the_parameter(params, error, match):
    with pytest.raises(error, match=match):
        run_fill(params)


def test_a_misaligned_l1_address_is_refused():
    def kernel(x):
        pipe = TPipe()
        b1 = TBuf(TPosition.B1)
        pipe.InitBuffer(b1, 1024)
        if ASCEND_IS_AIV():
            ub = TBuf(TPosition.VECIN)
            pipe.InitBuffer(ub, 1024)
            DataCopy(b1.Get(np.float16)[8], ub.Get(np.float16), DataCopyParams(1, 1, 0, 0))
    chip = Chip(A5)
    with pytest.raises(Misaligned, match="dst address 16 in L1"):
        chip.launch(kernel, 1, GmAddr(chip.gm.upload("x", np.zeros(16, np.float16))), kernel_type="MIX_AIC_1_2")
