"""The Ascend 950's Fixpipe (FixpipeParamsArch3510: NZ2ND, NZ2DN, NZ to GM, L0C -> UB; F322F16, F322BF16,
QF322HIF8_PRE, QF322FP8_PRE) against the loop reference of tests/isa_reference_arch35.py."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from core_buffers import fill, local
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_COLUMN_MAJOR, CFG_COLUMN_MAJOR_UB, CFG_NZ, CFG_ROW_MAJOR, Fixpipe,
                                FixpipeParamsArch3510, GlobalTensor, LocalTensor, Nz2DnParams, Nz2NdParams, QuantMode_t,
                                SetAtomicAdd, current_core)
from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.tensor import GmAddr

A5, A2 = "Ascend950PR_9599", "Ascend910B2"
OUT = {"NoQuant": float32, "F322F16": float16, "F322BF16": bfloat16, "QF322HIF8_PRE": hifloat8,
       "QF322FP8_PRE": float8_e4m3fn}
LARGEST = {"QF322HIF8_PRE": 32768.0, "QF322FP8_PRE": 448.0}
CONFIG = {"ND": CFG_ROW_MAJOR, "DN": CFG_COLUMN_MAJOR, "NZ": CFG_NZ}


def run_one(body, gm_arrays=(), platform=A5):
    chip = Chip(platform, check_races=False)
    bufs = [chip.gm.upload(f"g{i}", a) for i, a in enumerate(gm_arrays)]
    chip.launch(lambda: body(current_core(), [GmAddr(b) for b in bufs]), 1)
    return chip.cores[0], bufs


def scale_of(bits):
    """The scale the hardware uses: the fp32 in bits with its low 13 mantissa bits cleared (the doc's note)."""
    return float(np.array([bits & 0xFFFFE000], np.uint32).view(np.float32)[0])


def converter(quant, scale):
    out = OUT[quant]
    if quant in LARGEST:
        return lambda x: ref35.saturate_then_cast(np.float32(x) * np.float32(scale), out, LARGEST[quant])
    return lambda x: np.array([x], np.float32).astype(out)[0]


@st.composite
def fixpipe_cases(draw):
    layout = draw(st.sampled_from(["ND", "DN", "NZ"]))
    quant = draw(st.sampled_from(list(OUT) if layout != "NZ" else ["NoQuant", "F322F16", "F322BF16"]))
    m = draw(st.integers(1, 40))
    n = 16 * draw(st.integers(1, 3)) if layout == "NZ" else draw(st.integers(1, 40))
    c0_stride = draw(st.sampled_from([1, 2])) if layout == "DN" else 1
    src_stride = draw(st.integers(m * c0_stride, m * c0_stride + 5))
    dst_stride = draw(st.integers(*{"ND": (n, n + 5), "DN": (m, m + 5), "NZ": (m * 16, m * 16 + 40)}[layout]))
    num = 1 if layout == "NZ" else draw(st.integers(1, 2))
    n1 = -(-n // 16)
    src_matrix = draw(st.integers(n1 * src_stride, n1 * src_stride + 8)) if num > 1 else 0
    rows = m if layout == "ND" else n
    dst_matrix = draw(st.integers(rows * dst_stride, rows * dst_stride + 9)) if num > 1 else 0
    scale_bits = draw(st.sampled_from([0x3F800000, 0x3F000000, 0x40400000, 0x3F801FFF, 0x3FC01234]))
    return layout, quant, m, n, c0_stride, src_stride, dst_stride, num, src_matrix, dst_matrix, scale_bits


def _params(layout, quant, m, n, c0_stride, src_stride, dst_stride, num, src_matrix, dst_matrix, scale_bits):
    sub = {"ND": Nz2NdParams(num, src_matrix, dst_matrix), "DN": Nz2DnParams(num, src_matrix, dst_matrix, c0_stride),
           "NZ": None}[layout]
    return FixpipeParamsArch3510(nSize=n, mSize=m, srcStride=src_stride, dstStride=dst_stride,
                                 quantPre=QuantMode_t[quant], deqScalar=scale_bits, params=sub)


@settings(max_examples=60, deadline=None)
@given(case=fixpipe_cases(), seed=st.integers(0, 2**16))
def test_fixpipe_3510_to_gm_matches_the_loop_reference(case, seed):
    layout, quant, m, n, c0_stride, src_stride, dst_stride, num, src_matrix, dst_matrix, scale_bits = case
    rng = np.random.default_rng(seed)
    out = OUT[quant]
    l0c = (rng.standard_normal(16384) * 60).astype(np.float32)
    if quant in LARGEST:  # values the 8-bit types must saturate: beyond the largest, infinities, NaN
        l0c[::11] = rng.choice([1e6, -1e6, np.inf, -np.inf, np.nan, 500.0, -40000.0], l0c[::11].size)
    gm_init = rng.integers(0, 256, 20000 * out.itemsize, dtype=np.uint8).view(out)

    def body(core, gm):
        fill(core, "L0C", l0c)
        Fixpipe(GlobalTensor(out).SetGlobalBuffer(gm[0])[64], local(core, "L0C", float32), _params(*case),
                CONFIG[layout])

    _, bufs = run_one(body, [gm_init])
    expect = ref35.ref_fixpipe_3510(gm_init, l0c, 64, 0, n, m, src_stride, dst_stride, layout, num, src_matrix,
                                    dst_matrix, c0_stride, converter(quant, scale_of(scale_bits)))
    assert np.array_equal(bufs[0].data.view(np.uint8)[:expect.nbytes], expect.view(np.uint8))


def test_fixpipe_3510_nz2dn_writes_the_transpose_like_numpy():
    # an NZ L0C block of C (m x n) written NZ2DN with dstStride = m is C^T row by row: NCDHW straight out
    m, n = 24, 40
    c = np.arange(m * n, dtype=np.float32).reshape(m, n) / 8
    n1 = -(-n // 16)
    nz = np.zeros((n1, 32, 16), np.float32)  # srcStride 32 = AlignUp16(m)
    for j in range(n1):
        block = c[:, j * 16:(j + 1) * 16]
        nz[j, :m, :block.shape[1]] = block

    def body(core, gm):
        fill(core, "L0C", nz.reshape(-1))
        Fixpipe(GlobalTensor(float16).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=n, mSize=m, srcStride=32, dstStride=m, quantPre=QuantMode_t.F322F16,
                                      params=Nz2DnParams(1, 0, 0, 1)), CFG_COLUMN_MAJOR)

    _, bufs = run_one(body, [np.zeros(m * n, float16)])
    np.testing.assert_array_equal(bufs[0].data.view(float16).reshape(n, m), c.T.astype(float16))


def test_fixpipe_3510_8bit_rounding_and_saturation_by_value():
    # hifloat8 rounds half away from zero (1.0625 -> 1.125; 464 -> 512: 1 mantissa bit at 2^8), saturates past
    # 32768 and inf, NaN -> 0;
    # float8_e4m3fn rounds to nearest even (1.0625 -> 1.0) and saturates at 448
    values = np.array([1.0625, -1.0625, 40960.0, np.inf, np.nan, 464.0, 1000.0, -np.inf] + [0.0] * 8, np.float32)
    hif8 = {1.0625: 1.125, -1.0625: -1.125, 40960.0: 32768.0, np.inf: 32768.0, 464.0: 512.0, 1000.0: 1024.0,
            -np.inf: -32768.0}
    fp8 = {1.0625: 1.0, -1.0625: -1.0, 40960.0: 448.0, np.inf: 448.0, 464.0: 448.0, 1000.0: 448.0, -np.inf: -448.0}
    for quant, table in (("QF322HIF8_PRE", hif8), ("QF322FP8_PRE", fp8)):
        out = OUT[quant]

        def body(core, gm):
            fill(core, "L0C", values)
            Fixpipe(GlobalTensor(out).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                    FixpipeParamsArch3510(nSize=16, mSize=1, srcStride=1, dstStride=16, quantPre=QuantMode_t[quant],
                                          deqScalar=0x3F800000))

        _, bufs = run_one(body, [np.zeros(16, out)])
        got = bufs[0].data.view(out).astype(np.float32)
        expect = [table.get(float(v), 0.0) if v == v else 0.0 for v in values[:8]]
        np.testing.assert_array_equal(got[:8], np.array(expect, np.float32))


def test_fixpipe_3510_scale_uses_a_10_bit_mantissa():
    # deqScalar 0x3F801FFF = 1 + 8191 * 2^-23: the low 13 bits are dropped, so the scale is exactly 1.0
    def body(core, gm):
        fill(core, "L0C", np.full(16, 3.0, np.float32))
        Fixpipe(GlobalTensor(float8_e4m3fn).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=16, mSize=1, srcStride=1, dstStride=16,
                                      quantPre=QuantMode_t.QF322FP8_PRE, deqScalar=0x3F801FFF))

    _, bufs = run_one(body, [np.zeros(16, float8_e4m3fn)])
    assert np.all(bufs[0].data.view(float8_e4m3fn).astype(np.float32) == 3.0)


def test_fixpipe_3510_to_ub_column_major():
    m, n = 16, 32
    c = np.arange(m * n, dtype=np.float32)
    nz = c.reshape(m, 2, 16).transpose(1, 0, 2).reshape(-1)  # two 16 x 16 column blocks, srcStride 16
    ub = Buffer("UB", 4096, 32)  # stands for the vector core's UB (the chip's wiring: test_l0c_to_ub_wiring.py)

    def body(core, gm):
        fill(core, "L0C", nz)
        Fixpipe(LocalTensor(ub, 0, float32, 1024, "UB"), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=n, mSize=m, srcStride=16, dstStride=m, params=Nz2DnParams(1, 0, 0, 1)),
                CFG_COLUMN_MAJOR_UB)

    run_one(body)
    np.testing.assert_array_equal(ub.view(float32, 0, m * n).reshape(n, m), c.reshape(m, n).T)


def test_fixpipe_3510_atomic_add_into_gm():
    def body(core, gm):
        fill(core, "L0C", np.full(16, 2.0, np.float32))
        SetAtomicAdd(float32)
        Fixpipe(GlobalTensor(float32).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=16, mSize=1, srcStride=1, dstStride=16))

    _, bufs = run_one(body, [np.full(16, 1.5, np.float32)])
    assert np.all(bufs[0].data.view(np.float32) == 3.5)


def _body(params, config=CFG_ROW_MAJOR, out=float16):
    def body(core, gm):
        Fixpipe(GlobalTensor(out).SetGlobalBuffer(gm[0]), local(core, "L0C", float32), params, config)
    return body


@pytest.mark.parametrize("fields,config,out,match", [
    ({"nSize": 4096}, CFG_ROW_MAJOR, float16, r"nSize=4096 outside \[0, 4095\]"),
    ({"dstStride": 0}, CFG_ROW_MAJOR, float16, r"dstStride=0 outside \[1, "),
    ({"params": Nz2DnParams(1, 0, 0, 0)}, CFG_COLUMN_MAJOR, float16, r"srcNzC0Stride=0 outside \[1, 65535\]"),
    ({"params": Nz2DnParams(1, 0, 0, 2), "unitFlag": 2, "srcStride": 32}, CFG_COLUMN_MAJOR, float16,
     "unitFlag=2 with NZ2DN and srcNzC0Stride=2"),
    ({"params": Nz2NdParams(1, 0, 0)}, CFG_COLUMN_MAJOR, float16, "NZ2DN takes Nz2DnParams"),
    ({"quantPre": QuantMode_t.QF322HIF8_PRE}, CFG_ROW_MAJOR, float16, "writes hifloat8 but dst is float16"),
    ({"quantPre": QuantMode_t.QF322FP8_PRE, "deqScalar": 0x7F800000}, CFG_ROW_MAJOR, float8_e4m3fn,
     "may not be inf, NaN or denormal"),
    ({"quantPre": QuantMode_t.QF322FP8_PRE, "deqScalar": 0x3F800000}, CFG_NZ, float8_e4m3fn,
     "NZ output needs nSize"),
    ({"srcStride": 1, "mSize": 20, "nSize": 32}, CFG_ROW_MAJOR, float16, "srcStride=1 .* shorter than mSize=20")])
def test_fixpipe_3510_faults_name_the_parameter(fields, config, out, match):
    params = FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre=QuantMode_t.F322F16)
    if out != float16:
        params.quantPre = QuantMode_t.QF322FP8_PRE
    for field, value in fields.items():
        setattr(params, field, value)
    with pytest.raises(ParameterOutOfRange, match=match):
        run_one(_body(params, config, out), [np.zeros(4096, out)])


def test_fixpipe_3510_is_refused_on_arch_2201():
    params = FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre=QuantMode_t.F322F16)
    with pytest.raises(ParameterOutOfRange, match="FixpipeParamsArch3510 does not exist on arch 2201"):
        run_one(_body(params), [np.zeros(4096, float16)], platform=A2)


def test_8bit_quant_with_the_v220_struct_names_arch_3510():
    from ascend_sim.ascendc import FixpipeParamsV220

    def body(core, gm):
        Fixpipe(GlobalTensor(hifloat8).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=16,
                                  quantPre=QuantMode_t.QF322HIF8_PRE))

    with pytest.raises(ParameterOutOfRange, match="exists on arch 3510 only, with FixpipeParamsArch3510"):
        run_one(body, [np.zeros(256, hifloat8)], platform=A2)


def test_fixpipe_3510_cycles_follow_table_8():
    # Cube指令理论性能汇总.md table 8: fp32 out 32 elements / cycle, 16-bit 64, NZ2DN with srcNzC0Stride 2 a quarter;
    # into GM the bytes at the GM write rate may be the slower part
    from ascend_sim.machine.platform import get_platform

    def cycles(quant, out, config, sub):
        def body(core, gm):
            Fixpipe(GlobalTensor(out).SetGlobalBuffer(gm[0]), local(core, "L0C", float32),
                    FixpipeParamsArch3510(nSize=64, mSize=64, srcStride=128, dstStride=64, quantPre=quant,
                                          params=sub), config)

        core, _ = run_one(body, [np.zeros(1 << 16, out)])
        return [r for r in core.log if r.name == "Fixpipe(Arch3510)"][0].cycles

    overhead = get_platform(A5).rates.fixpipe_overhead
    elems = 64 * 64
    assert cycles(QuantMode_t.NoQuant, float32, CFG_ROW_MAJOR, None) - overhead >= elems / 32
    assert cycles(QuantMode_t.F322F16, float16, CFG_ROW_MAJOR, None) - overhead >= elems / 64
    strided = cycles(QuantMode_t.F322F16, float16, CFG_COLUMN_MAJOR, Nz2DnParams(1, 0, 0, 2)) - overhead
    assert strided == pytest.approx(elems / 16)
