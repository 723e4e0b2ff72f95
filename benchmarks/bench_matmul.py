"""Benchmark: the simulated fp16 matmul (full instruction-level run) against numpy's float32 matmul.

    python benchmarks/bench_matmul.py [--sizes 512 1024 2048] [--repeat 3]
Prints, per size: the simulator's wall time (full data run and timing-only run), numpy's, the ratio, the
instructions simulated per second and the cost per instruction in each mode. Wall times are the best of --repeat
runs. The simulator runs with OpenBLAS on one thread (the Chip default, see ascend_sim/machine/blas.py); the numpy
reference uses OpenBLAS as it is.
"""
import argparse

import numpy as np
from timing import best_of

from ascend_sim.machine.blas import blas_thread_count
from kernels.matmul import run_matmul


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"OpenBLAS threads: {blas_thread_count()} for numpy, 1 inside the simulator; best of {args.repeat}")
    print(f"{'size':>6} {'sim full s':>10} {'sim timing s':>12} {'numpy f32 s':>11} {'ratio':>7} "
          f"{'instr':>8} {'instr/s':>9} {'us/instr full':>13} {'us/instr timing':>15} {'sim cycles':>11}")
    for n in args.sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        sim, run = best_of(args.repeat, lambda: run_matmul(a, b))
        report = run.report
        timing, _ = best_of(args.repeat, lambda: run_matmul(a, b, execute=False, check_races=False))
        ref, _ = best_of(args.repeat, lambda: a32 @ b32)
        count = report.instructions
        print(f"{n:>6} {sim:>10.3f} {timing:>12.3f} {ref:>11.4f} {sim / ref:>6.1f}x {count:>8,} "
              f"{count / sim:>9,.0f} {sim / count * 1e6:>13.2f} {timing / count * 1e6:>15.2f} {report.cycles:>11,.0f}")


if __name__ == "__main__":
    main()
