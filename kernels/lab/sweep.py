"""`sweep(target, space, ...)`: candidates from a search over tiling fields, pruned, simulated, tabulated.

The generator's own tiling is always the first row (`default: True`). Every other candidate is the generator's
tiling with the point's fields overridden; the validator prunes the illegal ones (their `reason` says which rules
they break) before any simulation, and the legal ones run timing-only on the fast engine, on local worker
processes. Each row also carries the analytical estimate of its tiling (kernels/lab/estimate.py).
"""
from __future__ import annotations

import os
import sys
import time

from .results import SweepResult
from .runner import DaskRunner, LocalRunner
from .space import SpaceError, grid, sample, space_size

SEARCHES = ("grid", "random", "optuna")
BACKENDS = ("local", "dask")


def sweep(target, space: dict[str, tuple[int, ...]] | None = None, *, search: str = "grid", budget: int = 100,
          workers: int | None = None, seed: int = 0, progress: bool | None = None, backend: str = "local",
          scheduler: str | None = None) -> SweepResult:
    """Sweep `budget` candidates (the default included) of `space` (field -> values; default: the target's
    knobs) by `search` ("grid": the grid's first points in order, "random": distinct points drawn with `seed`,
    "optuna": TPE with `seed`, asking `workers` points at a time). workers: local processes (default the CPU
    count; 1 runs in this process). progress: a tqdm bar on stderr (default: when stderr is a terminal).
    backend="dask" runs on a dask.distributed cluster: the scheduler at `scheduler`, or a LocalCluster of
    `workers` processes."""
    if search not in SEARCHES:
        raise SpaceError(f"search={search!r} is not one of {', '.join(SEARCHES)}")
    if backend not in BACKENDS:
        raise SpaceError(f"backend={backend!r} is not one of {', '.join(BACKENDS)}")
    if not isinstance(budget, int) or budget < 1:
        raise SpaceError(f"budget={budget!r} must be an integer of at least 1")
    workers = workers or os.cpu_count() or 1
    if not isinstance(workers, int) or workers < 1:
        raise SpaceError(f"workers={workers!r} must be an integer of at least 1")
    space = dict(space or target.default_space())
    for name, values in space.items():
        if name not in target.fields:
            raise SpaceError(f"{name} is not a tiling field of {target.name}")
        if not values:
            raise SpaceError(f"{name} has no values to try")
    start = time.perf_counter()
    bar = _progress_bar(budget, progress)
    table = _Table(target, list(space), bar)
    runner = DaskRunner(target, workers, scheduler) if backend == "dask" else LocalRunner(target, workers)
    with runner:
        if search == "optuna":
            _optuna(table, runner, space, budget, workers, seed)
        else:
            points = grid(space, budget) if search == "grid" else sample(space, budget, seed)
            keys = [table.add({})]
            for point in points:
                if len(table.rows) >= budget:
                    break
                keys.append(table.add(point))
            table.simulate(runner, [k for k in keys if k is not None])
    if bar is not None:
        bar.close()
    return SweepResult(target.name, target.describe(), list(space), table.rows, search, budget, workers, seed,
                       space_size(space), time.perf_counter() - start)


class _Table:
    """The rows so far, one per distinct candidate; the default first."""

    def __init__(self, target, names: list[str], bar):
        self.target, self.names, self.bar = target, names, bar
        self.default = target.default_point(names)
        self.rows: list[dict] = []
        self.seen: dict[tuple, int] = {}

    def add(self, point: dict) -> int | None:
        """Prepare a new candidate's row; its key if it must be simulated, None if pruned or already there."""
        full = {**self.default, **point}
        key = tuple(full[n] for n in self.names)
        if key in self.seen:
            return None
        is_default = not point or full == self.default
        overrides = {} if is_default else {n: v for n, v in full.items() if v != self.default[n]}
        prepared = self.target.prepare(overrides)
        index = len(self.rows)
        self.seen[key] = index
        self.rows.append({"index": index, "default": is_default, **full, "overrides": overrides,
                          "valid": prepared.valid, "reason": prepared.reason, **prepared.usage,
                          **prepared.estimate})
        if not prepared.valid and self.bar is not None:
            self.bar.update(1)
        return index if prepared.valid else None

    def simulate(self, runner, keys: list[int]) -> None:
        for key, result in runner.run((k, self.rows[k]["overrides"]) for k in keys):
            row = self.rows[key]
            row.update(result)
            if "cycles" in row and row.get("est_cycles"):
                row["est_error"] = row["est_cycles"] / row["cycles"] - 1
            if self.bar is not None:
                self.bar.update(1)


def _optuna(table: _Table, runner, space, budget: int, workers: int, seed: int) -> None:
    import optuna  # lazily: only the lab needs it

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    # the default runs first; its values need not lie in the space, so the study is not told about it
    table.simulate(runner, [k for k in [table.add({})] if k is not None])
    asks = 0
    while len(table.rows) < budget and asks < 4 * budget:
        batch = []
        for _ in range(min(workers, budget - len(table.rows))):
            trial = study.ask()
            asks += 1
            point = {name: trial.suggest_categorical(name, list(values)) for name, values in space.items()}
            batch.append((trial, point, table.add(point)))
        table.simulate(runner, [key for _, _, key in batch if key is not None])
        for trial, point, key in batch:
            row = table.rows[table.seen[tuple({**table.default, **point}[n] for n in table.names)]]
            if row.get("cycles") is not None:
                study.tell(trial, row["cycles"])
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)


def _progress_bar(total: int, progress: bool | None):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm  # lazily: only the lab needs it
    return tqdm(total=total, unit="cand", file=sys.stderr)
