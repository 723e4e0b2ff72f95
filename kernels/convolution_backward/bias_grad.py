"""grad_bias on the vector cores: the sum of gradOutput over N and the spatial axes, one result per channel.

aclnn (CalculateBiasGrad) reshapes gradOutput to (N, C, L) with L = D*H*W, and calls ReduceSum over axes 0 and 2.
On npu_arch 2201, l0op::ReduceSumOp (hicann/ops-math math/reduce_sum/op_api/reduce_sum_op.cpp) launches the AI Core
ReduceSum for float16, float32 and bfloat16; its 2201 kernel and tiling are not in the open sources (only the
arch35 tiling is), so this kernel is our own, in the Ascend C style (a modelling choice, flagged in the run's
notes and in docs/convolution_backward.md):

* the channels are split over the AIV cores (AIV_ONLY launch), a contiguous range per core;
* per channel, DataCopyPad brings rows of gradOutput (N rows of L elements, C*L elements apart in GM) into UB
  through a double-buffered VECIN queue, several rows per copy when L is short, a row in chunks when it is long;
* float16 / bfloat16 rows are Cast to float32 first: the sum is accumulated in float32, as the real ReduceSum
  does for 16-bit inputs; Add accumulates the rows into a float32 vector, ReduceSum folds it to one value;
* the channel results are Cast to the output dtype and DataCopyPad'ed to GM, a batch of channels at a time.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (PIPE_V, Add, Cast, DataCopyPad, Duplicate, GetBlockIdx, GlobalTensor, PipeBarrier,
                                ReduceSum, RoundMode, TBuf, TPipe, TPosition, TQue)
from ascend_sim.isa.vector.datacopy import DataCopyExtParams, DataCopyPadExtParams
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.tensor import GmAddr
from kernels.common.run import Run, output_buffer, read_output
from kernels.common.size_guard import RECORDS_PER_TILE, RunEstimate, conv_estimate

TILE = 4096  # elements per UB tile (float32: 16 KiB)
RESULTS = 2048  # channel results kept in UB before they are written out
ADD_REPEAT = 256 // 4  # float32 elements one Add repeat covers
BLOCK_COUNT_MAX = 4095  # DataCopyPad blockCount


@dataclass(frozen=True)
class BiasGradTiling:
    """Our own tiling for the (N, C, L) -> (C,) reduction (the real ReduceSum tiling is not modelled)."""

    N: int
    C: int
    L: int
    blockDim: int  # AIV cores used
    channelsPerCore: int
    chunkLen: int  # elements of a row per copy (<= TILE)
    rowPitch: int  # elements between rows in UB: chunkLen rounded up to whole float32 Add repeats
    rowsPerCopy: int  # rows (batch entries) per copy, when a whole row fits a tile several times


def bias_grad_tiling(n: int, c: int, length: int, itemsize: int, aiv_cores: int) -> BiasGradTiling:
    chunk = min(length, TILE)
    # Add covers whole 256-byte repeats (the tail repeat masked): a row that ends inside a repeat would have its
    # last repeat span the next buffer, the accumulator, which an earlier repeat of the same Add wrote
    pitch = -(-chunk // ADD_REPEAT) * ADD_REPEAT
    rows = min(n, TILE // pitch, BLOCK_COUNT_MAX) if chunk == length else 1
    per_core = -(-c // min(c, aiv_cores))
    return BiasGradTiling(n, c, length, -(-c // per_core), per_core, chunk, pitch, rows)


def bias_grad_kernel(grad_output, grad_bias, tiling: BiasGradTiling, dtype):
    """What each AIV runs: the sums of channels [first, last) of this core."""
    t = tiling
    first = GetBlockIdx() * t.channelsPerCore
    last = min(first + t.channelsPerCore, t.C)
    size = np.dtype(dtype).itemsize
    widen = np.dtype(dtype) != np.float32
    dy_gm = GlobalTensor(dtype).SetGlobalBuffer(grad_output, t.N * t.C * t.L)
    db_gm = GlobalTensor(dtype).SetGlobalBuffer(grad_bias, t.C)

    pipe = TPipe()
    in_que, out_que = TQue(TPosition.VECIN, 2), TQue(TPosition.VECOUT, 1)
    wide_buf, acc_buf, work_buf, res_buf = (TBuf(TPosition.VECCALC) for _ in range(4))
    pipe.InitBuffer(in_que, 2, TILE * size)
    pipe.InitBuffer(out_que, 1, RESULTS * size)
    for buf in (wide_buf, acc_buf, work_buf):
        pipe.InitBuffer(buf, TILE * 4)
    pipe.InitBuffer(res_buf, RESULTS * 4)
    wide, acc, work, res = (b.Get(np.float32) for b in (wide_buf, acc_buf, work_buf, res_buf))
    for batch in range(first, last, RESULTS):
        count_c = min(RESULTS, last - batch)
        out = out_que.AllocTensor(dtype)
        sums = res if widen else out  # float32 sums go straight into the output tile
        for ch in range(batch, batch + count_c):
            _channel_sum(t, dy_gm, in_que, wide, acc, ch, dtype, widen)
            ReduceSum(sums[ch - batch], acc, work, t.chunkLen)
            PipeBarrier(PIPE_V)
        if widen:
            Cast(out, res, RoundMode.CAST_RINT, count_c)
        out_que.EnQue(out)
        out = out_que.DeQue(dtype)
        DataCopyPad(db_gm[batch], out, DataCopyExtParams(1, count_c * size, 0, 0, 0))
        out_que.FreeTensor(out)


def _channel_sum(t: BiasGradTiling, dy_gm, in_que, wide, acc, ch: int, dtype, widen: bool) -> None:
    """acc[:chunkLen] = the float32 sum of channel ch's rows, chunk position by chunk position."""
    size = np.dtype(dtype).itemsize
    Duplicate(acc, 0.0, t.chunkLen)
    PipeBarrier(PIPE_V)
    for n0 in range(0, t.N, t.rowsPerCopy):
        rows = min(t.rowsPerCopy, t.N - n0)
        for l0 in range(0, t.L, t.chunkLen):
            count = min(t.chunkLen, t.L - l0)
            x = in_que.AllocTensor(dtype)
            # the rows of one channel are C*L elements apart in GM: srcStride is the gap after each row, in bytes;
            # in UB a row starts every rowPitch elements: dstStride is the gap after its 32-byte padded end
            gap_blocks = (t.rowPitch * size - -(-count * size // 32) * 32) // 32
            DataCopyPad(x, dy_gm[(n0 * t.C + ch) * t.L + l0],
                        DataCopyExtParams(rows, count * size, (t.C * t.L - count) * size, gap_blocks, 0),
                        DataCopyPadExtParams(False, 0, 0, 0))
            in_que.EnQue(x)
            x = in_que.DeQue(dtype)
            src = x
            if widen:  # accumulate in float32
                Cast(wide, x, RoundMode.CAST_NONE, rows * t.rowPitch)
                PipeBarrier(PIPE_V)
                src = wide
            for r in range(rows):
                Add(acc, acc, src[r * t.rowPitch], count)
                PipeBarrier(PIPE_V)
            in_que.FreeTensor(x)


def estimate_bias_grad(t: BiasGradTiling, itemsize: int, *, execute: bool = True,
                       check_races: bool = True) -> RunEstimate:
    """What run_bias_grad takes (kernels/common/size_guard.py): grad_output and grad_bias in GM and the records of
    its copies, each a DataCopyPad, its queue flags, a Cast and one Add and barrier per row (our own count)."""
    copies = t.C * -(-t.N // t.rowsPerCopy) * -(-t.L // t.chunkLen)
    records = copies * (5 + 2 * t.rowsPerCopy)
    return conv_estimate((t.N * t.C * t.L * itemsize,), t.C * itemsize, tiles=-(-records // RECORDS_PER_TILE),
                         cores=t.blockDim, execute=execute, check_races=check_races)


def run_bias_grad(grad_output: np.ndarray, *, platform="Ascend910B2", execute: bool = True,
                  check_races: bool = True, hooks=None, engine: str = "auto") -> Run:
    """grad_bias of grad_output (N, C, spatial...) on the simulated AIV cores: a (C,) array of its dtype."""
    dtype = grad_output.dtype
    if dtype not in DTYPES.values():
        raise TypeError(f"grad_output.dtype={dtype} is not supported; allowed: {sorted(DTYPES)}")
    n, c = grad_output.shape[:2]
    length = int(np.prod(grad_output.shape[2:], dtype=np.int64))
    chip = Chip(platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine)
    tiling = bias_grad_tiling(n, c, length, dtype.itemsize, chip.platform.aiv_cores)
    dy_gm = chip.gm.place("grad_output", (grad_output.size,), dtype,
                          lambda: np.ascontiguousarray(grad_output).reshape(-1))
    db_gm = output_buffer(chip, "grad_bias", (c,), dtype, True)  # a channel the kernel misses shows up
    report = chip.launch(bias_grad_kernel, tiling.blockDim, GmAddr(dy_gm), GmAddr(db_gm), tiling, dtype,
                         kernel_type="AIV_ONLY")
    return Run(read_output(chip, db_gm, (c,), dtype), tiling, report)
