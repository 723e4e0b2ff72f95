"""Cast against the exact-rounding reference: every A2 pair and round mode on values that hit ties, overflow,
subnormals, signed zeros, inf and NaN; the repeat form with its own block layout per operand; faults."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import cast_element, repeat_op, run_on_ub

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import Cast, RoundMode, UnaryRepeatParams
from ascend_sim.isa.vector.cast import PAIRS
from ascend_sim.machine.dtypes import bfloat16

UB_BYTES = 32 * 1024
DST, SRC = 0, 16 * 1024

_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.5, 1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11),
                1 + 2**-8, 1 + 3 * 2**-8, 65504.0, 65519.0, 65520.0, 70000.0, -70000.0, 1e-7, 3e-8, -5.96e-8, 1e-30,
                2.0**31, -2.0**31 - 1024, 3e9, 40000.0, -40000.0, 32767.5, np.inf, -np.inf, np.nan, 123.456,
                -7.75, 0.3]
_INT_EDGES = [0, 1, -1, 2049, 2051, -2049, 4097, 32767, -32768, 2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1,
              -2**31, 100000, -70000]


def source_values(src, rng, n=512):
    dt = np.dtype(src)
    if dt.kind == "i":
        info = np.iinfo(dt)
        edges = [v for v in _INT_EDGES if info.min <= v <= info.max]
        rand = rng.integers(info.min, info.max, n - len(edges), dtype=np.int64)
        return np.concatenate([np.array(edges), rand]).astype(dt)
    with np.errstate(all="ignore"):
        rand = rng.standard_normal(n - len(_FLOAT_EDGES)) * 10.0 ** rng.integers(-8, 6, n - len(_FLOAT_EDGES))
        return np.concatenate([np.array(_FLOAT_EDGES), rand]).astype(np.float32).astype(dt)


def _check(got_bytes, want_bytes, dtype):
    with np.errstate(invalid="ignore"):  # bytes of untouched UB may be NaN patterns
        got, want = got_bytes.view(dtype).astype(np.float64), want_bytes.view(dtype).astype(np.float64)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))


@pytest.mark.parametrize("pair", list(PAIRS), ids=lambda p: f"{p[0]}->{p[1]}")
def test_every_pair_and_mode_of_the_a2_table(pair, rng):
    src, dst = pair
    values = source_values(src, rng)
    for mode in PAIRS[pair]:
        ub0 = np.zeros(UB_BYTES, np.uint8)
        ub0[SRC:SRC + values.nbytes] = values.view(np.uint8)
        n = values.size
        got, _ = run_on_ub(lambda ub, mode=mode, n=n: Cast(ub[DST].ReinterpretCast(dst), ub[SRC].ReinterpretCast(src),
                                                           RoundMode[mode], n), ub0)
        # the count form converts n contiguous elements: a repeat is 256 B of the wider type, so the narrower
        # side's repeats are 4 blocks apart (CastImpl's count form, dav_c220 kernel_operator_vec_vconv_impl.h)
        dst_rep = 4 if np.dtype(dst).itemsize < np.dtype(src).itemsize else 8
        src_rep = 4 if np.dtype(src).itemsize < np.dtype(dst).itemsize else 8
        want = repeat_op(ub0, lambda v, mode=mode: cast_element(v, src, dst, mode), (DST, dst, 1, dst_rep),
                         [(SRC, src, 1, src_rep)], 0, "counter", n)
        _check(got, want, dst)
        # said plainly: element i of dst is element i of src, converted
        plain = np.array([cast_element(v, src, dst, mode) for v in values]).astype(dst)
        _check(got[DST:DST + plain.nbytes], plain.view(np.uint8), dst)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([(np.float32, np.float16), (np.float16, np.float32), (np.float32, np.int32),
                        (np.float32, bfloat16)]), st.integers(0, 4), st.integers(1, 3), st.integers(1, 3),
       st.integers(0, 10), st.integers(0, 10), st.integers(0, 70), st.integers(0, 2**31))
def test_repeat_form_property(pair, repeat, dblk, sblk, drep, srep, mask, seed):
    src, dst = pair
    ub0 = np.zeros(UB_BYTES, np.uint8)
    vals = source_values(src, np.random.default_rng(seed), n=(UB_BYTES - SRC) // np.dtype(src).itemsize)
    ub0[SRC:] = vals.view(np.uint8)
    params = UnaryRepeatParams(dblk, sblk, drep, srep)
    mode = "CAST_NONE" if pair == (np.float16, np.float32) else "CAST_RINT"
    got, _ = run_on_ub(lambda ub: Cast(ub[DST].ReinterpretCast(dst), ub[SRC].ReinterpretCast(src), RoundMode[mode],
                                       mask, repeat, params), ub0)
    want = repeat_op(ub0, lambda v: cast_element(v, src, dst, mode), (DST, dst, dblk, drep), [(SRC, src, sblk, srep)],
                     repeat, "count", mask)
    _check(got, want, dst)


def test_fp32_to_fp16_contiguous_repeats_use_dst_repeat_stride_4(rng):
    ub0 = np.zeros(UB_BYTES, np.uint8)
    vals = source_values(np.float32, rng, n=256)
    ub0[SRC:SRC + 1024] = vals.view(np.uint8)
    got, _ = run_on_ub(lambda ub: Cast(ub[DST].ReinterpretCast(np.float16), ub[SRC].ReinterpretCast(np.float32),
                                       RoundMode.CAST_RINT, 64, 4, UnaryRepeatParams(1, 1, 4, 8)), ub0)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[:512].view(np.float16), vals.astype(np.float16))


@pytest.mark.parametrize("src, dst, mode, match", [
    (np.float32, np.float16, "CAST_ODD", None), (np.float32, bfloat16, "CAST_ODD", "takes roundMode"),
    (np.int32, np.float16, "CAST_NONE", "not modelled"), (np.float16, np.float32, "CAST_RINT", "takes roundMode"),
    (np.int16, np.int32, "CAST_NONE", "not an A2/A3 pair")])
def test_pairs_and_modes_outside_the_table_fault(src, dst, mode, match):
    body = lambda ub: Cast(ub[DST].ReinterpretCast(dst), ub[SRC].ReinterpretCast(src), RoundMode[mode], 64)
    if match is None:
        run_on_ub(body, np.zeros(UB_BYTES, np.uint8))
        return
    with pytest.raises(ParameterOutOfRange, match=match):
        run_on_ub(body, np.zeros(UB_BYTES, np.uint8))
