"""TransDataTo5HD: NCHW -> NC1HWC0 against numpy's reshape/transpose, the 16 x 16 transpose, the repeatTimes = 1
offset, address lists, and faults."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_on_ub, trans_data_to_5hd

from ascend_sim import Misaligned, ParameterOutOfRange
from ascend_sim.ascendc import TransDataTo5HD, TransDataTo5HDParams

UB_BYTES = 64 * 1024
SRC, DST = 0, 32 * 1024


def test_nchw_to_nc1hwc0_for_16_channels(rng):
    # one image, C = 16, H x W = 64: channel c's 64 values are 4 blocks; repeat r takes block r of each channel
    x = rng.standard_normal((16, 64)).astype(np.float16)
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[SRC:SRC + x.nbytes] = x.view(np.uint8).reshape(-1)

    def body(ub):
        half = ub.ReinterpretCast(np.float16)
        src = [half[SRC // 2 + c * 64] for c in range(16)]  # channel rows
        dst = [half[DST // 2 + j * 16] for j in range(16)]  # consecutive C0 blocks
        TransDataTo5HD(dst, src, TransDataTo5HDParams(False, False, 4, 16, 1))
    got, _ = run_on_ub(body, ub0)
    out = got[DST:DST + x.nbytes].view(np.float16).reshape(64, 16)  # (H*W, C0)
    np.testing.assert_array_equal(out, x.T)  # NC1HWC0 with C1 = 1: element (hw, c0) = x[c0, hw]


def test_single_repeat_is_offset_by_one_rep_stride(rng):
    ub0 = rng.integers(0, 2**16, UB_BYTES // 2, dtype=np.uint16).view(np.uint8)
    src = [SRC + 32 * i for i in range(16)]
    dst = [DST + 32 * i for i in range(16)]
    got, _ = run_on_ub(lambda ub: TransDataTo5HD(dst, src, TransDataTo5HDParams(False, False, 1, 3, 2),
                                                 dtype=np.uint16), ub0)
    np.testing.assert_array_equal(got, trans_data_to_5hd(ub0, dst, src, np.uint16, 1, 3, 2))
    m = ub0[SRC + 64:SRC + 64 + 512].view(np.uint16).reshape(16, 16)
    np.testing.assert_array_equal(got[DST + 96:DST + 96 + 512].view(np.uint16).reshape(16, 16), m.T)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 4), st.integers(0, 20), st.integers(0, 20), st.permutations(range(16)),
       st.permutations(range(16)), st.integers(0, 2**31))
def test_scattered_lists_property(repeats, dst_rep, src_rep, src_perm, dst_perm, seed):
    ub0 = np.random.default_rng(seed).integers(0, 2**16, UB_BYTES // 2, dtype=np.uint16).view(np.uint8)
    src = [SRC + 64 * p for p in src_perm]
    dst = [DST + 64 * p for p in dst_perm]
    got, _ = run_on_ub(lambda ub: TransDataTo5HD([ub[a].ReinterpretCast(np.int16) for a in dst],
                                                 [ub[a].ReinterpretCast(np.int16) for a in src],
                                                 TransDataTo5HDParams(False, False, repeats, dst_rep, src_rep)), ub0)
    np.testing.assert_array_equal(got, trans_data_to_5hd(ub0, dst, src, np.int16, repeats, dst_rep, src_rep))


def test_transdata_faults():
    zeros = np.zeros(UB_BYTES, np.uint8)
    with pytest.raises(ParameterOutOfRange, match="not int64"):
        run_on_ub(lambda ub: TransDataTo5HD([0] * 16, [512] * 16, TransDataTo5HDParams(), dtype=np.int64), zeros)
    with pytest.raises(ParameterOutOfRange, match="has 8 entries"):
        run_on_ub(lambda ub: TransDataTo5HD([0] * 8, [512] * 16, TransDataTo5HDParams(), dtype=np.float16), zeros)
    with pytest.raises(Misaligned, match=r"srcList\[3\] address 70"):
        run_on_ub(lambda ub: TransDataTo5HD([0] * 16, [512] * 3 + [70] + [512] * 12, TransDataTo5HDParams(),
                                            dtype=np.float16), zeros)
    with pytest.raises(ParameterOutOfRange, match=r"repeatTimes=256 outside \[0, 255\]"):
        run_on_ub(lambda ub: TransDataTo5HD([0] * 16, [512] * 16, TransDataTo5HDParams(repeatTimes=256),
                                            dtype=np.float16), zeros)
