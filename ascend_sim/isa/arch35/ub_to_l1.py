"""The Ascend 950's UB -> L1 copy on the vector core's MTE3: `DataCopy(dst L1, src UB, DataCopyParams | count)`,
into the L1 of the vector core's own AIC (the chip gives each AIV of a 950 MIX launch its AIC's L1, chip.py).

Sources: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/矩阵计算的搬入/DataCopy（UBToL1高维切分数据搬运）.md
and （UBToL1连续数据搬运）.md (blockCount [1, 4095] blocks of blockLen [1, 65535] 32-byte DataBlocks, end-to-start
gaps in DataBlocks on both sides; both addresses 32 B aligned; the count form rounds the bytes down to 32 B),
impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h (CopyUbufToCbuf: copy_ubuf_to_cbuf, AIV only). The path
is the hardware channel (ENABLE_CV_COMM_VIA_SSBUF), as the 950's architecture page draws it (coretypes.DATA_PATHS);
the A2 form through a GM workspace is not modelled. Own rule, flagged: the cost is the bytes at rates.ub_to_l1 (128
B/cycle, the 950 INI) plus the 10-cycle fixed part the on-chip LoadData takes (rates.mte1_overhead); no source
times this path. Cross-core order on L1 is carried by the kernel's flags: the race checkers order the AIV's and the
AIC's accesses of that L1 by cross-core flags and SyncAll only (passes/races.py, GmRaceChecker.shared).
"""
from __future__ import annotations

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import BLOCK, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte2 import CopyOperands, DataCopyParams
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define

MTE3 = Pipe.MTE3
_check = fields_checker({"blockCount": (1, 4095), "blockLen": (1, 65535), "srcStride": (0, 65535),
                         "dstStride": (0, 65535)})


def _cost(ops, model) -> float:
    return model.rates.mte1_overhead + ops.nbytes / model.rates.ub_to_l1


def _copy_rows(rec) -> None:
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, _ = rec.args
    dbuf.strided(d0, (count, blen), (d_pitch, 1))[...] = sbuf.strided(s0, (count, blen), (s_pitch, 1))


UB_TO_L1 = define("DataCopy(UB->L1)", MTE3, kind=Kind.MOVE, operands=CopyOperands, cost=_cost, execute=_copy_rows,
                  params=DataCopyParams, doc="UB -> L1 (arch 3510, AIV): blockCount blocks of blockLen DataBlocks "
                  "with gaps.")


def copy_ub_to_l1(dst, src, params) -> None:
    """DataCopy(L1, UB, DataCopyParams) or DataCopy(L1, UB, count)."""
    core = current_core()
    name = UB_TO_L1.name
    require_arch35(core, name, MTE3, "DataCopy from UB to L1")
    if dst.__class__ is not LocalTensor or dst.buffer.name != "L1":
        expect_position(core, name, MTE3, dst, ("L1",), "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "UB":
        expect_position(core, name, MTE3, src, ("UB",), "src")
    if src.dtype.itemsize != dst.dtype.itemsize:
        raise core.fault(ParameterOutOfRange(f"src is {src.dtype} but dst is {dst.dtype}: the copy keeps the type"),
                         name, MTE3)
    for tensor, role in ((dst, "dst"), (src, "src")):
        if tensor.address % BLOCK:
            check_aligned(core, name, MTE3, tensor, BLOCK, role)
    if not isinstance(params, DataCopyParams):
        params = DataCopyParams(1, int(params) * dst.dtype.itemsize // BLOCK, 0, 0)  # the count form rounds down
    _check(core, name, MTE3, params)
    count, blen = params.blockCount, params.blockLen * BLOCK
    s_pitch, d_pitch = blen + params.srcStride * BLOCK, blen + params.dstStride * BLOCK
    s0, d0 = src.address, dst.address
    core.issue(UB_TO_L1, MTE3, params, ((src.buffer, s0, s0 + (count - 1) * s_pitch + blen),),
               ((dst.buffer, d0, d0 + (count - 1) * d_pitch + blen),),
               CopyOperands(src.buffer, s0, s_pitch, dst.buffer, d0, d_pitch, count, blen, count * blen), "UB->L1",
               count * blen)


__all__ = ["copy_ub_to_l1"]
