"""The Ascend 950's multi-dimensional GM -> UB copy, ND-DMA: `DataCopy<T, dim, config>(dst, src, NdDmaParams)`.

Loop d (0 the lowest, dim in [1, 5]) walks loopLpSize[d] + loopSize[d] + loopRpSize[d] elements of the
destination loopDstStride[d] elements apart; the loopSize[d] in the middle come from the source loopSrcStride[d]
elements apart; the pads are NdDmaParams::constantValue, or with NdDmaConfig::isNearestValueMode the first / last
element of that dimension. NdDmaConfig::loopLpSize / loopRpSize, when not unsetPad, give every dimension the same
pad. Strides in elements; a source stride 0 broadcasts (the doc's scenario 4).

Sources: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/DataCopy（GMToUB多维数据搬运NDDMA）.md
(tables 3-5: ranges, the pad modes, the data types, which leave out hifloat8 and the fp8 types) and
include/basic_api/kernel_struct_data_copy.h (NdDmaConfig, MultiCopyLoopInfo = NdDmaLoopInfo,
MultiCopyParams = NdDmaParams, kDefaultNdDmaConfig). Own rules, flagged: the cost is MTE2's overhead plus the
bytes moved (pads included) at this core's share of the GM read rate (no ND-DMA timing source); the ND-DMA cache
and its NdDmaDci refresh are not modelled (every read sees GM as it is); the doc's rule that the destination
loops may not interleave when their strides ascend is not checked (the copy writes in loop order, last wins).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import current_core, expect_position
from ascend_sim.machine.dtypes import float8_e4m3fn, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE2 = Pipe.MTE2
UNSET_PAD = 0xFFFF
_NO_NDDMA = (hifloat8, float8_e4m3fn)  # not in the doc's data types ("调用指令不支持hif8" in the dx kernel)


@dataclass(slots=True)
class NdDmaConfig:
    """The template's config: isNearestValueMode (pads repeat the edge element), loopLpSize / loopRpSize for
    every dimension (unsetPad: per dimension, from NdDmaLoopInfo)."""

    isNearestValueMode: bool = False
    loopLpSize: int = UNSET_PAD
    loopRpSize: int = UNSET_PAD
    ascOptimize: bool = False


kDefaultNdDmaConfig = NdDmaConfig()


def _zeros(dim: int) -> list:
    return [0] * dim


@dataclass(slots=True)
class NdDmaLoopInfo:
    """MultiCopyLoopInfo<dim>: per loop (index 0 the lowest) the source / destination strides, the element count
    and the left / right pads, all in elements."""

    dim: int = 4
    loopSrcStride: list = field(default_factory=list)
    loopDstStride: list = field(default_factory=list)
    loopSize: list = field(default_factory=list)
    loopLpSize: list = field(default_factory=list)
    loopRpSize: list = field(default_factory=list)

    def __post_init__(self):
        for name in ("loopSrcStride", "loopDstStride", "loopSize", "loopLpSize", "loopRpSize"):
            if not getattr(self, name):
                setattr(self, name, _zeros(self.dim))


@dataclass(slots=True)
class NdDmaParams:
    """MultiCopyParams<T, dim>: the loops and the constant the pads take when isNearestValueMode is off."""

    loopInfo: NdDmaLoopInfo = field(default_factory=NdDmaLoopInfo)
    constantValue: float = 0


MultiCopyLoopInfo, MultiCopyParams, MultiCopyConfig = NdDmaLoopInfo, NdDmaParams, NdDmaConfig  # the old names

# table 5
_RANGES = {"loopSrcStride": (0, 2**40 - 1), "loopDstStride": (0, 2**20 - 1), "loopSize": (1, 2**20 - 1),
           "loopLpSize": (0, 255), "loopRpSize": (0, 255)}

NdDmaOperands = operands_type("NdDmaOperands", "sbuf s0 dbuf d0 dtype maps fill nbytes",
                              "dst element maps[1][i] of dbuf at d0 = src element maps[0][i] of sbuf at s0; "
                              "elements maps[2] of dst = fill; nbytes written.")


def _cost(ops, model) -> float:
    return model.rates.mte2_overhead + ops.nbytes / model.gm_read_rate


def _execute(rec) -> None:
    sbuf, s0, dbuf, d0, dtype, (src_idx, dst_idx, pad_idx, src_span, dst_span), fill, _ = rec.args
    dst = dbuf.view(dtype, d0, dst_span)
    dst[dst_idx] = sbuf.view(dtype, s0, src_span)[src_idx]
    if pad_idx.size:
        dst[pad_idx] = fill


NDDMA_GM_TO_UB = define("DataCopy(NdDma)", MTE2, kind=Kind.MOVE, operands=NdDmaOperands, cost=_cost,
                        execute=_execute, doc="GM -> UB (arch 3510): up to 5 nested loops with strides and pads.")


@lru_cache(maxsize=256)
def _maps(sizes, lps, rps, src_strides, dst_strides, nearest):
    """(source element, destination element) of every moved element, the destination elements of the pads (with
    nearest: none, they read the clamped source), and the spans. Loops are given lowest first."""
    src = np.zeros(1, np.int64)
    dst = np.zeros(1, np.int64)
    pad = np.zeros(1, bool)
    for n, lp, rp, ss, ds in zip(sizes, lps, rps, src_strides, dst_strides):  # lowest loop first: it varies fastest
        j = np.arange(lp + n + rp)
        inner = j - lp
        is_pad = (inner < 0) | (inner >= n)
        s = np.clip(inner, 0, n - 1) * ss
        src = (src[None, :] + s[:, None]).reshape(-1)
        dst = (dst[None, :] + (j * ds)[:, None]).reshape(-1)
        pad = (pad[None, :] | is_pad[:, None]).reshape(-1)
    if nearest:
        pad = np.zeros_like(pad)
    moved = ~pad
    src_idx, dst_idx = src[moved], dst[moved]
    src_span = int(src_idx.max()) + 1 if src_idx.size else 0
    return src_idx, dst_idx, dst[pad], src_span, int(dst.max()) + 1


def _pads(core, name, info, config, dim):
    lps = [config.loopLpSize] * dim if config.loopLpSize != UNSET_PAD else list(info.loopLpSize)
    rps = [config.loopRpSize] * dim if config.loopRpSize != UNSET_PAD else list(info.loopRpSize)
    for what, values in (("NdDmaConfig.loopLpSize", lps), ("NdDmaConfig.loopRpSize", rps)):
        if any(not 0 <= v <= 255 for v in values):
            raise core.fault(ParameterOutOfRange(f"{what}={values[0]} outside [0, 255] (or unsetPad {UNSET_PAD})"),
                             name, MTE2)
    return tuple(lps), tuple(rps)


def _check_loops(core, name, info: NdDmaLoopInfo) -> int:
    dim = info.dim
    if not 1 <= dim <= 5:
        raise core.fault(ParameterOutOfRange(f"dim={dim} outside [1, 5]"), name, MTE2)
    for field_name, (lo, hi) in _RANGES.items():
        values = getattr(info, field_name)
        if len(values) != dim:
            raise core.fault(ParameterOutOfRange(f"loopInfo.{field_name} has {len(values)} entries for dim={dim}"),
                             name, MTE2)
        for d, v in enumerate(values):
            if not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise core.fault(ParameterOutOfRange(f"loopInfo.{field_name}[{d}]={v!r} outside [{lo}, {hi}]"),
                                 name, MTE2)
    return dim


def copy_gm_to_ub_nddma(dst, src, params: NdDmaParams, config: NdDmaConfig = kDefaultNdDmaConfig) -> None:
    """DataCopy<T, dim, config>(dst UB, src GM, NdDmaParams<T, dim>) on the 950's MTE2."""
    core = current_core()
    name = NDDMA_GM_TO_UB.name
    require_arch35(core, name, MTE2, "DataCopy with NdDmaParams (ND-DMA)")
    if dst.__class__ is not LocalTensor or dst.buffer.name != "UB":
        expect_position(core, name, MTE2, dst, ("UB",), "dst")
    if src.__class__ is not GlobalTensor:
        expect_position(core, name, MTE2, src, ("GM",), "src")
    dtype = src.dtype
    if dst.dtype != dtype:
        raise core.fault(ParameterOutOfRange(f"src is {dtype} but dst is {dst.dtype}: ND-DMA does not convert"),
                         name, MTE2)
    if dtype in _NO_NDDMA:
        raise core.fault(ParameterOutOfRange(f"ND-DMA does not take {dtype} (its data types have no hifloat8 or "
                                             "fp8)"), name, MTE2)
    if not isinstance(config, NdDmaConfig):
        raise core.fault(ParameterOutOfRange(f"config={config!r} is not an NdDmaConfig"), name, MTE2)
    info = params.loopInfo
    dim = _check_loops(core, name, info)
    lps, rps = _pads(core, name, info, config, dim)
    maps = _maps(tuple(int(v) for v in info.loopSize), lps, rps, tuple(int(v) for v in info.loopSrcStride),
                 tuple(int(v) for v in info.loopDstStride), bool(config.isNearestValueMode))
    size = dtype.itemsize
    src_span, dst_span = maps[3], maps[4]
    nbytes = (maps[1].size + maps[2].size) * size
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address
    recorded = {"dim": dim, "loopSrcStride": tuple(info.loopSrcStride), "loopDstStride": tuple(info.loopDstStride),
                "loopSize": tuple(info.loopSize), "loopLpSize": lps, "loopRpSize": rps,
                "constantValue": params.constantValue, "isNearestValueMode": bool(config.isNearestValueMode)}
    # the GM box: the moved loops, highest first, then the element's bytes
    shape = tuple(int(n) for n in reversed(info.loopSize)) + (size,)
    strides = tuple(int(s) * size for s in reversed(info.loopSrcStride)) + (1,)
    core.issue(NDDMA_GM_TO_UB, MTE2, recorded, ((sbuf, s0, s0 + src_span * size),),
               ((dbuf, d0, d0 + dst_span * size),),
               NdDmaOperands(sbuf, s0, dbuf, d0, dtype, maps, dtype.type(params.constantValue), nbytes), "GM->UB",
               nbytes, footprint=((sbuf, s0, shape, strides, False),))


__all__ = ["NdDmaConfig", "NdDmaLoopInfo", "NdDmaParams", "MultiCopyLoopInfo", "MultiCopyParams", "MultiCopyConfig",
           "kDefaultNdDmaConfig", "copy_gm_to_ub_nddma", "UNSET_PAD"]
