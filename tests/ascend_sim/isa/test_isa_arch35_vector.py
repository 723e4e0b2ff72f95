"""The Ascend 950's vector Cast pairs with hifloat8 and float8_e4m3fn against a rounding reference that searches
the 256 codes (tests/isa_reference_arch35.nearest_8bit), in the count and the repeat form; refusals by name."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_on_ub

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import Cast, RoundMode, UnaryRepeatParams
from ascend_sim.machine.dtypes import float8_e4m3fn, float16, float32, hifloat8

A5 = "Ascend950PR_9599"
UB_BYTES = 16 * 1024
DST, SRC = 0, 8 * 1024
EDGES = [0.0, -0.0, 1.0625, -1.0625, 1.1875, 0.5, 2.5, 3.0, 448.0, 464.0, 480.0, -480.0, 32768.0, 40000.0, 40960.0,
         1e9, -1e9, np.inf, -np.inf, np.nan, 2.0**-22, 1.5 * 2.0**-22, 2.0**-23, 2.0**-16, 1e-30, 17.0, 19.0]
ENCODE = [(float32, hifloat8, "CAST_ROUND", "away"), (float16, hifloat8, "CAST_ROUND", "away"),
          (float32, float8_e4m3fn, "CAST_RINT", "even")]


def cast_on_ub(src, dst, mode, values, *form):
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[SRC:SRC + values.nbytes] = values.view(np.uint8)
    got, _ = run_on_ub(lambda ub: Cast(ub[DST].ReinterpretCast(dst), ub[SRC].ReinterpretCast(src), RoundMode[mode],
                                       *form), ub0, platform=A5)
    return got


def values_of(src, rng, n):
    with np.errstate(all="ignore"):
        rand = rng.standard_normal(n) * 10.0 ** rng.integers(-7, 6, n)
        return np.concatenate([np.array(EDGES), rand]).astype(np.float32).astype(src)


@pytest.mark.parametrize("src,dst,mode,ties", ENCODE, ids=lambda v: str(v))
def test_cast_into_8bit_count_form(src, dst, mode, ties, rng):
    values = values_of(src, rng, 500)
    got = cast_on_ub(src, dst, mode, values, values.size)[:values.size].view(dst).astype(np.float64)
    want = np.array([ref35.nearest_8bit(float(v), dst, ties) for v in values])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("src,dst", [(hifloat8, float16), (hifloat8, float32), (float8_e4m3fn, float32)])
def test_cast_from_8bit_decodes_every_code(src, dst):
    codes = np.arange(256, dtype=np.uint8)
    got = cast_on_ub(src, dst, "CAST_NONE", codes.view(src), 256)[:256 * np.dtype(dst).itemsize].view(dst)
    want = codes.view(src).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(want)].astype(np.float64), want[~np.isnan(want)])


@settings(max_examples=25, deadline=None)
@given(pair=st.sampled_from(ENCODE), repeats=st.integers(1, 4), dst_gap=st.integers(0, 2), src_rep=st.integers(8, 10),
       mask=st.integers(1, 128), seed=st.integers(0, 2**16))
def test_cast_into_8bit_repeat_form(pair, repeats, dst_gap, src_rep, mask, seed):
    # a repeat is 256 B of the wider side: 64 elements of fp32 (128 of fp16) and as many 8-bit ones; element k
    # of repeat r sits in block r * repStride + k // C0 of each operand (C0 = 32 B / element size)
    src, dst, mode, ties = pair
    per = 256 // np.dtype(src).itemsize
    dst_rep = per // 32 + dst_gap  # the 8-bit side of a repeat fills per / 32 blocks
    values = values_of(src, np.random.default_rng(seed), 2000)
    got = cast_on_ub(src, dst, mode, values, mask, repeats, UnaryRepeatParams(1, 1, dst_rep, src_rep))
    got = got.view(dst)
    c_src, c_dst = 32 // np.dtype(src).itemsize, 32
    for r in range(repeats):
        for k in range(per):
            d = (r * dst_rep + k // c_dst) * c_dst + k % c_dst
            if k < min(mask, per):
                s = (r * src_rep + k // c_src) * c_src + k % c_src
                assert float(got[d]) == ref35.nearest_8bit(float(values[s]), dst, ties)


def test_cast_8bit_refusals():
    values = np.ones(64, np.float32)
    with pytest.raises(ParameterOutOfRange, match="takes roundMode CAST_ROUND/CAST_HYBRID, not CAST_RINT"):
        cast_on_ub(float32, hifloat8, "CAST_RINT", values, 64)
    with pytest.raises(ParameterOutOfRange, match="CAST_HYBRID .* is not modelled"):
        cast_on_ub(float32, hifloat8, "CAST_HYBRID", values, 64)
    with pytest.raises(ParameterOutOfRange, match="not an A2/A3 pair"):
        cast_on_ub(float16, float8_e4m3fn, "CAST_RINT", values.astype(float16), 64)
    ub0 = np.zeros(UB_BYTES, np.uint8)
    with pytest.raises(ParameterOutOfRange, match="Cast from float32 to hifloat8 does not exist on arch 2201"):
        run_on_ub(lambda ub: Cast(ub[DST].ReinterpretCast(hifloat8), ub[SRC].ReinterpretCast(float32),
                                  RoundMode.CAST_ROUND, 64), ub0)
