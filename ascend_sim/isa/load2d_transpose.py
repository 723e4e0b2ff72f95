"""MTE1: LoadDataWithTranspose (L1 -> L0A / L0B, LoadData2dTransposeParams), the A2/A3 form.

Per repeat the instruction takes one square of the source (b16: one 16 x 16 fractal; b32: two consecutive 16 x 8
fractals joined side by side into a 16 x 16 square), transposes the square, and writes it as fractals again: b16 one
16 x 16 fractal, b32 two 16 x 8 fractals (columns 0-7 of the transposed square, then columns 8-15), the second
dstFracGap fractals after the end of the first. Repeat i reads the square at startIndex + i*srcStride (unit: one
square, 512 B for b16, 1 KB for b32) and writes from dst fractal i*(dstGap + 1). Source: asc-devkit
`LoadDataWithTranspose.md` and its golden `load_data_l12l0/scripts/load_data_with_transpose.py`. The b8 / b4 forms
(32 x 32 / 64 x 64 squares) are not modelled and fault.
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.common import FRACTAL, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte1 import _load_cost
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE1 = Pipe.MTE1
NAME = "LoadDataWithTranspose"


@dataclass(slots=True)
class LoadData2dTransposeParams:
    """repeatTimes squares from src square startIndex + i*srcStride to dst fractal i*(dstGap + 1); b32 writes the
    second half-fractal dstFracGap fractals after the end of the first."""

    startIndex: int = 0
    repeatTimes: int = 0
    srcStride: int = 0
    dstGap: int = 0
    dstFracGap: int = 0
    addrMode: int = 0


_check = fields_checker({"startIndex": (0, 65535), "repeatTimes": (0, 255), "srcStride": (0, 65535),
                         "dstGap": (0, 65535), "dstFracGap": (0, 65535), "addrMode": (0, 1)})
_L0AB = ("L0A", "L0B")
_PATH = {"L0A": "L1->L0A", "L0B": "L1->L0B"}


def _execute(rec) -> None:
    """b16: dst[r][c] = src[c][r] per 16 x 16 fractal. b32: the square Q[r][c] (c < 8 from the first 16 x 8
    fractal, c >= 8 from the second) goes out as Q^T[:, 0:8] and, dstFracGap fractals later, Q^T[:, 8:16]."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, frac_pitch, dtype, _ = rec.args
    if dtype.itemsize == 2:
        dbuf.strided(d0, (reps, 16, 16), (d_pitch, 32, 2), dtype)[...] = \
            sbuf.strided(s0, (reps, 16, 16), (s_pitch, 32, 2), dtype).transpose(0, 2, 1)
        return
    # source square as [rep][half h][row r][col c8]; destination [rep][half g][row (h, c8)][col r8 of g]
    src = sbuf.strided(s0, (reps, 2, 16, 8), (s_pitch, FRACTAL, 32, 4), dtype)
    dst = dbuf.strided(d0, (reps, 2, 2, 8, 8), (d_pitch, frac_pitch, 8 * 32, 32, 4), dtype)
    # Q[r][8h + c] = src[h][r][c]; Q^T[8h + c][r] lands in dst half g = r // 8, row 8h + c, column r % 8
    dst[...] = src.reshape(reps, 2, 2, 8, 8).transpose(0, 2, 1, 4, 3)


TransposeOperands = operands_type("TransposeOperands", "sbuf s0 s_pitch dbuf d0 d_pitch reps frac_pitch dtype nbytes",
                                  "reps squares from sbuf at s0 (s_pitch apart) into dbuf at d0 (d_pitch apart; "
                                  "the second half of a b32 square frac_pitch later), transposed (nbytes moved).")
LOAD_DATA_WITH_TRANSPOSE = define(NAME, MTE1, kind=Kind.MOVE, operands=TransposeOperands, cost=_load_cost,
                                  execute=_execute, params=LoadData2dTransposeParams,
                                  doc="L1 -> L0A/L0B: 512-byte (b16) or 1 KB (b32) squares, transposed.")


@cached
def LoadDataWithTranspose(dst, src, params: LoadData2dTransposeParams) -> None:
    """The Ascend C entry point (kernel_operator_mm_intf.h)."""
    core = current_core()
    if dst.__class__ is not LocalTensor or dst.buffer.name not in _L0AB:
        expect_position(core, NAME, MTE1, dst, _L0AB, "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, NAME, MTE1, src, ("L1",), "src")
    _check(core, NAME, MTE1, params)
    if dst.dtype != src.dtype:
        raise core.fault(ParameterOutOfRange(f"dst dtype {dst.dtype} differs from src dtype {src.dtype}"), NAME, MTE1)
    if src.dtype.itemsize not in (2, 4):
        raise core.fault(ParameterOutOfRange(f"dtype {src.dtype}: only the b16 and b32 forms are modelled"),
                         NAME, MTE1)
    if params.addrMode:
        raise core.fault(ParameterOutOfRange("addrMode=1 (decrementing source) is not modelled"), NAME, MTE1)
    if dst.address % FRACTAL:
        check_aligned(core, NAME, MTE1, dst, FRACTAL, "dst")
    if src.address % core.alignments.L1:
        check_aligned(core, NAME, MTE1, src, core.alignments.L1, "src")
    reps = params.repeatTimes
    if reps == 0:
        core.issue(LOAD_DATA_WITH_TRANSPOSE, MTE1, params)
        return
    b32 = src.dtype.itemsize == 4
    square = 2 * FRACTAL if b32 else FRACTAL
    s_pitch, d_pitch = params.srcStride * square, (params.dstGap + 1) * FRACTAL
    frac_pitch = (params.dstFracGap + 1) * FRACTAL
    s0 = src.address + params.startIndex * square
    s1 = s0 + (reps - 1) * s_pitch + square
    d0 = dst.address
    d1 = d0 + (reps - 1) * d_pitch + (frac_pitch if b32 else 0) + FRACTAL
    sbuf, dbuf = src.buffer, dst.buffer
    core.issue(LOAD_DATA_WITH_TRANSPOSE, MTE1, params, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
               TransposeOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, frac_pitch, src.dtype, reps * square),
               _PATH[dbuf.name], reps * square)
