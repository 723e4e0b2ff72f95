"""The example matmul's device code on the Ascend 950 (arch 3510): C[b] (M x N) = A[b] (M x K) . B[b] (K x N), all ND
in GM, with the 950's data paths.

Operands float16, bfloat16, float32 (or HF32, 10 mantissa bits on the 950) and the 950's hifloat8 and
float8_e4m3fn (C0 = 32 elements). The cube accumulates in fp32 in L0C; Fixpipe (FixpipeParamsArch3510, NZ2ND)
converts once on the way out: F322F16, F322BF16, NoQuant, or QF322HIF8_PRE / QF322FP8_PRE with scale 1.0 (the
8-bit results saturate as CTRL says, at its reset value: +-max).

The tile loop is A2's (kernel/matmul_kernel.py: matmul_tiles, L0A/L0B halves of 32 KiB on the 950 as on A2);
this module gives its instruction choices (ARCH35_TOOLS). Per output tile (baseM x baseN), as asc-devkit's
matmul_basic_api example does on __NPU_ARCH__ 3510
(mirror-cann/asc-devkit@82b89a15 examples/01_simd_cpp_api/00_introduction/02_matrix/matmul_basic_api):
  GM -> L1   A: DataCopy with Nd2NzParams (the 3510 ranges: any row pitch in one instruction) into NZ
             [K/C0][align16(M)][C0]. B: DataCopy with Dn2NzParams: B stored K x N row major is B^T (N x K) in
             DN form, so L1 receives B^T as NZ [K/C0][align16(N)][C0], whose 16 x C0 fractals are L0B's ZN
             fractals. [own choice] The example loads B with Nd2Nz and transposes in LoadData2DV2; the b8 and b32
             transposes of LoadData2DV2 are documented by figures only (docs/isa_arch35.md §2.1), DN2NZ moves
             every dtype the same documented way.
  L1 -> L0A  LoadData with LoadData2DParamsV2 (no transpose) into NZ: mStep x kStep fractals from kStartPosition,
             srcStride = the fractal rows of the L1 slice, dstStride = mStep ("Nz->Nz" in the example)
  L1 -> L0B  the same LoadData2DParamsV2 on the B^T slice: [k1][n1] fractals, which is ZN
  Mmad       reads L0A as NZ (the 950's l0a_layout), accumulates over K in L0C, L0A/L0B ping-pong
  Fixpipe    L0C -> GM with FixpipeParamsArch3510 (dstStride in elements), CFG_ROW_MAJOR (NZ2ND)
M, N and K need not be multiples of 16 (or of C0): the copies pad each row's tail of K to C0 with zeros, the
Mmad masks K exactly at k, and Fixpipe writes only the valid mSize x nSize part of a tile.
"""
from __future__ import annotations

from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Dn2NzParams, Fixpipe, FixpipeParamsArch3510, GlobalTensor,
                                LoadData, LoadData2DParamsV2, LocalTensor, Nd2NzParams, Nz2NdParams, QuantMode_t)
from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
from kernels.matmul.kernel.matmul_kernel import MatmulTools, align, matmul_tiles

ONE = 0x3F800000  # deqScalar: the fp32 scale 1.0 of the QF322*_PRE modes
QUANT = {"float16": QuantMode_t.F322F16, "bfloat16": QuantMode_t.F322BF16, "float32": QuantMode_t.NoQuant,
         "hifloat8": QuantMode_t.QF322HIF8_PRE, "float8_e4m3fn": QuantMode_t.QF322FP8_PRE}


def matmul_kernel(a_gm, b_gm, c_gm, t) -> None:
    """One core's tiles of C on the 950; `t` is the MatmulTiling (tiling/matmul). The tile loop is A2's."""
    matmul_tiles(a_gm, b_gm, c_gm, t, ARCH35_TOOLS)


def copy_a_nd2nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix with row pitch `pitch` -> NZ [cols/C0][align16(rows)][C0] in L1 (one Nd2Nz:
    srcDValue takes any pitch below 2^40 on 3510)."""
    DataCopy(dst, src, Nd2NzParams(1, rows, cols, 0, pitch, align(rows, 16), 1, 0))


def copy_b_dn2nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix (B: K x N) with row pitch `pitch` -> its transpose (N x K) as NZ
    [rows/C0][align16(cols)][C0] in L1: one Dn2Nz with nValue = cols, dValue = rows."""
    DataCopy(dst, src, Dn2NzParams(dnNum=1, nValue=cols, dValue=rows, srcDnMatrixStride=0, srcDValue=pitch,
                                   dstNzC0Stride=align(cols, 16), dstNzNStride=1, dstNzMatrixStride=0))


def load_nz_fractals(dst: LocalTensor, src: LocalTensor, rows: int, use_k: int, k_block: int) -> None:
    """The rows x use_k block at K block `k_block` of an NZ slice [K/C0][align16(rows)][C0] in L1 -> [k1][m1]
    fractals in L0 (NZ in L0A; in L0B, with rows = N of B^T, ZN). One LoadData2DV2, no transpose."""
    m1, k1 = -(-rows // 16), -(-use_k // (32 // src.dtype.itemsize))
    LoadData(dst, src, LoadData2DParamsV2(mStartPosition=0, kStartPosition=k_block, mStep=m1, kStep=k1,
                                          srcStride=m1, dstStride=m1))


def load_a_nz(a2: LocalTensor, a1: LocalTensor, use_m: int, use_k: int, k: int, c0: int) -> None:
    """A into L0A as NZ."""
    load_nz_fractals(a2, a1, use_m, use_k, k // c0)


def load_b_zn(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int, c0: int) -> None:
    """B^T into L0B: its NZ fractals are ZN."""
    load_nz_fractals(b2, b1, use_n, use_k, k // c0)


def fixpipe_nz2nd(c: GlobalTensor, c_l0: LocalTensor, use_m: int, use_n: int, t) -> None:
    """The finished tile L0C -> GM as ND (NZ2ND) with the output's quant mode."""
    Fixpipe(c, c_l0, FixpipeParamsArch3510(nSize=use_n, mSize=use_m, srcStride=align(use_m, 16), dstStride=t.N,
                                           quantPre=QUANT[t.out], deqScalar=ONE, params=Nz2NdParams(1, 0, 0)),
            CFG_ROW_MAJOR)


ARCH35_TOOLS = MatmulTools({**DTYPES, **EIGHT_BIT_DTYPES}, copy_a_nd2nz, copy_b_dn2nz, load_a_nz, load_b_zn,
                           fixpipe_nz2nd)
