"""Example 4: a multi-core tiled fp16 matmul on the simulated cube, checked against numpy.

The kernel is kernels/matmul/kernel/matmul_kernel.py: read it beside this script. It shows the whole cube data path:
GM -> L1 (DataCopy with Nd2Nz), L1 -> L0A/L0B (LoadData 2D, transposing B), Mmad accumulating over K in L0C,
Fixpipe L0C -> GM (F322F16, NZ2ND), with double-buffered L1 queues and ping-pong L0 halves.

    python examples/04_matmul_cube.py --m 512 --n 512 --k 256 --trace matmul.trace.json
Open the trace in https://ui.perfetto.dev (one process per core, one thread per pipe).
"""
import argparse
import time

import numpy as np

from kernels.matmul import MatmulTiling, run_matmul


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=512)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--k", type=int, default=256)
    parser.add_argument("--base", type=int, nargs=3, default=(128, 128, 64), metavar=("M", "N", "K"))
    parser.add_argument("--step-k", type=int, default=4, help="baseK slices per L1 load")
    parser.add_argument("--cores", type=int, default=None, help="block_dim (default: one per tile, at most all)")
    parser.add_argument("--platform", default="Ascend910B2")
    parser.add_argument("--trace", help="write a Chrome/Perfetto trace to this path")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.m, args.k)).astype(np.float16)
    b = rng.standard_normal((args.k, args.n)).astype(np.float16)
    tiling = MatmulTiling(args.m, args.n, args.k, *args.base, stepK=args.step_k)
    wall = time.perf_counter()
    run = run_matmul(a, b, platform=args.platform, block_dim=args.cores, tiling=tiling)
    c, report = run.result, run.report
    wall = time.perf_counter() - wall

    reference = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    error = np.abs(c.astype(np.float32) - reference.astype(np.float32)).max()
    ok = np.allclose(c.astype(np.float32), reference.astype(np.float32), rtol=2e-3, atol=2e-3 * np.sqrt(args.k))
    print(f"C = A({args.m}x{args.k}) . B({args.k}x{args.n}) fp16: check against numpy "
          f"{'PASSED' if ok else 'FAILED'} (max |diff| {error:.4g})")
    print(report.summary())
    print(f"simulated in {wall:.2f} s ({report.instructions / wall:,.0f} instructions/s)")
    if args.trace:
        report.write_trace(args.trace)
        print(f"trace written to {args.trace}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
