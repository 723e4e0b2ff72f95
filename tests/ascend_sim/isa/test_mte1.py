"""MTE1 loads into L0, against tests/isa_reference.py: LoadData 3Dv2 with enTranspose into L0A (the dw kernel's
dy path; and the fp32 Mmad with kDirectionAlign that reads it), its field faults, and the fmatrix register
(LEFT / RIGHT) a load used, named in its record. (The plain LoadData 2D / 3Dv2 tests are in test_instructions.py.)"""
import isa_reference as ref
import ml_dtypes
import numpy as np
import pytest
from core_buffers import elems, fill, launch_body, local

from ascend_sim.ascendc import FMATRIX_RIGHT, LoadData, LoadData3DParamsV2, Mmad, MmadParams, SetFmatrix
from ascend_sim.machine.faults import ParameterOutOfRange

DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)]


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

    chip, _ = launch_body(body)
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

    chip, _ = launch_body(body)
    c = elems(chip.cores[0], "L0C", np.float32, ref._ceil_align(couts, 16) * 16)
    np.testing.assert_array_equal(ref.read_nz(c, couts, n), x @ b)


def test_transposed_load_faults_name_the_field():
    def bad_mext(core, gm):
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=32, channelSize=16, kExtension=16, mExtension=8, enTranspose=True))

    with pytest.raises(ParameterOutOfRange, match="mExtension=8 must be a multiple of 16"):
        launch_body(bad_mext)

    def right_with_set(core, gm):
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=32, channelSize=16, kExtension=16, mExtension=16, fMatrixCtrl=True))

    with pytest.raises(ParameterOutOfRange, match="fMatrixCtrl=1 with isSetFMatrix=True"):
        launch_body(right_with_set)


def test_records_name_the_fmatrix_register_a_load_used():
    def body(core, gm):
        SetFmatrix(1, 32, (0, 0, 0, 0), FMATRIX_RIGHT)
        LoadData(local(core, "L0B", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            channelSize=16, kExtension=16, mExtension=16, fMatrixCtrl=True), isSetFMatrix=False)
        LoadData(local(core, "L0A", np.float16), local(core, "L1", np.float16), LoadData3DParamsV2(
            l1H=1, l1W=16, channelSize=16, kExtension=16, mExtension=16, enTranspose=True))

    chip, _ = launch_body(body)
    set_rec, right, left = chip.cores[0].log
    assert set_rec.name == "SetFmatrix" and set_rec.params == {"register": FMATRIX_RIGHT,
                                                              "value": right.registers[0][1]}
    assert right.registers[0][0] == FMATRIX_RIGHT and right.registers[0][1].l1W == 32
    assert left.registers[0][0] == "FMATRIX_LEFT" and left.registers[0][1].l1W == 16


# ------------------------------------------------------------------------------------------ atomic add
