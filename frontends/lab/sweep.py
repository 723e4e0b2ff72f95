"""`sweep(target, space, ...)`: candidates from a search over the legal tilings, pruned, simulated, tabulated.

The candidates come from the target's legal space (frontends/lab/legal.py): tilings that satisfy the tiling rules
by construction, so the budget counts legal tilings; `--vary` narrows a knob to the given values (the rules still
apply; a varied field that is not a knob is tried as given and the validator judges it). The generator's own
tiling is always the first row (`default: True`) and is always simulated. Every other candidate is the
generator's tiling with the point's fields overridden; the validator checks each before any simulation (a legal
space point it refuses keeps its row with the reason, and is a bug of the operator's rules). Each legal one
carries the analytical estimate of its tiling (frontends/lab/estimate.py), whose roofline is a lower bound of its
simulated cycles. With `prune` (the default) the legal ones run in the order of that bound, and one whose bound
exceeds the best simulated cycles so far (the `top`-th best) is not simulated: it cannot be among the `top` best.
Its row stays, `valid` and `pruned_by_bound`, with the reason "pruned: bound X > best Y". The others run
timing-only (frontends.lab.target.SIMULATION_ENGINE), on local worker processes or a cluster.

Searches: `local` (the default) starts from the generator's tiling and tries every legal one-knob change of the
best tiling not yet explored (best first); `grid` takes points spread evenly over the legal space; `random`
distinct legal points; `optuna` a TPE study on the analytical estimate first (cheap: no simulation), whose best
distinct tilings seed a second TPE study on the simulated cycles.
"""
from __future__ import annotations

import bisect
import importlib
import os
import sys
import time

from frontends.lab.legal import LegalSpace, fixed
from frontends.lab.options import BACKENDS, SEARCHES
from frontends.lab.results import SweepResult, kth_best
from frontends.lab.runner import LocalRunner
from frontends.lab.space import SpaceError

ESTIMATE_TRIALS = 10  # optuna's first stage: estimate trials per candidate of the budget (at most MAX_ESTIMATES)
MAX_ESTIMATES = 400


def sweep(target, space: dict[str, tuple[int, ...]] | None = None, *, search: str = "local", budget: int = 100,
          workers: int | None = None, seed: int = 0, progress: bool | None = None, backend: str = "local",
          scheduler: str | None = None, prune: bool = True, top: int = 1) -> SweepResult:
    """Sweep `budget` candidates (the default included) of the target's legal space, narrowed by `space` (field ->
    values, --vary) when given, by `search` (see the module's doc; "random" and "optuna" draw with `seed`; optuna
    asks `workers` points at a time). workers: local processes (default the CPU count; 1 runs in this process).
    progress: a tqdm bar on stderr (default: when stderr is a terminal). backend="dask" runs on a
    dask.distributed cluster: the scheduler at `scheduler`, or a LocalCluster of `workers` processes;
    backend="ray" on the Ray cluster at `scheduler` (or the one already joined, or a local one of `workers` CPUs).
    prune: skip the legal candidates whose lower bound exceeds the `top`-th best simulated cycles so far (they
    cannot be among the `top` best), trying them in the order of that bound."""
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
    check_backend(backend)
    legal = search_space(target, space)
    start = time.perf_counter()
    bar = _progress_bar(budget, progress)
    table = _Table(target, legal.names, bar, prune, top)
    with _runner(backend, target, workers, scheduler) as runner:
        if search == "optuna":
            _optuna(table, runner, legal, budget, workers, seed)
        elif search == "local":
            _local(table, runner, legal, budget)
        else:
            points = legal.stratified(budget - 1) if search == "grid" else legal.sample(budget - 1, seed)
            table.simulate(runner, _proposals(table, points, budget))
    if bar is not None:
        bar.close()
    return SweepResult(target.name, target.describe(), [n for n in legal.names if len(_values(legal, n)) > 1],
                       table.rows, search, budget, workers, seed, len(legal.points()),
                       time.perf_counter() - start, prune=prune, top=top, space=legal.to_dict(),
                       space_text=legal.describe())


def search_space(target, space: dict[str, tuple[int, ...]] | None) -> LegalSpace:
    """The target's legal space, narrowed to `space`'s values; fields of `space` that are not knobs of the target
    are added as they are (the validator judges them)."""
    legal = target.legal_space()
    if not space:
        return legal
    for name, values in space.items():
        if name not in target.fields:
            raise SpaceError(f"{name} is not a tiling field of {target.name}")
        if not values:
            raise SpaceError(f"{name} has no values to try")
    narrowed = legal.restricted(space)
    extra = [name for name in space if name not in legal.names]
    if not extra:
        return narrowed
    return LegalSpace(narrowed.knobs + [fixed(name, space[name]) for name in extra],
                      {**narrowed.base, **target.default_point(extra)})


def _values(legal: LegalSpace, name: str) -> set:
    return {point[name] for point in legal.points()}


class MissingBackend(SpaceError):
    """A cluster backend whose package is not installed (the `cluster` extra)."""


CLUSTER_PACKAGES = {"dask": "dask.distributed", "ray": "ray"}


def check_backend(backend: str) -> None:
    """Refuse a cluster backend whose package is missing, before any work, naming the extra that installs it."""
    if backend not in CLUSTER_PACKAGES:
        return
    try:
        importlib.import_module(CLUSTER_PACKAGES[backend])
    except ImportError:
        raise MissingBackend(f"backend={backend!r} needs the {CLUSTER_PACKAGES[backend]} package: "
                             "pip install 'ascend-sim[cluster]'") from None


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
        """When pruning: the lowest bounds first (ties: the lowest estimate), so that the best come early; in
        proposal order without an estimate."""
        if not self.prune:
            return keys
        return sorted(keys, key=lambda k: (self.rows[k].get("est_roofline", 0.0), self.rows[k].get("est_cycles", 0.0),
                                           k))

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
            # an operator without an analytical estimate has no bound: nothing is pruned
            if limit is not None and not row["default"] and row.get("est_roofline", 0.0) > limit:
                row.update(pruned_by_bound=True,
                           reason=f"pruned: bound {row['est_roofline']:,.0f} > {kth_best(self.top)} {limit:,.0f}")
                if self.bar is not None:
                    self.bar.update(1)
                continue
            yield key, row["overrides"]


def _proposals(table: _Table, points, budget: int):
    """The default's key first (a worker simulates it while the others are prepared), then the other legal
    candidates' keys: when pruning, once all are prepared, in the order of their bound; else each as soon as it
    is prepared, so that every worker is busy from the start."""
    default = table.add({})
    if default is not None:
        yield default
    keys = []
    for point in points:
        if len(table.rows) >= budget:
            break
        key = table.add(point)
        if key is None:
            continue
        if table.prune:
            keys.append(key)
        else:
            yield key
    yield from table.ordered(keys)


def _local(table: _Table, runner, legal: LegalSpace, budget: int) -> None:
    """Best-first local search: simulate the generator's tiling, then every legal one-knob change of the best
    simulated tiling not yet explored, until the budget is spent or no simulated tiling is left to explore."""
    table.simulate(runner, [k for k in [table.add({})] if k is not None])
    explored: set[int] = set()
    while len(table.rows) < budget:
        ranked = sorted((r for r in table.rows if r.get("cycles") is not None and r["index"] not in explored),
                        key=lambda r: (r["cycles"], r["index"]))
        if not ranked:
            return
        centre = ranked[0]
        explored.add(centre["index"])
        keys = []
        for point in legal.neighbours({n: centre[n] for n in legal.names}):
            if len(table.rows) >= budget:
                break
            key = table.add(point)
            if key is not None:
                keys.append(key)
        table.simulate(runner, table.ordered(keys))


def _optuna(table: _Table, runner, legal: LegalSpace, budget: int, workers: int, seed: int) -> None:
    """Two TPE studies over each knob's legal values (a suggestion is repaired to the nearest legal tiling):
    the first on the analytical estimate (no simulation), the second on the simulated cycles, seeded with the
    first's best distinct tilings (half the budget)."""
    import optuna  # lazily: only this search needs it

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    choices = {name: sorted(_values(legal, name)) for name in legal.names}

    def ask(study):
        trial = study.ask()
        point = legal.repair({name: trial.suggest_categorical(name, values) for name, values in choices.items()})
        return trial, point or dict(table.default)  # no legal repair (a dead end): the generator's tiling

    cheap = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    estimated: dict[tuple, tuple[float, dict]] = {}
    for _ in range(min(ESTIMATE_TRIALS * budget, MAX_ESTIMATES)):
        trial, point = ask(cheap)
        key = tuple(point.values())
        if key not in estimated:
            prepared = table.target.prepare({n: v for n, v in point.items() if v != table.default[n]})
            estimated[key] = (prepared.estimate.get("est_cycles", float("inf")), point)
        cheap.tell(trial, estimated[key][0])
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=seed))
    for _, point in sorted(estimated.values(), key=lambda item: item[0])[:budget // 2]:
        study.enqueue_trial(point)
    # the default runs first; its values need not lie in the space, so the study is not told about it
    table.simulate(runner, [k for k in [table.add({})] if k is not None])
    asks = 0
    while len(table.rows) < budget and asks < 4 * budget:
        batch = []
        for _ in range(min(workers, budget - len(table.rows))):
            trial, point = ask(study)
            asks += 1
            batch.append((trial, point, table.add(point)))
        table.simulate(runner, table.ordered([key for _, _, key in batch if key is not None]))
        for trial, point, _ in batch:
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
    from tqdm import tqdm
    return tqdm(total=total, unit="cand", file=sys.stderr)
