"""This project's own stand-in for the closed TBE cache tiling (`GetTbeTiling`) of Conv3DBackpropFilterV2.

Both real dw templates call the closed library. The basic-block template keeps six of its answers in the blob
(params batchDim/groupDim/mDim/kDim/nDim and singleCoreBatch, through InitTilingValue) although its own kernels
split work by basicBlockTiling; the base template takes the whole core split and its L0/L1 blocks from it. The
library is not public, so this module proposes answers of the same shape, which base.py converts exactly as the
real code converts a TBE answer (InitTilingValue, InitCalTilingValue). docs/conv3d_backprop_filter_tiling.md
explains the rule; every tiling that uses it says so in its notes.

Core split: grow one axis at a time (batch and dout by their divisors, then group, M = cout blocks, N = cin
blocks x kernel depth, K = dy rows), taking the step that cuts the per-core work most per core added (ties in
that order), while the product stays within the cores.
Blocks: first the real base template's own open block rule (UpdateBaseBlock + UpdateBaseStep) on that split;
then a ladder from the largest M x N block within L0C down, with K from L0 and the K steps from L1. The caller
keeps the first proposal the validator accepts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ascend_sim.machine.platform import Platform
from tiling.common.integers import ceil_div
from tiling.common.tbe_rule import TbeTiling, greedy_core_split
from tiling.conv3d_backprop_filter.base import BaseTemplate, TilingValue
from tiling.conv3d_backprop_filter.run_info import BLOCK_CUBE, RunInfo


@dataclass(frozen=True)
class TbeDims:
    batch_dim: int = 1
    d_dim: int = 1
    group_dim: int = 1
    m_dim: int = 1
    n_dim: int = 1
    k_dim: int = 1


def own_core_dims(run: RunInfo, cores: int) -> TbeDims:
    """Greedy split (tiling/common/tbe_rule.py): batch and dout by their divisors, then group, M = cout blocks,
    N = cin blocks x kernel depth, K = dy rows."""
    m_units = ceil_div(run.cout1_g * run.k0, BLOCK_CUBE)  # singleCoreCout is aligned to 16
    n_units = run.cin1_g if run.split_dk else run.cin1_g * run.kd
    dims = greedy_core_split({"batch": (run.batch, True), "depth": (run.dout, True), "group": (run.real_g, False),
                              "m": (m_units, False), "n": (n_units, False), "k": (run.ho, False)}, cores)
    m_dim = ceil_div(m_units, ceil_div(m_units, dims["m"]))
    return TbeDims(batch_dim=dims["batch"], d_dim=dims["depth"], group_dim=dims["group"], m_dim=m_dim,
                   n_dim=dims["n"], k_dim=dims["k"])


def _tbe(dims: TbeDims, run: RunInfo, t: TilingValue, db: tuple[int, int, int]) -> TbeTiling:
    """A TBE answer whose conversion (InitCalTilingValue) gives back the blocks and steps of t."""
    k_l0 = t.baseK // run.k0
    return TbeTiling(batch_dim=dims.batch_dim, d_dim=dims.d_dim, group_dim=dims.group_dim, m_dim=dims.m_dim,
                     n_dim=dims.n_dim, k_dim=dims.k_dim, m_l0=t.baseM // BLOCK_CUBE, k_l0=k_l0,
                     n_l0=t.baseN // BLOCK_CUBE, m_al1=1, n_bl1=1, k_al1=t.stepKa * k_l0, k_bl1=t.stepKb * k_l0,
                     db_l0c=db[0], db_al1=db[1], db_bl1=db[2])


def dims_only(dims: TbeDims) -> TbeTiling:
    """A TBE answer with this core split whose blocks nobody keeps (all 1: the caller overwrites them)."""
    return TbeTiling(batch_dim=dims.batch_dim, d_dim=dims.d_dim, group_dim=dims.group_dim, m_dim=dims.m_dim,
                     n_dim=dims.n_dim, k_dim=dims.k_dim, m_l0=1, k_l0=1, n_l0=1, m_al1=1, n_bl1=1, k_al1=1, k_bl1=1,
                     db_l0c=1, db_al1=1, db_bl1=1)


def own_block_candidates(run: RunInfo, platform: Platform, dims: TbeDims) -> Iterator[TbeTiling]:
    """Block proposals for a core split, most preferred first."""
    base = BaseTemplate(run, platform, dims_only(dims))
    split = base.split_from_tbe(TilingValue())  # the single-core shape of this split
    # 1. the real base template's open block rule, on this split
    t = TilingValue(**{**split.__dict__})
    t.al1Pbuffer = t.bl1Pbuffer = 2
    t.stepM = t.stepN = 1
    t.baseM, t.baseK, t.baseN = base.update_base_block(t)
    t.baseN = ceil_div(t.baseN, BLOCK_CUBE) * BLOCK_CUBE
    t.baseK = ceil_div(t.baseK, BLOCK_CUBE) * BLOCK_CUBE
    t.stepKa, t.stepKb = base.update_base_step(t)
    yield _tbe(dims, run, t, (1, 2, 2))
    # 2. a ladder: the largest block within L0C (M kept larger), K from L0, the K steps from L1
    m_cap = min(ceil_div(split.singleCoreCout, BLOCK_CUBE), 16)
    n_cap = min(ceil_div(split.singleCoreCin * run.kh * run.kw, BLOCK_CUBE), 16)
    k_cap = ceil_div(split.singleCoreHo * run.wo, BLOCK_CUBE)
    l0c_fractals = max(platform.L0C // (BLOCK_CUBE * BLOCK_CUBE * 4), 1)
    m, n = m_cap, n_cap
    while m * n > l0c_fractals:
        if n >= m and n > 1:
            n -= 1
        else:
            m -= 1
    while True:
        db_l0c = 2 if 2 * m * n <= l0c_fractals else 1
        # L0A/L0B always ping-pong (the conversion sets al0Pbuffer = bl0Pbuffer = 2): half of each per block
        k_frac = min(platform.L0A // 2 // (m * BLOCK_CUBE * BLOCK_CUBE * run.dtype_bytes),
                     platform.L0B // 2 // (n * BLOCK_CUBE * BLOCK_CUBE * run.dtype_bytes), k_cap)
        for k in dict.fromkeys((k_frac, max(1, k_frac // 2), 1)) if k_frac >= 1 else ():
            for db_a1, db_b1 in ((2, 2), (1, 2), (2, 1), (1, 1)):
                for steps in ((4, 4), (2, 2), (1, 1)):
                    t = TilingValue(**{**split.__dict__})
                    t.baseM, t.baseN, t.baseK = m * BLOCK_CUBE, n * BLOCK_CUBE, k * BLOCK_CUBE
                    t.stepKa, t.stepKb = steps
                    yield _tbe(dims, run, t, (db_l0c, db_a1, db_b1))
        if m == 1 and n == 1:
            break
        if n > m or m == 1:
            n -= 1
        else:
            m -= 1
    yield from _thin_candidates(run, platform)


def _thin_candidates(run: RunInfo, platform: Platform) -> Iterator[TbeTiling]:
    """Last resort for wide feature maps: split dy rows across the cores and load a core's whole K into B1 at
    once, so that a B1 load holds whole x rows (a load of part of a row can straddle two, which with a stride
    costs stride more rows); the smallest M and N blocks, single buffers."""
    dims = TbeDims(k_dim=min(run.ho, platform.aic_cores))
    split = BaseTemplate(run, platform, _tbe(dims, run, TilingValue(baseK=run.k0, baseM=16, baseN=16, stepKa=1,
                                                                    stepKb=1), (1, 1, 1))).split_from_tbe(
        TilingValue())
    k_total = split.singleCoreHo * run.wo
    k_max = platform.L0A // 2 // (BLOCK_CUBE * run.dtype_bytes) // BLOCK_CUBE * BLOCK_CUBE
    whole = min(ceil_div(k_total, BLOCK_CUBE) * BLOCK_CUBE, k_max)
    # whole rows of this core's K in one load; then the smallest load (16 pixels, at most two rows for the host)
    for base_k, step_kb in dict.fromkeys(((whole, ceil_div(k_total, whole)), (BLOCK_CUBE, 1))):
        t = TilingValue(baseM=BLOCK_CUBE, baseN=BLOCK_CUBE, baseK=base_k, stepKa=1, stepKb=step_kb)
        yield _tbe(dims, run, t, (1, 1, 1))
