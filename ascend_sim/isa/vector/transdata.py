"""TransDataTo5HD on PIPE_V (vnchwconv): per repeat, 16 source DataBlocks (srcList) are the rows of a matrix whose
transpose is written to the 16 destination blocks (dstList). This is NCHW -> NC1HWC0 when the 16 source blocks are
16 channels.
  b16: dst block j, element i = src block i, element j (a 16 x 16 transpose);
  b8:  dst block j, element 16 * dstHighHalf + i = src block i, element 16 * srcHighHalf + j (i, j < 16): half a
       block of each, the other half of dst left as it was;
  b32: dst block 2j + h, element e = src block 8h + e, element j (j, e < 8): the 16 x 8 matrix's transpose, each of
       its 8 rows of 16 elements in two blocks.

Source: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据排布转换/TransDataTo5HD.md (asc-devkit 82b89a15: the b8
rule, the int8 / half / int32 examples with contiguous lists, which tests/test_vector_transdata*.py reproduce) and
the 16 x 16 truth of examples/01_simd_cpp_api/03_basic_api/01_memory_vector_compute/transpose/scripts/gen_data.py.
Repeat r reads and writes each list address plus r x RepStride blocks, except that with repeatTimes = 1 the only
repeat is already offset by one RepStride (the page's note).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.common import BLOCK, check_range
from ascend_sim.isa.vector.common import V, check_ub, current_core, vector_cost
from ascend_sim.machine.dtypes import bfloat16
from ascend_sim.machine.faults import Misaligned, ParameterOutOfRange
from ascend_sim.record import Kind, define, operands_type

LIST_SIZE = 16  # NCHW_CONV_ADDR_LIST_SIZE
# bfloat16: the arch35 dx kernel's weight pre-transpose calls TransDataTo5HD<bfloat16_t> (a bit move like half's)
B16 = (np.dtype(np.float16), np.dtype(np.int16), np.dtype(np.uint16), np.dtype(bfloat16))
B8 = (np.dtype(np.int8), np.dtype(np.uint8))
B32 = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint32))


def _element_map(itemsize: int, dst_high: bool, src_high: bool) -> tuple[np.ndarray, np.ndarray]:
    """(dst block, dst element, src block, src element) of every element one repeat moves, as two (block,
    element) pairs of flat arrays."""
    if itemsize == 4:
        j, h, e = np.meshgrid(np.arange(8), np.arange(2), np.arange(8), indexing="ij")
        return (2 * j + h).ravel(), e.ravel(), (8 * h + e).ravel(), j.ravel()
    j, i = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if itemsize == 1:
        return j.ravel(), (16 * int(dst_high) + i).ravel(), i.ravel(), (16 * int(src_high) + j).ravel()
    return j.ravel(), i.ravel(), i.ravel(), j.ravel()


@dataclass(slots=True)
class TransDataTo5HDParams:
    dstHighHalf: bool = False
    srcHighHalf: bool = False
    repeatTimes: int = 1
    dstRepStride: int = 0
    srcRepStride: int = 0


TransDataOperands = operands_type("TransDataOperands", "buf dtype src_blocks dst_blocks high_halves sequential timing",
                                  "the 16 source and destination DataBlocks of buf per repeat (repeats x 16 block "
                                  "numbers; the element maps are made at execution), (dstHighHalf, srcHighHalf), "
                                  "repeat by repeat when sequential; timing: the vector table's key.")


def _execute(rec) -> None:
    ops = rec.args
    buf, dtype, src_blocks, dst_blocks, sequential = ops.buf, ops.dtype, ops.src_blocks, ops.dst_blocks, ops.sequential
    c0 = BLOCK // dtype.itemsize
    if dtype.itemsize == 2 and not sequential:
        # b16, repeats independent: each repeat's 16 x 16 block matrix transposed as a whole (the element map
        # below, block by block: dst block j, element i = src block i, element j), all repeats at once
        blocks = buf.view(dtype, 0, buf.capacity // BLOCK * c0).reshape(-1, c0)
        blocks[dst_blocks] = blocks.take(src_blocks, axis=0).transpose(0, 2, 1)
        return
    # the element indices are made here, not at issue: a record waiting to run (or a timing-only one) holds only
    # the block numbers (repeats x 16) instead of repeats x 256 element indices
    d_blk, d_el, s_blk, s_el = _element_map(dtype.itemsize, *ops.high_halves)
    src_idx = src_blocks[:, s_blk] * c0 + s_el  # (repeats, elements moved per repeat)
    dst_idx = dst_blocks[:, d_blk] * c0 + d_el
    ub = buf.view(dtype, 0, buf.capacity // dtype.itemsize)
    if not sequential:
        ub[dst_idx] = ub[src_idx]
        return
    for r in range(src_idx.shape[0]):
        ub[dst_idx[r]] = ub[src_idx[r]]


TRANS_DATA_TO_5HD = define("TransDataTo5HD", V, kind=Kind.MOVE, operands=TransDataOperands, cost=vector_cost,
                           execute=_execute, params=TransDataTo5HDParams,
                           doc="16 DataBlocks as the rows of a matrix, written transposed to 16 DataBlocks.")


def _addresses(core, name, items, role, dtype):
    if len(items) != LIST_SIZE:
        raise core.fault(ParameterOutOfRange(f"{role} has {len(items)} entries; NCHW_CONV_ADDR_LIST_SIZE is 16"),
                         name, V)
    out = []
    for i, item in enumerate(items):
        if isinstance(item, (int, np.integer)):  # the uint64_t address form
            address = int(item)
            if address % BLOCK:
                raise core.fault(Misaligned(f"{role}[{i}] address {address} in UB is not a multiple of 32 bytes",
                                            buffer="UB", addr_range=(address, address + 1)), name, V)
        else:
            check_ub(core, name, V, item, f"{role}[{i}]")
            if item.dtype != dtype:
                raise core.fault(ParameterOutOfRange(f"{role}[{i}] dtype {item.dtype} differs from {dtype}"), name, V)
            address = item.address
        out.append(address // BLOCK)
    return np.array(out, dtype=np.int64)


@cached
def TransDataTo5HD(dstList, srcList, nchwconvParams: TransDataTo5HDParams, dtype=None) -> None:
    """dstList / srcList: 16 LocalTensors (or 16 UB byte addresses, then `dtype` names T)."""
    core = current_core()
    name = "TransDataTo5HD"
    first = next((x for x in list(dstList) + list(srcList) if not isinstance(x, (int, np.integer))), None)
    dt = np.dtype(dtype) if dtype is not None else (first.dtype if first is not None else None)
    if dt is None:
        raise TypeError("TransDataTo5HD with address lists needs dtype=")
    if dt not in B16 + B8 + B32:
        raise core.fault(ParameterOutOfRange(
            f"TransDataTo5HD takes int8/uint8, half/int16/uint16 or float/int32/uint32 elements, not {dt}"), name, V)
    p = nchwconvParams
    check_range(core, name, V, "repeatTimes", p.repeatTimes, 0, 255)
    check_range(core, name, V, "dstRepStride", p.dstRepStride, 0, 65535)
    check_range(core, name, V, "srcRepStride", p.srcRepStride, 0, 65535)
    dst0 = _addresses(core, name, list(dstList), "dstList", dt)
    src0 = _addresses(core, name, list(srcList), "srcList", dt)
    repeats = p.repeatTimes
    if repeats == 0:
        core.issue(TRANS_DATA_TO_5HD, V, p)
        return
    step = np.arange(repeats).reshape(-1, 1) + (1 if repeats == 1 else 0)
    src_blocks = src0.reshape(1, -1) + step * p.srcRepStride
    dst_blocks = dst0.reshape(1, -1) + step * p.dstRepStride
    buf = core.buffers["UB"]
    s_lo, s_hi = int(src_blocks.min()) * BLOCK, (int(src_blocks.max()) + 1) * BLOCK
    d_lo, d_hi = int(dst_blocks.min()) * BLOCK, (int(dst_blocks.max()) + 1) * BLOCK
    # repeats run in order when one writes what a later one reads or rewrites
    sequential = repeats > 1 and ((d_lo < s_hi and s_lo < d_hi)
                                  or len(set(dst_blocks.ravel().tolist())) < dst_blocks.size)
    timing = (name, dt, repeats, 128 if dt.itemsize == 4 else 256)  # elements moved per repeat (_element_map)
    core.issue(TRANS_DATA_TO_5HD, V, p, ((buf, s_lo, s_hi),), ((buf, d_lo, d_hi),),
               TransDataOperands(buf, dt, src_blocks, dst_blocks, (p.dstHighHalf, p.srcHighHalf), sequential,
                                 timing))


__all__ = ["TransDataTo5HD", "TransDataTo5HDParams"]
