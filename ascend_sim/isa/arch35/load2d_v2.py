"""MTE1 on the Ascend 950 (arch 3510): LoadData with LoadData2DParamsV2, L1 -> L0A / L0B in 512-byte fractals.

Sources: asc-devkit 82b89a15 docs/zh/.../矩阵计算的搬入/LoadData_2D_V2.md (fields, units, the start address
src + (kStartPosition * |srcStride| + mStartPosition) * 512 B, the transpose rules), include/basic_api/
kernel_struct_mm.h (field types: srcStride is a signed int32), impl/basic_api/dav_3510/kernel_operator_mm_impl.h.

Fractal (i, j) of the move, i < mStep along M and j < kStep along K, is read from fractal
kStartPosition * |srcStride| + mStartPosition + j * srcStride + i of src and written to fractal
j * dstStride + i of dst. A negative srcStride walks K backwards: the arch35 dx kernel reverses the kernel taps
of its weight this way (REVERSE_ONLY, ops-nn e5c3fa93 conv_bp_input_sub_func_load_l1_to_l0.h).

With ifTranspose each 16 x 16 b16 fractal is transposed where it lands. b32 (kStep even) and b8 (mStep even)
transpose pairs of fractals: [own rule, the doc shows them only as figures] a b32 pair (j, j+1), 16 rows x 8
columns each, is one 16 x 16 block whose transpose is cut into its left and right 8 columns; a b8 pair (i, i+1),
16 rows x 32 columns each, is one 32 x 32 block whose transpose is cut into its top and bottom 16 rows.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import BLOCK, FRACTAL, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte1 import _PATH, _load_cost
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE1 = Pipe.MTE1


@dataclass(slots=True)
class LoadData2DParamsV2:
    """mStep x kStep fractals from (mStartPosition, kStartPosition) of an NZ matrix in L1. M units are 16 rows,
    K units 32 bytes; srcStride / dstStride: fractals between K neighbours (srcStride may be negative)."""

    mStartPosition: int = 0
    kStartPosition: int = 0
    mStep: int = 0
    kStep: int = 0
    srcStride: int = 0
    dstStride: int = 0
    ifTranspose: bool = False
    sid: int = 0


# mStep / kStep: the doc; the start positions and srcStride: dav_3510 hands the v1 form to the same intrinsic as
# uint16 / int16 [own rule: the struct's uint32 / int32 are wider than what the intrinsic is shown to take]
_RANGES = {"mStartPosition": (0, 65535), "kStartPosition": (0, 65535), "mStep": (0, 255), "kStep": (0, 255),
           "srcStride": (-32768, 32767), "dstStride": (0, 65535), "sid": (0, 255)}
_check = fields_checker(_RANGES)
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


@lru_cache(maxsize=512)
def _fractal_maps(m_start, k_start, m_step, k_step, src_stride, dst_stride):
    """Source and destination fractal numbers of the move, in (j, i) order."""
    j = np.arange(k_step).reshape(-1, 1)
    i = np.arange(m_step).reshape(1, -1)
    src = (k_start * abs(src_stride) + m_start + j * src_stride + i).reshape(-1)
    dst = (j * dst_stride + i).reshape(-1)
    return src, dst


def _transposed(frac: np.ndarray, size: int, m_step: int, k_step: int) -> np.ndarray:
    """The fractals (in (j, i) order, as unsigned words) after ifTranspose."""
    if size == 2:
        return frac.reshape(-1, 16, 16).transpose(0, 2, 1)
    grid = frac.reshape(k_step, m_step, 16, 512 // 16 // size)
    if size == 4:  # pairs along K: block [16 r][16 c], its transpose cut into 8-column halves
        block = grid.reshape(k_step // 2, 2, m_step, 16, 8).transpose(0, 2, 3, 1, 4).reshape(-1, 16, 16)
        t = block.transpose(0, 2, 1).reshape(k_step // 2, m_step, 16, 2, 8)
        return t.transpose(0, 3, 1, 2, 4)
    # b8: pairs along M: block [32 r][32 c], its transpose cut into 16-row halves
    block = grid.reshape(k_step, m_step // 2, 32, 32)
    return block.transpose(0, 1, 3, 2).reshape(k_step, m_step, 16, 32)


def _execute(rec) -> None:
    sbuf, s0, dbuf, d0, src, dst, size, transpose, m_step, k_step, _ = rec.args
    word = _UINT[size]
    per = FRACTAL // size
    source = sbuf.view(word, s0, (int(src.max()) + 1) * per).reshape(-1, per)[src]
    if transpose:
        source = _transposed(source, size, m_step, k_step)
    dbuf.view(word, d0, (int(dst.max()) + 1) * per).reshape(-1, per)[dst] = source.reshape(-1, per)


Load2DV2Operands = operands_type("Load2DV2Operands", "sbuf s0 dbuf d0 src dst size transpose m_step k_step nbytes",
                                 "fractal src[i] of sbuf at s0 into fractal dst[i] of dbuf at d0 (elements of `size` "
                                 "bytes), transposed as an m_step x k_step grid when set (nbytes moved).")
LOAD_DATA_2D_V2 = define("LoadData2DV2", MTE1, kind=Kind.MOVE, operands=Load2DV2Operands, cost=_load_cost,
                         execute=_execute, params=LoadData2DParamsV2,
                         doc="L1 -> L0A/L0B (arch 3510): mStep x kStep fractals, signed K stride, optional transpose.")


def load_data_2d_v2(dst, src, params: LoadData2DParamsV2) -> None:
    core = current_core()
    name = "LoadData2DV2"
    require_arch35(core, name, MTE1, "LoadData2DParamsV2")
    if dst.__class__ is not LocalTensor or dst.buffer.name not in ("L0A", "L0B"):
        expect_position(core, name, MTE1, dst, ("L0A", "L0B"), "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, name, MTE1, src, ("L1",), "src")
    _check(core, name, MTE1, params)
    if dst.address % FRACTAL:
        check_aligned(core, name, MTE1, dst, FRACTAL, "dst")
    if src.address % BLOCK:
        check_aligned(core, name, MTE1, src, BLOCK, "src")
    if src.dtype != dst.dtype:
        raise core.fault(ParameterOutOfRange(f"src is {src.dtype} but dst is {dst.dtype}"), name, MTE1)
    p = params
    size = src.dtype.itemsize
    transpose = bool(p.ifTranspose)
    if transpose and size == 1 and p.mStep % 2:
        raise core.fault(ParameterOutOfRange(f"mStep={p.mStep} must be even to transpose b8 ({src.dtype})"),
                         name, MTE1)
    if transpose and size == 4 and p.kStep % 2:
        raise core.fault(ParameterOutOfRange(f"kStep={p.kStep} must be even to transpose b32 ({src.dtype})"),
                         name, MTE1)
    if p.mStep == 0 or p.kStep == 0:
        core.issue(LOAD_DATA_2D_V2, MTE1, params)
        return
    if p.kStep > 1 and p.dstStride < p.mStep:
        raise core.fault(ParameterOutOfRange(
            f"dstStride={p.dstStride} is less than mStep={p.mStep}: the K neighbours' fractals would overlap in "
            f"{dst.buffer.name}"), name, MTE1)
    src_fracs, dst_fracs = _fractal_maps(p.mStartPosition, p.kStartPosition, p.mStep, p.kStep, p.srcStride,
                                         p.dstStride)
    first = int(src_fracs.min())
    if first < 0:
        raise core.fault(ParameterOutOfRange(
            f"srcStride={p.srcStride} walks {-first} fractals before src (kStartPosition={p.kStartPosition}, "
            f"mStartPosition={p.mStartPosition})", buffer="L1", addr_range=(src.address + first * FRACTAL,
                                                                            src.address)), name, MTE1)
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address
    reads = ((sbuf, s0 + first * FRACTAL, s0 + (int(src_fracs.max()) + 1) * FRACTAL),)
    writes = ((dbuf, d0, d0 + (int(dst_fracs.max()) + 1) * FRACTAL),)
    count = p.mStep * p.kStep
    core.issue(LOAD_DATA_2D_V2, MTE1, params, reads, writes,
               Load2DV2Operands(sbuf, s0, dbuf, d0, src_fracs, dst_fracs, size, transpose, p.mStep, p.kStep,
                                count * FRACTAL),
               _PATH[dbuf.name], count * FRACTAL)
