"""A multi-core tiled (batch) matmul in the Ascend C style: C[b] (M x N) = A[b] (M x K) . B[b] (K x N), all ND in GM.

Operands are float16, bfloat16 or float32 (optionally rounded to HF32 by the cube); the cube accumulates in fp32 in
L0C and Fixpipe writes C as float16 (F322F16), bfloat16 (F322BF16) or float32 (NoQuant). C0 = 32 B / element
size: 16 for the 16-bit types, 8 for float32. B may be shared by every batch (a broadcast right operand).

Per output tile (baseM x baseN) of this core:
  GM -> L1   DataCopy with Nd2NzParams (ND to NZ on the fly), stepK K-slices at a time, double-buffered (TQue A1/B1)
  L1 -> L0A  LoadData 2D: NZ fractals (16 x C0) are already ZZ fractals, so they are copied as they are
  L1 -> L0B  16-bit: LoadData 2D with ifTranspose: each 16 x 16 NZ fractal of B is transposed into ZN
             float32: LoadData 2D cannot transpose 32-bit data. The NZ slice of B in L1 is the same thing as an
             NC1HWC0 feature map with H = 1, W = K rows and C = N channels, so LoadData 3Dv2 into L0B with a 1x1
             filter moves it: its img2col rows (K) become the Mmad's K and its channels (N) the Mmad's N, in ZN
  Mmad       accumulates over K in L0C (cmatrixInitVal on the first K step), L0A/L0B ping-pong
  Fixpipe    L0C -> GM with NZ2ND and the dtype conversion, from a double-buffered CO1 queue
M, N and K need not be multiples of 16: Nd2Nz pads each row to C0 with zeros, the Mmad masks K exactly at k, and
Fixpipe writes only the mSize x nSize valid part of a tile.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum,
                                GlobalTensor, HardEvent, LoadData, LoadData2DParams, LoadData3DParamsV2,
                                LocalTensor, Mmad, MmadParams, Nd2NzParams, QuantMode_t, SetFlag, SetHF32Mode, TBuf,
                                TPipe, TPosition, TQue, WaitFlag)
from ascend_sim.dtypes import DTYPES, dtype_name
from tiling.checks import check_hf32

L0_HALF = 32 * 1024  # each ping-pong half of L0A / L0B
L0C_SIZE = 128 * 1024
L1_SIZE = 512 * 1024
FRACTAL_BYTES = 512
ND2NZ_PITCH_MAX = 65535  # Nd2NzParams.srcDValue is 16 bits
QUANT = {"float16": QuantMode_t.F322F16, "bfloat16": QuantMode_t.F322BF16, "float32": QuantMode_t.NoQuant}


def _align(value: int, unit: int) -> int:
    return -(-value // unit) * unit


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
    dtype: str = "float16"  # A and B
    out_dtype: str | None = None  # C; None = the operand dtype
    batch: int = 1
    shared_b: bool = False  # one B (K x N) for every batch
    hf32: bool = False  # float32 operands rounded to HF32 by the cube (SetHF32Mode)

    @classmethod
    def for_shape(cls, M: int, N: int, K: int, dtype: str = "float16", **fields) -> "MatmulTiling":
        """The default tiling for a dtype: 128 x 128 x 64 blocks, 4 (16-bit) or 2 (float32) K slices per L1 load."""
        fields.setdefault("stepK", 2 if dtype == "float32" else 4)
        return cls(M, N, K, dtype=dtype, **fields)

    @property
    def out(self) -> str:
        return self.out_dtype or self.dtype

    def check(self, l1_bytes: int = L1_SIZE) -> None:
        for name in ("M", "N", "K", "batch", "stepK"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"{name}={value!r} must be a positive integer")
        for name in ("baseM", "baseN", "baseK"):
            value = getattr(self, name)
            if value <= 0 or value % 16:
                raise ValueError(f"{name}={value} must be a positive multiple of 16")
        for name in ("dtype", "out"):
            if getattr(self, name) not in DTYPES:
                raise ValueError(f"{name}={getattr(self, name)!r} is not supported; allowed: {sorted(DTYPES)}")
        if self.l1_buffers not in (1, 2):
            raise ValueError(f"l1_buffers={self.l1_buffers} must be 1 or 2")
        check_hf32("hf32", self.hf32, self.dtype)
        size = DTYPES[self.dtype].itemsize
        if self.baseM * self.baseK * size > L0_HALF or self.baseK * self.baseN * size > L0_HALF:
            raise ValueError(f"baseM*baseK and baseK*baseN {self.dtype} tiles must fit half of L0A/L0B "
                             f"({L0_HALF} B)")
        if self.baseM * self.baseN * 4 * 2 > L0C_SIZE:
            raise ValueError(f"two fp32 baseM x baseN tiles must fit L0C ({L0C_SIZE // 1024} KiB)")
        l1 = self.l1_buffers * (self.baseM + self.baseN) * self.baseK * self.stepK * size
        if l1 > l1_bytes:
            raise ValueError(f"A1 + B1 need {l1} B of L1 ({self.l1_buffers} x (baseM + baseN) x baseK x stepK x "
                             f"{size} B), more than its {l1_bytes} B: lower stepK")


def matmul_kernel(a_gm, b_gm, c_gm, t: MatmulTiling) -> None:
    dtype, out = DTYPES[t.dtype], DTYPES[t.out]
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
            copy_nd_to_nz(a1, a[a_batch + m0 * t.K + k_l1], use_m, use_kl1, t.K)
            qa1.EnQue(a1)
            b1 = qb1.AllocTensor(dtype)  # B slice (use_kl1 x use_n) as NZ: [N/C0][align16(use_kl1)][C0]
            copy_nd_to_nz(b1, b[b_batch + k_l1 * t.N + n0], use_kl1, use_n, t.N)
            qb1.EnQue(b1)
            a1, b1 = qa1.DeQue(), qb1.DeQue()
            for k in range(0, use_kl1, t.baseK):
                use_k = min(t.baseK, use_kl1 - k)
                a2 = l0a.GetWithOffset(t.baseM * t.baseK, ping * L0_HALF, dtype)
                b2 = l0b.GetWithOffset(t.baseK * t.baseN, ping * L0_HALF, dtype)
                WaitFlag(HardEvent.M_MTE1, ping)
                load_a_zz(a2, a1, use_m, use_k, k, c0)
                if c0 == 16:
                    load_b_zn(b2, b1, use_kl1, use_n, use_k, k)
                else:
                    load_b_zn_b32(b2, b1, use_kl1, use_n, use_k, k)
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
                FixpipeParamsV220(nSize=use_n, mSize=use_m, srcStride=_align(use_m, 16), dstStride=t.N,
                                  quantPre=QUANT[t.out]), CFG_ROW_MAJOR)
        qc.FreeTensor(c_l0)
    if t.hf32:
        SetHF32Mode(False)


def copy_nd_to_nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix with row pitch `pitch` -> NZ [cols/C0][align16(rows)][C0] in L1.

    One Nd2Nz when the pitch fits its 16-bit srcDValue, else one Nd2Nz per row (row r lands at element r*C0)."""
    c0 = 32 // dst.dtype.itemsize
    nz_rows = _align(rows, 16)
    if pitch <= ND2NZ_PITCH_MAX:
        DataCopy(dst, src, Nd2NzParams(1, rows, cols, 0, pitch, nz_rows, 1, 0))
        return
    for r in range(rows):
        DataCopy(dst[r * c0], src[r * pitch], Nd2NzParams(1, 1, cols, 0, cols, nz_rows, 1, 0))


def load_a_zz(a2: LocalTensor, a1: LocalTensor, use_m: int, use_k: int, k: int, c0: int = 16) -> None:
    """NZ [K1][M][C0] in L1 -> ZZ [M1][K1] in L0A: one LoadData 2D per K fractal column, M1 fractals each.

    A 16 x C0 fractal (512 B) of the NZ slice is already a ZZ fractal, for every dtype."""
    m1, k1 = -(-use_m // 16), -(-use_k // c0)
    fractal = FRACTAL_BYTES // a1.dtype.itemsize
    for j in range(k1):
        start = (k // c0 + j) * m1  # fractal index of (row block 0, K block k/C0 + j) in the NZ slice
        LoadData(a2[j * fractal], a1, LoadData2DParams(startIndex=start, repeatTimes=m1, srcStride=1, dstGap=k1 - 1))


def load_b_zn(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int) -> None:
    """16-bit: NZ [N1][K][16] in L1 -> ZN [K1][N1] in L0B: each fractal transposed, one LoadData 2D per K row."""
    n1, k1 = -(-use_n // 16), -(-use_k // 16)
    for j in range(k1):
        LoadData(b2[j * n1 * 256], b1, LoadData2DParams(startIndex=k // 16 + j, repeatTimes=n1,
                                                        srcStride=_align(use_kl1, 16) // 16, ifTranspose=True))


def load_b_zn_b32(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int) -> None:
    """float32: NZ [N/8][K][8] in L1 -> ZN [K/8][N1][16 (n)][8 (k)] in L0B with one LoadData 3Dv2.

    The slice is an NC1HWC0 map with H = 1, W = align16(use_kl1), C = use_n; a 1x1 filter with stride 1 makes
    its img2col matrix the slice itself (rows = K, columns = N). Into L0B the rows mStartPt.. become the
    Mmad's K and the columns its N; a last 16-wide N fractal that is only half used is left half unwritten."""
    channels = _align(use_n, 8)
    LoadData(b2, b1, LoadData3DParamsV2(padList=(0, 0, 0, 0), l1H=1, l1W=_align(use_kl1, 16), channelSize=channels,
                                        kExtension=channels, mExtension=_align(use_k, 8), kStartPt=0, mStartPt=k))


def run_matmul(a: np.ndarray, b: np.ndarray, *, platform="Ascend910B2", block_dim: int | None = None,
               tiling: MatmulTiling | None = None, execute: bool = True, check_races: bool = True,
               out_dtype=None, hf32: bool = False, hooks=None, poison_output: bool = False,
               engine: str = "auto"):
    """Run the kernel on a simulated chip. Returns (C, RunReport).

    a: (M, K) or (batch, M, K); b: (K, N), (1, K, N) or (batch, K, N): a 2-D or batch-1 B is shared by every
    batch. The operand dtype is a's if it is float16, bfloat16 or float32 (b is cast to it), else float16.
    out_dtype: C's dtype (default the operand dtype). hf32: round float32 operands to HF32 in the cube.
    poison_output fills C with NaN first (float outputs), so that an element the kernel never writes shows.
    C is (M, N) for a 2-D a, else (batch, M, N); None when execute=False (timing-only: GM holds no bytes).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim not in (2, 3) or b.ndim not in (2, 3):
        raise ValueError(f"A and B must be 2-D or 3-D (batch first), got shapes {a.shape} and {b.shape}")
    batch = a.shape[0] if a.ndim == 3 else 1
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        raise ValueError(f"inner dimensions differ: A is {a.shape}, B is {b.shape}")
    b_batch = b.shape[0] if b.ndim == 3 else 1
    if b_batch not in (1, batch):
        raise ValueError(f"B's batch {b_batch} must be 1 (shared) or A's batch {batch}")
    dtype = dtype_name(a.dtype) if a.dtype in DTYPES.values() else "float16"
    check_hf32("hf32", hf32, dtype)  # before the tiling: a 16-bit run must not silently drop the request
    out = dtype_name(np.dtype(out_dtype)) if out_dtype is not None else dtype
    shared_b = batch > 1 and b_batch == 1
    t = tiling or MatmulTiling.for_shape(m, n, k, dtype, out_dtype=out, batch=batch, shared_b=shared_b, hf32=hf32)
    if (t.M, t.N, t.K, t.batch) != (m, n, k, batch):
        raise ValueError(f"the tiling is for batch {t.batch} of M={t.M} N={t.N} K={t.K}, the operands for batch "
                         f"{batch} of M={m} N={n} K={k}")
    chip = Chip(platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine)
    t.check(chip.platform.L1)
    tiles = t.batch * -(-m // t.baseM) * -(-n // t.baseN)
    block_dim = block_dim or min(tiles, chip.platform.aic_cores)
    operand, result = DTYPES[t.dtype], DTYPES[t.out]
    a_gm = chip.gm.upload("A", a.astype(operand, copy=False))
    b_gm = chip.gm.upload("B", b.astype(operand, copy=False))
    c_gm = chip.gm.alloc("C", batch * m * n * result.itemsize)
    if poison_output and execute:
        c_gm.data.view(result)[:] = np.nan
    from ascend_sim.tensor import GmAddr
    report = chip.launch(matmul_kernel, block_dim, GmAddr(a_gm), GmAddr(b_gm), GmAddr(c_gm), t)
    if not execute:
        return None, report
    c = c_gm.data.view(result).reshape(batch, m, n).copy()
    return (c if a.ndim == 3 else c[0]), report
