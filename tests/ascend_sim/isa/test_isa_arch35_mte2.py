"""The Ascend 950's GM -> L1 conversions (DataCopy with Dn2NzParams, the 3510 Nd2NzParams) against the loop
references of tests/isa_reference_arch35.py and tests/isa_reference.py, over their parameter ranges."""
import isa_reference as ref
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from core_buffers import elems, fill, local
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip
from ascend_sim.ascendc import DataCopy, Dn2NzParams, GlobalTensor, Nd2NzParams, current_core
from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.tensor import GmAddr

A5, A2 = "Ascend950PR_9599", "Ascend910B2"
DTYPES = [float16, bfloat16, float32, hifloat8, float8_e4m3fn]


def run_one(body, gm_arrays=(), platform=A5):
    chip = Chip(platform, check_races=False)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]
    chip.launch(lambda: body(current_core(), [GmAddr(b) for b in bufs]), 1)
    return chip.cores[0]


def random_values(n, dtype, rng):
    """Small integers, exact in every dtype here (hifloat8 holds the integers up to 16 exactly)."""
    return rng.integers(-16, 17, n).astype(np.float32).astype(dtype)


@st.composite
def nz_walks(draw):
    """Parameters of one ND2NZ / DN2NZ move whose destination elements do not overlap."""
    dtype = draw(st.sampled_from(DTYPES))
    c0 = 32 // dtype.itemsize
    num = draw(st.integers(1, 3))
    n_value = draw(st.integers(1, 12))
    d_value = draw(st.integers(1, 3 * c0))
    n_stride = draw(st.integers(1, 3))
    c0_stride = draw(st.integers((n_value - 1) * n_stride + 1, (n_value - 1) * n_stride + 4))
    c1 = -(-d_value // c0)
    matrix_stride = 0 if num == 1 else c0 * draw(st.integers(c1 * c0_stride, c1 * c0_stride + 3))
    src_pitch = draw(st.integers(1, 40))
    src_matrix = draw(st.integers(0, 300))
    return dtype, (num, n_value, d_value, src_matrix, src_pitch, c0_stride, n_stride, matrix_stride)


def _run_walk(params_type, walk, dtype, seed):
    rng = np.random.default_rng(seed)
    num, n_value, d_value, src_matrix, src_pitch, c0_stride, n_stride, matrix_stride = walk
    rows = max(n_value, d_value)  # ND walks nValue rows of srcDValue, DN dValue rows
    src = random_values(num * src_matrix + (rows + 1) * (src_pitch + rows) + 64, dtype, rng)
    c0 = 32 // dtype.itemsize
    l1_size = num * matrix_stride + 3 * c0_stride * c0 + n_value * n_stride * c0 + 4 * c0 + 64
    l1_init = random_values(l1_size + (num - 1) * matrix_stride + 3 * c0_stride * c0, dtype, rng)

    def body(core, gm):
        fill(core, "L1", l1_init)
        DataCopy(local(core, "L1", dtype, 64), GlobalTensor(dtype).SetGlobalBuffer(gm[0])[5], params_type(*walk))

    core = run_one(body, [src])
    return core, src, l1_init


@settings(max_examples=60, deadline=None)
@given(case=nz_walks(), seed=st.integers(0, 2**16))
def test_dn2nz_matches_the_loop_reference(case, seed):
    dtype, walk = case
    core, src, l1_init = _run_walk(Dn2NzParams, walk, dtype, seed)
    expect = ref35.ref_dn2nz(l1_init, src, 64 // dtype.itemsize, 5, *walk, dtype.itemsize)
    assert np.array_equal(elems(core, "L1", dtype, l1_init.size).view(np.uint8), expect.view(np.uint8))


@settings(max_examples=40, deadline=None)
@given(case=nz_walks(), seed=st.integers(0, 2**16))
def test_nd2nz_arch35_matches_the_loop_reference(case, seed):
    dtype, walk = case
    core, src, l1_init = _run_walk(Nd2NzParams, walk, dtype, seed)
    expect = ref.ref_nd2nz(l1_init, src, 64 // dtype.itemsize, 5, *walk, dtype.itemsize)
    assert np.array_equal(elems(core, "L1", dtype, l1_init.size).view(np.uint8), expect.view(np.uint8))


def test_dn2nz_zero_insertion_of_the_dx_kernel():
    # the arch35 dx kernel for NCDHW dy with strideH = strideW = 2 (conv_bp_sub_func_load_gm_to_l1a.h):
    # dnNum = ho rows, nValue = wo, dValue = cout, srcDnMatrixStride = wo, srcDValue = do*ho*wo,
    # dstNzC0Stride = hoExpand * woExpand, dstNzNStride = strideW, dstNzMatrixStride = strideH * woExpand * c0
    cout, ho, wo, stride = 16, 3, 4, 2
    wo_exp, ho_exp = (wo - 1) * stride + 1, (ho - 1) * stride + 1
    dy = np.arange(1, cout * ho * wo + 1, dtype=np.float32).astype(float16)  # (cout, ho, wo), 1.. so zeros show
    l1_elems = ho_exp * wo_exp * 16

    def body(core, gm):
        fill(core, "L1", np.zeros(l1_elems, float16))  # the kernel's InitZeroValue of A1
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Dn2NzParams(ho, wo, cout, wo, ho * wo, ho_exp * wo_exp, stride, stride * wo_exp * 16))

    core = run_one(body, [dy])
    got = elems(core, "L1", float16, l1_elems).reshape(ho_exp, wo_exp, 16)  # NC1HWC0 with C1 = 1
    expanded = np.zeros((cout, ho_exp, wo_exp), np.float32)
    expanded[:, ::stride, ::stride] = dy.astype(np.float32).reshape(cout, ho, wo)  # zero insertion, by numpy
    np.testing.assert_array_equal(got.astype(np.float32), expanded.transpose(1, 2, 0))


def test_dn2nz_is_refused_on_arch_2201():
    def body(core, gm):
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Dn2NzParams(1, 16, 16, 0, 16, 16, 1, 0))

    with pytest.raises(ParameterOutOfRange, match="Dn2NzParams does not exist on arch 2201"):
        run_one(body, [np.zeros(256, float16)], platform=A2)


@pytest.mark.parametrize("field,value,match", [
    ("dnNum", 4096, r"dnNum=4096 outside \[0, 4095\]"), ("nValue", 16385, "nValue=16385"),
    ("dValue", 2**21, "dValue=2097152"), ("srcDValue", 0, r"srcDValue=0 outside \[1, "),
    ("dstNzC0Stride", 0, "dstNzC0Stride=0"), ("dstNzNStride", 16385, "dstNzNStride=16385"),
    ("dstNzMatrixStride", 24, "dstNzMatrixStride=24 elements is not a whole number of 32-byte blocks")])
def test_dn2nz_faults_name_the_parameter(field, value, match):
    params = Dn2NzParams(2, 4, 16, 64, 16, 4, 1, 64)
    setattr(params, field, value)

    def body(core, gm):
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]), params)

    with pytest.raises(ParameterOutOfRange, match=match):
        run_one(body, [np.zeros(512, float16)])


def test_dn2nz_needs_l1_and_one_dtype():
    def to_l0a(core, gm):
        DataCopy(local(core, "L0A", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Dn2NzParams(1, 16, 16, 0, 16, 16, 1, 0))

    def converting(core, gm):
        DataCopy(local(core, "L1", float32), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Dn2NzParams(1, 16, 16, 0, 16, 16, 1, 0))

    with pytest.raises(ParameterOutOfRange, match="dst is in L0A"):
        run_one(to_l0a, [np.zeros(256, float16)])
    with pytest.raises(ParameterOutOfRange, match="does not convert"):
        run_one(converting, [np.zeros(256, float16)])


def test_nd2nz_3510_ranges_differ_from_2201():
    # the dx kernel's NDHWC srcNdMatrixStride = wo * cout passes 65535 on the 950's wider struct
    src = np.zeros(70000 + 64, float16)

    def wide(core, gm):
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Nd2NzParams(2, 1, 16, 70000, 16, 1, 1, 16))

    run_one(wide, [src])
    with pytest.raises(ParameterOutOfRange, match="srcNdMatrixStride=70000"):
        run_one(wide, [src], platform=A2)

    def zero_c0_stride(core, gm):
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Nd2NzParams(1, 1, 16, 0, 16, 0, 1, 0))

    with pytest.raises(ParameterOutOfRange, match=r"dstNzC0Stride=0 outside \[1, 16384\]"):
        run_one(zero_c0_stride, [src])


@st.composite
def small_c0_walks(draw):
    dtype = draw(st.sampled_from(DTYPES))
    c0 = 32 // dtype.itemsize
    num = draw(st.integers(1, 3))
    n_value = draw(st.integers(1, 20))
    d_value = draw(st.integers(1, 4))
    rows = -(-n_value * 4 // c0) * c0
    matrix_stride = 0 if num == 1 else c0 * draw(st.integers(rows // c0, rows // c0 + 2))
    return dtype, (num, n_value, d_value, draw(st.integers(0, 300)), draw(st.integers(n_value, 40)), 1, 1,
                   matrix_stride)


@settings(max_examples=50, deadline=None)
@given(case=small_c0_walks(), seed=st.integers(0, 2**16))
def test_dn2nz_small_c0_matches_the_loop_reference(case, seed):
    # DataCopy<T, true>: 4 elements a row, zero-padded from dValue, the matrix's end padded to 32 bytes (C04's dy)
    dtype, walk = case
    num, n_value, d_value, src_matrix, src_pitch, _, _, matrix_stride = walk
    rng = np.random.default_rng(seed)
    src = random_values(num * src_matrix + 4 * src_pitch + 64, dtype, rng)
    rows = -(-n_value * 4 // (32 // dtype.itemsize)) * (32 // dtype.itemsize)  # one matrix, padded to 32 bytes
    l1_init = random_values(64 + num * max(matrix_stride, rows) + 64, dtype, rng)

    def body(core, gm):
        fill(core, "L1", l1_init)
        DataCopy(local(core, "L1", dtype, 64), GlobalTensor(dtype).SetGlobalBuffer(gm[0])[5], Dn2NzParams(*walk),
                 enableSmallC0=True)

    core = run_one(body, [src])
    expect = ref35.ref_dn2nz_small_c0(l1_init, src, 64 // dtype.itemsize, 5, num, n_value, d_value, src_matrix,
                                      src_pitch, matrix_stride, dtype.itemsize)
    assert np.array_equal(elems(core, "L1", dtype, l1_init.size).view(np.uint8), expect.view(np.uint8))


def test_dn2nz_small_c0_takes_at_most_4_rows():
    def body(core, gm):
        DataCopy(local(core, "L1", float16), GlobalTensor(float16).SetGlobalBuffer(gm[0]),
                 Dn2NzParams(1, 16, 5, 0, 16, 1, 1, 0), enableSmallC0=True)

    with pytest.raises(ParameterOutOfRange, match="dValue=5 with enableSmallC0: the SmallC0 mode takes dValue <= 4"):
        run_one(body, [np.zeros(256, float16)])
