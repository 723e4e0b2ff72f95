"""TransDataTo5HD with 8-bit (srcHighHalf / dstHighHalf) and 32-bit elements: the int8 and int32 examples of
TransDataTo5HD.md (asc-devkit 82b89a15) as truth, and the loop reference over scattered lists and repeats."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_on_ub, trans_data_to_5hd_b8_b32

from ascend_sim.ascendc import TransDataTo5HD, TransDataTo5HDParams

UB_BYTES = 16 * 1024
SRC, DST = 0, 8 * 1024


def _lists(ub, dtype):
    return ([ub[DST + 32 * i].ReinterpretCast(dtype) for i in range(16)],
            [ub[SRC + 32 * i].ReinterpretCast(dtype) for i in range(16)])


def test_int8_high_halves_doc_example():
    # the doc's input: 16 blocks of 32, block i = 32 * (i % 4) + 0..31; with srcHighHalf = dstHighHalf = true the
    # output's low halves stay 0 and block j's high half is [16 + j, 48 + j, 80 + j, 112 + j] * 4
    src = np.array([[32 * (i % 4) + e for e in range(32)] for i in range(16)], np.int8)
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[SRC:SRC + 512] = src.view(np.uint8).ravel()
    got, _ = run_on_ub(lambda ub: TransDataTo5HD(*_lists(ub, np.int8), TransDataTo5HDParams(True, True, 1, 0, 0)),
                       ub0)
    out = got[DST:DST + 512].view(np.int8).reshape(16, 32)
    np.testing.assert_array_equal(out[:, :16], 0)
    for j in range(16):
        np.testing.assert_array_equal(out[j, 16:], [16 + j, 48 + j, 80 + j, 112 + j] * 4)


def test_int32_doc_example():
    # input 16 blocks of 8: 0..127 row by row; output printed as 8 rows of 16: row j = [j, 8 + j, ..., 120 + j]
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[SRC:SRC + 512] = np.arange(128, dtype=np.int32).view(np.uint8)
    got, _ = run_on_ub(lambda ub: TransDataTo5HD(*_lists(ub, np.int32), TransDataTo5HDParams(False, False, 1, 0, 0)),
                       ub0)
    out = got[DST:DST + 512].view(np.int32).reshape(8, 16)
    np.testing.assert_array_equal(out, np.arange(128, dtype=np.int32).reshape(16, 8).T)


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from([np.int8, np.uint8, np.int32, np.float32]), repeats=st.integers(0, 3),
       dst_rep=st.integers(0, 20), src_rep=st.integers(0, 20), highs=st.tuples(st.booleans(), st.booleans()),
       src_perm=st.permutations(range(16)), dst_perm=st.permutations(range(16)), seed=st.integers(0, 2**31))
def test_scattered_lists_b8_b32(dtype, repeats, dst_rep, src_rep, highs, src_perm, dst_perm, seed):
    ub0 = np.random.default_rng(seed).integers(0, 256, UB_BYTES, dtype=np.uint8)
    src = [SRC + 64 * p for p in src_perm]
    dst = [DST + 64 * p for p in dst_perm]
    got, _ = run_on_ub(lambda ub: TransDataTo5HD([ub[a].ReinterpretCast(dtype) for a in dst],
                                                 [ub[a].ReinterpretCast(dtype) for a in src],
                                                 TransDataTo5HDParams(*highs, repeats, dst_rep, src_rep)), ub0)
    want = trans_data_to_5hd_b8_b32(ub0, dst, src, dtype, repeats, dst_rep, src_rep, *highs)
    np.testing.assert_array_equal(got, want)
