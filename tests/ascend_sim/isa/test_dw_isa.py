"""The instruction features the Conv3DBackpropFilterV2 (dw) kernel needs, against tests/isa_reference.py:
LoadData 3Dv2 with enTranspose into L0A (and the fp32 Mmad with kDirectionAlign that reads it), the RIGHT
fmatrix register in the records, SetAtomicAdd / SetAtomicNone with Fixpipe and with DataCopy L1 -> GM, and
atomic adds of several cores into one GM tensor."""
import isa_reference as ref
import ml_dtypes
import numpy as np
import pytest
from core_buffers import elems, fill, local

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_NZ, FMATRIX_RIGHT, DataCopy, DataCopyParams, Fixpipe, FixpipeParamsV220,
                                GetBlockIdx, GlobalTensor, LoadData, LoadData3DParamsV2, Mmad, MmadParams, QuantMode_t,
                                SetAtomicAdd, SetAtomicNone, SetFmatrix, current_core)
from ascend_sim.machine.faults import CrossCoreRace, ParameterOutOfRange
from ascend_sim.machine.tensor import GmAddr

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32)]


def _run(body, gm_arrays=(), block_dim=1, check_races=False, kernel_type="AIC_ONLY"):
    chip = Chip("Ascend910B2", check_races=check_races)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]

    def kernel():
        body(current_core(), [GmAddr(b) for b in bufs])

    chip.launch(kernel, block_dim, kernel_type=kernel_type)
    return chip, bufs


def _sentinel(n, dtype, rng):
    return rng.integers(-50, 50, n).astype(np.float32).astype(dtype)


# l1H, l1W, pads, C1, kExt (in C0 units, b32 may add half a fractal), mExt, kStart (C0 units), mStart, sW, sH,
# fW, fH, dW, dH: the dw dy path (1x1, W = pixels) and general windows
TRANSPOSE_CASES = [
    (1, 40, (0, 0, 0, 0), 2, 2, 32, 0, 0, 1, 1, 1, 1, 1, 1),
    (1, 64, (0, 0, 0, 0), 4, 3, 48, 1, 7, 1, 1, 1, 1, 1, 1),
    (5, 9, (1, 2, 1, 0), 2, 2, 16, 2, 5, 2, 1, 3, 2, 1, 2),
    (4, 6, (0, 0, 0, 255), 1, 1, 16, 0, 3, 1, 1, 1, 1, 1, 1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", TRANSPOSE_CASES)
def test_load3dv2_en_transpose_into_l0a(dtype, case):
    l1H, l1W, pads, c1, kext, mext, kstart, mstart, sw, sh, fw, fh, dw, dh = case
    c0 = 32 // dtype.itemsize
    kext, kstart = kext * c0, kstart * c0
    rng = np.random.default_rng(l1H * l1W + c1 + kext)
    fmap = _sentinel(c1 * l1H * l1W * c0, dtype, rng)
    l0 = _sentinel(8192, dtype, rng)
    params = LoadData3DParamsV2(padList=pads, l1H=l1H, l1W=l1W, channelSize=c1 * c0, kExtension=kext,
                                mExtension=mext, kStartPt=kstart, mStartPt=mstart, strideW=sw, strideH=sh,
                                filterW=fw, filterH=fh, dilationFilterW=dw, dilationFilterH=dh, enTranspose=True)

    def body(core, gm):
        fill(core, "L1", fmap)
        fill(core, "L0A", l0)
        LoadData(local(core, "L0A", dtype), local(core, "L1", dtype), params)

    chip, _ = _run(body)
    expect = ref.ref_load3dv2(l0, fmap, 0, 0, l1H, l1W, pads, c1 * c0, kext, mext, kstart, mstart, sw, sh, fw, fh,
                              dw, dh, True, 0, "L0A", dtype.itemsize)
    got = elems(chip.cores[0], "L0A", dtype, l0.size)
    assert np.array_equal(got.view(np.uint8), expect.view(np.uint8))


@pytest.mark.parametrize("mext,kext", [(24, 16), (16, 24), (40, 40), (8, 8)])
def test_fp32_transposed_l0a_feeds_mmad_with_kdirectionalign(mext, kext):
    """fp32 edges: odd numbers of 8-wide fractals in either direction. A = X^T (couts x pixels) through the
    transposing load, B = X2 (pixels x n) through L0B; Mmad(kDirectionAlign) must give A @ B exactly (integers)."""
    dtype = np.dtype(np.float32)
    rng = np.random.default_rng(mext * 100 + kext)
    pixels, couts, n = mext, kext, 16
    x = rng.integers(-6, 7, (couts, pixels)).astype(np.float32)  # dy: cout x pixels, NC1HWC0 with H=1, W=pixels
    fmap = np.zeros((couts // 8, pixels, 8), np.float32)
    for co in range(couts):
        fmap[co // 8, :, co % 8] = x[co]
    b = rng.integers(-6, 7, (pixels, n)).astype(np.float32)
    l0b = ref.make_zn(b, 8)

    def body(core, gm):
        fill(core, "L1", fmap.reshape(-1))
        fill(core, "L0B", l0b)
        fill(core, "L0A", np.full(4096, 999.0, np.float32))  # padding of the transposed A must not matter
        LoadData(local(core, "L0A", dtype), local(core, "L1", dtype), LoadData3DParamsV2(
            l1H=1, l1W=pixels, channelSize=couts, kExtension=couts, mExtension=mext, enTranspose=True))
        Mmad(local(core, "L0C", dtype), local(core, "L0A", dtype), local(core, "L0B", dtype),
             MmadParams(m=couts, n=n, k=pixels, kDirectionAlign=True))

    chip, _ = _run(body)
    c = elems(chip.cores[0], "L0C", np.float32, ref._ceil_align(couts, 16) * 16)
    np.testing.assert_array_equal(ref.read_nz(c, couts, n), x @ b)


def test_transposed_load_faults_name_the_field():
    def bad_mext(core, gm):
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=32, channelSize=16, kExtension=16, mExtension=8, enTranspose=True))

    with pytest.raises(ParameterOutOfRange, match="mExtension=8 must be a multiple of 16"):
        _run(bad_mext)

    def right_with_set(core, gm):
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=32, channelSize=16, kExtension=16, mExtension=16, fMatrixCtrl=True))

    with pytest.raises(ParameterOutOfRange, match="fMatrixCtrl=1 with isSetFMatrix=True"):
        _run(right_with_set)


def test_records_name_the_fmatrix_register_a_load_used():
    def body(core, gm):
        SetFmatrix(1, 32, (0, 0, 0, 0), FMATRIX_RIGHT)
        LoadData(local(core, "L0B", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            channelSize=16, kExtension=16, mExtension=16, fMatrixCtrl=True), isSetFMatrix=False)
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=16, channelSize=16, kExtension=16, mExtension=16, enTranspose=True))

    chip, _ = _run(body)
    set_rec, right, left = chip.cores[0].log
    assert set_rec.name == "SetFmatrix" and set_rec.params == {"register": FMATRIX_RIGHT,
                                                              "value": right.registers[0][1]}
    assert right.registers[0][0] == FMATRIX_RIGHT and right.registers[0][1].l1W == 32
    assert left.registers[0][0] == "FMATRIX_LEFT" and left.registers[0][1].l1W == 16


# ------------------------------------------------------------------------------------------ atomic add
FIX_CASES = [  # mSize, nSize, srcStride, dstStride (32-byte blocks), split
    (16, 16, 16, 32, False), (20, 32, 32, 64, False), (24, 40, 32, 24, True), (1, 8, 16, 8, True),
]


@pytest.mark.parametrize("m,n,sstride,dstride,split", FIX_CASES)
def test_fixpipe_atomic_add_nz_fp32(m, n, sstride, dstride, split):
    rng = np.random.default_rng(m + n)
    l0c = rng.standard_normal(4096).astype(np.float32)
    gm0 = rng.standard_normal(2048).astype(np.float32)

    def body(core, gm):
        fill(core, "L0C", l0c)
        out = GlobalTensor(np.float32).SetGlobalBuffer(gm[0])
        SetAtomicAdd(np.float32)
        Fixpipe(out[8], local(core, "L0C", np.float32), FixpipeParamsV220(
            nSize=n, mSize=m, srcStride=sstride, dstStride=dstride, isChannelSplit=split), CFG_NZ)
        SetAtomicNone()

    chip, bufs = _run(body, [gm0])
    expect = ref.ref_fixpipe(gm0, l0c, 8, 0, n, m, sstride, dstride, "NoQuant", split, False, np.float32,
                             atomic_add=True)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), expect)
    names = [(r.name, r.pipe.name) for r in chip.cores[0].log]
    assert names == [("SetAtomicAdd", "S"), ("Fixpipe", "FIX"), ("SetAtomicNone", "S")]
    assert chip.cores[0].log[1].registers == (("atomic", "float32"),)


def test_atomic_add_bf16_fixpipe_rounds_once():
    rng = np.random.default_rng(3)
    l0c = rng.standard_normal(1024).astype(np.float32)
    gm0 = rng.standard_normal(512).astype(np.float32).astype(BF16)

    def body(core, gm):
        fill(core, "L0C", l0c)
        SetAtomicAdd(BF16)
        Fixpipe(GlobalTensor(BF16).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32), FixpipeParamsV220(
            nSize=16, mSize=16, srcStride=16, dstStride=1, quantPre=QuantMode_t.F322BF16), CFG_NZ)
        SetAtomicNone()

    _, bufs = _run(body, [gm0])
    expect = ref.ref_fixpipe(gm0, l0c, 0, 0, 16, 16, 16, 1, "F322BF16", False, False, BF16, atomic_add=True)
    assert np.array_equal(bufs[0].data.view(BF16).view(np.uint16), expect.view(np.uint16))


def test_atomic_type_mismatch_faults():
    def body(core, gm):
        SetAtomicAdd(np.float32)
        Fixpipe(GlobalTensor(np.float16).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32),
                FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=1, quantPre=QuantMode_t.F322F16), CFG_NZ)

    with pytest.raises(ParameterOutOfRange, match=r"SetAtomicAdd<float32> is set but the store writes float16"):
        _run(body, [np.zeros(512, np.float16)])


@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("count,blen,sgap,dgap", [(1, 4, 0, 0), (3, 2, 1, 5), (4, 1, 0, 2)])
def test_datacopy_l1_to_gm(atomic, count, blen, sgap, dgap):
    rng = np.random.default_rng(count * 10 + blen)
    l1 = rng.standard_normal(1024).astype(np.float32)
    gm0 = rng.standard_normal(1024).astype(np.float32)

    def body(core, gm):
        fill(core, "L1", l1)
        if atomic:
            SetAtomicAdd(np.float32)
        DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(gm[0])[3], local(core, "L1", np.float32, 64),
                 DataCopyParams(count, blen, sgap, dgap))
        if atomic:
            SetAtomicNone()

    chip, bufs = _run(body, [gm0])
    plain = ref.ref_datacopy(np.zeros_like(gm0), l1, 3, 16, count, blen, sgap, dgap, 4)
    moved = ref.ref_datacopy(np.zeros(gm0.size, bool), np.ones(l1.size, bool), 3, 16, count, blen, sgap, dgap, 4)
    expect = np.where(moved, (gm0 + plain) if atomic else plain, gm0)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), expect)
    assert chip.cores[0].log[-2 if atomic else -1].pipe.name == "MTE3"


def _two_cores_store(atomic_on_core):
    def body(core, gm):
        idx = GetBlockIdx()
        fill(core, "L0C", np.full(256, idx + 1.0, np.float32))
        if idx in atomic_on_core:
            SetAtomicAdd(np.float32)
        Fixpipe(GlobalTensor(np.float32).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32),
                FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=2), CFG_NZ)
        if idx in atomic_on_core:
            SetAtomicNone()
    return body


def test_atomic_adds_of_two_cores_commute_and_do_not_race():
    _, bufs = _run(_two_cores_store((0, 1)), [np.full(256, 10.0, np.float32)], block_dim=2, check_races=True)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), np.full(256, 13.0, np.float32))


def test_plain_store_against_atomic_add_of_another_core_races():
    with pytest.raises(CrossCoreRace):
        _run(_two_cores_store((1,)), [np.zeros(256, np.float32)], block_dim=2, check_races=True)
