"""The passes of a replay run without the blocks' records (ascend_sim/engine/replay_passes.py): full runs and
runs with race checks take that path, give the exact engine's records, cycles, bytes and faults, and what they
derive per block from its template (the race checker's arrays, the operands of the data work) equals what the
block's materialised records give."""
import numpy as np
import pytest

from ascend_sim import Chip, SimFault
from ascend_sim.ascendc import (PIPE_MTE3, DataCopy, DataCopyParams, GlobalTensor, HardEvent, PipeBarrier, TBuf,
                                TPipe, TPosition, WaitFlag, replay_unit)
from ascend_sim.engine import forked_data, replay_engine, replay_passes
from ascend_sim.engine.replay_engine import Block
from ascend_sim.machine.tensor import GmAddr
from ascend_sim.passes.fast_races import accesses
from tests.ascend_sim.engine.test_engines import all_fields, dx_run
from tests.ascend_sim.engine.test_replay import GoodTiles, observe, tiles_kernel


@pytest.fixture
def no_materialise(monkeypatch):
    """Fail if a run makes its blocks' records before the end of the launch (the path this module replaces)."""
    def refuse(chip, cores):
        if replay_engine.has_blocks(cores):
            raise AssertionError("the blocks were materialised")
    monkeypatch.setattr(replay_engine, "materialise", refuse)


@pytest.mark.parametrize("options", [{}, {"execute": False}], ids=["full", "timing with race checks"])
def test_tiles_run_without_materialising_and_agree(options, no_materialise):
    replayed, chip = observe("replay", tiles_kernel(GoodTiles, 8), **options)
    assert chip.replayer.hits == 14
    assert replayed == observe("exact", tiles_kernel(GoodTiles, 8), **options)[0]


class Stores:
    """Each `store(i)` writes tile i of GM (256 fp16) from L1 in four DataCopys: no two cores may store one tile
    without a cross-core flag between them."""

    def __init__(self, dst):
        self.dst = GlobalTensor(np.float16).SetGlobalBuffer(dst)
        self.pipe = TPipe()
        self.l1 = TBuf(TPosition.A1)
        self.pipe.InitBuffer(self.l1, 4096)

    @replay_unit("Stores.store", exclude=("dst",), anchors=lambda api, i: {api.dst.buffer: api.dst.address + i * 512})
    def store(self, i):
        l1 = self.l1.Get(np.float16)
        for quarter in range(4):
            DataCopy(self.dst[i * 256 + quarter * 64], l1[quarter * 64], DataCopyParams(1, 4, 0, 0))
            PipeBarrier(PIPE_MTE3)


def _stores(first_tiles):
    """Core c stores tiles first_tiles[c] .. first_tiles[c] + 3."""
    def body(dst):
        from ascend_sim.ascendc import GetBlockIdx

        api = Stores(dst)
        start = first_tiles[GetBlockIdx()]
        for i in range(start, start + 4):
            api.store(i)
    return body


def _run_stores(engine, first_tiles, **options):
    chip = Chip(engine=engine, **options)
    dst = GmAddr(chip.gm.upload("out", np.zeros(256 * 8, np.float16)))
    try:
        report = chip.launch(_stores(first_tiles), 2, dst)
    except SimFault as fault:
        return ("fault", type(fault).__name__, str(fault)), chip
    return (all_fields(report), report.to_dict()), chip


@pytest.mark.parametrize("options", [{}, {"execute": False}], ids=["full", "timing with race checks"])
def test_a_race_between_replayed_blocks_faults_as_on_the_exact_engine(options, monkeypatch):
    """Core 1's stores (all replayed) hit tile 3, which core 0 stores in a replayed call too: a GM race found in
    blocks, reported with the Python checker's message."""
    found = []
    real = replay_passes.race_free
    monkeypatch.setattr(replay_passes, "race_free", lambda *a: found.append(real(*a)) or found[-1])
    exact, _ = _run_stores("exact", (0, 3), **options)
    replayed, chip = _run_stores("replay", (0, 3), **options)
    assert exact[0] == "fault" and exact[1] == "CrossCoreRace"
    assert replayed == exact
    assert found == [False] and chip.replayer.hits >= 6
    # no overlap: no race, and the compiled checker said so on the blocks
    found.clear()
    clean, _ = _run_stores("replay", (0, 4), **options)
    assert clean == _run_stores("exact", (0, 4), **options)[0] and found == [True]


def test_a_race_between_a_block_on_another_core_and_a_real_record_is_found(monkeypatch):
    """Core 1's last load replays core 0's template on core 1's L1; a DataCopy into that L1 right after it, with
    no WaitFlag, races with the block's LoadData: the block's accesses are on core 1's buffers."""
    def body(src):
        from ascend_sim.ascendc import GetBlockIdx

        api = GoodTiles(src, 4)
        for i in range(4):
            api.load(i)
        if GetBlockIdx() == 1:
            DataCopy(api.l1.Get(np.float16), api.src[0], DataCopyParams(1, 16, 0, 0))
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    found = []
    real = replay_passes.race_free
    monkeypatch.setattr(replay_passes, "race_free", lambda *a: found.append(real(*a)) or found[-1])

    def fault(engine):
        chip = Chip(engine=engine)
        with pytest.raises(SimFault) as info:
            chip.launch(body, 2, GmAddr(chip.gm.upload("in", np.zeros(256 * 8, np.float16))))
        return type(info.value).__name__, str(info.value)
    exact = fault("exact")
    assert exact[0] == "RaceFault" and "core 1," in exact[1]
    assert fault("replay") == exact and found == [False]


def _each_block(monkeypatch, check):
    """Call check(chip, cores, block) on every block of every replay launch, before the passes run."""
    real = replay_passes.run

    def run(chip, cores, s):
        for core in cores:
            for item in core.stream:
                if item.__class__ is Block:
                    check(chip, item)
        return real(chip, cores, s)
    monkeypatch.setattr(replay_passes, "run", run)


def _same_accesses(a, b):
    """Two Accesses encode the same accesses (key numbers are each part's own: compared by key)."""
    assert np.array_equal(a.counts, b.counts)
    assert [a.keys[k] for k in a.r_key] == [b.keys[k] for k in b.r_key]
    assert [a.keys[k] for k in a.w_key] == [b.keys[k] for k in b.w_key]
    assert np.array_equal(a.r_range, b.r_range) and np.array_equal(a.w_range, b.w_range)
    assert [a.keys[k] for k in a.fp[:, 0]] == [b.keys[k] for k in b.fp[:, 0]]
    assert np.array_equal(a.fp[:, 1:], b.fp[:, 1:])
    assert dict(zip(a.keys, zip(a.names, a.capacity))) == dict(zip(b.keys, zip(b.names, b.capacity)))


@pytest.mark.parametrize("case", ["C3D conv3a, shrunk", "R3D stem, shrunk", "MIX NCDHW, groups, odd channels, bf16"])
def test_dx_blocks_give_their_records_accesses_and_operands(case, monkeypatch, no_materialise):
    """Per block: its flattened blocks (replay_engine.flattened, the passes' view) make its records one for one;
    per flattened block, the template's Accesses shifted equal the block's records' Accesses, and the data pass's
    operands equal the records' (buffers by identity, addresses shifted); the run equals the exact engine's."""
    plans: dict = {}
    made: dict = {}
    encodings: dict = {}  # per template (id): its Accesses, and the race keys lists shared as race_free shares them
    keys_on_core: dict = {}
    blocks = []

    def check(chip, block):
        records = block.records(chip)
        pieces = replay_engine.flattened([block], made)
        assert all(piece.__class__ is Block for piece in pieces)
        flat = [rec for piece in pieces for rec in piece.records(chip)]
        assert len(flat) == len(records) == len(block)
        for got, want in zip(flat, records):
            assert _fields(got) == _fields(want)
        for piece, start in zip(pieces, np.cumsum([0] + [len(p) for p in pieces]).tolist()):
            assert not any(item.__class__ is Block for item in piece.template.records)
            piece_records = records[start:start + len(piece)]
            encoded = encodings.setdefault(id(piece.template), accesses(piece.template.records))
            moved = replay_passes.block_accesses(chip, piece, encoded, keys_on_core)
            _same_accesses(moved, accesses(piece_records))
            plan = plans.setdefault(id(piece.template), replay_passes._Plan(piece.template, len(plans) + 1))
            shifted = any(piece.shifts.values())
            for j, (run, rec) in enumerate(zip(plan.runs, piece_records)):
                if run is not None:
                    got = plan.operand(chip.cores[piece.core], piece, shifted, j)
                    assert got.args == rec.args and got.registers == rec.registers
                    # the operand's path: on another core or not, GM shifted or not, with GM address fields or not
                    paths.add((piece.core != piece.template.core, shifted, bool(plan.fields.get(j, (0, []))[1])))
        blocks.append((block.core != block.template.core or any(block.shifts.values()), len(pieces) > 1))
    paths: set = set()
    _each_block(monkeypatch, check)
    replayed = dx_run(case, True, "replay")
    assert any(moved for moved, _ in blocks), "no block moved to another core or GM address: the remap is untested"
    if case == "R3D stem, shrunk":
        assert any(nested for _, nested in blocks), "no template holds a nested block: flattening is untested"
    # on another core, GM shifted: records without GM fields (kept per core) and with them (made per block)
    assert {(True, True, False), (True, True, True)} <= paths, paths
    exact = dx_run(case, True, "exact")
    assert all_fields(replayed.report) == all_fields(exact.report)
    assert replayed.result.tobytes() == exact.result.tobytes()


def _fields(rec) -> tuple:
    """What a record of a block holds before it is scheduled (Block.records)."""
    return (rec.core, rec.seq, rec.spec, rec.name, rec.pipe, rec.params, rec.registers, rec.src, rec.path,
            rec.nbytes, rec.event, rec.api, rec.args, rec.reads, rec.writes, rec.footprint)


def test_groups_ordered_by_cross_core_flags_stay_in_one_pass(monkeypatch):
    """Both cube cores set a mode-0 cross-core flag and wait for it (a round of every core's sets): each wait is
    released by the other AI core too, so the groups are not independent."""
    from ascend_sim.ascendc import CrossCoreSetFlag, CrossCoreWaitFlag

    def body(src):
        api = GoodTiles(src, 4)
        for i in range(4):
            api.load(i)
        CrossCoreSetFlag(0, PIPE_MTE3, 1)
        CrossCoreWaitFlag(1)
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    split = []
    real = replay_passes.independent_groups
    monkeypatch.setattr(replay_passes, "independent_groups", lambda *a: split.append(real(*a)) or split[-1])
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", "2")
    monkeypatch.setattr(forked_data, "FORK_FROM", 0)
    chip = Chip(engine="replay")
    chip.launch(body, 2, GmAddr(chip.gm.upload("in", np.zeros(256 * 8, np.float16))), kernel_type="MIX_AIC_1_0")
    assert chip.replayer.hits and split == [None]
