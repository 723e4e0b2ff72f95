"""Mmad on the Ascend 950 (arch 3510): A read from L0A as NZ fractals, hifloat8 / float8_e4m3fn operands, CTRL[45],
the fp32 and 8-bit cube rates, HF32 with 10 mantissa bits, bias from BT; and 8-bit operands refused on arch 2201.

The reference is a plain numpy loop: both operands decoded to float64 code by code, one outer product per k,
summed in float64 (or isa_reference_arch35.ref_mmad_nz, element by element from the L0A / L0B contents); the
simulator's fp32 sum must lie within the fp32 accumulation bound of it."""
import isa_reference as ref
import isa_reference_arch35 as ref35
import ml_dtypes
import numpy as np
import pytest
from core_buffers import elems, fill, local
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip
from ascend_sim.ascendc import Mmad, MmadParams, SetCtrlSpr, SetHF32Mode
from ascend_sim.engine.chip import current_core
from ascend_sim.isa.cube import MMAD
from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.passes.schedule import CostModel

A5 = "Ascend950PR_9589"
K0 = 32  # 8-bit K fractal
NONFINITE = {"hifloat8": (0x80, 0x6F, 0xEF), "float8_e4m3fn": (0x7F, 0xFF)}
EIGHT_BIT = {"hifloat8": hifloat8, "float8_e4m3fn": float8_e4m3fn}


def _run(body, platform=A5):
    chip = Chip(platform, check_races=False, record=True)
    chip.launch(lambda: body(current_core()), 1)
    return chip.cores[0]


def _finite_codes(rng, name, shape):
    codes = rng.integers(0, 256, shape).astype(np.uint8)
    for bad in NONFINITE[name]:
        codes[codes == bad] = 0x00
    return codes


def _exact_codes(rng, name, shape):
    """Codes of values in quarters up to +-8 (either sign): any sum of up to 4095 products is exact in fp32."""
    values = _decode64(np.arange(256, dtype=np.uint8), EIGHT_BIT[name])
    pool = np.flatnonzero(np.isfinite(values) & (np.abs(values) <= 8) & (values * 4 == np.round(values * 4)))
    return pool[rng.integers(0, pool.size, shape)].astype(np.uint8)


def _decode64(codes, dtype) -> np.ndarray:
    """Code by code, through the package's scalar conversion (not the simulator's table)."""
    return np.array([float(np.uint8(c).view(dtype)) for c in codes.reshape(-1)], np.float64).reshape(codes.shape)


def _loop_mmad(a64, b64, bias=None):
    """C = sum over k of outer(A[:, k], B[k, :]) in float64 (+ a bias row)."""
    m, k = a64.shape
    acc = np.zeros((m, b64.shape[1])) if bias is None else np.tile(np.asarray(bias, np.float64), (m, 1))
    for kk in range(k):
        acc += np.outer(a64[:, kk], b64[kk, :])
    return acc


def _mmad_8bit(name, a_codes, b_codes, m, n, k, **params):
    dtype = EIGHT_BIT[name]

    def body(core):
        fill(core, "L0A", ref35.make_l0a_nz(a_codes, K0) if m > 1 else a_codes.reshape(-1))
        fill(core, "L0B", ref.make_zn(b_codes, K0))
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", dtype), local(core, "L0B", dtype),
             MmadParams(m, n, k, **params))
    core = _run(body)
    return core, ref.read_nz(elems(core, "L0C", np.float32, 65536), m, n)


@pytest.mark.parametrize("name", ["hifloat8", "float8_e4m3fn"])
@settings(max_examples=15, deadline=None)
@given(m=st.integers(2, 40), n=st.integers(1, 40), k=st.integers(1, 100), seed=st.integers(0, 2**16))
def test_8bit_mmad_matches_the_loop_reference(name, m, n, k, seed):
    rng = np.random.default_rng(seed)
    a_codes, b_codes = _finite_codes(rng, name, (m, k)), _finite_codes(rng, name, (k, n))
    _, got = _mmad_8bit(name, a_codes, b_codes, m, n, k)
    a64, b64 = _decode64(a_codes, EIGHT_BIT[name]), _decode64(b_codes, EIGHT_BIT[name])
    want = _loop_mmad(a64, b64)
    assert np.all(np.abs(got - want) <= ref.mmad_tolerance(a64, b64))


@pytest.mark.parametrize("name", ["hifloat8", "float8_e4m3fn"])
def test_8bit_mmad_small_values_are_exact_with_k_tails(name):
    """Values whose sums are exact in fp32: equality, for k tails and GEMV (m = 1)."""
    rng = np.random.default_rng(5)
    for m, n, k in ((17, 5, 33), (16, 16, 32), (3, 31, 95), (1, 18, 40)):
        a_codes, b_codes = _exact_codes(rng, name, (m, k)), _exact_codes(rng, name, (k, n))
        _, got = _mmad_8bit(name, a_codes, b_codes, m, n, k)
        want = _loop_mmad(_decode64(a_codes, EIGHT_BIT[name]), _decode64(b_codes, EIGHT_BIT[name]))
        assert np.array_equal(got, want.astype(np.float32)), (m, n, k)


def test_8bit_mmad_k_padding_is_ignored():
    """K is masked at k: non-zero codes in the padding of the last K fractal of A and B change nothing."""
    m, n, k = 16, 16, 40
    rng = np.random.default_rng(1)
    a_codes, b_codes = _exact_codes(rng, "hifloat8", (m, k)), _exact_codes(rng, "hifloat8", (k, n))
    a_flat, b_flat = ref35.make_l0a_nz(a_codes, K0), ref.make_zn(b_codes, K0)
    a_flat.reshape(2, 1, 16, K0)[1, :, :, k - K0:] = 0x38  # NZ [k1][m1][16][32]: columns 40..63
    b_flat.reshape(2, 1, 16, K0)[1, :, :, k - K0:] = 0x38  # ZN [k1][n1][16][32]: rows 40..63

    def body(core):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", b_flat)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", hifloat8), local(core, "L0B", hifloat8),
             MmadParams(m, n, k))
    got = ref.read_nz(elems(_run(body), "L0C", np.float32, 4096), m, n)
    want = _loop_mmad(_decode64(a_codes, hifloat8), _decode64(b_codes, hifloat8))
    assert np.array_equal(got, want.astype(np.float32))


def test_8bit_mmad_bias_from_bt():
    m, n, k = 20, 24, 64
    rng = np.random.default_rng(2)
    a_codes, b_codes = _exact_codes(rng, "float8_e4m3fn", (m, k)), _exact_codes(rng, "float8_e4m3fn", (k, n))
    bias = rng.integers(-50, 50, 32).astype(np.float32)

    def body(core):
        fill(core, "L0A", ref35.make_l0a_nz(a_codes, K0))
        fill(core, "L0B", ref.make_zn(b_codes, K0))
        fill(core, "BT", bias)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", float8_e4m3fn), local(core, "L0B", float8_e4m3fn),
             MmadParams(m, n, k, cmatrixInitVal=False, cmatrixSource=True))
    got = ref.read_nz(elems(_run(body), "L0C", np.float32, 4096), m, n)
    want = _loop_mmad(_decode64(a_codes, float8_e4m3fn), _decode64(b_codes, float8_e4m3fn), bias[:n])
    assert np.array_equal(got, want.astype(np.float32))


def test_ctrl45_runs_fp8_as_hifloat8():
    m, n, k = 16, 16, 32
    rng = np.random.default_rng(3)
    a_codes, b_codes = _exact_codes(rng, "hifloat8", (m, k)), _exact_codes(rng, "hifloat8", (k, n))

    def body(core):
        fill(core, "L0A", ref35.make_l0a_nz(a_codes, K0))
        fill(core, "L0B", ref.make_zn(b_codes, K0))
        SetCtrlSpr(45, 45, 1)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", float8_e4m3fn), local(core, "L0B", float8_e4m3fn),
             MmadParams(m, n, k))
    core = _run(body)
    got = ref.read_nz(elems(core, "L0C", np.float32, 4096), m, n)
    as_hif8 = _loop_mmad(_decode64(a_codes, hifloat8), _decode64(b_codes, hifloat8))
    as_fp8 = _loop_mmad(_decode64(a_codes, float8_e4m3fn), _decode64(b_codes, float8_e4m3fn))
    assert np.array_equal(got, as_hif8.astype(np.float32)) and not np.array_equal(got, as_fp8.astype(np.float32))
    mmad = [r for r in core.log if r.name == "Mmad"][0]
    assert dict(mmad.registers)["ctrl"] >> 45 & 1 == 1


@pytest.mark.parametrize("platform", ["Ascend910B2", "Ascend910_9391"])
@pytest.mark.parametrize("name", ["hifloat8", "float8_e4m3fn"])
def test_8bit_operands_fault_on_arch_2201(platform, name):
    def body(core):
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", EIGHT_BIT[name]), local(core, "L0B", EIGHT_BIT[name]),
             MmadParams(16, 16, 32))
    with pytest.raises(ParameterOutOfRange, match=rf"{name} is an Ascend 950 \(arch 3510\) type; arch 2201"):
        _run(body, platform)


def _mmad_cycles(platform, dtype, m, n, k, hf32=False):
    def body(core):
        if hf32:
            SetHF32Mode(True)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", dtype), local(core, "L0B", dtype), MmadParams(m, n, k))
    rec = [r for r in _run(body, platform).log if r.name == "Mmad"][0]
    model = CostModel(Chip(platform).platform, 1)
    return MMAD.cost(rec, model) - model.rates.mmad_overhead


# Cube指令理论性能汇总 tables 1 (2201) and 2 (3510): cycles per 16 x 16 x k0 fractal product = k0 / cube_k
@pytest.mark.parametrize("platform,dtype,hf32,per_fractal", [
    (A5, np.dtype(np.float32), False, 8), (A5, np.dtype(np.float32), True, 1), (A5, np.dtype(np.float16), False, 1),
    (A5, hifloat8, False, 1), (A5, float8_e4m3fn, False, 1),
    ("Ascend910B2", np.dtype(np.float32), False, 2), ("Ascend910B2", np.dtype(np.float32), True, 1),
    ("Ascend910B2", np.dtype(np.float16), False, 1)])
def test_mmad_cost_follows_the_rate_tables(platform, dtype, hf32, per_fractal):
    m, n, k = 48, 32, 100
    k0 = 32 // dtype.itemsize
    fractals = -(-m // 16) * -(-n // 16) * -(-k // k0)
    assert _mmad_cycles(platform, dtype, m, n, k, hf32) == fractals * per_fractal


def test_hf32_rounds_to_10_mantissa_bits_on_3510():
    m, n, k = 16, 16, 16
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    a[0, :2] = [1 + 2 ** -11, 1 + 2 ** -12]  # kept by 11 bits, rounded by 10 / below both

    def body(core):
        fill(core, "L0A", ref35.make_l0a_nz(a, 8))
        fill(core, "L0B", ref.make_zn(b, 8))
        SetHF32Mode(True)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", np.float32), local(core, "L0B", np.float32),
             MmadParams(m, n, k))
    got = ref.read_nz(elems(_run(body), "L0C", np.float32, 4096), m, n)
    r10 = np.vectorize(lambda x: ref.round_fp32_mantissa(float(x), 10, "NEAREST_EVEN"))
    r11 = np.vectorize(lambda x: ref.round_fp32_mantissa(float(x), 11, "NEAREST_EVEN"))
    a10, b10 = r10(a), r10(b)
    want = _loop_mmad(a10.astype(np.float64), b10.astype(np.float64))
    assert np.all(np.abs(got - want) <= ref.mmad_tolerance(a10, b10))
    want11 = _loop_mmad(r11(a).astype(np.float64), r11(b).astype(np.float64))
    assert np.any(np.abs(got - want11)[0] > ref.mmad_tolerance(a10, b10)[0])  # 10 bits, not A2's 11


def test_exact_and_fast_engines_agree_on_8bit_mmad():
    rng = np.random.default_rng(4)
    a_codes, b_codes = _finite_codes(rng, "float8_e4m3fn", (40, 70)), _finite_codes(rng, "float8_e4m3fn", (70, 24))
    for codes in (a_codes, b_codes):  # finite read as hifloat8 too
        codes[np.isin(codes, NONFINITE["hifloat8"])] = 0
    results = []
    for engine in ("exact", "fast"):
        def body(core):
            fill(core, "L0A", ref35.make_l0a_nz(a_codes, K0))
            fill(core, "L0B", ref.make_zn(b_codes, K0))
            for hif8 in (0, 1):
                SetCtrlSpr(45, 45, hif8)
                Mmad(local(core, "L0C", np.float32, hif8 * 8192), local(core, "L0A", float8_e4m3fn),
                     local(core, "L0B", float8_e4m3fn), MmadParams(40, 24, 70))
        chip = Chip(A5, check_races=False, record=True, engine=engine)
        chip.launch(lambda: body(current_core()), 1)
        core = chip.cores[0]
        results.append((core.buffers["L0C"].data[:16384].copy(), [(r.name, r.start, r.end) for r in core.log]))
    assert np.array_equal(results[0][0], results[1][0]) and results[0][1] == results[1][1]


OPERANDS = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
            "float32": np.dtype(np.float32), **EIGHT_BIT}


def _operand(rng, name, shape):
    """Random operands of `name` as stored (8-bit: finite codes as uint8) and a scalar decoder for them."""
    if name in EIGHT_BIT:
        return _finite_codes(rng, name, shape), lambda code: float(np.uint8(code).view(EIGHT_BIT[name]))
    return rng.standard_normal(shape).astype(OPERANDS[name]), float


@pytest.mark.parametrize("name", sorted(OPERANDS))
@settings(max_examples=12, deadline=None)
@given(m=st.integers(2, 40), n=st.integers(1, 36), k=st.integers(1, 80), seed=st.integers(0, 2**16))
def test_mmad_reads_l0a_as_nz_on_3510(name, m, n, k, seed):
    """Every operand type, m / n / k with tails: the L0A bytes are NZ [k1][m1][16][C0] (ref_mmad_nz's index map)."""
    rng = np.random.default_rng(seed)
    k0 = 32 // OPERANDS[name].itemsize
    (a, decode), (b, _) = _operand(rng, name, (m, k)), _operand(rng, name, (k, n))
    a_flat, b_flat = ref35.make_l0a_nz(a, k0), ref.make_zn(b, k0)

    def body(core):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", b_flat)
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", OPERANDS[name]), local(core, "L0B", OPERANDS[name]),
             MmadParams(m, n, k))
    got = ref.read_nz(elems(_run(body), "L0C", np.float32, 65536), m, n)
    want = ref35.ref_mmad_nz(a_flat, b_flat, m, n, k, k0, decode)
    a64 = np.vectorize(decode, otypes=[np.float64])(a)
    b64 = np.vectorize(decode, otypes=[np.float64])(b)
    assert np.all(np.abs(got - want) <= ref.mmad_tolerance(a64, b64))


def test_the_same_l0a_bytes_are_zz_on_a2_and_nz_on_the_950():
    """One L0A content, two platforms: A2 multiplies it as ZZ, the 950 as NZ (m spans 2 fractal rows, k 2 columns)."""
    m, n, k = 32, 16, 32
    a = np.arange(m * k, dtype=np.float32).reshape(m, k).astype(np.float16) / 64
    b = np.eye(k, n, dtype=np.float16)  # C = A's first 16 columns
    a_flat = ref.make_zz(a, 16)

    def body(core):
        fill(core, "L0A", a_flat)
        fill(core, "L0B", ref.make_zn(b, 16))
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", np.float16), local(core, "L0B", np.float16),
             MmadParams(m, n, k))
    on_a2 = ref.read_nz(elems(_run(body, "Ascend910B2"), "L0C", np.float32, 1024), m, n)
    on_950 = ref.read_nz(elems(_run(body), "L0C", np.float32, 1024), m, n)
    assert np.array_equal(on_a2, a[:, :n].astype(np.float32))
    swapped = a_flat.reshape(2, 2, 256).transpose(1, 0, 2).reshape(-1)  # ZZ fractal (i, j) read as NZ (j, i)
    assert np.array_equal(on_950, ref.read_zz(swapped, m, k, 16)[:, :n].astype(np.float32))
