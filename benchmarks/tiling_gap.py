"""The real generator's tiling against the best a modest sweep finds, on the layers of bench_conv3d_dx.py.

    python benchmarks/tiling_gap.py [--budget 40] [--workers 2] [--seed 0] [--only NAME ...] [--out DIR]
        [--platform NAME|FILE.json] [--before NAME|FILE.json | --before-rev GIT_REVISION] [--no-prune]

Per layer: a random sweep (frontends.lab.sweep) of --budget candidates around the generator's tiling over the
space below, then the generator's cycles, the best found, the gap (how much slower the generator's tiling is
than the best, in %), the default's rank among the simulated candidates, the analytical estimate of both, and
the sweep's throughput. The sweep prunes by the estimate's bound unless --no-prune (the best is the same; the
rank then counts only the candidates that could beat the best). Layers that aclnn computes as a matmul (VideoMAE
patch embed) are skipped: the lab sweeps the conv kernel's tiling.

Before and after calibration: --before runs the same sweeps on a second platform (a preset, or a platform JSON
such as one dumped with `get_platform("Ascend910B2").to_json("before.json")` from the tree before calibration),
--before-rev on the --platform preset with the timing constants it had at a git revision of this repository
(ascend_sim/machine/platform.py at that revision, read with `git show`; only the constants: the cost functions are
today's). The report then has both columns.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_conv3d_dx import LAYERS

from ascend_sim.machine.platform import get_platform
from frontends.cli.conv_problem import ConvProblem
from frontends.cli.flags import platform_value
from frontends.lab import Conv3dDxTarget, sweep

REPO = Path(__file__).resolve().parent.parent


def problem_of(layer, dtype: str = "float16", platform="Ascend910B2") -> ConvProblem:
    n, cin, *dhw = layer.x
    return ConvProblem(n, cin, layer.cout, tuple(dhw), layer.kernel, layer.stride, layer.pads, (1, 1, 1),
                       layer.groups, dtype, platform, False)


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


def platform_at_revision(name: str, revision: str):
    """The preset `name` with the constants ascend_sim/machine/platform.py gave it at `revision`: the old preset's
    values of the fields today's platform still has, as overrides of today's preset."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{revision}:ascend_sim/machine/platform.py"],
                            capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "platform_at_revision.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("platform_at_revision", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # pydantic resolves the module's annotations through sys.modules
        try:
            spec.loader.exec_module(module)
            old = module.get_platform(name).model_dump()
        finally:
            del sys.modules[spec.name]
    current = get_platform(name)
    now = current.model_dump()
    changes = {}
    for key, value in old.items():
        if key not in now or key == "name":
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k in now[key] and v != now[key][k]}
            if value:
                changes[key] = value
        elif value != now[key]:
            changes[key] = value
    return current.with_overrides(name=f"{name}@{revision}", **changes) if changes else current, changes


def gap_row(layer, platform, args) -> dict | None:
    """The sweep of one layer on one platform as a dict of the report's columns (None: a matmul layer)."""
    problem = problem_of(layer, platform=platform)
    if problem.plan("aclnn").route == "matmul":
        return None
    target = Conv3dDxTarget(problem)
    result = sweep(target, space_around(target), search="random", budget=args.budget, workers=args.workers,
                   seed=args.seed, progress=False, prune=not args.no_prune)
    if args.out:
        platform_name = get_platform(platform).name
        result.write(f"{args.out}/{platform_name}/{layer.name.replace(' ', '_')}")
    default, best = result.default, result.best
    return {"default": default["cycles"], "best": best["cycles"], "gap": result.default_gap(),
            "rank": f"{result.default_rank()}/{len(result.simulated)}", "est_default": default["est_cycles"],
            "est_best": best["est_cycles"], "simulated": len(result.simulated), "rate": result.candidates_per_second,
            "best_point": "the generator's" if best["default"] else
            " ".join(f"{n}={best[n]}" for n in result.varied if best[n] != default[n])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--out", help="write each layer's results under this directory")
    parser.add_argument("--platform", type=platform_value, default="Ascend910B2",
                        help="the platform (after calibration): a preset or a platform JSON (default Ascend910B2)")
    before = parser.add_mutually_exclusive_group()
    before.add_argument("--before", type=platform_value, help="a second platform (before calibration)")
    before.add_argument("--before-rev", metavar="REVISION",
                        help="the --platform preset with the timing constants of this git revision")
    parser.add_argument("--no-prune", action="store_true", help="simulate every legal candidate")
    args = parser.parse_args(argv)
    columns = [("", args.platform)]
    if args.before is not None:
        columns = [("before", args.before), ("after", args.platform)]
    elif args.before_rev:
        old, changes = platform_at_revision(get_platform(args.platform).name, args.before_rev)
        print(f"{old.name}: {changes or 'the same constants as today'}")
        columns = [("before", old), ("after", args.platform)]
    print(f"random sweep of {args.budget} candidates per layer on {args.workers} workers, seed {args.seed}, "
          f"{'every legal candidate simulated' if args.no_prune else 'pruned by the bound'}; platforms: "
          + ", ".join(f"{label or 'the'} {get_platform(p).name}" for label, p in columns))
    print(f"{'layer':<24} {'platform':<8} {'default':>10} {'best':>10} {'gap':>7} {'rank':>7} {'est def':>10} "
          f"{'est best':>10} {'sim':>4} {'cand/s':>6}  best found")
    for layer in LAYERS:
        if args.only and not any(word.lower() in layer.name.lower() for word in args.only):
            continue
        for label, platform in columns:
            row = gap_row(layer, platform, args)
            if row is None:
                print(f"{layer.name:<24} skipped: aclnn computes it as a matmul")
                break
            print(f"{layer.name:<24} {label:<8} {row['default']:>10,.0f} {row['best']:>10,.0f} {row['gap']:>6.1%} "
                  f"{row['rank']:>7} {row['est_default']:>10,.0f} {row['est_best']:>10,.0f} {row['simulated']:>4} "
                  f"{row['rate']:>6.2f}  {row['best_point']}")


if __name__ == "__main__":
    main()
