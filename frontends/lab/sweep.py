"""`sweep(target, space, ...)`: candidates from a search over tiling fields, pruned, simulated, tabulated.

The generator's own tiling is always the first row (`default: True`) and is always simulated. Every other
candidate is the generator's tiling with the point's fields overridden; the validator prunes the illegal ones
(their `reason` says which rules they break) before any simulation. Each legal one carries the analytical
estimate of its tiling (frontends/lab/estimate.py), whose roofline is a lower bound of its simulated cycles. With
`prune` (the default) the legal ones run in the order of that bound, and one whose bound exceeds the best
simulated cycles so far (the `top`-th best) is not simulated: it cannot be among the `top` best. Its row stays,
`valid` and `pruned_by_bound`, with the reason "pruned: bound X > best Y". The others run timing-only on the fast
engine, on local worker processes or a cluster.
"""
from __future__ import annotations

import bisect
import os
import sys
import time

from frontends.lab.results import SweepResult, kth_best
from frontends.lab.runner import LocalRunner
from frontends.lab.space import SpaceError, grid, sample, space_size

SEARCHES = ("grid", "random", "optuna")
BACKENDS = ("local", "dask", "ray")


def sweep(target, space: dict[str, tuple[int, ...]] | None = None, *, search: str = "grid", budget: int = 100,
          workers: int | None = None, seed: int = 0, progress: bool | None = None, backend: str = "local",
          scheduler: str | None = None, prune: bool = True, top: int = 1) -> SweepResult:
    """Sweep `budget` candidates (the default included) of `space` (field -> values; default: the target's
    knobs) by `search` ("grid": the grid's first points in order, "random": distinct points drawn with `seed`,
    "optuna": TPE with `seed`, asking `workers` points at a time). workers: local processes (default the CPU
    count; 1 runs in this process). progress: a tqdm bar on stderr (default: when stderr is a terminal).
    backend="dask" runs on a dask.distributed cluster: the scheduler at `scheduler`, or a LocalCluster of
    `workers` processes; backend="ray" on the Ray cluster at `scheduler` (or the one already joined, or a local
    one of `workers` CPUs). prune: skip the legal candidates whose lower bound exceeds the `top`-th best
    simulated cycles so far (they cannot be among the `top` best), trying them in the order of that bound."""
    if search not in SEARCHES:
        raise SpaceError(f"search={search!r} is not one of {', '.join(SEARCHES)}")
    if backend not in BACKENDS:
        raise SpaceError(f"backend={backend!r} is not one of {', '.join(BACKENDS)}")
    if not isinstance(budget, int) or budget < 1:
        raise SpaceError(f"budget={budget!r} must be an integer of at least 1")
    if not isinstance(top, int) or top < 1:
        raise SpaceError(f"top={top!r} must be an integer of at least 1")
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
    table = _Table(target, list(space), bar, prune, top)
    with _runner(backend, target, workers, scheduler) as runner:
        if search == "optuna":
            _optuna(table, runner, space, budget, workers, seed)
        else:
            points = grid(space, budget) if search == "grid" else sample(space, budget, seed)
            table.simulate(runner, _proposals(table, points, budget))
    if bar is not None:
        bar.close()
    return SweepResult(target.name, target.describe(), list(space), table.rows, search, budget, workers, seed,
                       space_size(space), time.perf_counter() - start, prune=prune, top=top)


def _runner(backend: str, target, workers: int, scheduler: str | None):
    if backend == "dask":
        from frontends.lab.dask_runner import DaskRunner
        return DaskRunner(target, workers, scheduler)
    if backend == "ray":
        from frontends.lab.ray_runner import RayRunner
        return RayRunner(target, workers, scheduler)
    return LocalRunner(target, workers)


class _Table:
    """The rows so far, one per distinct candidate; the default first."""

    def __init__(self, target, names: list[str], bar, prune: bool = False, top: int = 1):
        self.target, self.names, self.bar = target, names, bar
        self.prune, self.top = prune, top
        self.default = target.default_point(names)
        self.rows: list[dict] = []
        self.seen: dict[tuple, int] = {}
        self.cycles: list[float] = []  # the simulated cycles so far, ascending

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

    def ordered(self, keys: list[int]) -> list[int]:
        """When pruning: the lowest bounds first (ties: the lowest estimate), so that the best come early."""
        if not self.prune:
            return keys
        return sorted(keys, key=lambda k: (self.rows[k]["est_roofline"], self.rows[k]["est_cycles"], k))

    def simulate(self, runner, keys) -> None:
        """Simulate the rows of `keys` (an iterable, read as the runner frees up), unless pruned by the bound."""
        for key, result in runner.run(self._unpruned(keys)):
            row = self.rows[key]
            row.update(result)
            if "cycles" in row:
                bisect.insort(self.cycles, row["cycles"])
                if row.get("est_cycles"):
                    row["est_error"] = row["est_cycles"] / row["cycles"] - 1
            if self.bar is not None:
                self.bar.update(1)

    def _unpruned(self, keys: list[int]):
        """(key, overrides) of the candidates to simulate; taken one at a time by the runner, so each is decided
        against the results known when a worker frees up."""
        for key in keys:
            row = self.rows[key]
            limit = self.cycles[self.top - 1] if self.prune and len(self.cycles) >= self.top else None
            if limit is not None and not row["default"] and row["est_roofline"] > limit:
                row.update(pruned_by_bound=True,
                           reason=f"pruned: bound {row['est_roofline']:,.0f} > {kth_best(self.top)} {limit:,.0f}")
                if self.bar is not None:
                    self.bar.update(1)
                continue
            yield key, row["overrides"]


def _proposals(table: _Table, points, budget: int):
    """The default's key first (a worker simulates it while the others are prepared), then the other legal
    candidates' keys, in the order of their bound when pruning."""
    default = table.add({})
    if default is not None:
        yield default
    keys = []
    for point in points:
        if len(table.rows) >= budget:
            break
        key = table.add(point)
        if key is not None:
            keys.append(key)
    yield from table.ordered(keys)


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
        table.simulate(runner, table.ordered([key for _, _, key in batch if key is not None]))
        for trial, point, key in batch:
            row = table.rows[table.seen[tuple({**table.default, **point}[n] for n in table.names)]]
            if row.get("cycles") is not None:
                study.tell(trial, row["cycles"])
            elif row.get("pruned_by_bound"):
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)


def _progress_bar(total: int, progress: bool | None):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    from tqdm import tqdm  # lazily: only the lab needs it
    return tqdm(total=total, unit="cand", file=sys.stderr)
