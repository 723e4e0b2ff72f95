"""The bias table (BT): DataCopy L1 -> BT (with the half -> float conversion) and Mmad initialised from it
(cmatrixSource=1), against tests/isa_reference.py; the copies BT refuses."""
import isa_reference as ref
import numpy as np
import pytest
from core_buffers import elems, fill, launch_body, local

from ascend_sim.ascendc import DataCopy, DataCopyParams, Mmad, MmadParams
from ascend_sim.machine.faults import SimFault

RNG = np.random.default_rng(3)


def _run_one_core(body, gm_arrays=()):
    return launch_body(body, gm_arrays)[0].cores[0]


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

    core = _run_one_core(body)
    expect = ref.ref_copy_l1_to_bt(bt0, src, 0, 0, count, blen, sgap, dgap)
    assert np.array_equal(elems(core, "BT", np.float32, 256), expect)


def test_copy_l1_to_bias_table_refuses_float_to_half_and_misaligned_dst():
    def to_half(core, gm):
        DataCopy(local(core, "BT", np.float16), local(core, "L1", np.float32), DataCopyParams(1, 1, 0, 0))

    def misaligned(core, gm):
        DataCopy(local(core, "BT", np.float32, 32), local(core, "L1", np.float32), DataCopyParams(1, 1, 0, 0))

    with pytest.raises(SimFault, match="float32 -> float16"):
        _run_one_core(to_half)
    with pytest.raises(SimFault, match="not a multiple of 64"):
        _run_one_core(misaligned)


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

    core = _run_one_core(body)
    expect = ref.ref_mmad(c0, a_flat, b_flat, m, n, k, False, str(dtype), cmatrixSource=True, bias=bias)
    got = elems(core, "L0C", np.float32, c0.size)
    assert np.array_equal(ref.read_nz(got, m, n), ref.read_nz(expect, m, n))
    # and the same operands without the bias differ by exactly the bias row
    plain = ref.ref_mmad(c0, a_flat, b_flat, m, n, k, True, str(dtype))
    assert np.array_equal(ref.read_nz(got, m, n) - ref.read_nz(plain, m, n), np.broadcast_to(bias[:n], (m, n)))
