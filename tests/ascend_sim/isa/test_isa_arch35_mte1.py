"""The Ascend 950's L1 -> L0A / L0B loads (LoadData with LoadData2DParamsV2; LoadDataWithStride) against the loop
references of tests/isa_reference_arch35.py, over their parameter ranges."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from core_buffers import elems, fill, local
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip
from ascend_sim.ascendc import (LoadData, LoadData2DParamsV2, LoadData3DParamsV2, LoadDataRepeatParamWithStride,
                                LoadDataWithStride, SetLoadDataRepeatWithStride, current_core)
from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from ascend_sim.machine.faults import OutOfBounds, ParameterOutOfRange

A5, A2 = "Ascend950PR_9599", "Ascend910B2"
DTYPES = [float16, bfloat16, float32, hifloat8, float8_e4m3fn]


def run_one(body, platform=A5):
    chip = Chip(platform, check_races=False)
    chip.launch(lambda: body(current_core()), 1)
    return chip.cores[0]


def random_words(n, dtype, rng):
    """Arbitrary bit patterns, so that every moved byte is checked (compared as bytes, never as floats)."""
    return rng.integers(0, 256, n * dtype.itemsize, dtype=np.uint8).view(dtype)


@st.composite
def load2d_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    transpose = draw(st.booleans())
    m_step = draw(st.integers(1, 4))
    k_step = draw(st.integers(1, 4))
    if transpose and dtype.itemsize == 1:
        m_step += m_step % 2
    if transpose and dtype.itemsize == 4:
        k_step += k_step % 2
    src_stride = draw(st.integers(-6, 6))
    k_start = draw(st.integers(0, 3))
    m_start = draw(st.integers(0, 3))
    if k_start * abs(src_stride) + m_start + (k_step - 1) * min(src_stride, 0) < 0:  # would walk before src
        m_start += (k_step - 1) * abs(src_stride)
    dst_stride = draw(st.integers(m_step, m_step + 3))
    return dtype, (m_start, k_start, m_step, k_step, src_stride, dst_stride, transpose)


@settings(max_examples=80, deadline=None)
@given(case=load2d_cases(), target=st.sampled_from(["L0A", "L0B"]), seed=st.integers(0, 2**16))
def test_load2d_v2_matches_the_loop_reference(case, target, seed):
    dtype, p = case
    rng = np.random.default_rng(seed)
    per = 512 // dtype.itemsize
    l1 = random_words(64 * per, dtype, rng)
    l0 = random_words(32 * per, dtype, rng)

    def body(core):
        fill(core, "L1", l1)
        fill(core, target, l0)
        LoadData(local(core, target, dtype, 1024), local(core, "L1", dtype, 2048), LoadData2DParamsV2(*p))

    core = run_one(body)
    expect = ref35.ref_load2d_v2(l0, l1, 1024 // dtype.itemsize, 2048 // dtype.itemsize, *p, dtype.itemsize)
    assert np.array_equal(elems(core, target, dtype, l0.size).view(np.uint8), expect.view(np.uint8))


def test_load2d_v2_reverses_the_kernel_taps_like_the_dx_kernel():
    # REVERSE_ONLY (conv_bp_input_sub_func_load_l1_to_l0.h): the weight in L1 is NZ with hk*wk tap groups of
    # blockBaseN fractals; mStartPosition points at the last tap, srcStride = -blockBaseN walks them backwards
    taps, block_n = 3, 2
    w = np.arange(taps * block_n * 256, dtype=np.float32).astype(float16)  # fractal f holds 256*f .. 256*f+255

    def body(core):
        fill(core, "L1", w)
        LoadData(local(core, "L0B", float16), local(core, "L1", float16),
                 LoadData2DParamsV2(mStartPosition=(taps - 1) * block_n, kStartPosition=0, mStep=block_n,
                                    kStep=taps, srcStride=-block_n, dstStride=block_n))

    core = run_one(body)
    got = elems(core, "L0B", float16, w.size).reshape(taps, block_n, 256)
    np.testing.assert_array_equal(got, w.reshape(taps, block_n, 256)[::-1])  # the taps in reverse order


def test_load2d_v2_transposes_a_b16_fractal():
    a = np.arange(256, dtype=np.float32).astype(float16)

    def body(core):
        fill(core, "L1", a)
        LoadData(local(core, "L0A", float16), local(core, "L1", float16),
                 LoadData2DParamsV2(mStep=1, kStep=1, srcStride=1, dstStride=1, ifTranspose=True))

    np.testing.assert_array_equal(elems(run_one(body), "L0A", float16, 256).reshape(16, 16), a.reshape(16, 16).T)


def test_load2d_v2_is_refused_on_arch_2201():
    def body(core):
        LoadData(local(core, "L0A", float16), local(core, "L1", float16), LoadData2DParamsV2(mStep=1, kStep=1))

    with pytest.raises(ParameterOutOfRange, match="LoadData2DParamsV2 does not exist on arch 2201"):
        run_one(body, platform=A2)


@pytest.mark.parametrize("dtype,fields,match", [
    (float16, {"mStep": 256}, r"mStep=256 outside \[0, 255\]"),
    (float16, {"srcStride": -32769}, "srcStride=-32769"),
    (hifloat8, {"mStep": 3, "ifTranspose": True}, "mStep=3 must be even to transpose b8"),
    (float32, {"kStep": 1, "ifTranspose": True}, "kStep=1 must be even to transpose b32"),
    (float16, {"kStep": 2, "dstStride": 1, "mStep": 2}, "dstStride=1 is less than mStep=2"),
    (float16, {"kStep": 2, "srcStride": -1}, "srcStride=-1 walks 1 fractals before src")])
def test_load2d_v2_faults_name_the_parameter(dtype, fields, match):
    params = LoadData2DParamsV2(mStep=2, kStep=2, srcStride=2, dstStride=2)
    for field, value in fields.items():
        setattr(params, field, value)

    def body(core):
        LoadData(local(core, "L0A", dtype), local(core, "L1", dtype), params)

    with pytest.raises(ParameterOutOfRange, match=match):
        run_one(body)


def test_load2d_v2_wrong_positions_and_bounds():
    def from_l0b(core):
        LoadData(local(core, "L0A", float16), local(core, "L0B", float16), LoadData2DParamsV2(mStep=1, kStep=1))

    def past_l1(core):
        last = core.buffers["L1"].capacity - 512
        LoadData(local(core, "L0A", float16), local(core, "L1", float16, last),
                 LoadData2DParamsV2(mStep=2, kStep=1))

    with pytest.raises(ParameterOutOfRange, match="src is in L0B"):
        run_one(from_l0b)
    with pytest.raises(OutOfBounds):
        run_one(past_l1)


# ------------------------------------------------------------------------------------------ LoadDataWithStride
@st.composite
def img2col_cases(draw):
    target = draw(st.sampled_from(["L0A", "L0B"]))
    eight_bit = [hifloat8, float8_e4m3fn] if target == "L0A" else []  # the doc takes b8 into L0A only
    dtype = draw(st.sampled_from([float16, bfloat16, float32] + eight_bit))
    c0 = 32 // dtype.itemsize
    c1 = 2 if target == "L0B" and c0 == 8 else draw(st.integers(1, 2))  # fp32 into L0B: K in 16-column fractals
    fh, fw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    l1h = draw(st.integers((fh - 1) * dh + 1, 6))
    l1w = draw(st.integers(max(1, (fw - 1) * dw + 1 - pads[0] - pads[1]), 7))
    k_total = c1 * fh * fw * c0
    m_unit, k_unit = (c0, 16) if target == "L0B" else (16, c0)
    k_ext = k_unit * draw(st.integers(1, min(8, k_total // k_unit)))
    k_start = c0 * draw(st.integers(0, (k_total - k_ext) // c0))
    m_ext = m_unit * draw(st.integers(1, 3))
    m_start = draw(st.integers(0, 20))
    rows, cols = (m_ext // c0, k_ext // 16) if target == "L0B" else (m_ext // 16, k_ext // c0)
    inner = cols if target == "L0B" else rows  # fractals of one K step
    dst_stride = draw(st.integers(inner, inner + 3))
    params = LoadData3DParamsV2(padList=pads, l1H=l1h, l1W=l1w, channelSize=c1 * c0, kExtension=k_ext,
                                mExtension=m_ext, kStartPt=k_start, mStartPt=m_start, strideW=sw, strideH=sh,
                                filterW=fw, filterH=fh, dilationFilterW=dw, dilationFilterH=dh, padValue=0)
    return target, dtype, params, dst_stride


@settings(max_examples=40, deadline=None)
@given(case=img2col_cases(), seed=st.integers(0, 2**16))
def test_load_data_with_stride_matches_the_loop_reference(case, seed):
    target, dtype, p, dst_stride = case
    rng = np.random.default_rng(seed)
    fmap = random_words(p.channelSize * p.l1H * p.l1W, dtype, rng)
    l0 = random_words(64 * 512 // dtype.itemsize, dtype, rng)

    def body(core):
        fill(core, "L1", fmap)
        fill(core, target, l0)
        SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, dst_stride))
        LoadDataWithStride(local(core, target, dtype), local(core, "L1", dtype), p)

    core = run_one(body)
    expect = ref35.ref_load_data_with_stride(
        l0, fmap, 0, 0, p.l1H, p.l1W, p.padList, p.channelSize, p.kExtension, p.mExtension, p.kStartPt, p.mStartPt,
        p.strideW, p.strideH, p.filterW, p.filterH, p.dilationFilterW, p.dilationFilterH, np.zeros(1, dtype)[0],
        dst_stride, target, dtype.itemsize)
    assert np.array_equal(elems(core, target, dtype, l0.size).view(np.uint8), expect.view(np.uint8))


def _with_stride_body(dst_stride=None, **fields):
    params = LoadData3DParamsV2(**{"l1H": 2, "l1W": 16, "channelSize": 16, "kExtension": 16, "mExtension": 32, **fields})

    def body(core):
        if dst_stride is not None:
            SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, dst_stride))
        LoadDataWithStride(local(core, "L0A", float16), local(core, "L1", float16), params)
    return body


def test_load_data_with_stride_needs_the_repeat_register_and_arch_3510():
    with pytest.raises(ParameterOutOfRange, match="call SetLoadDataRepeatWithStride before"):
        run_one(_with_stride_body())
    with pytest.raises(ParameterOutOfRange, match="SetLoadDataRepeatWithStride does not exist on arch 2201"):
        run_one(_with_stride_body(2), platform=A2)


def test_load_data_with_stride_faults_name_the_parameter():
    with pytest.raises(ParameterOutOfRange, match="dstStride=1 fractals is less than the 2 fractals"):
        run_one(_with_stride_body(1, kExtension=32, channelSize=32))
    with pytest.raises(ParameterOutOfRange, match="strideW=64"):
        run_one(_with_stride_body(2, strideW=64))
    with pytest.raises(ParameterOutOfRange, match=r"repeatTime=2: LoadDataWithStride repeats are not modelled"):
        def repeat(core):
            SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 2, 0, 2))
        run_one(repeat)
    with pytest.raises(ParameterOutOfRange, match=r"repeatMode=2 outside \[0, 1\]"):
        def mode(core):
            SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 2, 2))
        run_one(mode)


def test_load_data_with_stride_b8_channel_rule():
    # b8 channelSize is 4, 8, 16, 32N, 32N+4, 32N+8 or 32N+16; 40 = 32+8 is legal but not modelled (32N and the
    # small sizes below C0 are)
    def body(channels):
        params = LoadData3DParamsV2(l1H=2, l1W=16, channelSize=channels, kExtension=32, mExtension=32)

        def run(core):
            SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, 2))
            LoadDataWithStride(local(core, "L0A", hifloat8), local(core, "L1", hifloat8), params)
        return run

    with pytest.raises(ParameterOutOfRange, match="channelSize=33 must be 4, 8, 16, 32N, 32N"):
        run_one(body(33))
    with pytest.raises(ParameterOutOfRange, match=r"channelSize=40: only multiples of C0=32 and the sizes below C0 "
                                                  r"are modelled \(not N\*32\+8\)"):
        run_one(body(40))
    run_one(body(32))


@pytest.mark.parametrize("stride_w,rows,rate", [(1, 1, 256), (1, 3, 102), (2, 1, 128), (2, 3, 73), (8, 20, 32),
                                                (3, 1, 32), (4, 1, 64)])
def test_load_data_with_stride_rate_is_table_6(stride_w, rows, rate):
    # Cube指令理论性能汇总.md table 6 (3510), worked by hand: [512 / (n + 2)], [512 / (2 strideW)],
    # [512 / (2 strideW + n)], never below 32; 32 for other strides
    from ascend_sim.isa.arch35.load3d_stride import load3d_rate_3510
    assert load3d_rate_3510(stride_w, rows) == rate


# a channelSize below C0 reads the small-C0 fmap (DN2NZ SmallC0 writes it); the legal sizes (LoadData_3D.md)
SMALL_CHANNELS = {2: (4, 8), 4: (4,), 1: (4, 8, 16)}


@st.composite
def small_channel_cases(draw):
    dtype = draw(st.sampled_from([float16, bfloat16, float32, hifloat8]))
    c0 = 32 // dtype.itemsize
    channels = draw(st.sampled_from(SMALL_CHANNELS[dtype.itemsize]))
    fh, fw = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    pads = tuple(draw(st.integers(0, 2)) for _ in range(4))
    l1h = draw(st.integers(fh, 6))
    l1w = draw(st.integers(max(1, fw - pads[0] - pads[1]), 7))
    width = fh * fw * channels  # the img2col's columns: not a multiple of C0 in general
    k_start = c0 * draw(st.integers(0, (width - 1) // c0))
    if draw(st.booleans()) or width - k_start < c0:  # the C04 tail: up to the last column, inside a fractal
        k_ext = width - k_start
    else:
        k_ext = c0 * draw(st.integers(1, (width - k_start) // c0))
    m_ext = 16 * draw(st.integers(1, 3))
    dst_stride = draw(st.integers(m_ext // 16, m_ext // 16 + 2))
    params = LoadData3DParamsV2(padList=pads, l1H=l1h, l1W=l1w, channelSize=channels, kExtension=k_ext,
                                mExtension=m_ext, kStartPt=k_start, mStartPt=draw(st.integers(0, 9)),
                                filterW=fw, filterH=fh, padValue=0)
    return dtype, params, dst_stride


@settings(max_examples=40, deadline=None)
@given(case=small_channel_cases(), seed=st.integers(0, 2**16))
def test_load_data_with_stride_small_channels_match_the_loop_reference(case, seed):
    # the C04 A side: a 4-channel fmap, K = hk*wk*4 ending inside its last fractal (the rest left as it was)
    dtype, p, dst_stride = case
    rng = np.random.default_rng(seed)
    fmap = random_words(p.channelSize * p.l1H * p.l1W + 32, dtype, rng)
    l0 = random_words(64 * 512 // dtype.itemsize, dtype, rng)

    def body(core):
        fill(core, "L1", fmap)
        fill(core, "L0A", l0)
        SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, dst_stride))
        LoadDataWithStride(local(core, "L0A", dtype), local(core, "L1", dtype), p)

    core = run_one(body)
    expect = ref35.ref_load_data_with_stride(
        l0, fmap, 0, 0, p.l1H, p.l1W, p.padList, p.channelSize, p.kExtension, p.mExtension, p.kStartPt, p.mStartPt,
        p.strideW, p.strideH, p.filterW, p.filterH, p.dilationFilterW, p.dilationFilterH, np.zeros(1, dtype)[0],
        dst_stride, "L0A", dtype.itemsize)
    assert np.array_equal(elems(core, "L0A", dtype, l0.size).view(np.uint8), expect.view(np.uint8))


def test_small_channels_are_refused_where_not_modelled():
    def load(target, channels, k_ext, k_start=0, platform_load=LoadDataWithStride):
        params = LoadData3DParamsV2(l1H=2, l1W=16, channelSize=channels, kExtension=k_ext, mExtension=16,
                                    kStartPt=k_start, filterW=3, filterH=3)

        def run(core):
            SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, 2))
            platform_load(local(core, target, float16), local(core, "L1", float16), params)
        return run

    with pytest.raises(ParameterOutOfRange, match=r"channelSize=4 \(below C0=16\) into L0B: only the small-C0 load "
                                                  "into L0A is modelled"):
        run_one(load("L0B", 4, 16))
    with pytest.raises(ParameterOutOfRange, match=r"channelSize=20: only multiples of C0=16 and the sizes below C0 "
                                                  r"are modelled \(not N\*16\+4\)"):
        run_one(load("L0A", 20, 16))
    # a window ending inside a fractal must reach the img2col's last column (36 = 3*3*4)
    with pytest.raises(ParameterOutOfRange, match="kExtension=4 of 16"):
        run_one(load("L0A", 4, 4, 16))
    run_one(load("L0A", 4, 4, 32))
