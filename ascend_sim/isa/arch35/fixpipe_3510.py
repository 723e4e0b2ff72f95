"""PIPE_FIX on the Ascend 950 (arch 3510): Fixpipe with FixpipeParamsArch3510. L0C -> GM as ND (NZ2ND,
CFG_ROW_MAJOR), DN (NZ2DN, CFG_COLUMN_MAJOR) or NZ (CFG_NZ), dstStride in elements; L0C -> UB with the same
layouts (CFG_ROW_MAJOR_UB, CFG_COLUMN_MAJOR_UB, CFG_NZ_UB); conversion NoQuant, F322F16, F322BF16,
QF322HIF8_PRE (round half away from zero) and QF322FP8_PRE, the last two scaled by deqScalar.

Sources: asc-devkit 82b89a15 docs/zh/.../矩阵计算的搬出/Fixpipe（L0C到GM数据搬运）.md and Fixpipe（L0C到UB数据搬运）.md
(table 3: fields, ranges and units; the quant modes; "the scale is used with a 10-bit mantissa": its low 13 bits
are cleared; 950 saturation), 矩阵搬出关键特性说明/NZ2DN.md (the pseudo code of the DN walk), L0C-Buffer到UB双目标模式.md,
include/basic_api/kernel_struct_fixpipe.h (FixpipeParamsArch3510, FixpipeConfig with isToUB, CO2Layout) and
impl/basic_api/utils/kernel_utils_struct_dma_params.h (Nz2NdParams, Nz2DnParams for 3510).

Element (m, n) of L0C matrix t is read at src + t * srcNdStride (srcNzMatrixStride) * 16 + (n // 16) * srcStride * 16
+ m * 16 * srcNzC0Stride + n % 16 (fp32 elements; srcNzC0Stride is 1 outside NZ2DN) and written at
  ND: dst + t * dstNdStride + m * dstStride + n;   DN: dst + t * dstDnMatrixStride + n * dstStride + m;
  NZ: dst + (n // 16) * dstStride + m * 16 + n % 16.
Own rules, flagged: nSize need not be a multiple of 16 for ND / DN output (table 3 says it must; the NZ2DN pseudo
code and the dx kernel's nSize = baseUseN write partial column blocks); the scale multiplies in fp32 before the one
rounding; an 8-bit result saturates as the CTRL register says when the Fixpipe issues (CTRL[48], CTRL[50]: at
the reset value NaN -> 0 and overflow -> +-max; SetCtrlSpr(48, 48, 1) keeps inf / NaN; ctrl.float_saturation, the
value read recorded as the "ctrl" register); the 16-bit conversions round to nearest even without saturation, as
the A2 Fixpipe here does. Not modelled (a fault says so): the dual-destination modes of
L0C -> UB (dualDstCtl 1 and 2, which need both vector cores' UB), channel split, the pre-ReLU/clip modes, NZ output of
8-bit types.
"""
from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

import numpy as np

from ascend_sim.isa.arch35.common import eight_bit_saturation, require_arch35, to_output_dtype
from ascend_sim.isa.atomic import ATOMIC_WRITE, atomic_register, store
from ascend_sim.isa.common import check_aligned, check_fields, current_core, expect_position
from ascend_sim.isa.fixpipe import QuantMode_t
from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define, operands_type

FIX = Pipe.FIX


class CO2Layout(Enum):
    NZ = 0
    ROW_MAJOR = 1  # NZ2ND
    COLUMN_MAJOR = 2  # NZ2DN


@dataclass(frozen=True, slots=True)
class FixpipeConfigArch3510:
    """FixpipeConfig{format, isToUB} of the 3510 (the A2 FixpipeConfig members CFG_ROW_MAJOR / CFG_NZ map to it)."""

    format: CO2Layout
    isToUB: bool = False


CFG_COLUMN_MAJOR = FixpipeConfigArch3510(CO2Layout.COLUMN_MAJOR)
CFG_ROW_MAJOR_UB = FixpipeConfigArch3510(CO2Layout.ROW_MAJOR, True)
CFG_NZ_UB = FixpipeConfigArch3510(CO2Layout.NZ, True)
CFG_COLUMN_MAJOR_UB = FixpipeConfigArch3510(CO2Layout.COLUMN_MAJOR, True)


@dataclass(slots=True)
class Nz2NdParams:
    """ndNum NZ matrices srcNdStride C0_SIZE (16 fp32) apart in L0C, dstNdStride elements apart in dst."""

    ndNum: int = 1
    srcNdStride: int = 0
    dstNdStride: int = 0


@dataclass(slots=True)
class Nz2DnParams:
    """dnNum NZ matrices srcNzMatrixStride C0_SIZE apart, dstDnMatrixStride elements apart; srcNzC0Stride: C0_SIZE
    between the rows of an NZ fractal (1 for a plain NZ matrix)."""

    dnNum: int = 1
    srcNzMatrixStride: int = 0
    dstDnMatrixStride: int = 0
    srcNzC0Stride: int = 0


@dataclass(slots=True)
class FixpipeParamsArch3510:
    """nSize x mSize of L0C (srcStride: C0_SIZE between its 16-column blocks) to dst (dstStride: elements per ND
    row, per DN column, or between NZ column blocks). `params` is the layout's Nz2NdParams / Nz2DnParams (the
    C++ template argument picks it; None takes the default of the layout)."""

    nSize: int = 0
    mSize: int = 0
    srcStride: int = 0
    dstStride: int = 0
    quantPre: QuantMode_t = QuantMode_t.NoQuant
    deqScalar: int = 0
    reluEn: bool = False
    unitFlag: int = 0
    dualDstCtl: int = 0
    subBlockId: bool = False
    params: Nz2NdParams | Nz2DnParams | None = None
    isChannelSplit: bool = False
    preReluMode: int = 0
    preClipReluMode: int = 0
    reluScalar: int = 0
    vectorRelu: int = 0


_OUT = {QuantMode_t.NoQuant: float32, QuantMode_t.F322F16: float16, QuantMode_t.F322BF16: bfloat16,
        QuantMode_t.QF322HIF8_PRE: hifloat8, QuantMode_t.QF322FP8_PRE: float8_e4m3fn}
_SCALED = (QuantMode_t.QF322HIF8_PRE, QuantMode_t.QF322FP8_PRE)
_RANGES = {"nSize": (0, 4095), "mSize": (0, 65535), "srcStride": (0, 65535), "dstStride": (1, 2**32 - 1),
           "unitFlag": (0, 3), "dualDstCtl": (0, 2)}
_ND_RANGES = {"ndNum": (0, 65535), "srcNdStride": (0, 65535), "dstNdStride": (0, 2**32 - 1)}
_DN_RANGES = {"dnNum": (0, 65535), "srcNzMatrixStride": (0, 65535), "dstDnMatrixStride": (0, 2**32 - 1),
              "srcNzC0Stride": (1, 65535)}
_LAYOUT = {"CFG_ROW_MAJOR": CO2Layout.ROW_MAJOR, "CFG_NZ": CO2Layout.NZ}


def quant_scale(deq_scalar: int) -> float:
    """The fp32 scale in deqScalar's low 32 bits, with the 10-bit mantissa the hardware uses (low 13 bits clear)."""
    return struct.unpack("<f", struct.pack("<I", (int(deq_scalar) & 0xFFFFFFFF) & ~0x1FFF))[0]


@lru_cache(maxsize=256)
def _index_maps(layout, m, n, src_stride, c0_stride, count, src_matrix, dst_stride, dst_matrix):
    """Flat fp32 source and output-element destination index of every element, in (t, m, n) order."""
    t = np.arange(count).reshape(-1, 1, 1)
    r = np.arange(m).reshape(1, -1, 1)
    c = np.arange(n).reshape(1, 1, -1)
    src = t * src_matrix * 16 + (c // 16) * src_stride * 16 + r * 16 * c0_stride + c % 16
    if layout is CO2Layout.ROW_MAJOR:
        dst = t * dst_matrix + r * dst_stride + c
    elif layout is CO2Layout.COLUMN_MAJOR:
        dst = t * dst_matrix + c * dst_stride + r
    else:
        dst = t * dst_matrix + (c // 16) * dst_stride + r * 16 + c % 16
    src, dst = np.broadcast_arrays(src, dst)
    return src.reshape(-1), dst.reshape(-1)


def conversion_rate(out: np.dtype, layout: CO2Layout, c0_stride: int) -> int:
    """Elements per cycle through the Fixpipe: asc-devkit docs/zh/api/附录/Cube指令理论性能汇总.md table 8 (3510,
    L0C -> L1 / UB): 32 for fp32 out, 64 for 16- and 8-bit out; a quarter of that for NZ2DN with srcNzC0Stride > 1.
    The table has no L0C -> GM rows: GM takes the same figures (modelling choice)."""
    rate = 32 if out.itemsize == 4 else 64
    return rate // 4 if layout is CO2Layout.COLUMN_MAJOR and c0_stride > 1 else rate


Fixpipe3510Operands = operands_type(
    "Fixpipe3510Operands", "sbuf s0 s_span dbuf d0 d_span out src dst relu scale saturation rate to_gm elems nbytes",
    "fp32 elements src (indices into sbuf[s0, s0 + s_span)) to `out` elements dst (indices into dbuf from d0, "
    "d_span of them), ReLU and scaled when set; saturation: the 8-bit conversion's (saturate, nan_to_zero) as "
    "CTRL was when it issued; rate: elements per cycle of the conversion; to_gm: into GM (else "
    "UB); elems values, nbytes written.")


def _cost(ops, model) -> float:
    """The fixed Fixpipe overhead (the A2 modelling choice), then the elements at the conversion rate or, into GM,
    the bytes at the GM write rate, the slower."""
    gm = ops.nbytes / model.gm_write_rate if ops.to_gm else 0.0
    return model.rates.fixpipe_overhead + max(ops.elems / ops.rate, gm)


def _execute(rec) -> None:
    """Each element: ReLU if asked, times the scale of the QF322*_PRE modes, converted once to the output type,
    written (or atomically added, into GM under SetAtomicAdd) at its destination."""
    sbuf, s0, s_span, dbuf, d0, d_span, out, src, dst, relu, scale, saturation, _, to_gm, _, _ = rec.args
    values = sbuf.view(float32, s0, s_span)[src]
    if relu:
        values = np.maximum(values, np.float32(0))
    if scale is not None:
        values = values * np.float32(scale)
    converted = to_output_dtype(values, out, saturation)
    target = dbuf.view(out, d0, d_span)
    if to_gm and rec.registers[0][1] is not None:
        current = target[dst]
        store(rec, current, converted)
        target[dst] = current
    else:
        target[dst] = converted


FIXPIPE_3510 = define("Fixpipe(Arch3510)", FIX, kind=Kind.COMPUTE, operands=Fixpipe3510Operands, cost=_cost,
                      execute=_execute, params=FixpipeParamsArch3510,
                      doc="L0C -> GM / UB (arch 3510): NZ2ND, NZ2DN or NZ, dstStride in elements, 8-bit quant.")


def _layout_params(core, name, layout, p):
    """(count, source matrix stride, destination matrix stride, srcNzC0Stride) of the layout's params."""
    sub = p.params
    if layout is CO2Layout.COLUMN_MAJOR:
        sub = Nz2DnParams() if sub is None else sub
        if not isinstance(sub, Nz2DnParams):
            raise core.fault(ParameterOutOfRange(f"params is {type(sub).__name__}; NZ2DN takes Nz2DnParams"), name,
                             FIX)
        check_fields(core, name, FIX, sub, _DN_RANGES)
        return sub.dnNum, sub.srcNzMatrixStride, sub.dstDnMatrixStride, sub.srcNzC0Stride
    if layout is CO2Layout.ROW_MAJOR:
        sub = Nz2NdParams() if sub is None else sub
        if not isinstance(sub, Nz2NdParams):
            raise core.fault(ParameterOutOfRange(f"params is {type(sub).__name__}; NZ2ND takes Nz2NdParams"), name,
                             FIX)
        check_fields(core, name, FIX, sub, _ND_RANGES)
        if sub.ndNum > 1 and sub.dstNdStride == 0:
            raise core.fault(ParameterOutOfRange("dstNdStride=0 with ndNum > 1: must be in [1, 2^32-1]"), name, FIX)
        return sub.ndNum, sub.srcNdStride, sub.dstNdStride, 1
    return 1, 0, 0, 1


def fixpipe_arch35(dst, src, params: FixpipeParamsArch3510, config) -> None:
    if not isinstance(params, FixpipeParamsArch3510):
        raise TypeError(f"Fixpipe: params of type {type(params).__name__} is not FixpipeParamsV220, FixpipeParams "
                        "or FixpipeParamsArch3510")
    core = current_core()
    name = "Fixpipe(Arch3510)"
    require_arch35(core, name, FIX, "FixpipeParamsArch3510")
    if not isinstance(config, FixpipeConfigArch3510):
        layout = _LAYOUT.get(getattr(config, "name", None))
        if layout is None:
            raise core.fault(ParameterOutOfRange(f"config={config!r} is not a FixpipeConfig"), name, FIX)
        config = FixpipeConfigArch3510(layout)
    layout, to_ub = config.format, config.isToUB
    p = params
    expect_position(core, name, FIX, src, ("L0C",), "src")
    expect_position(core, name, FIX, dst, ("UB",) if to_ub else ("GM",), "dst")
    check_fields(core, name, FIX, p, _RANGES)
    for field_name in ("preReluMode", "preClipReluMode", "isChannelSplit"):
        if getattr(p, field_name):
            raise core.fault(ParameterOutOfRange(f"{field_name}={getattr(p, field_name)} is not modelled"), name, FIX)
    if to_ub and p.dualDstCtl:
        raise core.fault(ParameterOutOfRange(
            f"dualDstCtl={p.dualDstCtl}: the dual-destination modes (both vector cores' UB) are not modelled"),
            name, FIX)
    count, src_matrix, dst_matrix, c0_stride = _layout_params(core, name, layout, p)
    if p.unitFlag == 1:
        raise core.fault(ParameterOutOfRange("unitFlag=1 is not a mode (0, 2 or 3)"), name, FIX)
    if p.unitFlag and layout is CO2Layout.COLUMN_MAJOR and c0_stride != 1:
        raise core.fault(ParameterOutOfRange(
            f"unitFlag={p.unitFlag} with NZ2DN and srcNzC0Stride={c0_stride}: not allowed (only with 1)"), name, FIX)
    if src.dtype != float32:
        raise core.fault(ParameterOutOfRange(f"src must be float32 L0C data, got {src.dtype}"), name, FIX)
    out = _OUT.get(p.quantPre)
    if out is None:
        raise core.fault(ParameterOutOfRange(f"quantPre={p.quantPre} is not modelled"), name, FIX)
    if dst.dtype != out:
        raise core.fault(ParameterOutOfRange(f"quantPre={p.quantPre.value} writes {out} but dst is {dst.dtype}"),
                         name, FIX)
    if layout is CO2Layout.NZ and (p.nSize % 16 or out.itemsize == 1):
        raise core.fault(ParameterOutOfRange(
            f"NZ output needs nSize (={p.nSize}) a multiple of 16 and a 16- or 32-bit type (got {out})"), name, FIX)
    scale = None
    if p.quantPre in _SCALED:
        scale = quant_scale(p.deqScalar)
        if not np.isfinite(scale) or (scale != 0 and abs(scale) < np.finfo(np.float32).tiny):
            raise core.fault(ParameterOutOfRange(f"deqScalar={p.deqScalar:#x}: the scale may not be inf, NaN or "
                                                 "denormal"), name, FIX)
    check_aligned(core, name, FIX, src, 64, "src")
    # [own rule, CONFLICT] the L0C->GM page asks 32 B for a DN destination, but the arch35 dx kernel Fixpipes NZ2DN
    # tiles to element offsets of NCDHW y (curDinIdx * Hi*Wi + curMIdx * baseM, any parity): DN takes ND's 1 byte.
    if to_ub or layout is CO2Layout.NZ:
        check_aligned(core, name, FIX, dst, 32, "dst")
    registers = () if to_ub else atomic_register(core, name, FIX, out)
    snap = dataclasses.replace(p, params=None if p.params is None else dataclasses.replace(p.params))
    m, n = p.mSize, p.nSize
    if m == 0 or n == 0 or count == 0:
        core.issue(FIXPIPE_3510, FIX, snap, registers=registers)
        return
    if p.srcStride * 16 < m and n > 16:
        raise core.fault(ParameterOutOfRange(
            f"srcStride={p.srcStride} (C0_SIZE) is shorter than mSize={m}: the 16-column blocks would overlap"),
            name, FIX)
    src_idx, dst_idx = _index_maps(layout, m, n, p.srcStride, c0_stride, count, src_matrix, p.dstStride,
                                   dst_matrix)
    if np.unique(dst_idx).size != dst_idx.size:
        raise core.fault(ParameterOutOfRange(
            f"dstStride={p.dstStride} (and the matrix strides) write two elements to one place: the target "
            "addresses may not overlap"), name, FIX)
    saturation, ctrl = eight_bit_saturation(core, name, FIX, out)  # CTRL as it is when the Fixpipe issues
    registers += ctrl
    osize = out.itemsize
    s_span, d_span = int(src_idx.max()) + 1, int(dst_idx.max()) + 1
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address
    elems = count * m * n
    to_gm = not to_ub
    atomic = to_gm and registers[0][1] is not None
    reads = ((sbuf, s0, s0 + s_span * 4), (dbuf, d0, d0 + d_span * osize)) if atomic else ((sbuf, s0, s0 + s_span * 4),)
    footprint = None
    if to_gm:
        kind = ATOMIC_WRITE if atomic else True
        walk = {CO2Layout.ROW_MAJOR: ((m, n * osize), (p.dstStride * osize, 1)),
                CO2Layout.COLUMN_MAJOR: ((n, m * osize), (p.dstStride * osize, 1)),
                CO2Layout.NZ: ((n // 16, m * 16 * osize), (p.dstStride * osize, 1))}[layout]
        footprint = tuple((dbuf, d0 + t * dst_matrix * osize, walk[0], walk[1], kind) for t in range(count))
    core.issue(FIXPIPE_3510, FIX, snap, reads, ((dbuf, d0, d0 + d_span * osize),),
               Fixpipe3510Operands(sbuf, s0, s_span, dbuf, d0, d_span, out, src_idx, dst_idx, p.reluEn, scale,
                                   saturation, conversion_rate(out, layout, c0_stride), to_gm, elems, elems * osize),
               "L0C->GM" if to_gm else "L0C->UB", elems * osize, registers, footprint=footprint)
