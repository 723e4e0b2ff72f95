"""machine/mmad.py's multiply on stacks (the replay engine's batched Mmads): each product of a stack has the
bits of that pair multiplied alone, and the products are A.B within float32 rounding (a plain numpy float64
product as the reference)."""
import numpy as np
import pytest

from ascend_sim.machine.dtypes import HF32_NEAREST_EVEN
from ascend_sim.machine.mmad import multiply


@pytest.mark.parametrize("m, kp, n, k, hf32", [(1024, 16, 16, 16, None), (160, 32, 48, 19, None),
                                               (64, 16, 16, 16, (11, HF32_NEAREST_EVEN)), (1, 48, 32, 40, None)])
def test_a_stack_gives_each_pair_s_bits(m, kp, n, k, hf32):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, m, kp)).astype(np.float16).astype(np.float32)
    b = rng.standard_normal((5, kp, n)).astype(np.float16).astype(np.float32)
    stacked = multiply(a, b, k, hf32)
    assert stacked.shape == (5, m, n)
    for i in range(5):
        alone = multiply(a[i], b[i], k, hf32)
        assert stacked[i].tobytes() == alone.tobytes()
        exact = a[i][:, :k].astype(np.float64) @ b[i][:k].astype(np.float64)
        assert np.allclose(alone, exact, rtol=1e-2 if hf32 else 1e-5, atol=1e-2 if hf32 else 1e-4)
