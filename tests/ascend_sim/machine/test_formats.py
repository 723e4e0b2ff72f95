"""Tests of ascend_sim.machine.formats: round trips, loop-based index-map references, padding, groups, bad input."""
from __future__ import annotations

import json
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import DATA_DIR

from ascend_sim.machine import formats as F

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32)]
C0 = {np.dtype(np.float16): 16, BF16: 16, np.dtype(np.float32): 8}
VECTORS = DATA_DIR / "conv3d_dx_tiling_vectors_a2.json"

SETTINGS = settings(max_examples=100, deadline=None)


def rand(shape, dtype, seed=0):
    """Random non-zero values (so zero means padding), exactly representable in every dtype under test."""
    rng = np.random.default_rng(seed)
    vals = rng.integers(1, 200, size=shape) * rng.choice([-1, 1], size=shape)
    return (vals / 8.0).astype(dtype)


def unique(shape, dtype=np.float32):
    """1, 2, 3, ... (exact in float32 for the sizes used here)."""
    return (np.arange(math.prod(shape)) + 1).reshape(shape).astype(dtype)


def ceil_div(a, b):
    return -(-a // b)


# ----------------------------------------------------------------------------------------------------------------------
# Independent loop-based references, written straight from the definitions
# ----------------------------------------------------------------------------------------------------------------------

def ref_ncdhw_to_ndc1hwc0(x, c0):
    n, c, d, h, w = x.shape
    y = np.zeros((n, d, ceil_div(c, c0), h, w, c0), dtype=x.dtype)
    for nn, cc, dd, hh, ww in np.ndindex(*x.shape):
        y[nn, dd, cc // c0, hh, ww, cc % c0] = x[nn, cc, dd, hh, ww]
    return y


def ref_calrealg(groups, cin_ori, cout_ori, c0):
    """CalRealG as written in conv_backprop_input_context_utils.cpp (mag, real_g, cin1 of the weight, N1)."""
    dx_ext = math.lcm(cin_ori, c0) // cin_ori
    dy_ext = math.lcm(cout_ori, 16) // cout_ori
    mag = min(math.lcm(dx_ext, dy_ext), groups)
    real_g = ceil_div(groups, mag)
    return mag, real_g, ceil_div(mag * cin_ori, c0), ceil_div(mag * cout_ori, 16)


def ref_fractal_z_3d(w, groups, c0):
    """Element by element: (co, ci, kd, kh, kw) -> [row, cout'//16, cout'%16, cin'%C0]."""
    cout, cin_ori, kd_, kh_, kw_ = w.shape
    cout_ori = cout // groups
    mag, real_g, cin1g, n1 = ref_calrealg(groups, cin_ori, cout_ori, c0)
    z = np.zeros((real_g * kd_ * cin1g * kh_ * kw_, n1, 16, c0), dtype=w.dtype)
    for co, ci, kd, kh, kw in np.ndindex(*w.shape):
        g = co // cout_ori
        big_g, e = g // mag, g % mag
        cin_p = e * cin_ori + ci
        cout_p = e * cout_ori + co % cout_ori
        row = ((big_g * kd_ + kd) * cin1g + cin_p // c0) * kh_ * kw_ + kh * kw_ + kw
        z[row, cout_p // 16, cout_p % 16, cin_p % c0] = w[co, ci, kd, kh, kw]
    return z


def ref_golden_rule(w, groups, c0):
    """The golden.py rule, one group at a time: a (real_g, kD, cin1G, kH, kW, coutG, C0) array, then flattened."""
    cout, cin_ori, kd_, kh_, kw_ = w.shape
    cout_ori = cout // groups
    mag, real_g, cin1g, n1 = ref_calrealg(groups, cin_ori, cout_ori, c0)
    wg = np.zeros((real_g, kd_, cin1g, kh_, kw_, n1 * 16, c0), dtype=w.dtype)
    for g in range(groups):
        e = g % mag
        for ci in range(cin_ori):
            for co in range(cout_ori):
                dst_cin, dst_cout = e * cin_ori + ci, e * cout_ori + co
                wg[g // mag, :, dst_cin // c0, :, :, dst_cout, dst_cin % c0] = w[g * cout_ori + co, ci]
    return wg.reshape(real_g * kd_ * cin1g * kh_ * kw_, n1, 16, c0)


def ref_nd_to_nz(a, c0):
    rows, cols = a.shape
    z = np.zeros((ceil_div(cols, c0), ceil_div(rows, 16) * 16, c0), dtype=a.dtype)
    for r, c in np.ndindex(*a.shape):
        z[c // c0, r, c % c0] = a[r, c]
    return z


def ref_nd_to_zz(a, c0):
    rows, cols = a.shape
    z = np.zeros((ceil_div(rows, 16), ceil_div(cols, c0), 16, c0), dtype=a.dtype)
    for r, c in np.ndindex(*a.shape):
        z[r // 16, c // c0, r % 16, c % c0] = a[r, c]
    return z


def ref_nd_to_zn(b, k0):
    k, n = b.shape
    z = np.zeros((ceil_div(k, k0), ceil_div(n, 16), 16, k0), dtype=b.dtype)
    for kk, nn in np.ndindex(*b.shape):
        z[kk // k0, nn // 16, nn % 16, kk % k0] = b[kk, nn]
    return z


# ----------------------------------------------------------------------------------------------------------------------
# NDC1HWC0
# ----------------------------------------------------------------------------------------------------------------------

dtypes = st.sampled_from(DTYPES)
small = st.integers(1, 3)


@SETTINGS
@given(dtype=dtypes, n=small, c=st.integers(1, 40), d=small, h=small, w=small, seed=st.integers(0, 2**16))
def test_ndc1hwc0_matches_reference_and_round_trips(dtype, n, c, d, h, w, seed):
    x = rand((n, c, d, h, w), dtype, seed)
    y = F.ncdhw_to_ndc1hwc0(x)
    c0 = C0[dtype]
    assert y.dtype == dtype and y.shape == (n, d, ceil_div(c, c0), h, w, c0)
    np.testing.assert_array_equal(y, ref_ncdhw_to_ndc1hwc0(x, c0))
    np.testing.assert_array_equal(F.ndc1hwc0_to_ncdhw(y, c), x)
    # padded channels are zero
    flat = y.transpose(0, 2, 5, 1, 3, 4).reshape(n, -1, d, h, w)
    assert not flat[:, c:].any()
    # NDHWC path gives the same NDC1HWC0 and inverts
    x_ndhwc = x.transpose(0, 2, 3, 4, 1)
    np.testing.assert_array_equal(F.ndhwc_to_ndc1hwc0(x_ndhwc), y)
    np.testing.assert_array_equal(F.ndc1hwc0_to_ndhwc(y, c), x_ndhwc)


def test_ndc1hwc0_hand_checked_elements():
    x = unique((2, 20, 3, 4, 5))  # float32: C0 = 8, C1 = 3
    y = F.ncdhw_to_ndc1hwc0(x)
    assert y.shape == (2, 3, 3, 4, 5, 8)
    for (n, c, d, h, w) in [(0, 0, 0, 0, 0), (1, 19, 2, 3, 4), (0, 9, 1, 2, 3), (1, 8, 0, 1, 0)]:
        assert y[n, d, c // 8, h, w, c % 8] == x[n, c, d, h, w]
    assert y[1, 2, 2, 3, 4, 4] == 0 and y[0, 0, 2, 0, 0, 7] == 0  # channels 20..23 are padding
    # fp16 with an explicit C0
    y16 = F.ncdhw_to_ndc1hwc0(x.astype(np.float16), c0=4)
    assert y16.shape == (2, 3, 5, 4, 5, 4) and y16[1, 2, 4, 3, 4, 3] == x[1, 19, 2, 3, 4]


def test_c0_is_one_data_block():
    for dtype in DTYPES:
        y = F.ncdhw_to_ndc1hwc0(np.ones((1, 3, 1, 1, 1), dtype))
        assert y.shape[-1] * dtype.itemsize == 32


# ----------------------------------------------------------------------------------------------------------------------
# group_enlarge (CalRealG)
# ----------------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("groups,cin,cout,dtype,expected", [
    # (mag, real_g, cin1G, cout1G, n1)
    (1, 17, 15, "float16", (1, 1, 2, 1, 1)),
    (1, 512, 512, "float32", (1, 1, 64, 64, 32)),          # fp32 groups=1: cout1G in C0=8 units, N1 in 16s
    (320, 320, 320, "bfloat16", (16, 20, 1, 1, 1)),        # the UT vector: g=320, 1 in / 1 out per group
    (20, 60, 60, "float16", (16, 2, 3, 3, 3)),             # mag > 1 with a partial last super-group
    (4, 32, 64, "float32", (1, 4, 1, 2, 1)),               # fp32, real_g > 1: cout1G doubled (C0 units)
    (2, 8, 8, "float32", (2, 1, 1, 1, 1)),                 # fp32, real_g == 1: plain C1 = ceil(8/8)
    (6, 6, 12, "float32", (6, 1, 1, 2, 1)),                # depthwise x2, fp32
])
def test_group_enlarge_known_cases(groups, cin, cout, dtype, expected):
    ge = F.group_enlarge(groups, cin, cout, dtype)
    assert (ge.mag, ge.real_g, ge.cin1G, ge.cout1G, ge.n1) == expected
    assert ge.cin_per_group * groups == cin and ge.cout_per_group * groups == cout


@SETTINGS
@given(dtype=dtypes, groups=st.integers(1, 40), cin_ori=st.integers(1, 20), cout_ori=st.integers(1, 20))
def test_group_enlarge_rule(dtype, groups, cin_ori, cout_ori):
    c0 = C0[dtype]
    ge = F.group_enlarge(groups, groups * cin_ori, groups * cout_ori, dtype)
    mag, real_g, cin1g, n1 = ref_calrealg(groups, cin_ori, cout_ori, c0)
    assert (ge.mag, ge.real_g, ge.cin1G, ge.n1) == (mag, real_g, cin1g, n1)
    if real_g > 1:
        assert ge.cout1G == n1 * (16 // c0)
    else:
        assert ge.cout1G == ceil_div(groups * cout_ori, c0)
    # a super-group holds whole fractal columns for cin and whole 16-blocks for cout unless capped by groups
    if mag < groups:
        assert (mag * cin_ori) % c0 == 0 and (mag * cout_ori) % 16 == 0


def test_group_enlarge_and_shape_against_real_vectors():
    vectors = json.loads(VECTORS.read_text())["vectors"]
    assert vectors
    for v in vectors:
        f, t, g = v["filter_shape"]["normalized"], v["tiling"], v["groups"]
        dtype = v["dtype"]
        ge = F.group_enlarge(g, f["Cin_per_group"] * g, f["Cout"], dtype)
        assert (ge.cout1G, ge.cin1G, ge.real_g) == (t["cout1G"], t["cin1G"], t["group"]), v["uid"]
        shape = F.fractal_z_3d_shape(f["Cout"], f["Cin_per_group"], (f["kD"], f["kH"], f["kW"]), g, dtype)
        assert list(shape) == v["filter_shape"]["storage"], v["uid"]
        assert v["dy_shape"]["storage"][-1] == shape[-1] == t["c0"]


# ----------------------------------------------------------------------------------------------------------------------
# FRACTAL_Z_3D
# ----------------------------------------------------------------------------------------------------------------------

@st.composite
def grouped_filters(draw):
    dtype = draw(dtypes)
    groups = draw(st.sampled_from([1, 1, 2, 3, 4, 5, 8, 16, 20, 33]))
    cin_ori = draw(st.integers(1, 20 if groups <= 4 else 3))
    cout_ori = draw(st.integers(1, 20 if groups <= 4 else 3))
    kernel = tuple(draw(st.integers(1, 2)) for _ in range(3))
    seed = draw(st.integers(0, 2**16))
    return dtype, groups, cin_ori, cout_ori, kernel, seed


@SETTINGS
@given(case=grouped_filters())
def test_fractal_z_3d_matches_references_and_round_trips(case):
    dtype, groups, cin_ori, cout_ori, kernel, seed = case
    c0 = C0[dtype]
    cout = groups * cout_ori
    w = rand((cout, cin_ori) + kernel, dtype, seed)
    z = F.filter_to_fractal_z_3d(w, groups)
    assert z.dtype == dtype
    assert z.shape == F.fractal_z_3d_shape(cout, cin_ori, kernel, groups, dtype)
    ref = ref_fractal_z_3d(w, groups, c0)
    np.testing.assert_array_equal(z, ref)
    np.testing.assert_array_equal(z, ref_golden_rule(w, groups, c0))
    # every input value appears exactly once; everything else (padding, off-diagonal blocks) is zero
    assert np.count_nonzero(z) == w.size
    np.testing.assert_array_equal(F.fractal_z_3d_to_filter(z, cout, cin_ori, kernel, groups), w)


@SETTINGS
@given(case=grouped_filters(), fmt=st.sampled_from(F.FILTER_FORMATS))
def test_fractal_z_3d_from_every_filter_format(case, fmt):
    dtype, groups, cin_ori, cout_ori, kernel, seed = case
    cout = groups * cout_ori
    w = rand((cout, cin_ori) + kernel, dtype, seed)
    w_fmt = F.filter_from_ncdhw(w, fmt)
    np.testing.assert_array_equal(F.filter_to_ncdhw(w_fmt, fmt), w)
    z = F.filter_to_fractal_z_3d(w_fmt, groups, filter_format=fmt)
    np.testing.assert_array_equal(z, F.filter_to_fractal_z_3d(w, groups))
    back = F.fractal_z_3d_to_filter(z, cout, cin_ori, kernel, groups, filter_format=fmt)
    np.testing.assert_array_equal(back, w_fmt)


def test_filter_format_axes():
    w = unique((5, 3, 2, 4, 6))  # NCDHW (Cout, Cin/g, kD, kH, kW)
    ndhwc = F.filter_from_ncdhw(w, "NDHWC")
    dhwcn = F.filter_from_ncdhw(w, "DHWCN")
    assert ndhwc.shape == (5, 2, 4, 6, 3) and dhwcn.shape == (2, 4, 6, 3, 5)
    assert ndhwc[4, 1, 3, 5, 2] == w[4, 2, 1, 3, 5] == dhwcn[1, 3, 5, 2, 4]


def test_fractal_z_3d_hand_checked_groups_1():
    # fp16, Cout=20 (N1=2), Cin=18 (C1=2), kernel (2, 1, 3)
    w = unique((20, 18, 2, 1, 3)).astype(np.float16)
    z = F.filter_to_fractal_z_3d(w)
    assert z.shape == (2 * 2 * 1 * 3, 2, 16, 16)
    # (co, ci, kd, kh, kw) -> row ((kd*C1 + ci//16)*kH + kh)*kW + kw, [co//16, co%16, ci%16]
    assert z[(1 * 2 + 1) * 3 + 2, 1, 3, 1] == w[19, 17, 1, 0, 2]
    assert z[0, 0, 0, 0] == w[0, 0, 0, 0, 0]
    assert z[(0 * 2 + 1) * 3 + 1, 0, 5, 0] == w[5, 16, 0, 0, 1]
    assert not z[:, 1, 4:].any()                    # cout 20..31 padding
    assert not z[3:6, :, :, 2:].any()               # cin 18..31 padding (kd=0, C1=1 rows)


def test_fractal_z_3d_fp32_cout_padding():
    # fp32: C0 = 8 on cin, N0 = 16 on cout -> cout 12 padded to 16; cin 10 padded to 16 (C1 = 2)
    w = unique((12, 10, 1, 2, 2))
    z = F.filter_to_fractal_z_3d(w)
    assert z.shape == (1 * 2 * 2 * 2, 1, 16, 8)
    assert not z[:, :, 12:, :].any()
    assert z[(1 * 2 + 1) * 2 + 0, 0, 11, 1] == w[11, 9, 0, 1, 0]
    assert not z[4:, :, :, 2:].any()                # cin 10..15
    # the kernel's per-row stride: HkWk * C0 * alignedCout with alignedCout = ceil(cout1G*8/16)*16
    ge = F.group_enlarge(1, 10, 12, np.float32)
    aligned_cout = ceil_div(ge.cout1G * 8, 16) * 16
    assert z.shape[1] * z.shape[2] == aligned_cout == 16


def test_fractal_z_3d_super_group_blocks():
    # fp16, groups=20, 3 in / 3 out per group: mag=16, real_g=2, super-group 1 holds groups 16..19 only
    groups, cin_ori, cout_ori = 20, 3, 3
    w = unique((groups * cout_ori, cin_ori, 1, 1, 1)).astype(np.float16)
    z = F.filter_to_fractal_z_3d(w, groups)
    assert z.shape == (2 * 3, 3, 16, 16)
    dense = z.reshape(2, 3, 3 * 16, 16).transpose(0, 2, 1, 3).reshape(2, 48, 48)  # [G, cout', cin']
    for big_g in range(2):
        for e in range(16):
            g = big_g * 16 + e
            block = dense[big_g, e * 3:(e + 1) * 3, e * 3:(e + 1) * 3]
            if g < groups:
                np.testing.assert_array_equal(block, w[g * 3:(g + 1) * 3, :, 0, 0, 0])
            else:
                assert not block.any()
    mask = np.zeros((48, 48), bool)
    for e in range(16):
        mask[e * 3:(e + 1) * 3, e * 3:(e + 1) * 3] = True
    assert not dense[:, ~mask].any()                # off-diagonal blocks are zero


def test_fractal_z_3d_depthwise():
    for dtype in DTYPES:
        c = 24
        w = rand((c, 1, 1, 2, 1), dtype)
        z = F.filter_to_fractal_z_3d(w, groups=c)
        ge = F.group_enlarge(c, c, c, dtype)
        assert (ge.mag, ge.real_g) == (16, 2)  # lcm(C0, 16) = 16 single channels per super-group
        np.testing.assert_array_equal(z, ref_fractal_z_3d(w, c, C0[dtype]))
        np.testing.assert_array_equal(F.fractal_z_3d_to_filter(z, c, 1, (1, 2, 1), c), w)


# ----------------------------------------------------------------------------------------------------------------------
# ND <-> NZ / ZZ / ZN
# ----------------------------------------------------------------------------------------------------------------------

@SETTINGS
@given(dtype=dtypes, rows=st.integers(1, 40), cols=st.integers(1, 40), seed=st.integers(0, 2**16))
def test_matrix_layouts(dtype, rows, cols, seed):
    c0 = C0[dtype]
    a = rand((rows, cols), dtype, seed)
    nz = F.nd_to_nz(a)
    np.testing.assert_array_equal(nz, ref_nd_to_nz(a, c0))
    np.testing.assert_array_equal(F.nz_to_nd(nz, rows, cols), a)
    zz = F.nd_to_zz(a)
    np.testing.assert_array_equal(zz, ref_nd_to_zz(a, c0))
    np.testing.assert_array_equal(F.zz_to_nd(zz, rows, cols), a)
    zn = F.nd_to_zn(a)
    np.testing.assert_array_equal(zn, ref_nd_to_zn(a, c0))
    np.testing.assert_array_equal(F.zn_to_nd(zn, rows, cols), a)
    for z in (nz, zz, zn):
        assert np.count_nonzero(z) == a.size and z.dtype == dtype
    # each fractal is 512 bytes
    assert zz.shape[-2] * zz.shape[-1] * dtype.itemsize == 512 == zn.shape[-2] * zn.shape[-1] * dtype.itemsize


def test_matrix_layouts_hand_checked():
    a = unique((20, 11))  # fp32 -> c0 = 8
    nz = F.nd_to_nz(a)
    assert nz.shape == (2, 32, 8) and nz[1, 19, 2] == a[19, 10] and nz[0, 5, 7] == a[5, 7]
    zz = F.nd_to_zz(a)
    assert zz.shape == (2, 2, 16, 8) and zz[1, 1, 3, 2] == a[19, 10]
    zn = F.nd_to_zn(a)  # (K1, N1, N0, K0) with K = 20 rows, N = 11 cols
    assert zn.shape == (3, 1, 16, 8) and zn[2, 0, 10, 3] == a[19, 10] and zn[0, 0, 7, 5] == a[5, 7]
    # L0C: a fp32 result with c0 = 16
    c = F.nd_to_nz(a, c0=16)
    assert c.shape == (1, 32, 16) and c[0, 19, 10] == a[19, 10] and not c[0, :, 11:].any()
    # consistency of the three: ZZ is NZ with the row fractals brought outermost
    np.testing.assert_array_equal(zz, nz.reshape(2, 2, 16, 8).transpose(1, 0, 2, 3))


# ----------------------------------------------------------------------------------------------------------------------
# Bad input
# ----------------------------------------------------------------------------------------------------------------------

def test_bad_ranks():
    with pytest.raises(ValueError, match=r"x has rank 4 .*rank 5"):
        F.ncdhw_to_ndc1hwc0(np.zeros((1, 2, 3, 4)))
    with pytest.raises(ValueError, match=r"y has rank 5 .*rank 6"):
        F.ndc1hwc0_to_ncdhw(np.zeros((1, 2, 3, 4, 5)), 3)
    with pytest.raises(ValueError, match=r"w has rank 4"):
        F.filter_to_fractal_z_3d(np.zeros((16, 16, 1, 1)), 1)
    with pytest.raises(ValueError, match=r"wz has rank 3"):
        F.fractal_z_3d_to_filter(np.zeros((1, 16, 16)), 16, 16, (1, 1, 1), 1)
    with pytest.raises(ValueError, match=r"a has rank 3"):
        F.nd_to_nz(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match=r"z has rank 2"):
        F.zn_to_nd(np.zeros((2, 2)), 1, 1)


def test_bad_channels():
    y = F.ncdhw_to_ndc1hwc0(np.ones((1, 20, 1, 1, 1), np.float16))  # C1 = 2
    with pytest.raises(ValueError, match=r"channels=40 does not match y with C1=2, C0=16; allowed: channels in \[17, 32\]"):
        F.ndc1hwc0_to_ncdhw(y, 40)
    with pytest.raises(ValueError, match=r"channels=16"):
        F.ndc1hwc0_to_ndhwc(y, 16)
    with pytest.raises(ValueError, match=r"channels=0 is out of range"):
        F.ndc1hwc0_to_ncdhw(y, 0)
    with pytest.raises(ValueError, match=r"channels=2.5 is not an integer"):
        F.ndc1hwc0_to_ncdhw(y, 2.5)
    with pytest.raises(ValueError, match=r"c0=0 is out of range"):
        F.ncdhw_to_ndc1hwc0(np.ones((1, 2, 1, 1, 1)), c0=0)


def test_bad_groups():
    w = np.ones((12, 3, 1, 1, 1), np.float16)
    with pytest.raises(ValueError, match=r"groups=5 does not divide Cout=12"):
        F.filter_to_fractal_z_3d(w, 5)
    with pytest.raises(ValueError, match=r"groups=0 is out of range; allowed: an integer >= 1"):
        F.filter_to_fractal_z_3d(w, 0)
    with pytest.raises(ValueError, match=r"groups=3 does not divide cin=16"):
        F.group_enlarge(3, 16, 12, "float16")
    with pytest.raises(ValueError, match=r"groups=5 does not divide cout=12"):
        F.group_enlarge(5, 10, 12, "float16")
    with pytest.raises(ValueError, match=r"groups=True is not an integer"):
        F.group_enlarge(True, 16, 16, "float16")


def test_bad_formats_and_shapes():
    w = np.ones((16, 4, 1, 1, 1), np.float32)
    with pytest.raises(ValueError, match=r"filter_format='NCHW' is not supported; allowed: \['NCDHW', 'NDHWC', 'DHWCN'\]"):
        F.filter_to_fractal_z_3d(w, 1, filter_format="NCHW")
    with pytest.raises(ValueError, match=r"filter_format='HWCN'"):
        F.filter_to_ncdhw(w, "HWCN")
    z = F.filter_to_fractal_z_3d(w, 1)
    with pytest.raises(ValueError, match=r"wz has shape \(1, 1, 16, 8\); allowed .*cout=32.*: \(1, 2, 16, 8\)"):
        F.fractal_z_3d_to_filter(z, 32, 4, (1, 1, 1), 1)
    with pytest.raises(ValueError, match=r"kernel=\(1, 1\) is not a \(kD, kH, kW\) triple"):
        F.fractal_z_3d_to_filter(z, 16, 4, (1, 1), 1)
    with pytest.raises(ValueError, match=r"rows=33 exceeds .* allowed: rows in \[1, 32\]"):
        F.nz_to_nd(F.nd_to_nz(np.ones((20, 4), np.float16)), 33, 4)
    with pytest.raises(ValueError, match=r"k=17 exceeds"):
        F.zn_to_nd(F.nd_to_zn(np.ones((16, 4), np.float16)), 17, 4)
    with pytest.raises(ValueError, match=r"x has dtype object"):
        F.ncdhw_to_ndc1hwc0(np.empty((1, 1, 1, 1, 1), dtype=object))
