"""Loop-based reference models of the Ascend 950 (arch 3510) instructions, in the style of isa_reference.py:
buffers are 1-D numpy arrays of ELEMENTS, every function returns a modified copy of dst, every element moves by
an explicit index formula, an index outside a buffer raises IndexError and a parameter out of its documented range
raises ValueError.

Sources (mirror-cann/asc-devkit 82b89a15, docs/zh/api/SIMD-API/基础API/矩阵计算（ISASI）/...):
  矩阵计算的搬入/DataCopy（GMToL1随路转换-DN2NZ搬运）.md, .../DataCopy（GMToL1随路转换-ND2NZ搬运）.md,
  矩阵计算的搬入/LoadData_2D_V2.md, 矩阵计算的搬入/LoadDataWithStride.md,
  矩阵搬入辅助配置接口/SetLoadDataRepeatWithStride.md, 矩阵计算的搬出/Fixpipe（L0C到GM数据搬运）.md,
  矩阵搬出关键特性说明/NZ2DN.md (its pseudo code), and include/basic_api/kernel_struct_*.h for the fields.
"""
from __future__ import annotations

import numpy as np

try:
    from tests.isa_reference import (_c0, _ceil_align, _check_range, _copy, _read, _write, load3d_out_hw,
                                     ref_img2col_value)
except ImportError:  # pragma: no cover - when tests/ is on sys.path directly
    from isa_reference import _c0, _ceil_align, _check_range, _copy, _read, _write, load3d_out_hw, ref_img2col_value

B40 = 2**40 - 1


def ref_dn2nz(dst, src, dst_offset, src_offset, dnNum, nValue, dValue, srcDnMatrixStride, srcDValue,
              dstNzC0Stride, dstNzNStride, dstNzMatrixStride, elem_bytes):
    """DataCopy GM->L1 with Dn2NzParams. "DN到NZ的格式转换等价于ND到ZN": the source holds dValue rows of
    srcDValue elements; row d, element n is element (n, d) of an nValue x dValue matrix. dValue is zero-padded up
    to a multiple of C0; rows of the destination beyond nValue are not written.

        for t, n, c in range(dnNum) x range(nValue) x range(ceil(dValue/C0)*C0):
            dst[t*dstNzMatrixStride + (c//C0)*dstNzC0Stride*C0 + n*dstNzNStride*C0 + c%C0]
                = src[t*srcDnMatrixStride + c*srcDValue + n]  if c < dValue else 0
    """
    _check_range("dnNum", dnNum, 0, 4095)
    _check_range("nValue", nValue, 0, 16384)
    _check_range("dValue", dValue, 0, 2**21 - 1)
    _check_range("srcDnMatrixStride", srcDnMatrixStride, 0, B40)
    _check_range("srcDValue", srcDValue, 1, B40)
    _check_range("dstNzC0Stride", dstNzC0Stride, 1, 16384)
    _check_range("dstNzNStride", dstNzNStride, 1, 16384)
    _check_range("dstNzMatrixStride", dstNzMatrixStride, 0, 16384)
    out = _copy(dst)
    if dnNum == 0 or nValue == 0 or dValue == 0:
        return out
    c0 = _c0(elem_bytes)
    zero = np.zeros(1, dtype=out.dtype)[0]
    for t in range(dnNum):
        for n in range(nValue):
            for c in range(_ceil_align(dValue, c0)):
                d = dst_offset + t * dstNzMatrixStride + (c // c0) * dstNzC0Stride * c0 + n * dstNzNStride * c0 + c % c0
                if c < dValue:
                    _write(out, d, _read(src, src_offset + t * srcDnMatrixStride + c * srcDValue + n))
                else:
                    _write(out, d, zero)
    return out


def ref_dn2nz_small_c0(dst, src, dst_offset, src_offset, dnNum, nValue, dValue, srcDnMatrixStride, srcDValue,
                       dstNzMatrixStride, elem_bytes):
    """DataCopy<T, true> GM->L1 with Dn2NzParams, the SmallC0 mode (the DN2NZ page's SmallC0 section): dValue <= 4,
    every one of the nValue rows 4 elements wide, zero-padded from dValue to 4, then the matrix's end zero-padded
    to 32 bytes; dstNzC0Stride and dstNzNStride are not used.

        for t, e in range(dnNum) x range(ceil_align(nValue * 4, C0)):
            n, c = divmod(e, 4)
            dst[t*dstNzMatrixStride + e] = src[t*srcDnMatrixStride + c*srcDValue + n]  if n < nValue and c < dValue
                                           else 0
    """
    _check_range("dValue", dValue, 0, 4)
    out = _copy(dst)
    if dnNum == 0 or nValue == 0 or dValue == 0:
        return out
    zero = np.zeros(1, dtype=out.dtype)[0]
    for t in range(dnNum):
        for e in range(_ceil_align(nValue * 4, _c0(elem_bytes))):
            n, c = divmod(e, 4)
            d = dst_offset + t * dstNzMatrixStride + e
            if n < nValue and c < dValue:
                _write(out, d, _read(src, src_offset + t * srcDnMatrixStride + c * srcDValue + n))
            else:
                _write(out, d, zero)
    return out


def ref_mask_bits(mask_bytes):
    """Reg::LoadAlign<T>(MaskReg, addr), DIST_NORM: 32 bytes, bit j of byte b -> lane 8b + j."""
    return [bool((int(mask_bytes[b]) >> j) & 1) for b in range(32) for j in range(8)]


def ref_load2d_v2(dst, src, dst_offset, src_offset, mStartPosition, kStartPosition, mStep, kStep, srcStride,
                  dstStride, ifTranspose, elem_bytes):
    """LoadData L1 -> L0A/L0B with LoadData2DParamsV2, element by element (LoadData_2D_V2.md).

    Fractal f of src starts at element src_offset + f*F (F = 512 B / elem_bytes elements, a fractal of 16 rows
    of R = F/16 elements). Move fractal (i, j), i < mStep, j < kStep:
        src fractal  s(i, j) = kStartPosition*|srcStride| + mStartPosition + j*srcStride + i
        dst fractal  d(i, j) = j*dstStride + i
    Without transpose: element e of s(i, j) -> element e of d(i, j).
    With transpose (the pair rules of ascend_sim/isa/arch35/load2d_v2.py, derived, not documented as text):
        b16: d(i, j)[c][r] = s(i, j)[r][c]
        b32: kStep even; for j = 2a + t: d(i, j)[row][col] = s(i, 2a + row//8)[8t + col][row % 8]
        b8:  mStep even; for i = 2b + t: d(i, j)[row][col] = s(2b + col//16, j)[col % 16][16t + row]
    """
    _check_range("mStep", mStep, 0, 255)
    _check_range("kStep", kStep, 0, 255)
    _check_range("srcStride", srcStride, -32768, 32767)
    _check_range("dstStride", dstStride, 0, 65535)
    out = _copy(dst)
    if mStep == 0 or kStep == 0:
        return out
    per = 512 // elem_bytes
    cols = per // 16
    if ifTranspose and elem_bytes == 1 and mStep % 2 or ifTranspose and elem_bytes == 4 and kStep % 2:
        raise ValueError("transpose needs an even mStep (b8) or kStep (b32)")

    def s_elem(i, j, r, c):
        return src_offset + (kStartPosition * abs(srcStride) + mStartPosition + j * srcStride + i) * per + r * cols + c

    for j in range(kStep):
        for i in range(mStep):
            d_base = dst_offset + (j * dstStride + i) * per
            for row in range(16):
                for col in range(cols):
                    if not ifTranspose:
                        s = s_elem(i, j, row, col)
                    elif elem_bytes == 2:
                        s = s_elem(i, j, col, row)
                    elif elem_bytes == 4:
                        a, t = divmod(j, 2)
                        s = s_elem(i, 2 * a + row // 8, 8 * t + col, row % 8)
                    else:
                        b, t = divmod(i, 2)
                        s = s_elem(2 * b + col // 16, j, col % 16, 16 * t + row)
                    _write(out, d_base + row * cols + col, _read(src, s))
    return out


def ref_load_data_with_stride(dst, src, dst_offset, src_offset, l1H, l1W, padList, channelSize, kExtension,
                              mExtension, kStartPt, mStartPt, strideW, strideH, filterW, filterH, dilationFilterW,
                              dilationFilterH, padValue, dstStride, target, elem_bytes):
    """LoadDataWithStride (LoadDataWithStride.md + SetLoadDataRepeatWithStride.md): the LoadData 3D img2col window
    Blk[mm][kk] = X[mStartPt + mm][kStartPt + kk] (X: isa_reference.ref_img2col_value), written
        L0A (NZ): dst[((kk//C0)*dstStride + mm//16)*16*C0 + (mm%16)*C0 + kk%C0] = Blk[mm][kk]
        L0B (ZN): dst[((mm//C0)*dstStride + kk//16)*16*C0 + (kk%16)*C0 + mm%C0] = Blk[mm][kk]
    Whole fractals (mExtension a multiple of 16 and kExtension of C0 into L0A; swapped into L0B), except that into
    L0A a window covering the img2col's rightmost column may end inside a fractal: only its kExtension columns
    are written. A channelSize below C0 reads the small-C0 fmap (channelSize elements a pixel, one C1)."""
    c0 = _c0(elem_bytes)
    pixel = channelSize if 0 < channelSize < c0 else c0
    _check_range("dstStride", dstStride, 0, 65535)
    out = _copy(dst)
    _, w_out = load3d_out_hw(l1H, l1W, padList, strideW, strideH, filterW, filterH, dilationFilterW,
                             dilationFilterH)
    for mm in range(mExtension):
        for kk in range(kExtension):
            value = ref_img2col_value(src, src_offset, mStartPt + mm, kStartPt + kk, l1H, l1W, padList, pixel,
                                      strideW, strideH, filterW, filterH, dilationFilterW, dilationFilterH, padValue,
                                      w_out)
            if target == "L0A":
                d = ((kk // c0) * dstStride + mm // 16) * 16 * c0 + (mm % 16) * c0 + kk % c0
            else:
                d = ((mm // c0) * dstStride + kk // 16) * 16 * c0 + (kk % 16) * c0 + mm % c0
            _write(out, dst_offset + d, value)
    return out


def make_l0a_nz(a_matrix, k0):
    """L0A content of an M x K matrix on the 950 (Mmad.md table 1: A is "Nz"): 16 x k0 fractals, row major inside,
    K-block major between them: element (i, kk) at ((kk//k0)*M1 + i//16)*16*k0 + (i%16)*k0 + kk%k0, M1 =
    ceil(M/16). Padding (rows up to 16*M1, columns up to k0*ceil(K/k0)) is zero."""
    a_matrix = np.asarray(a_matrix)
    m, k = a_matrix.shape
    m1, k1 = -(-m // 16), -(-k // k0)
    out = np.zeros(k1 * m1 * 16 * k0, dtype=a_matrix.dtype)
    for i in range(m):
        for kk in range(k):
            out[((kk // k0) * m1 + i // 16) * 16 * k0 + (i % 16) * k0 + kk % k0] = a_matrix[i, kk]
    return out


def ref_mmad_nz(a, b, m, n, k, k0, decode):
    """Mmad on the 950 (Mmad.md table 1): C (m x n) = A . B with A in L0A as NZ and B in L0B as ZN, k0 = 32 B /
    element size, K masked exactly at k. `decode(x)` gives an element's value as a Python float (the 8-bit codes
    decoded by the test). Returns the m x n float64 sum over kk < k of A(i, kk) * B(kk, j), where
        A(i, kk) = a[((kk//k0)*M1 + i//16)*16*k0 + (i%16)*k0 + kk%k0]      M1 = ceil(m/16)
        B(kk, j) = b[((kk//k0)*N1 + j//16)*16*k0 + (j%16)*k0 + kk%k0]      N1 = ceil(n/16)
    The hardware sums in fp32: compare with isa_reference.mmad_tolerance."""
    for name, value in (("m", m), ("n", n), ("k", k)):
        _check_range(name, value, 1, 4095)
    m1, n1 = -(-m // 16), -(-n // 16)
    out = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            acc = 0.0
            for kk in range(k):
                a_index = ((kk // k0) * m1 + i // 16) * 16 * k0 + (i % 16) * k0 + kk % k0
                b_index = ((kk // k0) * n1 + j // 16) * 16 * k0 + (j % 16) * k0 + kk % k0
                acc += decode(_read(a, a_index)) * decode(_read(b, b_index))
            out[i, j] = acc
    return out


def ref_fixpipe_3510(dst, src, dst_offset, src_offset, nSize, mSize, srcStride, dstStride, layout, num,
                     srcMatrixStride, dstMatrixStride, srcNzC0Stride, convert):
    """Fixpipe with FixpipeParamsArch3510 (Fixpipe（L0C到GM数据搬运）.md table 3; NZ2DN.md pseudo code).

    layout "ND" (NZ2ND, Nz2NdParams ndNum/srcNdStride/dstNdStride), "DN" (NZ2DN, Nz2DnParams dnNum/
    srcNzMatrixStride/dstDnMatrixStride/srcNzC0Stride) or "NZ". src is fp32 L0C in elements; C0_SIZE = 16.
        for t < num, m < mSize, n < nSize:
            s = src_offset + t*srcMatrixStride*16 + (n//16)*srcStride*16 + m*16*srcNzC0Stride + n%16
            ND: d = t*dstMatrixStride + m*dstStride + n     DN: d = t*dstMatrixStride + n*dstStride + m
            NZ: d = (n//16)*dstStride + m*16 + n%16
            dst[dst_offset + d] = convert(src[s])
    """
    _check_range("nSize", nSize, 0, 4095)
    _check_range("mSize", mSize, 0, 65535)
    _check_range("srcStride", srcStride, 0, 65535)
    _check_range("dstStride", dstStride, 1, 2**32 - 1)
    out = _copy(dst)
    for t in range(num):
        for m in range(mSize):
            for n in range(nSize):
                s = src_offset + t * srcMatrixStride * 16 + (n // 16) * srcStride * 16 + m * 16 * srcNzC0Stride + n % 16
                if layout == "ND":
                    d = t * dstMatrixStride + m * dstStride + n
                elif layout == "DN":
                    d = t * dstMatrixStride + n * dstStride + m
                else:
                    d = (n // 16) * dstStride + m * 16 + n % 16
                _write(out, dst_offset + d, convert(_read(src, s)))
    return out


def saturate_then_cast(value, dtype, largest):
    """One fp32 value into an 8-bit type with the 950's default saturation: NaN -> 0, |x| > largest -> +-largest,
    then the package's rounding (en_dtypes hifloat8: half away from zero; ml_dtypes e4m3fn: nearest even)."""
    x = float(value)
    if x != x:
        x = 0.0
    x = max(-largest, min(largest, x))
    return np.array([x], np.float32).astype(dtype)[0]


def nearest_8bit(x: float, dtype, ties: str) -> float:
    """x rounded into an 8-bit float type by search over its 256 decoded codes (the packages' decode is checked
    code by code in the dtypes tests; their encoders are not used here): NaN -> 0, beyond the largest finite
    value -> +-largest (the 950's saturation), else the nearest finite value, a tie going away from zero
    (ties="away") or to the code with an even last bit (ties="even")."""
    codes = np.arange(256, dtype=np.uint8)
    values = codes.view(dtype).astype(np.float64)
    finite = np.isfinite(values)
    codes, values = codes[finite], values[finite]
    if x != x:
        return 0.0
    largest = values.max()
    x = min(largest, max(-largest, float(x)))
    distance = np.abs(values - x)
    best = np.flatnonzero(distance == distance.min())
    if len(set(values[best])) == 1:
        return float(values[best[0]])
    if ties == "away":
        return float(values[best][np.argmax(np.abs(values[best]))])
    return float(values[best][codes[best] % 2 == 0][0])


def ref_interleave(src0, src1):
    """Reg::Interleave: dst0 = src0[0], src1[0], src0[1], src1[1], ... over the low halves, dst1 the same over the
    high halves (Interleave.md; the count-form example [1..512], [513..1024] -> [1 513 2 ...], [257 769 258 ...])."""
    n = len(src0)
    dst0, dst1 = [], []
    for i in range(n // 2):
        dst0 += [src0[i], src1[i]]
        dst1 += [src0[n // 2 + i], src1[n // 2 + i]]
    return np.array(dst0, dtype=np.asarray(src0).dtype), np.array(dst1, dtype=np.asarray(src0).dtype)


def ref_gather(ub_elems, base, index, active, dst_dtype):
    """Reg::Gather: lane i = ub_elems[base + index[i]] where active (a b8 source zero-extended into b16), else 0."""
    out = np.zeros(len(index), dst_dtype)
    for i, on in enumerate(active):
        if on:
            value = _read(ub_elems, base + int(index[i]))
            out[i] = int(np.asarray(value).view(np.uint8)) if ub_elems.dtype.itemsize == 1 else value
    return out


def ref_nddma(dst, src, dst_offset, src_offset, loopSrcStride, loopDstStride, loopSize, loopLpSize, loopRpSize,
              constantValue=0, nearest=False):
    """DataCopy GM->UB with NdDmaParams (DataCopy（GMToUB多维数据搬运NDDMA）.md): loop 0 the lowest; in loop d the
    destination index j runs over loopLpSize[d] + loopSize[d] + loopRpSize[d] elements loopDstStride[d] apart; a
    j inside the pads is constantValue (nearest: the source index clamped to the edge), else source element
    (j - loopLpSize[d]) loopSrcStride[d] apart."""
    dim = len(loopSize)
    if not 1 <= dim <= 5:
        raise ValueError(f"dim={dim}")
    for d in range(dim):
        _check_range("loopSize", loopSize[d], 1, 2**20 - 1)
        _check_range("loopDstStride", loopDstStride[d], 0, 2**20 - 1)
        _check_range("loopSrcStride", loopSrcStride[d], 0, B40)
        _check_range("loopLpSize", loopLpSize[d], 0, 255)
        _check_range("loopRpSize", loopRpSize[d], 0, 255)
    out = _copy(dst)
    extents = [loopLpSize[d] + loopSize[d] + loopRpSize[d] for d in range(dim)]
    for flat in range(int(np.prod(extents))):
        js, rest = [], flat
        for d in range(dim):
            js.append(rest % extents[d])
            rest //= extents[d]
        dst_index = dst_offset + sum(js[d] * loopDstStride[d] for d in range(dim))
        inner = [js[d] - loopLpSize[d] for d in range(dim)]
        padded = any(i < 0 or i >= loopSize[d] for d, i in enumerate(inner))
        if padded and not nearest:
            _write(out, dst_index, constantValue)
            continue
        src_index = src_offset + sum(min(max(i, 0), loopSize[d] - 1) * loopSrcStride[d] for d, i in enumerate(inner))
        _write(out, dst_index, _read(src, src_index))
    return out


def ref_ub_to_l1(dst, src, dst_offset, src_offset, blockCount, blockLen, srcGap, dstGap, block_elems):
    """DataCopy UB->L1 with DataCopyParams (DataCopy（UBToL1高维切分数据搬运）.md): blockCount blocks of blockLen
    32-byte DataBlocks (block_elems elements each), end-to-start gaps srcGap / dstGap in DataBlocks."""
    _check_range("blockCount", blockCount, 1, 4095)
    _check_range("blockLen", blockLen, 1, 65535)
    out = _copy(dst)
    row = blockLen * block_elems
    for i in range(blockCount):
        for e in range(row):
            _write(out, dst_offset + i * (blockLen + dstGap) * block_elems + e,
                   _read(src, src_offset + i * (blockLen + srcGap) * block_elems + e))
    return out
