"""Vector add on the AIV: z = x + y over many cores, tile by tile, with double-buffered queues.

What it teaches (put it beside Ascend C's add_custom sample):
* an AIV_ONLY launch: each vector core takes its share of the elements, found from GetBlockIdx();
* TPipe / TQue: VECIN queues for x and y, a VECOUT queue for z. EnQue / DeQue / AllocTensor / FreeTensor are
  the MTE2 -> V, V -> MTE3 flags (and back) of the hardware, not function calls that move data;
* the three stages of every tile: CopyIn (DataCopy GM -> UB on MTE2), Compute (Add on PIPE_V), CopyOut
  (DataCopy UB -> GM on MTE3);
* double buffering: with two buffers per queue the next tile's copies overlap this tile's compute. Run with
  --buffers 1 and compare the cycles and the pipe utilisation.

    python examples/01_vector_add.py --n 65536 --cores 8 --tile 2048 --buffers 2 --trace add.trace.json
"""
import argparse

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import Add, DataCopy, GetBlockIdx, GetBlockNum, GlobalTensor, TPipe, TPosition, TQue
from ascend_sim.machine.tensor import GmAddr


def add_kernel(x, y, z, total: int, tile: int, buffers: int):
    """The kernel: what each AIV runs (Ascend C's KernelAdd: Init, then Process = CopyIn/Compute/CopyOut)."""
    per_core = total // GetBlockNum()
    offset = GetBlockIdx() * per_core
    x_gm = GlobalTensor(np.float16).SetGlobalBuffer(x + offset * 2, per_core)
    y_gm = GlobalTensor(np.float16).SetGlobalBuffer(y + offset * 2, per_core)
    z_gm = GlobalTensor(np.float16).SetGlobalBuffer(z + offset * 2, per_core)

    pipe = TPipe()
    in_x, in_y = TQue(TPosition.VECIN, buffers), TQue(TPosition.VECIN, buffers)
    out_z = TQue(TPosition.VECOUT, buffers)
    for que in (in_x, in_y, out_z):
        pipe.InitBuffer(que, buffers, tile * 2)  # `buffers` tiles of fp16 in UB

    for i in range(per_core // tile):
        # CopyIn: GM -> UB on MTE2; EnQue = SetFlag(MTE2_V)
        x_ub, y_ub = in_x.AllocTensor(np.float16), in_y.AllocTensor(np.float16)
        DataCopy(x_ub, x_gm[i * tile], tile)
        DataCopy(y_ub, y_gm[i * tile], tile)
        in_x.EnQue(x_ub)
        in_y.EnQue(y_ub)
        # Compute: DeQue = WaitFlag(MTE2_V); Add on PIPE_V; FreeTensor = SetFlag(V_MTE2) for the next CopyIn
        x_ub, y_ub = in_x.DeQue(np.float16), in_y.DeQue(np.float16)
        z_ub = out_z.AllocTensor(np.float16)
        Add(z_ub, x_ub, y_ub, tile)
        out_z.EnQue(z_ub)
        in_x.FreeTensor(x_ub)
        in_y.FreeTensor(y_ub)
        # CopyOut: DeQue = WaitFlag(V_MTE3); UB -> GM on MTE3
        z_ub = out_z.DeQue(np.float16)
        DataCopy(z_gm[i * tile], z_ub, tile)
        out_z.FreeTensor(z_ub)


def run_add(x: np.ndarray, y: np.ndarray, cores: int, tile: int, buffers: int, platform="Ascend910B2"):
    chip = Chip(platform)
    gx, gy = GmAddr(chip.gm.upload("x", x)), GmAddr(chip.gm.upload("y", y))
    gz = GmAddr(chip.gm.alloc("z", x.nbytes))
    report = chip.launch(add_kernel, cores, gx, gy, gz, x.size, tile, buffers, kernel_type="AIV_ONLY")
    return chip.gm["z"].data.view(np.float16).copy(), report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=32768, help="elements (a multiple of cores x tile)")
    parser.add_argument("--cores", type=int, default=4, help="vector cores (block_dim of an AIV_ONLY launch)")
    parser.add_argument("--tile", type=int, default=2048, help="elements per tile (a multiple of 16)")
    parser.add_argument("--buffers", type=int, default=2, choices=(1, 2), help="buffers per queue")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace to this path")
    args = parser.parse_args(argv)
    if args.n % (args.cores * args.tile) or args.tile % 16:
        parser.error("--n must be a multiple of --cores x --tile, and --tile a multiple of 16")

    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.n).astype(np.float16)
    y = rng.standard_normal(args.n).astype(np.float16)
    z, report = run_add(x, y, args.cores, args.tile, args.buffers)
    ok = np.array_equal(z, x + y)  # fp16 addition rounds once: numpy gives the same bits
    print(f"z = x + y, {args.n} fp16 elements on {args.cores} AIVs, tiles of {args.tile}, "
          f"{args.buffers} buffer(s) per queue: check against numpy {'PASSED' if ok else 'FAILED'}")
    print(report.summary())
    if args.trace:
        report.write_trace(args.trace)
        print(f"trace written to {args.trace}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
