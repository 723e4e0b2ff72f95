"""What the dx and dw stand-ins for the closed TBE cache tiling (`GetTbeTiling`) share
(tiling/conv3d_backprop_input/arch22/tbe_rule.py, tiling/conv3d_backprop_filter/tbe_rule.py): the answer's struct
(`TbeTiling`) and this project's own rule for the core split it would give.

Grow one axis at a time, taking the step that cuts the per-core work (the product of the per-core shares) most per
core added, ties broken by the axes' order, while the product of the splits stays within the cores.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tiling.common.integers import ceil_div


@dataclass(frozen=True, kw_only=True)
class TbeTiling:
    """The fields of Conv3dBackpropV2TBETilingData (the TBE cache tiling's answer) that the dx and dw base
    templates read: the core split, the L0 blocks and the L1 loads in fractal units, the double-buffer flags.
    m_al1 and n_bl1 are read by dw only; reason says which own rule proposed it (for notes)."""

    batch_dim: int
    d_dim: int
    group_dim: int
    m_dim: int
    n_dim: int
    k_dim: int
    m_l0: int
    k_l0: int
    n_l0: int
    m_al1: int = 1
    n_bl1: int = 1
    k_al1: int
    k_bl1: int
    db_l0c: int
    db_al1: int
    db_bl1: int
    reason: str = ""


def _next_split(extent: int, current: int, divisors_only: bool, cores: int) -> int | None:
    """The next core count along an axis that lowers the per-core share (a divisor of extent if asked)."""
    if divisors_only:  # no axis can take more than all the cores
        return next((d for d in range(current + 1, min(extent, cores) + 1) if extent % d == 0), None)
    share = ceil_div(extent, current)
    return None if share <= 1 else ceil_div(extent, share - 1)


def greedy_core_split(axes: dict[str, tuple[int, bool]], cores: int) -> dict[str, int]:
    """axes: name -> (extent, divisors only), in tie-break order. Returns the cores per axis."""
    dims = dict.fromkeys(axes, 1)

    def work(d: dict) -> int:
        return math.prod(ceil_div(axes[a][0], d[a]) for a in axes)

    used = 1
    while True:
        best = None
        current_work = work(dims)
        for axis, (extent, divisors_only) in axes.items():
            nxt = _next_split(extent, dims[axis], divisors_only, cores)
            if nxt is None or used // dims[axis] * nxt > cores:
                continue
            gain = math.log(current_work / work({**dims, axis: nxt})) / math.log(nxt / dims[axis])
            if best is None or gain > best[0] + 1e-12:
                best = (gain, axis, nxt)
        if best is None:
            return dims
        _, axis, nxt = best
        used = used // dims[axis] * nxt
        dims[axis] = nxt
