"""The float32 sums of a replay plan's Mmads (engine/replay_data.py's RunPlan.run), compiled: the products of a
batch added into the L0C block's sums two at a time, in the Mmads' order.

numpy's `c += p` makes one pass over the block's sums per product (R3D's stem: a 64 KB block, 126,224 products a
launch, about 2 us each); here each pass adds two products, each element's sum still made by the same float32
adds in the same order, ((c + p) + q), so the bytes are those of the adds made one by one. The data pass that
calls it runs only on the compiled schedule, so numba is loaded already.
"""
from __future__ import annotations

from ascend_sim.passes.numba_jit import njit


@njit(cache=True)
def add_in_order(c, products, lo: int, hi: int) -> None:
    """c += products[lo], then += products[lo + 1], ... up to products[hi - 1], element by element (c: flat
    float32, products: a C-contiguous stack of flat float32 arrays of c's size; c is none of them)."""
    i = lo
    while i + 2 <= hi:
        p, q = products[i], products[i + 1]
        for j in range(c.size):
            c[j] = (c[j] + p[j]) + q[j]
        i += 2
    if i < hi:
        p = products[i]
        for j in range(c.size):
            c[j] += p[j]
