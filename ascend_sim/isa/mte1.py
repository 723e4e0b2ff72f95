"""MTE1: L1 -> L0A / L0B moves. LoadData 2D (whole fractals, optional transpose) and LoadData 3Dv2 (img2col)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ascend_sim.isa.common import FRACTAL, check_aligned, check_range, current_core, expect_position, fields_checker
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.gather import block_rows_of_map
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

MTE1 = Pipe.MTE1


@dataclass(slots=True)
class LoadData2DParams:
    """repeatTimes fractals (512 B) from src fractal startIndex + i*srcStride to dst fractal i*(dstGap+1)."""

    startIndex: int = 0
    repeatTimes: int = 0
    srcStride: int = 0
    sid: int = 0
    dstGap: int = 0
    ifTranspose: bool = False
    addrMode: int = 0


@dataclass(slots=True)
class LoadData3DParamsV2:
    """img2col of an NC1HWC0 feature map in L1 into a (mExtension x kExtension) window in L0A/L0B.

    Rows are output positions (oh, ow); columns are (c1, kh, kw, c0). padList is (left, right, top, bottom).
    """

    padList: tuple = (0, 0, 0, 0)
    l1H: int = 0
    l1W: int = 0
    channelSize: int = 0
    kExtension: int = 0
    mExtension: int = 0
    kStartPt: int = 0
    mStartPt: int = 0
    strideW: int = 1
    strideH: int = 1
    filterW: int = 1
    filterH: int = 1
    dilationFilterW: int = 1
    dilationFilterH: int = 1
    enTranspose: bool = False
    enSmallK: bool = False
    padValue: float = 0
    filterSizeW: bool = False
    filterSizeH: bool = False
    fMatrixCtrl: bool = False


@dataclass(slots=True)
class LoadDataRepeatParams:
    repeatTime: int = 1
    repeatStride: int = 0
    repeatMode: int = 0


@dataclass(slots=True)
class Fmatrix:
    l1H: int = 0
    l1W: int = 0
    padList: tuple = field(default_factory=lambda: (0, 0, 0, 0))


FMATRIX_LEFT, FMATRIX_RIGHT = "FMATRIX_LEFT", "FMATRIX_RIGHT"


SET_FMATRIX = define("SetFmatrix", Pipe.S, kind=Kind.REGISTER_WRITE,
                     doc="Write the LEFT or RIGHT feature-map register (l1H, l1W, pads).")
SET_LOAD_DATA_REPEAT = define("SetLoadDataRepeat", Pipe.S, kind=Kind.REGISTER_WRITE,
                              doc="Write the LoadData 3Dv2 repeat register.")


def SetFmatrix(l1H: int, l1W: int, padList, fmatrixMode: str = FMATRIX_LEFT) -> None:
    """Set the LEFT or RIGHT feature-map register; a LoadData 3Dv2 with isSetFMatrix=False reads the one its
    fMatrixCtrl selects (the dx kernel's fp32 weight path uses RIGHT)."""
    core = current_core()
    if fmatrixMode not in (FMATRIX_LEFT, FMATRIX_RIGHT):
        raise core.fault(ParameterOutOfRange(f"fmatrixMode={fmatrixMode!r} must be FMATRIX_LEFT or FMATRIX_RIGHT"),
                         "SetFmatrix", Pipe.S)
    for name, value, hi in (("l1H", l1H, 32767), ("l1W", l1W, 32767)):
        check_range(core, "SetFmatrix", Pipe.S, name, value, 0, hi)
    for i, pad in enumerate(padList):
        check_range(core, "SetFmatrix", Pipe.S, f"padList[{i}]", pad, 0, 255)
    core.write_register(SET_FMATRIX, fmatrixMode, Fmatrix(l1H, l1W, tuple(padList)))


def SetLoadDataRepeat(params: LoadDataRepeatParams) -> None:
    core = current_core()
    if params.repeatTime > 1:
        raise core.fault(ParameterOutOfRange(
            f"repeatTime={params.repeatTime}: LoadData 3Dv2 repeats are not modelled (only 0 or 1)"),
            "SetLoadDataRepeat", Pipe.S)
    core.write_register(SET_LOAD_DATA_REPEAT, "loaddata_repeat", LoadDataRepeatParams(
        params.repeatTime, params.repeatStride, params.repeatMode))


def _l0_rate(rates, dst_name: str) -> float:
    return rates.l1_to_l0a if dst_name == "L0A" else rates.l1_to_l0b


_LOAD2D_RANGES = {"startIndex": (0, 65535), "repeatTimes": (0, 255), "srcStride": (0, 65535), "dstGap": (0, 65535)}
_check_load2d = fields_checker(_LOAD2D_RANGES)
_L0AB, _L1 = ("L0A", "L0B"), ("L1",)
_PATH = {"L0A": "L1->L0A", "L0B": "L1->L0B"}  # one string per path, not one per instruction


Load2DOperands = operands_type("Load2DOperands", "sbuf s0 s_pitch dbuf d0 d_pitch reps transpose dtype nbytes",
                               "reps fractals of 512 B, s_pitch / d_pitch apart, from sbuf at s0 into dbuf (L0A or "
                               "L0B) at d0, each transposed when transpose is set (nbytes moved).")
Load3DOperands = operands_type("Load3DOperands", "sbuf s0 span dbuf d0 count extent dtype index pad_positions written "
                               "pad_value stride_w rows nbytes",
                               "img2col: count elements gathered from sbuf[s0, s0 + span) by index, padValue at "
                               "pad_positions, into dbuf at d0 (at `written` of its extent when not dense); "
                               "stride_w and the fmap rows the window touches set the rate (nbytes moved).")


def _load_cost(ops, model) -> float:
    """A fixed overhead, then the bytes at the L1 -> L0A / L0B rate."""
    return model.rates.mte1_overhead + ops.nbytes / _l0_rate(model.rates, ops.dbuf.name)


def _load2d_execute(rec) -> None:
    """repeatTimes fractals of 512 B; with ifTranspose element [r][c] of each 16 x 16 fractal goes to [c][r]."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, transpose, dtype, _ = rec.args
    if transpose:
        dbuf.strided(d0, (reps, 16, 16), (d_pitch, 32, 2), dtype)[...] = \
            sbuf.strided(s0, (reps, 16, 16), (s_pitch, 32, 2), dtype).transpose(0, 2, 1)
    else:
        dbuf.strided(d0, (reps, FRACTAL), (d_pitch, 1))[...] = sbuf.strided(s0, (reps, FRACTAL), (s_pitch, 1))


LOAD_DATA_2D = define("LoadData2D", MTE1, kind=Kind.MOVE, operands=Load2DOperands, cost=_load_cost,
                      execute=_load2d_execute, params=LoadData2DParams,
                      doc="L1 -> L0A/L0B: whole 512-byte fractals, optionally transposed.")


def load_data_2d(dst, src, params: LoadData2DParams) -> None:
    core = current_core()
    name = "LoadData2D"
    if dst.__class__ is not LocalTensor or dst.buffer.name not in _L0AB:
        expect_position(core, name, MTE1, dst, _L0AB, "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, name, MTE1, src, _L1, "src")
    dbuf, sbuf = dst.buffer, src.buffer
    _check_load2d(core, name, MTE1, params)
    if dst.address % FRACTAL:
        check_aligned(core, name, MTE1, dst, FRACTAL, "dst")
    if src.address % core.alignments.L1:
        check_aligned(core, name, MTE1, src, core.alignments.L1, "src")
    dtype, transpose = src.dtype, params.ifTranspose
    if transpose and dtype.itemsize != 2:
        raise core.fault(ParameterOutOfRange(f"ifTranspose=1 needs a 16-bit dtype, got {src.dtype} "
                                             "(transpose 32-bit data with LoadData 3Dv2 into L0B)"), name, MTE1)
    reps = params.repeatTimes
    if reps == 0:
        core.issue(LOAD_DATA_2D, MTE1, params)
        return
    s_pitch, d_pitch = params.srcStride * FRACTAL, (params.dstGap + 1) * FRACTAL
    s0 = src.address + params.startIndex * FRACTAL
    s1 = s0 + (reps - 1) * s_pitch + FRACTAL
    d0 = dst.address
    d1 = d0 + (reps - 1) * d_pitch + FRACTAL

    core.issue(LOAD_DATA_2D, MTE1, params, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
               Load2DOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, transpose, dtype, reps * FRACTAL),
               _PATH[dbuf.name], reps * FRACTAL)


_CHANNEL_RULE = {1: "4, 8, 16, 32N, 32N+4, 32N+8 or 32N+16", 2: "4, 8, 16N, 16N+4 or 16N+8", 4: "4, 8N or 8N+4"}


def _channel_size_ok(channel_size: int, size: int) -> bool:
    if size == 1:  # b8 (LoadData_3D.md, LoadDataWithStride.md)
        return channel_size in (4, 8, 16) or channel_size % 32 in (0, 4, 8, 16)
    if size == 2:
        return channel_size in (4, 8) or channel_size % 16 in (0, 4, 8)
    return channel_size == 4 or channel_size % 8 in (0, 4)


@lru_cache(maxsize=512)
def _img2col_map(l1H, l1W, pads, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, target, cs=None):
    """For every destination element, in destination order: the flat source index, then the pad positions,
    the destination positions when some are left unwritten (else None), and Wout.

    target "L0A" (ZZ of the block), "L0A_T" (ZZ of its transpose, enTranspose) or "L0B" (ZN). cs: the channels of
    one fmap pixel in L1 (C0, or a channelSize below C0: the small-C0 fmap); the destination fractals stay C0
    wide, and a K window that ends inside a fractal leaves the rest of it unwritten."""
    cs = c0 if cs is None else cs
    pl, pr, pt, _ = pads
    wout = (l1W + pl + pr - ((fW - 1) * dW + 1)) // sW + 1
    if target == "L0A" and cs == c0 and kExt % c0 == 0 and kStart % c0 == 0:
        return _zz_block_map(l1H, l1W, pl, pt, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout)
    if target == "L0B":  # ZN: fractal (kk, nn) holds X[kk*c0 + k0, nn*16 + n0] at [n0][k0]
        kk = np.arange(mExt // c0).reshape(-1, 1, 1, 1)
        nn = np.arange(-(-kExt // 16)).reshape(1, -1, 1, 1)
        n0 = np.arange(16).reshape(1, 1, -1, 1)
        k0 = np.arange(c0).reshape(1, 1, 1, -1)
        m, k = kk * c0 + k0, nn * 16 + n0
    elif target == "L0A_T":  # ZZ of Blk^T: fractal (a, b) holds X[b*c0 + e, a*16 + r] at [r][e]; the M axis
        # (columns of A) is padded to 16 per fractal row, as Mmad's kDirectionAlign reads it for b32
        a = np.arange(-(-kExt // 16)).reshape(-1, 1, 1, 1)
        b = np.arange(-(-mExt // 16) * (16 // c0)).reshape(1, -1, 1, 1)
        r = np.arange(16).reshape(1, 1, -1, 1)
        e = np.arange(c0).reshape(1, 1, 1, -1)
        m, k = b * c0 + e, a * 16 + r
    else:  # ZZ: fractal (a, b) holds X[a*16 + r, b*c0 + e] at [r][e]
        a = np.arange(mExt // 16).reshape(-1, 1, 1, 1)
        b = np.arange(-(-kExt // c0)).reshape(1, -1, 1, 1)
        r = np.arange(16).reshape(1, 1, -1, 1)
        e = np.arange(c0).reshape(1, 1, 1, -1)
        m, k = a * 16 + r, b * c0 + e
    written = None
    if k.max() >= kExt or m.max() >= mExt:  # half-used last fractals (b32): their unused part is not written
        keep = np.broadcast_to((k < kExt) & (m < mExt), np.broadcast_shapes(m.shape, k.shape)).reshape(-1)
        written = np.flatnonzero(keep)
    m = m + mStart
    k = k + kStart
    oh, ow = m // wout, m % wout
    per_c1 = fH * fW * cs
    ch1, rem = k // per_c1, k % per_c1
    kh, kw, ci = rem // (fW * cs), (rem // cs) % fW, rem % cs
    h = oh * sH - pt + kh * dH
    w = ow * sW - pl + kw * dW
    valid = (h >= 0) & (h < l1H) & (w >= 0) & (w < l1W) & (ch1 < c1)
    index = ((ch1 * l1H + h) * l1W + w) * cs + ci
    shape = np.broadcast_shapes(index.shape, valid.shape)
    index = np.where(valid, index, 0)
    index = np.broadcast_to(index, shape).reshape(-1)
    valid = np.broadcast_to(valid, shape).reshape(-1)
    if written is not None:
        index, valid = index[written], valid[written]
    pad_positions = np.flatnonzero(~valid)
    # the source elements actually read (the record's read range), relative to the fmap start
    read = (int(index[valid].min()), int(index[valid].max()) + 1) if pad_positions.size < index.size else (0, 0)
    return index, pad_positions, written, wout, read


def _zz_block_map(l1H, l1W, pl, pt, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout):
    """_img2col_map into L0A (ZZ) of whole C0 blocks of a C0-wide fmap: the same map, worked out per 32-byte
    block. Each destination row of a fractal takes the C0 channels of one fmap pixel (or padding), so the pixel,
    its validity and its first element depend on (a, b, r) only, and the C0 elements follow: 1/C0 of the work
    (the map is made for every distinct LoadData 3Dv2, a few hundred per dx run). The pixel is the window's
    corner (per a, r) plus the kernel tap (per b), each part kept for the loads that share it."""
    h_row, w_row, at_row = _zz_rows(mExt, mStart, wout, sH, sW, pt, pl, l1W, c0)
    ch1, h_tap, w_tap = _zz_columns(kExt, kStart, fH, fW, dH, dW, c0)
    # 0 <= h < l1H as one comparison: a negative h is a huge unsigned one
    valid = ((h_row + h_tap).view(np.uint64) < l1H) & ((w_row + w_tap).view(np.uint64) < l1W)
    if ch1[0, -1, 0] >= c1:  # a channel block past the fmap's (ch1 grows along b)
        valid &= ch1 < c1
    first = np.where(valid, at_row + ((ch1 * l1H + h_tap) * l1W + w_tap) * c0, 0)
    index = (first[..., None] + np.arange(c0)).reshape(-1)
    if valid.all():
        return index, np.zeros(0, np.int64), None, wout, (int(first.min()), int(first.max()) + c0)
    padded = np.flatnonzero(~valid.reshape(-1))
    pad_positions = (padded[:, None] * c0 + np.arange(c0)).reshape(-1)
    index[pad_positions] = 0  # padding reads element 0, as in _img2col_map
    if padded.size == valid.size:
        return index, pad_positions, None, wout, (0, 0)
    starts = first[valid]
    return index, pad_positions, None, wout, (int(starts.min()), int(starts.max()) + c0)


@lru_cache(maxsize=1024)
def _zz_rows(mExt, mStart, wout, sH, sW, pt, pl, l1W, c0) -> tuple:
    """Per destination row (a, 1, r) of a ZZ load: its window's top fmap row and left column (before the kernel
    tap) and their part of the flat source index."""
    oh, ow = np.divmod(np.arange(mStart, mStart + mExt).reshape(-1, 1, 16), wout)
    h, w = oh * sH - pt, ow * sW - pl
    return _frozen(h, w, (h * l1W + w) * c0)


@lru_cache(maxsize=1024)
def _zz_columns(kExt, kStart, fH, fW, dH, dW, c0) -> tuple:
    """Per C0 block b of the K window (1, b, 1): its channel block and the kernel tap's row and column offsets."""
    ch1, tap = np.divmod(np.arange(kStart // c0, (kStart + kExt) // c0).reshape(1, -1, 1), fH * fW)
    kh, kw = np.divmod(tap, fW)
    return _frozen(ch1, kh * dH, kw * dW)


def _frozen(*arrays) -> tuple:
    """The arrays made read-only (kept in a cache, shared by the maps made from them)."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


_LOAD3D_RANGES = {"channelSize": (0, 65535), "kExtension": (0, 65535), "mExtension": (0, 65535),
                  "kStartPt": (0, 65535), "mStartPt": (0, 65535), "strideW": (1, 63), "strideH": (1, 63),
                  "filterW": (0, 255), "filterH": (0, 255), "dilationFilterW": (1, 255), "dilationFilterH": (1, 255)}
_check_load3d = fields_checker(_LOAD3D_RANGES)


def _load3d_cost(ops, model) -> float:
    return model.rates.mte1_overhead + ops.nbytes / load3d_rate(model.rates, ops.dbuf.name, ops.stride_w, ops.rows)


def _load3d_execute(rec) -> None:
    """img2col: each destination element takes the feature-map element its (row, column) maps to, or padValue
    where that falls in the padding."""
    sbuf, s0, span, dbuf, d0, count, extent, dtype, index, pad_positions, written, pad_value, _, _, _ = rec.args
    source = sbuf.view(dtype, s0, span)
    if written is None:  # gather straight into L0 (every index is inside the source: pads read element 0)
        values = dbuf.view(dtype, d0, count)
        c0 = 32 // dtype.itemsize
        blocks = block_rows_of_map(index, pad_positions, c0) if span % c0 == 0 else None
        if blocks is None:
            source.take(index, out=values, mode="clip")
        else:  # the same bytes, a 32-byte block at a time
            source.reshape(-1, c0).take(blocks, axis=0, out=values.reshape(-1, c0), mode="clip")
        if pad_positions.size:
            values[pad_positions] = pad_value
    else:
        values = source.take(index)
        if pad_positions.size:
            values[pad_positions] = pad_value
        dbuf.view(dtype, d0, extent)[written] = values


LOAD_DATA_3DV2 = define("LoadData3Dv2", MTE1, kind=Kind.MOVE, operands=Load3DOperands, cost=_load3d_cost,
                        execute=_load3d_execute,
                        params=LoadData3DParamsV2, doc="L1 -> L0A/L0B: img2col of an NC1HWC0 feature map.")


class Img2col(NamedTuple):
    """A checked LoadData 3Dv2: its register reads, and the gather `_img2col_map` gave for it."""

    registers: tuple
    index: np.ndarray
    pad_positions: np.ndarray
    written: np.ndarray | None
    wout: int
    read: tuple
    span: int


def decode_img2col(core, name, spec, dst, src, params: LoadData3DParamsV2, isSetFMatrix: bool) -> Img2col | None:
    """Check a LoadData 3Dv2 (operands, the fmatrix it reads, every field) and map its gather; a NOP is issued
    as `spec` here and gives None. Shared by LoadData 3Dv2 and the 950's LoadDataWithStride."""
    if dst.__class__ is not LocalTensor or dst.buffer.name not in _L0AB:
        expect_position(core, name, MTE1, dst, _L0AB, "dst")
    if src.__class__ is not LocalTensor or src.buffer.name != "L1":
        expect_position(core, name, MTE1, src, _L1, "src")
    p = params
    registers = ()
    if isSetFMatrix:
        if p.fMatrixCtrl:
            # asc-devkit writes the struct into the LEFT register, then the load reads the RIGHT one
            raise core.fault(ParameterOutOfRange(
                "fMatrixCtrl=1 with isSetFMatrix=True: the load would set the LEFT fmatrix and read the RIGHT one; "
                "call SetFmatrix(..., FMATRIX_RIGHT) and load with isSetFMatrix=False"), name, MTE1)
        l1H, l1W, pads = p.l1H, p.l1W, tuple(p.padList)
        registers = ((FMATRIX_LEFT, Fmatrix(l1H, l1W, pads)),)  # set by the load itself, then read
    else:
        which = FMATRIX_RIGHT if p.fMatrixCtrl else FMATRIX_LEFT
        fm = core.registers.get(which)
        registers = ((which, fm),)
        if fm is None:
            raise core.fault(ParameterOutOfRange(f"isSetFMatrix=False but SetFmatrix({which}) was never called"),
                             name, MTE1)
        l1H, l1W, pads = fm.l1H, fm.l1W, fm.padList
    dtype = src.dtype
    size = dtype.itemsize
    c0 = 32 // size
    _check_load3d(core, name, MTE1, p)
    if l1H.__class__ is not int or not 0 <= l1H <= 32767:
        check_range(core, name, MTE1, "l1H", l1H, 0, 32767)
    if l1W.__class__ is not int or not 0 <= l1W <= 32767:
        check_range(core, name, MTE1, "l1W", l1W, 0, 32767)
    for i, pad in enumerate(pads):
        if pad.__class__ is not int or not 0 <= pad <= 255:
            check_range(core, name, MTE1, f"padList[{i}]", pad, 0, 255)
    dbuf = dst.buffer
    to_l0b = dbuf.name == "L0B"
    transpose_a = bool(p.enTranspose) and not to_l0b  # into L0B enTranspose is ignored (L0B always transposes)
    if transpose_a and size == 1:
        raise core.fault(ParameterOutOfRange(f"enTranspose=1 into L0A needs 16- or 32-bit data, got {src.dtype}"),
                         name, MTE1)
    if to_l0b and size == 1:
        raise core.fault(ParameterOutOfRange(f"LoadData 3Dv2 into L0B does not take {src.dtype} on A2/A3"),
                         name, MTE1)
    channel_size, k_ext, m_ext, k_start = p.channelSize, p.kExtension, p.mExtension, p.kStartPt
    if not _channel_size_ok(channel_size, size):
        raise core.fault(ParameterOutOfRange(
            f"channelSize={channel_size} must be {_CHANNEL_RULE.get(size, 'legal')} for {src.dtype}"), name, MTE1)
    # a channelSize below C0 (4 or 8 of b16, 4 of b32, 4 / 8 / 16 of b8) reads the small-C0 fmap that DN2NZ's
    # SmallC0 mode writes: channelSize elements a pixel, one C1
    small = 0 < channel_size < c0
    if channel_size % c0 and not small:
        raise core.fault(ParameterOutOfRange(
            f"channelSize={channel_size}: only multiples of C0={c0} and the sizes below C0 are modelled (not "
            f"N*{c0}+{channel_size % c0})"), name, MTE1)
    if small and (to_l0b or transpose_a):
        raise core.fault(ParameterOutOfRange(
            f"channelSize={channel_size} (below C0={c0}) into {dbuf.name}{' transposed' if transpose_a else ''}: "
            "only the small-C0 load into L0A is modelled"), name, MTE1)
    if k_start % c0:
        raise core.fault(ParameterOutOfRange(f"kStartPt={k_start} must be a multiple of {c0}"), name, MTE1)
    # Into L0B the M axis is cut into C0-row fractals and K into 16-column ones; b32 may end on a half
    # fractal column (kExtension = 8 mod 16), whose unused half is left unwritten. Transposed into L0A, K
    # becomes 16-row fractal rows and M C0-wide columns: b32 may end on half a fractal either way.
    if to_l0b or transpose_a:
        m_unit, k_unit = c0, (c0 if size == 4 else 16)
    else:
        m_unit, k_unit = 16, c0
    fW = p.filterW + 256 * int(p.filterSizeW)  # filterSize carries the 9th bit: kernels up to 511
    fH = p.filterH + 256 * int(p.filterSizeH)
    pixel = channel_size if small else c0  # elements of one fmap pixel in L1
    c1 = 1 if small else channel_size // c0
    width = c1 * fH * fW * pixel  # columns of the img2col matrix X (§4.2)
    # a K window that covers the rightmost fractal may end inside it (LoadData_3D.md, kExtension)
    covers_right = not (to_l0b or transpose_a) and k_start + k_ext == width
    if m_ext % m_unit or (k_ext % k_unit and not covers_right):
        raise core.fault(ParameterOutOfRange(
            f"mExtension={m_ext} must be a multiple of {m_unit} and kExtension={k_ext} of {k_unit} "
            f"for {dst.buffer.name}"), name, MTE1)
    if dst.address % FRACTAL:
        check_aligned(core, name, MTE1, dst, FRACTAL, "dst")
    if src.address % core.alignments.L1:
        check_aligned(core, name, MTE1, src, core.alignments.L1, "src")
    if fW == 0 or fH == 0:
        raise core.fault(ParameterOutOfRange(f"filter {fH}x{fW}: filterW/H may be 0 only with filterSizeW/H set"),
                         name, MTE1)
    dW = p.dilationFilterW
    eff_w = (fW - 1) * dW + 1
    if l1H == 0 or l1W == 0 or m_ext == 0 or k_ext == 0:
        core.issue(spec, MTE1, params, registers=registers)
        return None
    if l1W + pads[0] + pads[1] < eff_w:
        raise core.fault(ParameterOutOfRange(
            f"l1W={l1W} plus pads {pads[0]}+{pads[1]} is narrower than the dilated filter width {eff_w}"), name, MTE1)
    if k_start + k_ext > width:  # the K block must lie inside X
        # Without this check the columns past X would read channels beyond the fmap (and an empty fmap would
        # be gathered from): the kernel asked for a K block that does not exist.
        if channel_size == 0:
            culprit = ("channelSize=0 is too small for this K block (the docs make channelSize 0 a NOP, which "
                       f"would leave {dbuf.name} stale for the next Mmad)")
        else:
            culprit = "kStartPt/kExtension select columns that do not exist, or channelSize is too small"
        raise core.fault(ParameterOutOfRange(
            f"kStartPt={k_start} + kExtension={k_ext} = {k_start + k_ext} reaches past the img2col matrix, which "
            f"has channelSize*filterH*filterW = {channel_size}*{fH}*{fW} = {width} columns: {culprit}",
            buffer=src.buffer.name, addr_range=(src.address, src.address + c1 * l1H * l1W * pixel * size)),
            name, MTE1)
    m_start, stride_w = p.mStartPt, p.strideW
    index, pad_positions, written, wout, read = _img2col_map(l1H, l1W, pads, c1, k_ext, m_ext, k_start, m_start,
                                                       stride_w, p.strideH, fW, fH, dW, p.dilationFilterH, c0,
                                                       "L0B" if to_l0b else ("L0A_T" if transpose_a else "L0A"),
                                                       pixel)
    return Img2col(registers, index, pad_positions, written, wout, read, c1 * l1H * l1W * pixel)


def load_data_3d_v2(dst, src, params: LoadData3DParamsV2, isSetFMatrix: bool = True) -> None:
    core = current_core()
    img2col = decode_img2col(core, "LoadData3Dv2", LOAD_DATA_3DV2, dst, src, params, isSetFMatrix)
    if img2col is None:
        return
    p = params
    dtype = src.dtype
    size = dtype.itemsize
    count = p.mExtension * p.kExtension
    written, read = img2col.written, img2col.read
    extent = count if written is None else int(written[-1]) + 1  # destination elements spanned
    sbuf, s0, dbuf, d0 = src.buffer, src.address, dst.buffer, dst.address
    rows = -(-((p.mStartPt % img2col.wout) + p.mExtension) // img2col.wout)  # fmap rows the window touches (rate)
    reads = ((sbuf, s0 + read[0] * size, s0 + read[1] * size),) if read[1] else ()
    core.issue(LOAD_DATA_3DV2, MTE1, params, reads, ((dbuf, d0, d0 + extent * size),),
               Load3DOperands(sbuf, s0, img2col.span, dbuf, d0, count, extent, dtype, img2col.index,
                              img2col.pad_positions, written, p.padValue, p.strideW, rows, count * size),
               _PATH[dbuf.name], count * size, img2col.registers)


def load3d_rate(rates, dst_name: str, stride_w: int, rows: int) -> float:
    """Bytes per cycle of LoadData 3D from the Ascend C performance appendix (reference §4.1)."""
    to_a = dst_name == "L0A"
    if stride_w == 1 and rows <= 1:
        return _l0_rate(rates, dst_name)
    if stride_w == 1:
        return max(512 // (rows + 2), 32) if to_a else max(512 // (rows + 4), 512 // 18)
    if stride_w in (2, 4, 8):
        return 512 // (2 * stride_w + rows) if to_a else 512 // (2 * stride_w + 2 + rows)
    return 32 if to_a else 512 // 18
