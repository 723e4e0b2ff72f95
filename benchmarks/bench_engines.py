"""Benchmark: the exact and the fast engine on the dx benchmark's layers, in the same process, runs alternated.

    python benchmarks/bench_engines.py [--repeat 3] [--only NAME ...] [--timing-only]

Per layer: CPU seconds (best of --repeat) of the timing-only run (no data, no race checks) and of the full run
(data and race checks) on each engine, and the speed-up exact / fast. Both engines must agree on the cycles and
the result bytes; the script stops if they do not.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from bench_conv3d_dx import LAYERS, dy_shape

from kernels import conv3d_backprop_input_v2_run


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--timing-only", action="store_true", help="skip the full runs")
    args = parser.parse_args(argv)
    modes = {"timing": dict(execute=False, check_races=False)}
    if not args.timing_only:
        modes["full"] = {}
    print(f"{'layer':<24} {'mode':<7} {'instr':>8} {'exact s':>8} {'fast s':>8} {'speed-up':>8}")
    for layer in LAYERS:
        if args.only and not any(word.lower() in layer.name.lower() for word in args.only):
            continue
        rng = np.random.default_rng(0)
        dy = rng.standard_normal(dy_shape(layer)).astype(np.float16)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(np.float16)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW")
        for mode, options in modes.items():
            best = {"exact": float("inf"), "fast": float("inf")}
            runs = {}
            for _ in range(args.repeat):
                for engine in best:  # alternated, so that a busy machine slows both alike
                    seconds, runs[engine] = _cpu(lambda: conv3d_backprop_input_v2_run(
                        layer.x, w, dy, engine=engine, **common, **options))
                    best[engine] = min(best[engine], seconds)
            exact, fast = runs["exact"], runs["fast"]
            assert exact.report.cycles == fast.report.cycles, f"{layer.name}: the engines' cycles differ"
            if exact.result is not None:
                assert exact.result.tobytes() == fast.result.tobytes(), f"{layer.name}: the engines' results differ"
            print(f"{layer.name:<24} {mode:<7} {exact.report.instructions:>8,} {best['exact']:>8.3f} "
                  f"{best['fast']:>8.3f} {best['exact'] / best['fast']:>7.2f}x")


if __name__ == "__main__":
    main()
