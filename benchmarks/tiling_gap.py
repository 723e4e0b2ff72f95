"""The real generators' tilings against the best a modest sweep finds, for every operator on its benchmark layers.

    python benchmarks/tiling_gap.py [--ops conv3d-dx conv3d-dw conv3d matmul] [--budget 16] [--workers 2]
        [--search local] [--seed 0] [--only NAME ...] [--sizes 512 1024] [--out DIR]
        [--platform NAME|FILE.json] [--before NAME|FILE.json | --before-rev GIT_REVISION] [--no-prune] [--check]

The layers are those of benchmarks/bench_conv3d_dx.py (which bench_conv3d_dw.py and bench_conv3d_v2.py share) for
conv3d-dx, conv3d-dw and conv3d, and the square sizes of bench_matmul.py for matmul. Per operator and layer: a
sweep (frontends.lab.sweep, by default the local search from the generator's tiling) of --budget legal candidates,
then the generator's cycles, the best found, the gap (how much slower the generator's tiling is than the best, in
%), the default's rank among the simulated candidates, the pipe that bounds each (the most busy cycles over the
chip), and what the best changed. conv3d-dx prunes by its estimate's bound unless --no-prune (the best is the
same; the rank then counts only the candidates that could beat the best). Layers that aclnn computes as a matmul
(VideoMAE patch embed) are skipped for conv3d-dx: the lab sweeps the conv kernel's tiling. --check runs each best
tiling found with data and prints its error against PyTorch (benchmarks/sweep_check.py): the sweeps time
candidates without data.

Before and after calibration: --before runs the same sweeps on a second platform (a preset, or a platform JSON
such as one dumped with `get_platform("Ascend910B2").to_json("before.json")` from the tree before calibration),
--before-rev on the --platform preset with the timing constants it had at a git revision of this repository
(ascend_sim/machine/platform.py at that revision, read with `git show`; only the constants: the cost functions are
today's). The report then has both columns.
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_conv3d_dx import LAYERS
from sweep_check import check_tiling

from ascend_sim.machine.platform import get_platform
from frontends.cli.conv_problem import CliProblem
from frontends.cli.flags import platform_value
from frontends.lab import Conv3dDxTarget, sweep

REPO = Path(__file__).resolve().parent.parent


def problem_of(layer, dtype: str = "float16", platform="Ascend910B2") -> CliProblem:
    n, cin, *dhw = layer.x
    return CliProblem(n, cin, layer.cout, tuple(dhw), layer.kernel, layer.stride, layer.pads, (1, 1, 1),
                       layer.groups, dtype, platform, False)


CONV_TARGETS = {"conv3d-dx": Conv3dDxTarget, "conv3d-dw": Conv3dDwTarget, "conv3d": Conv3dV2Target}
OPS = (*CONV_TARGETS, "matmul")


def cases(op: str, args):
    """(name, target factory) of each benchmark layer of one operator (a factory: the platform varies)."""
    if op == "matmul":
        for n in args.sizes:
            yield f"matmul {n}", lambda platform, n=n: MatmulTarget(MatmulProblem(n, n, n, platform=platform))
        return
    for layer in LAYERS:
        if args.only and not any(word.lower() in layer.name.lower() for word in args.only):
            continue
        if op == "conv3d-dx" and problem_of(layer).plan("aclnn").route == "matmul":
            print(f"{op:<10} {layer.name:<24} skipped: aclnn computes it as a matmul")
            continue
        yield layer.name, lambda platform, layer=layer: CONV_TARGETS[op](problem_of(layer, platform=platform))


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


def gap_row(op: str, name: str, target, platform, args) -> dict:
    """The sweep of one layer of one operator on one platform as a dict of the report's columns."""
    result = sweep(target, search=args.search, budget=args.budget, workers=args.workers, seed=args.seed,
                   progress=False, prune=not args.no_prune)
    if args.out:
        platform_name = get_platform(platform).name
        result.write(f"{args.out}/{platform_name}/{op}/{name.replace(' ', '_')}")
    default, best = result.default, result.best
    error = check_tiling(target, best["overrides"]) if args.check and not best["default"] else None
    return {"error": "" if error is None else f"{error:.1e}", "default": default["cycles"], "best": best["cycles"],
            "gap": result.default_gap(), "rank": f"{result.default_rank()}/{len(result.simulated)}",
            "bound": f"{default['bound']}/{best['bound']}",
            "simulated": len(result.simulated), "seconds": result.seconds,
            "best_point": "the generator's" if best["default"] else
            " ".join(f"{n}={default[n]}->{best[n]}" for n in result.varied if best[n] != default[n])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--search", default="local", choices=("local", "grid", "random", "optuna"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024], help="matmul sizes (M = N = K)")
    parser.add_argument("--out", help="write each layer's results under this directory")
    parser.add_argument("--platform", type=platform_value, default="Ascend910B2",
                        help="the platform (after calibration): a preset or a platform JSON (default Ascend910B2)")
    before = parser.add_mutually_exclusive_group()
    before.add_argument("--before", type=platform_value, help="a second platform (before calibration)")
    before.add_argument("--before-rev", metavar="REVISION",
                        help="the --platform preset with the timing constants of this git revision")
    parser.add_argument("--no-prune", action="store_true", help="simulate every legal candidate")
    parser.add_argument("--check", action="store_true",
                        help="run each best tiling found with data and print its error against PyTorch")
    args = parser.parse_args(argv)
    columns = [("", args.platform)]
    if args.before is not None:
        columns = [("before", args.before), ("after", args.platform)]
    elif args.before_rev:
        old, changes = platform_at_revision(get_platform(args.platform).name, args.before_rev)
        print(f"{old.name}: {changes or 'the same constants as today'}")
        columns = [("before", old), ("after", args.platform)]
    print(f"{args.search} sweep of {args.budget} legal candidates per layer on {args.workers} workers, seed "
          f"{args.seed}; platforms: " + ", ".join(f"{label or 'the'} {get_platform(p).name}" for label, p in columns))
    print(f"{'operator':<10} {'layer':<24} {'platform':<8} {'default':>11} {'best':>11} {'gap':>7} {'rank':>6} "
          f"{'bound':>10} {'sim':>4} {'s':>6} {'error' if args.check else ''}  best found")
    for op in args.ops:
        for name, make in cases(op, args):
            for label, platform in columns:
                row = gap_row(op, name, make(platform), platform, args)
                print(f"{op:<10} {name:<24} {label:<8} {row['default']:>11,.0f} {row['best']:>11,.0f} "
                      f"{row['gap']:>6.1%} {row['rank']:>6} {row['bound']:>10} {row['simulated']:>4} "
                      f"{row['seconds']:>6.0f} {row['error'] if args.check else ''}  {row['best_point']}", flush=True)


if __name__ == "__main__":
    main()
