"""The compiled race checker (ascend_sim/passes/fast_races.py) against the Python one (races.py): on the same
records in the same order, both find no race, or both find the first race at the same record.

Three sources of streams: the engine agreement corpus and the race and fault tests, run again here on the fast
engine with every compiled check cross-checked against the Python checkers on the same order (the test's own
assertions then also check the fault the engine reports); seeded random streams of reads, writes, GM footprints,
flags, barriers, SyncAll and cross-core flags on several cores, with and without races; and hand-written corner
cases (the pruning of long access logs, atomic adds, the 950's 1-byte granule)."""
import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.engine import fast_engine
from ascend_sim.isa.sync import CROSS_CORE_SET_FLAG, CROSS_CORE_WAIT_FLAG, PIPE_BARRIER, SET_FLAG, SYNC_ALL, WAIT_FLAG
from ascend_sim.machine.coretypes import KernelType, launch_cores
from ascend_sim.machine.faults import CrossCoreRace
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.platform import get_platform
from ascend_sim.passes.fast_races import CLEAN, first_race
from ascend_sim.passes.fast_schedule import schedule
from ascend_sim.passes.races import first_fault
from ascend_sim.record import Kind, Record, Spec, _no_cost
from tests.ascend_sim.engine import test_engine, test_engines, test_faults, test_shared_buffer_races, test_vector_engine
from tests.ascend_sim.isa import test_atomic, test_vector_elementwise, test_vector_tque

BASE = get_platform("Ascend910B2")


# ------------------------------------------------------------------------------------------ the corpus, cross-checked
CHECKED: list = []  # (compiled answer, Python answer) of every compiled check run in this module


@pytest.fixture(autouse=True)
def cross_checked(monkeypatch):
    """Chips default to the fast engine, and each compiled race check is compared with the Python checkers."""
    monkeypatch.setitem(Chip.__init__.__kwdefaults__, "engine", "fast")
    compiled_check = fast_engine._no_race

    def both(chip, records, s):
        granule, shared = chip.gm_races.granule, chip.gm_races.shared
        python, _ = first_fault(records, s.order.tolist(), len(chip.cores), granule, shared)
        compiled = first_race(records, s, granule, shared)
        CHECKED.append((compiled, python))
        assert compiled == python, f"compiled checker: {compiled}, Python checkers: {python}"
        return compiled_check(chip, records, s)
    monkeypatch.setattr(fast_engine, "_no_race", both)


def _tests(module, names=None):
    return {name: getattr(module, name) for name in dir(module)
            if name.startswith("test_") and (names is None or name in names)}


# every test of the agreement corpus and the fault tests, and the race tests of the other modules
globals().update(_tests(test_engines))
globals().update(_tests(test_faults))
globals().update(_tests(test_shared_buffer_races))
globals().update(_tests(test_engine, {"test_two_cores_writing_the_same_gm_bytes_without_sync_is_a_race",
                                      "test_a_cross_core_flag_orders_a_gm_write_before_another_cores_read"}))
globals().update(_tests(test_vector_engine, {"test_copy_out_racing_the_vector_write_is_a_race_fault",
                                             "test_two_aivs_writing_the_same_gm_bytes_is_a_cross_core_race"}))
globals().update(_tests(test_atomic, {"test_plain_store_against_atomic_add_of_another_core_races"}))
globals().update(_tests(test_vector_tque, {"test_skipping_deque_is_a_race_between_mte2_and_v"}))
globals().update(_tests(test_vector_elementwise, {"test_vector_read_racing_the_mte2_write_is_a_race_fault"}))


def test_the_fast_engine_uses_the_compiled_checker_and_reports_the_python_fault():
    CHECKED.clear()
    kind, message = test_engines.observe("fast", test_engines.FAULTS["race"])[1:]
    assert kind == "RaceFault" and "LoadData2D" in message
    assert CHECKED and CHECKED[-1][0] >= 0  # the compiled checker ran and found the race
    test_engines.observe("fast", test_engines.matmul_launch(96, 64, 80, 2))
    assert CHECKED[-1] == (CLEAN, CLEAN)


def test_a_launch_that_issues_nothing_has_no_race():
    CHECKED.clear()
    report = Chip().launch(lambda: None, 2, kernel_type="MIX_AIC_1_1")
    assert report.instructions == 0 and CHECKED == [(CLEAN, CLEAN)]


# ------------------------------------------------------------------------------------------ random streams
_MOVE = Spec("SyntheticMove", None, Kind.MOVE, None, _no_cost, None, None, "")
_PIPES = (Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3, Pipe.V, Pipe.S)
_GM_BYTES = 384


def _random_launch(seed: int):
    """A random launch's streams, scheduled: (records in stream order with their releases, the schedule's
    order, cores, GM granule). Per core: instructions on random pipes reading and writing spans of two local
    buffers and boxes of two GM buffers (plain, strided, odd, atomic adds), each followed, with a probability
    drawn per launch, by a barrier or a SetFlag/WaitFlag pair to another pipe; phases split by SyncAll or by
    cross-core flags between an AIC and its AIVs. Short and long (pruned) streams, orderly and racy ones. On odd
    seeds a MIX launch shares buffers as the 950 does (engine/chip.py): each AIC's L1 with its AIVs, AIV 0's UB
    with its AIC; their keys are returned as `shared`."""
    rng = np.random.default_rng(seed)
    kernel_type = KernelType(str(rng.choice(["AIC_ONLY", "MIX_AIC_1_1", "MIX_AIC_1_2"])))
    layout = launch_cores(kernel_type, int(rng.integers(1, 3)))
    kinds, groups = [t.name for t, *_ in layout], [g for *_, g in layout]
    n_cores = len(layout)
    granule = int(rng.choice([1, 2]))
    gm = [Buffer(f"GM:{name}", _GM_BYTES, 2, allocate=False) for name in ("x", "y")]
    local = [[Buffer(name, 512, 32, allocate=False) for name in ("L1", "UB")] for _ in range(n_cores)]
    for c, bufs in enumerate(local):
        for buf in bufs:
            buf.key = (c, buf.name)
    shared = frozenset()
    if seed % 2 and kernel_type != KernelType.AIC_ONLY:
        for c, (kind, _, sub, group) in enumerate(layout):
            aic = groups.index(group)
            if kind.name == "AIV":
                local[c][0] = local[aic][0]
                if sub == 0:
                    local[aic][1] = local[c][1]
        shared = frozenset(buf.key for c, bufs in enumerate(local) for buf in bufs if buf.key[0] != c)
    ordered = float(rng.choice([0.0, 0.5, 0.9, 1.0]))  # chance an instruction is fenced from what follows
    per_core_gm = rng.random() < 0.5  # each core keeps to its own GM slice (no race between cores)
    pipes = _PIPES[:int(rng.integers(2, len(_PIPES) + 1))]
    length = int(rng.choice([3, 12, 40, 250]))
    streams = [[] for _ in range(n_cores)]

    def issue(c, spec, pipe, reads=(), writes=(), event=None, footprint=None):
        streams[c].append(Record(c, len(streams[c]), spec, pipe, None, None, tuple(reads), tuple(writes), (None, 0),
                                 event=event, footprint=footprint))

    def gm_box(c):
        buf = gm[int(rng.integers(2))]
        nd = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(1, 5)) for _ in range(nd))
        strides = [1] if rng.random() < 0.8 else [int(rng.integers(2, 4))]
        for k in range(nd - 1):
            strides.insert(0, strides[0] * shape[nd - 1 - k] + int(rng.integers(0, 3)))
        extent = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        lo, hi = 0, _GM_BYTES - extent
        if per_core_gm:
            lo, hi = c * (_GM_BYTES // n_cores), (c + 1) * (_GM_BYTES // n_cores) - extent
        offset = int(rng.integers(lo, max(lo, hi) + 1))
        offset -= offset % 2 if rng.random() < 0.8 else 0
        kind = [False, True, "atomic"][int(rng.choice(3, p=[0.45, 0.45, 0.1]))]
        return buf, offset, shape, tuple(strides), kind, extent

    def instruction(c):
        pipe = _PIPES[int(rng.integers(len(pipes)))]
        reads, writes, footprint = [], [], None
        for _ in range(int(rng.integers(0, 3))):
            buf = local[c][int(rng.integers(2))]
            lo = int(rng.integers(0, 192))
            (writes if rng.random() < 0.5 else reads).append((buf, lo, lo + int(rng.integers(1, 64))))
        if rng.random() < 0.4:
            buf, offset, shape, strides, kind, extent = gm_box(c)
            footprint = ((buf, offset, shape, strides, kind),)
            if rng.random() < 0.5:  # a GM span in the per-core accesses too, as GM copies have
                (writes if kind else reads).append((buf, offset, offset + extent))
        issue(c, _MOVE, pipe, reads, writes, footprint=footprint)
        if rng.random() < ordered:
            if rng.random() < 0.3:
                issue(c, PIPE_BARRIER, Pipe.ALL)
            else:
                dst = _PIPES[int(rng.integers(len(pipes)))]
                event = (f"{pipe.name}_{dst.name}", int(rng.integers(2)))
                issue(c, SET_FLAG, pipe, event=event)
                issue(c, WAIT_FLAG, dst, event=event)

    for phase in range(int(rng.integers(1, 4))):
        for c in range(n_cores):
            for _ in range(int(rng.integers(0, length + 1))):
                instruction(c)
        if rng.random() < 0.5 or not kernel_type.cross_core_flags:
            for c in range(n_cores):
                issue(c, SYNC_ALL, Pipe.ALL)
        else:  # each AIC tells its AIVs, then they tell it (sets before waits: no deadlock)
            flag = int(rng.integers(0, 16))
            for c in range(n_cores):
                if kinds[c] == "AIC":
                    issue(c, CROSS_CORE_SET_FLAG, _PIPES[int(rng.integers(len(pipes)))], event=(2, flag))
            for c in range(n_cores):
                if kinds[c] == "AIV":
                    issue(c, CROSS_CORE_WAIT_FLAG, Pipe.S, event=(0, flag))
                    issue(c, CROSS_CORE_SET_FLAG, _PIPES[int(rng.integers(len(pipes)))], event=(2, flag))
            for c in range(n_cores):
                if kinds[c] == "AIC":
                    issue(c, CROSS_CORE_WAIT_FLAG, Pipe.S, event=(0, flag))
    s = schedule(streams, kinds, groups, BASE)
    assert s.clean
    records = [rec for stream in streams for rec in stream]
    for i, by in s.releases(records):
        records[i].released_by = by
    return records, s, n_cores, granule, shared


@pytest.mark.parametrize("seed", range(300))
def test_random_streams_find_the_same_first_race(seed):
    records, s, n_cores, granule, shared = _random_launch(seed)
    python, _ = first_fault(records, s.order.tolist(), n_cores, granule, shared)
    assert first_race(records, s, granule, shared) == python


@pytest.mark.parametrize("seed", range(0, 300, 3))
def test_random_streams_on_4_byte_shadows_find_the_same_first_race(seed, monkeypatch):
    """The shadows of a launch of more GM boxes than SHORT_SHADOW_UP_TO are int32 (the others: uint16, as every
    test above runs): forced here, the same first race as races.py."""
    from ascend_sim.passes import fast_races
    monkeypatch.setattr(fast_races, "SHORT_SHADOW_UP_TO", -1)
    assert fast_races.shadow_type(0) is np.int32 and fast_races.shadow_type(65535) is np.int32
    records, s, n_cores, granule, shared = _random_launch(seed)
    python, _ = first_fault(records, s.order.tolist(), n_cores, granule, shared)
    assert first_race(records, s, granule, shared) == python


def test_a_launch_of_up_to_65535_gm_boxes_takes_2_byte_shadows():
    from ascend_sim.passes.fast_races import shadow_type
    assert [shadow_type(n) for n in (0, 300, 65535, 65536)] == [np.uint16, np.uint16, np.uint16, np.int32]


def test_the_random_streams_cover_races_of_both_checkers_and_clean_runs():
    outcomes = set()
    for seed in range(300):
        records, s, n_cores, granule, shared = _random_launch(seed)
        _, fault = first_fault(records, s.order.tolist(), n_cores, granule, shared)
        outcomes.add(type(fault).__name__)
        if shared and fault is not None and fault.buffer in ("L1", "UB") and isinstance(fault, CrossCoreRace):
            outcomes.add("on a shared buffer")
    assert outcomes == {"NoneType", "RaceFault", "CrossCoreRace", "on a shared buffer"}


# ------------------------------------------------------------------------------------------ corner cases
def _single_core(items, granule=2):
    """One AIC's stream of (spec, pipe, reads, writes, event, footprint), scheduled."""
    streams = [[Record(0, seq, spec, pipe, None, None, reads, writes, (None, 0), event=event, footprint=fp)
                for seq, (spec, pipe, reads, writes, event, fp) in enumerate(items)]]
    s = schedule(streams, ["AIC"], [0], BASE)
    assert s.clean
    records = streams[0]
    for i, by in s.releases(records):
        records[i].released_by = by
    return records, s, granule


def _one_box_per_core(boxes, pipe=Pipe.FIX, kind="AIC"):
    """Two cores, each one record on `pipe` whose footprint is a box of `boxes`: (records, schedule)."""
    streams = [[Record(c, 0, _MOVE, pipe, None, None, (), (), (None, 0), footprint=(box,))]
               for c, box in enumerate(boxes)]
    return streams[0] + streams[1], schedule(streams, [kind, kind], [0, 1], BASE)


def test_a_race_with_an_access_the_pruning_forgot_is_missed_by_both():
    # 300 MTE2 writes that the M pipe never learns of, then an M read of the first bytes: races.py keeps the
    # last 256 of them only, so the race with the first is missed, and both checkers must miss it alike
    l1 = Buffer("L1", 4096, 32, allocate=False)
    l1.key = (0, "L1")
    items = [(_MOVE, Pipe.M, ((l1, 4000, 4001),), (), None, None)]
    items += [(_MOVE, Pipe.MTE2, (), ((l1, 8 * k, 8 * k + 8),), None, None) for k in range(300)]
    for start, expected in ((0, CLEAN), (8 * 43, CLEAN), (8 * 44, 301), (8 * 299, 301)):
        case = _single_core(items + [(_MOVE, Pipe.M, ((l1, start, start + 8),), (), None, None)])
        records, s, granule = case
        assert first_fault(records, s.order.tolist(), 1, granule)[0] == expected
        assert first_race(records, s, granule) == expected


@pytest.mark.parametrize("writes", [600, 1300])
def test_a_log_that_wraps_around_its_ring_keeps_the_same_accesses(writes):
    # more unordered MTE2 writes than the compiled log's ring holds (512 entries, a power of 2: positions are
    # masked), twice round it for 1,300: an M read races with the last 256 only, as races.py keeps them
    l1 = Buffer("L1", 16384, 32, allocate=False)
    l1.key = (0, "L1")
    items = [(_MOVE, Pipe.M, ((l1, 16000, 16001),), (), None, None)]
    items += [(_MOVE, Pipe.MTE2, (), ((l1, 8 * (k % 1900), 8 * (k % 1900) + 8),), None, None) for k in range(writes)]
    kept = writes - 256
    for slot, expected in ((kept - 1, CLEAN), (kept, writes + 1), (writes - 1, writes + 1)):
        records, s, granule = _single_core(items + [(_MOVE, Pipe.M, ((l1, 8 * slot, 8 * slot + 8),), (), None, None)])
        assert first_fault(records, s.order.tolist(), 1, granule)[0] == expected
        assert first_race(records, s, granule) == expected


def test_the_pruning_keeps_what_the_least_informed_pipe_does_not_know():
    # MTE1 and M touch L1; MTE2 writes 150 slots, telling MTE1 after 50 and M after 80; an access of L1 by a
    # pipe new to it (V) races with a slot only if its log kept it: MTE1 knows of the first 50 only, so the
    # pruning keeps every later slot even though M knows of 80
    l1 = Buffer("L1", 4096, 32, allocate=False)
    l1.key = (0, "L1")
    items = [(_MOVE, Pipe.MTE1, ((l1, 4000, 4001),), (), None, None), (_MOVE, Pipe.M, ((l1, 4001, 4002),), (), None, None)]
    for k in range(150):
        items.append((_MOVE, Pipe.MTE2, (), ((l1, 8 * k, 8 * k + 8),), None, None))
        for after, pipe, event in ((49, Pipe.MTE1, ("MTE2_MTE1", 0)), (79, Pipe.M, ("MTE2_M", 0))):
            if k == after:
                items += [(SET_FLAG, Pipe.MTE2, (), (), event, None), (WAIT_FLAG, pipe, (), (), event, None)]
    for slot, expected in ((10, CLEAN), (49, CLEAN), (50, len(items)), (60, len(items))):
        case = _single_core(items + [(_MOVE, Pipe.V, ((l1, 8 * slot, 8 * slot + 1),), (), None, None)])
        records, s, granule = case
        assert first_fault(records, s.order.tolist(), 1, granule)[0] == expected
        assert first_race(records, s, granule) == expected


def test_atomic_adds_race_with_plain_stores_not_with_each_other():
    gm = Buffer("GM:out", 64, 2, allocate=False)
    add = (gm, 0, (4,), (1,), "atomic")
    for second, expected in ((add, CLEAN), ((gm, 2, (2,), (1,), True), 1), ((gm, 2, (2,), (1,), False), 1)):
        records, s = _one_box_per_core((add, second))
        assert first_fault(records, s.order.tolist(), 2, 2)[0] == expected
        assert first_race(records, s, 2) == expected


@pytest.mark.parametrize("granule, expected", [(2, 1), (1, CLEAN)])
def test_neighbouring_bytes_race_on_a_2_byte_granule_only(granule, expected):
    gm = Buffer("GM:out", 64, 2, allocate=False)
    records, s = _one_box_per_core([(gm, 10 + c, (1,), (1,), True) for c in range(2)], Pipe.MTE3, "AIV")
    assert first_fault(records, s.order.tolist(), 2, granule)[0] == expected
    assert first_race(records, s, granule) == expected


@pytest.mark.parametrize("after", [[(0, 2)], [(2, 2), (0, 4)]])
def test_an_access_just_before_a_sync_all_is_of_the_earlier_generation(after):
    # core 0's write of granule 0 is the last GM access before the SyncAll; after it core 1 writes granule 0
    # alone (a row of one access), or granule 1 and then granules 0 and 1 at once (a row holding an access of
    # this generation and core 0's of the earlier one): neither races (the shadows hold 1 + an access's index:
    # an off-by-one at the generation's start would make them races)
    gm = Buffer("GM:out", 64, 2, allocate=False)

    def write(core, seq, offset, size):
        return Record(core, seq, _MOVE, Pipe.FIX, None, None, (), (), (None, 0),
                      footprint=((gm, offset, (size,), (1,), True),))
    streams = [[write(0, 0, 0, 2), Record(0, 1, SYNC_ALL, Pipe.ALL, None, None, (), (), (None, 0))],
               [Record(1, 0, SYNC_ALL, Pipe.ALL, None, None, (), (), (None, 0))]]
    streams[1] += [write(1, seq, offset, size) for seq, (offset, size) in enumerate(after, 1)]
    s = schedule(streams, ["AIC", "AIC"], [0, 1], BASE)
    records = streams[0] + streams[1]
    for i, by in s.releases(records):
        records[i].released_by = by
    assert first_fault(records, s.order.tolist(), 2, 2)[0] == CLEAN
    assert first_race(records, s, 2) == CLEAN


@pytest.mark.parametrize("other_at, expected", [(0, 1), (4094, 1), (8190, 1), (8192, CLEAN)])
@pytest.mark.parametrize("first_writes", [False, True])
def test_one_foreign_granule_in_a_long_row_is_found(other_at, expected, first_writes):
    """A row of 4,096 granules (one unit-step row, whose check takes a slice's min / max and whose store is a
    fill) against another core's 2 bytes at its start, middle, end or just past it: the same first race as
    races.py, whichever of the two runs first."""
    gm = Buffer("GM:out", 8194, 2, allocate=False)
    row = (gm, 0, (8, 512, 2), (1024, 2, 1), True)
    other = (gm, other_at, (2,), (1,), True)
    records, s = _one_box_per_core((row, other) if first_writes else (other, row))
    assert first_fault(records, s.order.tolist(), 2, 2)[0] == expected
    assert first_race(records, s, 2) == expected


# ------------------------------------------------------------------------------------------ boxes merged
def _granules(shape, strides) -> list:
    """Every granule a box visits, with repeats, sorted (numpy's own enumeration of the index grid)."""
    grid = np.indices(shape).reshape(len(shape), -1)
    return sorted((np.array(strides)[:, None] * grid).sum(axis=0).tolist())


@pytest.mark.parametrize("seed", range(200))
def test_a_merged_box_visits_the_same_granules(seed):
    """_merged (a box's rows made longer) against the granules of the box as given: the same set, and no granule
    lost; dimensions permuted, overlapping, of size 1 or with a negative stride included."""
    from ascend_sim.passes.fast_races import _merged
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 6))
    shape = [int(rng.integers(1, 5)) for _ in range(nd)]
    strides = [1]
    for k in range(nd - 1):  # row major with gaps (0: contiguous), then shuffled
        strides.insert(0, strides[0] * shape[nd - 1 - k] + int(rng.choice([0, 0, 1, 2])))
    order = rng.permutation(nd) if seed % 3 else np.arange(nd)
    shape, strides = [shape[k] for k in order], [strides[k] for k in order]
    if seed % 7 == 0:
        strides[int(rng.integers(nd))] *= -1
    if seed % 11 == 0:
        strides[int(rng.integers(nd))] = strides[int(rng.integers(nd))]  # dimensions that overlap
    sh, st = np.zeros(8, np.int64), np.zeros(8, np.int64)
    sh[:nd], st[:nd] = shape, strides
    n = _merged(sh, st, nd)
    assert 1 <= n <= nd
    assert set(_granules(sh[:n].tolist(), st[:n].tolist())) == set(_granules(shape, strides))
    if all(s > 0 for s in strides) and len(set(_granules(shape, strides))) == int(np.prod(shape)):
        assert _granules(sh[:n].tolist(), st[:n].tolist()) == _granules(shape, strides)


def test_a_fixpipe_like_write_becomes_one_row():
    from ascend_sim.passes.fast_races import _merged
    sh, st = np.zeros(8, np.int64), np.zeros(8, np.int64)
    sh[:4], st[:4] = (2, 320, 16, 1), (5120, 16, 1, 1)  # 3D U-Net's workspace write, in 2-byte granules
    assert _merged(sh, st, 4) == 1 and (sh[0], st[0]) == (10240, 1)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("second_at, expected", [(0, 1), (62, 1), (64, CLEAN)])
def test_a_transposed_box_races_where_the_python_checker_says(transposed, second_at, expected):
    """A write box of 2-byte elements in transposed order (strides not descending) on one core, a write by
    another core at `second_at`: both checkers give the same first race."""
    gm = Buffer("GM:out", 256, 2, allocate=False)
    box = (gm, 0, (4, 8, 2), (2, 8, 1), True) if transposed else (gm, 0, (8, 4, 2), (8, 2, 1), True)
    other = (gm, second_at, (2,), (1,), True)
    records, s = _one_box_per_core((box, other))
    assert first_fault(records, s.order.tolist(), 2, 2)[0] == expected
    assert first_race(records, s, 2) == expected


@pytest.mark.parametrize("seed", range(0, 300, 7))
def test_a_part_of_an_encoding_is_the_encoding_of_its_records(seed):
    """Accesses.part(lo, hi) against accesses() of records[lo:hi] (buffers compared by race key), and the
    first race found from a launch's records cut into parts of one encoding against the Python checkers."""
    from ascend_sim.passes.fast_races import accesses, first_race_of
    records, s, n_cores, granule, shared = _random_launch(seed)
    whole = accesses(records)
    rng = np.random.default_rng(seed)
    cuts = sorted({0, len(records), *rng.integers(0, len(records) + 1, 4).tolist()})
    for lo, hi in zip(cuts, cuts[1:]):
        got, want = whole.part(lo, hi), accesses(records[lo:hi])
        assert np.array_equal(got.counts, want.counts)
        for field in ("r_key", "w_key"):
            assert [got.keys[k] for k in getattr(got, field)] == [want.keys[k] for k in getattr(want, field)]
        assert np.array_equal(got.r_range, want.r_range) and np.array_equal(got.w_range, want.w_range)
        assert [got.keys[k] for k in got.fp[:, 0]] == [want.keys[k] for k in want.fp[:, 0]]
        assert np.array_equal(got.fp[:, 1:], want.fp[:, 1:])
    parts = [whole.part(lo, hi) for lo, hi in zip(cuts, cuts[1:])]
    python, _ = first_fault(records, s.order.tolist(), n_cores, granule, shared)
    assert first_race_of(s, parts, granule, shared) == python


@pytest.mark.parametrize("seed", range(0, 300, 11))
def test_moved_parts_encode_as_their_shifted_arrays(seed):
    """encode adds the blocks' shifts per key by one gather (Accesses.moved keeps them per key): parts of a
    launch's encoding moved by random shifts of some of their buffers encode to the same arrays as the same
    parts with the shifted ranges and boxes written out (`r_range`, `w_range`, `fp`), some parts unmoved."""
    from ascend_sim.passes.fast_races import Accesses, accesses, encode
    records, s, n_cores, granule, shared = _random_launch(seed)
    whole = accesses(records)
    rng = np.random.default_rng(seed)
    cuts = sorted({0, len(records), *rng.integers(0, len(records) + 1, 4).tolist()})
    moved, written = [], []
    for lo, hi in zip(cuts, cuts[1:]):
        part = whole.part(lo, hi)
        shifts = {name: 2 * int(rng.integers(1, 8)) * int(rng.choice([-1, 1])) for name in part.names
                  if rng.random() < 0.6 or lo == 0}  # the first part: every buffer moved
        block = part.moved(part.keys, shifts)
        moved.append(block)
        written.append(Accesses(block.counts, block.r_key, block.r_range, block.w_key, block.w_range, block.fp,
                                block.keys, block.names, block.capacity))
    assert any(p.shift is not None for p in moved) or not whole.names, "no part moved: the shifts are untested"
    got, want = encode(moved, s, granule, shared), encode(written, s, granule, shared)
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert np.array_equal(got[name], value), name


@pytest.mark.parametrize("seed", range(20))
def test_buffer_numbers_are_numpy_s_unique(seed):
    """_buffer_numbers (encode's per-access (core, buffer) numbers and the (buffer, pipe) logs present, in one
    compiled pass) against np.unique on the arrays of one value per access, made with repeat: records with no,
    one or many reads and writes, strided core and pipe columns as encode passes them."""
    from ascend_sim.passes.fast_races import _N, _buffer_numbers
    rng = np.random.default_rng(seed)
    n, n_cores, n_keys = int(rng.integers(1, 60)), int(rng.integers(1, 5)), int(rng.integers(1, 9))
    R = np.zeros((n, 3), np.int64)  # a stand-in for the schedule's R: core and pipe columns, strided
    R[:, 0] = rng.integers(0, n_cores, n)
    R[:, 1] = rng.integers(0, _N + 1, n)
    counts = rng.integers(0, 4, (3, n))
    key_of = rng.integers(0, n_keys, int(counts[0].sum() + counts[1].sum()))
    per_access = np.concatenate((counts[0], counts[1]))
    values = np.repeat(np.tile(R[:, 0], 2), per_access) * n_keys + key_of
    want_numbers = np.unique(values, return_inverse=True)[1].reshape(-1)
    want_pairs = np.unique(want_numbers * (_N + 1) + np.repeat(np.tile(R[:, 1], 2), per_access))
    out = np.full(key_of.size, -7, np.int64)
    n_bufs, pairs = _buffer_numbers(R[:, 0], R[:, 1], counts, key_of, n_keys, n_cores, out)
    assert np.array_equal(out, want_numbers)
    assert n_bufs == (int(want_numbers.max()) + 1 if key_of.size else 0)
    assert np.array_equal(pairs, want_pairs)


@pytest.mark.parametrize("seed", range(10))
def test_footprint_buffers_are_ranked_as_numpy_s_unique(seed):
    """_ranked (encode's numbering of the GM footprints' buffers, without sorting every box) against np.unique:
    few buffers over many boxes, gaps between the numbers, one box, a strided column as encode passes it."""
    from ascend_sim.passes.fast_races import _ranked
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000)) if seed else 1
    numbers = rng.choice(rng.integers(0, 40, int(rng.integers(1, 6))), n)
    column = np.zeros((n, 3), np.int64)
    column[:, 1] = numbers
    used, rank = _ranked(column[:, 1])
    want_used, want_rank = np.unique(numbers, return_inverse=True)
    assert np.array_equal(used, want_used) and np.array_equal(rank, want_rank.reshape(-1))
