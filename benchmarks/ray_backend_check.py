"""A check of `--backend ray`, by hand (not in the test suite: Ray's start-up alone takes 20-30 s on the 2-core
machine, docs/tiling_lab.md): a small sweep on a local Ray of one CPU against the same sweep on the local backend.

    python -m pip install -e ".[cluster]"   # ray in the cluster extra
    python benchmarks/ray_backend_check.py

Exit code 0 when both give the same cycles for every candidate, 1 otherwise.
"""
from __future__ import annotations

import sys
import time

import ray

from frontends.cli.conv_problem import CliProblem
from frontends.lab import Conv3dDxTarget, sweep


def main() -> int:
    problem = CliProblem(1, 32, 32, (4, 16, 16), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1, "float16",
                          "Ascend910B2", False)
    target = Conv3dDxTarget(problem)
    space = {"stepKa": (3, 6, 9), "iterateOrder": (0, 1)}
    start = time.perf_counter()
    on_ray = sweep(target, space, budget=6, workers=1, backend="ray", progress=False, prune=False)
    seconds = time.perf_counter() - start
    local = sweep(target, space, budget=6, workers=1, progress=False, prune=False)
    errors = [r["error"] for r in on_ray.rows if "error" in r]
    same = [r.get("cycles") for r in on_ray.rows] == [r.get("cycles") for r in local.rows]
    print(f"ray {ray.__version__}: {len(on_ray.rows)} candidates in {seconds:.1f} s (start-up included); "
          f"the local backend's cycles: {'yes' if same else 'NO'}; errors: {errors or 'none'}; "
          f"Ray shut down: {not ray.is_initialized()}")
    return 0 if same and not errors and not ray.is_initialized() else 1


if __name__ == "__main__":
    sys.exit(main())
