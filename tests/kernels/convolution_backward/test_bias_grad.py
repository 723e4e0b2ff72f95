"""grad_bias on the AIV (kernels/convolution_backward/bias_grad.py) against numpy's float64 sums."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from kernels.convolution_backward import bias_grad
from kernels.convolution_backward.bias_grad import bias_grad_tiling, run_bias_grad

# one rounding of a float32 sum to the output dtype (half an ulp), with margin; float32: accumulation order only
TOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-6}


def _check(g: np.ndarray, got: np.ndarray) -> None:
    ref = g.astype(np.float64).sum(axis=tuple(i for i in range(g.ndim) if i != 1))
    assert got.dtype == g.dtype and got.shape == ref.shape
    scale = np.abs(ref) + np.sqrt(np.mean(ref ** 2))
    assert np.isfinite(got.astype(np.float64)).all()
    assert (np.abs(got.astype(np.float64) - ref) / scale).max() <= TOL[g.dtype.name]


@pytest.mark.parametrize("shape", [(2, 5, 3, 7), (3, 40, 33), (1, 3, 5000), (4, 70, 2), (5, 2, 1, 1, 1)])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_sums_match_numpy(shape, dtype):
    g = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    _check(g, run_bias_grad(g).result)


def test_sixteen_bit_inputs_accumulate_in_float32():
    # 2048 then 4096 ones, each a batch entry added into the same lane: a float16 running sum would stay at 2048
    # (+1 is half its ulp there and rounds to even)
    g = np.ones((4097, 1, 1), np.float16)
    g[0] = 2048
    assert run_bias_grad(g).result[0] == np.float16(2048 + 4096)


def test_the_split_over_cores_and_chunks():
    t = bias_grad_tiling(n=3, c=100, length=9000, itemsize=2, aiv_cores=48)
    assert (t.blockDim, t.channelsPerCore, t.chunkLen, t.rowsPerCopy) == (34, 3, 4096, 1)
    short = bias_grad_tiling(n=300, c=2, length=20, itemsize=2, aiv_cores=48)
    assert (short.rowPitch, short.rowsPerCopy) == (32, 128)  # 20 fp16 rows padded to 64 bytes, 4096 / 32 per copy
    run = run_bias_grad(np.zeros((3, 100, 9000), np.float16))
    assert run.report.cores and len(run.report.cores) == 34


def test_results_written_in_batches(monkeypatch):
    monkeypatch.setattr(bias_grad, "RESULTS", 3)  # several output batches per core with a small shape
    g = np.random.default_rng(2).standard_normal((2, 200, 5)).astype(np.float16)
    _check(g, run_bias_grad(g).result)


def test_timing_only_mode_gives_the_same_cycles():
    g = np.random.default_rng(3).standard_normal((2, 30, 100)).astype(np.float32)
    full, timing = run_bias_grad(g), run_bias_grad(g, execute=False)
    assert timing.result is None and timing.report.cycles == full.report.cycles
