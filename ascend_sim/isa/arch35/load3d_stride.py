"""MTE1 on the Ascend 950 (arch 3510): LoadDataWithStride, the img2col of LoadData 3Dv2 written NZ into L0A (ZN
into L0B) with the K-direction fractal offset dstStride that SetLoadDataRepeatWithStride sets.

Sources: asc-devkit 82b89a15 docs/zh/.../矩阵计算的搬入/LoadDataWithStride.md (the same img2col as LoadData 3D;
"dst: L0A NZ, L0B ZN"; dstStride must be set first), 矩阵搬入辅助配置接口/SetLoadDataRepeatWithStride.md (fields
and ranges; dstStride "输出矩阵K轴方向偏移" in 512-byte fractals), include/basic_api/kernel_struct_mm.h
(LoadDataRepeatParamWithStride). The arch35 dx kernel sets {repeatStride 0, repeatTime 1, repeatMode 0,
dstStride ceil(baseUseM / 16)} before every A load (ops-nn e5c3fa93 conv_bp_input_sub_func_load_l1_to_l0.h).

Element (m, k) of the loaded window lands in fractal (k // C0) * dstStride + m // 16 of L0A, at row m % 16,
column k % C0. Into L0B [own rule: the doc gives no layout beyond "ZN"] fractal (m // C0) * dstStride + k // 16,
row k % 16, column m % C0: the A2 ZN layout with dstStride fractals between K neighbours.
A window into L0A whose K ends inside a fractal (allowed when it covers the img2col's rightmost fractal: the C04
path's K = hk*wk*4) writes only its columns [own rule: the doc does not say what the rest of that fractal holds;
it is left as it was, and Mmad's K rounded up to C0 multiplies it by the weight's zero rows].
Not modelled (a fault says so): repeatTime > 1, enTranspose, other windows that end in half a fractal.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import check_fields, current_core
from ascend_sim.isa.mte1 import _PATH, LoadData3DParamsV2, decode_img2col
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define, operands_type

MTE1 = Pipe.MTE1
_REGISTER = "loaddata_repeat_with_stride"


@dataclass(slots=True)
class LoadDataRepeatParamWithStride:
    repeatStride: int = 0
    repeatTime: int = 1
    repeatMode: int = 0
    dstStride: int = 0


SET_LOAD_DATA_REPEAT_WITH_STRIDE = define("SetLoadDataRepeatWithStride", Pipe.S, kind=Kind.REGISTER_WRITE,
                                          doc="Write the LoadDataWithStride repeat register (arch 3510).")


def SetLoadDataRepeatWithStride(repeatParams: LoadDataRepeatParamWithStride) -> None:
    core = current_core()
    name = "SetLoadDataRepeatWithStride"
    require_arch35(core, name, Pipe.S, name)
    check_fields(core, name, Pipe.S, repeatParams, {"repeatStride": (0, 65535), "repeatTime": (0, 255),
                                                    "repeatMode": (0, 1), "dstStride": (0, 65535)})
    if repeatParams.repeatTime > 1:
        raise core.fault(ParameterOutOfRange(
            f"repeatTime={repeatParams.repeatTime}: LoadDataWithStride repeats are not modelled (only 0 or 1)"),
            name, Pipe.S)
    p = repeatParams
    core.write_register(SET_LOAD_DATA_REPEAT_WITH_STRIDE, _REGISTER,
                        LoadDataRepeatParamWithStride(p.repeatStride, p.repeatTime, p.repeatMode, p.dstStride))


@lru_cache(maxsize=512)
def _nz_positions(rows: int, cols: int, c0: int, dst_stride: int, to_l0b: bool) -> np.ndarray:
    """Destination element of each element of the window, in the order of mte1._img2col_map: (a, b, r, e) for
    L0A (a: M fractal, b: K fractal), (kk, nn, n0, k0) for L0B."""
    if to_l0b:  # rows = mExtension // C0 fractal rows of K, cols = kExtension // 16 fractal columns of N
        outer, inner = np.arange(rows).reshape(-1, 1, 1, 1), np.arange(cols).reshape(1, -1, 1, 1)
        fractal = outer * dst_stride + inner
    else:  # rows = mExtension // 16, cols = kExtension // C0: NZ puts the K neighbours dstStride apart
        outer, inner = np.arange(rows).reshape(-1, 1, 1, 1), np.arange(cols).reshape(1, -1, 1, 1)
        fractal = inner * dst_stride + outer
    r = np.arange(16).reshape(1, 1, -1, 1)
    e = np.arange(c0).reshape(1, 1, 1, -1)
    return ((fractal * 16 + r) * c0 + e).reshape(-1)


def load3d_rate_3510(stride_w: int, rows: int) -> int:
    """Bytes per cycle of LoadData 3D / LoadDataWithStride on 3510, into L0A and L0B alike: asc-devkit
    docs/zh/api/附录/Cube指令理论性能汇总.md table 6 (n: the feature-map rows the window covers)."""
    if stride_w == 1:
        return 256 if rows <= 1 else max(512 // (rows + 2), 32)
    if stride_w in (2, 4, 8):
        return max(512 // (2 * stride_w + (rows if rows > 1 else 0)), 32)
    return 32


StrideLoadOperands = operands_type("StrideLoadOperands", "sbuf s0 span dbuf d0 extent dtype index pad_positions "
                                   "positions pad_value stride_w rows nbytes",
                                   "img2col: elements gathered from sbuf[s0, s0 + span) by index, padValue at "
                                   "pad_positions, into `positions` of dbuf at d0; stride_w and the fmap rows the "
                                   "window touches set the rate (nbytes moved).")


def _cost(ops, model) -> float:
    """The MTE1 overhead (the A2 modelling choice), then the bytes at table 6's rate."""
    return model.rates.mte1_overhead + ops.nbytes / load3d_rate_3510(ops.stride_w, ops.rows)


def _execute(rec) -> None:
    """img2col: every destination element takes the fmap element its (row, column) maps to, or padValue."""
    sbuf, s0, span, dbuf, d0, extent, dtype, index, pad_positions, positions, pad_value, _, _, _ = rec.args
    values = sbuf.view(dtype, s0, span).take(index, mode="clip")
    if pad_positions.size:
        values[pad_positions] = pad_value
    dbuf.view(dtype, d0, extent)[positions] = values


LOAD_DATA_WITH_STRIDE = define("LoadDataWithStride", MTE1, kind=Kind.MOVE, operands=StrideLoadOperands, cost=_cost,
                               execute=_execute,
                               params=LoadData3DParamsV2,
                               doc="L1 -> L0A (NZ) / L0B (arch 3510): img2col with a K-direction fractal stride.")


def LoadDataWithStride(dst, src, loadDataParams: LoadData3DParamsV2, isSetFMatrix: bool = True) -> None:
    core = current_core()
    name = "LoadDataWithStride"
    require_arch35(core, name, MTE1, name)
    repeat = core.registers.get(_REGISTER)
    if repeat is None:
        raise core.fault(ParameterOutOfRange(
            "dstStride was never set: call SetLoadDataRepeatWithStride before LoadDataWithStride"), name, MTE1)
    p = loadDataParams
    if p.enTranspose and dst.buffer.name == "L0A":
        raise core.fault(ParameterOutOfRange("enTranspose=1 is not modelled for LoadDataWithStride"), name, MTE1)
    if repeat.repeatTime == 0:
        core.issue(LOAD_DATA_WITH_STRIDE, MTE1, p, registers=((_REGISTER, repeat),))
        return
    img2col = decode_img2col(core, name, LOAD_DATA_WITH_STRIDE, dst, src, p, isSetFMatrix)
    if img2col is None:
        return
    dtype = src.dtype
    size = dtype.itemsize
    c0 = 32 // size
    to_l0b = dst.buffer.name == "L0B"
    if img2col.written is not None and (to_l0b or p.mExtension % 16):
        raise core.fault(ParameterOutOfRange(
            f"mExtension={p.mExtension} / kExtension={p.kExtension} end in half a fractal: not modelled"), name, MTE1)
    # into L0A a K window may end inside its last fractal (it covers the img2col's rightmost one: the C04 tail)
    rows, cols = (p.mExtension // c0, p.kExtension // 16) if to_l0b else (p.mExtension // 16, -(-p.kExtension // c0))
    stride = repeat.dstStride
    inner = cols if to_l0b else rows  # fractals between two K neighbours
    if stride < inner and (rows if to_l0b else cols) > 1:
        raise core.fault(ParameterOutOfRange(
            f"dstStride={stride} fractals is less than the {inner} fractals of one K step: the destination "
            f"fractals would overlap"), name, MTE1)
    positions = _nz_positions(rows, cols, c0, stride, to_l0b)
    if img2col.written is not None:  # the rest of the last K fractal is left as it was
        positions = positions[img2col.written]
    extent = int(positions.max()) + 1
    sbuf, s0, dbuf, d0 = src.buffer, src.address, dst.buffer, dst.address
    read = img2col.read
    reads = ((sbuf, s0 + read[0] * size, s0 + read[1] * size),) if read[1] else ()
    rows_touched = -(-((p.mStartPt % img2col.wout) + p.mExtension) // img2col.wout)
    count = p.mExtension * p.kExtension
    core.issue(LOAD_DATA_WITH_STRIDE, MTE1, p, reads, ((dbuf, d0, d0 + extent * size),),
               StrideLoadOperands(sbuf, s0, img2col.span, dbuf, d0, extent, dtype, img2col.index,
                                  img2col.pad_positions, positions, p.padValue, p.strideW, rows_touched, count * size),
               _PATH[dbuf.name], count * size,
               img2col.registers + ((_REGISTER, repeat),))
