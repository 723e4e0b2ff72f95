"""A multi-core tiled fp16 matmul in the Ascend C style: C (M x N) = A (M x K) . B (K x N), all ND in GM.

Per output tile (baseM x baseN) of this core:
  GM -> L1   DataCopy with Nd2NzParams (ND to NZ on the fly), stepK K-slices at a time, double-buffered (TQue A1/B1)
  L1 -> L0A  LoadData 2D: NZ fractals are already ZZ fractals, so they are copied as they are
  L1 -> L0B  LoadData 2D with ifTranspose: each NZ fractal of B is transposed into ZN
  Mmad       accumulates over K in L0C (cmatrixInitVal on the first K step), L0A/L0B ping-pong
  Fixpipe    L0C -> GM with F322F16 and NZ2ND, from a double-buffered CO1 queue
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum,
                                GlobalTensor, HardEvent, LoadData, LoadData2DParams, LocalTensor, Mmad,
                                MmadParams, Nd2NzParams, QuantMode_t, SetFlag, TBuf, TPipe, TPosition, TQue,
                                WaitFlag)

L0_HALF = 32 * 1024  # each ping-pong half of L0A / L0B


@dataclass(frozen=True)
class MatmulTiling:
    M: int
    N: int
    K: int
    baseM: int = 128
    baseN: int = 128
    baseK: int = 64
    stepK: int = 4  # baseK slices per L1 load
    l1_buffers: int = 2  # 2 = double-buffered A1/B1 (MTE2 overlaps the cube), 1 = single

    def check(self) -> None:
        for name in ("M", "N", "K", "baseM", "baseN", "baseK"):
            value = getattr(self, name)
            if value <= 0 or value % 16:
                raise ValueError(f"{name}={value} must be a positive multiple of 16")
        if self.baseM * self.baseK * 2 > L0_HALF or self.baseK * self.baseN * 2 > L0_HALF:
            raise ValueError(f"baseM*baseK and baseK*baseN fp16 tiles must fit half of L0A/L0B ({L0_HALF} B)")
        if self.baseM * self.baseN * 4 * 2 > 128 * 1024:
            raise ValueError("two fp32 baseM x baseN tiles must fit L0C (128 KiB)")


def matmul_kernel(a_gm, b_gm, c_gm, t: MatmulTiling) -> None:
    a = GlobalTensor(np.float16).SetGlobalBuffer(a_gm, t.M * t.K)
    b = GlobalTensor(np.float16).SetGlobalBuffer(b_gm, t.K * t.N)
    c = GlobalTensor(np.float16).SetGlobalBuffer(c_gm, t.M * t.N)
    kl1 = t.baseK * t.stepK  # K elements resident in L1 per load
    pipe = TPipe()
    qa1, qb1, qc = TQue(TPosition.A1), TQue(TPosition.B1), TQue(TPosition.CO1)
    pipe.InitBuffer(qa1, t.l1_buffers, t.baseM * kl1 * 2)
    pipe.InitBuffer(qb1, t.l1_buffers, kl1 * t.baseN * 2)
    pipe.InitBuffer(qc, 2, t.baseM * t.baseN * 4)
    l0a, l0b = TBuf(TPosition.A2), TBuf(TPosition.B2)
    pipe.InitBuffer(l0a, 2 * L0_HALF)
    pipe.InitBuffer(l0b, 2 * L0_HALF)
    # The L0 halves start out free: M releases them to MTE1 with M_MTE1 flags 0 and 1.
    SetFlag(HardEvent.M_MTE1, 0)
    SetFlag(HardEvent.M_MTE1, 1)
    ping = 0
    tiles_m, tiles_n = t.M // t.baseM + (t.M % t.baseM > 0), t.N // t.baseN + (t.N % t.baseN > 0)
    for tile in range(GetBlockIdx(), tiles_m * tiles_n, GetBlockNum()):
        m0, n0 = (tile // tiles_n) * t.baseM, (tile % tiles_n) * t.baseN
        use_m, use_n = min(t.baseM, t.M - m0), min(t.baseN, t.N - n0)
        c_l0 = qc.AllocTensor(np.float32)
        for k_l1 in range(0, t.K, kl1):
            use_kl1 = min(kl1, t.K - k_l1)
            a1 = qa1.AllocTensor(np.float16)  # A slice (use_m x use_kl1) as NZ: [K/16][use_m][16]
            DataCopy(a1, a[m0 * t.K + k_l1], Nd2NzParams(1, use_m, use_kl1, 0, t.K, use_m, 1, 0))
            qa1.EnQue(a1)
            b1 = qb1.AllocTensor(np.float16)  # B slice (use_kl1 x use_n) as NZ: [N/16][use_kl1][16]
            DataCopy(b1, b[k_l1 * t.N + n0], Nd2NzParams(1, use_kl1, use_n, 0, t.N, use_kl1, 1, 0))
            qb1.EnQue(b1)
            a1, b1 = qa1.DeQue(), qb1.DeQue()
            for k in range(0, use_kl1, t.baseK):
                use_k = min(t.baseK, use_kl1 - k)
                a2 = l0a.GetWithOffset(t.baseM * t.baseK, ping * L0_HALF, np.float16)
                b2 = l0b.GetWithOffset(t.baseK * t.baseN, ping * L0_HALF, np.float16)
                WaitFlag(HardEvent.M_MTE1, ping)
                load_a_zz(a2, a1, use_m, use_k, k)
                load_b_zn(b2, b1, use_kl1, use_n, use_k, k)
                SetFlag(HardEvent.MTE1_M, ping)
                WaitFlag(HardEvent.MTE1_M, ping)
                Mmad(c_l0, a2, b2, MmadParams(use_m, use_n, use_k, cmatrixInitVal=(k_l1 + k == 0)))
                SetFlag(HardEvent.M_MTE1, ping)
                ping ^= 1
            qa1.FreeTensor(a1)
            qb1.FreeTensor(b1)
        qc.EnQue(c_l0)
        c_l0 = qc.DeQue()
        Fixpipe(c[m0 * t.N + n0], c_l0, FixpipeParamsV220(nSize=use_n, mSize=use_m, srcStride=use_m,
                                                           dstStride=t.N, quantPre=QuantMode_t.F322F16),
                CFG_ROW_MAJOR)
        qc.FreeTensor(c_l0)
    WaitFlag(HardEvent.M_MTE1, 0)
    WaitFlag(HardEvent.M_MTE1, 1)


def load_a_zz(a2: LocalTensor, a1: LocalTensor, use_m: int, use_k: int, k: int) -> None:
    """NZ [K1][M][16] in L1 -> ZZ [M1][K1] in L0A: one LoadData 2D per K fractal column, M1 fractals each."""
    m1, k1 = use_m // 16, use_k // 16
    for j in range(k1):
        start = (k // 16 + j) * m1  # fractal index of (row block 0, K block k/16 + j) in the NZ slice
        LoadData(a2[j * 256], a1, LoadData2DParams(startIndex=start, repeatTimes=m1, srcStride=1, dstGap=k1 - 1))


def load_b_zn(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int) -> None:
    """NZ [N1][K][16] in L1 -> ZN [K1][N1] in L0B: each fractal transposed, one LoadData 2D per K fractal row."""
    n1, k1 = use_n // 16, use_k // 16
    for j in range(k1):
        LoadData(b2[j * n1 * 256], b1, LoadData2DParams(startIndex=k // 16 + j, repeatTimes=n1,
                                                        srcStride=use_kl1 // 16, ifTranspose=True))


def run_matmul(a: np.ndarray, b: np.ndarray, *, platform="Ascend910B2", block_dim: int | None = None,
               tiling: MatmulTiling | None = None, execute: bool = True, check_races: bool = True):
    """Run the kernel on a simulated chip. Returns (C as float16, RunReport)."""
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: A is {a.shape}, B is {b.shape}")
    t = tiling or MatmulTiling(m, n, k)
    t.check()
    chip = Chip(platform, execute=execute, check_races=check_races)
    tiles = -(-m // t.baseM) * -(-n // t.baseN)
    block_dim = block_dim or min(tiles, chip.platform.aic_cores)
    a_gm = chip.gm.upload("A", a.astype(np.float16))
    b_gm = chip.gm.upload("B", b.astype(np.float16))
    c_gm = chip.gm.alloc("C", m * n * 2)
    from ascend_sim.tensor import GmAddr
    report = chip.launch(matmul_kernel, block_dim, GmAddr(a_gm), GmAddr(b_gm), GmAddr(c_gm), t)
    return c_gm.data.view(np.float16).reshape(m, n).copy(), report
