"""Sanity tests of the loop-based ISA reference models (tests/isa_reference.py).

Each test checks a reference against a fact that does not come from the reference itself: torch's conv2d /
unfold, numpy matmul, a matrix transpose, hand-computed addresses from the Ascend documentation examples,
IEEE rounding of numpy / ml_dtypes, or the golden formula of the official fixpipe sample.
"""
import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

try:
    from tests import isa_reference as ref
except ImportError:  # pragma: no cover - when tests/ is on sys.path directly
    import isa_reference as ref

BF16 = np.dtype(ml_dtypes.bfloat16)
SENTINEL = -777.0
RNG = np.random.default_rng(2201)


def small_ints(shape, dtype, lo=-3, hi=4):
    return RNG.integers(lo, hi, size=shape).astype(np.float32).astype(dtype)


def ceil_div(a, b):
    return -(-a // b)


# ------------------------------------------------------------------------------------------------ DataCopy
def test_datacopy_gaps_are_end_to_start_doc_example():
    # GMToL1高维切分数据搬运 example: half, blockCount=2, blockLen=3, srcGap=1, dstGap=2 (units of 32 B = 16 half)
    src = np.arange(200, dtype=np.float16)
    dst = np.full(200, SENTINEL, dtype=np.float16)
    out = ref.ref_datacopy(dst, src, 0, 0, blockCount=2, blockLen=3, srcStride=1, dstStride=2, elem_bytes=2)
    np.testing.assert_array_equal(out[0:48], src[0:48])
    assert np.all(out[48:80] == np.float16(SENTINEL))  # 2 blocks of dst gap
    np.testing.assert_array_equal(out[80:128], src[64:112])  # src skipped 1 block (48..63)
    assert np.all(out[128:] == np.float16(SENTINEL))


def test_datacopy_offsets_fp32_and_nop():
    src = np.arange(100, dtype=np.float32)
    dst = np.zeros(100, dtype=np.float32)
    out = ref.ref_datacopy(dst, src, 8, 4, blockCount=3, blockLen=1, srcStride=2, dstStride=0, elem_bytes=4)
    # C0 = 8 fp32; src blocks start at 4, 28, 52; dst blocks contiguous from 8
    np.testing.assert_array_equal(out[8:32], np.concatenate([src[4:12], src[28:36], src[52:60]]))
    assert np.all(ref.ref_datacopy(dst, src, 0, 0, 0, 5, 0, 0, 4) == dst)
    assert np.all(ref.ref_datacopy(dst, src, 0, 0, 5, 0, 0, 0, 4) == dst)
    with pytest.raises(ValueError):
        ref.ref_datacopy(dst, src, 0, 0, 4096, 1, 0, 0, 4)


def test_datacopy_count_rounds_down_to_32_bytes():
    src = np.arange(64, dtype=np.float16)
    dst = np.zeros(64, dtype=np.float16)
    out = ref.ref_datacopy_count(dst, src, 0, 0, count=40, elem_bytes=2)
    np.testing.assert_array_equal(out[:32], src[:32])
    assert np.all(out[32:] == 0)


def test_out_of_buffer_access_raises():
    with pytest.raises(IndexError):
        ref.ref_datacopy(np.zeros(16, np.float16), np.zeros(64, np.float16), 0, 0, 2, 1, 0, 0, 2)


# ------------------------------------------------------------------------------------------------ ND2NZ
def test_nd2nz_inverse_map_returns_matrix_and_pads_columns():
    n_rows, d_cols, src_d = 13, 23, 32
    src = small_ints(n_rows * src_d, np.float16, -50, 50)
    matrix = src.reshape(n_rows, src_d)[:, :d_cols]
    dst = np.full(16 * 2 * 16, SENTINEL, dtype=np.float16)
    out = ref.ref_nd2nz(dst, src, 0, 0, ndNum=1, nValue=n_rows, dValue=d_cols, srcNdMatrixStride=0,
                        srcDValue=src_d, dstNzC0Stride=16, dstNzNStride=1, dstNzMatrixStride=0, elem_bytes=2)
    view = out.reshape(2, 16, 16)  # [C1][rows][C0]
    back = np.concatenate([view[0, :n_rows, :], view[1, :n_rows, :]], axis=1)[:, :d_cols]
    np.testing.assert_array_equal(back, matrix)
    assert np.all(view[1, :n_rows, d_cols - 16:] == 0)  # columns 23..31 zero-padded to 32 B
    assert np.all(view[:, n_rows:, :] == np.float16(SENTINEL))  # rows 13..15 not written


def test_nd2nz_doc_noncontiguous_example_addresses():
    # GMToL1随路转换-ND2NZ doc: ndNum=2, nValue=8, dValue=23, srcNdMatrixStride=384, srcDValue=32,
    # dstNzC0Stride=37, dstNzNStride=2, dstNzMatrixStride=320 (half)
    src = np.arange(1024, dtype=np.float32).astype(np.float16)
    dst = np.full(2048, SENTINEL, dtype=np.float16)
    out = ref.ref_nd2nz(dst, src, 0, 0, 2, 8, 23, 384, 32, 37, 2, 320, 2)
    # matrix 1, row 3, column 20: src 384 + 3*32 + 20 = 500; dst 320 + 37*16 + 3*2*16 + 4 = 1012
    assert out[1012] == src[500]
    # matrix 0, row 7, column 5: src 7*32 + 5 = 229; dst 7*2*16 + 5 = 229
    assert out[229] == src[229]
    # matrix 0, row 1, column 23 is padding: dst 37*16 + 32 + 7 = 631
    assert out[631] == 0
    # odd C0 rows between the strided rows are untouched
    assert out[16] == np.float16(SENTINEL)


# ------------------------------------------------------------------------------------------------ InitConstValue
def test_init_const_value_l1_and_l0():
    dst = np.zeros(64 * 16, dtype=np.float16)
    out = ref.ref_init_const_value(dst, 0, repeatTimes=5, blockNum=3, dstGap=5, initValue=1.0, position="L1",
                                   elem_bytes=2)
    blocks = out.reshape(-1, 16)[:, 0]
    expected = np.zeros(64)
    for r in range(5):
        expected[r * 8:r * 8 + 3] = 1
    np.testing.assert_array_equal(blocks, expected)
    l0 = ref.ref_init_const_value(np.zeros(256 * 8, np.float16), 256, 2, 1, 1, 2.0, "L0A", 2)
    assert np.all(l0[256:512] == 2) and np.all(l0[768:1024] == 2)
    assert np.all(l0[:256] == 0) and np.all(l0[512:768] == 0) and np.all(l0[1024:] == 0)


# ------------------------------------------------------------------------------------------------ LoadData 2D
def test_load2d_transpose_gives_transposed_fractal():
    src = small_ints(256 * 5, np.float16, -100, 100)
    dst = np.full(256, SENTINEL, dtype=np.float16)
    out = ref.ref_load2d(dst, src, 0, 0, startIndex=3, repeatTimes=1, srcStride=0, dstGap=0, ifTranspose=True,
                         elem_bytes=2)
    np.testing.assert_array_equal(out.reshape(16, 16), src[768:1024].reshape(16, 16).T)


def test_load2d_strides_and_gaps_fp32():
    src = np.arange(128 * 10, dtype=np.float32)
    dst = np.full(128 * 6, SENTINEL, dtype=np.float32)
    out = ref.ref_load2d(dst, src, 0, 0, startIndex=1, repeatTimes=3, srcStride=2, dstGap=1, ifTranspose=False,
                         elem_bytes=4)
    fr = out.reshape(6, 128)
    for i, s in enumerate((1, 3, 5)):
        np.testing.assert_array_equal(fr[2 * i], src[s * 128:(s + 1) * 128])
        assert np.all(fr[2 * i + 1] == SENTINEL)
    with pytest.raises(ValueError):
        ref.ref_load2d(dst, src, 0, 0, 0, 1, 1, 0, True, 4)  # transpose is b16 only


def test_gm_to_gm_matmul_pipeline_fp16_load2d():
    """load_data_l12l0 README recipe (scenario 8 style): A [m,k] and B [k,n] ND in GM -> ND2NZ -> Load2D
    (A without, B with ifTranspose) -> Mmad -> Fixpipe NZ2ND equals numpy A @ B."""
    m, k, n = 40, 70, 50
    a = small_ints((m, k), np.float16)
    b = small_ints((k, n), np.float16)
    m_pad, k_pad, n_pad = 48, 80, 64
    a1 = ref.ref_nd2nz(np.zeros(5 * m_pad * 16, np.float16), a.ravel(), 0, 0, 1, m, k, 0, k, m_pad, 1, 0, 2)
    b1 = ref.ref_nd2nz(np.zeros(4 * k_pad * 16, np.float16), b.ravel(), 0, 0, 1, k, n, 0, n, k_pad, 1, 0, 2)
    np.testing.assert_array_equal(a1, ref.make_l1_nz(a, 16))
    a2 = np.zeros(3 * 5 * 256, np.float16)
    for i in range(ceil_div(m, 16)):  # loop over m fractal rows, repeat over K
        a2 = ref.ref_load2d(a2, a1, i * 5 * 256, i * 256, 0, 5, m_pad // 16, 0, False, 2)
    np.testing.assert_array_equal(a2, ref.make_zz(a, 16))
    b2 = np.zeros(5 * 4 * 256, np.float16)
    for i in range(ceil_div(k, 16)):  # loop over k fractal rows, repeat over N, transpose each fractal
        b2 = ref.ref_load2d(b2, b1, i * 4 * 256, i * 256, 0, 4, k_pad // 16, 0, True, 2)
    np.testing.assert_array_equal(b2, ref.make_zn(b, 16))
    c = ref.ref_mmad(np.zeros(n_pad * m_pad, np.float32), a2, b2, m, n, k, True, "float16")
    expect = a.astype(np.float32) @ b.astype(np.float32)
    gm = ref.ref_fixpipe(np.full(m * n, SENTINEL, np.float32), c, 0, 0, n, m, m_pad, n, "NoQuant", False, True,
                         np.float32)
    np.testing.assert_array_equal(gm.reshape(m, n), expect)
    gm16 = ref.ref_fixpipe(np.zeros(m * n, np.float16), c, 0, 0, n, m, m_pad, n, "F322F16", False, True, np.float16)
    np.testing.assert_array_equal(gm16.reshape(m, n), expect.astype(np.float16))


# ------------------------------------------------------------------------------------------------ LoadData 3Dv2
CONV_CASES = [
    # elem dtype, Cin, C0, l1H, l1W, padList [l, r, t, b], strideW, strideH, fW, fH, dilW, dilH, Cout
    (np.float16, 20, 16, 7, 8, [1, 1, 2, 1], 1, 2, 3, 2, 1, 2, 20),
    (np.float32, 12, 8, 8, 9, [0, 1, 1, 0], 2, 1, 2, 2, 2, 1, 10),
    (BF16, 16, 16, 4, 8, [1, 1, 1, 1], 1, 1, 3, 3, 1, 1, 16),
]


def _torch_conv(x_chw, weight, pad, strides, dil):
    xt = torch.from_numpy(x_chw.astype(np.float64))[None]
    xt = F.pad(xt, (pad[0], pad[1], pad[2], pad[3]))
    wt = torch.from_numpy(weight.astype(np.float64))
    return F.conv2d(xt, wt, stride=(strides[1], strides[0]), dilation=(dil[1], dil[0]))[0].numpy()


@pytest.mark.parametrize("case", CONV_CASES, ids=["fp16", "fp32", "bf16"])
def test_load3dv2_l0a_then_mmad_is_conv2d(case):
    dt, cin, c0, l1h, l1w, pads, sw, sh, fw, fh, dw, dh, cout = case
    x = small_ints((cin, l1h, l1w), dt)
    w = small_ints((cout, cin, fh, fw), dt)
    src = np.concatenate([np.full(40, SENTINEL, dt), ref.make_nc1hwc0(x, c0)])
    h_out, w_out = ref.load3d_out_hw(l1h, l1w, pads, sw, sh, fw, fh, dw, dh)
    m_total = h_out * w_out
    c1 = ceil_div(cin, c0)
    k_total = c1 * fh * fw * c0
    m_ext = (m_total // 16) * 16
    assert m_ext >= 32
    elem = np.dtype(dt).itemsize
    l0a = ref.ref_load3dv2(np.full(m_ext * k_total, SENTINEL, dt), src, 0, 40, l1h, l1w, pads, c1 * c0, k_total,
                           m_ext, 0, 0, sw, sh, fw, fh, dw, dh, False, 0, "L0A", elem)
    # B: the weight as a K x N matrix in the img2col K order [C1][kh][kw][C0]
    b = np.zeros((k_total, cout), dtype=dt)
    for kk in range(k_total):
        blk, cc = divmod(kk, c0)
        c1i, khw = divmod(blk, fh * fw)
        kh, kw = divmod(khw, fw)
        ch = c1i * c0 + cc
        if ch < cin:
            b[kk, :] = w[:, ch, kh, kw]
    name = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", BF16: "bfloat16"}[np.dtype(dt)]
    n_pad = ceil_div(cout, 16) * 16
    c = ref.ref_mmad(np.zeros(n_pad * m_ext, np.float32), l0a, ref.make_zn(b, c0), m_ext, cout, k_total, True, name)
    got = ref.read_nz(c, m_ext, cout)
    expect = _torch_conv(x, w, pads, (sw, sh), (dw, dh)).reshape(cout, m_total).T[:m_ext]
    np.testing.assert_array_equal(got, expect.astype(np.float32))


@pytest.mark.parametrize("case", CONV_CASES[:2], ids=["fp16", "fp32"])
def test_load3dv2_blocks_match_torch_unfold(case):
    """mStartPt/kStartPt sub-blocks into L0A (plain and enTranspose) and L0B against torch.nn.functional.unfold."""
    dt, cin, c0, l1h, l1w, pads, sw, sh, fw, fh, dw, dh, _ = case
    x = small_ints((cin, l1h, l1w), dt, -20, 20)
    src = ref.make_nc1hwc0(x, c0)
    elem = np.dtype(dt).itemsize
    c1 = ceil_div(cin, c0)
    xt = F.pad(torch.from_numpy(x.astype(np.float64))[None], (pads[0], pads[1], pads[2], pads[3]))
    unf = F.unfold(xt, (fh, fw), dilation=(dh, dw), stride=(sh, sw))[0].numpy()  # (cin*fh*fw, L), c-major
    h_out, w_out = ref.load3d_out_hw(l1h, l1w, pads, sw, sh, fw, fh, dw, dh)
    k_total = c1 * fh * fw * c0
    full = np.zeros((h_out * w_out, k_total))
    for kk in range(k_total):
        blk, cc = divmod(kk, c0)
        c1i, khw = divmod(blk, fh * fw)
        ch = c1i * c0 + cc
        if ch < cin:
            full[:, kk] = unf[ch * fh * fw + khw, :]
    m_start, m_ext = 16, 16
    k_start = c0 * 3
    k_ext = c0 * 3 if elem == 4 else c0 * 2  # fp32: 24 columns = not a multiple of 16
    blk = full[m_start:m_start + m_ext, k_start:k_start + k_ext]
    args = (l1h, l1w, pads, c1 * c0, k_ext, m_ext, k_start, m_start, sw, sh, fw, fh, dw, dh)
    size = 4096
    # L0A, no transpose: ZZ of the block
    a = ref.ref_load3dv2(np.full(size, SENTINEL, dt), src, 0, 0, *args, False, 0, "L0A", elem)
    zz = ref.make_zz(blk.astype(dt), c0)
    np.testing.assert_array_equal(a[:zz.size], zz)
    assert np.all(a[zz.size:] == np.array(SENTINEL, dt))
    # L0A, enTranspose: ZZ (16 x C0 fractals) of the transposed block; fp32 padding rows not written
    at = ref.ref_load3dv2(np.full(size, SENTINEL, dt), src, 0, 0, *args, True, 0, "L0A", elem)
    zz_t = ref.make_zz(blk.T.astype(dt), c0)
    written = ref.make_zz(np.ones(blk.T.shape, np.float32), c0) == 1
    np.testing.assert_array_equal(at[:zz_t.size][written], zz_t[written])
    assert np.all(at[:zz_t.size][~written] == np.array(SENTINEL, dt))
    assert (~written).any() == (elem == 4)
    # L0B ("always transposed"): ZN of the block itself (img2col rows become K), N padding columns not written
    bb = ref.ref_load3dv2(np.full(size, SENTINEL, dt), src, 0, 0, *args, False, 0, "L0B", elem)
    zn = ref.make_zn(blk.astype(dt), c0)
    written = ref.make_zn(np.ones(blk.shape, np.float32), c0) == 1
    np.testing.assert_array_equal(bb[:zn.size][written], zn[written])
    assert np.all(bb[:zn.size][~written] == np.array(SENTINEL, dt))
    assert np.all(bb[zn.size:] == np.array(SENTINEL, dt))


def test_load3dv2_l0b_fp32_weight_path_like_loadtob2pro():
    """dx fp32 weight path: the L1 'fmap' is [cin1][hk*wk][cout_pad16][cin0=8] (H = 1, W = hkwk*cout_pad);
    each K fractal row (8 couts of one kernel tap) is one Load3Dv2 with mExtension = 16 written at
    i * alignN * 8, so every instruction also writes the next 8-row fractal row, which the next one overwrites.
    Mmad with the resulting ZN must equal A @ W_sel (180-degree rotated taps, as the kernel does)."""
    cout, cin, hk, wk = 16, 24, 2, 2
    c0, cout_pad = 8, 16
    w = small_ints((cout, cin, hk, wk), np.float32, -5, 6)
    l1 = np.zeros(ceil_div(cin, c0) * hk * wk * cout_pad * c0, np.float32)
    for co in range(cout):
        for ci in range(cin):
            for kh in range(hk):
                for kw in range(wk):
                    wpos = (kh * wk + kw) * cout_pad + co
                    l1[((ci // c0) * hk * wk * cout_pad + wpos) * c0 + ci % c0] = w[co, ci, kh, kw]
    n = cin  # 24: N padding 24..31 must stay untouched
    align_n = 32
    k_rows = hk * wk * (cout // 8)  # K = (cout1_8, kh, kw, cout0_8): 8 rows of 8
    l0b = np.full((k_rows + 1) * align_n * 8, SENTINEL, np.float32)
    order = []
    for i in range(k_rows):
        cout_blk, tap = divmod(i, hk * wk)
        tap_rev = hk * wk - 1 - tap  # rotate the kernel by 180 degrees
        m_start = tap_rev * cout_pad + cout_blk * 8
        order.append((cout_blk, tap_rev))
        l0b = ref.ref_load3dv2(l0b, l1, i * align_n * 8, 0, 1, hk * wk * cout_pad, [0, 0, 0, 0], cin, n, 16, 0,
                               m_start, 1, 1, 1, 1, 1, 1, True, 0, "L0B", 4)
    # the last instruction wrote one extra fractal row past K (the kernel reserves baseK + C0 for this)
    assert not np.all(l0b[k_rows * align_n * 8:] == SENTINEL)
    w_sel = np.zeros((k_rows * 8, n), np.float32)
    for i, (cout_blk, tap_rev) in enumerate(order):
        kh, kw = divmod(tap_rev, wk)
        for r in range(8):
            w_sel[i * 8 + r, :] = w[cout_blk * 8 + r, :, kh, kw]
    rows = l0b[:k_rows * align_n * 8].reshape(k_rows, align_n // 16, 16, 8)
    assert np.all(rows[:, 1, 8:, :] == SENTINEL)  # N columns 24..31 never written
    m, k = 20, k_rows * 8
    a = small_ints((m, k), np.float32, -5, 6)
    c = ref.ref_mmad(np.zeros(32 * 32, np.float32), ref.make_zz(a, 8), l0b, m, n, k, True, "float32")
    np.testing.assert_array_equal(ref.read_nz(c, m, n), a @ w_sel)


def test_load3dv2_nop_and_bad_params():
    src = np.ones(512, np.float16)
    dst = np.zeros(512, np.float16)
    base = dict(l1H=2, l1W=8, padList=[0, 0, 0, 0], channelSize=16, kExtension=16, mExtension=16, kStartPt=0,
                mStartPt=0, strideW=1, strideH=1, filterW=1, filterH=1, dilationFilterW=1, dilationFilterH=1,
                enTranspose=False, padValue=0, target="L0A", elem_bytes=2)
    out = ref.ref_load3dv2(dst, src, 0, 0, **base)
    assert np.all(out[:256] == 1) and np.all(out[256:] == 0)
    for key in ("l1H", "l1W", "channelSize", "kExtension", "mExtension", "filterW"):
        assert np.all(ref.ref_load3dv2(dst, src, 0, 0, **{**base, key: 0}) == 0)
    for bad in ({"channelSize": 20}, {"mExtension": 8}, {"kStartPt": 8}, {"kStartPt": 16}, {"strideW": 64},
                {"padList": [0, 0, 256, 0]}, {"target": "L0C"}, {"target": "L0B", "elem_bytes": 1}):
        with pytest.raises(ValueError):
            ref.ref_load3dv2(dst, src, 0, 0, **{**base, **bad})
    # rows past the 2x8 window grid follow the coordinate formula: ho = 2 is outside the fmap -> padValue
    past = ref.ref_load3dv2(dst, src, 0, 0, **{**base, "mStartPt": 8, "padValue": 5})
    assert np.all(past[:128] == 1) and np.all(past[128:256] == 5)
    # b32 into L0B: one 8-row K fractal (mExtension = 8) is legal; 16 x 8 = 128 elements written
    src32 = np.ones(512, np.float32)
    b8 = ref.ref_load3dv2(np.zeros(512, np.float32), src32, 0, 0, **{**base, "channelSize": 16, "mExtension": 8,
                                                                      "target": "L0B", "elem_bytes": 4})
    assert np.all(b8[:128] == 1) and np.all(b8[128:] == 0)


def test_load3dv2_pad_value_fills_padding():
    x = small_ints((16, 2, 2), np.float16, 1, 5)
    src = ref.make_nc1hwc0(x, 16)
    # 4x4 window grid over a 2x2 fmap with one pixel of padding all round: 12 of the 16 rows are padding
    out = ref.ref_load3dv2(np.zeros(256, np.float16), src, 0, 0, 2, 2, [1, 1, 1, 1], 16, 16, 16, 0, 0, 1, 1, 1, 1,
                           1, 1, False, 7.0, "L0A", 2)
    rows = out.reshape(16, 16)
    for mm in range(16):
        ho, wo = divmod(mm, 4)
        if 1 <= ho <= 2 and 1 <= wo <= 2:
            np.testing.assert_array_equal(rows[mm], x[:, ho - 1, wo - 1])
        else:
            assert np.all(rows[mm] == 7)


# ------------------------------------------------------------------------------------------------ Mmad
def test_mmad_unaligned_mnk_ignores_k_padding_garbage():
    m, k, n = 30, 70, 40  # the Mmad.md example
    a = small_ints((m, k), np.float16)
    b = small_ints((k, n), np.float16)
    a2 = ref.make_zz(a, 16)
    b2 = ref.make_zn(b, 16)
    # poison every padding position of L0A/L0B (K padding must never contribute)
    a2[ref.make_zz(np.ones((m, k), np.float32), 16) == 0] = 1000
    b2[ref.make_zn(np.ones((k, n), np.float32), 16) == 0] = 1000
    c = ref.ref_mmad(np.full(3 * 32 * 16, SENTINEL, np.float32), a2, b2, m, n, k, True, "float16")
    np.testing.assert_array_equal(ref.read_nz(c, m, n), a.astype(np.float32) @ b.astype(np.float32))
    assert not np.any(c == SENTINEL)  # whole 16x16 fractals are produced


def test_mmad_accumulate_and_bias():
    m, k, n = 16, 32, 16
    a = small_ints((m, k), BF16)
    b = small_ints((k, n), BF16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c = ref.ref_mmad(np.zeros(256, np.float32), ref.make_zz(a[:, :16], 16), ref.make_zn(b[:16], 16), m, n, 16,
                     True, "bfloat16")
    c = ref.ref_mmad(c, ref.make_zz(a[:, 16:], 16), ref.make_zn(b[16:], 16), m, n, 16, False, "bfloat16")
    np.testing.assert_array_equal(ref.read_nz(c, m, n), a32 @ b32)
    bias = np.arange(16, dtype=np.float32)
    cb = ref.ref_mmad(np.full(256, SENTINEL, np.float32), ref.make_zz(a, 16), ref.make_zn(b, 16), m, n, k, False,
                      "bfloat16", cmatrixSource=True, bias=bias)
    np.testing.assert_array_equal(ref.read_nz(cb, m, n), a32 @ b32 + bias)
    assert np.all(ref.ref_mmad(c, ref.make_zz(a, 16), ref.make_zn(b, 16), 0, n, k, True, "bfloat16") == c)


def test_mmad_fp32_kdirectionalign():
    m, k, n = 16, 36, 16  # K-方向对齐 doc: K=36 -> stored aligned to 48, 5 of 6 fractals read
    a = small_ints((m, k), np.float32)
    b = small_ints((k, n), np.float32)
    a2 = ref.make_zz(a, 8, k1_stride=6)
    a2[5 * 128:6 * 128] = 1000  # the 6th (padding) fractal of the row must not be read
    c = ref.ref_mmad(np.zeros(256, np.float32), a2, ref.make_zn(b, 8), m, n, k, True, "float32",
                     kDirectionAlign=True)
    np.testing.assert_array_equal(ref.read_nz(c, m, n), a @ b)
    c_plain = ref.ref_mmad(np.zeros(256, np.float32), ref.make_zz(a, 8), ref.make_zn(b, 8), m, n, k, True,
                           "float32")
    np.testing.assert_array_equal(ref.read_nz(c_plain, m, n), a @ b)


def test_mmad_gemv_reads_a_as_vector():
    k, n = 40, 20
    vec = small_ints((k,), np.float16)
    b = small_ints((k, n), np.float16)
    a2 = np.zeros(3 * 256, np.float16)
    a2[:k] = vec
    c = ref.ref_mmad(np.full(2 * 256, SENTINEL, np.float32), a2, ref.make_zn(b, 16), 1, n, k, True, "float16")
    np.testing.assert_array_equal(ref.read_nz(c, 1, n)[0], vec.astype(np.float32) @ b.astype(np.float32))
    assert c[16] == SENTINEL  # rows 1..15 of the C fractal are not written in GEMV mode


def test_hf32_rounding_and_mmad():
    one = 1.0
    assert ref.round_fp32_mantissa(one + 2 ** -12, 11, "NEAREST_EVEN") == one  # tie -> even
    assert ref.round_fp32_mantissa(one + 2 ** -12, 11, "NEAREST_AWAY") == one + 2 ** -11
    assert ref.round_fp32_mantissa(one + 3 * 2 ** -12, 11, "NEAREST_EVEN") == one + 2 ** -10
    assert ref.round_fp32_mantissa(-(one + 2 ** -12 + 2 ** -20), 11) == -(one + 2 ** -11)
    assert ref.round_fp32_mantissa(one + 2 ** -11, 10, "NEAREST_EVEN") == one  # 950: 10 bits
    assert np.isinf(ref.round_fp32_mantissa(np.inf, 11))
    a = np.array([[1 + 2 ** -12 + 2 ** -20] * 8] + [[0.0] * 8] * 15, np.float32)
    b = np.eye(8, 16, dtype=np.float32)
    c = ref.ref_mmad(np.zeros(256, np.float32), ref.make_zz(a, 8), ref.make_zn(b, 8), 16, 16, 8, True, "float32",
                     hf32=True)
    assert ref.read_nz(c, 1, 8)[0, 0] == np.float32(1 + 2 ** -11)
    c = ref.ref_mmad(np.zeros(256, np.float32), ref.make_zz(a, 8), ref.make_zn(b, 8), 16, 16, 8, True, "float32")
    assert ref.read_nz(c, 1, 8)[0, 0] == np.float32(1 + 2 ** -12 + 2 ** -20)


def test_mmad_tolerance_covers_fp32_accumulation():
    a = RNG.standard_normal((16, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 16)).astype(np.float32)
    c = ref.ref_mmad(np.zeros(256, np.float32), ref.make_zz(a, 8), ref.make_zn(b, 8), 16, 16, 64, True, "float32")
    fp32_sequential = np.zeros((16, 16), np.float32)
    for kk in range(64):
        fp32_sequential = (fp32_sequential + np.outer(a[:, kk], b[kk, :]).astype(np.float32)).astype(np.float32)
    assert np.all(np.abs(ref.read_nz(c, 16, 16) - fp32_sequential) <= ref.mmad_tolerance(a, b))


# ------------------------------------------------------------------------------------------------ Fixpipe
def test_fixpipe_nz2nd_known_matrix():
    m, n = 20, 40
    cm = RNG.standard_normal((m, n)).astype(np.float32)
    src = np.concatenate([np.zeros(64, np.float32), ref.make_nz(cm)])
    out = ref.ref_fixpipe(np.full(m * 48 + 8, SENTINEL, np.float32), src, 8, 64, n, m, 32, 48, "NoQuant", False,
                          True, np.float32)
    grid = out[8:].reshape(m, 48)
    np.testing.assert_array_equal(grid[:, :n], cm)
    assert np.all(grid[:, n:] == SENTINEL) and np.all(out[:8] == SENTINEL)
    relu = ref.ref_fixpipe(np.zeros(m * n, np.float32), src, 0, 64, n, m, 32, n, "NoQuant", False, True,
                           np.float32, reluEn=True)
    np.testing.assert_array_equal(relu.reshape(m, n), np.maximum(cm, 0))


def test_fixpipe_nz2nd_ndnum_stride_units():
    m, n = 16, 16
    c0m = RNG.standard_normal((m, n)).astype(np.float32)
    c1m = RNG.standard_normal((m, n)).astype(np.float32)
    src = np.zeros(256 * 3, np.float32)
    src[:256] = ref.make_nz(c0m)
    src[512:] = ref.make_nz(c1m)  # srcNdStride = 2 -> 2 KB apart for fp32 (unit 16*C0_Size = 1 KB)
    out = ref.ref_fixpipe(np.zeros(600, np.float32), src, 0, 0, n, m, 16, n, "NoQuant", False, True, np.float32,
                          ndNum=2, srcNdStride=2, dstNdStride=300)
    np.testing.assert_array_equal(out[:256].reshape(m, n), c0m)
    np.testing.assert_array_equal(out[300:556].reshape(m, n), c1m)


def test_fixpipe_nz_output_fp16_dststride_in_32_bytes():
    m, n = 24, 32
    cm = small_ints((m, n), np.float32, -100, 100)
    src = ref.make_nz(cm)
    dst_stride = 40  # blocks of 32 B = 16 half: Z blocks 640 elements apart
    out = ref.ref_fixpipe(np.full(2 * 640, SENTINEL, np.float16), src, 0, 0, n, m, 32, dst_stride, "F322F16", False,
                          False, np.float16)
    for j1 in range(2):
        blk = out[j1 * 640:j1 * 640 + m * 16].reshape(m, 16)
        np.testing.assert_array_equal(blk, cm[:, j1 * 16:(j1 + 1) * 16].astype(np.float16))
        assert np.all(out[j1 * 640 + m * 16:(j1 + 1) * 640] == np.float16(SENTINEL))
    with pytest.raises(ValueError):
        ref.ref_fixpipe(np.zeros(2048, np.float16), src, 0, 0, 24, m, 32, 40, "F322F16", False, False, np.float16)


def test_fixpipe_channel_split_matches_official_golden_formula():
    # fixpipe_l0c2gm scenario 7: golden = C.reshape(M/16, 16, N/8, 8).transpose(2, 0, 1, 3), dstStride = M
    m, n = 32, 24
    cm = RNG.standard_normal((m, n)).astype(np.float32)
    out = ref.ref_fixpipe(np.zeros(m * n, np.float32), ref.make_nz(cm), 0, 0, n, m, 32, m, "NoQuant", True, False,
                          np.float32)
    golden = cm.reshape(m // 16, 16, n // 8, 8).transpose(2, 0, 1, 3)
    np.testing.assert_array_equal(out, golden.ravel())
    with pytest.raises(ValueError):
        ref.ref_fixpipe(np.zeros(m * n, np.float16), ref.make_nz(cm), 0, 0, n, m, 32, m, "F322F16", True, False,
                        np.float16)


def test_fixpipe_cast_is_round_half_even():
    vals = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 70000.0, -1e6] + [0.0] * 10,
                    np.float32)
    src = ref.make_nz(vals.reshape(1, 16))
    f16 = ref.ref_fixpipe(np.zeros(16, np.float16), src, 0, 0, 16, 1, 16, 16, "F322F16", False, True, np.float16)
    assert f16[0] == 1.0 and f16[1] == np.float16(1 + 2 ** -9)
    assert np.isinf(f16[4]) and np.isinf(f16[5])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(f16, vals.astype(np.float16))
    sat = ref.ref_fixpipe(np.zeros(16, np.float16), src, 0, 0, 16, 1, 16, 16, "F322F16", False, True, np.float16,
                          saturate=True)
    assert sat[4] == 65504 and sat[5] == -65504
    bf = ref.ref_fixpipe(np.zeros(16, BF16), src, 0, 0, 16, 1, 16, 16, "F322BF16", False, True, BF16)
    assert float(bf[2]) == 1.0 and float(bf[3]) == 1 + 2 ** -6
    np.testing.assert_array_equal(bf.astype(np.float32), vals.astype(BF16).astype(np.float32))


def test_fixpipe_nop_and_dtype_checks():
    src = np.ones(256, np.float32)
    dst = np.zeros(256, np.float32)
    assert np.all(ref.ref_fixpipe(dst, src, 0, 0, 0, 16, 16, 16, "NoQuant", False, True, np.float32) == 0)
    assert np.all(ref.ref_fixpipe(dst, src, 0, 0, 16, 0, 16, 16, "NoQuant", False, True, np.float32) == 0)
    with pytest.raises(ValueError):
        ref.ref_fixpipe(dst, src, 0, 0, 16, 16, 16, 16, "F322F16", False, True, np.float32)
