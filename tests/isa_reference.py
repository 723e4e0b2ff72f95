"""Loop-based reference models of the Ascend A2/A3 (arch 2201) cube-side instructions.

These functions are the *specification* the simulator's vectorised instructions are tested against.  They
are written for obviousness, not speed: every element is moved by an explicit index formula inside plain
Python loops, so a reader can check each line against docs/isa.md and the cited Ascend sources.

Conventions (shared by every function here):
* Buffers are 1-D numpy arrays of ELEMENTS (not bytes).  Offsets and results are in elements.
* Every function takes ``dst`` and returns a modified COPY of it; positions the instruction does not write
  keep their old value (tests fill buffers with a sentinel to see exactly what was written).
* Any index that falls outside a buffer raises ``IndexError`` (no silent negative wrap-around).
* A parameter that is out of the documented range, or a combination the hardware does not support,
  raises ``ValueError``.  A parameter value that the documentation calls a NOP returns the copy unchanged.
* Layout names (all fractals are 512 B, C0 = k0 = 32 B / element size):
    ZZ (L0A, A is M x K):  addr(i, j) = ((i//16 * K1 + j//k0) * 16 + i%16) * k0 + j%k0,  K1 = ceil(K/k0)
    ZN (L0B, B is K x N):  addr(i, j) = ((i//k0 * N1 + j//16) * 16 + j%16) * k0 + i%k0,  N1 = ceil(N/16)
    NZ (L0C, C is M x N):  addr(i, j) = ((j//16) * Mpad + i) * 16 + j%16,               Mpad = ceil(M/16)*16
  and the L1 "Nz" layout of an ND matrix R x C (what ND2NZ produces with dstNzNStride = 1):
    addr(r, c) = (c//C0) * dstNzC0Stride * C0 + r * C0 + c%C0.

Sources (cannmirror/asc-devkit, docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/...; commit 0da921b91aeb):
  GMToL1高维切分数据搬运（DataCopy）.md, GMToL1连续数据搬运（DataCopy）.md, GMToL1随路转换-ND2NZ搬运（DataCopy）.md,
  辅助配置接口/Fill.md (InitConstValue), LoadData_2D.md, LoadData_3D.md, 辅助配置接口/SetFmatrix.md,
  辅助配置接口/SetLoadDataRepeat.md, Mmad计算/Mmad.md (+ 关键特性说明/GEMV.md, K-方向对齐约束.md, HF32.md),
  矩阵计算的搬出/L0C到GM数据搬运（Fixpipe）.md (+ 关键特性说明/NZ2ND.md, NZ2NZ.md, F32-Channel-Split.md);
  the official golden scripts examples/01_simd_cpp_api/03_basic_api/03_matrix_compute/load_data_l12l0/scripts/
  {load2d,load3d,mmad}.py and the sample README of the same folder; include/basic_api/kernel_struct_mm.h and
  kernel_struct_data_copy.h.  See docs/isa.md for the full write-up and the open points.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT16 = np.dtype(np.float16)
FLOAT32 = np.dtype(np.float32)

BLOCK_BYTES = 32  # one DataBlock
FRACTAL_BYTES = 512  # one L0A/L0B fractal
CUBE = 16  # cube M0 = N0 = 16

_OPERAND_DTYPES = {"float16": FLOAT16, "bfloat16": BFLOAT16, "float32": FLOAT32}


# --------------------------------------------------------------------------------------------------------
# small helpers
# --------------------------------------------------------------------------------------------------------
def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _ceil_align(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def _c0(elem_bytes: int) -> int:
    if elem_bytes not in (1, 2, 4):
        raise ValueError(f"elem_bytes={elem_bytes} is not supported (1, 2 or 4)")
    return BLOCK_BYTES // elem_bytes


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    if not (lo <= int(value) <= hi):
        raise ValueError(f"{name}={value} is outside [{lo}, {hi}]")


def _read(buf: np.ndarray, index: int):
    if index < 0 or index >= buf.shape[0]:
        raise IndexError(f"read at element {index} is outside the buffer of {buf.shape[0]} elements")
    return buf[index]


def _write(buf: np.ndarray, index: int, value) -> None:
    if index < 0 or index >= buf.shape[0]:
        raise IndexError(f"write at element {index} is outside the buffer of {buf.shape[0]} elements")
    buf[index] = value


def _copy(dst: np.ndarray) -> np.ndarray:
    out = np.array(dst, copy=True)
    if out.ndim != 1:
        raise ValueError("buffers must be 1-D arrays of elements")
    return out


# --------------------------------------------------------------------------------------------------------
# GM -> L1: DataCopy (DataCopyParams and contiguous count form), ND2NZ, InitConstValue
# --------------------------------------------------------------------------------------------------------
def ref_datacopy(dst, src, dst_offset, src_offset, blockCount, blockLen, srcStride, dstStride, elem_bytes):
    """DataCopy GM->L1 with DataCopyParams {blockCount, blockLen, srcStride(=srcGap), dstStride(=dstGap)}.

    Source: GMToL1高维切分数据搬运（DataCopy）.md and kernel_struct_data_copy.h (srcStride/dstStride are
    deprecated union aliases of srcGap/dstGap).  Lengths and gaps are in 32-byte DataBlocks; a gap is the
    distance from the END of one block to the START of the next.  blockCount in [0, 4095], blockLen, gaps in
    [0, 65535]; blockCount == 0 or blockLen == 0 is a NOP.

        for b in range(blockCount):
            src block b starts at src_offset + b * (blockLen + srcStride) * C0
            dst block b starts at dst_offset + b * (blockLen + dstStride) * C0
            blockLen * C0 consecutive elements are copied          (C0 = 32 / elem_bytes)
    """
    _check_range("blockCount", blockCount, 0, 4095)
    _check_range("blockLen", blockLen, 0, 65535)
    _check_range("srcStride", srcStride, 0, 65535)
    _check_range("dstStride", dstStride, 0, 65535)
    out = _copy(dst)
    if blockCount == 0 or blockLen == 0:
        return out
    c0 = _c0(elem_bytes)
    for b in range(blockCount):
        s0 = src_offset + b * (blockLen + srcStride) * c0
        d0 = dst_offset + b * (blockLen + dstStride) * c0
        for e in range(blockLen * c0):
            _write(out, d0 + e, _read(src, s0 + e))
    return out


def ref_datacopy_count(dst, src, dst_offset, src_offset, count, elem_bytes):
    """DataCopy GM->L1, contiguous form DataCopy(dst, src, count).

    Source: GMToL1连续数据搬运（DataCopy）.md: "count * sizeof(T) must be 32-byte aligned; if not, the amount
    moved is rounded DOWN to a multiple of 32 bytes".  So floor(count*elem_bytes/32)*32/elem_bytes elements
    are copied; count rounding to 0 copies nothing.
    """
    out = _copy(dst)
    c0 = _c0(elem_bytes)
    n = (count // c0) * c0
    for e in range(n):
        _write(out, dst_offset + e, _read(src, src_offset + e))
    return out


def ref_nd2nz(dst, src, dst_offset, src_offset, ndNum, nValue, dValue, srcNdMatrixStride, srcDValue,
              dstNzC0Stride, dstNzNStride, dstNzMatrixStride, elem_bytes):
    """DataCopy GM->L1 with Nd2NzParams (on-the-fly ND -> NZ), A2/A3 form.

    Source: GMToL1随路转换-ND2NZ搬运（DataCopy）.md, kernel_struct_data_copy.h, load_data_l12l0 README §5.
    Units: srcNdMatrixStride, srcDValue, dstNzMatrixStride in ELEMENTS; dstNzC0Stride, dstNzNStride in C0 units
    (32 bytes).  ndNum/nValue/dValue == 0 is a NOP.  Each row of dValue elements is zero-padded up to a multiple
    of C0 ("补0对齐到32字节"); rows beyond nValue are NOT written.

        for t in range(ndNum), r in range(nValue), c in range(ceil(dValue/C0)*C0):
            d = dst_offset + t*dstNzMatrixStride + (c//C0)*dstNzC0Stride*C0 + r*dstNzNStride*C0 + c%C0
            dst[d] = src[src_offset + t*srcNdMatrixStride + r*srcDValue + c]   if c < dValue else 0
    """
    _check_range("ndNum", ndNum, 0, 4095)
    _check_range("nValue", nValue, 0, 16384)
    _check_range("dValue", dValue, 0, 65535)
    _check_range("srcNdMatrixStride", srcNdMatrixStride, 0, 65535)
    _check_range("srcDValue", srcDValue, 1, 65535)
    _check_range("dstNzC0Stride", dstNzC0Stride, 1, 16384)
    _check_range("dstNzNStride", dstNzNStride, 1, 16384)
    _check_range("dstNzMatrixStride", dstNzMatrixStride, 0, 16384)
    out = _copy(dst)
    if ndNum == 0 or nValue == 0 or dValue == 0:
        return out
    c0 = _c0(elem_bytes)
    d_pad = _ceil_align(dValue, c0)
    zero = np.zeros(1, dtype=out.dtype)[0]
    for t in range(ndNum):
        s_base = src_offset + t * srcNdMatrixStride
        d_base = dst_offset + t * dstNzMatrixStride
        for r in range(nValue):
            for c in range(d_pad):
                d = d_base + (c // c0) * dstNzC0Stride * c0 + r * dstNzNStride * c0 + c % c0
                if c < dValue:
                    _write(out, d, _read(src, s_base + r * srcDValue + c))
                else:
                    _write(out, d, zero)
    return out


def ref_init_const_value(dst, dst_offset, repeatTimes, blockNum, dstGap, initValue, position, elem_bytes):
    """InitConstValue / Fill with InitConstValueParams {repeatTimes, blockNum, dstGap, initValue}.

    Source: 辅助配置接口/Fill.md, kernel_struct_mm.h.  position "L1": blocks of 32 B (PIPE_MTE2);
    "L0A"/"L0B": blocks of 512 B (PIPE_MTE1).  dstGap is end-to-start in the same block unit.  repeatTimes,
    blockNum, dstGap in [0, 32767]; repeatTimes == 0 or blockNum == 0 is a NOP.

        for r in range(repeatTimes):
            fill blockNum*B elements starting at dst_offset + r*(blockNum + dstGap)*B   (B = block elements)
    """
    _check_range("repeatTimes", repeatTimes, 0, 32767)
    _check_range("blockNum", blockNum, 0, 32767)
    _check_range("dstGap", dstGap, 0, 32767)
    if position == "L1":
        block = BLOCK_BYTES // elem_bytes
    elif position in ("L0A", "L0B"):
        block = FRACTAL_BYTES // elem_bytes
    else:
        raise ValueError(f"position={position!r}: InitConstValue writes L1, L0A or L0B only")
    out = _copy(dst)
    if repeatTimes == 0 or blockNum == 0:
        return out
    for r in range(repeatTimes):
        start = dst_offset + r * (blockNum + dstGap) * block
        for e in range(blockNum * block):
            _write(out, start + e, initValue)
    return out


# --------------------------------------------------------------------------------------------------------
# L1 -> L0A / L0B: LoadData 2D
# --------------------------------------------------------------------------------------------------------
def ref_load2d(dst, src, dst_offset, src_offset, startIndex, repeatTimes, srcStride, dstGap, ifTranspose,
               elem_bytes, addrMode=0):
    """LoadData with LoadData2DParams {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode}.

    Source: LoadData_2D.md and the official golden scripts/load2d.py.  Moves whole 512-byte fractals
    (16 rows x C0 elements, row-major).  startIndex, srcStride: fractal units (512 B), srcStride is
    START-to-start (0 = re-read the same fractal); dstGap: END-to-start in fractals (0 = contiguous);
    repeatTimes in [0, 255], 0 = NOP.  addrMode 1 (decrement) is documented for GM->L1 only; it is accepted
    here for completeness.  ifTranspose transposes every fractal and is legal only for b16 (16 x 16 fractal):

        for i in range(repeatTimes):
            s = src_offset + (startIndex ± i*srcStride) * F           (F = 512 / elem_bytes elements)
            d = dst_offset + i * (dstGap + 1) * F
            no transpose:  dst[d + e] = src[s + e]                    for e in range(F)
            transpose:     dst[d + 16*r + c] = src[s + 16*c + r]      for r, c in range(16)
    """
    _check_range("startIndex", startIndex, 0, 65535)
    _check_range("repeatTimes", repeatTimes, 0, 255)
    _check_range("srcStride", srcStride, 0, 65535)
    _check_range("dstGap", dstGap, 0, 65535)
    if addrMode not in (0, 1):
        raise ValueError(f"addrMode={addrMode} must be 0 (increment) or 1 (decrement)")
    if ifTranspose and elem_bytes != 2:
        raise ValueError("LoadData 2D ifTranspose supports b16 only (A2/A3); use LoadDataWithTranspose or "
                         "LoadData 3Dv2 for b32")
    out = _copy(dst)
    if repeatTimes == 0:
        return out
    frac = FRACTAL_BYTES // elem_bytes
    sign = 1 if addrMode == 0 else -1
    for i in range(repeatTimes):
        s = src_offset + (startIndex + sign * srcStride * i) * frac
        d = dst_offset + (dstGap + 1) * frac * i
        if not ifTranspose:
            for e in range(frac):
                _write(out, d + e, _read(src, s + e))
        else:
            for r in range(CUBE):
                for c in range(CUBE):
                    _write(out, d + CUBE * r + c, _read(src, s + CUBE * c + r))
    return out


def ref_load_data_with_transpose(dst, src, dst_offset, src_offset, startIndex, repeatTimes, srcStride, dstGap,
                                 dstFracGap, elem_bytes):
    """LoadDataWithTranspose with LoadData2dTransposeParams (A2/A3), b16 and b32 only.

    Source: LoadDataWithTranspose.md and the golden load_data_l12l0/scripts/load_data_with_transpose.py. A square
    is 16 x 16 elements: for b16 one 512-byte fractal, for b32 two consecutive 16 x 8 fractals (1 KB). srcStride
    and startIndex count squares; dstGap (end-to-start) and dstFracGap count 512-byte fractals.

        for i in range(repeatTimes):
            s = src_offset + (startIndex + i*srcStride) * 256          (one square = 256 elements)
            d = dst_offset + i * (dstGap + 1) * F                      (F = 512 / elem_bytes)
            b16: dst[d + 16*r + c] = src[s + 16*c + r]
            b32: Q[r][c] = src[s + 128*(c // 8) + 8*r + c % 8]         (the two 16 x 8 fractals side by side)
                 dst[d + (dstFracGap + 1)*F*(c // 8) + 8*r + c % 8] = Q[c][r]   for r, c in range(16)
    """
    _check_range("startIndex", startIndex, 0, 65535)
    _check_range("repeatTimes", repeatTimes, 0, 255)
    _check_range("srcStride", srcStride, 0, 65535)
    _check_range("dstGap", dstGap, 0, 65535)
    _check_range("dstFracGap", dstFracGap, 0, 65535)
    if elem_bytes not in (2, 4):
        raise ValueError("only the b16 and b32 forms are modelled")
    out = _copy(dst)
    frac = FRACTAL_BYTES // elem_bytes
    for i in range(repeatTimes):
        s = src_offset + (startIndex + i * srcStride) * CUBE * CUBE
        d = dst_offset + (dstGap + 1) * frac * i
        for r in range(CUBE):
            for c in range(CUBE):
                if elem_bytes == 2:
                    _write(out, d + CUBE * r + c, _read(src, s + CUBE * c + r))
                else:
                    q_cr = _read(src, s + 128 * (r // 8) + 8 * c + r % 8)  # Q[c][r]
                    _write(out, d + (dstFracGap + 1) * frac * (c // 8) + 8 * r + c % 8, q_cr)
    return out


# --------------------------------------------------------------------------------------------------------
# L1 -> L0A / L0B: LoadData 3Dv2 (img2col)
# --------------------------------------------------------------------------------------------------------
def load3d_out_hw(l1H, l1W, padList, strideW, strideH, filterW, filterH, dilationFilterW, dilationFilterH):
    """(Hout, Wout) of the img2col window grid: ((l1 + padA + padB - ((f-1)*dil + 1)) // stride) + 1."""
    pad_l, pad_r, pad_t, pad_b = padList
    w_out = (l1W + pad_l + pad_r - ((filterW - 1) * dilationFilterW + 1)) // strideW + 1
    h_out = (l1H + pad_t + pad_b - ((filterH - 1) * dilationFilterH + 1)) // strideH + 1
    return h_out, w_out


def ref_img2col_value(src, src_offset, m_idx, k_idx, l1H, l1W, padList, c0, strideW, strideH, filterW,
                      filterH, dilationFilterW, dilationFilterH, padValue, w_out):
    """One element of the (virtual) img2col matrix X[m][k] of an NC1HWC0 fmap in L1.

    m = ho * Wout + wo (output pixel, row-major); k = ((c1 * filterH + kh) * filterW + kw) * C0 + c0
    (the [C1][Hk*Wk][C0] order of load3d.py::nc1hwc0_im2col).  Source pixel h = ho*strideH - padTop +
    kh*dilationFilterH, w = wo*strideW - padLeft + kw*dilationFilterW; outside [0,l1H) x [0,l1W) -> padValue.
    """
    pad_l, _pad_r, pad_t, _pad_b = padList
    ho, wo = divmod(m_idx, w_out)
    blk, cc = divmod(k_idx, c0)
    c1, khw = divmod(blk, filterH * filterW)
    kh, kw = divmod(khw, filterW)
    h = ho * strideH - pad_t + kh * dilationFilterH
    w = wo * strideW - pad_l + kw * dilationFilterW
    if 0 <= h < l1H and 0 <= w < l1W:
        return _read(src, src_offset + ((c1 * l1H + h) * l1W + w) * c0 + cc)
    return padValue


def ref_load3dv2(dst, src, dst_offset, src_offset, l1H, l1W, padList, channelSize, kExtension, mExtension,
                 kStartPt, mStartPt, strideW, strideH, filterW, filterH, dilationFilterW, dilationFilterH,
                 enTranspose, padValue, target, elem_bytes, filterSizeW=False, filterSizeH=False):
    """LoadData with LoadData3DParamsV2 (img2col) from an NC1HWC0 fmap in L1 into L0A or L0B (A2/A3).

    Source: LoadData_3D.md, the official golden scripts/load3d.py (move_to_l0a / move_to_l0b /
    _process_b32_transpose), the load_data_l12l0 README §6, and the conv kernel's LoadToB2Pro (hicann/ops-nn
    conv3d_backprop_input_v2/op_kernel/arch22/conv3d_backprop_input_impl/conv_bp_sub_func.h).

    ``src`` holds the fmap at src_offset as [C1][l1H][l1W][C0], C1 = ceil(channelSize/C0).  Let X be the img2col
    matrix (ref_img2col_value) and Blk = X[mStartPt : mStartPt+mExtension, kStartPt : kStartPt+kExtension]
    (mExtension x kExtension; row index mm, column index kk below).  What lands in dst (offsets relative to
    dst_offset; C0 = 32/elem_bytes):

    * target "L0A", enTranspose False: A = Blk in ZZ (16 x C0 fractals), K1 = kExtension/C0:
          dst[((mm//16 * K1 + kk//C0) * 16 + mm%16) * C0 + kk%C0] = Blk[mm][kk]
    * target "L0A", enTranspose True (b16/b32 only): A = Blk^T (kExtension x mExtension) in ZZ with
      16-row x C0-column fractals; rows padded to 16, padding rows NOT written; a fractal row holds the
      columns padded to 16 (MF = ceil(mExtension/16)*16/C0 fractals: for b32 an odd number of 8-wide
      fractals still takes an even slot count, the L0A row stride Mmad's kDirectionAlign reads), padding
      columns NOT written:
          dst[((kk//16 * MF + mm//C0) * 16 + kk%16) * C0 + mm%C0] = Blk[mm][kk]
    * target "L0B" ("always transposes"; enTranspose ignored; b16/b32 only): the K x N matrix B = Blk itself
      (K_mmad = img2col M = mExtension rows, N_mmad = img2col K = kExtension columns) in ZN, i.e. every
      C0-row x 16-column fractal is stored transposed ([n0][k0]) compared with L1/L0A; N1 = ceil(kExtension/16);
      columns kk >= kExtension of the last N fractal are NOT written:
          dst[((mm//C0 * N1 + kk//16) * 16 + kk%16) * C0 + mm%C0] = Blk[mm][kk]
      For fp32 (C0 = 8) one instruction with mExtension = 16 therefore fills TWO 8-row K fractal rows, each
      N1*16*8 elements long.

    NOP: any of l1H, l1W, channelSize, kExtension, mExtension == 0, or filterW == 0 and not filterSizeW (same
    for H).  filterSizeW/H add 256 to filterW/H.  Restrictions of this reference (see docs/isa.md open points):
    channelSize must be a multiple of C0; mExtension a multiple of 16 (of 8 for b32 into L0B or with
    enTranspose); kExtension and kStartPt multiples of C0;
    kStartPt + kExtension <= C1*Hk*Wk*C0.  Rows past the window grid (m >= Hout*Wout) are allowed and follow the
    same coordinate formula (ho = m // Wout >= Hout, normally giving padValue): the dx fp32 weight path
    (LoadToB2Pro) reads up to 8 such rows into the spare fractal row it reserves past K.
    """
    out = _copy(dst)
    if len(padList) != 4:
        raise ValueError("padList must be [left, right, top, bottom]")
    for i, p in enumerate(padList):
        _check_range(f"padList[{i}]", p, 0, 255)
    for name, value, hi in (("l1H", l1H, 32767), ("l1W", l1W, 32767), ("channelSize", channelSize, 65535),
                            ("kExtension", kExtension, 65535), ("mExtension", mExtension, 65535),
                            ("kStartPt", kStartPt, 65535), ("mStartPt", mStartPt, 32767),
                            ("strideW", strideW, 63), ("strideH", strideH, 63), ("filterW", filterW, 255),
                            ("filterH", filterH, 255), ("dilationFilterW", dilationFilterW, 255),
                            ("dilationFilterH", dilationFilterH, 255)):
        _check_range(name, value, 0, hi)
    if target not in ("L0A", "L0B"):
        raise ValueError(f"target={target!r} must be 'L0A' or 'L0B'")
    if l1H == 0 or l1W == 0 or channelSize == 0 or kExtension == 0 or mExtension == 0:
        return out
    if (filterW == 0 and not filterSizeW) or (filterH == 0 and not filterSizeH):
        return out
    f_w = filterW + (256 if filterSizeW else 0)
    f_h = filterH + (256 if filterSizeH else 0)
    if strideW == 0 or strideH == 0 or dilationFilterW == 0 or dilationFilterH == 0:
        raise ValueError("strides and dilations of 0 are not modelled (no documented meaning)")
    c0 = _c0(elem_bytes)
    if target == "L0B" and elem_bytes == 1:
        raise ValueError("L1->L0B LoadData 3Dv2 does not support b8/b4 on A2/A3")
    if target == "L0A" and enTranspose and elem_bytes == 1:
        raise ValueError("L1->L0A LoadData 3Dv2 with enTranspose does not support b8 on A2/A3")
    if channelSize % c0:
        raise ValueError(f"channelSize={channelSize} not a multiple of C0={c0}: the small-channel modes "
                         "(4, 8, 16N+4, ...) are not modelled by this reference")
    # M granularity: 16 rows (one ZZ fractal) into L0A; for b32 into L0B or transposed into L0A the M axis is
    # cut into 8-wide fractals, so a multiple of 8 is enough there (LoadData_3D.md: "b32类型无要求").
    m_unit = 8 if (elem_bytes == 4 and (target == "L0B" or enTranspose)) else CUBE
    if mExtension % m_unit:
        raise ValueError(f"mExtension={mExtension} must be a multiple of {m_unit} in this reference")
    if kExtension % c0 or kStartPt % c0:
        raise ValueError(f"kExtension={kExtension} and kStartPt={kStartPt} must be multiples of C0={c0}")
    h_out, w_out = load3d_out_hw(l1H, l1W, padList, strideW, strideH, f_w, f_h, dilationFilterW,
                                 dilationFilterH)
    if h_out <= 0 or w_out <= 0:
        raise ValueError(f"the filter does not fit the padded fmap (Hout={h_out}, Wout={w_out})")
    c1 = _ceil_div(channelSize, c0)
    k_total = c1 * f_h * f_w * c0
    if kStartPt + kExtension > k_total:
        raise ValueError(f"kStartPt+kExtension={kStartPt + kExtension} exceeds C1*Hk*Wk*C0={k_total}")

    def value(mm, kk):
        return ref_img2col_value(src, src_offset, mStartPt + mm, kStartPt + kk, l1H, l1W, padList, c0,
                                 strideW, strideH, f_w, f_h, dilationFilterW, dilationFilterH, padValue, w_out)

    if target == "L0A" and not enTranspose:
        k1 = kExtension // c0
        for mm in range(mExtension):
            for kk in range(kExtension):
                d = ((mm // CUBE * k1 + kk // c0) * CUBE + mm % CUBE) * c0 + kk % c0
                _write(out, dst_offset + d, value(mm, kk))
    elif target == "L0A":  # enTranspose: A = Blk^T in ZZ, fractal 16 (rows = kk) x C0 (cols = mm)
        col_fracs = _ceil_div(mExtension, CUBE) * (CUBE // c0)
        for mm in range(mExtension):
            for kk in range(kExtension):
                d = ((kk // CUBE * col_fracs + mm // c0) * CUBE + kk % CUBE) * c0 + mm % c0
                _write(out, dst_offset + d, value(mm, kk))
    else:  # L0B: B = Blk in ZN, fractal C0 (rows = mm) x 16 (cols = kk), stored [kk%16][mm%C0]
        n1 = _ceil_div(kExtension, CUBE)
        for mm in range(mExtension):
            for kk in range(kExtension):
                d = ((mm // c0 * n1 + kk // CUBE) * CUBE + kk % CUBE) * c0 + mm % c0
                _write(out, dst_offset + d, value(mm, kk))
    return out


# --------------------------------------------------------------------------------------------------------
# Mmad
# --------------------------------------------------------------------------------------------------------
def round_fp32_mantissa(x: float, mantissa_bits: int, mode: str = "NEAREST_EVEN") -> float:
    """Round one fp32 value to `mantissa_bits` explicit mantissa bits (fp32 range): the HF32 conversion.

    Source: Mmad计算/关键特性说明/HF32.md, SetHF32TransMode.md (NEAREST_EVEN / NEAREST_ZERO).  Modes here:
    "NEAREST_EVEN" (ties to even) and "NEAREST_AWAY" (ties away from zero in magnitude, i.e. the
    `(((bits >> 11) + 1) >> 1) << 12` of Huawei's golden scripts, which is also how this project reads
    NEAREST_ZERO, see docs/isa.md).  Inf and NaN pass through unchanged.
    """
    if not 0 < mantissa_bits <= 23:
        raise ValueError("mantissa_bits must be in 1..23")
    bits = int(np.array([x], dtype=np.float32).view(np.uint32)[0])
    if (bits & 0x7F800000) == 0x7F800000:
        return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])
    drop = 23 - mantissa_bits
    if drop == 0:
        return float(np.float32(x))
    sign = bits & 0x80000000
    mag = bits & 0x7FFFFFFF
    half = 1 << (drop - 1)
    mask = (1 << drop) - 1
    if mode == "NEAREST_EVEN":
        lsb = (mag >> drop) & 1
        mag = (mag + half - 1 + lsb) & ~mask
    elif mode == "NEAREST_AWAY":
        mag = (mag + half) & ~mask
    else:
        raise ValueError(f"mode={mode!r} must be 'NEAREST_EVEN' or 'NEAREST_AWAY'")
    return float(np.array([sign | mag], dtype=np.uint32).view(np.float32)[0])


def ref_mmad(c, a, b, m, n, k, cmatrixInitVal, dtype_name, hf32=False, hf32_mantissa_bits=11,
             kDirectionAlign=False, cmatrixSource=False, bias=None, hf32_trans_mode="NEAREST_EVEN",
             a_offset=0, b_offset=0, c_offset=0):
    """Mmad C = A x B (+ C) with MmadParams {m, n, k, cmatrixInitVal, cmatrixSource, kDirectionAlign}.

    Source: Mmad计算/Mmad.md, 关键特性说明/{GEMV,K-方向对齐约束,HF32}.md, scripts/mmad.py, load_data_l12l0
    README §7.  ``a`` = L0A content (ZZ), ``b`` = L0B content (ZN), both of dtype_name ("float16", "bfloat16",
    "float32"); ``c`` = L0C content (NZ, float32).  k0 = 16 (b16) or 8 (fp32).  m, n, k in [0, 4095], any 0 is
    a NOP.  The cube reads ceil(m/16)*ceil(k/k0) fractals of L0A and ceil(k/k0)*ceil(n/16) fractals of L0B
    starting at the operand start; it works on whole 16 x 16 C fractals (M1 = ceil(m/16), N1 = ceil(n/16)):

        A(i, kk) = a[((i//16)*K1s + kk//k0)*16*k0 + (i%16)*k0 + kk%k0]   K1s = ceil(k/k0), or 2*ceil(k/16)
                                                                        for fp32 with kDirectionAlign
        B(kk, j) = b[((kk//k0)*N1 + j//16)*16*k0 + (j%16)*k0 + kk%k0]
        C(i, j) lives at c[((j//16)*M1*16 + i)*16 + j%16]
        for i < M1*16, j < N1*16:  C(i,j) = init(i,j) + sum_{kk < k} A(i,kk) * B(kk,j)
        init = 0 (cmatrixInitVal), else bias[j] (cmatrixSource, bias = 1 x N from BT), else the old C(i,j)

    K is masked exactly at k (data in the K padding of the last fractal never contributes); rows i >= m and
    columns j >= n inside the touched fractals ARE computed from whatever L0A/L0B hold there (the docs leave
    them unspecified: compare only [0,m) x [0,n)).  GEMV (m == 1): L0A is read as a plain vector
    A(0, kk) = a[kk]; only row 0 of each C fractal is written.  Products are exact in float64 (fp16/bf16/fp32
    operands); the sum is accumulated in float64 and rounded once to fp32.  Hardware accumulates in fp32, so
    compare with |sim - ref| <= (k + 2) * 2**-24 * sum_kk |A(i,kk) B(kk,j)| (+ 2**-24 |init|), or use small
    integer operands for exact equality.  hf32=True (fp32 only): every A and B element is first rounded by
    round_fp32_mantissa(x, hf32_mantissa_bits, hf32_trans_mode) (11 bits on A2/A3, 10 on Ascend 950).
    """
    for name, value in (("m", m), ("n", n), ("k", k)):
        _check_range(name, value, 0, 4095)
    if dtype_name not in _OPERAND_DTYPES:
        raise ValueError(f"dtype_name={dtype_name!r} must be one of {sorted(_OPERAND_DTYPES)}")
    if hf32 and dtype_name != "float32":
        raise ValueError("HF32 applies to float32 operands only")
    if kDirectionAlign and dtype_name != "float32":
        raise ValueError("kDirectionAlign applies to float32 operands only")
    out = _copy(c)
    if out.dtype != FLOAT32:
        raise ValueError("L0C content must be float32 for fp16/bf16/fp32 operands")
    if m == 0 or n == 0 or k == 0:
        return out
    k0 = 8 if dtype_name == "float32" else 16
    m1, n1 = _ceil_div(m, CUBE), _ceil_div(n, CUBE)
    k1_stride = 2 * _ceil_div(k, 16) if (kDirectionAlign and dtype_name == "float32") else _ceil_div(k, k0)
    gemv = m == 1

    def operand(buf, index):
        v = float(_read(buf, index))
        if hf32:
            v = round_fp32_mantissa(v, hf32_mantissa_bits, hf32_trans_mode)
        return v

    def a_at(i, kk):
        if gemv:
            return operand(a, a_offset + kk)
        return operand(a, a_offset + ((i // CUBE) * k1_stride + kk // k0) * CUBE * k0 + (i % CUBE) * k0
                       + kk % k0)

    def b_at(kk, j):
        return operand(b, b_offset + ((kk // k0) * n1 + j // CUBE) * CUBE * k0 + (j % CUBE) * k0 + kk % k0)

    rows = 1 if gemv else m1 * CUBE
    for i in range(rows):
        for j in range(n1 * CUBE):
            c_index = c_offset + ((j // CUBE) * m1 * CUBE + i) * CUBE + j % CUBE
            if cmatrixInitVal:
                acc = 0.0
            elif cmatrixSource:
                if bias is None:
                    raise ValueError("cmatrixSource=True needs the bias row (BT buffer content)")
                acc = float(_read(np.asarray(bias), j))
            else:
                acc = float(_read(out, c_index))
            for kk in range(k):
                acc += a_at(i, kk) * b_at(kk, j)
            _write(out, c_index, np.float32(acc))
    return out


def mmad_tolerance(a_matrix, b_matrix, init=None):
    """Element-wise bound |fp32-accumulated - ref_mmad| <= (k+2) * 2^-24 * (|A| @ |B|) + 2^-24 * |init|."""
    a64 = np.abs(np.asarray(a_matrix, dtype=np.float64))
    b64 = np.abs(np.asarray(b_matrix, dtype=np.float64))
    k = a64.shape[1]
    bound = (k + 2) * 2.0 ** -24 * (a64 @ b64)
    if init is not None:
        bound = bound + 2.0 ** -24 * np.abs(np.asarray(init, dtype=np.float64))
    return bound


# --------------------------------------------------------------------------------------------------------
# Fixpipe L0C -> GM (FixpipeParamsV220 / DataCopyCO12DstParams)
# --------------------------------------------------------------------------------------------------------
_QUANT_OUT = {"NoQuant": FLOAT32, "F322F16": FLOAT16, "F322BF16": BFLOAT16}
_FP_MAX = {"F322F16": 65504.0, "F322BF16": float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)}


def _convert_out(x: np.float32, quantPre: str, saturate: bool):
    if quantPre == "NoQuant":
        return np.float32(x)
    target = _QUANT_OUT[quantPre]
    if saturate and math.isnan(float(x)):
        return np.array([0.0], dtype=target)[0]
    with np.errstate(over="ignore"):
        y = np.array([x], dtype=np.float32).astype(target)[0]  # IEEE round-to-nearest-even (CAST_RINT)
    if saturate and math.isinf(float(y)):
        return np.array([math.copysign(_FP_MAX[quantPre], float(x))], dtype=target)[0]
    return y


def ref_fixpipe(dst, src, dst_offset, src_offset, nSize, mSize, srcStride, dstStride, quantPre, isChannelSplit,
                nz2nd, dst_dtype, reluEn=False, ndNum=1, srcNdStride=0, dstNdStride=0, saturate=False,
                atomic_add=False):
    """Fixpipe L0C -> GM with FixpipeParamsV220 (same fields as DataCopyCO12DstParams), fp32 L0C source.

    Source: 矩阵计算的搬出/L0C到GM数据搬运（Fixpipe）.md, L0C到GM数据搬运（DataCopy）.md, 关键特性说明/NZ2ND.md,
    NZ2NZ.md, F32-Channel-Split.md, the fixpipe_l0c2gm sample (scenarios 1, 2, 7) and impl/basic_api/dav_c220/
    kernel_operator_fixpipe_v2_impl.h.  ``src`` is L0C NZ content; source element (i, j) (i < mSize, j < nSize)
    is src[src_offset + (j//16)*srcStride*16 + i*16 + j%16] (srcStride in C0_Size = 16 fp32 units, normally
    ceil(mSize/16)*16).  quantPre "NoQuant" (dst float32), "F322F16" (float16), "F322BF16" (bfloat16): both casts
    are CAST_RINT = round half to even; saturate=True models CTRL[48]=0 (inf -> +-MAX, NaN -> 0).  reluEn
    applies max(0, x) before the cast.  mSize/nSize == 0 (or ndNum == 0 with nz2nd) is a NOP.

    * nz2nd (CFG_ROW_MAJOR): dstStride = dst row pitch in ELEMENTS; ndNum matrices, source t at
      src_offset + t*srcNdStride*256 (unit 16*C0_Size = 1 KB = 256 fp32), destination t at
      dst_offset + t*dstNdStride (elements):   dst[d_t + i*dstStride + j] = cvt(S_t(i, j))
    * NZ (CFG_NZ), no split: dstStride = start-to-start distance of adjacent 16-column Z blocks in 32-BYTE
      units; each output row of a block is 16 elements:  dst[dst_offset + (j//16)*dstStride*(32/dst_bytes)
      + i*16 + j%16] = cvt(S(i, j)); nSize must be a multiple of 16.
    * NZ with isChannelSplit (fp32 -> fp32 only): every 16-wide block is written as two 8-wide Z blocks;
      dstStride = distance of adjacent 8-wide blocks in 32-byte units (= 8 fp32):
          dst[dst_offset + (j//8)*dstStride*8 + i*8 + j%8] = S(i, j);   nSize must be a multiple of 8.
    Rows i >= mSize and columns j >= nSize are never written.
    atomic_add=True (SetAtomicAdd<T> set, 基础API/原子操作/SetAtomicAdd.md): every written element becomes
    dst + converted value instead, rounded once to the dst dtype.
    """
    if quantPre not in _QUANT_OUT:
        raise ValueError(f"quantPre={quantPre!r}: modelled values are {sorted(_QUANT_OUT)}")
    dst_dt = np.dtype(dst_dtype)
    if dst_dt != _QUANT_OUT[quantPre]:
        raise ValueError(f"quantPre={quantPre} produces {_QUANT_OUT[quantPre]}, not {dst_dt}")
    out = _copy(dst)
    if out.dtype != dst_dt:
        raise ValueError(f"dst buffer dtype {out.dtype} differs from dst_dtype {dst_dt}")
    if atomic_add:  # the plain result on zeros, and where it writes (a NaN marker pass), added to dst
        values = ref_fixpipe(np.zeros(dst.size, dst_dt), src, dst_offset, src_offset, nSize, mSize, srcStride,
                             dstStride, quantPre, isChannelSplit, nz2nd, dst_dt, reluEn, ndNum, srcNdStride,
                             dstNdStride, saturate)
        marks = ref_fixpipe(np.zeros(dst.size, dst_dt), np.full(src.size, np.nan, np.float32), dst_offset,
                            src_offset, nSize, mSize, srcStride, dstStride, quantPre, isChannelSplit, nz2nd, dst_dt,
                            False, ndNum, srcNdStride, dstNdStride, False)
        for i in range(out.size):
            if math.isnan(float(marks[i])):
                out[i] = np.array([float(out[i]) + float(values[i])], np.float64).astype(dst_dt)[0]
        return out
    _check_range("nSize", nSize, 0, 4095)
    _check_range("mSize", mSize, 0, 8192 if nz2nd else 65535)
    _check_range("srcStride", srcStride, 0, 65535)
    if isChannelSplit and (nz2nd or dst_dt != FLOAT32):
        raise ValueError("channel split needs fp32 -> fp32 NZ output (no NZ2ND)")
    if nSize == 0 or mSize == 0 or (nz2nd and ndNum == 0):
        return out
    if dstStride == 0:
        raise ValueError("dstStride must not be 0")
    if not nz2nd:
        if isChannelSplit and nSize % 8:
            raise ValueError("with channel split nSize must be a multiple of 8")
        if not isChannelSplit and nSize % 16:
            raise ValueError("NZ output needs nSize to be a multiple of 16")
    else:
        _check_range("ndNum", ndNum, 0, 65535)
        _check_range("srcNdStride", srcNdStride, 0, 512)
        _check_range("dstNdStride", dstNdStride, 0, 65535)

    def s_at(base, i, j):
        v = np.float32(_read(src, base + (j // CUBE) * srcStride * CUBE + i * CUBE + j % CUBE))
        if reluEn and v < 0:
            v = np.float32(0.0)
        return v

    if nz2nd:
        for t in range(ndNum):
            s_base = src_offset + t * srcNdStride * CUBE * CUBE
            d_base = dst_offset + t * dstNdStride
            for i in range(mSize):
                for j in range(nSize):
                    _write(out, d_base + i * dstStride + j, _convert_out(s_at(s_base, i, j), quantPre, saturate))
    elif isChannelSplit:
        for i in range(mSize):
            for j in range(nSize):
                _write(out, dst_offset + (j // 8) * dstStride * 8 + i * 8 + j % 8, s_at(src_offset, i, j))
    else:
        blk = BLOCK_BYTES // dst_dt.itemsize
        for i in range(mSize):
            for j in range(nSize):
                _write(out, dst_offset + (j // CUBE) * dstStride * blk + i * CUBE + j % CUBE,
                       _convert_out(s_at(src_offset, i, j), quantPre, saturate))
    return out


# --------------------------------------------------------------------------------------------------------
# layout helpers (explicit index loops, independent of any vectorised code)
# --------------------------------------------------------------------------------------------------------
def make_zz(a_matrix, k0, k1_stride=None):
    """L0A ZZ content of an M x K matrix: 16 x k0 fractals, row-major inside and between fractals.

    Padding (rows up to ceil16(M), columns up to ceil(K/k0)*k0) is zero.  k1_stride overrides the number of
    K fractals per fractal row (e.g. 2*ceil(K/16) for fp32 with kDirectionAlign).
    """
    a_matrix = np.asarray(a_matrix)
    m, k = a_matrix.shape
    m1, k1 = _ceil_div(m, CUBE), _ceil_div(k, k0)
    k1s = k1 if k1_stride is None else k1_stride
    out = np.zeros(m1 * k1s * CUBE * k0, dtype=a_matrix.dtype)
    for i in range(m):
        for j in range(k):
            out[((i // CUBE) * k1s + j // k0) * CUBE * k0 + (i % CUBE) * k0 + j % k0] = a_matrix[i, j]
    return out


def read_zz(flat, m, k, k0, offset=0):
    """Inverse of make_zz: the M x K matrix held in ZZ layout."""
    k1 = _ceil_div(k, k0)
    out = np.zeros((m, k), dtype=np.asarray(flat).dtype)
    for i in range(m):
        for j in range(k):
            out[i, j] = _read(flat, offset + ((i // CUBE) * k1 + j // k0) * CUBE * k0 + (i % CUBE) * k0 + j % k0)
    return out


def make_zn(b_matrix, k0):
    """L0B ZN content of a K x N matrix: k0 x 16 fractals stored column-major inside ([n0][k0]), fractals
    row-major ([k1][n1]).  Padding (rows up to ceil(K/k0)*k0, columns up to ceil16(N)) is zero."""
    b_matrix = np.asarray(b_matrix)
    k, n = b_matrix.shape
    k1, n1 = _ceil_div(k, k0), _ceil_div(n, CUBE)
    out = np.zeros(k1 * n1 * CUBE * k0, dtype=b_matrix.dtype)
    for i in range(k):
        for j in range(n):
            out[((i // k0) * n1 + j // CUBE) * CUBE * k0 + (j % CUBE) * k0 + i % k0] = b_matrix[i, j]
    return out


def read_zn(flat, k, n, k0, offset=0):
    """Inverse of make_zn: the K x N matrix held in ZN layout."""
    n1 = _ceil_div(n, CUBE)
    out = np.zeros((k, n), dtype=np.asarray(flat).dtype)
    for i in range(k):
        for j in range(n):
            out[i, j] = _read(flat, offset + ((i // k0) * n1 + j // CUBE) * CUBE * k0 + (j % CUBE) * k0 + i % k0)
    return out


def make_nz(c_matrix, dtype=np.float32):
    """L0C NZ content of an M x N matrix: [ceil(N/16)][ceil16(M)][16], zero padding."""
    c_matrix = np.asarray(c_matrix)
    m, n = c_matrix.shape
    m_pad, n1 = _ceil_align(m, CUBE), _ceil_div(n, CUBE)
    out = np.zeros(n1 * m_pad * CUBE, dtype=dtype)
    for i in range(m):
        for j in range(n):
            out[((j // CUBE) * m_pad + i) * CUBE + j % CUBE] = c_matrix[i, j]
    return out


def read_nz(c_flat, m, n, offset=0):
    """The M x N matrix held in L0C NZ layout (Z-column stride ceil16(M) rows), as float32."""
    m_pad = _ceil_align(m, CUBE)
    out = np.zeros((m, n), dtype=np.float32)
    for i in range(m):
        for j in range(n):
            out[i, j] = _read(c_flat, offset + ((j // CUBE) * m_pad + i) * CUBE + j % CUBE)
    return out


def make_l1_nz(matrix, c0, rows_pad=None):
    """L1 Nz content of an ND R x C matrix (what ND2NZ gives with dstNzC0Stride = rows_pad, dstNzNStride = 1):
    [ceil(C/c0)][rows_pad][c0], rows_pad defaults to ceil16(R); padding is zero."""
    matrix = np.asarray(matrix)
    r, c = matrix.shape
    rp = _ceil_align(r, CUBE) if rows_pad is None else rows_pad
    out = np.zeros(_ceil_div(c, c0) * rp * c0, dtype=matrix.dtype)
    for i in range(r):
        for j in range(c):
            out[(j // c0) * rp * c0 + i * c0 + j % c0] = matrix[i, j]
    return out


def make_nc1hwc0(x_chw, c0):
    """Flat NC1HWC0 (N = 1) L1 fmap [C1][H][W][C0] of a C x H x W array; channels padded with zeros."""
    x_chw = np.asarray(x_chw)
    c, h, w = x_chw.shape
    c1 = _ceil_div(c, c0)
    out = np.zeros(c1 * h * w * c0, dtype=x_chw.dtype)
    for ch in range(c):
        for y in range(h):
            for x in range(w):
                out[((ch // c0 * h + y) * w + x) * c0 + ch % c0] = x_chw[ch, y, x]
    return out


def img2col_matrix(src, src_offset, l1H, l1W, padList, channelSize, strideW, strideH, filterW, filterH,
                   dilationFilterW, dilationFilterH, padValue, elem_bytes):
    """The whole img2col matrix X (Hout*Wout x C1*Hk*Wk*C0) built element by element (for tests)."""
    c0 = _c0(elem_bytes)
    h_out, w_out = load3d_out_hw(l1H, l1W, padList, strideW, strideH, filterW, filterH, dilationFilterW,
                                 dilationFilterH)
    k_total = _ceil_div(channelSize, c0) * filterH * filterW * c0
    out = np.zeros((h_out * w_out, k_total), dtype=np.asarray(src).dtype)
    for mm in range(h_out * w_out):
        for kk in range(k_total):
            out[mm, kk] = ref_img2col_value(src, src_offset, mm, kk, l1H, l1W, padList, c0, strideW, strideH,
                                            filterW, filterH, dilationFilterW, dilationFilterH, padValue, w_out)
    return out


# --------------------------------------------------------------------------------------------------------
# L1 -> BT: DataCopy into the bias table
# --------------------------------------------------------------------------------------------------------
def ref_copy_l1_to_bt(dst, src, dst_offset, src_offset, blockCount, blockLen, srcStride, dstStride):
    """DataCopy(L1ToBiasTable) with DataCopyParams on A2 (DataCopy L1ToBiasTable page).

    ``src`` is L1 content (half, int32 or float), ``dst`` BT content (int32 or float); offsets in elements.
    blockCount in [0, 4095], blockLen in [0, 65535] in 64-byte units, srcStride in 32-byte DataBlocks, dstStride
    in 64-byte units. Own rule of the simulator (the page leaves it open): blockLen counts source bytes, a half ->
    float copy writes twice as many bytes::

        for i in range(blockCount):
            for e in range(blockLen * 64 // src_bytes):
                dst[dst_offset + i * (blockLen * 64 * ratio + dstStride * 64) // dst_bytes + e] =
                    float(src[src_offset + i * (blockLen * 64 + srcStride * 32) // src_bytes + e])
    """
    _check_range("blockCount", blockCount, 0, 4095)
    _check_range("blockLen", blockLen, 0, 65535)
    _check_range("srcStride", srcStride, 0, 65535)
    _check_range("dstStride", dstStride, 0, 65535)
    out = _copy(dst)
    sb, db = np.asarray(src).dtype.itemsize, out.dtype.itemsize
    n = blockLen * 64 // sb
    for i in range(blockCount):
        s = src_offset + i * (blockLen * 64 + srcStride * 32) // sb
        d = dst_offset + i * (blockLen * 64 * (db // sb) + dstStride * 64) // db
        for e in range(n):
            _write(out, d + e, out.dtype.type(float(_read(src, s + e))))
    return out
