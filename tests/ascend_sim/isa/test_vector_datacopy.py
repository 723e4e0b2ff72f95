"""GM <-> UB data movement on the vector core against the plain-loop references: DataCopy (DataCopyParams and the
count form) and DataCopyPad (byte lengths, padding, dummy fill, unpadding), their ranges and faults."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import data_copy, data_copy_pad_gm_to_ub, data_copy_pad_ub_to_gm, run_aiv

from ascend_sim import Misaligned, OutOfBounds, ParameterOutOfRange
from ascend_sim.ascendc import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                                GlobalTensor, HardEvent, SetFlag, TBuf, TPipe, TPosition, WaitFlag)

UB_BYTES = 64 * 1024


def _ub(nbytes=UB_BYTES):
    pipe = TPipe()
    buf = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(buf, nbytes)
    return buf.Get(np.uint8)


def _flag(event):
    SetFlag(event, 0)
    WaitFlag(event, 0)


def roundtrip(gm_in, into_ub, out_of_ub, out_bytes):
    """GM in0 -> UB by `into_ub(ub, gm)`, then UB -> GM out by `out_of_ub(gm_out, ub)`."""
    def kernel(x, out):
        ub = _ub()
        into_ub(ub, GlobalTensor(np.uint8).SetGlobalBuffer(x))
        _flag(HardEvent.MTE2_MTE3)
        out_of_ub(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub)
    chip, report = run_aiv(kernel, gm_in, out_bytes=out_bytes)
    return chip.gm["out"].data.copy(), report


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 6), st.integers(0, 5), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
       st.integers(0, 3), st.integers(0, 2**31))
def test_data_copy_block_strides_both_ways(count, blen, s_gap, d_gap, s_gap2, d_gap2, seed):
    gm = np.random.default_rng(seed).integers(0, 256, 8192).astype(np.uint8)
    whole = DataCopyParams(1, UB_BYTES // 32, 0, 0)
    out, _ = roundtrip(gm, lambda ub, g: DataCopy(ub, g, DataCopyParams(count, blen, s_gap, d_gap)),
                       lambda g, ub: DataCopy(g, ub[1024], DataCopyParams(count, blen, s_gap2, d_gap2)), 8192)
    ub = data_copy(gm, 0, np.zeros(UB_BYTES, np.uint8), 0, count, blen * 32, s_gap * 32, d_gap * 32)
    want = data_copy(ub, 1024, np.zeros(8192, np.uint8), 0, count, blen * 32, s_gap2 * 32, d_gap2 * 32)
    np.testing.assert_array_equal(out, want)
    assert whole.blockLen == UB_BYTES // 32


def test_count_form_rounds_down_to_whole_blocks():
    gm = np.arange(200, dtype=np.float16)
    def kernel(x, out):
        ub = _ub().ReinterpretCast(np.float16)
        DataCopy(ub, GlobalTensor(np.float16).SetGlobalBuffer(x), 200)  # 400 B -> 384 B
        _flag(HardEvent.MTE2_MTE3)
        DataCopy(GlobalTensor(np.float16).SetGlobalBuffer(out), ub, 200)
    chip, report = run_aiv(kernel, gm, out_bytes=400)
    out = chip.gm["out"].data.view(np.float16)
    np.testing.assert_array_equal(out[:192], gm[:192])
    assert not out[192:].any() and report.bytes_by_path["GM->UB"] == 384


@pytest.mark.parametrize("block_len, left, right, is_pad", [
    (47, 0, 0, False), (64, 0, 0, False), (40, 2, 3, True), (40, 0, 8, True), (38, 16, 0, True), (2, 0, 15, True),
    (40, 2, 3, False)])
def test_data_copy_pad_gm_to_ub(block_len, left, right, is_pad):
    dtype = np.int16 if block_len % 2 == 0 else np.int8
    gm = np.random.default_rng(block_len).integers(0, 256, 4096).astype(np.uint8)
    ub0 = np.random.default_rng(7).integers(0, 256, UB_BYTES).astype(np.uint8)
    params = DataCopyExtParams(3, block_len, 5, 1)

    def kernel(x, init, out):
        ub = _ub()
        DataCopy(ub, GlobalTensor(np.uint8).SetGlobalBuffer(init), UB_BYTES)  # known "old" UB contents
        _flag(HardEvent.MTE2_MTE3)  # nothing orders two MTE2 writes of the same bytes but the pipe itself
        DataCopyPad(ub.ReinterpretCast(dtype), GlobalTensor(dtype).SetGlobalBuffer(x), params,
                    DataCopyPadExtParams(is_pad, left, right, -3))
        _flag(HardEvent.MTE2_MTE3)
        DataCopy(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub, UB_BYTES)
    chip, _ = run_aiv(kernel, gm, ub0, out_bytes=UB_BYTES)
    want = data_copy_pad_gm_to_ub(gm, 0, ub0, 0, dtype, 3, block_len, 5, 1, is_pad, left, right, -3)
    np.testing.assert_array_equal(chip.gm["out"].data, want)


@pytest.mark.parametrize("block_len, src_stride, dst_stride", [(47, 0, 0), (64, 1, 3), (2, 2, 1), (100, 0, 17)])
def test_data_copy_pad_ub_to_gm(block_len, src_stride, dst_stride):
    gm = np.random.default_rng(block_len).integers(0, 256, UB_BYTES).astype(np.uint8)
    out, _ = roundtrip(gm, lambda ub, g: DataCopy(ub, g, UB_BYTES),
                       lambda g, ub: DataCopyPad(g, ub, DataCopyExtParams(4, block_len, src_stride, dst_stride)),
                       1024)
    want = data_copy_pad_ub_to_gm(gm, 0, np.zeros(1024, np.uint8), 0, 4, block_len, src_stride, dst_stride)
    np.testing.assert_array_equal(out, want)


def test_zero_block_count_or_length_is_a_nop():
    gm = np.ones(1024, np.uint8)
    out, report = roundtrip(gm, lambda ub, g: (DataCopy(ub, g, DataCopyParams(0, 4, 0, 0)),
                                               DataCopyPad(ub, g, DataCopyExtParams(3, 0, 0, 0))),
                            lambda g, ub: DataCopy(g, ub, DataCopyParams(1, 4, 0, 0)), 128)
    assert not out.any()
    assert report.bytes_by_path.get("GM->UB", 0) == 0


def _kernel_fault(body, nbytes=4096):
    def kernel(x):
        body(_ub(UB_BYTES), GlobalTensor(np.int16).SetGlobalBuffer(x))
    return run_aiv(kernel, np.zeros(nbytes // 2, np.int16))


@pytest.mark.parametrize("body, fault, match", [
    (lambda ub, g: DataCopy(ub[2], g, 64), Misaligned,
     "dst address 2 in UB is not a multiple of 32"),
    (lambda ub, g: DataCopy(ub, g, DataCopyParams(4096, 1, 0, 0)), ParameterOutOfRange,
     r"blockCount=4096 outside \[0, 4095\]"),
    (lambda ub, g: DataCopyPad(ub.ReinterpretCast(np.int16), g, DataCopyExtParams(1, 33, 0, 0)),
     ParameterOutOfRange, "blockLen=33 is not a multiple of sizeof"),
    (lambda ub, g: DataCopyPad(ub.ReinterpretCast(np.int16), g, DataCopyExtParams(1, 32, 0, 0),
                               DataCopyPadExtParams(True, 17, 0, 0)), ParameterOutOfRange,
     r"leftPadding=17 elements of 2 B outside \[0, 16\]"),
    (lambda ub, g: DataCopy(ub[192 * 1024 - 64], g, DataCopyParams(1, 100, 0, 0)), OutOfBounds, "outside UB"),
    (lambda ub, g: DataCopy(ub, g, DataCopyParams(1, 200, 0, 0)), OutOfBounds, "outside GM:in0"),
])
def test_data_copy_faults_name_the_parameter(body, fault, match):
    with pytest.raises(fault, match=match) as info:
        _kernel_fault(body)
    assert info.value.pipe in ("MTE2", "MTE3") and "test_vector_datacopy.py" in info.value.source


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([np.int8, np.int16, np.float32]), st.integers(0, 5), st.integers(0, 90), st.integers(0, 40),
       st.integers(0, 3), st.booleans(), st.integers(0, 32), st.integers(0, 32), st.integers(0, 2**31))
def test_data_copy_pad_property(dtype, count, elems, src_gap, dst_gap, is_pad, left_bytes, right_bytes, seed):
    size = np.dtype(dtype).itemsize
    block_len, left, right = elems * size, left_bytes // size, right_bytes // size
    rng = np.random.default_rng(seed)
    gm = rng.integers(0, 256, 8192).astype(np.uint8)
    ub0 = rng.integers(0, 256, UB_BYTES).astype(np.uint8)

    def kernel(x, init, out):
        ub = _ub()
        DataCopy(ub, GlobalTensor(np.uint8).SetGlobalBuffer(init), UB_BYTES)
        _flag(HardEvent.MTE2_MTE3)
        DataCopyPad(ub.ReinterpretCast(dtype), GlobalTensor(dtype).SetGlobalBuffer(x),
                    DataCopyExtParams(count, block_len, src_gap, dst_gap), DataCopyPadExtParams(is_pad, left, right, 5))
        _flag(HardEvent.MTE2_MTE3)
        DataCopyPad(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub, DataCopyExtParams(2, UB_BYTES // 2 - 64, 1, 0))
    chip, _ = run_aiv(kernel, gm, ub0, out_bytes=UB_BYTES)
    ub = data_copy_pad_gm_to_ub(gm, 0, ub0, 0, dtype, count, block_len, src_gap, dst_gap, is_pad, left, right, 5)
    want = data_copy_pad_ub_to_gm(ub, 0, np.zeros(UB_BYTES, np.uint8), 0, 2, UB_BYTES // 2 - 64, 1, 0)
    np.testing.assert_array_equal(chip.gm["out"].data, want)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 5), st.integers(0, 6), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**31))
def test_ub_to_ub_copy_on_the_vector_pipe(count, blen, s_gap, d_gap, seed):
    from vector_reference import run_on_ub
    ub0 = np.random.default_rng(seed).integers(0, 256, 16384).astype(np.uint8)
    got, report = run_on_ub(lambda ub: DataCopy(ub[8192], ub[512], DataCopyParams(count, blen, s_gap, d_gap)), ub0)
    np.testing.assert_array_equal(got, data_copy(ub0, 512, ub0, 8192, count, blen * 32, s_gap * 32, d_gap * 32))
    copy = next(r for r in report.logs[0] if r.name == "DataCopy(UB->UB)")
    assert copy.pipe.name == "V"
    # one 32-byte block per cycle + 5 (pto-isa's measured tmov; the "measured" vector timing)
    assert copy.end - copy.start == (count * blen + 5 if count * blen else 0)


def test_ub_to_ub_count_form_and_alignment():
    from vector_reference import run_on_ub
    ub0 = np.arange(4096, dtype=np.uint16).view(np.uint8)
    got, _ = run_on_ub(lambda ub: DataCopy(ub[4096].ReinterpretCast(np.uint16), ub.ReinterpretCast(np.uint16), 100),
                       ub0)
    np.testing.assert_array_equal(got[4096:4096 + 192], ub0[:192])  # 200 B rounded down to 192
    np.testing.assert_array_equal(got[4096 + 192:], ub0[4096 + 192:])
    with pytest.raises(Misaligned, match="src address 16 in UB"):
        run_on_ub(lambda ub: DataCopy(ub[4096], ub[16], DataCopyParams(1, 1, 0, 0)), ub0)
