"""The instructions the Conv3D forward API added, against the loop references of tests/isa_reference.py:
LoadData 2D from GM (into L0B and L1, on MTE2), DataCopy L1 -> BT (with the half -> float conversion) and Mmad
initialised from the bias table (cmatrixSource=1)."""
import isa_reference as ref
import numpy as np
import pytest
from core_buffers import elems, fill, local

from ascend_sim import Chip
from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, LoadData, LoadData2DParams, Mmad, MmadParams,
                                current_core)
from ascend_sim.machine.faults import SimFault
from ascend_sim.machine.tensor import GmAddr

RNG = np.random.default_rng(3)


def _run_one(body, gm_arrays=()):
    chip = Chip("Ascend910B2", check_races=False)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]
    chip.launch(lambda: body(current_core(), [GmAddr(b) for b in bufs]), 1)
    return chip.cores[0]


@pytest.mark.parametrize("where", ["L0B", "L1"])
@pytest.mark.parametrize("dtype,start,reps,src_stride,dst_gap", [(np.float16, 0, 3, 1, 0), (np.float32, 2, 4, 3, 1),
                                                                 (np.float16, 1, 0, 1, 0)])
def test_load_data_2d_from_gm(where, dtype, start, reps, src_stride, dst_gap):
    dtype = np.dtype(dtype)
    src = RNG.integers(-50, 50, 8192 // dtype.itemsize).astype(dtype)
    dst0 = RNG.integers(-50, 50, 8192 // dtype.itemsize).astype(dtype)

    def body(core, gm):
        fill(core, where, dst0)
        LoadData(local(core, where, dtype), GlobalTensor(dtype).SetGlobalBuffer(gm[0]),
                 LoadData2DParams(startIndex=start, repeatTimes=reps, srcStride=src_stride, dstGap=dst_gap))

    core = _run_one(body, [src])
    expect = ref.ref_load2d(dst0, src, 0, 0, start, reps, src_stride, dst_gap, False, dtype.itemsize)
    assert np.array_equal(elems(core, where, dtype, dst0.size), expect)


def test_load_data_2d_from_gm_refuses_out_of_range_repeat():
    def body(core, gm):
        LoadData(local(core, "L0B", np.float16), GlobalTensor(np.float16).SetGlobalBuffer(gm[0]),
                 LoadData2DParams(repeatTimes=256, srcStride=1))

    with pytest.raises(SimFault, match="repeatTimes=256"):
        _run_one(body, [np.zeros(4096, np.float16)])


@pytest.mark.parametrize("sdtype,count,blen,sgap,dgap", [(np.float16, 1, 2, 0, 0), (np.float32, 2, 1, 1, 1),
                                                         (np.float16, 3, 1, 2, 0), (np.float32, 0, 1, 0, 0)])
def test_copy_l1_to_bias_table(sdtype, count, blen, sgap, dgap):
    sdtype = np.dtype(sdtype)
    src = RNG.integers(-50, 50, 512 // sdtype.itemsize).astype(sdtype)
    bt0 = RNG.integers(-50, 50, 256).astype(np.float32)

    def body(core, gm):
        fill(core, "L1", src)
        fill(core, "BT", bt0)
        DataCopy(local(core, "BT", np.float32), local(core, "L1", sdtype), DataCopyParams(count, blen, sgap, dgap))

    core = _run_one(body)
    expect = ref.ref_copy_l1_to_bt(bt0, src, 0, 0, count, blen, sgap, dgap)
    assert np.array_equal(elems(core, "BT", np.float32, 256), expect)


def test_copy_l1_to_bias_table_refuses_float_to_half_and_misaligned_dst():
    def to_half(core, gm):
        DataCopy(local(core, "BT", np.float16), local(core, "L1", np.float32), DataCopyParams(1, 1, 0, 0))

    def misaligned(core, gm):
        DataCopy(local(core, "BT", np.float32, 32), local(core, "L1", np.float32), DataCopyParams(1, 1, 0, 0))

    with pytest.raises(SimFault, match="float32 -> float16"):
        _run_one(to_half)
    with pytest.raises(SimFault, match="not a multiple of 64"):
        _run_one(misaligned)


@pytest.mark.parametrize("dtype,m,n,k", [(np.float16, 32, 48, 40), (np.float32, 20, 30, 24), (np.float16, 1, 32, 16)])
def test_mmad_bias_from_bias_table(dtype, m, n, k):
    dtype = np.dtype(dtype)
    k0 = 32 // dtype.itemsize
    a = RNG.integers(-8, 8, (m, k)).astype(dtype)
    b = RNG.integers(-8, 8, (k, n)).astype(dtype)
    a_flat = np.asarray(a).reshape(-1) if m == 1 else ref.make_zz(a, k0)
    b_flat = ref.make_zn(b, k0)
    c0 = RNG.integers(-100, 100, 4096).astype(np.float32)
    bias = RNG.integers(-100, 100, 256).astype(np.float32)

    def body(core, gm):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", b_flat)
        fill(core, "L0C", c0)
        fill(core, "BT", bias)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", dtype), local(core, "L0B", dtype),
             MmadParams(m, n, k, isBias=True, cmatrixSource=True, cmatrixInitVal=False))

    core = _run_one(body)
    expect = ref.ref_mmad(c0, a_flat, b_flat, m, n, k, False, str(dtype), cmatrixSource=True, bias=bias)
    got = elems(core, "L0C", np.float32, c0.size)
    assert np.array_equal(ref.read_nz(got, m, n), ref.read_nz(expect, m, n))
    # and the same operands without the bias differ by exactly the bias row
    plain = ref.ref_mmad(c0, a_flat, b_flat, m, n, k, True, str(dtype))
    assert np.array_equal(ref.read_nz(got, m, n) - ref.read_nz(plain, m, n), np.broadcast_to(bias[:n], (m, n)))
