"""The example matmul on the Ascend 950 (kernels/matmul/kernel/arch35): the five operand types, shapes with tails in
M, N, K and the L1 step, batches, against numpy on the operands as stored (decoded to float64); the 16- and 32-bit
types on A2 as well. 8-bit results are checked on their own grid: at most one step from the float64 product
rounded once (a tie may round either way, and the fp32 accumulation may move a value across a boundary)."""
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
from paths import ROOT

from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8
from kernels.matmul import MatmulTiling, run_matmul

A5, A2 = "Ascend950PR_9589", "Ascend910B2"
BF16 = ml_dtypes.bfloat16
WIDE = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(BF16), "float32": np.dtype(np.float32)}
EIGHT = {"hifloat8": hifloat8, "float8_e4m3fn": float8_e4m3fn}
EPS = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24}
SHAPES = [  # batch, m, n, k, shared B, tiling fields
    (1, 37, 45, 70, False, None),  # nothing a multiple of 16 (or of 32)
    (1, 130, 140, 300, False, None),  # two tiles in M and N
    (1, 48, 33, 200, False, dict(baseM=32, baseN=32, baseK=64, stepK=2)),  # K over 2 L1 loads, tails everywhere
    (1, 1, 40, 24, False, None),  # one row (m rounded up to a fractal row: no GEMV)
    (3, 17, 24, 9, True, None),  # a batch sharing one B
    (2, 20, 8, 40, False, None),  # a batch with its own B; N = 8
]


def _operands(dtype, batch, m, n, k, shared, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((k, n) if shared else (batch, k, n)).astype(dtype)
    return a, b


def grid_steps(got, exact):
    """Per element, the number of steps of got's type grid (its finite values, decoded code by code) between got
    and the float64 `exact` rounded to the nearest grid value (clamped at the largest: the 950 saturates)."""
    codes = np.arange(256, dtype=np.uint8).view(got.dtype)
    values = np.array([float(v) for v in codes])
    grid = np.unique(values[np.isfinite(values)])
    flat, want = got.astype(np.float64).reshape(-1), np.clip(exact.reshape(-1), grid[0], grid[-1])
    steps = []
    for g, w in zip(flat, want):
        assert g in grid, g  # finite and a value of the type
        nearest = int(np.argmin(np.abs(grid - w)))
        steps.append(abs(int(np.flatnonzero(grid == g)[0]) - nearest))
    return np.array(steps)


def assert_close(c, exact, k, name):
    if name in EIGHT:
        assert grid_steps(c, exact).max() <= 1
        return
    ulp = 2 * EPS[name] * np.abs(exact)  # one rounding to C's type after fp32 accumulation
    slack = (k + 2) * 2.0**-24 * np.abs(exact).max() + 1e-30
    assert np.all(np.abs(c.astype(np.float64) - exact) <= ulp + slack)


@pytest.mark.parametrize("batch,m,n,k,shared,tiling", SHAPES)
@pytest.mark.parametrize("name", [*WIDE, *EIGHT])
def test_the_950_matmul_matches_numpy(name, batch, m, n, k, shared, tiling):
    dtype = {**WIDE, **EIGHT}[name]
    a, b = _operands(dtype, batch, m, n, k, shared, batch * 1000 + m + n + k)
    t = MatmulTiling(m, n, k, dtype=name, batch=batch, shared_b=shared, **tiling) if tiling else None
    run = run_matmul(a, b, platform=A5, tiling=t, poison_output=True)
    c, report = run.result, run.report
    assert c.dtype == dtype and c.shape == (batch, m, n)
    assert_close(c, np.matmul(a.astype(np.float64), b.astype(np.float64)), k, name)
    counts = report.counts  # the 950's paths, not A2's
    assert {"DataCopy(Nd2Nz)", "DataCopy(Dn2Nz)", "LoadData2DV2", "Mmad", "Fixpipe(Arch3510)"} <= set(counts)
    assert not {"LoadData2D", "LoadData3Dv2", "Fixpipe"} & set(counts)


@pytest.mark.parametrize("batch,m,n,k,shared,tiling", SHAPES)
@pytest.mark.parametrize("name", list(WIDE))
def test_the_a2_matmul_still_matches_numpy(name, batch, m, n, k, shared, tiling):
    a, b = _operands(WIDE[name], batch, m, n, k, shared, batch * 1000 + m + n + k)
    t = MatmulTiling(m, n, k, dtype=name, batch=batch, shared_b=shared, **tiling) if tiling else None
    run = run_matmul(a, b, platform=A2, tiling=t, poison_output=True)
    c, report = run.result, run.report
    assert_close(c, np.matmul(a.astype(np.float64), b.astype(np.float64)), k, name)
    assert "LoadData2DV2" not in report.counts and "Fixpipe" in report.counts


def test_8bit_operands_with_a_16_bit_output():
    """hifloat8 operands, float16 C (F322F16): one fp16 rounding of the fp32 sum."""
    a, b = _operands(EIGHT["hifloat8"], 1, 40, 50, 100, False, 7)
    c = run_matmul(a[0], b[0], platform=A5, out_dtype=np.float16).result
    assert c.dtype == np.float16
    assert_close(c, a[0].astype(np.float64) @ b[0].astype(np.float64), 100, "float16")


def test_8bit_results_saturate_at_the_largest_value():
    """Products beyond the type's range come out as +-max (CTRL at its reset value), never inf or NaN."""
    a = np.full((16, 64), 16.0).astype(EIGHT["float8_e4m3fn"])
    b = np.full((64, 16), 8.0).astype(EIGHT["float8_e4m3fn"])
    b[:, 8:] *= -1
    c = run_matmul(a, b, platform=A5).result
    np.testing.assert_array_equal(c.astype(np.float64)[:, :8], 448.0)
    np.testing.assert_array_equal(c.astype(np.float64)[:, 8:], -448.0)


def test_the_engines_agree_on_the_950_matmul():
    a, b = _operands(EIGHT["hifloat8"], 1, 70, 90, 150, False, 3)
    runs = [run_matmul(a, b, platform=A5, engine=engine, tiling=MatmulTiling(70, 90, 150, dtype="hifloat8",
                                                                               baseM=32, baseN=32, baseK=64, stepK=1))
            for engine in ("exact", "fast")]
    exact, fast = runs
    assert exact.result.tobytes() == fast.result.tobytes() and exact.cycles == fast.cycles


@pytest.mark.parametrize("name", list(EIGHT))
def test_the_950_timing_only_run_gives_no_c_and_the_same_cycles(name):
    a, b = _operands(EIGHT[name], 1, 70, 90, 150, False, 4)
    run = run_matmul(a, b, platform=A5)
    c_full, full = run.result, run.report
    run = run_matmul(a, b, platform=A5, execute=False)
    c_timing, timing = run.result, run.report
    assert c_full is not None and c_timing is None  # timing-only GM holds no bytes to read C from
    assert timing.cycles == full.cycles and timing.counts == full.counts


def test_hf32_on_the_950_rounds_to_10_mantissa_bits():
    a, b = _operands(np.float32, 1, 20, 24, 40, False, 5)
    c = run_matmul(a[0], b[0], platform=A5, hf32=True).result

    def hf32(x):  # round half away at 10 mantissa bits (the HF32 default trans mode), fp32 range
        bits = x.astype(np.float32).view(np.uint32).astype(np.int64)
        return ((((bits >> 12) + 1) >> 1) << 13).astype(np.uint32).view(np.float32).astype(np.float64)
    exact = hf32(a[0]) @ hf32(b[0])
    assert np.all(np.abs(c - exact) <= 1e-5 * np.abs(exact).max())
    assert np.abs(c - a[0].astype(np.float64) @ b[0].astype(np.float64)).max() > 1e-4 * np.abs(exact).max()


@pytest.mark.parametrize("name", list(EIGHT))
def test_8bit_types_are_refused_on_a2(name):
    a = np.zeros((16, 32), EIGHT[name])
    with pytest.raises(ValueError, match=rf"dtype={name}: {name} is an Ascend 950 \(arch 3510\) type; arch 2201"):
        run_matmul(a, a.T.copy(), platform=A2)


def test_8bit_tiling_needs_baseK_a_multiple_of_32():
    with pytest.raises(ValueError, match=r"baseK=48 must be a multiple of 32 \(the K fractal of hifloat8\)"):
        MatmulTiling(64, 64, 64, dtype="hifloat8", baseK=48).check()


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "frontends.cli", "matmul", "--m", "40", "--n", "36", "--k", "70",
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["hifloat8", "float8_e4m3fn", "float16", "bfloat16", "float32"])
def test_the_cli_runs_the_950_matmul(name):
    run = _cli("--platform", A5, "--dtype", name)
    assert run.returncode == 0, run.stderr
    assert "check against the numpy reference: PASSED" in run.stdout


def test_the_cli_refuses_hifloat8_on_a2_in_one_line():
    run = _cli("--platform", A2, "--dtype", "hifloat8")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "error: dtype=hifloat8: hifloat8 is an Ascend 950" in run.stderr
