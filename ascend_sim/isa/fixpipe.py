"""PIPE_FIX: Fixpipe L0C -> GM with on-the-fly conversion (F322F16, F322BF16, NoQuant), NZ2ND or NZ output."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ascend_sim.isa.atomic import ATOMIC_WRITE, atomic_register, store
from ascend_sim.isa.common import check_aligned, check_range, current_core, expect_position
from ascend_sim.machine.dtypes import bfloat16, float16, float32
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define, operands_type

FIX = Pipe.FIX


class QuantMode_t(Enum):
    NoQuant = "NoQuant"
    F322F16 = "F322F16"
    F322BF16 = "F322BF16"
    QF322HIF8_PRE = "QF322HIF8_PRE"  # arch 3510 only (isa/arch35/fixpipe_3510.py)
    QF322FP8_PRE = "QF322FP8_PRE"  # arch 3510 only


class FixpipeConfig(Enum):
    CFG_ROW_MAJOR = "CFG_ROW_MAJOR"  # NZ -> ND
    CFG_NZ = "CFG_NZ"


CFG_ROW_MAJOR, CFG_NZ = FixpipeConfig.CFG_ROW_MAJOR, FixpipeConfig.CFG_NZ
_ARCH35_QUANT = (QuantMode_t.QF322HIF8_PRE, QuantMode_t.QF322FP8_PRE)
_OUT_DTYPE = {QuantMode_t.NoQuant: float32, QuantMode_t.F322F16: float16, QuantMode_t.F322BF16: bfloat16}


@dataclass(slots=True)
class FixpipeParamsV220:
    """nSize columns x mSize rows of L0C. srcStride: distance of Z columns in L0C in 16-element rows.
    dstStride: NZ2ND row pitch in elements; NZ: distance of C0-wide columns in 32-byte blocks."""

    nSize: int = 0
    mSize: int = 0
    srcStride: int = 0
    dstStride: int = 0
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    deqScalar: int = 0
    ndNum: int = 1
    srcNdStride: int = 0
    dstNdStride: int = 0
    reluEn: bool = False
    unitFlag: int = 0
    isChannelSplit: bool = False


@dataclass(slots=True)
class DataCopyCO12DstParams:
    """The DataCopy(L0C -> GM) form the convolution kernels use; nz2ndEn=False writes NZ."""

    nSize: int = 0
    mSize: int = 0
    dstStride: int = 0
    srcStride: int = 0
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    reluPre: int = 0
    channelSplit: bool = False
    nz2ndEn: bool = False


@dataclass(frozen=True, slots=True)
class QuantParams:
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    deqScalar: int = 0


@dataclass(slots=True)
class FixpipeParams:
    """The older Fixpipe struct (FixpipeParams<T>, kernel_utils_struct_dma_params.h), NZ output only here:
    cburstNum bursts of 16 columns, each burstLen 32-byte blocks of the fp32 source (burstLen / 2 rows); srcStride
    the gap between bursts in L0C in 256-element fractals, dstStride the gap between bursts in GM in 32-byte
    blocks. Fixpipe turns it into the V220 fields as asc-devkit's dav_c220 FixpipeInfoParams does."""

    cburstNum: int = 0
    burstLen: int = 0
    srcStride: int = 0
    dstStride: int = 0
    quantParams: QuantParams = QuantParams()
    reluEn: bool = False
    unitFlag: int = 0


FixpipeOperands = operands_type(
    "FixpipeOperands", "sbuf s0 s_pitch s_nd dbuf d0 d_nd shape strides out n1 m_size n_size nd_num relu nz2nd split "
    "elems nbytes",
    "nd_num blocks (s_nd bytes apart in L0C, d_nd elements apart in GM) of n1 Z columns (s_pitch bytes apart) of "
    "m_size x n_size fp32 values from sbuf at s0, converted to `out` (ReLU first when set) and written to dbuf at d0 "
    "as the (shape, byte strides) view: ND rows (nz2nd), NZ columns, or 8-wide columns (split); elems values, nbytes "
    "written.")


def _fixpipe_cost(ops, model) -> float:
    """A fixed overhead, then the elements through the conversion unit or the bytes to GM, the slower."""
    rates = model.rates
    return rates.fixpipe_overhead + max(ops.elems / rates.fixpipe_elems, ops.nbytes / model.gm_write_rate)


def _fixpipe_execute(rec) -> None:
    """Each of ndNum L0C blocks: the mSize x nSize fp32 values (optionally ReLU), rounded to the output dtype
    (nearest even), written as ND rows (NZ2ND), as NZ columns, or as 8-wide NZ columns (channel split); added
    to GM instead under SetAtomicAdd (the record's atomic register)."""
    (sbuf, s0, s_pitch, s_nd, dbuf, d0, d_nd, shape, strides, out, n1, m_size, n_size, nd_num, relu, nz2nd,
     split, _, _) = rec.args
    for t in range(nd_num):
        values = sbuf.strided(s0 + t * s_nd, (n1, m_size, 16), (s_pitch, 64, 4), float32)
        if relu:
            values = np.maximum(values, 0)
        converted = values.astype(out)
        d = dbuf.strided(d0 + t * d_nd * out.itemsize, shape, strides, out)
        if nz2nd:
            store(rec, d, converted.transpose(1, 0, 2).reshape(m_size, n1 * 16)[:, :n_size])
        elif split:  # each 16-wide Z column becomes two 8-wide ones
            halves = converted.reshape(n1, m_size, 2, 8).transpose(0, 2, 1, 3).reshape(n1 * 2, m_size, 8)
            store(rec, d, halves[:shape[0]])
        else:
            store(rec, d, converted)


FIXPIPE = define("Fixpipe", FIX, kind=Kind.COMPUTE, operands=FixpipeOperands, cost=_fixpipe_cost,
                 execute=_fixpipe_execute, params=FixpipeParamsV220,
                 doc="L0C -> GM with conversion (F322F16, F322BF16, NoQuant), NZ2ND, NZ or channel split.")


def fixpipe_v220(dst, src, params: FixpipeParamsV220 | FixpipeParams, config: FixpipeConfig = CFG_ROW_MAJOR) -> None:
    """Fixpipe with the A2/A3 parameter structs (the `Fixpipe` overload in isa/__init__.py picks it)."""
    if isinstance(params, FixpipeParams):
        _fixpipe_v1(dst, src, params)
        return
    nz2nd = config == CFG_ROW_MAJOR
    _fixpipe(dst, src, params.nSize, params.mSize, params.srcStride, params.dstStride, params.quantPre,
             params.reluEn, params.isChannelSplit, nz2nd, params,
             (params.ndNum, params.srcNdStride, params.dstNdStride) if nz2nd else (1, 0, 0))


def _fixpipe_v1(dst, src, p: FixpipeParams) -> None:
    """FixpipeInfoParams: m = burstLen * 32 B / 4 B / 16 rows; the L0C column pitch is the gap (srcStride * 16
    rows) plus the rounded-up rows; the GM pitch is the gap plus the burst's length in the output dtype."""
    core = current_core()
    for name, value, hi in (("cburstNum", p.cburstNum, 4095 // 16), ("burstLen", p.burstLen, 65535)):
        check_range(core, "Fixpipe", FIX, name, value, 0, hi)
    out = _OUT_DTYPE.get(p.quantParams.quantPre, float32)
    rows = p.burstLen * 32 // 4 // 16
    src_stride = p.srcStride * 16 + -(-rows // 16) * 16
    dst_stride = p.dstStride + p.burstLen * out.itemsize // 4
    _fixpipe(dst, src, p.cburstNum * 16, rows, src_stride, dst_stride, p.quantParams.quantPre, p.reluEn, False,
             False, p, (1, 0, 0))


def copy_l0c_to_gm(dst, src, params: DataCopyCO12DstParams) -> None:
    _fixpipe(dst, src, params.nSize, params.mSize, params.srcStride, params.dstStride, params.quantPre,
             bool(params.reluPre), params.channelSplit, params.nz2ndEn, params, (1, 0, 0))


def _fixpipe(dst, src, n_size, m_size, src_stride, dst_stride, quant, relu, split, nz2nd, params, nd):
    core = current_core()
    name = "Fixpipe"
    nd_num, src_nd_stride, dst_nd_stride = nd
    expect_position(core, name, FIX, src, ("L0C",), "src")
    expect_position(core, name, FIX, dst, ("GM",), "dst")
    for field, value, hi in (("nSize", n_size, 4095), ("mSize", m_size, 8192 if nz2nd else 65535),
                             ("srcStride", src_stride, 65535), ("dstStride", dst_stride, 2**32 - 1),
                             ("ndNum", nd_num, 65535), ("srcNdStride", src_nd_stride, 512),
                             ("dstNdStride", dst_nd_stride, 65535)):
        check_range(core, name, FIX, field, value, 0, hi)
    if src.dtype != float32:
        raise core.fault(ParameterOutOfRange(f"src must be float32 L0C data, got {src.dtype}"), name, FIX)
    out = _OUT_DTYPE.get(quant)
    if out is None:
        where = " (it exists on arch 3510 only, with FixpipeParamsArch3510)" if quant in _ARCH35_QUANT else ""
        raise core.fault(ParameterOutOfRange(f"quantPre={quant} is not modelled{where}"), name, FIX)
    if dst.dtype != out:
        raise core.fault(ParameterOutOfRange(f"quantPre={quant.value} writes {out} but dst is {dst.dtype}"),
                         name, FIX)
    if split and (out != float32 or nz2nd):
        raise core.fault(ParameterOutOfRange("isChannelSplit needs a float32 NZ output"), name, FIX)
    col_unit = 8 if split else 16
    if not nz2nd and n_size % col_unit:
        raise core.fault(ParameterOutOfRange(f"nSize={n_size} must be a multiple of {col_unit} for NZ output"),
                         name, FIX)
    check_aligned(core, name, FIX, src, core.platform.alignments.L0C, "src")
    if not nz2nd:
        check_aligned(core, name, FIX, dst, 32, "dst (NZ)")
    registers = atomic_register(core, name, FIX, out)
    if n_size == 0 or m_size == 0 or nd_num == 0:
        core.issue(FIXPIPE, FIX, params, registers=registers)
        return
    if dst_stride == 0:
        raise core.fault(ParameterOutOfRange("dstStride=0 would write every row on top of the previous one"),
                         name, FIX)
    n1 = -(-n_size // 16)
    if src_stride * 16 < m_size and n1 > 1:
        raise core.fault(ParameterOutOfRange(
            f"srcStride={src_stride} rows is shorter than mSize={m_size}: Z columns would overlap"), name, FIX)
    s_pitch = src_stride * 16 * 4  # bytes between Z columns in L0C
    s_nd, d_nd = src_nd_stride * 1024, dst_nd_stride  # units: 1 KB of L0C; dst elements
    osize = out.itemsize
    if nz2nd:  # dst[r * dstStride + c]
        shape, strides = (m_size, n_size), (dst_stride * osize, osize)
        d_elems = (m_size - 1) * dst_stride + n_size
    else:  # C0-wide columns dstStride 32-byte blocks apart, each [mSize][C0]
        c0 = 8 if split else 16
        shape, strides = (n_size // c0, m_size, c0), (dst_stride * 32, c0 * osize, osize)
        d_elems = ((shape[0] - 1) * dst_stride * 32) // osize + m_size * c0
    s_bytes = (n1 - 1) * s_pitch + m_size * 64
    s_span = (nd_num - 1) * s_nd + s_bytes
    d_span = ((nd_num - 1) * d_nd + d_elems) * osize
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address

    elems = nd_num * m_size * n_size
    kind = True if registers[0][1] is None else ATOMIC_WRITE  # an atomic add also reads GM, as one access
    reads = ((sbuf, s0, s0 + s_span),) if kind is True else ((sbuf, s0, s0 + s_span), (dbuf, d0, d0 + d_span))
    core.issue(FIXPIPE, FIX, params, reads, ((dbuf, d0, d0 + d_span),),
               FixpipeOperands(sbuf, s0, s_pitch, s_nd, dbuf, d0, d_nd, shape, strides, out, n1, m_size, n_size,
                               nd_num, relu, nz2nd, split, elems, elems * osize), "L0C->GM", elems * osize, registers,
               footprint=tuple((dbuf, d0 + t * d_nd * osize, (*shape, osize), (*strides, 1), kind)
                               for t in range(nd_num)))
