"""PIPE_FIX: Fixpipe L0C -> GM with on-the-fly conversion (F322F16, F322BF16, NoQuant), NZ2ND or NZ output."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..dtypes import bfloat16, float16, float32
from ..faults import ParameterOutOfRange
from ..pipes import Pipe
from .common import check_aligned, check_fields, current_core, expect_position

FIX = Pipe.FIX


class QuantMode_t(Enum):
    NoQuant = "NoQuant"
    F322F16 = "F322F16"
    F322BF16 = "F322BF16"


class FixpipeConfig(Enum):
    CFG_ROW_MAJOR = "CFG_ROW_MAJOR"  # NZ -> ND
    CFG_NZ = "CFG_NZ"


CFG_ROW_MAJOR, CFG_NZ = FixpipeConfig.CFG_ROW_MAJOR, FixpipeConfig.CFG_NZ
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


def Fixpipe(dst, src, params: FixpipeParamsV220, config: FixpipeConfig = CFG_ROW_MAJOR) -> None:
    _fixpipe(dst, src, params.nSize, params.mSize, params.srcStride, params.dstStride, params.quantPre,
             params.reluEn, params.isChannelSplit, config == CFG_ROW_MAJOR, params, params.ndNum)


def copy_l0c_to_gm(dst, src, params: DataCopyCO12DstParams) -> None:
    _fixpipe(dst, src, params.nSize, params.mSize, params.srcStride, params.dstStride, params.quantPre,
             bool(params.reluPre), params.channelSplit, params.nz2ndEn, params, 1)


def _fixpipe(dst, src, n_size, m_size, src_stride, dst_stride, quant, relu, split, nz2nd, params, nd_num):
    core = current_core()
    name = "Fixpipe"
    expect_position(core, name, FIX, src, ("L0C",), "src")
    expect_position(core, name, FIX, dst, ("GM",), "dst")
    check_fields(core, name, FIX, params, {"nSize": (0, 4095), "mSize": (0, 8192 if nz2nd else 65535)})
    for field, value in (("srcStride", src_stride), ("dstStride", dst_stride)):
        if not 0 <= value <= (2**32 - 1):
            raise core.fault(ParameterOutOfRange(f"{field}={value} outside [0, 2^32-1]"), name, FIX)
    if nd_num != 1:
        raise core.fault(ParameterOutOfRange(f"ndNum={nd_num}: batched NZ2ND is not modelled (use 1)"), name, FIX)
    if src.dtype != float32:
        raise core.fault(ParameterOutOfRange(f"src must be float32 L0C data, got {src.dtype}"), name, FIX)
    out = _OUT_DTYPE.get(quant)
    if out is None:
        raise core.fault(ParameterOutOfRange(f"quantPre={quant} is not modelled"), name, FIX)
    if dst.dtype != out:
        raise core.fault(ParameterOutOfRange(f"quantPre={quant.value} writes {out} but dst is {dst.dtype}"),
                         name, FIX)
    if split and (out != float32 or nz2nd):
        raise core.fault(ParameterOutOfRange("isChannelSplit needs a float32 NZ output"), name, FIX)
    col_unit = 8 if split else 16
    if n_size % col_unit:
        raise core.fault(ParameterOutOfRange(f"nSize={n_size} must be a multiple of {col_unit}"), name, FIX)
    check_aligned(core, name, FIX, src, core.platform.alignments.L0C, "src")
    if not nz2nd:
        check_aligned(core, name, FIX, dst, 32, "dst (NZ)")
    if n_size == 0 or m_size == 0:
        core.issue(name, FIX, params, (), (), 0.0)
        return
    n1 = n_size // 16 if not split else -(-n_size // 16)
    if src_stride * 16 < m_size and n1 > 1:
        raise core.fault(ParameterOutOfRange(
            f"srcStride={src_stride} rows is shorter than mSize={m_size}: Z columns would overlap"), name, FIX)
    s_pitch = src_stride * 16  # elements between Z columns in L0C
    s_elems = (n1 - 1) * s_pitch + m_size * 16
    osize = out.itemsize
    if nz2nd:  # dst[r * dstStride + c]
        shape, strides = (m_size, n_size), (dst_stride * osize, osize)
        d_elems = (m_size - 1) * dst_stride + n_size
    else:  # C0-wide columns dstStride blocks apart, each [mSize][C0]
        c0 = col_unit if out == float32 else 32 // osize
        if out == float32 and not split:
            c0 = 16
        blocks = n_size // c0
        pitch = dst_stride * 32
        shape, strides = (blocks, m_size, c0), (pitch, c0 * osize, osize)
        d_elems = ((blocks - 1) * pitch) // osize + m_size * c0
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address

    def run():
        s = as_strided(sbuf.view(float32, s0, s_elems), shape=(n1, m_size, 16), strides=(s_pitch * 4, 64, 4))
        values = s[:, :, :16] if not split else s
        if relu:
            values = np.maximum(values, 0)
        converted = values.astype(out)  # round to nearest even
        d = as_strided(dbuf.view(out, d0, d_elems), shape=shape, strides=strides)
        if nz2nd:
            d[...] = converted.transpose(1, 0, 2).reshape(m_size, n1 * 16)[:, :n_size]
        elif split:
            halves = converted.reshape(n1, m_size, 2, 8).transpose(0, 2, 1, 3).reshape(n1 * 2, m_size, 8)
            d[...] = halves[:shape[0]]
        elif shape[2] == 16:
            d[...] = converted
        else:  # 32-bit C0 = 8 without split cannot happen; 8-bit outputs are not modelled
            raise AssertionError("unreachable")

    elems = m_size * n_size
    nbytes = elems * osize
    rates = core.platform.rates
    cycles = rates.fixpipe_overhead + max(elems / rates.fixpipe_elems, nbytes / core.gm_write_rate)
    core.issue(name, FIX, params, ((sbuf, s0, s0 + s_elems * 4),), ((dbuf, d0, d0 + d_elems * osize),), cycles,
               run, "L0C->GM", nbytes)
