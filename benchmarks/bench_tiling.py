"""Time the Conv3DBackpropInputV2 tiling generator: the 12 real A2 vectors and ~1000 random legal shapes.

Run: python benchmarks/bench_tiling.py [--shapes 1000] [--repeat 20] [--seed 0]
Prints the mean (and worst) time per tiling; the target is under 5 ms per tiling.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tiling  # noqa: E402
from tiling import TilingInfeasible, check_conv3d_dx_args, tiling_for_args  # noqa: E402

VECTORS = ROOT / "tests" / "data" / "conv3d_dx_tiling_vectors_a2.json"
PLATFORMS = ["Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9391"]


def vector_problems() -> list[dict]:
    problems = []
    for v in json.loads(VECTORS.read_text())["vectors"]:
        fmt = v["formats"]["data_format_attr"]
        pick = (lambda xs: tuple(xs[2:5])) if fmt == "NCDHW" else (lambda xs: tuple(xs[1:4]))
        f = v["filter_shape"]["normalized"]
        problems.append(dict(
            dy_shape=tuple(v["dy_shape"]["as_NCDHW"][k] for k in "NCDHW"),
            filter_shape=(f["Cout"], f["Cin_per_group"], f["kD"], f["kH"], f["kW"]),
            dx_shape=tuple(v["dx_shape"]["as_NCDHW"][k] for k in "NCDHW"),
            strides=pick(v["strides"]), pads=tuple(v["pads"]), dilations=pick(v["dilations"]),
            groups=v["groups"], dtype=v["dtype"], platform=v["soc"], enable_hf32=v["enable_hf32"]))
    return problems


def random_problems(count: int, seed: int) -> list[dict]:
    """Legal problems across dtypes, groups, strides (also above the kernel), pads, dilations and sizes."""
    rng = random.Random(seed)
    problems = []
    while len(problems) < count:
        dtype = rng.choice(["float16", "bfloat16", "float32"])
        groups = rng.choice([1, 1, 1, 1, 2, 4, 8, 32, 320])
        cin_g = rng.randint(1, max(1, 1024 // groups))
        cout_g = rng.randint(1, max(1, 1024 // groups))
        kd, kh, kw = rng.randint(1, 4), rng.randint(1, 5), rng.randint(1, 5)
        sd, sh, sw = rng.randint(1, kd), rng.randint(1, 4), rng.randint(1, 4)
        dd, dh, dw = (rng.choice([1, 1, 1, 2]) for _ in range(3))
        pads = [rng.randint(0, (k - 1) * d) for k, d in ((kd, dd), (kd, dd), (kh, dh), (kh, dh), (kw, dw), (kw, dw))]
        n, di, hi, wi = rng.randint(1, 8), rng.randint(1, 32), rng.randint(1, 256), rng.randint(1, 256)
        out = []
        for size, k, d, s, a, b in ((di, kd, dd, sd, *pads[0:2]), (hi, kh, dh, sh, *pads[2:4]),
                                    (wi, kw, dw, sw, *pads[4:6])):
            out.append((size + a + b - d * (k - 1) - 1) // s + 1)
        if min(out) < 1:
            continue
        problem = dict(dy_shape=(n, cout_g * groups, *out), filter_shape=(cout_g * groups, cin_g, kd, kh, kw),
                       dx_shape=(n, cin_g * groups, di, hi, wi), strides=(sd, sh, sw), pads=tuple(pads),
                       dilations=(dd, dh, dw), groups=groups, dtype=dtype, platform=rng.choice(PLATFORMS))
        try:
            args = check_conv3d_dx_args(**problem)
            tiling_for_args(args)
        except (ValueError, TilingInfeasible):
            continue
        problems.append(problem)
    return problems


def time_per_tiling(problems: list[dict], repeat: int) -> list[float]:
    """Seconds per full generator call (argument checks + tiling + validation), best of `repeat` per problem."""
    times = []
    for problem in problems:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            tiling.conv3d_backprop_input_tiling(**problem)
            best = min(best, time.perf_counter() - start)
        times.append(best)
    return times


def report(name: str, times: list[float]) -> None:
    ms = [t * 1e3 for t in times]
    print(f"{name:28s} n={len(ms):5d}  mean {statistics.fmean(ms):.3f} ms  median {statistics.median(ms):.3f} ms  "
          f"max {max(ms):.3f} ms")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args(argv)
    vectors = vector_problems()
    report("12 real A2 vectors", time_per_tiling(vectors, opts.repeat))
    shapes = random_problems(opts.shapes, opts.seed)
    times = time_per_tiling(shapes, opts.repeat)
    report(f"{len(shapes)} random legal shapes", times)
    templates = Counter(tiling.conv3d_backprop_input_tiling(**p).template for p in shapes)
    print("templates:", dict(templates))


if __name__ == "__main__":
    main()
