"""grad_bias on the AIV (kernels/convolution_backward/bias_grad.py) against numpy's float64 sums."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from kernels.convolution_backward import bias_grad
from kernels.convolution_backward.bias_grad import TILE, bias_grad_tiling, run_bias_grad

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
    assert (short.rowPitch, short.rowsPerCopy) == (64, 64)  # 20 elements padded to one float32 Add repeat, 4096 / 64
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


# issue 22: with 16-bit rows padded only to 32 bytes, 3 rows of 1352 or 1360 elements filled the tile so that the last
# row's Add, whose tail repeat spans 64 float32 lanes, reached into the accumulator it was writing
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("length", [1288, 1336, 1344, 1352, 1360, 1368, 1376])
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_rows_that_nearly_fill_the_tile(n, length, dtype):
    g = np.random.default_rng(length + n).standard_normal((n, 2, length)).astype(dtype)
    _check(g, run_bias_grad(g).result)


@pytest.mark.parametrize("itemsize", [2, 4])
def test_no_row_reaches_past_the_tile(itemsize):
    # whole Add repeats of every row of a copy stay inside the TILE-element float32 buffer, for every row length
    for length in range(1, 2 * TILE + 2):
        t = bias_grad_tiling(n=TILE, c=1, length=length, itemsize=itemsize, aiv_cores=1)
        last_end = (t.rowsPerCopy - 1) * t.rowPitch + -(-t.chunkLen // 64) * 64
        assert last_end <= TILE, (length, t)
