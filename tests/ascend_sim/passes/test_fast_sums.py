"""The compiled adds of a plan's Mmad products (ascend_sim/passes/fast_sums.py) against numpy's `c += p` made
product by product: the same float32 bits, whatever the number of products, on sums where the order of the adds
changes the rounding (mixed magnitudes, cancellation), and with infinities, NaNs and signed zeros."""
import numpy as np
import pytest

from ascend_sim.passes.fast_sums import add_in_order


def _one_by_one(c, products, lo, hi):
    c = c.copy()
    with np.errstate(invalid="ignore"):  # inf - inf: a NaN, as in L0C
        for p in products[lo:hi]:
            c += p
    return c


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("lo, hi", [(0, 0), (0, 1), (1, 3), (0, 5), (2, 8), (3, 4)])
def test_the_sums_are_the_adds_made_one_by_one(seed, lo, hi):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 300))
    scale = np.float32(2.0) ** rng.integers(-30, 30, (8, size))
    products = (rng.standard_normal((8, size)) * scale).astype(np.float32)
    c = (rng.standard_normal(size) * 2.0 ** 20).astype(np.float32)
    if seed % 3 == 0:  # cancellation: a product that takes back the sums so far
        products[min(lo + 1, 7)] = -products[lo] - c
    if seed % 4 == 1:  # specials
        products[lo, :4] = [np.inf, -np.inf, np.nan, -0.0]
        c[:4] = [1.0, np.inf, 2.0, -0.0]
    want = _one_by_one(c, products, lo, hi)
    got = c.copy()
    add_in_order(got, products, lo, hi)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_the_order_of_the_adds_is_kept():
    """Adds whose order decides the result: 1 + 2**-24 + 2**-24 is 1 in float32 added left to right, 1 + 2**-23
    added the other way."""
    c = np.ones(3, np.float32)
    products = np.full((2, 3), 2.0 ** -24, np.float32)
    add_in_order(c, products, 0, 2)
    assert np.array_equal(c, np.ones(3, np.float32))
