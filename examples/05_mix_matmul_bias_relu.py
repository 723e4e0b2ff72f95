"""A mixed cube + vector kernel: C = ReLU(A . B + bias), the matmul on the AIC, the epilogue on its AIV.

What it teaches:
* a MIX_AIC_1_1 launch: every AI core runs the same kernel function on its cube core (AIC) and on its vector
  core (AIV); the two branch on ASCEND_IS_AIC() / ASCEND_IS_AIV() and share nothing but GM;
* the hand-over through GM, as the real Conv3DBackpropInputV2 does for NCDHW output
  (MergeOutputTransDataIterateAll): the AIC's Fixpipe writes each fp32 tile into its own workspace slot and
  raises CrossCoreSetFlag<2, PIPE_FIX>(6) ("the tile is there"); the AIV waits for flag 6, copies the tile into
  UB and raises CrossCoreSetFlag<2, PIPE_MTE2>(5) ("the slot is free"), which the AIC waits for before its next
  Fixpipe. Flags set on a pipe count once that pipe's earlier work has completed;
* the epilogue with repeat parameters: one Add adds the bias row to every row of the tile, because its src1
  repeat stride is 0 (every repeat re-reads the same 64 bias values); then Relu, Cast fp32 -> fp16 (CAST_RINT)
  and a strided DataCopy UB -> GM into C's rows.

    python examples/05_mix_matmul_bias_relu.py --m 256 --n 256 --k 128 --cores 4 --trace mix.trace.json
The trace shows each AIC and AIV as a process, with arrows for the cross-core flags.
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (ASCEND_IS_AIC, CFG_ROW_MAJOR, PIPE_FIX, PIPE_MTE2, Add, BinaryRepeatParams, Cast,
                                CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyParams, Fixpipe,
                                FixpipeParamsV220, GetBlockIdx, GetBlockNum, GlobalTensor, HardEvent, Mmad, MmadParams,
                                QuantMode_t, Relu, RoundMode, SetFlag, TBuf, TPipe, TPosition, TQue, WaitFlag)
from ascend_sim.machine.tensor import GmAddr
from kernels.matmul import copy_nd_to_nz, load_a_zz, load_b_zn

BASE_M, BASE_N = 128, 64  # one tile; a row of 64 fp32 values is one 256-byte vector repeat
TILE_READY, SLOT_FREE = 6, 5  # the cross-core flags (the real dx kernel's SYNC_AIC_AIV_FLAG / SYNC_AIV_AIC_FLAG)


def tiles(m: int, n: int):
    """This AI core's tiles (row, column of the tile's first element), round robin over the AI cores."""
    per_row = n // BASE_N
    for tile in range(GetBlockIdx(), (m // BASE_M) * per_row, GetBlockNum()):
        yield (tile // per_row) * BASE_M, (tile % per_row) * BASE_N


def cube_side(a, b, workspace, m: int, n: int, k: int):
    """The AIC: each tile's A . B into L0C (K in steps of 64), then Fixpipe into this core's workspace slot."""
    a_gm = GlobalTensor(np.float16).SetGlobalBuffer(a, m * k)
    b_gm = GlobalTensor(np.float16).SetGlobalBuffer(b, k * n)
    slot = GlobalTensor(np.float32).SetGlobalBuffer(workspace + GetBlockIdx() * BASE_M * BASE_N * 4,
                                                    BASE_M * BASE_N)
    pipe = TPipe()
    qa1, qb1, qc = TQue(TPosition.A1), TQue(TPosition.B1), TQue(TPosition.CO1)
    pipe.InitBuffer(qa1, 1, BASE_M * k * 2)
    pipe.InitBuffer(qb1, 1, k * BASE_N * 2)
    pipe.InitBuffer(qc, 1, BASE_M * BASE_N * 4)
    l0a, l0b = TBuf(TPosition.A2), TBuf(TPosition.B2)
    pipe.InitBuffer(l0a, BASE_M * 64 * 2)
    pipe.InitBuffer(l0b, 64 * BASE_N * 2)
    # L0A / L0B start out free: TPipe() has set M_MTE1 0 (and 1, 2); the end of the kernel (TPipe's Destroy) waits
    first = True
    for row, col in tiles(m, n):
        a1, b1 = qa1.AllocTensor(np.float16), qb1.AllocTensor(np.float16)
        copy_nd_to_nz(a1, a_gm[row * k], BASE_M, k, k)  # GM -> L1 as NZ fractals (MTE2)
        copy_nd_to_nz(b1, b_gm[col], k, BASE_N, n)
        qa1.EnQue(a1)
        qb1.EnQue(b1)
        a1, b1 = qa1.DeQue(), qb1.DeQue()
        c_l0 = qc.AllocTensor(np.float32)
        for k0 in range(0, k, 64):
            WaitFlag(HardEvent.M_MTE1, 0)  # the previous Mmad has read L0A / L0B: they may be loaded again
            a2, b2 = l0a.Get(np.float16), l0b.Get(np.float16)
            load_a_zz(a2, a1, BASE_M, 64, k0)  # L1 -> L0A (MTE1)
            load_b_zn(b2, b1, k, BASE_N, 64, k0)  # L1 -> L0B, each fractal transposed
            SetFlag(HardEvent.MTE1_M, 0)
            WaitFlag(HardEvent.MTE1_M, 0)
            Mmad(c_l0, a2, b2, MmadParams(BASE_M, BASE_N, 64, cmatrixInitVal=(k0 == 0)))
            SetFlag(HardEvent.M_MTE1, 0)
        qa1.FreeTensor(a1)
        qb1.FreeTensor(b1)
        qc.EnQue(c_l0)
        c_l0 = qc.DeQue()
        if not first:
            CrossCoreWaitFlag(SLOT_FREE)  # the AIV has taken the previous tile out of the slot
        Fixpipe(slot, c_l0, FixpipeParamsV220(nSize=BASE_N, mSize=BASE_M, srcStride=BASE_M, dstStride=BASE_N,
                                              quantPre=QuantMode_t.NoQuant), CFG_ROW_MAJOR)
        CrossCoreSetFlag(2, PIPE_FIX, TILE_READY)  # counts once the Fixpipe has written the slot
        qc.FreeTensor(c_l0)
        first = False
    if not first:
        CrossCoreWaitFlag(SLOT_FREE)  # every set is waited: a flag left counted would fault at the end


def vector_side(bias, workspace, c, m: int, n: int):
    """The AIV: each tile from the slot into UB, + bias, ReLU, to fp16, into C."""
    slot = GlobalTensor(np.float32).SetGlobalBuffer(workspace + GetBlockIdx() * BASE_M * BASE_N * 4,
                                                    BASE_M * BASE_N)
    bias_gm = GlobalTensor(np.float32).SetGlobalBuffer(bias, n)
    c_gm = GlobalTensor(np.float16).SetGlobalBuffer(c, m * n)
    pipe = TPipe()
    qin, qbias, qout = TQue(TPosition.VECIN), TQue(TPosition.VECIN), TQue(TPosition.VECOUT)
    pipe.InitBuffer(qin, 1, BASE_M * BASE_N * 4)
    pipe.InitBuffer(qbias, 1, BASE_N * 4)
    pipe.InitBuffer(qout, 1, BASE_M * BASE_N * 2)
    count = BASE_M * BASE_N
    for row, col in tiles(m, n):
        bias_ub = qbias.AllocTensor(np.float32)
        DataCopy(bias_ub, bias_gm[col], BASE_N)  # this tile's 64 bias values (MTE2)
        qbias.EnQue(bias_ub)
        CrossCoreWaitFlag(TILE_READY)
        x = qin.AllocTensor(np.float32)
        DataCopy(x, slot, count)  # the tile, GM -> UB (MTE2)
        qin.EnQue(x)
        CrossCoreSetFlag(2, PIPE_MTE2, SLOT_FREE)  # counts once MTE2 has read the slot
        x, bias_ub = qin.DeQue(np.float32), qbias.DeQue(np.float32)
        # one repeat per row (64 fp32 = 8 blocks); src1RepStride = 0: every repeat reads the same bias row
        Add(x, x, bias_ub, BASE_N, BASE_M, BinaryRepeatParams(src1RepStride=0))
        qbias.FreeTensor(bias_ub)
        Relu(x, x, count)
        y = qout.AllocTensor(np.float16)
        Cast(y, x, RoundMode.CAST_RINT, count)
        qout.EnQue(y)
        qin.FreeTensor(x)
        y = qout.DeQue(np.float16)
        # BASE_M rows of 64 fp16 (4 blocks) into C, whose rows are n elements apart
        DataCopy(c_gm[row * n + col], y, DataCopyParams(BASE_M, BASE_N * 2 // 32, 0, (n - BASE_N) * 2 // 32))
        qout.FreeTensor(y)


def matmul_bias_relu(a, b, bias, workspace, c, m: int, n: int, k: int):
    """The kernel function both cores of an AI core run."""
    if ASCEND_IS_AIC():
        cube_side(a, b, workspace, m, n, k)
    else:
        vector_side(bias, workspace, c, m, n)


def run(a: np.ndarray, b: np.ndarray, bias: np.ndarray, cores: int, platform="Ascend910B2"):
    (m, k), n = a.shape, b.shape[1]
    chip = Chip(platform)
    ga, gb = GmAddr(chip.gm.upload("a", a)), GmAddr(chip.gm.upload("b", b))
    gbias = GmAddr(chip.gm.upload("bias", bias))
    workspace = GmAddr(chip.gm.alloc("workspace", cores * BASE_M * BASE_N * 4))
    gc = GmAddr(chip.gm.alloc("c", m * n * 2))
    report = chip.launch(matmul_bias_relu, cores, ga, gb, gbias, workspace, gc, m, n, k, kernel_type="MIX_AIC_1_1")
    return chip.gm["c"].data.view(np.float16).reshape(m, n).copy(), report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=256, help=f"rows of A and C (a multiple of {BASE_M})")
    parser.add_argument("--n", type=int, default=256, help=f"columns of B and C (a multiple of {BASE_N})")
    parser.add_argument("--k", type=int, default=128, help="columns of A (a multiple of 64, at most 512)")
    parser.add_argument("--cores", type=int, default=4, help="AI cores (block_dim of the MIX launch)")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace to this path")
    args = parser.parse_args(argv)
    if args.m % BASE_M or args.n % BASE_N or args.k % 64 or not 0 < args.k <= 512 or args.m <= 0 or args.n <= 0:
        parser.error(f"--m must be a multiple of {BASE_M}, --n of {BASE_N}, --k of 64 in (0, 512]")
    if not 1 <= args.cores <= 24:
        parser.error(f"--cores={args.cores} outside [1, 24] (the AI cores of the Ascend910B2)")

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    bias = rng.standard_normal(args.n).astype(np.float32)
    c, report = run(a, b, bias, args.cores)
    reference = np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)
    error = np.abs(c.astype(np.float32) - reference).max()
    ok = np.allclose(c.astype(np.float32), reference, rtol=2e-3, atol=2e-3 * np.sqrt(args.k))
    print(f"C = ReLU(A({args.m}x{args.k}) . B({args.k}x{args.n}) + bias) on {args.cores} AI cores (AIC + AIV): "
          f"check against numpy {'PASSED' if ok else 'FAILED'} (max |diff| {error:.4g})")
    print(report.summary())
    if args.trace:
        report.write_trace(args.trace)
        print(f"trace written to {args.trace}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
