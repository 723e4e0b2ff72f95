"""The tiling lab: sweep an operator's tiling fields on the simulator, and estimate tilings analytically.

- space.py      the search space (--vary FIELD=RANGE), grid and random points
- conv3d_dx.py  the conv3d-dx operator as a sweep target (default tiling, knobs, validation, a timing-only run)
- estimate.py   the analytical estimate of a dx tiling: per-pipe cycles and bytes, the bound, the roofline
- runner.py     local worker processes (and the window of candidates in flight every backend shares)
- dask_runner.py, ray_runner.py   the same on a dask.distributed or a Ray cluster
- sweep.py      sweep(): grid / random / optuna search into a result table, pruned by the estimate's bound
- results.py    ranking, summary, results.json / results.csv
- plots.py      the PNG plots (matplotlib)

    from frontends.lab import Conv3dDxTarget, sweep
    result = sweep(Conv3dDxTarget(problem), {"stepKa": (1, 2, 4), "baseN": (16, 32, 64)}, budget=50)
    print(result.summary()); result.write("out")
"""
from frontends.lab.conv3d_dx import Conv3dDxTarget, buffer_usage
from frontends.lab.estimate import Estimate, estimate_conv3d_dx
from frontends.lab.results import SweepResult
from frontends.lab.space import SpaceError, parse_range, parse_vary
from frontends.lab.sweep import BACKENDS, SEARCHES, sweep

__all__ = ["BACKENDS", "SEARCHES", "Conv3dDxTarget", "Estimate", "SpaceError", "SweepResult", "buffer_usage",
           "estimate_conv3d_dx", "parse_range", "parse_vary", "sweep"]
