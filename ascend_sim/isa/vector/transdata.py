"""TransDataTo5HD on PIPE_V (vnchwconv): per repeat, 16 source DataBlocks (srcList) form a 16 x 16 matrix of
16-bit elements, one block per row, and its transpose is written to the 16 destination blocks (dstList): dst
block j, element i = src block i, element j. This is NCHW -> NC1HWC0 when the 16 source blocks are 16 channels.

Source: docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据排布转换/TransDataTo5HD.md and the 16 x 16 truth of
examples/01_simd_cpp_api/03_basic_api/01_memory_vector_compute/transpose/scripts/gen_data.py. Repeat r reads
and writes each list address plus r x RepStride blocks, except that with repeatTimes = 1 the only repeat is
already offset by one RepStride (the page's note). 8-bit (dstHighHalf / srcHighHalf) and 32-bit element layouts
are not documented with a truth and fault as not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.isa.common import BLOCK, check_range
from ascend_sim.isa.vector.common import V, check_ub, current_core, vector_cost
from ascend_sim.machine.faults import Misaligned, ParameterOutOfRange
from ascend_sim.record import define

LIST_SIZE = 16  # NCHW_CONV_ADDR_LIST_SIZE
B16 = (np.dtype(np.float16), np.dtype(np.int16), np.dtype(np.uint16))


@dataclass(slots=True)
class TransDataTo5HDParams:
    dstHighHalf: bool = False
    srcHighHalf: bool = False
    repeatTimes: int = 1
    dstRepStride: int = 0
    srcRepStride: int = 0


def _execute(rec) -> None:
    buf, dtype, src_blocks, dst_blocks, sequential, _ = rec.args
    c0 = BLOCK // dtype.itemsize
    ub = buf.view(dtype, 0, buf.capacity // dtype.itemsize)
    lanes = np.arange(c0)
    src_idx = src_blocks[..., None] * c0 + lanes  # (repeats, 16 rows, 16 columns)
    dst_idx = dst_blocks[..., None] * c0 + lanes
    if not sequential:
        ub[dst_idx] = ub[src_idx].transpose(0, 2, 1)
        return
    for r in range(src_idx.shape[0]):
        ub[dst_idx[r]] = ub[src_idx[r]].T


TRANS_DATA_TO_5HD = define("TransDataTo5HD", V, cost=vector_cost, execute=_execute, params=TransDataTo5HDParams,
                           doc="16 DataBlocks as rows of a 16 x 16 matrix, written transposed to 16 DataBlocks.")


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


def TransDataTo5HD(dstList, srcList, nchwconvParams: TransDataTo5HDParams, dtype=None) -> None:
    """dstList / srcList: 16 LocalTensors (or 16 UB byte addresses, then `dtype` names T)."""
    core = current_core()
    name = "TransDataTo5HD"
    first = next((x for x in list(dstList) + list(srcList) if not isinstance(x, (int, np.integer))), None)
    dt = np.dtype(dtype) if dtype is not None else (first.dtype if first is not None else None)
    if dt is None:
        raise TypeError("TransDataTo5HD with address lists needs dtype=")
    if dt not in B16:
        raise core.fault(ParameterOutOfRange(
            f"TransDataTo5HD with {dt} elements is not modelled (16-bit types only: half/int16/uint16)"), name, V)
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
    timing = (name, dt, repeats, 2 * 128)  # 16 blocks = 256 16-bit elements per repeat
    core.issue(TRANS_DATA_TO_5HD, V, p, ((buf, s_lo, s_hi),), ((buf, d_lo, d_hi),),
               (buf, dt, src_blocks, dst_blocks, sequential, timing))


__all__ = ["TransDataTo5HD", "TransDataTo5HDParams"]
