"""Benchmark: RunReport.retime with the exact scheduler against the fast engine's compiled pass.

    python benchmarks/bench_retime.py [--repeat 5] [--layer "C3D conv3a"]

Runs one dx layer of bench_conv3d_dx.py in timing-only mode (default the C3D conv3a layer: 128 -> 256 channels,
8x28x28, 3x3x3), then retimes its recorded streams on a slower platform with both engines in the same process,
best of --repeat each, checks that the reports are the same, and prints both times and their ratio. The fast
engine's first call (importing numba and loading or compiling its functions) is timed apart; the part of a fast
retime spent turning the streams into arrays (costs included) is printed too.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from bench_conv3d_dx import LAYERS, dy_shape
from timing import best_of

from ascend_sim.machine.platform import get_platform
from ascend_sim.passes import fast_schedule
from kernels import conv3d_backprop_input_v2_run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--layer", default="C3D conv3a", choices=[layer.name for layer in LAYERS])
    args = parser.parse_args(argv)
    layer = next(layer for layer in LAYERS if layer.name == args.layer)
    dy = np.zeros(dy_shape(layer), np.float16)
    w = np.zeros((layer.cout, layer.x[1] // layer.groups, *layer.kernel), np.float16)
    run = conv3d_backprop_input_v2_run(layer.x, w, dy, strides=(1, 1, *layer.stride), pads=layer.pads,
                                       groups=layer.groups, data_format="NCDHW", execute=False, check_races=False)
    report = run.report
    platform = get_platform("Ascend910B2").with_overrides(rates={"gm_to_l1": 32.0, "mte1_overhead": 20},
                                                          queue_depth=16)
    start = time.perf_counter()
    first = report.retime(platform, engine="fast")
    first_call = time.perf_counter() - start
    exact_s, exact = best_of(args.repeat, lambda: report.retime(platform, engine="exact"))
    fast_s, fast = best_of(args.repeat, lambda: report.retime(platform, engine="fast"))
    same = exact.to_dict() == fast.to_dict() == first.to_dict() and all(
        [(r.issue, r.start, r.end) for r in e] == [(r.issue, r.start, r.end) for r in f]
        for e, f in zip(exact.logs, fast.logs))
    kinds, groups = [c.kind for c in report.cores], [c.group for c in report.cores]
    encode_s, _ = best_of(args.repeat, lambda: fast_schedule.encode(report.logs, kinds, groups, platform))
    print(f"{layer.name}: {report.instructions:,} records on {len(report.cores)} cores, retimed on {platform.name} "
          f"({exact.cycles:,.0f} cycles); best of {args.repeat}")
    print(f"exact retime  {exact_s * 1e3:8.1f} ms")
    print(f"fast retime   {fast_s * 1e3:8.1f} ms  (of which streams -> arrays and costs {encode_s * 1e3:.1f} ms; "
          f"first call {first_call:.2f} s with numba's import and compile or cache load)")
    print(f"exact / fast  {exact_s / fast_s:8.2f}x   reports identical: {same}")
    if not same:
        raise SystemExit("the fast retime differs from the exact one")


if __name__ == "__main__":
    main()
