"""The example kernel: multi-core tiled (batch) matmul in fp16, bf16 and fp32 against numpy."""
import ml_dtypes
import numpy as np
import pytest

from ascend_sim.machine.dtypes import DTYPES, round_to_hf32
from kernels.common.run import Run
from kernels.matmul import MatmulTiling, run_matmul

BF16 = ml_dtypes.bfloat16
EPS = {np.dtype(np.float16): 2.0**-11, np.dtype(BF16): 2.0**-8, np.dtype(np.float32): 2.0**-24}


def assert_matmul_close(c, exact, k):
    """fp32 accumulation then one rounding to C's dtype: within 1 ulp of the exact product plus fp32 error."""
    ulp = 2 * EPS[c.dtype] * np.abs(exact)
    slack = (k + 2) * 2.0**-24 * np.abs(exact).max() + 1e-30
    assert np.all(np.abs(c.astype(np.float64) - exact) <= ulp + slack)


@pytest.mark.parametrize("m,n,k,tiling", [
    (128, 128, 64, None),
    (256, 384, 512, None),
    (48, 32, 80, dict(baseM=16, baseN=32, baseK=32, stepK=2)),  # tails in M, N, K and in the L1 step
    (160, 176, 272, dict(baseM=64, baseN=64, baseK=64, stepK=3)),
])
def test_matmul_matches_numpy(m, n, k, tiling):
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    t = MatmulTiling(m, n, k, **tiling) if tiling else None
    run = run_matmul(a, b, tiling=t)
    c, report = run.result, run.report
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 accumulation then one rounding to fp16: within 1 fp16 ulp of the exact product (plus fp32 error)
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(c.astype(np.float64) - exact) <= ulp + 1e-5 * np.sqrt(k) * np.abs(exact).max())
    assert report.cycles > 0 and len(report.cores) >= 1


def test_run_matmul_returns_the_shared_run():
    """The same run type as the conv operators: C, the tiling it ran with, the report and its platform."""
    a = np.ones((40, 24), np.float16)
    b = np.full((24, 56), 2, np.float16)
    tiling = MatmulTiling(40, 56, 24, baseM=16, baseN=16, baseK=16)
    run = run_matmul(a, b, tiling=tiling, platform="Ascend910B3")
    assert isinstance(run, Run) and run.tiling is tiling and run.notes == []
    np.testing.assert_array_equal(run.result, np.full((40, 56), 48, np.float16))
    assert run.platform.name == "Ascend910B3" and run.cycles == run.report.cycles > 0
    assert run_matmul(a, b, execute=False).result is None


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32], ids=["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("batch,m,n,k,shared", [
    (1, 128, 128, 64, False),
    (1, 1, 40, 24, False),  # one row (no GEMV mode: m is rounded up to a fractal row)
    (1, 37, 50, 300, False),  # nothing a multiple of 16; K over two L1 loads
    (3, 17, 24, 9, True),  # a batch sharing one B
    (2, 20, 8, 40, False),  # a batch with its own B; N = 8 (half an fp32 L0B fractal column)
])
def test_all_dtypes_shapes_and_batches(dtype, batch, m, n, k, shared):
    rng = np.random.default_rng(batch * 1000 + m + n + k)
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((k, n) if shared else (batch, k, n)).astype(dtype)
    run = run_matmul(a, b, poison_output=True)
    c, report = run.result, run.report
    assert c.dtype == np.dtype(dtype) and c.shape == (batch, m, n)
    assert_matmul_close(c, a.astype(np.float64) @ b.astype(np.float64), k)
    names = report.counts
    assert ("LoadData3Dv2" in names) == (np.dtype(dtype) == np.float32)  # fp32 B goes through Load3Dv2
    assert names["Fixpipe"] == batch * -(-m // 128) * -(-n // 128)


@pytest.mark.parametrize("out", [np.float16, BF16, np.float32], ids=["f16", "bf16", "f32"])
def test_fixpipe_writes_any_output_dtype(out):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((40, 48)).astype(np.float32), rng.standard_normal((48, 24)).astype(np.float32)
    c = run_matmul(a, b, out_dtype=out).result
    assert c.dtype == np.dtype(out)
    assert_matmul_close(c, a.astype(np.float64) @ b.astype(np.float64), 48)


def test_hf32_rounds_the_fp32_operands():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((64, 48)).astype(np.float32)
    c = run_matmul(a, b, hf32=True).result
    rounded = round_to_hf32(a).astype(np.float64) @ round_to_hf32(b).astype(np.float64)
    assert_matmul_close(c, rounded, 64)
    assert np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max() > 1e-4  # really rounded


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_hf32_with_a_16_bit_dtype_is_refused(dtype):
    """HF32 rounds float32 operands; with float16/bfloat16 it used to be dropped without a word."""
    a = np.ones((32, 32), DTYPES[dtype])
    words = f"hf32=True with dtype='{dtype}': HF32 applies to float32 only"
    with pytest.raises(ValueError, match=words):
        run_matmul(a, a, hf32=True)
    with pytest.raises(ValueError, match=words):
        MatmulTiling.for_shape(32, 32, 32, dtype, hf32=True).check()


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=["fp16", "fp32"])
def test_row_pitch_over_16_bits_copies_row_by_row(dtype):
    """Nd2Nz's srcDValue is 16 bits: a wider B is brought in one row per DataCopy."""
    rng = np.random.default_rng(5)
    n = 65552
    a, b = rng.standard_normal((16, 3)).astype(dtype), rng.standard_normal((3, n)).astype(dtype)
    t = MatmulTiling.for_shape(16, n, 3, np.dtype(dtype).name, baseM=16, baseN=256 if dtype == np.float16 else 128)
    run = run_matmul(a, b, tiling=t)
    c, report = run.result, run.report
    assert_matmul_close(c, a.astype(np.float64) @ b.astype(np.float64), 3)
    tiles = -(-n // t.baseN)
    assert report.counts["DataCopy(Nd2Nz)"] == tiles * (1 + 3)  # A in one copy, B's 3 rows one by one


def test_timing_only_mode_agrees_for_fp32():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((2, 70, 90)).astype(np.float32), rng.standard_normal((90, 60)).astype(np.float32)
    full = run_matmul(a, b).report
    run = run_matmul(a, b, execute=False)
    c, fast = run.result, run.report
    assert fast.cycles == full.cycles and fast.counts == full.counts and c is None


def test_bad_matmul_arguments_are_rejected():
    with pytest.raises(ValueError, match="inner dimensions"):
        run_matmul(np.zeros((16, 32), np.float16), np.zeros((48, 16), np.float16))
    with pytest.raises(ValueError, match="baseK=40"):
        run_matmul(np.zeros((16, 40), np.float16), np.zeros((40, 16), np.float16),
                   tiling=MatmulTiling(16, 16, 40, baseK=40))
    with pytest.raises(ValueError, match="half of L0A/L0B"):
        run_matmul(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32),
                   tiling=MatmulTiling(16, 16, 16, baseM=256, baseK=64, dtype="float32"))
    with pytest.raises(ValueError, match="lower stepK"):
        run_matmul(np.zeros((16, 16), np.float32), np.zeros((16, 16), np.float32),
                   tiling=MatmulTiling(16, 16, 16, stepK=8, dtype="float32"))
    with pytest.raises(ValueError, match="hf32"):
        run_matmul(np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), hf32=True)
    with pytest.raises(ValueError, match="batch 2 must be 1"):
        run_matmul(np.zeros((3, 16, 16), np.float16), np.zeros((2, 16, 16), np.float16))
    with pytest.raises(ValueError, match="the tiling is for"):
        run_matmul(np.zeros((16, 32), np.float16), np.zeros((32, 16), np.float16), tiling=MatmulTiling(16, 16, 16))
