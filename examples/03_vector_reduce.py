"""Reductions on the vector core: row sums, block sums, a total and an arg-max, checked against numpy.

What it teaches:
* WholeReduceSum: one result per repeat. With fp32 a repeat is 64 elements, so a 32 x 64 matrix gives its 32
  row sums in one instruction (repeatTime 32, srcRepStride 8 blocks = one row, dstRepStride 1 result);
* BlockReduceSum: one result per 32 B DataBlock (8 fp32), 8 per repeat: partial sums of each row;
* two levels: block sums, then WholeReduceSum over them, give the same row sums in another order;
* ReduceSum / ReduceMax (count forms): the total of all elements, and the maximum with its index (stored as
  the bits of an fp32, read back as an integer, as Ascend C's docs show with reinterpret_cast);
* the hardware adds in a binary tree of adjacent pairs, so results differ from numpy's float64 sums by float
  rounding only: the checks use a tolerance.

    python examples/03_vector_reduce.py [--trace TRACE.json]
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (PIPE_V, BlockReduceSum, DataCopy, GlobalTensor, HardEvent, PipeBarrier, ReduceMax,
                                ReduceSum, SetFlag, TBuf, TPipe, TPosition, WaitFlag, WholeReduceSum)
from ascend_sim.machine.tensor import GmAddr

ROWS, COLS = 32, 64  # one fp32 repeat per row
OUT = 256  # result slots (fp32)


def kernel(x_addr, out_addr):
    pipe = TPipe()
    data, work, result = TBuf(TPosition.VECCALC), TBuf(TPosition.VECCALC), TBuf(TPosition.VECCALC)
    pipe.InitBuffer(data, ROWS * COLS * 4)
    pipe.InitBuffer(work, ROWS * COLS * 4)
    pipe.InitBuffer(result, 4 * OUT * 4)
    x, tmp, res = data.Get(np.float32), work.Get(np.float32), result.Get(np.float32)
    DataCopy(x, GlobalTensor(np.float32).SetGlobalBuffer(x_addr), ROWS * COLS)
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)

    row_sums, block_sums, two_level, totals = res[0], res[OUT], res[2 * OUT], res[3 * OUT]
    WholeReduceSum(row_sums, x, 64, ROWS, 1, 1, 8)  # mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride
    BlockReduceSum(block_sums, x, ROWS, 64, 1, 1, 8)  # repeatTime, mask, dstRepStride (x 8 results), strides
    PipeBarrier(PIPE_V)  # the next instruction reads what BlockReduceSum wrote
    # 8 block sums per row: a repeat of mask 8 per row, rows 1 block (8 fp32) apart
    WholeReduceSum(two_level, block_sums, 8, ROWS, 1, 1, 1)
    ReduceSum(totals, x, tmp, ROWS * COLS)
    ReduceMax(totals[8], x, tmp, ROWS * COLS, True)  # [max value, index bits]

    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(out_addr), res, 4 * OUT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace to this path")
    args = parser.parse_args(argv)
    x = np.random.default_rng(0).standard_normal((ROWS, COLS)).astype(np.float32)
    chip = Chip("Ascend910B2")
    out = GmAddr(chip.gm.alloc("out", 4 * OUT * 4))
    report = chip.launch(kernel, 1, GmAddr(chip.gm.upload("x", x)), out, kernel_type="AIV_ONLY")
    res = chip.gm["out"].data.view(np.float32).reshape(4, OUT)
    exact = x.astype(np.float64)

    checks = {
        "WholeReduceSum row sums": np.allclose(res[0, :ROWS], exact.sum(axis=1), rtol=1e-5, atol=1e-5),
        "BlockReduceSum block sums": np.allclose(res[1, :ROWS * 8], exact.reshape(-1, 8).sum(axis=1), rtol=1e-5,
                                                 atol=1e-5),
        "block sums then rows": np.allclose(res[2, :ROWS], exact.sum(axis=1), rtol=1e-5, atol=1e-5),
        "ReduceSum total": abs(res[3, 0] - exact.sum()) < 1e-3,
        "ReduceMax value": res[3, 8] == x.max(),
        "ReduceMax index": int(res[3, 9:10].view(np.uint32)[0]) == int(np.argmax(x)),
    }
    for name, ok in checks.items():
        print(f"{name:26s} {'PASSED' if ok else 'FAILED'}")
    print(f"total {res[3, 0]:.6f} (numpy float64 {exact.sum():.6f}); max {res[3, 8]:.4f} at index "
          f"{int(res[3, 9:10].view(np.uint32)[0])}")
    print(report.summary())
    ok = all(checks.values())
    if args.trace:
        report.write_trace(args.trace)
        print(f"trace written to {args.trace}")
    print("check against numpy", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
