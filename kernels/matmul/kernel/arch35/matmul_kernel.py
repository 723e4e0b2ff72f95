"""The example matmul's device code on the Ascend 950 (arch 3510): C[b] (M x N) = A[b] (M x K) . B[b] (K x N), all ND
in GM, with the 950's data paths.

Operands float16, bfloat16, float32 (or HF32, 10 mantissa bits on the 950) and the 950's hifloat8 and
float8_e4m3fn (C0 = 32 elements). The cube accumulates in fp32 in L0C; Fixpipe (FixpipeParamsArch3510, NZ2ND)
converts once on the way out: F322F16, F322BF16, NoQuant, or QF322HIF8_PRE / QF322FP8_PRE with scale 1.0 (the
8-bit results saturate as CTRL says, at its reset value: +-max).

Per output tile (baseM x baseN), as asc-devkit's matmul_basic_api example does on __NPU_ARCH__ 3510
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

import numpy as np

from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Dn2NzParams, Fixpipe, FixpipeParamsArch3510, GetBlockIdx,
                                GetBlockNum, GlobalTensor, HardEvent, LoadData, LoadData2DParamsV2, LocalTensor, Mmad,
                                MmadParams, Nd2NzParams, Nz2NdParams, QuantMode_t, SetFlag, SetHF32Mode, TBuf, TPipe,
                                TPosition, TQue, WaitFlag)
from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES

L0_HALF = 32 * 1024  # each ping-pong half of L0A / L0B (64 KiB on the 950 as on A2)
ONE = 0x3F800000  # deqScalar: the fp32 scale 1.0 of the QF322*_PRE modes
QUANT = {"float16": QuantMode_t.F322F16, "bfloat16": QuantMode_t.F322BF16, "float32": QuantMode_t.NoQuant,
         "hifloat8": QuantMode_t.QF322HIF8_PRE, "float8_e4m3fn": QuantMode_t.QF322FP8_PRE}
OPERANDS = {**DTYPES, **EIGHT_BIT_DTYPES}


def _align(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def matmul_kernel(a_gm, b_gm, c_gm, t) -> None:
    """One core's tiles of C; `t` is the MatmulTiling (tiling/matmul)."""
    dtype, out = OPERANDS[t.dtype], OPERANDS[t.out]
    c0 = 32 // dtype.itemsize
    a = GlobalTensor(dtype).SetGlobalBuffer(a_gm, t.batch * t.M * t.K)
    b = GlobalTensor(dtype).SetGlobalBuffer(b_gm, (1 if t.shared_b else t.batch) * t.K * t.N)
    c = GlobalTensor(out).SetGlobalBuffer(c_gm, t.batch * t.M * t.N)
    kl1 = t.baseK * t.stepK  # K elements resident in L1 per load
    pipe = TPipe()
    qa1, qb1, qc = TQue(TPosition.A1), TQue(TPosition.B1), TQue(TPosition.CO1)
    pipe.InitBuffer(qa1, t.l1_buffers, t.baseM * kl1 * dtype.itemsize)
    pipe.InitBuffer(qb1, t.l1_buffers, kl1 * t.baseN * dtype.itemsize)
    pipe.InitBuffer(qc, 2, t.baseM * t.baseN * 4)
    l0a, l0b = TBuf(TPosition.A2), TBuf(TPosition.B2)
    pipe.InitBuffer(l0a, 2 * L0_HALF)
    pipe.InitBuffer(l0b, 2 * L0_HALF)
    if t.hf32:
        SetHF32Mode(True)
    # The L0 halves start out free: TPipe() has set M_MTE1 0 and 1, and its Destroy waits for them at the end.
    ping = 0
    tiles_m, tiles_n = -(-t.M // t.baseM), -(-t.N // t.baseN)
    for tile in range(GetBlockIdx(), t.batch * tiles_m * tiles_n, GetBlockNum()):
        batch, rest = divmod(tile, tiles_m * tiles_n)
        m0, n0 = (rest // tiles_n) * t.baseM, (rest % tiles_n) * t.baseN
        use_m, use_n = min(t.baseM, t.M - m0), min(t.baseN, t.N - n0)
        a_batch = batch * t.M * t.K
        b_batch = 0 if t.shared_b else batch * t.K * t.N
        c_l0 = qc.AllocTensor(np.float32)
        for k_l1 in range(0, t.K, kl1):
            use_kl1 = min(kl1, t.K - k_l1)
            a1 = qa1.AllocTensor(dtype)  # A slice (use_m x use_kl1) as NZ: [K/C0][align16(use_m)][C0]
            copy_a_nd2nz(a1, a[a_batch + m0 * t.K + k_l1], use_m, use_kl1, t.K)
            qa1.EnQue(a1)
            b1 = qb1.AllocTensor(dtype)  # B^T slice (use_n x use_kl1) as NZ: [K/C0][align16(use_n)][C0]
            copy_b_dn2nz(b1, b[b_batch + k_l1 * t.N + n0], use_kl1, use_n, t.N)
            qb1.EnQue(b1)
            a1, b1 = qa1.DeQue(), qb1.DeQue()
            for k in range(0, use_kl1, t.baseK):
                use_k = min(t.baseK, use_kl1 - k)
                a2 = l0a.GetWithOffset(t.baseM * t.baseK, ping * L0_HALF, dtype)
                b2 = l0b.GetWithOffset(t.baseK * t.baseN, ping * L0_HALF, dtype)
                WaitFlag(HardEvent.M_MTE1, ping)
                load_nz_fractals(a2, a1, use_m, use_k, k // c0)  # NZ into L0A
                load_nz_fractals(b2, b1, use_n, use_k, k // c0)  # ZN into L0B
                SetFlag(HardEvent.MTE1_M, ping)
                WaitFlag(HardEvent.MTE1_M, ping)
                # m is rounded up to whole fractal rows: m = 1 would select the GEMV mode (A as a plain vector)
                Mmad(c_l0, a2, b2, MmadParams(_align(use_m, 16), use_n, use_k, cmatrixInitVal=(k_l1 + k == 0)))
                SetFlag(HardEvent.M_MTE1, ping)
                ping ^= 1
            qa1.FreeTensor(a1)
            qb1.FreeTensor(b1)
        qc.EnQue(c_l0)
        c_l0 = qc.DeQue()
        Fixpipe(c[batch * t.M * t.N + m0 * t.N + n0], c_l0,
                FixpipeParamsArch3510(nSize=use_n, mSize=use_m, srcStride=_align(use_m, 16), dstStride=t.N,
                                      quantPre=QUANT[t.out], deqScalar=ONE, params=Nz2NdParams(1, 0, 0)),
                CFG_ROW_MAJOR)
        qc.FreeTensor(c_l0)
    if t.hf32:
        SetHF32Mode(False)


def copy_a_nd2nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix with row pitch `pitch` -> NZ [cols/C0][align16(rows)][C0] in L1 (one Nd2Nz:
    srcDValue takes any pitch below 2^40 on 3510)."""
    DataCopy(dst, src, Nd2NzParams(1, rows, cols, 0, pitch, _align(rows, 16), 1, 0))


def copy_b_dn2nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix (B: K x N) with row pitch `pitch` -> its transpose (N x K) as NZ
    [rows/C0][align16(cols)][C0] in L1: one Dn2Nz with nValue = cols, dValue = rows."""
    DataCopy(dst, src, Dn2NzParams(dnNum=1, nValue=cols, dValue=rows, srcDnMatrixStride=0, srcDValue=pitch,
                                   dstNzC0Stride=_align(cols, 16), dstNzNStride=1, dstNzMatrixStride=0))


def load_nz_fractals(dst: LocalTensor, src: LocalTensor, rows: int, use_k: int, k_block: int) -> None:
    """The rows x use_k block at K block `k_block` of an NZ slice [K/C0][align16(rows)][C0] in L1 -> [k1][m1]
    fractals in L0 (NZ in L0A; in L0B, with rows = N of B^T, ZN). One LoadData2DV2, no transpose."""
    m1, k1 = -(-rows // 16), -(-use_k // (32 // src.dtype.itemsize))
    LoadData(dst, src, LoadData2DParamsV2(mStartPosition=0, kStartPosition=k_block, mStep=m1, kStep=k1,
                                          srcStride=m1, dstStride=m1))
