"""Benchmark: the simulated fp16 matmul (full instruction-level run) against numpy's float32 matmul.

    python benchmarks/bench_matmul.py [--sizes 512 1024 2048] [--repeat 3]
Prints, per size: the simulator's wall time (full data run and timing-only run), numpy's, the ratio, and the
instructions simulated per second. Wall times are the best of --repeat runs.
"""
import argparse
import time

import numpy as np

from kernels.matmul import run_matmul


def best_of(repeat, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'size':>6} {'sim full s':>10} {'sim timing s':>12} {'numpy f32 s':>11} {'ratio':>7} "
          f"{'instr':>8} {'instr/s':>9} {'sim cycles':>11}")
    for n in args.sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n)).astype(np.float16)
        b = rng.standard_normal((n, n)).astype(np.float16)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        sim, (_, report) = best_of(args.repeat, lambda: run_matmul(a, b))
        timing, _ = best_of(args.repeat, lambda: run_matmul(a, b, execute=False, check_races=False))
        ref, _ = best_of(args.repeat, lambda: a32 @ b32)
        print(f"{n:>6} {sim:>10.3f} {timing:>12.3f} {ref:>11.4f} {sim / ref:>6.1f}x {report.instructions:>8,} "
              f"{report.instructions / sim:>9,.0f} {report.cycles:>11,.0f}")


if __name__ == "__main__":
    main()
