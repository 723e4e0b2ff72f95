"""Benchmark: the tiling lab's throughput on C3D conv3a, bound pruning off, and one candidate's whole cost.

    python benchmarks/bench_lab_throughput.py [--budget 40] [--workers 2] [--seed 0] [--engine auto]
                                              [--profile N] [--no-sweep]

The sweep: `sweep(Conv3dDxTarget(C3D conv3a), search="random", budget=--budget, workers=--workers, prune=False)`,
i.e. `ascend-sim sweep conv3d-dx --cin 128 --cout 256 --dhw 8,28,28 --search random --no-prune` (fp16, NCDHW,
Ascend910B2): random legal candidates, every one simulated timing-only on --engine. Prints the wall time,
candidates/s, the time 1000 candidates would take at that rate, and the CPU seconds of the runs in the workers
(time.process_time per candidate, summed).

--profile N: the cost of one candidate, part by part, in this process (CPU seconds, best of 3, after a warm-up
run): drawing the point (the legal space's random descent), preparing it in the calling process (the tiling with
the point's fields, the validator, buffer usage, the analytical estimate), and in the worker: the plan (argument
checks, the generator, the overrides validated), the run (chip setup and the simulation, plan included), the
report's columns, the bound pipe's idle split (the slowest cube core's timing, read from the schedule without
making a replayed run's records) and the row pickled back (the IPC). N candidates of the sweep's draw, the generator's first.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from frontends.cli.conv_problem import CliProblem  # noqa: E402
from frontends.lab.conv3d_dx import Conv3dDxTarget, _bound_pipe_idle  # noqa: E402
from frontends.lab.sweep import sweep  # noqa: E402
from frontends.lab.target import report_columns  # noqa: E402
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run  # noqa: E402

C3D_CONV3A = CliProblem(batch=1, cin=128, cout=256, dhw=(8, 28, 28), kernel=(3, 3, 3), stride=(1, 1, 1),
                        pad=(1,) * 6, dilation=(1, 1, 1), groups=1, dtype="float16", platform="Ascend910B2",
                        hf32=False)


def cpu_best(fn, repeat: int = 3):
    """(best CPU seconds of `repeat` calls, the last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def profile_candidate(target: Conv3dDxTarget, point: dict, engine: str) -> dict[str, float]:
    """CPU seconds of each part of one candidate (see the module's doc)."""
    p = target.problem
    overrides = target.overrides(point) or None
    weight, dy = target.operands()

    def run():
        return conv3d_backprop_input_v2_run(p.dx_shape, weight, dy, execute=False, check_races=False, engine=engine,
                                            route="v2", tiling_overrides=overrides, **p.operator_arguments())

    run()  # warm: the compiled scheduler loaded, the modules imported
    parts = {"prepare (calling process)": cpu_best(lambda: target.prepare(point))[0],
             "plan (in the run)": cpu_best(lambda: p.plan("v2", overrides))[0],
             "operands (stand-ins, once per worker)": cpu_best(lambda: _fresh_operands(target))[0]}
    runs, reads = [], []
    for _ in range(3):  # a fresh run each time
        seconds, result = cpu_best(run, 1)
        runs.append(seconds)
        report = result.report
        index, slowest = max(((i, core) for i, core in enumerate(report.cores) if core.kind == "AIC"),
                             key=lambda item: item[1].cycles)
        seconds, idle = cpu_best(lambda: _bound_pipe_idle(report.logs[index], slowest), 1)
        reads.append(seconds)
    parts["run (chip, simulation, plan)"] = min(runs)
    parts["report columns"], _ = cpu_best(lambda: report_columns(report))
    parts["bound pipe idle (its timing)"] = min(reads)
    row = {**report_columns(report), **idle}
    parts["row pickled (IPC)"], _ = cpu_best(lambda: pickle.loads(pickle.dumps(row)))
    parts["instructions"] = report.instructions
    return parts


def _fresh_operands(target: Conv3dDxTarget) -> tuple:
    target._operands = None
    return target.operands()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", default="auto", choices=("auto", "replay", "fast", "exact"))
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--no-sweep", action="store_true")
    args = parser.parse_args(argv)

    target = Conv3dDxTarget(C3D_CONV3A, engine=args.engine)
    print(target.describe())
    print(f"load average at the start {os.getloadavg()[0]:.2f}")
    if args.profile:
        start = time.process_time()
        points = [{}] + target.legal_space().sample(args.profile - 1, args.seed)
        print(f"drawing {len(points) - 1} random legal points: {time.process_time() - start:.3f} s CPU")
        for point in points:
            parts = profile_candidate(target, point, args.engine)
            total = sum(v for k, v in parts.items() if k not in ("instructions", "plan (in the run)",
                                                                      "operands (stand-ins, once per worker)"))
            print(f"candidate {point or 'the generator'}: {parts['instructions']:,} instructions")
            for name, seconds in parts.items():
                if name != "instructions":
                    print(f"  {name:32s} {seconds:8.4f} s  {seconds / total:6.1%}")
    if args.no_sweep:
        return
    start = time.perf_counter()
    result = sweep(target, search="random", budget=args.budget, workers=args.workers, seed=args.seed,
                   progress=False, prune=False)
    wall = time.perf_counter() - start
    rows = [r for r in result.rows if "cycles" in r]
    cpu = sum(r["sim_cpu_seconds"] for r in result.rows if "sim_cpu_seconds" in r)
    instructions = sum(r["instructions"] for r in rows)
    print(f"sweep: {len(result.rows)} candidates ({len(rows)} simulated, engine {args.engine}) on {args.workers} "
          f"worker(s) in {wall:.1f} s wall = {len(result.rows) / wall:.3f} candidates/s; 1000 would take "
          f"{1000 * wall / len(result.rows):,.0f} s")
    print(f"  CPU of the runs in the workers {cpu:.1f} s ({cpu / max(len(rows), 1):.3f} s per candidate, "
          f"{instructions / cpu:,.0f} instructions/s); {instructions / max(len(rows), 1):,.0f} instructions per "
          f"candidate on average")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
