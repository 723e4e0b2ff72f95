"""MTE1: DataCopy from L1 into the bias table (BT, TPosition C2), the source of an Mmad bias (copy_cbuf_to_bt).

A2 rules (the DataCopy L1ToBiasTable page): dst 64-byte aligned in BT, src 32-byte aligned in L1, blockCount in
[0, 4095], blockLen in [0, 65535] in units of 64 bytes, srcGap in 32-byte DataBlocks, dstGap in 64-byte units.
Source half, int32 or float; destination int32 or float. half -> float converts on the way (isEnableConv = 1).

Own rule (the page does not say which side the 64-byte blockLen unit counts when the copy converts): blockLen
counts 64-byte blocks of the *source*; a converting copy writes twice as many bytes. That is the reading under
which the Conv3D API's own call, blockLen = ceil(n * sizeof(bias) / 64), moves all n values of an fp16 bias.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.common import BLOCK, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE1 = Pipe.MTE1
BT_BLOCK = 64
BT_ALIGN = 64
L1_TO_BT_BYTES_PER_CYCLE = 32.0  # reference §4.1 (Ascend C performance table: L1 -> BT, 2201)
_SRC = {np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int32)}
_DST = {np.dtype(np.float32), np.dtype(np.int32)}
_check = fields_checker({"blockCount": (0, 4095), "blockLen": (0, 65535), "srcStride": (0, 65535),
                         "dstStride": (0, 65535)})


BiasCopyOperands = operands_type("BiasCopyOperands", "sbuf s0 s_pitch dbuf d0 d_pitch count blen sdtype ddtype nbytes",
                                 "count source blocks of blen bytes of sdtype, s_pitch / d_pitch apart, into "
                                 "ddtype blocks of the bias table (nbytes read).")


def _cost(ops, model) -> float:
    return model.rates.mte1_overhead + ops.nbytes / L1_TO_BT_BYTES_PER_CYCLE


def _execute(rec) -> None:
    """Each source block (blen bytes) lands in its destination block, converted to the destination dtype."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, sdtype, ddtype, _ = rec.args
    n = blen // sdtype.itemsize
    for i in range(count):
        values = sbuf.view(sdtype, s0 + i * s_pitch, n)
        dbuf.view(ddtype, d0 + i * d_pitch, n)[...] = values.astype(ddtype)


DATA_COPY_L1_BT = define("DataCopy(L1->BT)", MTE1, kind=Kind.MOVE, operands=BiasCopyOperands, cost=_cost,
                         execute=_execute,
                         doc="L1 -> BT: bias blocks of 64 bytes, half converted to float on the way.")


def copy_l1_to_bt(dst, src, params) -> None:
    core = current_core()
    name = "DataCopy(L1->BT)"
    if dst.__class__ is not LocalTensor or dst.buffer.name != "BT":
        expect_position(core, name, MTE1, dst, ("BT",), "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, name, MTE1, src, ("L1",), "src")
    _check(core, name, MTE1, params)
    sdtype, ddtype = src.dtype, dst.dtype
    if sdtype not in _SRC or ddtype not in _DST or (sdtype != ddtype and (sdtype, ddtype) != (np.float16, np.float32)):
        raise core.fault(ParameterOutOfRange(f"L1 -> BT copies half/int32/float into int32/float (half -> float "
                                             f"converts); got {sdtype} -> {ddtype}"), name, MTE1)
    if dst.address % BT_ALIGN:
        check_aligned(core, name, MTE1, dst, BT_ALIGN, "dst")
    if src.address % BLOCK:
        check_aligned(core, name, MTE1, src, BLOCK, "src")
    count, blen = params.blockCount, params.blockLen * BT_BLOCK
    if count * blen == 0:
        core.issue(DATA_COPY_L1_BT, MTE1, params)
        return
    scale = ddtype.itemsize // sdtype.itemsize
    s_pitch = blen + params.srcStride * BLOCK
    d_pitch = blen * scale + params.dstStride * BT_BLOCK
    s0, d0 = src.address, dst.address
    s1, d1 = s0 + (count - 1) * s_pitch + blen, d0 + (count - 1) * d_pitch + blen * scale
    core.issue(DATA_COPY_L1_BT, MTE1, params, ((src.buffer, s0, s1),), ((dst.buffer, d0, d1),),
               BiasCopyOperands(src.buffer, s0, s_pitch, dst.buffer, d0, d_pitch, count, blen, sdtype, ddtype,
                                count * blen), "L1->BT",
               count * blen)
