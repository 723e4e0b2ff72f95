"""The replay engine (ascend_sim/engine/replay.py): replayed API units give the exact engine's records, cycles,
result bytes and faults; a faulting call is never a template; verify mode catches a broken key and a broken
restore; the records of a timing-only run are made only when read."""
import numpy as np
import pytest

from ascend_sim import Chip, OutOfBounds, ReplayMismatch, SyncFault
from ascend_sim.ascendc import (PIPE_MTE2, DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData,
                                LoadData2DParams, LoadDataRepeatParams, PipeBarrier, SetFlag, SetLoadDataRepeat, TBuf,
                                TPipe, TPosition, WaitFlag, replay_unit)
from ascend_sim.engine.replay_engine import LazyLog
from ascend_sim.machine.tensor import GmAddr
from tests.ascend_sim.engine.test_engines import all_fields, dx_run


class Tiles:
    """A small kernel API: each `load(i)` copies tile i of GM (256 fp16) to L1, then into L0A, with the flags
    between; `load` is a replayable unit whose GM accesses move with tile i."""

    def __init__(self, src, count):
        self.src = GlobalTensor(np.float16).SetGlobalBuffer(src)
        self.pipe = TPipe()
        self.l1, self.l0a = TBuf(TPosition.A1), TBuf(TPosition.A2)
        self.pipe.InitBuffer(self.l1, 4096)
        self.pipe.InitBuffer(self.l0a, 4096)
        self.count = count
        self.stride = 1
        SetFlag(HardEvent.MTE1_MTE2, 0)  # L1 starts free

    def load(self, i):
        l1 = self.l1.Get(np.float16)
        WaitFlag(HardEvent.MTE1_MTE2, 0)
        DataCopy(l1, self.src[i * 256], DataCopyParams(1, 16, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        SetLoadDataRepeat(LoadDataRepeatParams(1, self.stride))  # a register the unit writes: restored on a hit
        LoadData(self.l0a.Get(np.float16), l1, LoadData2DParams(repeatTimes=1))
        SetFlag(HardEvent.MTE1_MTE2, 0)
        PipeBarrier(PIPE_MTE2)
        return self.stride


def declare(extra=lambda api, i: ()):
    return replay_unit("Tiles.load", exclude=("src",), extra=extra,
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


class GoodTiles(Tiles):
    load = declare()


def tiles_kernel(cls, tiles, out_of_bounds_at=None):
    def body(src):
        api = cls(src, tiles)
        for i in range(tiles):
            api.load(out_of_bounds_at if i == out_of_bounds_at else i)
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    return body


def observe(engine, body, size=256 * 8, **options):
    """(records with every field, cycles, report, GM bytes, hits) or ("fault", type, message)."""
    chip = Chip(engine=engine, **options)
    src = GmAddr(chip.gm.upload("in", np.arange(size, dtype=np.float16)))
    try:
        report = chip.launch(body, 2, src)
    except (OutOfBounds, ReplayMismatch) as fault:
        return ("fault", type(fault).__name__, str(fault)), chip
    return (all_fields(report), report.to_dict(), {n: bytes(b.data) if b.data is not None else None
                                                  for n, b in chip.gm.allocations.items()}), chip


@pytest.mark.parametrize("options", [{}, {"execute": False}, {"execute": False, "check_races": False}],
                         ids=["full", "timing", "timing-lazy"])
def test_replayed_units_agree_with_the_exact_engine(options):
    exact, _ = observe("exact", tiles_kernel(GoodTiles, 8), **options)
    replayed, chip = observe("replay", tiles_kernel(GoodTiles, 8), **options)
    assert replayed == exact
    # core 0's first two calls are templates (the first sees no SetLoadDataRepeat register yet); every other
    # call replays one, core 1's on its own buffers
    assert len(chip.replayer.templates) == 2
    assert chip.replayer.hits == 6 + 8


def test_a_faulting_call_is_never_a_template_and_faults_as_on_the_exact_engine():
    seen = []

    def first_call_faults(src):
        api = GoodTiles(src, 2)
        with pytest.raises(OutOfBounds):
            api.load(100)  # tile 100 is past the 8 tiles of GM
        seen.append(len(chip.replayer.templates))
        for i in range(3):
            api.load(i)
        seen.append((len(chip.replayer.templates), chip.replayer.hits))
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    chip = Chip(engine="replay", execute=False, check_races=False)
    src = GmAddr(chip.gm.upload("in", np.zeros(256 * 8, np.float16)))
    with pytest.raises(SyncFault, match="deadlock"):  # the faulting call's WaitFlag is left without its SetFlag
        chip.launch(first_call_faults, 1, src)
    # no template from the faulting call; load(0) and load(1) made one each (the register the first finds differs),
    # load(2) replayed the second
    assert seen == [0, (2, 1)]
    body = tiles_kernel(GoodTiles, 3)  # tile 2 of a GM that holds 2: the hit's shifted range is out of bounds
    exact, _ = observe("exact", body, size=512)
    replayed, _ = observe("replay", body, size=512)
    assert exact[0] == "fault" and replayed == exact


def test_a_shifted_block_out_of_bounds_runs_for_real_and_faults_the_same():
    # tiles 0..7 fit; the 9th load (tile 8) would be a hit whose shifted range leaves GM
    exact, _ = observe("exact", tiles_kernel(GoodTiles, 9))
    replayed, _ = observe("replay", tiles_kernel(GoodTiles, 9))
    assert exact[0] == "fault" and "OutOfBounds" == exact[1] and replayed == exact


def test_verify_mode_passes_and_checks_every_hit():
    verified, chip = observe("replay", tiles_kernel(GoodTiles, 8), replay="verify")
    assert chip.replayer.verified == chip.replayer.hits == 14
    assert verified == observe("exact", tiles_kernel(GoodTiles, 8))[0]


def test_sampled_verify_mode_checks_some_hits():
    _, chip = observe("replay", tiles_kernel(GoodTiles, 8), replay=0.25)
    assert 0 < chip.replayer.verified < chip.replayer.hits


class BrokenKeyTiles(Tiles):
    """`stride` (which the SetLoadDataRepeat record carries) left out of the key by excluding it."""
    load = replay_unit("Tiles.load", exclude=("src", "stride"),
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


def test_verify_mode_catches_a_broken_key():
    def body(src):
        api = BrokenKeyTiles(src, 4)
        for i in range(4):
            api.stride = 1 + i // 2  # 1, 1, 2, 2: excluded from the key, but the SetLoadDataRepeat record has it
            api.load(i)
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    observed, _ = observe("replay", body, replay="verify")
    assert observed[:2] == ("fault", "ReplayMismatch")
    assert "unit Tiles.load" in observed[2] and "record 4 (#" in observed[2] and "field params" in observed[2]


def test_verify_mode_exercises_the_restore_path(monkeypatch):
    from ascend_sim.engine import replay

    real_replay = replay.Replayer._replay

    def forgets_registers(self, core, before, template, shifts):
        result = real_replay(self, core, before, template, shifts)
        core.registers.pop("loaddata_repeat", None)  # a restore bug: the register write is lost
        return result
    monkeypatch.setattr(replay.Replayer, "_replay", forgets_registers)
    observed, _ = observe("replay", tiles_kernel(GoodTiles, 4), replay="verify")
    assert observed[:2] == ("fault", "ReplayMismatch") and "registers after the call differs" in observed[2]


class ShortKeyTiles(Tiles):
    """`load` with a declared short key: the stride (what the SetLoadDataRepeat record carries)."""
    load = replay_unit("Tiles.load", exclude=("src",), key=lambda api, i: (api.stride, api.count),
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


class IncompleteShortKeyTiles(Tiles):
    """The short key forgets the stride."""
    load = replay_unit("Tiles.load", exclude=("src",), key=lambda api, i: (api.count,),
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


def test_a_short_key_hit_walks_no_state_and_agrees_with_the_exact_engine(monkeypatch):
    from ascend_sim.engine import replay

    walks = []
    real_state = replay._State
    monkeypatch.setattr(replay, "_State", lambda *args: walks.append(1) or real_state(*args))
    for options in ({}, {"execute": False, "check_races": False}):
        walks.clear()
        replayed, chip = observe("replay", tiles_kernel(ShortKeyTiles, 8), **options)
        assert replayed == observe("exact", tiles_kernel(ShortKeyTiles, 8), **options)[0]
        # two templates (the first call finds no SetLoadDataRepeat register yet), a walk before and after each;
        # the 14 hits (core 1's first call included: its registers are core 0's at its first call) walk nothing
        assert len(chip.replayer.templates) == 2 and chip.replayer.hits == 14 and len(walks) == 4


def test_verify_mode_checks_a_short_key_hit_against_the_full_key():
    verified, chip = observe("replay", tiles_kernel(ShortKeyTiles, 8), replay="verify")
    assert chip.replayer.verified == chip.replayer.hits == 14
    assert verified == observe("exact", tiles_kernel(ShortKeyTiles, 8))[0]


def test_verify_mode_catches_an_incomplete_short_key():
    def body(src):
        api = IncompleteShortKeyTiles(src, 4)
        for i in range(4):
            api.stride = 1 + i // 2  # 1, 1, 2, 2: the third call's short key matches the second's template
            api.load(i)
        WaitFlag(HardEvent.MTE1_MTE2, 0)
    observed, _ = observe("replay", body, replay="verify")
    assert observed[:2] == ("fault", "ReplayMismatch")
    assert "unit Tiles.load on AIC 0" in observed[2] and "short key matched a template whose full key differs" in \
        observed[2] and "attribute stride: this call 2, the template's 1" in \
        observed[2]


def test_a_timing_only_run_makes_its_records_when_read():
    chip = Chip(engine="replay", execute=False, check_races=False)
    src = GmAddr(chip.gm.upload("in", np.zeros(256 * 8, np.float16)))
    report = chip.launch(tiles_kernel(GoodTiles, 8), 2, src)
    log = report.logs[0]
    assert isinstance(log, LazyLog) and log._list is None
    assert len(log) == report.cores[0].instructions and log._list is None  # len() makes nothing
    assert [r.seq for r in log] == list(range(len(log)))
    assert len(chip.executed) == sum(map(len, report.logs))


def test_auto_replays_without_hooks_and_not_with_them():
    chip = Chip()
    assert chip.replaying and not Chip(hooks=[print]).replaying and not Chip(replay="off").replaying
    with pytest.raises(ValueError, match="engine='replay' runs no hooks"):
        Chip(engine="replay", hooks=[print])
    with pytest.raises(ValueError, match=r"replay='sometimes' is not one of 'on', 'off', 'verify' or a fraction"):
        Chip(replay="sometimes")
    with pytest.raises(ValueError, match=r"replay=1.5 is not one of"):
        Chip(replay=1.5)


@pytest.mark.parametrize("case", ["C3D conv3a, shrunk", "MIX NCDHW, groups, odd channels, bf16"])
def test_dx_units_replay_and_verify(case, monkeypatch):
    """The dx API's tile, its kernel planes and the AIV post-process are replayed (hits), and verify mode passes
    on them."""
    from ascend_sim.engine import replay

    hits = []
    real_replay = replay.Replayer._replay
    monkeypatch.setattr(replay.Replayer, "_replay", lambda self, core, objects, template, shifts: hits.append(
        (core.core_type.name, template.unit)) or real_replay(self, core, objects, template, shifts))
    exact = dx_run(case, True, "exact")
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    verified = dx_run(case, True, "replay")
    assert {("AIC", "Conv3DBackpropInput._compute"), ("AIV", "VecPostProcess")} <= set(hits)
    if case.startswith("C3D"):  # a tile that runs for real replays its repeated kernel planes
        assert ("AIC", "Conv3DBackpropInput._compute_kernel_plane") in hits
    assert all_fields(verified.report) == all_fields(exact.report)
    assert verified.result.tobytes() == exact.result.tobytes()


def test_a_broken_dx_key_is_caught_by_verify_mode(monkeypatch):
    from kernels.conv3d_backprop_input.kernel.arch22.api import Conv3DBackpropInput

    unit = Conv3DBackpropInput._compute.unit
    monkeypatch.setattr(unit, "extra", lambda api: ())  # the kernel planes and the top rows no longer in the key
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(ReplayMismatch, match=r"unit Conv3DBackpropInput._compute on AIC \d+"):
        dx_run("C3D conv3a, shrunk", False, "replay")
