"""Each simulated instruction against the loop-based reference models of tests/isa_reference.py.

Buffers start filled with a sentinel pattern so the tests see exactly which elements an instruction writes.
"""
import isa_reference as ref
import ml_dtypes
import numpy as np
import pytest
from core_buffers import elems, fill, local

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_NZ, CFG_ROW_MAJOR, FMATRIX_RIGHT, DataCopy, DataCopyCO12DstParams, DataCopyParams,
                                Fixpipe, FixpipeParamsV220, GlobalTensor, InitConstValue, InitConstValueParams,
                                LoadData, LoadData2DParams, LoadData3DParamsV2, Mmad, MmadParams, Nd2NzParams,
                                QuantMode_t, SetFmatrix, SetHF32Mode, SetHF32TransMode, current_core)
from ascend_sim.machine.tensor import GmAddr

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32)]


def _sentinel(n, dtype, rng):
    return rng.integers(-50, 50, n).astype(np.float32).astype(dtype)


def _run_one(body, gm_arrays=(), platform="Ascend910B2"):
    """Run body(core, gm_tensors) on one core without race checking; return the core (buffers stay)."""
    chip = Chip(platform, check_races=False)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]

    def kernel():
        body(current_core(), [GmAddr(b) for b in bufs])

    chip.launch(kernel, 1)
    return chip.cores[0], bufs


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("count,blen,sgap,dgap,src_off", [(1, 3, 0, 0, 0), (4, 2, 1, 3, 5), (3, 1, 0, 2, 1),
                                                          (0, 2, 0, 0, 0), (2, 0, 0, 0, 0)])
def test_datacopy_params(dtype, count, blen, sgap, dgap, src_off):
    rng = np.random.default_rng(count * 7 + blen)
    c0 = 32 // dtype.itemsize
    src = _sentinel(c0 * 40, dtype, rng)
    l1_init = _sentinel(c0 * 40, dtype, rng)

    def body(core, gm):
        fill(core, "L1", l1_init)
        g = GlobalTensor(dtype).SetGlobalBuffer(gm[0])
        DataCopy(local(core, "L1", dtype, 64), g[src_off], DataCopyParams(count, blen, sgap, dgap))

    core, _ = _run_one(body, [src])
    expect = ref.ref_datacopy(l1_init, src, 64 // dtype.itemsize, src_off, count, blen, sgap, dgap, dtype.itemsize)
    assert np.array_equal(elems(core, "L1", dtype, l1_init.size).view(np.uint8), expect.view(np.uint8))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nd,n,d,sms,sdv,c0s,ns,dms", [(1, 5, 20, 0, 24, 6, 1, 0), (2, 3, 16, 60, 17, 4, 1, 128),
                                                       (1, 16, 7, 0, 7, 16, 1, 0), (3, 2, 33, 70, 35, 3, 2, 300)])
def test_nd2nz(dtype, nd, n, d, sms, sdv, c0s, ns, dms):
    rng = np.random.default_rng(n * d)
    src = _sentinel(800, dtype, rng)
    l1_init = _sentinel(2048, dtype, rng)

    def body(core, gm):
        fill(core, "L1", l1_init)
        DataCopy(local(core, "L1", dtype), GlobalTensor(dtype).SetGlobalBuffer(gm[0])[3],
                 Nd2NzParams(nd, n, d, sms, sdv, c0s, ns, dms))

    core, _ = _run_one(body, [src])
    expect = ref.ref_nd2nz(l1_init, src, 0, 3, nd, n, d, sms, sdv, c0s, ns, dms, dtype.itemsize)
    assert np.array_equal(elems(core, "L1", dtype, l1_init.size).view(np.uint8), expect.view(np.uint8))


@pytest.mark.parametrize("where", ["L1", "L0A", "L0B"])
@pytest.mark.parametrize("reps,blocks,gap", [(3, 2, 1), (1, 4, 0), (0, 3, 0)])
def test_init_const_value(where, reps, blocks, gap):
    dtype = np.dtype(np.float16)
    rng = np.random.default_rng(reps + blocks)
    init = _sentinel(8192, dtype, rng)

    def body(core, gm):
        fill(core, where, init)
        InitConstValue(local(core, where, dtype), InitConstValueParams(reps, blocks, gap, 0.5))

    core, _ = _run_one(body)
    expect = ref.ref_init_const_value(init, 0, reps, blocks, gap, 0.5, where, 2)
    assert np.array_equal(elems(core, where, dtype, init.size), expect)


LOAD2D_CASES = [(0, 4, 1, 0, False, "L0A"), (2, 3, 3, 1, False, "L0B"), (1, 5, 2, 0, True, "L0B"),
                (0, 2, 0, 2, True, "L0A"), (3, 0, 1, 0, False, "L0A")]


# ifTranspose is b16 only; fp32 with it is test_load_data_2d_transpose_rejects_fp32
@pytest.mark.parametrize("dtype,start,reps,sstride,dgap,transpose,target",
                         [(dt, *case) for dt in DTYPES for case in LOAD2D_CASES if not (case[4] and dt.itemsize == 4)])
def test_load_data_2d(dtype, start, reps, sstride, dgap, transpose, target):
    rng = np.random.default_rng(start + reps)
    l1 = _sentinel(8192, dtype, rng)
    l0 = _sentinel(8192, dtype, rng)

    def body(core, gm):
        fill(core, "L1", l1)
        fill(core, target, l0)
        LoadData(local(core, target, dtype), local(core, "L1", dtype, 64),
                 LoadData2DParams(startIndex=start, repeatTimes=reps, srcStride=sstride, dstGap=dgap,
                                  ifTranspose=transpose))

    core, _ = _run_one(body)
    expect = ref.ref_load2d(l0, l1, 0, 64 // dtype.itemsize, start, reps, sstride, dgap, transpose, dtype.itemsize)
    assert np.array_equal(elems(core, target, dtype, l0.size).view(np.uint8), expect.view(np.uint8))


def test_load_data_2d_transpose_rejects_fp32():
    from ascend_sim import ParameterOutOfRange

    def body(core, gm):
        LoadData(local(core, "L0B", np.float32), local(core, "L1", np.float32),
                 LoadData2DParams(repeatTimes=1, ifTranspose=True))
    with pytest.raises(ParameterOutOfRange, match="16-bit"):
        _run_one(body)


LOAD3D_CASES = [
    # l1H, l1W, pads(l,r,t,b), channels(in C0), kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH
    (4, 5, (1, 1, 1, 1), 1, 32, 16, 0, 0, 1, 1, 3, 3, 1, 1),
    (6, 7, (0, 2, 1, 255), 2, 48, 32, 16, 5, 1, 1, 2, 3, 2, 1),
    (5, 9, (2, 0, 0, 3), 3, 64, 48, 32, 17, 2, 1, 3, 2, 1, 2),
    (3, 4, (0, 0, 0, 0), 2, 32, 16, 0, 0, 1, 1, 1, 1, 1, 1),
    (8, 8, (3, 3, 3, 3), 1, 16, 64, 0, 3, 3, 2, 4, 4, 1, 1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("target", ["L0A", "L0B"])
@pytest.mark.parametrize("case", LOAD3D_CASES)
def test_load_data_3d_v2(dtype, target, case):
    l1H, l1W, pads, c1, kext, mext, kstart, mstart, sw, sh, fw, fh, dw, dh = case
    c0 = 32 // dtype.itemsize
    kext, kstart = kext // 16 * c0, kstart // 16 * c0  # the same number of C0 columns for every dtype
    rng = np.random.default_rng(l1H * l1W + c1)
    fmap = _sentinel(c1 * l1H * l1W * c0, dtype, rng)
    l0 = _sentinel(8192, dtype, rng)
    params = LoadData3DParamsV2(padList=pads, l1H=l1H, l1W=l1W, channelSize=c1 * c0, kExtension=kext,
                                mExtension=mext, kStartPt=kstart, mStartPt=mstart, strideW=sw, strideH=sh,
                                filterW=fw, filterH=fh, dilationFilterW=dw, dilationFilterH=dh, padValue=0)

    def body(core, gm):
        fill(core, "L1", np.concatenate([np.zeros(c0 * 2, dtype), fmap]))
        fill(core, target, l0)
        LoadData(local(core, target, dtype), local(core, "L1", dtype, 64), params)

    core, _ = _run_one(body)
    expect = ref.ref_load3dv2(l0, fmap, 0, 0, l1H, l1W, pads, c1 * c0, kext, mext, kstart, mstart, sw, sh, fw, fh,
                              dw, dh, False, 0, target, dtype.itemsize)
    assert np.array_equal(elems(core, target, dtype, l0.size).view(np.uint8), expect.view(np.uint8))


def test_load_data_3d_v2_fp32_into_l0b_half_fractal_from_the_right_fmatrix():
    """The dx fp32 weight path: RIGHT fmatrix register, kExtension = 8 mod 16 leaves half a fractal unwritten."""
    dtype = np.dtype(np.float32)
    rng = np.random.default_rng(5)
    fmap = _sentinel(3 * 1 * 20 * 8, dtype, rng)
    l0 = _sentinel(4096, dtype, rng)
    params = LoadData3DParamsV2(channelSize=24, kExtension=24, mExtension=16, mStartPt=3, fMatrixCtrl=True)

    def body(core, gm):
        fill(core, "L1", fmap)
        fill(core, "L0B", l0)
        SetFmatrix(1, 20, (0, 0, 0, 0), FMATRIX_RIGHT)
        LoadData(local(core, "L0B", dtype), local(core, "L1", dtype), params, isSetFMatrix=False)

    core, _ = _run_one(body)
    expect = ref.ref_load3dv2(l0, fmap, 0, 0, 1, 20, (0, 0, 0, 0), 24, 24, 16, 0, 3, 1, 1, 1, 1, 1, 1, False, 0,
                              "L0B", 4)
    assert np.array_equal(elems(core, "L0B", dtype, l0.size), expect)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k,init", [(16, 16, 16, True), (32, 48, 40, True), (20, 30, 24, False),
                                        (1, 32, 48, True), (48, 16, 8, False)])
def test_mmad(dtype, m, n, k, init):
    rng = np.random.default_rng(m * n + k)
    k0 = 32 // dtype.itemsize
    a = rng.integers(-8, 8, (m, k)).astype(dtype)  # small integers: every sum is exact in fp32
    b = rng.integers(-8, 8, (k, n)).astype(dtype)
    a_flat = np.asarray(a).reshape(-1) if m == 1 else ref.make_zz(a, k0)
    b_flat = ref.make_zn(b, k0)
    c_init = rng.integers(-100, 100, 4096).astype(np.float32)

    def body(core, gm):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", b_flat)
        fill(core, "L0C", c_init)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", dtype), local(core, "L0B", dtype),
             MmadParams(m, n, k, cmatrixInitVal=init))

    core, _ = _run_one(body)
    expect = ref.ref_mmad(c_init, a_flat, b_flat, m, n, k, init, {2: "float16", 4: "float32"}[dtype.itemsize]
                          if dtype != BF16 else "bfloat16")
    got = elems(core, "L0C", np.float32, c_init.size)
    assert np.array_equal(ref.read_nz(got, m, n), ref.read_nz(expect, m, n))
    if m == 1:  # GEMV writes only row 0 of each C fractal
        untouched = np.ones(c_init.size, bool)
        untouched[[((j // 16) * 16 + 0) * 16 + j % 16 for j in range(-(-n // 16) * 16)]] = False
        assert np.array_equal(got[untouched], c_init[untouched])


@pytest.mark.parametrize("mode", [0, 1])
def test_mmad_hf32_rounds_the_operands(mode):
    rng = np.random.default_rng(9)
    m, n, k = 16, 16, 16
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a[0, :4] = np.array([1 + 2 ** -12, 1 + 3 * 2 ** -12, -(1 + 2 ** -12), 3.0], np.float32)  # exact ties
    a_flat, b_flat = ref.make_zz(a, 8), ref.make_zn(b, 8)

    def body(core, gm):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", b_flat)
        SetHF32Mode(True)
        SetHF32TransMode(mode)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", np.float32), local(core, "L0B", np.float32),
             MmadParams(m, n, k))

    core, _ = _run_one(body)
    expect = ref.ref_mmad(np.zeros(4096, np.float32), a_flat, b_flat, m, n, k, True, "float32", hf32=True,
                          hf32_trans_mode=["NEAREST_EVEN", "NEAREST_AWAY"][mode])
    got = ref.read_nz(elems(core, "L0C", np.float32, 4096), m, n)
    want = ref.read_nz(expect, m, n)
    rounded_a = np.array([[ref.round_fp32_mantissa(float(x), 11, ["NEAREST_EVEN", "NEAREST_AWAY"][mode])
                           for x in row] for row in a])
    rounded_b = np.array([[ref.round_fp32_mantissa(float(x), 11, ["NEAREST_EVEN", "NEAREST_AWAY"][mode])
                           for x in row] for row in b])
    assert np.all(np.abs(got - want) <= ref.mmad_tolerance(rounded_a, rounded_b))
    assert not np.allclose(got, a @ b, rtol=1e-7, atol=0)  # the rounding really happened


FIXPIPE_CASES = [
    # m, n, srcStride, dstStride, quant, split, nz2nd
    (16, 16, 16, 16, "F322F16", False, True),
    (20, 50, 32, 64, "F322BF16", False, True),
    (33, 32, 48, 70, "NoQuant", False, False),
    (18, 24, 32, 20, "NoQuant", True, False),
    (16, 48, 16, 100, "F322F16", False, False),
]


@pytest.mark.parametrize("m,n,sstride,dstride,quant,split,nz2nd", FIXPIPE_CASES)
@pytest.mark.parametrize("api", ["Fixpipe", "DataCopy"])
def test_fixpipe(m, n, sstride, dstride, quant, split, nz2nd, api):
    rng = np.random.default_rng(m * n)
    out_dtype = {"F322F16": np.dtype(np.float16), "F322BF16": BF16, "NoQuant": np.dtype(np.float32)}[quant]
    l0c = (rng.standard_normal(8192) * 100).astype(np.float32)
    l0c[::7] *= -1
    gm_init = _sentinel(6000, out_dtype, rng)

    def body(core, gm):
        fill(core, "L0C", np.concatenate([np.zeros(256, np.float32), l0c]))
        src = local(core, "L0C", np.float32, 1024)
        dst = GlobalTensor(out_dtype).SetGlobalBuffer(gm[0])[32]
        q = QuantMode_t[quant]
        if api == "Fixpipe":
            Fixpipe(dst, src, FixpipeParamsV220(nSize=n, mSize=m, srcStride=sstride, dstStride=dstride, quantPre=q,
                                                isChannelSplit=split), CFG_ROW_MAJOR if nz2nd else CFG_NZ)
        else:
            DataCopy(dst, src, DataCopyCO12DstParams(nSize=n, mSize=m, dstStride=dstride, srcStride=sstride,
                                                     quantPre=q, channelSplit=split, nz2ndEn=nz2nd))

    core, bufs = _run_one(body, [gm_init])
    expect = ref.ref_fixpipe(gm_init, l0c, 32, 0, n, m, sstride, dstride, quant, split, nz2nd, out_dtype)
    got = bufs[0].data.view(out_dtype)
    assert np.array_equal(got.view(np.uint8), expect.view(np.uint8))


def test_fixpipe_batched_nz2nd():
    rng = np.random.default_rng(3)
    l0c = rng.standard_normal(8192).astype(np.float32)
    gm_init = _sentinel(4000, np.float32, rng)

    def body(core, gm):
        fill(core, "L0C", l0c)
        Fixpipe(GlobalTensor(np.float32).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32),
                FixpipeParamsV220(nSize=32, mSize=16, srcStride=16, dstStride=40, ndNum=3, srcNdStride=2,
                                  dstNdStride=700))

    _, bufs = _run_one(body, [gm_init])
    expect = ref.ref_fixpipe(gm_init, l0c, 0, 0, 32, 16, 16, 40, "NoQuant", False, True, np.float32, ndNum=3,
                             srcNdStride=2, dstNdStride=700)
    assert np.array_equal(bufs[0].data.view(np.float32), expect)
