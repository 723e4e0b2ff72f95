"""Benchmark: where a full dx run (data moved, races checked) spends its CPU outside the data pass's records, part
by part, from the operator's call to the result.

    python benchmarks/bench_full_parts.py [--repeat 5] [--only NAME ...]

Per layer of benchmarks/bench_conv3d_dx.py (its operands, the default engine "auto", numba loaded first as in
that benchmark's process after C3D), the CPU seconds (time.process_time) of the run with the parts below timed
from outside (bench_replay_parts.Parts: each part's time without the timed parts inside it), best of --repeat runs
by total after a warm-up run:
- the host side: the operand checks, plan and tiling (the operator's call outside every other part); the host
  conversions of dy and the weights to the device formats (NDC1HWC0, FRACTAL_Z_3D; the matmul route: the
  operands' casts) and their copy into GM; the output's allocation and NaN fill; the result's conversion back
  (the matmul route's permute to dx included);
- the chip and its cores made (Chip, AICore: every core's buffers), the report, the cores released;
- the launch's kernel Python with its real records, the templates and hits (bench_replay_parts' parts), the lazy
  schedule;
- the race checks: their set-up (race_free's walk of the streams, the blocks' accesses moved), the records'
  encoding (fast_races.accesses), the compiled pass's arrays (encode), its shadows' allocation (first_race_of)
  and the pass itself (_first_race);
- the data pass: its set-up (run_semantics: the per-record lists, operands, L0C chain flags) apart from the data
  work in run_in_order, split into the planned runs (RunPlan.compiled, RunPlan.run) and the rest (the records run
  one by one and the L0C chains' stores).
The timers add about 1 us a timed call.

--floor also prints each layer's GEMM floor: the run's Mmads alone, as `a @ b` of float32 operands of their
padded shapes (m1*16 x k x n1*16, a GEMV 1 x k x n1*16) one at a time in the run's order, on one BLAS thread (the
simulator's default), best of --repeat (the way the R3D stem's floor was measured, docs/performance.md).
"""
from __future__ import annotations

import argparse
import time
from collections import Counter

import numba  # noqa: F401 (loaded first: "auto" then takes the compiled passes, as in bench_conv3d_dx after C3D)
import numpy as np
from bench_conv3d_dx import LAYERS
from bench_replay import _operator_run
from bench_replay_parts import Parts, instrument
from timing import selected_layers

import kernels.common.run as run_module
import kernels.conv3d_backprop_input.operator as dx_operator
import kernels.matmul as matmul_package
import kernels.matmul.operator as matmul_operator
from ascend_sim.engine import chip as chip_module
from ascend_sim.engine import core as core_module
from ascend_sim.engine import replay_data, replay_passes
from ascend_sim.machine import memory
from ascend_sim.machine.blas import blas_threads
from ascend_sim.passes import fast_races

HOST = "host side: checks, plan, tiling"
DATA_REST = "data pass: the records one by one, L0C chains"


def instrument_full(parts: Parts) -> None:
    """bench_replay_parts.instrument's parts, and those of a full run outside the data pass's records."""
    instrument(parts)
    timed = parts.timed
    for module in (dx_operator, matmul_operator):
        module.output_buffer = timed("host: output allocated, NaN filled", module.output_buffer)
        module.read_output = timed("host: result read back", run_module.read_output)
    dx_operator.ncdhw_to_ndc1hwc0 = timed("host: dy -> NDC1HWC0", dx_operator.ncdhw_to_ndc1hwc0)
    dx_operator.filter_to_fractal_z_3d = timed("host: weights -> FRACTAL_Z_3D", dx_operator.filter_to_fractal_z_3d)
    matmul_package.run_matmul = timed("host: matmul operator (checks, tiling, casts)", matmul_package.run_matmul)
    memory.GlobalMemory.upload = timed("host: GM allocated and filled", memory.GlobalMemory.upload)
    memory.GlobalMemory.alloc = timed("host: GM allocated", memory.GlobalMemory.alloc)
    chip_module.Chip.__init__ = timed("chip made", chip_module.Chip.__init__)
    core_module.AICore.release = timed("cores released", core_module.AICore.release)
    replay_passes.race_free = timed("races: set-up (walk, blocks moved)", replay_passes.race_free)
    fast_races.accesses = timed("races: encoding (fast_races.accesses)", fast_races.accesses)
    fast_races.first_race_of = timed("races: the shadows allocated (first_race_of)", fast_races.first_race_of)
    fast_races.encode = timed("races: arrays for the pass (fast_races.encode)", fast_races.encode)
    fast_races._first_race = timed("races: the compiled pass (_first_race)", fast_races._first_race)
    replay_passes.run_semantics = timed("data pass: set-up (run_semantics)", replay_passes.run_semantics)
    replay_data.run_in_order = timed(DATA_REST, replay_data.run_in_order)
    replay_data.RunPlan.compiled = staticmethod(timed("data pass: plans compiled", replay_data.RunPlan.compiled))
    replay_data.RunPlan.run = timed("data pass: planned runs", replay_data.RunPlan.run)


def mmad_shapes(report) -> list:
    """(m, k, n) of every Mmad of the run's records, padded as the cube multiplies them, in the cores' order."""
    return [(1 if r.args.gemv else r.args.m1 * 16, r.args.k, r.args.n1 * 16)
            for log in report.logs for r in log if r.name == "Mmad"]


def gemm_floor(shapes: list, repeat: int) -> float:
    """Best CPU seconds of `a @ b` for every shape of `shapes` in turn (float32, one BLAS thread)."""
    rng = np.random.default_rng(0)
    operands = {shape: (rng.standard_normal(shape[:2], np.float32), rng.standard_normal(shape[1:], np.float32))
                for shape in set(shapes)}
    pairs = [operands[shape] for shape in shapes]
    best = float("inf")
    with blas_threads(1):
        for _ in range(repeat):
            start = time.process_time()
            for a, b in pairs:
                a @ b
            best = min(best, time.process_time() - start)
    return best


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--floor", action="store_true", help="also time each layer's GEMM floor")
    parser.add_argument("--op", choices=("dx", "dw", "conv3d"), default="dx",
                        help="the operator (default dx; dw and conv3d: the host parts are not split)")
    args = parser.parse_args(argv)
    parts = Parts()
    instrument_full(parts)
    layers = selected_layers(LAYERS, args.only)
    for layer in layers:
        run = parts.timed(HOST, _operator_run(args.op, layer))
        run()
        total, result, seconds, calls = parts.best_of(args.repeat, run)
        print(f"{layer.name}: {result.report.instructions:,} instructions, full run {total * 1e3:.1f} ms of CPU "
              f"(best of {args.repeat})")
        for label, spent in sorted(seconds.items(), key=lambda item: -item[1]):
            print(f"  {label:<56} {spent * 1e3:7.2f} ms {100 * spent / total:5.1f} %  {calls[label]:>6} calls")
        if args.floor:
            shapes = mmad_shapes(result.report)
            floor = gemm_floor(shapes, args.repeat)
            common = ", ".join(f"{count:,} of {m} x {k} x {n}" for (m, k, n), count in Counter(shapes).most_common(3))
            print(f"  GEMM floor: {len(shapes):,} Mmads ({common}) {floor * 1e3:.1f} ms; the full run is "
                  f"{total / floor:.1f}x its floor")


if __name__ == "__main__":
    main()
