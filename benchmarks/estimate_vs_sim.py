"""The analytical estimate (frontends/lab/estimate.py) against the instruction-level model (timing-only, fast engine).

    python benchmarks/estimate_vs_sim.py [--budget 12] [--workers 2] [--seed 0] [--dtype float16] [--only NAME ...]
        [--no-sweep] [--out FILE]

Part 1, the generator's tiling of each layer of bench_conv3d_dx.py (VideoMAE skipped: aclnn runs it as a matmul):
estimate / simulated cycles, roofline / simulated cycles, and per pipe the estimated busy cycles of the slowest
simulated cube core over the simulator's (1.000 where the model counts the same instructions at the same prices).
Part 2, a random sweep of --budget candidates per layer around the generator's tiling (tiling_gap.py's space),
every legal candidate simulated: the same ratios over the candidates, how many are within 20 %, and every
candidate whose roofline exceeds its simulated cycles (the pruning of a sweep assumes none does). With --out, the
rows as JSON.
"""
from __future__ import annotations

import argparse
import json

from bench_conv3d_dx import LAYERS
from tiling_gap import problem_of, space_around

from frontends.lab import Conv3dDxTarget, estimate_conv3d_dx, sweep
from frontends.lab.estimate import PIPES


def pipe_ratios(target, row: dict) -> dict[str, float | None]:
    """The estimated busy cycles of each pipe of the simulator's slowest cube core over the simulator's (None
    where the simulator's is 0)."""
    estimate = estimate_conv3d_dx(target.candidate(row.get("overrides", {})), target.platform)
    busy = estimate.core_busy[row["slowest_core"]]
    return {pipe: busy[pipe] / row[f"slowest_core_busy_{pipe}"] if row[f"slowest_core_busy_{pipe}"] else None
            for pipe in PIPES}


def ratios(target, row: dict) -> dict:
    return {"est/sim": row["est_cycles"] / row["cycles"], "roof/sim": row["est_roofline"] / row["cycles"],
            **pipe_ratios(target, row)}


def describe(target, row: dict) -> str:
    """Chip and cube-core cycles, the estimate, the ratios, the bounding pipes, where the slowest cube core's
    bounding pipe idles (head / gaps / tail, % of the chip's cycles) and the per-pipe busy ratios."""
    r = ratios(target, row)
    idle = "/".join(f"{100 * row.get(f'bound_pipe_{part}', 0) / row['cycles']:.0f}" for part in ("head", "gaps", "tail"))
    pipes = " ".join(f"{pipe} {'-' if r[pipe] is None else f'{r[pipe]:.3f}'}" for pipe in PIPES)
    waits = sorted(((v, k[len("bound_pipe_wait_"):]) for k, v in row.items() if k.startswith("bound_pipe_wait_")),
                   reverse=True)
    waited = ", ".join(f"{name} {100 * v / row['cycles']:.0f}%" for v, name in waits if v >= 0.01 * row["cycles"])
    return (f"{row['cycles']:>9,.0f} {row['cube_cycles']:>9,.0f} {row['est_cycles']:>9,.0f} {r['est/sim']:>7.3f} "
            f"{r['roof/sim']:>8.3f}  {row['bound']:<4} {row['est_bound']:<4} {idle:>9}  {pipes}"
            + (f"  gaps: {waited}" if waited else ""))


HEADER = (f"{'simulated':>9} {'cube':>9} {'estimate':>9} {'est/sim':>7} {'roof/sim':>8}  sim  est  "
          f"{'idle %':>9}  estimated / simulated busy cycles per pipe (slowest cube core)")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=12)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", default="float16", choices=("float16", "bfloat16", "float32"))
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--no-sweep", action="store_true", help="only the generator's tilings")
    parser.add_argument("--out", help="write every compared row as JSON here")
    args = parser.parse_args(argv)
    layers = [layer for layer in LAYERS
              if not args.only or any(word.lower() in layer.name.lower() for word in args.only)]
    targets = {}
    for layer in layers:
        problem = problem_of(layer, args.dtype)
        if problem.plan("aclnn").route == "matmul":
            print(f"{layer.name}: skipped, aclnn computes it as a matmul")
            continue
        targets[layer.name] = Conv3dDxTarget(problem)

    print(f"The generator's tilings ({args.dtype}); cube: the slowest cube core's cycles (the rest is the vector "
          f"cores' tail in a MIX launch); idle %: the bounding pipe of that core before its first instruction / "
          f"between its instructions / after its last; gaps: what it waited for between its instructions\n{'':<24} {HEADER}")
    dump = []
    for name, target in targets.items():
        row = {**target.prepare({}).estimate, **target.simulate({})}
        dump.append({"layer": name, "default": True, **row})
        print(f"{name:<24} {describe(target, row)}")
    if args.no_sweep:
        return _write(args.out, dump)

    print(f"\nRandom sweeps of {args.budget} candidates per layer (seed {args.seed}), every legal one simulated:")
    print(f"{'':<24} {'n':>3} {'est/sim':>13} {'roof/sim':>13} {'within 20%':>10} {'roof > sim':>10}  "
          f"per-pipe estimated / simulated busy (min-max)")
    for name, target in targets.items():
        result = sweep(target, space_around(target), search="random", budget=args.budget, workers=args.workers,
                       seed=args.seed, progress=False, prune=False)
        rows = result.simulated
        dump += [{"layer": name, **row} for row in rows]
        est = [r["est_cycles"] / r["cycles"] for r in rows]
        roof = [r["est_roofline"] / r["cycles"] for r in rows]
        over = [r for r in rows if r["est_roofline"] > r["cycles"]]
        per_pipe = []
        for pipe in PIPES:
            values = [v for v in (pipe_ratios(target, r)[pipe] for r in rows) if v is not None]
            per_pipe.append(f"{pipe} {min(values):.3f}-{max(values):.3f}" if values else f"{pipe} -")
        print(f"{name:<24} {len(rows):>3} {min(est):>6.3f}-{max(est):<6.3f} {min(roof):>6.3f}-{max(roof):<6.3f} "
              f"{sum(abs(e - 1) <= 0.2 for e in est):>10} {len(over):>10}  {'  '.join(per_pipe)}")
        for row in sorted(rows, key=lambda r: r["est_cycles"] / r["cycles"]):
            if abs(row["est_cycles"] / row["cycles"] - 1) > 0.2 or row in over:
                print(f"    {' '.join(f'{n}={row[n]}' for n in result.varied)}\n{'':<24} {describe(target, row)}")
    _write(args.out, dump)


def _write(path, rows) -> None:
    if path:
        with open(path, "w") as handle:
            json.dump(rows, handle, indent=1, default=str)


if __name__ == "__main__":
    main()
