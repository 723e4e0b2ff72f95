"""Reductions on PIPE_V (half and float on A2/A3):

* WholeReduceSum / WholeReduceMax / WholeReduceMin (ReduceRepeat in the current docs): one result per repeat
  (Max/Min also its index within the repeat, by ReduceOrder), dstRepStride in results;
* BlockReduceSum / BlockReduceMax / BlockReduceMin (ReduceDataBlock): one result per DataBlock, 8 per repeat,
  dstRepStride in 8-result units;
* ReduceSum(dst, src, sharedTmpBuffer, count) and ReduceMax(dst, src, sharedTmpBuffer, count, calIndex): the
  first `count` elements to dst[0] (ReduceMax: and the index as the dtype's bits at dst[1]).

Sums follow a binary tree of adjacent pairs in the element type (ReduceDataBlock.md 关键特性说明; ReduceRepeat.md
says SUM does the same per repeat); masked-out elements count as 0 (sum) or -inf (max / min: +inf). The count
form of ReduceSum is one vcadd in Counter mode that accumulates the repeats into a register (dav_c220
kernel_operator_vec_reduce_impl.h ReduceSumImpl); here each repeat's tree sum is added to the running total in
order, a modelling choice. ReduceMax's count form is a software sequence of vcmax on hardware; it is one record
here, with the first index of the maximum (ReduceRepeat.md: "存在多个最值 ... 最小索引").
Sources: docs/zh/api/SIMD-API/基础API/Memory矢量计算/归约计算/, impl/basic_api/kernel_operator_vec_reduce_intf_impl.h.
"""
from __future__ import annotations

from enum import Enum
from functools import lru_cache

import numpy as np

from ascend_sim.isa.common import check_range
from ascend_sim.isa.vector.common import (V, check_count, check_dtype, check_in_ub, check_ub, current_core,
                                          repeat_offsets, selected, selection, set_mask, vector_cost)
from ascend_sim.machine.faults import Misaligned, ParameterOutOfRange
from ascend_sim.record import Kind, define, operands_type

FLOAT = frozenset((np.dtype(np.float16), np.dtype(np.float32)))


class ReduceOrder(Enum):
    ORDER_VALUE_INDEX = 0
    ORDER_INDEX_VALUE = 1
    ORDER_ONLY_VALUE = 2
    ORDER_ONLY_INDEX = 3


class ReduceType(Enum):
    SUM = 0
    MAX = 1
    MIN = 2


def tree_sum(values: np.ndarray) -> np.ndarray:
    """Sum along the last axis (a power of two) in adjacent pairs, each addition rounded to the element type."""
    with np.errstate(all="ignore"):
        while values.shape[-1] > 1:
            values = values[..., 0::2] + values[..., 1::2]
    return values[..., 0]


def _identity(kind: ReduceType, dtype):
    return {ReduceType.SUM: 0, ReduceType.MAX: -np.inf, ReduceType.MIN: np.inf}[kind]


def _reduce_rows(rows: np.ndarray, kind: ReduceType):
    """(values, indices) of each row."""
    if kind == ReduceType.SUM:
        return tree_sum(rows), None
    pick = np.argmax if kind == ReduceType.MAX else np.argmin
    index = pick(rows, axis=-1)  # the first extreme element: the smallest index
    return np.take_along_axis(rows, index[..., None], axis=-1)[..., 0], index


@lru_cache(maxsize=256)
def _geometry(repeats, per_repeat, itemsize, blk, rep, key):
    """(element offsets, selection), both (repeats, per_repeat): computed again at execution rather than kept
    in every record."""
    return repeat_offsets(repeats, per_repeat, itemsize, blk, rep), selected(key, repeats, per_repeat)


ReduceOperands = operands_type(
    "ReduceOperands", "sbuf s0 dbuf d0 dtype geometry kind group order d_unit d_stride sequential timing",
    "repeats of sbuf at s0 (geometry: repeats, per_repeat, itemsize, strides, selection key) reduced (kind) in "
    "groups of `group` into dbuf at d0, d_unit elements per result, d_stride per repeat, `order` of value and "
    "index; sequential: repeat by repeat; timing: the vector table's key. The count forms (ReduceSum, ReduceMax) "
    "leave group, d_unit, d_stride and sequential None.")


def _execute(rec) -> None:
    (sbuf, s0, dbuf, d0, dtype, geometry, kind, group, order, d_unit, d_stride, sequential, _) = rec.args
    offs, sel = _geometry(*geometry)
    src = sbuf.view(dtype, s0, int(offs.max()) + 1)
    rows = np.where(sel, src[offs], np.array(_identity(kind, dtype), dtype))
    repeats, per_repeat = rows.shape
    rows = rows.reshape(repeats, per_repeat // group, group)  # group: the elements one result reduces
    positions = (np.arange(repeats) * d_stride).reshape(-1, 1) + np.arange(per_repeat // group).reshape(1, -1) * d_unit
    dst = dbuf.view(dtype, d0, int(positions.max()) + d_unit)
    if sequential:  # dst meets the source: each repeat reads before the next one's result lands
        for r in range(repeats):
            values, index = _reduce_rows(np.where(sel[r], src[offs[r]], np.array(_identity(kind, dtype), dtype))
                                         .reshape(-1, group), kind)
            _store(dst, positions[r], values, index, order, dtype)
        return
    values, index = _reduce_rows(rows, kind)
    _store(dst, positions, values, index, order, dtype)


def _store(dst, positions, values, index, order, dtype) -> None:
    if index is None or order == ReduceOrder.ORDER_ONLY_VALUE:
        dst[positions] = values
        return
    bits = index.astype(np.uint16 if dtype.itemsize == 2 else np.uint32).view(dtype)
    if order == ReduceOrder.ORDER_ONLY_INDEX:
        dst[positions] = bits
    elif order == ReduceOrder.ORDER_VALUE_INDEX:
        dst[positions], dst[positions + 1] = values, bits
    else:
        dst[positions], dst[positions + 1] = bits, values


_NAMES = ("WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "BlockReduceSum", "BlockReduceMax", "BlockReduceMin",
          "ReduceSum", "ReduceMax")
SPECS = {name: define(name, V, kind=Kind.COMPUTE, operands=ReduceOperands, cost=vector_cost, execute=_execute,
                      doc=__doc__.split("\n")[0]) for name in _NAMES}
_LATENCY_NAME = {"Sum": "WholeReduceSum", "Max": "WholeReduceMax", "Min": "WholeReduceMax"}


def _issue(name, dst, src, kind, block_level, mask, repeat_time, dst_rep_stride, src_blk_stride, src_rep_stride,
           order=ReduceOrder.ORDER_ONLY_VALUE, is_set_mask=True, count=None):
    core = current_core()
    check_ub(core, name, V, src, "src")
    check_in_ub(core, name, V, dst, "dst")  # dst: aligned to its results only (ReduceRepeat.md table 3)
    check_dtype(core, name, src, FLOAT, "src")
    if dst.dtype != src.dtype:
        raise core.fault(ParameterOutOfRange(f"{name}: dst dtype {dst.dtype} differs from src dtype {src.dtype}"),
                         name, V)
    dtype = src.dtype
    per_repeat = 256 // dtype.itemsize
    pair = kind != ReduceType.SUM and not block_level and order in (ReduceOrder.ORDER_VALUE_INDEX,
                                                                     ReduceOrder.ORDER_INDEX_VALUE)
    d_align = dtype.itemsize * (2 if pair else 1)
    if dst.address % d_align:
        raise core.fault(Misaligned(f"dst address {dst.address} in UB is not a multiple of {d_align} bytes",
                                    buffer="UB", addr_range=(dst.address, dst.address + 1)), name, V)
    if count is not None:
        repeats, key = -(-count // per_repeat), ("count", count)
        src_blk_stride, src_rep_stride, dst_rep_stride = 1, 8, 0
        registers = (("mask_mode", "COUNT"), ("vector_mask", (0, count)))
    else:
        check_range(core, name, V, "repeatTime", repeat_time, 0, 255)
        for field, value in (("dstRepStride", dst_rep_stride), ("srcBlkStride", src_blk_stride),
                             ("srcRepStride", src_rep_stride)):
            check_range(core, name, V, field, value, 0, 65535)
        if is_set_mask:
            set_mask(core, name, mask, per_repeat)
        repeats, key = selection(core, name, repeat_time, per_repeat)
        registers = (("mask_mode", core.registers.get("mask_mode", "NORM")),
                     ("vector_mask", core.registers.get("vector_mask")))
    params = {"repeatTime": repeat_time, "dstRepStride": dst_rep_stride, "srcBlkStride": src_blk_stride,
              "srcRepStride": src_rep_stride, "order": order.name, "count": count}
    spec = SPECS[name]
    if repeats == 0 or (key[0] == "bits" and key[1] == key[2] == 0) or (key[0] == "count" and key[1] == 0):
        core.issue(spec, V, params, registers=registers)
        return None
    geometry = (repeats, per_repeat, dtype.itemsize, src_blk_stride, src_rep_stride, key)
    offs, _ = _geometry(*geometry)
    group = 32 // dtype.itemsize if block_level else per_repeat
    d_unit = d_align // dtype.itemsize  # elements one result takes
    d_stride = dst_rep_stride * d_unit * (per_repeat // group)
    s_lo, s_hi = src.address, src.address + (int(offs.max()) + 1) * dtype.itemsize
    n_results = (repeats - 1) * d_stride + (per_repeat // group - 1) * d_unit + d_unit
    if count is not None:  # one running total
        n_results, d_stride = d_unit, 0
    d_lo, d_hi = dst.address, dst.address + n_results * dtype.itemsize
    # in order when a result lands where a later repeat reads, or several repeats write one place (last wins)
    sequential = repeats > 1 and ((d_lo < s_hi and s_lo < d_hi) or d_stride == 0)
    timing = (_LATENCY_NAME[name[-3:]] if not block_level else "BlockReduceSum", dtype, repeats, per_repeat)
    if count is not None:
        args = ReduceOperands(src.buffer, src.address, dst.buffer, dst.address, dtype, geometry, kind, order=order,
                              timing=timing)
    else:
        args = ReduceOperands(src.buffer, src.address, dst.buffer, dst.address, dtype, geometry, kind, group, order,
                              d_unit, d_stride, sequential, timing)
    return core.issue(spec, V, params, ((src.buffer, s_lo, s_hi),), ((dst.buffer, d_lo, d_hi),), args,
                      registers=registers)


def _total_execute(rec) -> None:
    """The count forms: ReduceSum's running total of per-repeat tree sums; ReduceMax's first maximum."""
    ops = rec.args
    sbuf, s0, dbuf, d0, dtype, geometry, kind, order = (ops.sbuf, ops.s0, ops.dbuf, ops.d0, ops.dtype, ops.geometry,
                                                        ops.kind, ops.order)
    offs, sel = _geometry(*geometry)
    src = sbuf.view(dtype, s0, int(offs.max()) + 1)
    rows = np.where(sel, src[offs], np.array(_identity(kind, dtype), dtype))
    dst = dbuf.view(dtype, d0, 2)
    if kind == ReduceType.SUM:
        total = dtype.type(0)
        with np.errstate(all="ignore"):
            for partial in tree_sum(rows):
                total = dtype.type(total + partial)
        dst[0] = total
        return
    flat = rows.reshape(-1)
    index = int(np.argmax(flat) if kind == ReduceType.MAX else np.argmin(flat))
    _store(dst, np.array([0]), flat[index:index + 1], np.array([index]), order, dtype)


for _name in ("ReduceSum", "ReduceMax"):
    SPECS[_name].execute = _total_execute


# ------------------------------------------------------------------------------------------ the API
def WholeReduceSum(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, isSetMask=True):
    """dst[r * dstRepStride] = the sum of repeat r's selected elements."""
    return _issue("WholeReduceSum", dst, src, ReduceType.SUM, False, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, is_set_mask=isSetMask)


def WholeReduceMax(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX, isSetMask=True):
    """Each repeat's maximum and/or its index in the repeat (stored as the dtype's bits), as `order` says."""
    return _issue("WholeReduceMax", dst, src, ReduceType.MAX, False, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, order, isSetMask)


def WholeReduceMin(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                   order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX, isSetMask=True):
    return _issue("WholeReduceMin", dst, src, ReduceType.MIN, False, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, order, isSetMask)


def BlockReduceSum(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, isSetMask=True):
    """The sum of each DataBlock of each repeat: 8 results per repeat, repeats dstRepStride x 8 results apart."""
    return _issue("BlockReduceSum", dst, src, ReduceType.SUM, True, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, is_set_mask=isSetMask)


def BlockReduceMax(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, isSetMask=True):
    return _issue("BlockReduceMax", dst, src, ReduceType.MAX, True, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, is_set_mask=isSetMask)


def BlockReduceMin(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride, isSetMask=True):
    return _issue("BlockReduceMin", dst, src, ReduceType.MIN, True, mask, repeatTime, dstRepStride, srcBlkStride,
                  srcRepStride, is_set_mask=isSetMask)


def ReduceSum(dst, src, sharedTmpBuffer, count):
    """dst[0] = the sum of src's first `count` elements (count in [1, UB size / sizeof(T)])."""
    core = current_core()
    count = check_count(core, "ReduceSum", count)
    check_range(core, "ReduceSum", V, "count", count, 1, core.platform.UB // src.dtype.itemsize)
    return _issue("ReduceSum", dst, src, ReduceType.SUM, False, None, None, 0, 1, 8, count=count)


def ReduceMax(dst, src, sharedTmpBuffer, count, calIndex: bool = False):
    """dst[0] = the maximum of src's first `count` elements; with calIndex, dst[1] = its index (as T's bits)."""
    core = current_core()
    count = check_count(core, "ReduceMax", count)
    check_range(core, "ReduceMax", V, "count", count, 1, core.platform.UB // src.dtype.itemsize)
    order = ReduceOrder.ORDER_VALUE_INDEX if calIndex else ReduceOrder.ORDER_ONLY_VALUE
    return _issue("ReduceMax", dst, src, ReduceType.MAX, False, None, None, 0, 1, 8, order, count=count)


__all__ = ["ReduceOrder", "ReduceType", "WholeReduceSum", "WholeReduceMax", "WholeReduceMin", "BlockReduceSum",
           "BlockReduceMax", "BlockReduceMin", "ReduceSum", "ReduceMax"]
