"""MTE2: GM -> L1 moves (DataCopy contiguous, with DataCopyParams, with Nd2NzParams) and InitConstValue."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.common import (BLOCK, FRACTAL, check_aligned, check_fields, current_core, expect_position,
                                   fields_checker)
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE2 = Pipe.MTE2


@dataclass(slots=True)
class DataCopyParams:
    """blockCount blocks of blockLen DataBlocks (32 B); srcStride/dstStride are end-to-start gaps in DataBlocks."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0


@dataclass(slots=True)
class Nd2NzParams:
    """ND matrices (nValue rows x dValue cols, row pitch srcDValue elements) into NZ (C0-wide columns) in L1."""

    ndNum: int = 1
    nValue: int = 0
    dValue: int = 0
    srcNdMatrixStride: int = 0
    srcDValue: int = 0
    dstNzC0Stride: int = 0
    dstNzNStride: int = 0
    dstNzMatrixStride: int = 0


@dataclass(slots=True)
class InitConstValueParams:
    """repeatTimes repeats of blockNum blocks (32 B in L1, 512 B in L0A/L0B), dstGap blocks apart, set to initValue."""

    repeatTimes: int = 1
    blockNum: int = 0
    dstGap: int = 0
    initValue: float = 0.0


_DATACOPY_RANGES = {"blockCount": (0, 4095), "blockLen": (0, 65535), "srcStride": (0, 65535),
                    "dstStride": (0, 65535)}
_ND2NZ_RANGES = {"ndNum": (0, 4095), "nValue": (0, 16384), "dValue": (0, 65535),
                 "srcNdMatrixStride": (0, 65535), "srcDValue": (0, 65535), "dstNzC0Stride": (0, 65535),
                 "dstNzNStride": (0, 65535), "dstNzMatrixStride": (0, 65535)}


_check_datacopy = fields_checker(_DATACOPY_RANGES)
_check_nd2nz = fields_checker(_ND2NZ_RANGES)
_L1, _GM = ("L1",), ("GM",)


CopyOperands = operands_type("CopyOperands", "sbuf s0 s_pitch dbuf d0 d_pitch count blen nbytes",
                             "count rows of blen bytes, s_pitch / d_pitch apart, from sbuf at s0 to dbuf at d0 "
                             "(nbytes moved).")
Nd2NzOperands = operands_type("Nd2NzOperands", "sbuf s0 dbuf d0 dtype maps nbytes",
                              "sbuf at s0 to dbuf at d0 by the index maps of _nd2nz_maps (nbytes moved).")
InitConstOperands = operands_type("InitConstOperands", "dbuf d0 reps blen pitch dtype value nbytes",
                                  "reps rows of blen bytes, pitch apart, of dbuf at d0 set to value.")


def _mte2_cost(ops, model) -> float:
    """A GM read: a fixed overhead, then the bytes at this core's share of the GM bandwidth."""
    return model.rates.mte2_overhead + ops.nbytes / model.gm_read_rate


def _datacopy_execute(rec) -> None:
    """blockCount blocks of blockLen DataBlocks, each copied from the source pitch to the destination pitch."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, _ = rec.args
    if count == 1:
        dbuf.data[d0:d0 + blen] = sbuf.data[s0:s0 + blen]
    else:
        dbuf.strided(d0, (count, blen), (d_pitch, 1))[...] = sbuf.strided(s0, (count, blen), (s_pitch, 1))


DATA_COPY = define("DataCopy", MTE2, kind=Kind.MOVE, operands=CopyOperands, cost=_mte2_cost,
                   execute=_datacopy_execute, params=DataCopyParams,
                   doc="GM -> L1: blockCount blocks of blockLen 32-byte DataBlocks with gaps.")


def copy_gm_to_l1(dst, src, params: DataCopyParams) -> None:
    core = current_core()
    name = "DataCopy"
    if dst.__class__ is not LocalTensor or dst.buffer.name != "L1":
        expect_position(core, name, MTE2, dst, _L1, "dst")
    if src.__class__ is not GlobalTensor:
        expect_position(core, name, MTE2, src, _GM, "src")
    _check_datacopy(core, name, MTE2, params)
    if dst.address % core.alignments.L1:
        check_aligned(core, name, MTE2, dst, core.alignments.L1, "dst")
    count, blen = params.blockCount, params.blockLen * BLOCK
    src_pitch, dst_pitch = blen + params.srcStride * BLOCK, blen + params.dstStride * BLOCK
    nbytes = count * blen
    if nbytes == 0:  # blockCount or blockLen 0: a NOP that still takes an issue slot
        core.issue(DATA_COPY, MTE2, params)
        return
    s0, d0 = src.address, dst.address
    s1, d1 = s0 + (count - 1) * src_pitch + blen, d0 + (count - 1) * dst_pitch + blen
    sbuf, dbuf = src.buffer, dst.buffer
    core.issue(DATA_COPY, MTE2, params, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
               CopyOperands(sbuf, s0, src_pitch, dbuf, d0, dst_pitch, count, blen, nbytes), "GM->L1", nbytes,
               footprint=((sbuf, s0, (count, blen), (src_pitch, 1), False),))


def copy_gm_to_l1_contiguous(dst, src, count: int) -> None:
    """Contiguous copy of `count` elements; the byte length is rounded DOWN to 32 B like the hardware."""
    nblocks = (int(count) * dst.dtype.itemsize) // BLOCK
    copy_gm_to_l1(dst, src, DataCopyParams(1, nblocks, 0, 0))


@lru_cache(maxsize=256)
def _nd2nz_maps(ndNum, nValue, dValue, sMS, sD, c0s, ns, dMS, c0):
    """Flat element indices (src, dst), the destination positions of the pad elements and the spans for one
    Nd2Nz; and, when every element is real (dValue a multiple of C0) and no two land on the same destination
    element, the (shape, src strides, dst strides) in elements that do the same move as one strided copy."""
    c1 = -(-dValue // c0)
    i = np.arange(ndNum).reshape(-1, 1, 1, 1)
    r = np.arange(nValue).reshape(1, -1, 1, 1)
    j = np.arange(c1).reshape(1, 1, -1, 1)
    e = np.arange(c0).reshape(1, 1, 1, -1)
    col = j * c0 + e
    dst = (i * dMS + j * (c0s * c0) + r * (ns * c0) + e).reshape(-1)
    valid = np.broadcast_to(col < dValue, (ndNum, nValue, c1, c0)).reshape(-1)
    src = (i * sMS + r * sD + np.minimum(col, max(dValue - 1, 0))).reshape(-1)
    strided = None
    if dValue % c0 == 0 and np.unique(dst).size == dst.size:
        strided = ((ndNum, nValue, c1, c0), (sMS, sD, c0, 1), (dMS, ns * c0, c0s * c0, 1))
    return src, dst, np.flatnonzero(~valid), int(src.max()) + 1, int(dst.max()) + 1, strided


def _nd2nz_execute(rec) -> None:
    """Each source row's dValue elements, cut into C0-wide pieces, land in the NZ columns; the tail of the last
    piece is zero."""
    sbuf, s0, dbuf, d0, dtype, maps, _ = rec.args
    smap, dmap, pads, sspan, dspan, strided = maps
    if strided is not None:  # the same element moves as the index maps, as one strided copy
        shape, s_strides, d_strides = strided
        size = dtype.itemsize
        dbuf.strided(d0, shape, tuple(x * size for x in d_strides), dtype)[...] = \
            sbuf.strided(s0, shape, tuple(x * size for x in s_strides), dtype)
        return
    values = sbuf.view(dtype, s0, sspan)[smap]
    values[pads] = 0
    dbuf.view(dtype, d0, dspan)[dmap] = values


DATA_COPY_ND2NZ = define("DataCopy(Nd2Nz)", MTE2, kind=Kind.MOVE, operands=Nd2NzOperands, cost=_mte2_cost,
                         execute=_nd2nz_execute, params=Nd2NzParams,
                         doc="GM -> L1: ndNum ND matrices into NZ (C0-wide column blocks).")


def copy_gm_to_l1_nd2nz(dst, src, params: Nd2NzParams) -> None:
    core = current_core()
    name = "DataCopy(Nd2Nz)"
    if dst.__class__ is not LocalTensor or dst.buffer.name != "L1":
        expect_position(core, name, MTE2, dst, _L1, "dst")
    if src.__class__ is not GlobalTensor:
        expect_position(core, name, MTE2, src, _GM, "src")
    _check_nd2nz(core, name, MTE2, params)
    if dst.address % core.alignments.L1:
        check_aligned(core, name, MTE2, dst, core.alignments.L1, "dst")
    p = params
    if p.ndNum == 0 or p.nValue == 0 or p.dValue == 0:
        core.issue(DATA_COPY_ND2NZ, MTE2, params)
        return
    dtype = src.dtype
    c0 = BLOCK // dtype.itemsize
    maps = _nd2nz_maps(p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride,
                       p.dstNzNStride, p.dstNzMatrixStride, c0)
    sspan, dspan = maps[3], maps[4]
    size = dtype.itemsize
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address
    nbytes = p.ndNum * p.nValue * p.dValue * size
    core.issue(DATA_COPY_ND2NZ, MTE2, params, ((sbuf, s0, s0 + sspan * size),), ((dbuf, d0, d0 + dspan * size),),
               Nd2NzOperands(sbuf, s0, dbuf, d0, dtype, maps, nbytes), "GM->L1", nbytes,
               footprint=((sbuf, s0, (p.ndNum, p.nValue, p.dValue * size),
                           (p.srcNdMatrixStride * size, p.srcDValue * size, 1), False),))


def _init_const_cost(ops, model) -> float:
    return model.rates.mte1_overhead + ops.nbytes / model.rates.l1_init_bytes


def _init_const_execute(rec) -> None:
    """repeatTimes runs of blockNum blocks, dstGap blocks apart, each element set to initValue."""
    dbuf, d0, reps, blen, pitch, dtype, value, _ = rec.args
    rows = dbuf.strided(d0, (reps, blen), (pitch, 1))
    rows[...] = np.full(blen // dtype.itemsize, value, dtype=dtype).view(np.uint8)


# a fill is a move without a source (the dataflow finds no sources for what it wrote)
INIT_CONST_VALUE = define("InitConstValue", kind=Kind.MOVE, operands=InitConstOperands, cost=_init_const_cost,
                          execute=_init_const_execute,
                          params=InitConstValueParams, doc="Fill blocks of L1 (MTE2) or L0A/L0B (MTE1) with a value.")


@cached
def InitConstValue(dst, params: InitConstValueParams) -> None:
    """Fill blocks of L1 (MTE2) or L0A/L0B (MTE1) with one value, e.g. zeros before a zero-inserting copy."""
    core = current_core()
    where = dst.buffer.name
    pipe = MTE2 if where == "L1" else Pipe.MTE1
    name = "InitConstValue"
    expect_position(core, name, pipe, dst, ("L1", "L0A", "L0B"), "dst")
    check_fields(core, name, pipe, params, {"repeatTimes": (0, 32767), "blockNum": (0, 32767), "dstGap": (0, 32767)})
    unit = BLOCK if where == "L1" else FRACTAL
    check_aligned(core, name, pipe, dst, core.platform.alignment(where), "dst")
    reps, blen, pitch = params.repeatTimes, params.blockNum * unit, (params.blockNum + params.dstGap) * unit
    d0 = dst.address
    nbytes = reps * blen
    if nbytes == 0:
        core.issue(INIT_CONST_VALUE, pipe, params)
        return
    d1 = d0 + (reps - 1) * pitch + blen
    dbuf = dst.buffer
    core.issue(INIT_CONST_VALUE, pipe, params, (), ((dbuf, d0, d1),),
               InitConstOperands(dbuf, d0, reps, blen, pitch, dst.dtype, params.initValue, nbytes))
