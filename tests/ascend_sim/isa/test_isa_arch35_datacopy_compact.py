"""DataCopyPad with PaddingMode::Compact (Ascend 950 only): UB rows packed blockLen bytes apart, both ways,
against a plain-loop reference; the Normal mode's 32-byte UB rows for contrast; refusals by name."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_aiv

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import (DataCopyExtParams, DataCopyPad, GlobalTensor, HardEvent, PaddingMode, SetFlag, TBuf,
                                TPipe, TPosition, WaitFlag)

A5 = "Ascend950PR_9589"
UB_BYTES = 32 * 1024


def compact_reference(gm, count, blen, gm_gap_in, gm_gap_out, out_bytes):
    """GM rows of blen bytes (gm_gap_in apart, end to start) packed into UB, then unpacked to GM rows gm_gap_out
    apart: a plain loop over the bytes."""
    ub = np.zeros(UB_BYTES, np.uint8)
    for i in range(count):
        for j in range(blen):
            ub[i * blen + j] = gm[i * (blen + gm_gap_in) + j]
    out = np.zeros(out_bytes, np.uint8)
    for i in range(count):
        for j in range(blen):
            out[i * (blen + gm_gap_out) + j] = ub[i * blen + j]
    return out


def roundtrip(gm, count, blen, gap_in, gap_out, out_bytes, dtype=np.int16, mode=PaddingMode.Compact,
              platform=A5):
    def kernel(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(dtype)
        DataCopyPad(ub, GlobalTensor(dtype).SetGlobalBuffer(x), DataCopyExtParams(count, blen, gap_in, 0), mode=mode)
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        DataCopyPad(GlobalTensor(dtype).SetGlobalBuffer(out), ub, DataCopyExtParams(count, blen, 0, gap_out),
                    mode=mode)
    chip, _ = run_aiv(kernel, gm, out_bytes=out_bytes, platform=platform)
    return chip.gm["out"].data.copy()


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 9), st.integers(1, 40), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**31))
def test_compact_packs_the_rows_both_ways(count, elems, gap_in, gap_out, seed):
    blen = 2 * elems  # int16 rows of any length, most not a multiple of 32 B
    gm = np.random.default_rng(seed).integers(0, 256, 4096).astype(np.uint8)
    out_bytes = count * (blen + 2 * gap_out) + 64
    got = roundtrip(gm, count, blen, 2 * gap_in, 2 * gap_out, out_bytes)
    np.testing.assert_array_equal(got, compact_reference(gm, count, blen, 2 * gap_in, 2 * gap_out, out_bytes))


def test_normal_mode_pads_each_row_and_compact_does_not():
    """Rows of 6 bytes: Normal keeps each in its own 32 B UB row, Compact packs them; both round-trip the data,
    so the difference shows in a Compact write-out of Normal-packed UB."""
    gm = np.arange(64, dtype=np.uint8)
    want = compact_reference(gm, 4, 6, 0, 0, 64)
    np.testing.assert_array_equal(roundtrip(gm, 4, 6, 0, 0, 64), want)
    np.testing.assert_array_equal(roundtrip(gm, 4, 6, 0, 0, 64, mode=PaddingMode.Normal), want)

    def mixed(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(np.int16)
        DataCopyPad(ub, GlobalTensor(np.int16).SetGlobalBuffer(x), DataCopyExtParams(4, 6, 0, 0))
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        DataCopyPad(GlobalTensor(np.int16).SetGlobalBuffer(out), ub, DataCopyExtParams(4, 6, 0, 0),
                    mode=PaddingMode.Compact)
    chip, _ = run_aiv(mixed, gm, out_bytes=64, platform=A5)
    got = chip.gm["out"].data
    np.testing.assert_array_equal(got[:6], gm[:6])
    assert not np.array_equal(got[:24], want[:24])  # the second Normal row sits 32 B on, not 6


@pytest.mark.parametrize("kwargs, match", [
    (dict(platform="Ascend910B2"), "PaddingMode::Compact does not exist on arch 2201"),
    (dict(mode="Compact"), "mode='Compact' is not a PaddingMode"),
])
def test_compact_refusals(kwargs, match):
    with pytest.raises(ParameterOutOfRange, match=match):
        roundtrip(np.zeros(64, np.uint8), 2, 6, 0, 0, 64, **kwargs)


def test_compact_ub_stride_is_refused():
    def kernel(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        DataCopyPad(buf.Get(np.int16), GlobalTensor(np.int16).SetGlobalBuffer(x), DataCopyExtParams(2, 6, 0, 1),
                    mode=PaddingMode.Compact)
    with pytest.raises(ParameterOutOfRange, match="dstStride=1 with PaddingMode::Compact"):
        run_aiv(kernel, np.zeros(64, np.uint8), out_bytes=64, platform=A5)
