"""MTE3 on the cube core: DataCopy L1 -> GM (copy_cbuf_to_gm), the store the init-output passes use to zero GM.

DataCopyParams as for GM -> L1 (blockCount blocks of blockLen 32-byte DataBlocks, end-to-start gaps srcStride /
dstStride in DataBlocks); the source is L1 (32 B aligned), the destination any GM byte. Under SetAtomicAdd the
blocks are added to GM (atomic.py).
"""
from __future__ import annotations

from ascend_sim.isa.atomic import ATOMIC_WRITE, atomic_register, store
from ascend_sim.isa.common import BLOCK, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE3 = Pipe.MTE3
_check_datacopy = fields_checker({"blockCount": (0, 4095), "blockLen": (0, 65535), "srcStride": (0, 65535),
                                  "dstStride": (0, 65535)})


StoreOperands = operands_type("StoreOperands", "sbuf s0 s_pitch dbuf d0 d_pitch count blen dtype nbytes",
                              "count rows of blen bytes of dtype elements, s_pitch / d_pitch apart, from sbuf at "
                              "s0 to dbuf at d0 in GM (nbytes moved; an atomic add when the atomic register is set).")


def _mte3_cost(ops, model) -> float:
    """A GM write: the write's fixed overhead, then the bytes at this core's GM write rate."""
    return model.rates.mte3_overhead + ops.nbytes / model.gm_write_rate


def _l1_to_gm_execute(rec) -> None:
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, dtype, _ = rec.args
    n = blen // dtype.itemsize
    store(rec, dbuf.strided(d0, (count, n), (d_pitch, dtype.itemsize), dtype),
          sbuf.strided(s0, (count, n), (s_pitch, dtype.itemsize), dtype))


DATA_COPY_L1_TO_GM = define("DataCopyL1ToGM", MTE3, kind=Kind.MOVE, operands=StoreOperands, cost=_mte3_cost,
                            execute=_l1_to_gm_execute,
                            doc="L1 -> GM: blockCount blocks of blockLen 32-byte DataBlocks with gaps.")


def copy_l1_to_gm(dst, src, params) -> None:
    core = current_core()
    name = "DataCopyL1ToGM"
    if dst.__class__ is not GlobalTensor:
        expect_position(core, name, MTE3, dst, ("GM",), "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, name, MTE3, src, ("L1",), "src")
    if "L1->GM" not in core.paths:  # also for a NOP: the instruction itself does not exist there
        core.check_path(name, MTE3, "L1->GM")
    _check_datacopy(core, name, MTE3, params)
    if src.address % core.alignments.L1:
        check_aligned(core, name, MTE3, src, core.alignments.L1, "src")
    registers = atomic_register(core, name, MTE3, dst.dtype)
    count, blen = params.blockCount, params.blockLen * BLOCK
    if count * blen == 0:  # a NOP that still takes an issue slot
        core.issue(DATA_COPY_L1_TO_GM, MTE3, params, registers=registers)
        return
    s_pitch, d_pitch = blen + params.srcStride * BLOCK, blen + params.dstStride * BLOCK
    s0, d0 = src.address, dst.address
    s1, d1 = s0 + (count - 1) * s_pitch + blen, d0 + (count - 1) * d_pitch + blen
    sbuf, dbuf = src.buffer, dst.buffer
    kind = True if registers[0][1] is None else ATOMIC_WRITE
    reads = ((sbuf, s0, s1),) if kind is True else ((sbuf, s0, s1), (dbuf, d0, d1))
    core.issue(DATA_COPY_L1_TO_GM, MTE3, params, reads, ((dbuf, d0, d1),),
               StoreOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, dst.dtype, count * blen), "L1->GM",
               count * blen, registers,
               footprint=((dbuf, d0, (count, blen), (d_pitch, 1), kind),))
