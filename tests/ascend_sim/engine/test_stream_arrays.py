"""The lazy schedule's encoding of streams holding replayed blocks (replay_engine.stream_arrays, then
fast_schedule.encode_arrays) against the fast engine's encoding of the same streams made into records
(fast_schedule.encode): per record the same core, pipe, kind code and cost, flag keys and cross-core flags that
pair the same records, and the same cross-core rounds; and every record encoded once (a template's first-call
run taken from the template, operands costed once per object)."""
import numpy as np
import pytest

from ascend_sim.engine import replay_engine
from ascend_sim.passes import fast_schedule
from ascend_sim.passes.fast_schedule import _CORE, _KEY, _KIND, _PIPE, CROSS_SET, CROSS_WAIT, SET_FLAG, WAIT_FLAG
from ascend_sim.passes.schedule import CostModel
from tests.ascend_sim.engine.test_engines import DX_CASES, dx_run


@pytest.fixture
def encodings(monkeypatch):
    """Per lazily scheduled launch: (the encoding from blocks, the encoding of the records, the records batched
    per core type, the records of the streams with blocks made)."""
    seen = []
    run_lazy = replay_engine.run_lazy

    def spy(chip, cores, passes=None):
        kinds = [core.core_type.name for core in cores]
        groups = [core.group for core in cores]
        models = {kind: CostModel(chip.platform, kinds.count(kind)) for kind in set(kinds)}
        batches = []
        record_arrays = fast_schedule.record_arrays

        def batched(log, model):
            batches.append(list(log))
            return record_arrays(log, model)
        monkeypatch.setattr(fast_schedule, "record_arrays", batched)
        lengths, pool, starts, sizes = replay_engine.stream_arrays(chip, cores, kinds, models)
        lazy = fast_schedule.encode_arrays(lengths, pool, kinds, groups, starts, sizes)
        monkeypatch.setattr(fast_schedule, "record_arrays", record_arrays)
        for template in chip.replayer.templates.values():  # encoded again by the run itself
            if template is not None:
                template.encoded.clear()
        streams = [replay_engine.expand(core.stream, chip, {}) for core in cores]
        seen.append((lazy, fast_schedule.encode(streams, kinds, groups, chip.platform), batches, streams))
        return run_lazy(chip, cores, passes)
    monkeypatch.setattr(replay_engine, "run_lazy", spy)
    return seen


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two numberings group the same positions together (a bijection between their values)."""
    pairs = set(zip(a.tolist(), b.tolist()))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _rounds(e, which) -> list:
    """Per cross-core set: (round's key, setters, counted flag, receivers) with the round and flag as numbered
    by `e`, for the comparison by partition."""
    by_number = {d: key for key, d in e["descriptors"].items()}
    return [by_number[d] for d in e["R"][which, _KEY].tolist()]


@pytest.mark.parametrize("case", list(DX_CASES))
def test_blocks_encode_as_their_records(case, encodings):
    dx_run(case, execute=False, engine="replay", check_races=False)
    assert encodings, "the run was not scheduled lazily"
    for lazy, exact, batches, streams in encodings:
        R, R0 = lazy["R"], exact["R"]
        assert (lazy["core_off"] == exact["core_off"]).all()
        assert (R[:, [_CORE, _PIPE, _KIND]] == R0[:, [_CORE, _PIPE, _KIND]]).all()
        assert lazy["T"].tobytes() == exact["T"].tobytes()
        kind = R[:, _KIND]
        flags = np.flatnonzero((kind == SET_FLAG) | (kind == WAIT_FLAG))
        assert lazy["n_keys"] == exact["n_keys"] and _same_partition(R[flags, _KEY], R0[flags, _KEY])
        for e in (lazy, exact):  # the SetFlags per key the pass sizes its queues by, counted here by numpy
            sets = e["R"][e["R"][:, _KIND] == SET_FLAG, _KEY]
            assert e["per_key"].tolist() == np.bincount(sets, minlength=e["n_keys"]).tolist()
        waits, sets = np.flatnonzero(kind == CROSS_WAIT), np.flatnonzero(kind == CROSS_SET)
        assert lazy["n_cross"] == exact["n_cross"]
        assert _same_partition(R[waits, _KEY], R0[waits, _KEY])
        assert [lazy["flags"][f] for f in R[waits, _KEY].tolist()] == [exact["flags"][f] for f in
                                                                       R0[waits, _KEY].tolist()]
        mine, theirs = _rounds(lazy, sets), _rounds(exact, sets)
        assert _same_partition(np.array([hash(x) for x in mine]), np.array([hash(x) for x in theirs]))
        assert [(n, lazy["flags"][f], rcv) for _, n, f, rcv in mine] == [(n, exact["flags"][f], rcv) for _, n, f, rcv
                                                                         in theirs]
        sizes = {rid: size for rid, size in lazy["rounds"].values()}
        assert sorted(sizes[r] for r, *_ in mine) == sorted({r: s for r, s in exact["rounds"].values()}[r]
                                                            for r, *_ in theirs)
        # every record encoded once: none of the batches' records twice, and fewer than the streams hold
        batched = [id(r) for batch in batches for r in batch]
        assert len(batched) == len(set(batched)) < sum(map(len, streams))


def test_a_cost_is_called_once_per_distinct_operands_object():
    a, b = (1, 2), (3, 4)
    c = tuple([1, 2])  # equal to a, another object: costed on its own
    calls = []

    def cost(ops, model):
        calls.append(ops)
        return float(sum(ops) * model)
    assert fast_schedule._costs(cost, [a, b, a, a, c, b], 10).tolist() == [30.0, 70.0, 30.0, 30.0, 30.0, 70.0]
    assert [id(x) for x in calls] == [id(a), id(b), id(c)]
