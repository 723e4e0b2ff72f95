"""Kernel bugs surface as simulated faults naming the instruction, the buffer, the range and the source line."""
import numpy as np
import pytest
from conftest import run_kernel

from ascend_sim import CapacityExceeded, Misaligned, OutOfBounds, ParameterOutOfRange, RaceFault, SyncFault
from ascend_sim.ascendc import (PIPE_S, DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                                Mmad, MmadParams, PipeBarrier, SetFlag, TBuf, TPipe, TPosition, TQue, WaitFlag)

pytestmark = pytest.mark.both_engines


def _l1(nbytes=4096, dtype=np.float16):
    pipe = TPipe()
    buf = TBuf(TPosition.A1)
    pipe.InitBuffer(buf, nbytes)
    return pipe, buf.Get(dtype)


def test_gm_read_past_the_allocation_is_out_of_bounds():
    def body(src):
        _, l1 = _l1()
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 2, 0, 0))  # 64 B of 32
    with pytest.raises(OutOfBounds) as info:
        run_kernel(body, np.zeros(16, np.float16))
    text = str(info.value)
    assert "DataCopy" in text and "GM:in0" in text and "[0, 64)" in text and "test_faults.py:" in text


def test_l1_write_past_capacity_is_out_of_bounds():
    def body(src):
        pipe, l1 = _l1()
        tail = l1[(512 * 1024 - 32) // 2]  # 32 bytes before the end of L1 ...
        DataCopy(tail, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 2, 0, 0))  # ... 64 B
    with pytest.raises(OutOfBounds, match="L1"):
        run_kernel(body, np.zeros(64, np.float16))


def test_misaligned_l1_destination():
    def body(src):
        _, l1 = _l1()
        DataCopy(l1[3], GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 1, 0, 0))
    with pytest.raises(Misaligned, match="6 in L1 is not a multiple of 32"):
        run_kernel(body, np.zeros(64, np.float16))


def test_l0a_destination_must_be_fractal_aligned():
    def body():
        pipe, l1 = _l1()
        l0a = TBuf(TPosition.A2)
        pipe.InitBuffer(l0a, 4096)
        LoadData(l0a.Get(np.float16)[16], l1, LoadData2DParams(repeatTimes=1))
    with pytest.raises(Misaligned, match="multiple of 512"):
        run_kernel(body)


@pytest.mark.parametrize("field,value", [("blockCount", 4096), ("blockLen", 65536), ("srcStride", -1)])
def test_datacopy_parameter_ranges(field, value):
    def body(src):
        _, l1 = _l1()
        params = DataCopyParams(1, 1, 0, 0)
        setattr(params, field, value)
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), params)
    with pytest.raises(ParameterOutOfRange, match=field):
        run_kernel(body, np.zeros(64, np.float16))


def test_mmad_parameter_range():
    def body():
        pipe = TPipe()
        bufs = {pos: TBuf(pos) for pos in (TPosition.A2, TPosition.B2, TPosition.CO1)}
        for b in bufs.values():
            pipe.InitBuffer(b, 4096)
        Mmad(bufs[TPosition.CO1].Get(np.float32), bufs[TPosition.A2].Get(np.float16),
             bufs[TPosition.B2].Get(np.float16), MmadParams(4096, 16, 16))
    with pytest.raises(ParameterOutOfRange, match=r"m=4096 outside \[0, 4095\]"):
        run_kernel(body)


def test_init_buffer_over_capacity_names_the_sizes():
    def body():
        pipe = TPipe()
        pipe.InitBuffer(TQue(TPosition.A1), 2, 270336)
    with pytest.raises(CapacityExceeded, match="2 x 270336 bytes.*L1 has 524288"):
        run_kernel(body)


def test_set_flag_twice_without_wait():
    def body():
        SetFlag(HardEvent.MTE2_MTE1, 0)
        SetFlag(HardEvent.MTE2_MTE1, 0)
    with pytest.raises(SyncFault, match="already set"):
        run_kernel(body)


def test_a_flag_decoded_once_still_faults_on_each_call():
    # the first SetFlag / WaitFlag(MTE2_MTE1, 1) is checked and decoded; later calls with equal arguments skip the
    # checks (isa/sync.py), so an id of True (equal to 1) and a second set before its wait must still fault
    def bool_id():
        SetFlag(HardEvent.MTE2_MTE1, 1)
        WaitFlag(HardEvent.MTE2_MTE1, 1)
        SetFlag(HardEvent.MTE2_MTE1, True)
    with pytest.raises(ParameterOutOfRange, match=r"event id True outside \[0, 8\)"):
        run_kernel(bool_id)

    def set_twice():
        for _ in range(2):
            SetFlag(HardEvent.MTE2_MTE1, 1)
            WaitFlag(HardEvent.MTE2_MTE1, 1)
        SetFlag(HardEvent.MTE2_MTE1, 1)
        SetFlag(HardEvent.MTE2_MTE1, 1)
    with pytest.raises(SyncFault, match=r"SetFlag<MTE2_MTE1>\(1\) while the flag is already set") as info:
        run_kernel(set_twice)
    assert "test_faults.py:" in str(info.value)


def test_wait_without_set():
    def body():
        WaitFlag(HardEvent.MTE1_M, 3)
    with pytest.raises(SyncFault, match="no SetFlag"):
        run_kernel(body)


def test_flag_left_set_at_the_end():
    def body():
        SetFlag(HardEvent.M_FIX, 1)
    with pytest.raises(SyncFault, match="never waited"):
        run_kernel(body)


def test_illegal_event_pair_and_scalar_barrier():
    with pytest.raises(SyncFault, match="not a legal event"):
        run_kernel(lambda: SetFlag(HardEvent.M_V, 0))
    with pytest.raises(SyncFault, match="PIPE_S"):
        run_kernel(lambda: PipeBarrier(PIPE_S))


def test_missing_flag_between_mte2_and_mte1_is_a_race():
    def body(src):
        pipe, l1 = _l1()
        l0a = TBuf(TPosition.A2)
        pipe.InitBuffer(l0a, 4096)
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 16, 0, 0))
        LoadData(l0a.Get(np.float16), l1, LoadData2DParams(repeatTimes=1))  # no MTE2 -> MTE1 flag
    with pytest.raises(RaceFault) as info:
        run_kernel(body, np.zeros(256, np.float16))
    text = str(info.value)
    assert "LoadData2D" in text and "DataCopy" in text and "L1" in text and "test_faults.py:" in text

    def fixed(src):
        pipe, l1 = _l1()
        l0a = TBuf(TPosition.A2)
        pipe.InitBuffer(l0a, 4096)
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 16, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        LoadData(l0a.Get(np.float16), l1, LoadData2DParams(repeatTimes=1))
    run_kernel(fixed, np.zeros(256, np.float16))


def test_tque_protocol_errors():
    def double_free():
        pipe = TPipe()
        q = TQue(TPosition.A1)
        pipe.InitBuffer(q, 1, 1024)
        t = q.AllocTensor(np.float16)
        q.FreeTensor(t)
        q.FreeTensor(t)
    with pytest.raises(SyncFault, match="double free"):
        run_kernel(double_free)

    def exhausted():
        pipe = TPipe()
        q = TQue(TPosition.A1)
        pipe.InitBuffer(q, 2, 1024)
        q.AllocTensor(np.float16)
        q.AllocTensor(np.float16)
        q.AllocTensor(np.float16)
    with pytest.raises(CapacityExceeded, match="all 2 buffers in use"):
        run_kernel(exhausted)


def test_enque_twice_is_a_sync_fault_naming_the_buffer():
    """Found by the mutation hunt (docs/testing.md): a doubled EnQue in the matmul kernel left one flag for two
    queue entries, and the second DeQue died in a KeyError inside TQue."""
    def body(src):
        pipe = TPipe()
        q = TQue(TPosition.A1)
        pipe.InitBuffer(q, 2, 1024)
        for _ in range(2):
            t = q.AllocTensor(np.float16)
            DataCopy(t, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 32, 0, 0))
            q.EnQue(t)
            q.EnQue(t)
            q.FreeTensor(q.DeQue(np.float16))
    with pytest.raises(SyncFault, match=r"EnQue of a buffer already in the A1 queue") as info:
        run_kernel(body, np.zeros(512, np.float16))
    text = str(info.value)
    assert text.startswith("[core 0, MTE2 EnQue, at test_faults.py:") and "(L1[0, 1024))" in text


def _l0_pair(pipe, a_pos=TPosition.A2):
    l0 = TBuf(a_pos)
    pipe.InitBuffer(l0, 8192)
    return l0.Get(np.float16)


@pytest.mark.parametrize("field,value,match", [
    ("padList", (0, 0, 256, 0), r"padList\[2\]=256 outside \[0, 255\]"),
    ("strideW", 64, r"strideW=64 outside \[1, 63\]"),
    ("filterH", 0, "filterW/H may be 0 only with filterSizeW/H set"),
    ("filterH", 256, r"filterH=256 outside \[0, 255\]"),
    ("channelSize", 18, "channelSize=18 must be 4, 8, 16N, 16N\\+4 or 16N\\+8"),
    ("channelSize", 20, "only multiples of C0=16 and the sizes below C0 are modelled"),
    ("kStartPt", 8, "kStartPt=8 must be a multiple of 16"),
    ("mExtension", 24, "mExtension=24 must be a multiple of 16"),
    ("kStartPt", 16, r"kStartPt=16 \+ kExtension=16 = 32 reaches past the img2col matrix, which has "
                     r"channelSize\*filterH\*filterW = 16\*1\*1 = 16 columns"),
    ("channelSize", 0, r"kExtension=16 = 16 reaches past .* = 0\*1\*1 = 0 columns: channelSize=0 is too small"),
])
def test_load3d_parameter_faults(field, value, match):
    from ascend_sim.ascendc import LoadData3DParamsV2

    def body():
        pipe, l1 = _l1()
        params = LoadData3DParamsV2(l1H=4, l1W=4, channelSize=16, kExtension=16, mExtension=16)
        setattr(params, field, value)
        LoadData(_l0_pair(pipe), l1, params)
    with pytest.raises(ParameterOutOfRange, match=match):
        run_kernel(body)


def test_load3d_k_block_past_the_img2col_matrix_names_the_parameters():
    """The dx kernel's A load with fp32, a 3x3 kernel and baseK=8 < hk*wk*C0: channelSize = stepKa*baseK/(hk*wk)
    truncates to 0, so the fmap is empty while kExtension asks for 8 columns. This used to escape the front end
    and die in numpy (IndexError in the gather); it is a fault naming the parameters, the buffer and the line."""
    from ascend_sim.ascendc import LoadData3DParamsV2

    def body():
        pipe, l1 = _l1(dtype=np.float32)
        l0a = TBuf(TPosition.A2)
        pipe.InitBuffer(l0a, 8192)
        LoadData(l0a.Get(np.float32), l1, LoadData3DParamsV2(
            padList=[1, 1, 1, 255], l1H=5, l1W=8, channelSize=0, kExtension=8, mExtension=32, filterW=3, filterH=3))
    with pytest.raises(ParameterOutOfRange) as info:
        run_kernel(body)
    text = str(info.value)
    assert "MTE1 LoadData3Dv2" in text and "test_faults.py:" in text and "core 0" in text
    assert "kStartPt=0 + kExtension=8" in text and "0*3*3 = 0 columns" in text and "channelSize=0" in text
    assert info.value.buffer == "L1"

    def inside(k_start):  # the last K block that still fits: channelSize 8 x 3 x 3 = 72 columns
        pipe, l1 = _l1(dtype=np.float32)
        l0a = TBuf(TPosition.A2)
        pipe.InitBuffer(l0a, 8192)
        LoadData(l0a.Get(np.float32), l1, LoadData3DParamsV2(
            padList=[1, 1, 1, 255], l1H=5, l1W=8, channelSize=8, kExtension=8, mExtension=32, kStartPt=k_start,
            filterW=3, filterH=3))
    run_kernel(lambda: inside(64))
    with pytest.raises(ParameterOutOfRange, match="kStartPt=72 \\+ kExtension=8 = 80 reaches past"):
        run_kernel(lambda: inside(72))


def test_dx_kernel_with_an_unvalidated_tiling_faults_instead_of_crashing():
    """Finding: fp32 dx, 3x3x3 kernel, overrides baseK=8, stepKb=4 with the validator bypassed, launched through
    the kernel entry. The kernel's A load gets channelSize 0; the simulator must say so as a fault."""
    from ascend_sim import Chip, SimFault
    from ascend_sim.machine.dtypes import DTYPES
    from ascend_sim.machine.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0
    from ascend_sim.machine.tensor import GmAddr
    from kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2 import conv3d_backprop_input_v2 as entry
    from tiling import conv3d_backprop_input_tiling, validate

    rng = np.random.default_rng(0)
    dx_shape, w = (1, 16, 4, 8, 8), rng.standard_normal((8, 16, 3, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((1, 8, 4, 8, 8)).astype(np.float32)
    good = conv3d_backprop_input_tiling(dy.shape, w.shape, dx_shape, (1, 1, 1), (1,) * 6, dtype="float32")
    bad = good.with_overrides(baseK=8, stepKb=4, validate=False)
    assert not validate(bad)  # the validator would have refused it before launch
    chip = Chip("Ascend910B2")
    y = chip.gm.alloc("y", 1 * 4 * 2 * 8 * 8 * 8 * 4)
    with pytest.raises(SimFault) as info:
        chip.launch(entry, bad.params.coreNum, None, GmAddr(chip.gm.upload("filter", filter_to_fractal_z_3d(w, 1))),
                    GmAddr(chip.gm.upload("dy", ncdhw_to_ndc1hwc0(dy))), GmAddr(y), None, bad,
                    tiling_key=bad.tiling_key, dtype=DTYPES["float32"])
    assert isinstance(info.value, ParameterOutOfRange)
    assert "LoadData3Dv2" in str(info.value) and "load_a.py:" in str(info.value) and "channelSize=0" in str(info.value)


@pytest.mark.parametrize("changes,match", [
    (dict(nSize=24), "nSize=24 must be a multiple of 16 for NZ output"),
    (dict(quantPre="F322BF16"), "writes bfloat16 but dst is float16"),
    (dict(dstStride=0), "dstStride=0"),
    (dict(mSize=70000), r"mSize=70000 outside \[0, 65535\]"),
])
def test_fixpipe_parameter_faults(changes, match):
    from ascend_sim.ascendc import CFG_NZ, Fixpipe, FixpipeParamsV220, QuantMode_t

    def body(out):
        pipe = TPipe()
        l0c = TBuf(TPosition.CO1)
        pipe.InitBuffer(l0c, 4096)
        params = FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre=QuantMode_t.F322F16)
        for key, value in changes.items():
            setattr(params, key, QuantMode_t[value] if key == "quantPre" else value)
        Fixpipe(GlobalTensor(np.float16).SetGlobalBuffer(out), l0c.Get(np.float32), params, CFG_NZ)
    with pytest.raises(ParameterOutOfRange, match=match):
        run_kernel(body, out_bytes=4096)


def test_faults_carry_the_core_index():
    from ascend_sim.ascendc import GetBlockIdx

    def body():
        if GetBlockIdx() == 2:
            WaitFlag(HardEvent.MTE1_M, 0)
    with pytest.raises(SyncFault) as info:
        run_kernel(body, block_dim=4)
    assert info.value.core == 2 and str(info.value).startswith("[core 2, M WaitFlag")


def _round_trip_kernel(set_pipe, read_before_wait=False):
    """An AIV copies GM -> UB (MTE2), raises a cross-core flag on `set_pipe`; its AIC waits for it and answers;
    the AIV waits for the answer and then reads the UB tile on PIPE_V (or reads it before its wait)."""
    from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_MTE2, PIPE_MTE3, PIPE_S, Adds, CrossCoreSetFlag,
                                    CrossCoreWaitFlag)

    def body(src):
        if not ASCEND_IS_AIV():
            CrossCoreWaitFlag(5)
            CrossCoreSetFlag(2, PIPE_MTE2, 6)
            return
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 8192)
        ub = buf.Get(np.float16)
        DataCopy(ub, GlobalTensor(np.float16).SetGlobalBuffer(src), 1024)
        CrossCoreSetFlag(2, {"MTE2": PIPE_MTE2, "MTE3": PIPE_MTE3, "S": PIPE_S}[set_pipe], 5)
        if read_before_wait:
            Adds(ub[2048], ub, 1.0, 1024)
        CrossCoreWaitFlag(6)
        if not read_before_wait:
            Adds(ub[2048], ub, 1.0, 1024)
    return body


def test_a_cross_core_round_trip_orders_a_cores_own_pipes():
    from ascend_sim import Chip
    from ascend_sim.machine.tensor import GmAddr

    def launch(body):
        chip = Chip()
        return chip.launch(body, 1, GmAddr(chip.gm.upload("x", np.ones(1024, np.float16))),
                           kernel_type="MIX_AIC_1_1")
    # the set on MTE2 comes after the copy; the answer comes after the set: the V read is ordered after the copy
    launch(_round_trip_kernel("MTE2"))
    # a set on another pipe does not wait for the copy, and a read issued before the wait learns nothing from it
    with pytest.raises(RaceFault, match=r"Adds.*not ordered after the write.*DataCopy"):
        launch(_round_trip_kernel("MTE3"))
    with pytest.raises(RaceFault, match=r"Adds.*not ordered after the write.*DataCopy"):
        launch(_round_trip_kernel("MTE2", read_before_wait=True))
