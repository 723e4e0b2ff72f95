"""The real generator's tiling against the best a modest sweep finds, on the layers of bench_conv3d_dx.py.

    python benchmarks/tiling_gap.py [--budget 40] [--workers 2] [--seed 0] [--only NAME ...] [--out DIR]

Per layer: a random sweep (kernels.lab.sweep) of --budget candidates around the generator's tiling over the
space below, then the generator's cycles, the best found, the gap (how much slower the generator's tiling is
than the best, in %), the default's rank, the analytical estimate of both, and the sweep's throughput. Layers
that aclnn computes as a matmul (VideoMAE patch embed) are skipped: the lab sweeps the conv kernel's tiling.
"""
from __future__ import annotations

import argparse
import math

from bench_conv3d_dx import LAYERS

from kernels.cli.conv_problem import ConvProblem
from kernels.lab import Conv3dDxTarget, sweep


def problem_of(layer) -> ConvProblem:
    n, cin, *dhw = layer.x
    return ConvProblem(n, cin, layer.cout, tuple(dhw), layer.kernel, layer.stride, layer.pads, (1, 1, 1),
                       layer.groups, "float16", "Ascend910B2", False)


def space_around(target) -> dict:
    """Blocks at 1/2, 1 and 2 times the generator's (16-aligned; baseK in C0), K steps in whole windows, the
    L1 double buffers and the loop order."""
    f = target.tiling.fields()
    window = f["hk"] * f["wk"] * f["c0"]
    unit = window // math.gcd(f["baseK"], window)

    def scaled(value: int, step: int) -> tuple:
        return tuple(sorted({step * max(1, round(value * s / step)) for s in (0.5, 1, 2)}))

    return {"baseM": scaled(f["baseM"], 16), "baseN": scaled(f["baseN"], 16),
            "stepKa": tuple(sorted({unit, 2 * unit, 4 * unit, f["stepKa"], max(unit, f["stepKa"] // 2)})),
            "stepKb": tuple(sorted({unit, 2 * unit, 4 * unit, f["stepKb"], max(unit, f["stepKb"] // 2)})),
            "al1Pbuffer": (1, 2), "bl1Pbuffer": (1, 2), "iterateOrder": (0, 1)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--out", help="write each layer's results under this directory")
    args = parser.parse_args(argv)
    print(f"random sweep of {args.budget} candidates per layer on {args.workers} workers, seed {args.seed}")
    print(f"{'layer':<24} {'default':>10} {'best':>10} {'gap':>7} {'rank':>7} {'est def':>10} {'est best':>10} "
          f"{'valid':>5} {'cand/s':>6}")
    for layer in LAYERS:
        if args.only and not any(word.lower() in layer.name.lower() for word in args.only):
            continue
        problem = problem_of(layer)
        if problem.plan("aclnn").route == "matmul":
            print(f"{layer.name:<24} skipped: aclnn computes it as a matmul")
            continue
        target = Conv3dDxTarget(problem)
        result = sweep(target, space_around(target), search="random", budget=args.budget, workers=args.workers,
                       seed=args.seed)
        if args.out:
            result.write(f"{args.out}/{layer.name.replace(' ', '_')}")
        default, best = result.default, result.best
        print(f"{layer.name:<24} {default['cycles']:>10,.0f} {best['cycles']:>10,.0f} {result.default_gap():>6.1%} "
              f"{result.default_rank():>3}/{len(result.simulated):<3} {default['est_cycles']:>10,.0f} "
              f"{best['est_cycles']:>10,.0f} {len(result.simulated):>5} {result.candidates_per_second:>6.2f}")
        if not best["default"]:
            print(f"{'':<24} best: " + " ".join(f"{n}={best[n]}" for n in result.varied))


if __name__ == "__main__":
    main()
