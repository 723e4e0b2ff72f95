"""This project's own stand-in for the closed TBE cache tiling (`GetTbeTiling`).

The real base template asks a closed library for a TBE tiling (core split and L0/L1 blocks) and uses it when
real_g > 1, when its own core split uses under 60 % of the cores, or when its own block check fails. The
library is not public, so this module proposes answers of the same shape (m_l0, n_l0, k_al1, k_bl1, db flags,
batch/d/group/m/n dims). The base template converts each proposal exactly as the real code converts a TBE
answer (CalTbeBlockTiling, UpdateStepFp32) and keeps the first one the validator accepts, so every result is
legal. docs/tiling.md lists the cases that use it.

Core split: grow one dimension at a time (batch, depth, group, M rows, N channel blocks), taking the step that
cuts the per-core work most per core added (ties in that order), while the product stays within the cores.
Blocks: the largest M x N block up to 256 x 256 within L0C (M kept larger), B's whole cout in L1 when half of
L1 holds it, A as many cout blocks as the rest of L1 holds (a multiple or divisor of B's), double buffers first;
shrink the block, then buffers, then loads until the kernel's rules are met.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ascend_sim.machine.platform import Platform
from tiling.common.integers import ceil_div
from tiling.common.tbe_rule import TbeTiling, greedy_core_split
from tiling.conv3d_backprop_input.arch22.common import BLOCK_CUBE, RunInfo

MAX_BLOCK_FRACTALS = 16  # 256 rows or columns
U16_MAX = 65535


@dataclass(frozen=True)
class CoreDims:
    group: int
    batch: int
    depth: int
    m: int
    n: int


def own_core_dims(run: RunInfo, cores: int) -> CoreDims:
    """Greedy split (tiling/common/tbe_rule.py) over batch, depth, group, M rows and N channel blocks."""
    dims = greedy_core_split({"batch": (run.batch_n, False), "depth": (run.dedx_d, False),
                              "group": (run.real_g, False), "m": (run.dedx_h, False),
                              "n": (run.dedx_cin1_g, False)}, cores)
    return CoreDims(dims["group"], dims["batch"], dims["depth"], dims["m"], dims["n"])


def _a_bytes_per_cout1(run: RunInfo, base_m: int) -> int:
    return run.cal_fmap_h(base_m) * run.dedy_w * run.stride_w * run.c0 * run.dtype_bytes


def _aligned_k_al1(limit: int, k_bl1: int) -> int:
    """The largest A load <= limit that is a multiple or a divisor of B's load (kernel steps must nest)."""
    if limit >= k_bl1:
        return limit // k_bl1 * k_bl1
    for value in range(limit, 0, -1):
        if k_bl1 % value == 0:
            return value
    return 1


def _block_shapes(m_cap: int, n_cap: int, l0c_fractals: int) -> Iterator[tuple[int, int]]:
    """(m_l0, n_l0) from the largest block down, shrinking the larger side (M first on ties)."""
    m, n = m_cap, n_cap
    while m * n > l0c_fractals:
        if n >= m and n > 1:
            n -= 1
        else:
            m -= 1
    while True:
        yield m, n
        if m == 1 and n == 1:
            return
        if n > m or m == 1:
            n -= 1
        else:
            m -= 1


def own_block_candidates(run: RunInfo, platform: Platform, dims: CoreDims) -> Iterator[TbeTiling]:
    """Block proposals in order of preference for the given core split."""
    c0, hkwk = run.c0, run.kernel_h * run.kernel_w
    m_dim = ceil_div(run.dedx_h, ceil_div(run.dedx_h, dims.m))
    single_m = ceil_div(run.dedx_h, m_dim) * run.dedx_w
    single_cin = ceil_div(run.dedx_cin1_g, dims.n) * c0
    m_cap = min(ceil_div(single_m, BLOCK_CUBE), MAX_BLOCK_FRACTALS)
    n_cap = min(ceil_div(single_cin, BLOCK_CUBE), MAX_BLOCK_FRACTALS)
    l0c_fractals = max(platform.L0C // (BLOCK_CUBE * BLOCK_CUBE * 4), 1)
    l1 = platform.usable_L1
    k_cap = max(1, min(run.dedy_cout1_g, U16_MAX // (hkwk * c0)))
    split = (f"own split group={dims.group} batch={dims.batch} depth={dims.depth} m={m_dim} n={dims.n}")
    for m_l0, n_l0 in _block_shapes(m_cap, n_cap, l0c_fractals):
        a_unit = _a_bytes_per_cout1(run, m_l0 * BLOCK_CUBE)
        b_unit = n_l0 * BLOCK_CUBE * hkwk * c0 * run.dtype_bytes
        for db_al1, db_bl1 in ((2, 2), (1, 2), (2, 1), (1, 1)):
            k_bl1 = max(1, min(k_cap, l1 // 2 // (db_bl1 * b_unit)))
            if run.dtype_bytes == 4 and k_bl1 > 1 and k_bl1 % 2 and k_bl1 != run.dedy_cout1_g:
                k_bl1 -= 1  # fp32 weights come in 16-channel (2 x C0) blocks
            while True:
                room = l1 - db_bl1 * k_bl1 * b_unit
                limit = min(k_cap, room // (db_al1 * a_unit)) if room > 0 else 0
                if limit >= 1 or k_bl1 == 1:
                    break
                k_bl1 = max(1, k_bl1 // 2)
            if limit < 1:
                continue
            k_al1 = _aligned_k_al1(limit, k_bl1)
            for k_a in dict.fromkeys((k_al1, _aligned_k_al1(max(1, k_al1 // 2), k_bl1))):
                yield TbeTiling(
                    batch_dim=dims.batch, d_dim=dims.depth, group_dim=dims.group, m_dim=m_dim, n_dim=dims.n,
                    k_dim=1, m_l0=m_l0, k_l0=hkwk, n_l0=n_l0, db_l0c=1, db_al1=db_al1, db_bl1=db_bl1,
                    k_al1=k_a, k_bl1=k_bl1,
                    reason=f"{split}; block m_l0={m_l0} n_l0={n_l0} k_al1={k_a} k_bl1={k_bl1} "
                           f"db_al1={db_al1} db_bl1={db_bl1}")
