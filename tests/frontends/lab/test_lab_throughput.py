"""The lab's throughput changes keep its results: a candidate's cycles on the lab's engine (replay, on worker
processes) are those of a plain timing-only run of that tiling on the exact engine, and without pruning the workers
get candidates before all are prepared."""
from __future__ import annotations

import pytest

from ascend_sim.engine import replay, replay_engine
from frontends.cli.conv_problem import CliProblem
from frontends.lab import Conv3dDxTarget, sweep
from frontends.lab.conv3d_dx import _bound_pipe_idle
from frontends.lab.sweep import _proposals, _Table
from kernels import conv3d_backprop_input_v2_run

# a problem whose dx tiles repeat (the replay engine replays them) and whose legal space has small blocks
PROBLEM = CliProblem(1, 64, 64, (4, 16, 16), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1, "float16", "Ascend910B2",
                     False)


@pytest.fixture(scope="module")
def target():
    return Conv3dDxTarget(PROBLEM)


def plain_run(target, overrides):
    p = target.problem
    weight, dy = target.operands()
    return conv3d_backprop_input_v2_run(p.dx_shape, weight, dy, execute=False, check_races=False, engine="exact",
                                        route="v2", tiling_overrides=target.overrides(overrides) or None,
                                        **p.operator_arguments())


def test_sweep_cycles_are_those_of_plain_runs(target):
    """Four random candidates on two worker processes, every one simulated: each row's cycles and instruction
    count are a plain exact-engine run's of the same tiling."""
    result = sweep(target, search="random", budget=4, workers=2, seed=1, progress=False, prune=False)
    rows = [row for row in result.rows if "cycles" in row]
    assert len(rows) == 4 and sum(row["default"] for row in rows) == 1
    for row in rows:
        report = plain_run(target, row["overrides"]).report
        assert (row["cycles"], row["instructions"]) == (report.cycles, report.instructions), row["overrides"]


def test_the_lab_engine_replays(target, monkeypatch):
    """The lab's runs go through the replay engine: some of a candidate's units are replayed, not re-run."""
    replayed = []
    real = replay.Replayer._replay

    def counted(self, *args):
        replayed.append(1)
        return real(self, *args)

    monkeypatch.setattr(replay.Replayer, "_replay", counted)
    row = target.simulate({})
    assert replayed and row["cycles"] == plain_run(target, {}).report.cycles


@pytest.mark.parametrize("prune", [False, True])
def test_candidates_go_out_as_prepared_without_pruning(target, prune):
    """Without pruning the second candidate is handed out after preparing two; pruning orders by the bound, so it
    prepares all first."""
    legal = target.legal_space()
    table = _Table(target, legal.names, None, prune=prune)
    proposals = _proposals(table, legal.sample(5, 0), budget=6)
    next(proposals), next(proposals)
    assert len(table.rows) == (6 if prune else 2)


def test_the_idle_split_is_read_without_making_records(target, monkeypatch):
    """A candidate replayed with its records left unmade gets the bound pipe's idle split of the exact engine's
    records without making any record (log_timing)."""
    replayed = Conv3dDxTarget(PROBLEM, engine="replay")
    point = target.legal_space().sample(1, 2)[0]

    def made(self):
        raise AssertionError("a record was made")

    with monkeypatch.context() as m:
        m.setattr(replay_engine._RunRecords, "all", made)
        row = replayed.simulate(point)
    report = plain_run(target, point).report
    index, slowest = max(((i, core) for i, core in enumerate(report.cores) if core.kind == "AIC"),
                         key=lambda item: item[1].cycles)
    expected = _bound_pipe_idle(list(report.logs[index]), slowest)
    assert expected and {k: v for k, v in row.items() if k.startswith("bound_pipe")} == expected
    assert row["cycles"] == report.cycles


def _reference_idle(records, core) -> dict:
    """The bound pipe's idle split, record by record (the plain loop the lab's array version must equal)."""
    on_pipe = [r for r in records if r.pipe.name == core.bound]
    busy = [r for r in on_pipe if r.end > r.start]
    if not busy:
        return {}
    first, last = busy[0].start, max(r.end for r in busy)
    idle = {"bound_pipe_head": first, "bound_pipe_gaps": last - first - core.busy[core.bound],
            "bound_pipe_tail": core.cycles - last}
    free = first
    for r in on_pipe:
        if free < r.start <= last:
            cause = f"bound_pipe_wait_{r.event[0] if r.spec.kind.name == 'WAIT_FLAG' else r.name}"
            idle[cause] = idle.get(cause, 0.0) + r.start - free
        free = max(free, r.end)
    return idle


def test_the_idle_split_is_the_record_by_record_one(target):
    """On every cube core of the generator's tiling and of three random candidates (exact engine, records made):
    the same keys in the same order, the same values bit for bit, wait causes included."""
    causes = set()
    for point in [{}] + target.legal_space().sample(3, 5):
        report = plain_run(target, point).report
        for log, core in zip(report.logs, report.cores):
            if core.kind == "AIC":
                idle = _bound_pipe_idle(log, core)
                expected = _reference_idle(list(log), core)
                assert list(idle.items()) == list(expected.items()), point
                causes.update(k for k in idle if k.startswith("bound_pipe_wait_"))
    assert causes  # gaps before a WaitFlag were split
