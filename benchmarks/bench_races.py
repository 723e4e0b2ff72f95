"""Benchmark: the race checks of a full dx run, Python (races.py) against compiled (fast_races.py), and the full run.

    python benchmarks/bench_races.py [--repeat 3] [--only NAME ...] [--runs-only]

Per layer of bench_conv3d_dx.py (fp16): CPU seconds (time.process_time) and wall seconds of the full run (data
moved, races checked) on the fast engine, best of --repeat (the first run of a process also loads numba's
compiled functions: use --repeat 2 or more). Then, on the records and schedule order of the last run, the race
checks alone, best of --repeat, with the garbage collector paused as in a launch: the Python checkers
(races.first_fault) and the compiled ones (fast_races: encoding the records, then the compiled pass), which must
find the same (no race). --runs-only skips them (to time a tree without fast_races.py: PYTHONPATH=that tree).
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from bench_conv3d_dx import LAYERS, dy_shape
from timing import selected_layers

from ascend_sim.engine import fast_engine
from kernels import conv3d_backprop_input_v2_run


def _best(repeat, fn, collect: bool = True):
    """(best CPU seconds, best wall seconds, the last result) over `repeat` calls. collect=False: with the
    garbage collector paused, as it is while a launch runs its passes (Chip.launch)."""
    cpu, wall, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        out = None
        gc.collect()
        if not collect:
            gc.disable()
        try:
            c, w = time.process_time(), time.perf_counter()
            out = fn()
            cpu, wall = min(cpu, time.process_time() - c), min(wall, time.perf_counter() - w)
        finally:
            gc.enable()
    return cpu, wall, out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--runs-only", action="store_true", help="time the full runs only")
    args = parser.parse_args(argv)
    print(f"{'layer':<24} {'instr':>8} {'full cpu s':>10} {'full wall s':>11}"
          + ("" if args.runs_only else f" {'races py s':>10} {'compiled s':>10} {'(encode s)':>10} {'speed-up':>8}"))
    for layer in selected_layers(LAYERS, args.only):
        rng = np.random.default_rng(0)
        dy = rng.standard_normal(dy_shape(layer)).astype(np.float16)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(np.float16)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW")
        seen = []
        check = getattr(fast_engine, "_no_race", None)  # None on a tree without compiled race checks

        def keep(chip, records, s):  # what the last run's race check was given
            seen[:] = [chip, records, s]
            return check(chip, records, s)
        if not args.runs_only:
            fast_engine._no_race = keep
        try:
            cpu, wall, run = _best(args.repeat, lambda: conv3d_backprop_input_v2_run(layer.x, w, dy, engine="fast",
                                                                                      **common))
        finally:
            if not args.runs_only:
                fast_engine._no_race = check
        line = f"{layer.name:<24} {run.report.instructions:>8,} {cpu:>10.3f} {wall:>11.3f}"
        if not args.runs_only:
            from ascend_sim.passes import fast_races
            from ascend_sim.passes.races import first_fault

            chip, records, s = seen
            n_cores, granule = len(chip.cores), chip.gm_races.granule
            python, _, found = _best(args.repeat, lambda: first_fault(records, s.order.tolist(), n_cores, granule),
                                     collect=False)
            compiled, _, again = _best(args.repeat, lambda: fast_races.first_race(records, s, granule), collect=False)
            encode, _, _ = _best(args.repeat, lambda: fast_races.encode([fast_races.accesses(records)], s, granule), collect=False)
            assert found[0] == again == fast_races.CLEAN, f"{layer.name}: the checkers disagree or found a race"
            line += f" {python:>10.3f} {compiled:>10.3f} {encode:>10.3f} {python / compiled:>7.1f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
