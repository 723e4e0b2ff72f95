"""The device code of a multi-core tiled (batch) matmul in the Ascend C style: C[b] (M x N) = A[b] (M x K) . B[b] (K x N), all ND in GM.

Operands are float16, bfloat16 or float32 (optionally rounded to HF32 by the cube); the cube accumulates in fp32 in
L0C and Fixpipe writes C as float16 (F322F16), bfloat16 (F322BF16) or float32 (NoQuant). C0 = 32 B / element
size: 16 for the 16-bit types, 8 for float32. B may be shared by every batch (a broadcast right operand).

The tile loop (matmul_tiles) is the same on the Ascend 950 (kernel/arch35/matmul_kernel.py); what differs per arch
is its MatmulTools, the instruction choices. Per output tile (baseM x baseN) of this core, on A2/A3 (A2_TOOLS):
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

from typing import Callable, NamedTuple

import numpy as np

from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum,
                                GlobalTensor, HardEvent, LoadData, LoadData2DParams, LoadData3DParamsV2, LocalTensor,
                                Mmad, MmadParams, Nd2NzParams, QuantMode_t, SetFlag, SetHF32Mode, TBuf, TPipe,
                                TPosition, TQue, WaitFlag)
from ascend_sim.machine.dtypes import DTYPES

L0_HALF = 32 * 1024  # each ping-pong half of L0A / L0B
FRACTAL_BYTES = 512
ND2NZ_PITCH_MAX = 65535  # Nd2NzParams.srcDValue is 16 bits
QUANT = {"float16": QuantMode_t.F322F16, "bfloat16": QuantMode_t.F322BF16, "float32": QuantMode_t.NoQuant}


def align(value: int, unit: int) -> int:
    """value rounded up to a multiple of unit."""
    return -(-value // unit) * unit


def matmul_kernel(a_gm, b_gm, c_gm, t) -> None:
    """One core's tiles of C on A2/A3; `t` is the MatmulTiling (tiling/matmul)."""
    matmul_tiles(a_gm, b_gm, c_gm, t, A2_TOOLS)


class MatmulTools(NamedTuple):
    """An arch's instruction choices for the tile loop: its operand dtypes, GM -> L1 copies of A and B, L1 -> L0A/L0B
    loads and the Fixpipe of a finished tile (kernel/arch35/matmul_kernel.py has the Ascend 950's)."""

    dtypes: dict
    copy_a: Callable  # (a1, a, use_m, use_kl1, pitch K)
    copy_b: Callable  # (b1, b, use_kl1, use_n, pitch N)
    load_a: Callable  # (a2, a1, use_m, use_k, k, c0)
    load_b: Callable  # (b2, b1, use_kl1, use_n, use_k, k, c0)
    fixpipe: Callable  # (c, c_l0, use_m, use_n, t)


def matmul_tiles(a_gm, b_gm, c_gm, t, tools: MatmulTools) -> None:
    """The tile loop of every arch: this core's output tiles, each computed by MatmulTiles.ComputeTile."""
    tiles = MatmulTiles(a_gm, b_gm, c_gm, t, tools)
    if t.hf32:
        SetHF32Mode(True)
    # The L0 halves start out free: TPipe() has set M_MTE1 0 and 1, and its Destroy waits for them at the end.
    ping = 0
    for tile in range(GetBlockIdx(), t.batch * tiles.tiles_m * tiles.tiles_n, GetBlockNum()):
        ping = tiles.ComputeTile(tile, ping)
    if t.hf32:
        SetHF32Mode(False)


class MatmulTiles:
    """One core's operands in GM, its L1 queues (stepK K-slices per load, double-buffered), L0C queue and L0 halves."""

    def __init__(self, a_gm, b_gm, c_gm, t, tools: MatmulTools):
        self.t, self.tools = t, tools
        self.dtype, out = tools.dtypes[t.dtype], tools.dtypes[t.out]
        self.c0 = 32 // self.dtype.itemsize
        self.a = GlobalTensor(self.dtype).SetGlobalBuffer(a_gm, t.batch * t.M * t.K)
        self.b = GlobalTensor(self.dtype).SetGlobalBuffer(b_gm, (1 if t.shared_b else t.batch) * t.K * t.N)
        self.c = GlobalTensor(out).SetGlobalBuffer(c_gm, t.batch * t.M * t.N)
        self.kl1 = t.baseK * t.stepK  # K elements resident in L1 per load
        self.pipe = TPipe()
        self.qa1, self.qb1, self.qc = TQue(TPosition.A1), TQue(TPosition.B1), TQue(TPosition.CO1)
        self.pipe.InitBuffer(self.qa1, t.l1_buffers, t.baseM * self.kl1 * self.dtype.itemsize)
        self.pipe.InitBuffer(self.qb1, t.l1_buffers, self.kl1 * t.baseN * self.dtype.itemsize)
        self.pipe.InitBuffer(self.qc, 2, t.baseM * t.baseN * 4)
        self.l0a, self.l0b = TBuf(TPosition.A2), TBuf(TPosition.B2)
        self.pipe.InitBuffer(self.l0a, 2 * L0_HALF)
        self.pipe.InitBuffer(self.l0b, 2 * L0_HALF)
        self.tiles_m, self.tiles_n = -(-t.M // t.baseM), -(-t.N // t.baseN)

    def TilePlace(self, tile: int) -> tuple:
        """(batch, first row m0, first column n0, rows use_m, columns use_n) of output tile `tile`."""
        t = self.t
        batch, rest = divmod(tile, self.tiles_m * self.tiles_n)
        m0, n0 = (rest // self.tiles_n) * t.baseM, (rest % self.tiles_n) * t.baseN
        return batch, m0, n0, min(t.baseM, t.M - m0), min(t.baseN, t.N - n0)

    def ComputeTile(self, tile: int, ping: int) -> int:
        """Output tile `tile`: K in L1 loads of stepK slices, the Mmads in the L0 half `ping`, alternating, and the
        Fixpipe of the finished tile; returns the L0 half the next tile starts in."""
        t, tools, dtype, c0 = self.t, self.tools, self.dtype, self.c0
        batch, m0, n0, use_m, use_n = self.TilePlace(tile)
        a_batch = batch * t.M * t.K
        b_batch = 0 if t.shared_b else batch * t.K * t.N
        c_l0 = self.qc.AllocTensor(np.float32)
        for k_l1 in range(0, t.K, self.kl1):
            use_kl1 = min(self.kl1, t.K - k_l1)
            a1 = self.qa1.AllocTensor(dtype)  # the A slice (use_m x use_kl1) in L1
            tools.copy_a(a1, self.a[a_batch + m0 * t.K + k_l1], use_m, use_kl1, t.K)
            self.qa1.EnQue(a1)
            b1 = self.qb1.AllocTensor(dtype)  # the B slice (use_kl1 x use_n) in L1
            tools.copy_b(b1, self.b[b_batch + k_l1 * t.N + n0], use_kl1, use_n, t.N)
            self.qb1.EnQue(b1)
            a1, b1 = self.qa1.DeQue(), self.qb1.DeQue()
            for k in range(0, use_kl1, t.baseK):
                use_k = min(t.baseK, use_kl1 - k)
                a2 = self.l0a.GetWithOffset(t.baseM * t.baseK, ping * L0_HALF, dtype)
                b2 = self.l0b.GetWithOffset(t.baseK * t.baseN, ping * L0_HALF, dtype)
                WaitFlag(HardEvent.M_MTE1, ping)
                tools.load_a(a2, a1, use_m, use_k, k, c0)
                tools.load_b(b2, b1, use_kl1, use_n, use_k, k, c0)
                SetFlag(HardEvent.MTE1_M, ping)
                WaitFlag(HardEvent.MTE1_M, ping)
                # m is rounded up to whole fractal rows: m = 1 would select the GEMV mode (A as a plain vector)
                Mmad(c_l0, a2, b2, MmadParams(align(use_m, 16), use_n, use_k, cmatrixInitVal=(k_l1 + k == 0)))
                SetFlag(HardEvent.M_MTE1, ping)
                ping ^= 1
            self.qa1.FreeTensor(a1)
            self.qb1.FreeTensor(b1)
        self.qc.EnQue(c_l0)
        c_l0 = self.qc.DeQue()
        tools.fixpipe(self.c[batch * t.M * t.N + m0 * t.N + n0], c_l0, use_m, use_n, t)
        self.qc.FreeTensor(c_l0)
        return ping


def copy_nd_to_nz(dst: LocalTensor, src: GlobalTensor, rows: int, cols: int, pitch: int) -> None:
    """rows x cols of an ND matrix with row pitch `pitch` -> NZ [cols/C0][align16(rows)][C0] in L1.

    One Nd2Nz when the pitch fits its 16-bit srcDValue, else one Nd2Nz per row (row r lands at element r*C0)."""
    c0 = 32 // dst.dtype.itemsize
    nz_rows = align(rows, 16)
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
                                                        srcStride=align(use_kl1, 16) // 16, ifTranspose=True))


def load_b_zn_b32(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int) -> None:
    """float32: NZ [N/8][K][8] in L1 -> ZN [K/8][N1][16 (n)][8 (k)] in L0B with one LoadData 3Dv2.

    The slice is an NC1HWC0 map with H = 1, W = align16(use_kl1), C = use_n; a 1x1 filter with stride 1 makes
    its img2col matrix the slice itself (rows = K, columns = N). Into L0B the rows mStartPt.. become the
    Mmad's K and the columns its N; a last 16-wide N fractal that is only half used is left half unwritten."""
    channels = align(use_n, 8)
    LoadData(b2, b1, LoadData3DParamsV2(padList=(0, 0, 0, 0), l1H=1, l1W=align(use_kl1, 16), channelSize=channels,
                                        kExtension=channels, mExtension=align(use_k, 8), kStartPt=0, mStartPt=k))


def load_b_a2(b2: LocalTensor, b1: LocalTensor, use_kl1: int, use_n: int, use_k: int, k: int, c0: int) -> None:
    """B into L0B as ZN: transposing LoadData 2D for 16-bit data, LoadData 3Dv2 for float32."""
    if c0 == 16:
        load_b_zn(b2, b1, use_kl1, use_n, use_k, k)
    else:
        load_b_zn_b32(b2, b1, use_kl1, use_n, use_k, k)


def fixpipe_nz2nd(c: GlobalTensor, c_l0: LocalTensor, use_m: int, use_n: int, t) -> None:
    """The finished tile L0C -> GM as ND (NZ2ND) in C's dtype."""
    Fixpipe(c, c_l0, FixpipeParamsV220(nSize=use_n, mSize=use_m, srcStride=align(use_m, 16), dstStride=t.N,
                                       quantPre=QUANT[t.out]), CFG_ROW_MAJOR)


A2_TOOLS = MatmulTools(DTYPES, copy_nd_to_nz, copy_nd_to_nz, load_a_zz, load_b_a2, fixpipe_nz2nd)


# Replay (ascend_sim/engine/replay.py): a tile is a unit, declared in replay_keys.py (applied here so that no kernel
# line above moves: records carry their source line).
from kernels.matmul.kernel.replay_keys import compute_tile_unit  # noqa: E402

MatmulTiles.ComputeTile = compute_tile_unit(MatmulTiles.ComputeTile)
