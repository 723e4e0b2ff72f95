"""Benchmark: the tiling lab's throughput on C3D conv3a, bound pruning off, and one candidate's whole cost.

    python benchmarks/bench_lab_throughput.py [--budget 40] [--workers 2] [--seed 0] [--engine auto]
                                              [--profile N] [--parts N] [--no-sweep]

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

--parts N: the CPU of N candidates' runs in this process (the generator's first, then the sweep's draw; after a
warm-up run), split by timing a few engine functions from outside: the lazy schedule of the replayed streams
(`replay_engine.run_lazy`: the templates' and records' arrays, the flag keys, and the compiled scheduler
`fast_schedule.schedule` in it), the templates made (`replay._template`), the records made for the generator's
short run (`replay_engine.materialise`), the idle split; the rest of the run is the kernel's Python with the
simulator's front end (the calls that miss a template) and the replayed hits.
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


def parts_of_runs(target: Conv3dDxTarget, points: list[dict]) -> None:
    """Print the CPU split of the candidates' runs (see --parts in the module's doc)."""
    from ascend_sim.engine import replay, replay_engine
    from ascend_sim.passes import fast_schedule
    from frontends.lab import conv3d_dx

    spent: dict[str, float] = {}
    parts = [(conv3d_dx, "conv3d_backprop_input_v2_run", "the run (chip, kernel, simulation)"),
             (replay_engine, "run_lazy", "  lazy schedule of the replayed streams"),
             (fast_schedule, "schedule", "    of which the compiled scheduler"),
             (replay, "_template", "  templates made (unit calls that missed)"),
             (replay_engine, "materialise", "  records made (short runs)"),
             (conv3d_dx, "_bound_pipe_idle", "the idle split")]
    originals = [(module, name, getattr(module, name)) for module, name, _ in parts]

    def timed(fn, label):
        def call(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start
        return call
    for (module, name, label), (_, _, fn) in zip(parts, originals):
        setattr(module, name, timed(fn, label))
    try:
        target.simulate(points[-1])  # warm: numba loaded
        spent.clear()
        start, instructions = time.process_time(), 0
        for point in points:
            instructions += target.simulate(point)["instructions"]
        total = time.process_time() - start
    finally:
        for module, name, fn in originals:
            setattr(module, name, fn)
    print(f"{len(points)} candidates' simulate(): {total:.2f} s CPU, {total / len(points):.3f} s each, "
          f"{instructions / total:,.0f} instructions/s ({instructions / len(points):,.0f} instructions each)")
    for _, _, label in parts:
        seconds = spent.get(label, 0.0)
        print(f"  {label:44s} {seconds:7.2f} s {seconds / total:6.1%}  {1e6 * seconds / instructions:6.2f} us "
              "per instruction")
    run = spent.get(parts[0][2], 0.0)
    rest = run - sum(spent.get(label, 0.0) for _, name, label in parts[1:] if name in ("run_lazy", "_template",
                                                                                           "materialise"))
    print(f"  {'  the rest: the kernel, the front end, hits':44s} {rest:7.2f} s {rest / total:6.1%}  "
          f"{1e6 * rest / instructions:6.2f} us per instruction")


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
    parser.add_argument("--parts", type=int, default=0, metavar="N")
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
    if args.parts:
        parts_of_runs(target, [{}] + target.legal_space().sample(args.parts - 1, args.seed))
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
