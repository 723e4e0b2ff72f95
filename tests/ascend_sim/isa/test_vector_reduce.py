"""Reductions against the loop references: WholeReduceSum/Max/Min with every ReduceOrder, BlockReduceSum/Max/Min,
the count forms ReduceSum / ReduceMax, masks, strides, repeatTime 0 and 255, in-place use and faults."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import reduce_repeats, reduce_sum_count, run_on_ub

from ascend_sim import Misaligned, ParameterOutOfRange
from ascend_sim.ascendc import (BlockReduceMax, BlockReduceMin, BlockReduceSum, ReduceMax, ReduceOrder, ReduceSum,
                                WholeReduceMax, WholeReduceMin, WholeReduceSum)

UB_BYTES = 96 * 1024
DST, SRC, TMP = 0, 32 * 1024, 80 * 1024


def ub_values(dtype, rng, spread=4.0):
    n = UB_BYTES // np.dtype(dtype).itemsize
    return rng.uniform(-spread, spread, n).astype(dtype).view(np.uint8)


def t(ub, address, dtype):
    return ub[address].ReinterpretCast(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("mask", [128, 64, 1, 37, [0x69A569A569A569A5, 0x3], [0, 1]])
def test_whole_reduce_sum(dtype, mask, rng):
    ub0 = ub_values(dtype, rng)
    got, _ = run_on_ub(lambda ub: WholeReduceSum(t(ub, DST, dtype), t(ub, SRC, dtype), mask, 5, 1, 1, 8), ub0)
    mode = "bits" if isinstance(mask, list) else "count"
    want = reduce_repeats(ub0, DST, SRC, dtype, "sum", 5, mode, mask, 1, 1, 8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("order", ["VALUE_INDEX", "INDEX_VALUE", "ONLY_VALUE", "ONLY_INDEX"])
@pytest.mark.parametrize("api, kind", [(WholeReduceMax, "max"), (WholeReduceMin, "min")])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_whole_reduce_max_min_orders(order, api, kind, dtype, rng):
    ub0 = np.round(ub_values(dtype, rng).view(dtype)).astype(dtype).view(np.uint8)  # many ties: first index wins
    got, _ = run_on_ub(lambda ub: api(t(ub, DST, dtype), t(ub, SRC, dtype), 100, 4, 1, 2, 16,
                                      ReduceOrder["ORDER_" + order]), ub0)
    want = reduce_repeats(ub0, DST, SRC, dtype, kind, 4, "count", 100, 1, 2, 16, order)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("api, kind", [(BlockReduceSum, "sum"), (BlockReduceMax, "max"), (BlockReduceMin, "min")])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_block_reduce(api, kind, dtype, rng):
    ub0 = ub_values(dtype, rng)
    mask = 40  # later blocks fully masked: sum 0, max -inf, min +inf
    got, _ = run_on_ub(lambda ub: api(t(ub, DST, dtype), t(ub, SRC, dtype), 3, mask, 2, 1, 8), ub0)
    want = reduce_repeats(ub0, DST, SRC, dtype, kind, 3, "count", mask, 2, 1, 8, block_level=True)
    np.testing.assert_array_equal(got, want)


def test_repeat_time_255_and_zero(rng):
    ub0 = ub_values(np.float32, rng)
    got, _ = run_on_ub(lambda ub: WholeReduceSum(t(ub, DST, np.float32), t(ub, SRC, np.float32), 64, 255, 1, 1, 0),
                       ub0)  # srcRepStride 0: the same 8 blocks 255 times
    np.testing.assert_array_equal(got, reduce_repeats(ub0, DST, SRC, np.float32, "sum", 255, "count", 64, 1, 1, 0))
    got, _ = run_on_ub(lambda ub: WholeReduceSum(t(ub, DST, np.float32), t(ub, SRC, np.float32), 64, 0, 1, 1, 8),
                       ub0)
    np.testing.assert_array_equal(got, ub0)


def test_in_place_reduction_reads_each_repeat_before_writing(rng):
    ub0 = ub_values(np.float16, rng)
    got, _ = run_on_ub(lambda ub: WholeReduceSum(t(ub, SRC, np.float16), t(ub, SRC, np.float16), 128, 6, 1, 1, 8),
                       ub0)
    want = reduce_repeats(ub0, SRC, SRC, np.float16, "sum", 6, "count", 128, 1, 1, 8)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("count", [1, 63, 64, 65, 1000, 4096])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_reduce_sum_and_max_count_forms(count, dtype, rng):
    ub0 = ub_values(dtype, rng, spread=2.0)

    def body(ub):
        ReduceSum(t(ub, DST, dtype), t(ub, SRC, dtype), t(ub, TMP, dtype), count)
        ReduceMax(t(ub, DST + 64, dtype), t(ub, SRC, dtype), t(ub, TMP, dtype), count, True)
    got, _ = run_on_ub(body, ub0)
    src = ub0[SRC:].view(dtype)[:count]
    assert got[DST:].view(dtype)[0] == reduce_sum_count(src)
    index = int(np.argmax(src))
    result = got[DST + 64:].view(dtype)[:2]
    assert result[0] == src.max() and result[1:].view(np.uint16 if np.dtype(dtype).itemsize == 2 else
                                                       np.uint32)[0] == index
    # against PyTorch's float64 sum: the tree order keeps the error small
    import torch
    exact = torch.tensor(src.astype(np.float64)).sum().item()
    assert abs(float(got[DST:].view(dtype)[0]) - exact) <= (0.05 if dtype == np.float16 else 1e-4) * max(1, count ** 0.5)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([np.float16, np.float32]), st.sampled_from(["sum", "max"]), st.booleans(), st.integers(0, 5),
       st.integers(0, 3), st.integers(1, 3), st.integers(0, 12), st.integers(0, 140), st.integers(0, 2**31))
def test_reduce_property(dtype, kind, block_level, repeats, dst_rep, src_blk, src_rep, mask, seed):
    ub0 = ub_values(dtype, np.random.default_rng(seed))
    api = {("sum", False): WholeReduceSum, ("max", False): WholeReduceMax, ("sum", True): BlockReduceSum,
           ("max", True): BlockReduceMax}[kind, block_level]
    if block_level:
        body = lambda ub: api(t(ub, DST, dtype), t(ub, SRC, dtype), repeats, mask, dst_rep, src_blk, src_rep)
    elif kind == "max":
        body = lambda ub: api(t(ub, DST, dtype), t(ub, SRC, dtype), mask, repeats, dst_rep, src_blk, src_rep,
                              ReduceOrder.ORDER_ONLY_VALUE)
    else:
        body = lambda ub: api(t(ub, DST, dtype), t(ub, SRC, dtype), mask, repeats, dst_rep, src_blk, src_rep)
    got, _ = run_on_ub(body, ub0)
    want = reduce_repeats(ub0, DST, SRC, dtype, kind, repeats, "count", mask, dst_rep, src_blk, src_rep,
                          block_level=block_level)
    np.testing.assert_array_equal(got, want)


def test_reduce_faults():
    zeros = np.zeros(UB_BYTES, np.uint8)
    with pytest.raises(Misaligned, match="dst address 2 in UB is not a multiple of 4"):
        run_on_ub(lambda ub: WholeReduceMax(t(ub, 2, np.float16), t(ub, SRC, np.float16), 128, 1, 1, 1, 8), zeros)
    with pytest.raises(ParameterOutOfRange, match="takes src dtype float16/float32, got int32"):
        run_on_ub(lambda ub: WholeReduceSum(t(ub, 0, np.int32), t(ub, SRC, np.int32), 64, 1, 1, 1, 8), zeros)
    with pytest.raises(ParameterOutOfRange, match=r"srcRepStride=65536 outside \[0, 65535\]"):
        run_on_ub(lambda ub: BlockReduceSum(t(ub, 0, np.float16), t(ub, SRC, np.float16), 1, 128, 1, 1, 65536), zeros)
    with pytest.raises(ParameterOutOfRange, match=r"count=0 outside \[1, 98304\]"):
        run_on_ub(lambda ub: ReduceSum(t(ub, 0, np.float16), t(ub, SRC, np.float16), t(ub, TMP, np.float16), 0), zeros)
