"""The tiling lab: sweep an operator's tiling fields on the simulator, and estimate tilings analytically.

- legal.py      the legal space: knobs, the rules that shape them, enumeration, repair, one-knob neighbours
- space.py      --vary FIELD=RANGE parsing
- conv3d_dx.py  the conv3d-dx operator as a sweep target (default tiling, legal space, validation, a timing-only run)
- conv3d_dx_space.py  the dx tiling's knobs and rules
- conv3d_dx_arch35.py  conv3d-dx on an Ascend 950: the arch35 tiling's knobs and rules, the arch35 kernel
- target.py     the operator protocol a target implements, and the run columns every target shares
- conv3d_dw.py, conv3d_v2.py, matmul.py   conv3d-dw, conv3d (Conv3DV2) and matmul as sweep targets
- estimate.py   the analytical estimate of a dx tiling: per-pipe cycles and bytes, the bound, the roofline
- runner.py     local worker processes (and the window of candidates in flight every backend shares)
- dask_runner.py, ray_runner.py   the same on a dask.distributed or a Ray cluster
- sweep.py      sweep(): local / grid / random / optuna search into a result table, pruned by the estimate's bound
- results.py    ranking, summary, the files (results.json / results.csv, the plots, report.md)
- plots.py      the PNG plots (matplotlib): heat map, per-pipe busy/idle bars, Pareto front, utilisation
- report.py     report.md: the table, the plots and why the best beats the generator's tiling

    from frontends.lab import Conv3dDxTarget, sweep
    result = sweep(Conv3dDxTarget(problem), budget=40)   # or narrowed: sweep(target, {"stepKa": (3, 6)}, ...)
    print(result.summary()); result.write("out")
"""
from frontends.lab.conv3d_dw import Conv3dDwTarget
from frontends.lab.conv3d_dx import Conv3dDxTarget, buffer_usage
from frontends.lab.conv3d_dx_arch35 import Conv3dDxArch35Target
from frontends.lab.conv3d_v2 import Conv3dV2Target
from frontends.lab.estimate import Estimate, estimate_conv3d_dx
from frontends.lab.legal import Knob, LegalSpace, Rule
from frontends.lab.matmul import MatmulProblem, MatmulTarget
from frontends.lab.results import SweepResult
from frontends.lab.space import SpaceError, parse_range, parse_vary
from frontends.lab.sweep import BACKENDS, SEARCHES, sweep

__all__ = ["BACKENDS", "SEARCHES", "Conv3dDwTarget", "Conv3dDxArch35Target", "Conv3dDxTarget", "Conv3dV2Target",
           "Estimate", "Knob", "LegalSpace", "MatmulProblem", "MatmulTarget", "Rule", "SpaceError", "SweepResult", "buffer_usage",
           "estimate_conv3d_dx", "parse_range", "parse_vary", "sweep"]
