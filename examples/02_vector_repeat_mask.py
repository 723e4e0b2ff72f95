"""Repeats, strides and masks of the vector instructions, each checked against numpy.

One vector instruction processes `repeatTime` repeats; a repeat reads 8 DataBlocks of 32 B (128 fp16 or 64
fp32 elements) per operand. Per operand, blkStride is the distance between the 8 blocks of one repeat and
repStride the distance between the first blocks of consecutive repeats, both in 32 B blocks. The mask picks
elements inside every repeat: a count (the first m) or 128 bits (uint64_t mask[2] = [low, high]). In Counter
mode (SetMaskCount) the mask is instead the total element count and repeatTime is ignored.

The matrix here is 16 rows x 256 fp16 in UB (512 B = 16 blocks per row):
  1. Muls on the left half of every row: 16 repeats, repStride 16 (one row apart), blkStride 1;
  2. Adds with mask 100: only the first 100 elements of each repeat, a tail without a second instruction;
  3. Abs with a bit mask 0x5555...: every other element;
  4. Counter mode: Adds over 300 elements, repeatTime ignored (what the count form Adds(dst, src, s, 300) does);
  5. Add with strides: dst reads every other block of src0 (blkStride 2).

    python examples/02_vector_repeat_mask.py [--trace TRACE.json]
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (MASK_PLACEHOLDER, Abs, Add, Adds, BinaryRepeatParams, DataCopy, GlobalTensor, HardEvent,
                                Muls, ResetMask, SetFlag, SetMaskCount, SetMaskNorm, SetVectorMask, TBuf, TPipe,
                                TPosition, UnaryRepeatParams, WaitFlag)
from ascend_sim.machine.tensor import GmAddr

ROWS, COLS = 16, 256
N = ROWS * COLS


def kernel(x_addr, out_addr):
    pipe = TPipe()
    buf = TBuf(TPosition.VECCALC)
    pipe.InitBuffer(buf, 6 * N * 2)
    ub = buf.Get(np.float16)
    x, outs = ub[0], [ub[(k + 1) * N] for k in range(5)]
    x_gm = GlobalTensor(np.float16).SetGlobalBuffer(x_addr)
    out_gm = GlobalTensor(np.float16).SetGlobalBuffer(out_addr)
    DataCopy(x, x_gm, N)
    for k in range(5):
        DataCopy(outs[k], x_gm, N)  # each result starts as a copy of x: untouched elements stay x
    SetFlag(HardEvent.MTE2_V, 0)
    WaitFlag(HardEvent.MTE2_V, 0)

    # 1. the left 128 columns of each row: one repeat per row, rows 16 blocks apart
    Muls(outs[0], x, np.float16(2.0), 128, ROWS, UnaryRepeatParams(1, 1, 16, 16))
    # 2. a count mask: the first 100 elements of each of the 32 repeats (8 blocks each, contiguous)
    Adds(outs[1], x, np.float16(10.0), 100, 2 * ROWS, UnaryRepeatParams())
    # 3. a bit mask: elements 0, 2, 4, ... of every repeat
    Abs(outs[2], x, [0x5555555555555555, 0x5555555555555555], 2 * ROWS, UnaryRepeatParams())
    # 4. Counter mode: 300 elements whatever repeatTime says
    SetMaskCount()
    SetVectorMask(0, 300)
    Adds(outs[3], x, np.float16(-1.0), MASK_PLACEHOLDER, 1, UnaryRepeatParams(), isSetMask=False)
    SetMaskNorm()
    ResetMask()
    # 5. src0 blocks 2 apart: repeat r reads blocks 16r, 16r+2, ..., 16r+14 of x; src1 and dst contiguous
    Add(outs[4], x, x, 128, ROWS, BinaryRepeatParams(1, 2, 1, 8, 16, 8))

    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    DataCopy(out_gm, outs[0], 5 * N)


def expected(x: np.ndarray) -> list[np.ndarray]:
    """The same five results with numpy indexing."""
    rows = x.reshape(ROWS, COLS)
    r1 = rows.copy()
    r1[:, :128] = rows[:, :128] * np.float16(2.0)
    r2 = x.reshape(-1, 128).copy()
    r2[:, :100] += np.float16(10.0)
    r3 = x.copy()
    r3[0::2] = np.abs(x[0::2])
    r4 = x.copy()
    r4[:300] += np.float16(-1.0)
    r5 = x.copy()
    blocks = x.reshape(-1, 16)  # 32 B blocks of 16 fp16
    src0 = np.stack([blocks[16 * r + 2 * b] for r in range(ROWS) for b in range(8)]).reshape(ROWS, 128)
    r5[:ROWS * 128] = src0.reshape(-1) + x[:ROWS * 128]  # dst and src1: 16 contiguous repeats of 128
    return [r1.reshape(-1), r2.reshape(-1), r3, r4, r5.reshape(-1)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace to this path")
    args = parser.parse_args(argv)
    x = (np.random.default_rng(0).standard_normal(N) * 4).astype(np.float16)
    chip = Chip("Ascend910B2")
    out = GmAddr(chip.gm.alloc("out", 5 * N * 2))
    report = chip.launch(kernel, 1, GmAddr(chip.gm.upload("x", x)), out, kernel_type="AIV_ONLY")
    got = chip.gm["out"].data.view(np.float16).reshape(5, N)
    names = ["Muls, repStride 16", "Adds, mask 100", "Abs, bit mask", "Adds, Counter mode 300", "Add, blkStride 2"]
    ok = True
    for name, want, have in zip(names, expected(x), got):
        same = np.array_equal(have, want)
        ok &= same
        print(f"{name:24s} {'PASSED' if same else 'FAILED'}")
    for rec in report.logs[0]:
        if rec.pipe.name == "V" and rec.args is not None:
            p, regs = rec.params, dict(rec.registers)
            strides = " ".join(f"{f}={getattr(p, f)}" for f in p._fields if f.endswith("Stride"))
            high, low = regs["vector_mask"]
            print(f"  {rec.name:5s} {rec.end - rec.start:3.0f} cycles  {strides}  {regs['mask_mode']} mask "
                  f"{high:#x}:{low:#x}")
    if args.trace:
        report.write_trace(args.trace)
        print(f"trace written to {args.trace}")
    print("check against numpy", "PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
