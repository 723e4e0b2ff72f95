"""MTE2: LoadData 2D with the source in GM (load_gm_to_cbuf / load_gm_to_cb / load_gm_to_ca on A2).

The same fractal copy as LoadData 2D from L1 (mte1.py), but read from GM by the MTE2 engine: repeatTimes whole
512-byte fractals from src fractal startIndex + i*srcStride to dst fractal i*(dstGap+1). The Conv3D forward API
uses it for the weight when BL1 is bypassed (FRACTAL_Z_3D GM -> L0B, already the ZN layout Mmad reads) and for a
whole weight block into L1. ifTranspose from GM is not modelled (no kernel here needs it) and faults.
"""
from __future__ import annotations

from ascend_sim.isa.common import FRACTAL, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte1 import LoadData2DParams
from ascend_sim.isa.mte2 import CopyOperands, _mte2_cost
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define

MTE2 = Pipe.MTE2
_DSTS = ("L1", "L0A", "L0B")
_PATH = {"L1": "GM->L1", "L0A": "GM->L0A", "L0B": "GM->L0B"}
_check_load2d = fields_checker({"startIndex": (0, 65535), "repeatTimes": (0, 255), "srcStride": (0, 65535),
                                "dstGap": (0, 65535)})


def _execute(rec) -> None:
    """repeatTimes fractals, each FRACTAL bytes, from the source pitch to the destination pitch."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, _, _ = rec.args
    dbuf.strided(d0, (reps, FRACTAL), (d_pitch, 1))[...] = sbuf.strided(s0, (reps, FRACTAL), (s_pitch, 1))


LOAD_DATA_2D_GM = define("LoadData2D(GM)", MTE2, kind=Kind.MOVE, operands=CopyOperands, cost=_mte2_cost,
                         execute=_execute, params=LoadData2DParams,
                         doc="GM -> L1/L0A/L0B: whole 512-byte fractals read by MTE2.")


def load_data_2d_gm(dst, src, params: LoadData2DParams) -> None:
    core = current_core()
    name = "LoadData2D(GM)"
    if dst.__class__ is not LocalTensor or dst.buffer.name not in _DSTS:
        expect_position(core, name, MTE2, dst, _DSTS, "dst")
    if src.__class__ is not GlobalTensor:
        expect_position(core, name, MTE2, src, ("GM",), "src")
    path = _PATH[dst.buffer.name]
    if path not in core.paths:  # also for a NOP: the instruction itself does not exist there
        core.check_path(name, MTE2, path)
    _check_load2d(core, name, MTE2, params)
    if params.ifTranspose:
        raise core.fault(ParameterOutOfRange("ifTranspose=1 with the source in GM is not modelled"), name, MTE2)
    dbuf = dst.buffer
    alignment = core.alignments.L1 if dbuf.name == "L1" else FRACTAL
    if dst.address % alignment:
        check_aligned(core, name, MTE2, dst, alignment, "dst")
    reps = params.repeatTimes
    if reps == 0:
        core.issue(LOAD_DATA_2D_GM, MTE2, params)
        return
    s_pitch, d_pitch = params.srcStride * FRACTAL, (params.dstGap + 1) * FRACTAL
    s0 = src.address + params.startIndex * FRACTAL
    d0 = dst.address
    s1, d1 = s0 + (reps - 1) * s_pitch + FRACTAL, d0 + (reps - 1) * d_pitch + FRACTAL
    sbuf = src.buffer
    core.issue(LOAD_DATA_2D_GM, MTE2, params, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
               CopyOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, FRACTAL, reps * FRACTAL), _PATH[dbuf.name],
               reps * FRACTAL,
               footprint=((sbuf, s0, (reps, FRACTAL), (s_pitch, 1), False),))
