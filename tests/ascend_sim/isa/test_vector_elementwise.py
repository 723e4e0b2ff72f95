"""Element-wise vector instructions against the plain-loop references: every instruction and dtype, masks
(count, bits, zero, over the repeat size, Counter mode, SetVectorMask), repeatTime 0 and 255, strides that
skip, repeat or overlap, the accumulate pattern, the count form, and their faults."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import repeat_op, run_aiv, run_on_ub, scalar_fn

from ascend_sim import Misaligned, OutOfBounds, ParameterOutOfRange, RaceFault
from ascend_sim.ascendc import (MASK_PLACEHOLDER, Abs, Add, Adds, BinaryRepeatParams, DataCopy, Div, Duplicate, Exp,
                                GlobalTensor, Ln, Max, Maxs, Min, Mins, Mul, Muls, Relu, ResetMask, SetMaskCount,
                                SetMaskNorm, SetVectorMask, Sub, TBuf, TPipe, TPosition, UnaryRepeatParams)

UB_BYTES = 96 * 1024
DST, SRC0, SRC1 = 0, 32 * 1024, 64 * 1024
BINARY = {"Add": Add, "Sub": Sub, "Mul": Mul, "Div": Div, "Max": Max, "Min": Min}
SCALAR = {"Adds": ("Add", Adds), "Muls": ("Mul", Muls), "Maxs": ("Max", Maxs), "Mins": ("Min", Mins)}
UNARY = {"Exp": Exp, "Ln": Ln, "Abs": Abs, "Relu": Relu}


def ub_values(dtype, rng, positive=False):
    """UB filled with values of `dtype` small enough that products stay in range."""
    dt = np.dtype(dtype)
    n = UB_BYTES // dt.itemsize
    if dt.kind == "f":
        v = rng.uniform(0.25, 4.0, n) if positive else rng.uniform(-4.0, 4.0, n)
    else:
        v = rng.integers(1 if positive else -300, 300, n)
    return v.astype(dt).view(np.uint8)


def tensor(ub, address, dtype):
    return ub[address].ReinterpretCast(dtype)


def assert_ub_equal(got, want, dtype, transcendental=False):
    g, w = got.view(dtype), want.view(dtype)
    if transcendental:
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-3 if
                                   np.dtype(dtype) == np.float16 else 2e-6, equal_nan=True)
    else:  # bit for bit
        np.testing.assert_array_equal(got, want)


def run_binary(name, dtype, mask, repeat, params, rng, mode=None, dst=DST, src0=SRC0, src1=SRC1):
    ub0 = ub_values(dtype, rng, positive=name == "Div")
    api = BINARY[name]
    got, report = run_on_ub(lambda ub: api(tensor(ub, dst, dtype), tensor(ub, src0, dtype), tensor(ub, src1, dtype),
                                           mask, repeat, params), ub0)
    mode = mode or ("bits" if isinstance(mask, list) else "count")
    want = repeat_op(ub0, scalar_fn(name, dtype), (dst, dtype, params.dstBlkStride, params.dstRepStride),
                     [(src0, dtype, params.src0BlkStride, params.src0RepStride),
                      (src1, dtype, params.src1BlkStride, params.src1RepStride)], repeat, mode, mask)
    assert_ub_equal(got, want, dtype)
    return report


@pytest.mark.parametrize("name, dtype", [(n, d) for n in BINARY for d in (np.float16, np.float32, np.int16, np.int32)
                                         if n != "Div" or d in (np.float16, np.float32)])  # Div: half/float only
def test_binary_instructions_full_repeats(name, dtype, rng):
    run_binary(name, dtype, 256 // np.dtype(dtype).itemsize, 3, BinaryRepeatParams(), rng)


@pytest.mark.parametrize("mask", [1, 63, 64, 65, 127, 128, 129, 1000])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_continuous_mask_edges(mask, dtype, rng):
    # above the repeat's element count a continuous mask means the whole repeat (掩码.md)
    run_binary("Add", dtype, mask, 2, BinaryRepeatParams(), rng)


@pytest.mark.parametrize("mask", [[0x69A569A569A569A5, 0x69A569A569A569A5], [1, 0], [0, 1 << 63], [0, 0],
                                  [2**64 - 1, 2**64 - 1], [0x8000000000000001, 0x5]])
@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_bit_mask_edges(mask, dtype, rng):
    # for 32-bit types only the low word counts (AscendCUtils::SetMask sets both words for a full fp32 repeat)
    run_binary("Mul", dtype, mask, 2, BinaryRepeatParams(), rng)


def test_zero_mask_and_zero_repeat_write_nothing(rng):
    for mask, repeat in ((0, 4), (128, 0), ([0, 0], 3)):
        ub0 = ub_values(np.float16, rng)
        got, report = run_on_ub(lambda ub, mask=mask, repeat=repeat: Add(
            tensor(ub, DST, np.float16), tensor(ub, SRC0, np.float16), tensor(ub, SRC1, np.float16), mask, repeat,
            BinaryRepeatParams()), ub0)
        np.testing.assert_array_equal(got, ub0)
        assert [r.name for r in report.logs[0]].count("Add") == 1  # still an instruction (a NOP)


def test_repeat_time_255_with_overlapping_source_repeats(rng):
    # sources advance one block per repeat (repStride 1 < 8: repeats overlap); dst is contiguous over 65 KB
    run_binary("Max", np.float16, 128, 255, BinaryRepeatParams(1, 1, 1, 8, 1, 1), rng, src0=70 * 1024,
               src1=80 * 1024)


@pytest.mark.parametrize("params", [BinaryRepeatParams(2, 1, 3, 16, 8, 24),  # gaps between blocks
                                    BinaryRepeatParams(1, 0, 1, 8, 0, 8),  # src0 reuses its first block
                                    BinaryRepeatParams(1, 1, 1, 10, 9, 8),  # gaps between repeats
                                    BinaryRepeatParams(1, 2, 2, 8, 4, 1)])  # partially re-read repeats
def test_strides_skip_repeat_and_overlap(params, rng):
    run_binary("Sub", np.float32, [0xF0F0F0F0F0F0F0F0, 0], 5, params, rng)


def test_accumulate_into_dst_with_zero_repeat_stride(rng):
    # dst = src0[r] + dst over the repeats: the pattern 通用说明和约束.md allows (dst and src1 overlap, RepStride 0)
    report = run_binary("Add", np.float32, 64, 6, BinaryRepeatParams(1, 1, 1, 0, 8, 0), rng, src1=DST)
    add = next(r for r in report.logs[0] if r.name == "Add")
    assert add.args.plan.sequential


def test_dst_equal_to_src_in_place(rng):
    run_binary("Mul", np.float16, 128, 4, BinaryRepeatParams(), rng, dst=SRC0)


@pytest.mark.parametrize("name", list(SCALAR))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int16, np.int32])
def test_scalar_instructions(name, dtype, rng):
    base, api = SCALAR[name]
    ub0 = ub_values(dtype, rng)
    scalar = np.array([3 if np.dtype(dtype).kind == "i" else -1.75]).astype(dtype)[0]
    params = UnaryRepeatParams(1, 2, 8, 16)
    mask = [0x0123456789ABCDEF, 0xFEDCBA9876543210]
    got, _ = run_on_ub(lambda ub: api(tensor(ub, DST, dtype), tensor(ub, SRC0, dtype), scalar, mask, 3, params), ub0)
    fn = scalar_fn(base, dtype)
    want = repeat_op(ub0, lambda a: fn(a, scalar), (DST, dtype, 1, 8), [(SRC0, dtype, 2, 16)], 3, "bits", mask)
    assert_ub_equal(got, want, dtype)


@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_unary_instructions(name, dtype, rng):
    ub0 = ub_values(dtype, rng, positive=name == "Ln")
    params = UnaryRepeatParams(1, 1, 8, 8)
    got, _ = run_on_ub(lambda ub: UNARY[name](tensor(ub, DST, dtype), tensor(ub, SRC0, dtype), 100, 4, params), ub0)
    want = repeat_op(ub0, scalar_fn(name, dtype), (DST, dtype, 1, 8), [(SRC0, dtype, 1, 8)], 4, "count", 100)
    assert_ub_equal(got, want, dtype, transcendental=name in ("Exp", "Ln"))


def test_relu_on_int32(rng):
    ub0 = ub_values(np.int32, rng)
    got, _ = run_on_ub(lambda ub: Relu(tensor(ub, DST, np.int32), tensor(ub, SRC0, np.int32), 64, 2,
                                       UnaryRepeatParams()), ub0)
    want = repeat_op(ub0, scalar_fn("Relu", np.int32), (DST, np.int32, 1, 8), [(SRC0, np.int32, 1, 8)], 2, "count", 64)
    assert_ub_equal(got, want, np.int32)


@pytest.mark.parametrize("count", [0, 1, 127, 128, 129, 1000, 4096])
def test_count_form_is_counter_mode_over_contiguous_elements(count, rng):
    ub0 = ub_values(np.float16, rng)
    got, _ = run_on_ub(lambda ub: Add(tensor(ub, DST, np.float16), tensor(ub, SRC0, np.float16),
                                      tensor(ub, SRC1, np.float16), count), ub0)
    want = repeat_op(ub0, scalar_fn("Add", np.float16), (DST, np.float16, 1, 8),
                     [(SRC0, np.float16, 1, 8), (SRC1, np.float16, 1, 8)], 0, "counter", count)
    assert_ub_equal(got, want, np.float16)


def test_counter_mode_with_repeat_form_ignores_repeat_time(rng):
    # 掩码.md's example: SetMaskCount, mask {130, 0}, UnaryRepeatParams{2, 2, 16, 16}, repeatTime 1
    ub0 = ub_values(np.float16, rng)

    def body(ub):
        SetMaskCount()
        Adds(tensor(ub, DST, np.float16), tensor(ub, SRC0, np.float16), np.float16(1.0), [130, 0], 1,
             UnaryRepeatParams(2, 2, 16, 16))
        SetMaskNorm()
        ResetMask()
    got, _ = run_on_ub(body, ub0)
    fn = scalar_fn("Add", np.float16)
    want = repeat_op(ub0, lambda a: fn(a, np.float16(1.0)), (DST, np.float16, 2, 16), [(SRC0, np.float16, 2, 16)],
                     1, "counter", 130)
    assert_ub_equal(got, want, np.float16)


def test_mask_set_outside_the_instruction(rng):
    ub0 = ub_values(np.float16, rng)
    mask = [0x69A569A569A569A5, 0x1]

    def body(ub):
        SetVectorMask(mask[1], mask[0])
        Muls(tensor(ub, DST, np.float16), tensor(ub, SRC0, np.float16), np.float16(2.0), MASK_PLACEHOLDER, 2,
             UnaryRepeatParams(), isSetMask=False)
    got, report = run_on_ub(body, ub0)
    fn = scalar_fn("Mul", np.float16)
    want = repeat_op(ub0, lambda a: fn(a, np.float16(2.0)), (DST, np.float16, 1, 8), [(SRC0, np.float16, 1, 8)], 2,
                     "bits", mask)
    assert_ub_equal(got, want, np.float16)
    assert [r.name for r in report.logs[0]][3] == "SetVectorMask"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int16, np.int32, "bfloat16"])
def test_duplicate_count_and_repeat_forms(dtype, rng):
    from ascend_sim.machine.dtypes import bfloat16
    dt = bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    ub0 = rng.integers(0, 255, UB_BYTES).astype(np.uint8)
    value = np.array([7]).astype(dt)[0]

    def body(ub):
        Duplicate(tensor(ub, DST, dt), value, 300)
        Duplicate(tensor(ub, SRC0, dt), value, [0xFF00FF00FF00FF00, 0xF], 3, 2, 20)
    got, _ = run_on_ub(body, ub0)
    want = repeat_op(ub0, lambda: value, (DST, dt, 1, 8), [], 0, "counter", 300)
    want = repeat_op(want, lambda: value, (SRC0, dt, 2, 20), [], 3, "bits", [0xFF00FF00FF00FF00, 0xF])
    assert_ub_equal(got, want, dt)


@settings(max_examples=16, deadline=None)
@given(st.sampled_from(list(BINARY)), st.sampled_from([np.float16, np.float32, np.int16, np.int32]),
       st.integers(0, 5), st.tuples(*[st.integers(1, 3)] * 3), st.tuples(*[st.integers(0, 12)] * 3),
       st.one_of(st.integers(0, 140), st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=2)),
       st.integers(0, 2**31))
def test_binary_property(name, dtype, repeat, blk, rep, mask, seed):
    if name == "Div" and np.dtype(dtype).kind == "i":
        dtype = np.float32  # Div takes half/float only
    run_binary(name, dtype, mask, repeat, BinaryRepeatParams(*blk, *rep), np.random.default_rng(seed))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(list(UNARY)), st.sampled_from([np.float16, np.float32]), st.integers(0, 4),
       st.integers(1, 4), st.integers(1, 4), st.integers(0, 16), st.integers(0, 16), st.integers(0, 130),
       st.integers(0, 2**31))
def test_unary_property(name, dtype, repeat, dblk, sblk, drep, srep, mask, seed):
    rng = np.random.default_rng(seed)
    ub0 = ub_values(dtype, rng, positive=name == "Ln")
    params = UnaryRepeatParams(dblk, sblk, drep, srep)
    got, _ = run_on_ub(lambda ub: UNARY[name](tensor(ub, DST, dtype), tensor(ub, SRC0, dtype), mask, repeat,
                                              params), ub0)
    want = repeat_op(ub0, scalar_fn(name, dtype), (DST, dtype, dblk, drep), [(SRC0, dtype, sblk, srep)], repeat,
                     "count", mask)
    assert_ub_equal(got, want, dtype, transcendental=name in ("Exp", "Ln"))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(list(SCALAR)), st.sampled_from([np.float16, np.float32, np.int16, np.int32]),
       st.integers(0, 4), st.integers(1, 4), st.integers(0, 4), st.integers(0, 16), st.integers(0, 16),
       st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=2), st.integers(-50, 50), st.integers(0, 2**31))
def test_scalar_property(name, dtype, repeat, dblk, sblk, drep, srep, mask, value, seed):
    base, api = SCALAR[name]
    ub0 = ub_values(dtype, np.random.default_rng(seed))
    scalar = np.array([value / 4 if np.dtype(dtype).kind == "f" else value]).astype(dtype)[0]
    params = UnaryRepeatParams(dblk, sblk, drep, srep)
    got, _ = run_on_ub(lambda ub: api(tensor(ub, DST, dtype), tensor(ub, SRC0, dtype), scalar, mask, repeat, params),
                       ub0)
    fn = scalar_fn(base, dtype)
    want = repeat_op(ub0, lambda a: fn(a, scalar), (DST, dtype, dblk, drep), [(SRC0, dtype, sblk, srep)], repeat,
                     "bits", mask)
    assert_ub_equal(got, want, dtype)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([np.float16, np.float32, np.int16, np.uint32]), st.integers(0, 5), st.integers(1, 4),
       st.integers(0, 16), st.one_of(st.integers(0, 140), st.lists(st.integers(0, 2**64 - 1), min_size=2,
                                                                     max_size=2)), st.integers(0, 2**31))
def test_duplicate_property(dtype, repeat, blk, rep, mask, seed):
    ub0 = np.random.default_rng(seed).integers(0, 255, UB_BYTES).astype(np.uint8)
    value = np.array([5]).astype(dtype)[0]
    got, _ = run_on_ub(lambda ub: Duplicate(tensor(ub, DST, dtype), value, mask, repeat, blk, rep), ub0)
    want = repeat_op(ub0, lambda: value, (DST, dtype, blk, rep), [], repeat,
                     "bits" if isinstance(mask, list) else "count", mask)
    assert_ub_equal(got, want, dtype)


# ------------------------------------------------------------------------------------------ faults
def _fault(body):
    return run_on_ub(body, np.zeros(UB_BYTES, np.uint8))


def test_unsupported_dtypes_fault_with_the_allowed_list():
    with pytest.raises(ParameterOutOfRange, match="Div on A2/A3 takes dst dtype float16/float32, got int32"):
        _fault(lambda ub: Div(tensor(ub, 0, np.int32), tensor(ub, 256, np.int32), tensor(ub, 512, np.int32), 64))
    with pytest.raises(ParameterOutOfRange, match="bfloat16"):
        _fault(lambda ub: Add(tensor(ub, 0, "bfloat16"), tensor(ub, 256, "bfloat16"), tensor(ub, 512, "bfloat16"),
                              64))
    with pytest.raises(ParameterOutOfRange, match="src1 dtype float16 differs from dst dtype float32"):
        _fault(lambda ub: Add(tensor(ub, 0, np.float32), tensor(ub, 256, np.float32), tensor(ub, 512, np.float16),
                              64))


@pytest.mark.parametrize("params, repeat, match", [
    (BinaryRepeatParams(), 256, r"repeatTime=256 outside \[0, 255\]"),
    (BinaryRepeatParams(dstRepStride=256), 1, r"dstRepStride=256 outside \[0, 255\]"),
    (BinaryRepeatParams(dstBlkStride=0), 1, r"dstBlkStride=0 outside \[1, 255\]"),
])
def test_parameters_out_of_range_fault(params, repeat, match):
    with pytest.raises(ParameterOutOfRange, match=match) as info:
        _fault(lambda ub: Add(tensor(ub, 0, np.float16), tensor(ub, 256, np.float16), tensor(ub, 512, np.float16),
                              128, repeat, params))
    assert info.value.instruction == "Add" and "test_vector_elementwise.py" in info.value.source


def test_counts_beyond_ub_fault_before_any_work():
    with pytest.raises(ParameterOutOfRange, match=r"count=100000 elements outside \[0, 98304\]"):
        _fault(lambda ub: Exp(tensor(ub, 0, np.float16), tensor(ub, 0, np.float16), 100000))

    def counter_mode_with_a_full_mask(ub):
        SetMaskCount()  # the mask register still holds all ones: a count of 2^64 - 1
        Exp(tensor(ub, 0, np.float32), tensor(ub, 0, np.float32), MASK_PLACEHOLDER, 1, UnaryRepeatParams(),
            isSetMask=False)
    with pytest.raises(ParameterOutOfRange, match=r"Counter-mode mask count=18446744073709551615 elements outside"):
        _fault(counter_mode_with_a_full_mask)


def test_overlaps_the_docs_do_not_support_fault():
    # within a repeat, dst and a source overlap in part: dst is src shifted by 64 elements (4 blocks)
    with pytest.raises(ParameterOutOfRange, match="repeat 0: dst overlaps src only in part") as info:
        _fault(lambda ub: Adds(tensor(ub, 128, np.float16), tensor(ub, 0, np.float16), np.float16(1), 256))
    assert info.value.buffer == "UB" and info.value.addr_range == (128, 640)
    # across repeats: repeat r + 1 reads src0 where repeat r wrote dst (dst = src0 shifted by one repeat)
    with pytest.raises(ParameterOutOfRange, match="a later repeat reads src0 where an earlier repeat wrote dst"):
        _fault(lambda ub: Add(tensor(ub, 256, np.float32), tensor(ub, 0, np.float32), tensor(ub, 4096, np.float32),
                              64, 3, BinaryRepeatParams()))
    # the accumulate exception needs src1 (not src0) with a zero repeat stride
    with pytest.raises(ParameterOutOfRange, match="a later repeat reads src0"):
        _fault(lambda ub: Add(tensor(ub, 0, np.float32), tensor(ub, 0, np.float32), tensor(ub, 4096, np.float32),
                              64, 3, BinaryRepeatParams(1, 1, 1, 0, 0, 8)))
    with pytest.raises(ParameterOutOfRange, match="a later repeat reads src"):  # not for Exp
        _fault(lambda ub: Exp(tensor(ub, 0, np.float32), tensor(ub, 0, np.float32), 64, 3,
                              UnaryRepeatParams(1, 1, 0, 0)))


def test_misaligned_and_out_of_bounds_operands_fault():
    with pytest.raises(Misaligned, match="src0 address 2 in UB is not a multiple of 32"):
        _fault(lambda ub: Add(tensor(ub, 0, np.float16), tensor(ub, 2, np.float16), tensor(ub, 512, np.float16), 128))
    with pytest.raises(OutOfBounds, match="UB"):  # 255 repeats 255 blocks apart run far past the 192 KB UB
        _fault(lambda ub: Add(tensor(ub, 0, np.float16), tensor(ub, 512, np.float16), tensor(ub, 512, np.float16),
                              128, 255, BinaryRepeatParams(1, 1, 1, 255, 0, 0)))


def test_operand_outside_ub_faults():
    def kernel(x):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 1024)
        Add(buf.Get(np.float16), GlobalTensor(np.float16).SetGlobalBuffer(x), buf.Get(np.float16), 128)
    with pytest.raises(ParameterOutOfRange, match="src0 is in GlobalTensor; Add takes src0 in UB"):
        run_aiv(kernel, np.zeros(128, np.float16))


def test_vector_read_racing_the_mte2_write_is_a_race_fault():
    def kernel(x):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 4096)
        ub = buf.Get(np.float16)
        DataCopy(ub, GlobalTensor(np.float16).SetGlobalBuffer(x), 1024)
        Exp(ub[1024], ub, 128)  # no SetFlag/WaitFlag MTE2_V: V may read before MTE2 has written
    with pytest.raises(RaceFault, match="read of UB") as info:
        run_aiv(kernel, np.zeros(1024, np.float16))
    assert info.value.pipe == "V" and info.value.instruction == "Exp"
