"""The tiling lab: sweep an operator's tiling fields on the simulator, and estimate tilings analytically.

- legal.py      the legal space: knobs, the rules that shape them, enumeration, repair, one-knob neighbours
- space.py      --vary FIELD=RANGE parsing
- options.py    the searches and backends (the CLI's parser reads them without loading the lab)
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
from ascend_sim.machine.lazy_exports import lazy_exports

# each name imported on first use (ascend_sim/machine/lazy_exports.py): `ascend-sim sweep --help` loads none
_EXPORTS = {
    "BACKENDS": "frontends.lab.options",
    "SEARCHES": "frontends.lab.options",
    "Conv3dDwTarget": "frontends.lab.conv3d_dw",
    "Conv3dDxTarget": "frontends.lab.conv3d_dx",
    "buffer_usage": "frontends.lab.conv3d_dx",
    "Conv3dDxArch35Target": "frontends.lab.conv3d_dx_arch35",
    "Conv3dV2Target": "frontends.lab.conv3d_v2",
    "Estimate": "frontends.lab.estimate",
    "estimate_conv3d_dx": "frontends.lab.estimate",
    "Knob": "frontends.lab.legal",
    "LegalSpace": "frontends.lab.legal",
    "Rule": "frontends.lab.legal",
    "MatmulProblem": "frontends.lab.matmul",
    "MatmulTarget": "frontends.lab.matmul",
    "SweepResult": "frontends.lab.results",
    "SpaceError": "frontends.lab.space",
    "parse_range": "frontends.lab.space",
    "parse_vary": "frontends.lab.space",
    "sweep": "frontends.lab.sweep",
}
lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
