"""The example kernel: multi-core tiled fp16 matmul against numpy."""
import numpy as np
import pytest

from kernels.matmul import MatmulTiling, run_matmul


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
    c, report = run_matmul(a, b, tiling=t)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # fp32 accumulation then one rounding to fp16: within 1 fp16 ulp of the exact product (plus fp32 error)
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(c.astype(np.float64) - exact) <= ulp + 1e-5 * np.sqrt(k) * np.abs(exact).max())
    assert report.cycles > 0 and len(report.cores) >= 1


def test_bad_matmul_shapes_are_rejected():
    with pytest.raises(ValueError, match="K=40"):
        run_matmul(np.zeros((16, 40), np.float16), np.zeros((40, 16), np.float16))
    with pytest.raises(ValueError, match="inner dimensions"):
        run_matmul(np.zeros((16, 32), np.float16), np.zeros((48, 16), np.float16))
