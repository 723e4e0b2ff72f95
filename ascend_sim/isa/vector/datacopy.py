"""UB data movement of the vector core: GM -> UB on MTE2, UB -> GM on MTE3, UB -> UB on PIPE_V.

* DataCopy with DataCopyParams (blockCount blocks of blockLen 32 B DataBlocks, end-to-start gaps srcStride /
  dstStride in DataBlocks on both sides) and its count form (the byte length rounded down to 32 B);
  docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运/DataCopy（GM与UB高维切分数据搬运）.md and （连续数据搬运）.md.
* DataCopyPad with DataCopyExtParams (blockLen in bytes; GM -> UB: srcStride in bytes, dstStride in
  DataBlocks; UB -> GM: srcStride in DataBlocks, dstStride in bytes) and, GM -> UB, DataCopyPadExtParams
  (isPad, leftPadding / rightPadding in elements, paddingValue): each UB row is leftPadding elements, the
  blockLen bytes, rightPadding elements, then dummy bytes up to the next 32 B;
  DataCopyPad（GMToUB非对齐数据搬运）.md and DataCopyPad（UBToGM非对齐数据搬运）.md.
  Fill: paddingValue when isPad; with no padding the dummy repeats the block's first element; with padding
  and isPad=false the pads are undefined on hardware and left unchanged here (SetPadValue is not modelled).
  On the 950 (arch 3510) `mode=PaddingMode.Compact` packs the UB rows blockLen bytes apart ("紧凑模式": a
  single block need not be 32 B aligned, the whole transfer is padded once at its end; the pad bytes are left as
  they are here); the UB-side stride must be 0 and GM -> UB takes no left/right padding in that mode (other
  values are not modelled and fault).
  Also on the 950, SetLoopModePara(UB_TO_OUT) repeats a UB -> GM DataCopyPad loop2Size x loop1Size times, and
  SetLoopModePara(OUT_TO_UB) a GM -> UB one (Normal mode) (isa/arch35/loop_mode.py); a GM -> UB DataCopyPad in
  Compact mode or a DataCopy issued in loop mode faults (not modelled).

Costs: a fixed overhead (rates.mte2_overhead for GM -> UB, rates.mte3_overhead for UB -> GM; their sources are in
platform.py) plus the bytes at this core's share of the GM read rate (GM -> UB) or at min(64 B/cycle, GM write
share) (UB -> GM; 64 is the INI ub_to_ddr rate of 2201).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.arch35.loop_mode import DataCopyMVType, loop_mode, refuse_loop_mode
from ascend_sim.isa.common import BLOCK, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte2 import CopyOperands, DataCopyParams
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define, operands_type, snapshot

MTE2, MTE3 = Pipe.MTE2, Pipe.MTE3
UB_TO_GM_RATE = 64.0  # bytes/cycle, ub_to_ddr in the 2201 SoC INI (reference §4.2)


class PaddingMode(Enum):
    """DataCopyPad's template mode on the 950: Normal pads every block to 32 B in UB, Compact only the whole."""

    Normal = 0
    Compact = 1


@dataclass(slots=True)
class DataCopyExtParams:
    """blockCount blocks of blockLen BYTES; the strides' units depend on the side (see the module doc)."""

    blockCount: int = 1
    blockLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    rsv: int = 0


@dataclass(slots=True)
class DataCopyPadExtParams:
    """GM -> UB padding: leftPadding / rightPadding elements (at most 32 B each) of paddingValue."""

    isPad: bool = False
    leftPadding: int = 0
    rightPadding: int = 0
    paddingValue: float = 0


_DATACOPY_RANGES = {"blockCount": (0, 4095), "blockLen": (0, 65535), "srcStride": (0, 65535),
                    "dstStride": (0, 65535)}
_EXT_RANGES = {"blockCount": (0, 4095), "blockLen": (0, 2097151), "srcStride": (0, 2**32 - 1),
               "dstStride": (0, 2**32 - 1)}
_check_datacopy = fields_checker(_DATACOPY_RANGES)
_check_ext = fields_checker(_EXT_RANGES)
_UB, _GM = ("UB",), ("GM",)


PadOperands = operands_type("PadOperands", "sbuf s0 s_pitch dbuf d0 d_pitch count blen dtype left right fill row_bytes "
                            "nbytes",
                            "count rows of blen bytes from sbuf at s0 (s_pitch apart) into rows of row_bytes of "
                            "dbuf at d0 (d_pitch apart), after `left` dtype elements; the rest of each row set to "
                            "`fill` ('first': its first element; None: left as it is); nbytes read.")


def _read_cost(ops, model) -> float:
    return model.rates.mte2_overhead + ops.nbytes / model.gm_read_rate


def _write_cost(ops, model) -> float:
    return model.rates.mte3_overhead + ops.nbytes / min(UB_TO_GM_RATE, model.gm_write_rate)


def _copy_rows(rec) -> None:
    """count rows of blen bytes, from the source pitch to the destination pitch."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, _ = rec.args
    dbuf.strided(d0, (count, blen), (d_pitch, 1))[...] = sbuf.strided(s0, (count, blen), (s_pitch, 1))


def _ub_to_ub_cost(ops, model) -> float:
    """Measured (vector_timing "measured"): one 32-byte DataBlock per cycle plus 5, the fit of pto-isa's tmov
    profiling (3186c381 tests/costmodel/st/testcase/tmov: one copy_ubuf_to_ubuf of 1024 blocks 1029 cycles, 63
    of 16 blocks 1323, 15 of 3 blocks 120). Published: 256 B per cycle (Vector指令理论性能汇总.md table 3) per
    block, plus the 12-cycle UB data path latency of pypto's CalcMovUbUb (def.h / pipe.cpp)."""
    count, blen = ops.count, ops.blen
    if model.platform.vector_timing == "measured":
        return float(count * -(-blen // BLOCK) + 5)
    return float(count * -(-blen // 256) + 12)


GM_TO_UB = define("DataCopy(GM->UB)", MTE2, kind=Kind.MOVE, operands=CopyOperands, cost=_read_cost,
                  execute=_copy_rows, params=DataCopyParams,
                  doc="GM -> UB: blockCount blocks of blockLen DataBlocks with gaps.")
UB_TO_GM = define("DataCopy(UB->GM)", MTE3, kind=Kind.MOVE, operands=CopyOperands, cost=_write_cost,
                  execute=_copy_rows, params=DataCopyParams,
                  doc="UB -> GM: blockCount blocks of blockLen DataBlocks with gaps.")
UB_TO_UB = define("DataCopy(UB->UB)", Pipe.V, kind=Kind.MOVE, operands=CopyOperands, cost=_ub_to_ub_cost,
                  execute=_copy_rows, params=DataCopyParams,
                  doc="UB -> UB on PIPE_V: blockCount blocks of blockLen DataBlocks with gaps.")


def _sides(core, name, pipe, dst, src):
    if pipe == MTE2:
        if src.__class__ is not GlobalTensor:
            expect_position(core, name, pipe, src, _GM, "src")
        ub = dst
    else:
        if dst.__class__ is not GlobalTensor:
            expect_position(core, name, pipe, dst, _GM, "dst")
        ub = src
    if ub.__class__ is not LocalTensor or ub.buffer.name != "UB":
        expect_position(core, name, pipe, ub, _UB, "dst" if pipe == MTE2 else "src")
    if ub.address % BLOCK:
        check_aligned(core, name, pipe, ub, BLOCK, "dst" if pipe == MTE2 else "src")


def _issue_rows(core, spec, pipe, params, src, dst, count, blen, s_pitch, d_pitch, path):
    s0, d0 = src.address, dst.address
    s1, d1 = s0 + (count - 1) * s_pitch + blen, d0 + (count - 1) * d_pitch + blen
    sbuf, dbuf = src.buffer, dst.buffer
    gm, gm0, gm_pitch, is_write = (sbuf, s0, s_pitch, False) if pipe == MTE2 else (dbuf, d0, d_pitch, True)
    return core.issue(spec, pipe, params, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
                      CopyOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, count * blen), path,
                      count * blen,
                      footprint=((gm, gm0, (count, blen), (gm_pitch, 1), is_write),))


def copy_ub_to_ub(dst, src, params: DataCopyParams) -> None:
    """DataCopy(UB -> UB) on PIPE_V (DataCopy（UBToUB高维切分数据搬运）.md): both sides 32 B aligned, gaps in blocks."""
    core = current_core()
    name = UB_TO_UB.name
    for tensor, role in ((dst, "dst"), (src, "src")):
        if tensor.address % BLOCK:
            check_aligned(core, name, Pipe.V, tensor, BLOCK, role)
    _check_datacopy(core, name, Pipe.V, params)
    count, blen = params.blockCount, params.blockLen * BLOCK
    if count * blen == 0:
        core.issue(UB_TO_UB, Pipe.V, params)
        return
    s_pitch, d_pitch = blen + params.srcStride * BLOCK, blen + params.dstStride * BLOCK
    s0, d0 = src.address, dst.address
    core.issue(UB_TO_UB, Pipe.V, params, ((src.buffer, s0, s0 + (count - 1) * s_pitch + blen),),
               ((dst.buffer, d0, d0 + (count - 1) * d_pitch + blen),),
               CopyOperands(src.buffer, s0, s_pitch, dst.buffer, d0, d_pitch, count, blen, count * blen))


def copy_ub(dst, src, params: DataCopyParams) -> None:
    """DataCopy between GM and UB with DataCopyParams (the direction follows the operands)."""
    if is_ub(dst) and is_ub(src):
        return copy_ub_to_ub(dst, src, params)
    core = current_core()
    to_ub = isinstance(dst, LocalTensor)
    pipe, spec = (MTE2, GM_TO_UB) if to_ub else (MTE3, UB_TO_GM)
    name = spec.name
    _sides(core, name, pipe, dst, src)
    _check_datacopy(core, name, pipe, params)
    refuse_loop_mode(core, DataCopyMVType.OUT_TO_UB if to_ub else DataCopyMVType.UB_TO_OUT, name, pipe)
    count, blen = params.blockCount, params.blockLen * BLOCK
    if count * blen == 0:  # a NOP that still takes an issue slot
        core.issue(spec, pipe, params)
        return
    _issue_rows(core, spec, pipe, params, src, dst, count, blen, blen + params.srcStride * BLOCK,
                blen + params.dstStride * BLOCK, "GM->UB" if to_ub else "UB->GM")


def copy_ub_contiguous(dst, src, count: int) -> None:
    """DataCopy(dst, src, count): count elements, the byte length rounded DOWN to 32 B like the hardware."""
    copy_ub(dst, src, DataCopyParams(1, (int(count) * dst.dtype.itemsize) // BLOCK, 0, 0))


# ------------------------------------------------------------------------------------------ DataCopyPad
def _pad_execute(rec) -> None:
    _pad_rows(*rec.args)


def _pad_rows(sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, dtype, left, _, fill, row_bytes, _nbytes) -> None:
    size = dtype.itemsize
    rows = dbuf.strided(d0, (count, row_bytes), (d_pitch, 1))
    rows[:, left * size:left * size + blen] = sbuf.strided(s0, (count, blen), (s_pitch, 1))
    typed = dbuf.strided(d0, (count, row_bytes // size), (d_pitch, size), dtype)
    end = left + blen // size
    if isinstance(fill, str):  # "first", no padding: the dummy repeats the block's first element
        typed[:, end:] = typed[:, :1]
    elif fill is not None:
        typed[:, :left] = fill
        typed[:, end:] = fill


def _unpad_execute(rec) -> None:
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, _ = rec.args
    dbuf.strided(d0, (count, blen), (d_pitch, 1))[...] = sbuf.strided(s0, (count, blen), (s_pitch, 1))


GM_TO_UB_PAD = define("DataCopyPad(GM->UB)", MTE2, kind=Kind.MOVE, operands=PadOperands, cost=_read_cost,
                      execute=_pad_execute,
                      params=DataCopyExtParams, doc="GM -> UB: byte-granular blocks, each padded to 32 B in UB.")
UB_TO_GM_PAD = define("DataCopyPad(UB->GM)", MTE3, kind=Kind.MOVE, operands=CopyOperands, cost=_write_cost,
                      execute=_unpad_execute,
                      params=DataCopyExtParams, doc="UB -> GM: byte-granular blocks from 32 B aligned UB rows.")

LoopCopyOperands = operands_type("LoopCopyOperands", "sbuf s0 s_pitches dbuf d0 d_pitches shape nbytes",
                                 "loop mode: an array of `shape` (loop2Size, loop1Size, blockCount, blockLen) bytes "
                                 "from sbuf at s0 (byte pitches s_pitches) to dbuf at d0 (d_pitches); nbytes moved.")


def _loop_execute(rec) -> None:
    """The loop iterations in order (a later one overwrites an earlier one where they overlap in GM)."""
    sbuf, s0, s_pitches, dbuf, d0, d_pitches, shape, _ = rec.args
    src = sbuf.strided(s0, shape, s_pitches)
    dst = dbuf.strided(d0, shape, d_pitches)
    for outer in range(shape[0]):
        for inner in range(shape[1]):
            dst[outer, inner] = src[outer, inner]


LoopPadOperands = operands_type("LoopPadOperands", "pad loops nbytes",
                                "loop mode GM -> UB: the padded copy `pad` (PadOperands) loop2Size x loop1Size "
                                "times, its source and destination moved by the loop strides (bytes) of `loops`; "
                                "nbytes read.")


def _loop_pad_execute(rec) -> None:
    pad, (loop1Size, loop2Size, l1src, l1dst, l2src, l2dst), _ = rec.args
    sbuf, s0, s_pitch, dbuf, d0, *rest = pad
    for outer in range(loop2Size):
        for inner in range(loop1Size):
            _pad_rows(sbuf, s0 + outer * l2src + inner * l1src, s_pitch, dbuf, d0 + outer * l2dst + inner * l1dst,
                      *rest)


GM_TO_UB_PAD_LOOP = define("DataCopyPad(GM->UB, loop mode)", MTE2, kind=Kind.MOVE, operands=LoopPadOperands,
                           cost=_read_cost, execute=_loop_pad_execute, params=DataCopyExtParams,
                           doc="GM -> UB under SetLoopModePara(OUT_TO_UB): the padded copy repeated over two "
                               "loops (arch 3510).")
UB_TO_GM_PAD_LOOP = define("DataCopyPad(UB->GM, loop mode)", MTE3, kind=Kind.MOVE, operands=LoopCopyOperands,
                           cost=_write_cost, execute=_loop_execute, params=DataCopyExtParams,
                           doc="UB -> GM under SetLoopModePara(UB_TO_OUT): the copy repeated over two loops "
                               "(arch 3510).")


def _ub_alignment(alignments) -> dict:
    """DataCopyPad's checks read the UB tensor's address only for the 32-byte alignment (`_sides`), never its
    size: the rows of a post-process at successive UB offsets hit one relative descriptor."""
    return {"UB": BLOCK}


@cached(on_chip_alignment=_ub_alignment)
def DataCopyPad(dst, src, dataCopyParams: DataCopyExtParams, padParams: DataCopyPadExtParams | None = None, *,
                mode: PaddingMode = PaddingMode.Normal) -> None:
    """GM -> UB (with padParams) or UB -> GM, blockLen in bytes; `mode` is the 950's PaddingMode template."""
    core = current_core()
    to_ub = isinstance(dst, LocalTensor)
    pipe, spec = (MTE2, GM_TO_UB_PAD) if to_ub else (MTE3, UB_TO_GM_PAD)
    name = spec.name
    if not isinstance(dataCopyParams, DataCopyExtParams):
        raise TypeError(f"DataCopyPad: dataCopyParams must be a DataCopyExtParams, got {type(dataCopyParams).__name__}")
    if not isinstance(mode, PaddingMode):
        raise core.fault(ParameterOutOfRange(f"mode={mode!r} is not a PaddingMode"), name, pipe)
    _sides(core, name, pipe, dst, src)
    _check_ext(core, name, pipe, dataCopyParams)
    p = dataCopyParams
    if to_ub:
        loops = loop_mode(core, DataCopyMVType.OUT_TO_UB)
        if loops[:2] != (1, 1) and mode is PaddingMode.Compact:
            refuse_loop_mode(core, DataCopyMVType.OUT_TO_UB, f"{name} with PaddingMode::Compact", pipe)
    else:
        loops = loop_mode(core, DataCopyMVType.UB_TO_OUT)
        if loops[:2] != (1, 1):
            return _data_copy_pad_loop(core, dst, src, p, mode, loops)
    if mode is PaddingMode.Compact:
        return _data_copy_pad_compact(core, spec, pipe, dst, src, p, padParams, to_ub)
    dtype = (dst if to_ub else src).dtype
    size = dtype.itemsize
    if p.blockLen % size:
        raise core.fault(ParameterOutOfRange(f"blockLen={p.blockLen} is not a multiple of sizeof(T)={size}"),
                         name, pipe)
    pad = padParams if padParams is not None else DataCopyPadExtParams()
    if to_ub:
        for field in ("leftPadding", "rightPadding"):
            value = getattr(pad, field)
            if not isinstance(value, (int, np.integer)) or value < 0 or value * size > BLOCK:
                raise core.fault(ParameterOutOfRange(
                    f"{field}={value} elements of {size} B outside [0, {BLOCK // size}] (at most 32 bytes)"),
                    name, pipe)
    count, blen = p.blockCount, p.blockLen
    if count * blen == 0:
        core.issue(spec, pipe, (snapshot(p), snapshot(pad)) if to_ub else p)
        return
    row_bytes = -(-blen // BLOCK) * BLOCK
    if not to_ub:
        _issue_rows(core, spec, pipe, p, src, dst, count, blen, row_bytes + p.srcStride * BLOCK,
                    blen + p.dstStride, "UB->GM")
        return
    left, right = int(pad.leftPadding), int(pad.rightPadding)
    row_bytes = -(-(blen + (left + right) * size) // BLOCK) * BLOCK
    d_pitch, s_pitch = row_bytes + p.dstStride * BLOCK, blen + p.srcStride
    if left == 0 and right == 0:
        fill = "first" if row_bytes > blen else None
    else:
        fill = np.asarray(pad.paddingValue).astype(dtype) if pad.isPad else None
    s0, d0 = src.address, dst.address
    sbuf, dbuf = src.buffer, dst.buffer
    if loops[:2] != (1, 1):
        return _data_copy_pad_loop_to_ub(core, p, pad, loops, PadOperands(
            sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, dtype, left, right, fill, row_bytes, count * blen))
    core.issue(spec, pipe, (snapshot(p), snapshot(pad)), ((sbuf, s0, s0 + (count - 1) * s_pitch + blen),),
               ((dbuf, d0, d0 + (count - 1) * d_pitch + row_bytes),),
               PadOperands(sbuf, s0, s_pitch, dbuf, d0, d_pitch, count, blen, dtype, left, right, fill, row_bytes,
                           count * blen),
               "GM->UB", count * blen, footprint=((sbuf, s0, (count, blen), (s_pitch, 1), False),))


def _data_copy_pad_loop_to_ub(core, p, pad, loops, ops) -> None:
    """GM -> UB in loop mode: the Normal padded copy, loop2Size x loop1Size times, moved by the loop strides
    (bytes; the UB side's are 32-byte aligned, SetLoopModePara checks that)."""
    loop1Size, loop2Size, l1src, l1dst, l2src, l2dst = loops
    nbytes = loop2Size * loop1Size * ops.nbytes
    if nbytes == 0:
        core.issue(GM_TO_UB_PAD_LOOP, MTE2, (snapshot(p), snapshot(pad)), registers=(("loop_mode_outtoub", loops),))
        return
    s_last = (loop2Size - 1) * l2src + (loop1Size - 1) * l1src + (ops.count - 1) * ops.s_pitch + ops.blen
    d_last = (loop2Size - 1) * l2dst + (loop1Size - 1) * l1dst + (ops.count - 1) * ops.d_pitch + ops.row_bytes
    core.issue(GM_TO_UB_PAD_LOOP, MTE2, (snapshot(p), snapshot(pad)), ((ops.sbuf, ops.s0, ops.s0 + s_last),),
               ((ops.dbuf, ops.d0, ops.d0 + d_last),), LoopPadOperands(ops, loops, nbytes), "GM->UB", nbytes,
               registers=(("loop_mode_outtoub", loops),))


def _data_copy_pad_loop(core, dst, src, p, mode, loops) -> None:
    """UB -> GM in loop mode: the Normal or Compact row copy, loop2Size x loop1Size times, moved by the loop
    strides (bytes) on each side."""
    spec, pipe = UB_TO_GM_PAD_LOOP, MTE3
    size = src.dtype.itemsize
    if p.blockLen % size:
        raise core.fault(ParameterOutOfRange(f"blockLen={p.blockLen} is not a multiple of sizeof(T)={size}"),
                         spec.name, pipe)
    if mode is PaddingMode.Compact:
        require_arch35(core, spec.name, pipe, "DataCopyPad with PaddingMode::Compact")
        if p.srcStride:
            raise core.fault(ParameterOutOfRange(f"srcStride={p.srcStride} with PaddingMode::Compact: only 0 (rows "
                                                 "packed in UB) is modelled"), spec.name, pipe)
        s_pitch = p.blockLen
    else:
        s_pitch = -(-p.blockLen // BLOCK) * BLOCK + p.srcStride * BLOCK
    loop1Size, loop2Size, loop1SrcStride, loop1DstStride, loop2SrcStride, loop2DstStride = loops
    count, blen = p.blockCount, p.blockLen
    shape = (loop2Size, loop1Size, count, blen)
    nbytes = loop2Size * loop1Size * count * blen
    if nbytes == 0:
        core.issue(spec, pipe, p, registers=(("loop_mode_ubtoout", loops),))
        return
    s_pitches = (loop2SrcStride, loop1SrcStride, s_pitch, 1)
    d_pitches = (loop2DstStride, loop1DstStride, blen + p.dstStride, 1)
    s0, d0 = src.address, dst.address
    last = [(n - 1) * pitch for n, pitch in zip(shape[:3], s_pitches[:3])]
    s1 = s0 + sum(last) + blen
    d1 = d0 + sum((n - 1) * pitch for n, pitch in zip(shape[:3], d_pitches[:3])) + blen
    sbuf, dbuf = src.buffer, dst.buffer
    core.issue(spec, pipe, p, ((sbuf, s0, s1),), ((dbuf, d0, d1),),
               LoopCopyOperands(sbuf, s0, s_pitches, dbuf, d0, d_pitches, shape, nbytes), "UB->GM", nbytes,
               registers=(("loop_mode_ubtoout", loops),), footprint=((dbuf, d0, shape, d_pitches, True),))


def _data_copy_pad_compact(core, spec, pipe, dst, src, p, padParams, to_ub) -> None:
    """PaddingMode.Compact (arch 3510): the UB rows are blockLen bytes apart, no padding between them."""
    name = spec.name
    require_arch35(core, name, pipe, "DataCopyPad with PaddingMode::Compact")
    dtype = (dst if to_ub else src).dtype
    if p.blockLen % dtype.itemsize:
        raise core.fault(ParameterOutOfRange(f"blockLen={p.blockLen} is not a multiple of sizeof(T)="
                                             f"{dtype.itemsize}"), name, pipe)
    ub_stride = ("dstStride", p.dstStride) if to_ub else ("srcStride", p.srcStride)
    if ub_stride[1]:
        raise core.fault(ParameterOutOfRange(f"{ub_stride[0]}={ub_stride[1]} with PaddingMode::Compact: only 0 "
                                             "(rows packed in UB) is modelled"), name, pipe)
    pad = padParams if padParams is not None else DataCopyPadExtParams()
    if to_ub and (pad.leftPadding or pad.rightPadding):
        raise core.fault(ParameterOutOfRange(
            f"leftPadding={pad.leftPadding}, rightPadding={pad.rightPadding} with PaddingMode::Compact: only 0 "
            "is modelled"), name, pipe)
    count, blen = p.blockCount, p.blockLen
    if count * blen == 0:
        core.issue(spec, pipe, (snapshot(p), snapshot(pad)) if to_ub else p)
        return
    if not to_ub:
        _issue_rows(core, spec, pipe, p, src, dst, count, blen, blen, blen + p.dstStride, "UB->GM")
        return
    s0, d0, s_pitch = src.address, dst.address, blen + p.srcStride
    sbuf, dbuf = src.buffer, dst.buffer
    core.issue(spec, pipe, (snapshot(p), snapshot(pad)), ((sbuf, s0, s0 + (count - 1) * s_pitch + blen),),
               ((dbuf, d0, d0 + count * blen),),
               PadOperands(sbuf, s0, s_pitch, dbuf, d0, blen, count, blen, dtype, 0, 0, None, blen, count * blen),
               "GM->UB", count * blen, footprint=((sbuf, s0, (count, blen), (s_pitch, 1), False),))


__all__ = ["PaddingMode", "DataCopyExtParams", "DataCopyPadExtParams", "DataCopyPad", "copy_ub", "copy_ub_contiguous", "is_ub",
           "data_copy_ub"]


def is_ub(tensor) -> bool:
    return tensor.__class__ is LocalTensor and tensor.buffer.name == "UB"


def data_copy_ub(dst, src, params) -> None:
    """DataCopy with a UB operand: DataCopyParams or a count, GM -> UB, UB -> GM or UB -> UB."""
    if isinstance(params, DataCopyParams):
        copy_ub(dst, src, params)
    elif isinstance(params, (int, np.integer)):
        copy_ub_contiguous(dst, src, params)
    else:
        raise TypeError(f"DataCopy between GM and UB takes DataCopyParams or a count, not {type(params).__name__}")
