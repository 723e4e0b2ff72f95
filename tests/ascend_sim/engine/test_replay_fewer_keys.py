"""Fewer replay keys for the same state: a flag set and waited leaves no balance entry of 0 on the core, an event
ID given back leaves no empty set in its TPipe, so a replay unit called after such a pair outside it hits the
template made before the pair (its key holds both) instead of making a new one; a unit declared for some core types
only is not keyed on the others."""
import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import HardEvent, SetFlag, TPipe, WaitFlag, replay_unit
from ascend_sim.engine.chip import current_core
from ascend_sim.machine.tensor import GmAddr
from tests.ascend_sim.engine.test_engines import all_fields
from tests.ascend_sim.engine.test_replay import GoodTiles, Tiles, observe, tiles_kernel


def test_a_flag_set_and_waited_leaves_the_balances_as_they_were():
    seen = []

    def body():
        core = current_core()
        seen.append(dict(core.flag_balance))
        SetFlag(HardEvent.MTE2_MTE1, 1)
        seen.append(dict(core.flag_balance))
        WaitFlag(HardEvent.MTE2_MTE1, 1)
        seen.append(dict(core.flag_balance))
        WaitFlag(HardEvent.MTE1_M, 0)  # waited before it is set: -1 until the SetFlag
        seen.append(dict(core.flag_balance))
        SetFlag(HardEvent.MTE1_M, 0)
        seen.append(dict(core.flag_balance))
    Chip(engine="exact", execute=False).launch(body, 1)
    assert seen == [{}, {("MTE2_MTE1", 1): 1}, {}, {("MTE1_M", 0): -1}, {}]


def test_an_event_id_given_back_leaves_the_pipe_as_it_was():
    seen = []

    def body():
        pipe = TPipe()
        seen.append({event: set(ids) for event, ids in pipe.event_ids.items()})  # on the AIC: M_MTE1's taken
        first = pipe.AllocEventID(HardEvent.M_FIX)
        second = pipe.AllocEventID(HardEvent.M_FIX)
        seen.append({event: set(ids) for event, ids in pipe.event_ids.items()})
        pipe.ReleaseEventID(HardEvent.M_FIX, first)
        seen.append({event: set(ids) for event, ids in pipe.event_ids.items()})
        pipe.ReleaseEventID(HardEvent.M_FIX, second)
        seen.append({event: set(ids) for event, ids in pipe.event_ids.items()})
    Chip(engine="exact", execute=False).launch(body, 1)
    start = seen[0]
    assert HardEvent.M_FIX not in start
    assert seen == [start, {**start, HardEvent.M_FIX: {0, 1}}, {**start, HardEvent.M_FIX: {1}}, start]


def _tiles_with_a_flag_pair_between(src):
    """Three loads; between the second and the third, a flag pair and an event ID taken and given back, outside
    the unit (as dx's GetTensorC does between two tiles)."""
    api = GoodTiles(src, 3)
    api.load(0)
    api.load(1)
    SetFlag(HardEvent.M_FIX, 0)
    WaitFlag(HardEvent.M_FIX, 0)
    api.pipe.ReleaseEventID(HardEvent.FIX_M, api.pipe.AllocEventID(HardEvent.FIX_M))
    api.load(2)
    WaitFlag(HardEvent.MTE1_MTE2, 0)


def test_a_unit_after_a_flag_pair_outside_it_hits_its_template():
    runs = []
    for engine in ("exact", "replay"):
        chip = Chip(engine=engine, execute=False, check_races=False)
        src = GmAddr(chip.gm.upload("in", np.arange(256 * 8, dtype=np.float16)))
        runs.append(all_fields(chip.launch(_tiles_with_a_flag_pair_between, 1, src)))
    assert runs[0] == runs[1]
    # load(0) and load(1) make a template each (the register load(0) writes is in load(1)'s key); load(2) hits
    # load(1)'s: with the balance of 0 and the empty event-ID set kept, its key differed and it made a third
    assert len(chip.replayer.templates) == 2 and chip.replayer.hits == 1


class AicTiles(Tiles):
    load = replay_unit("Tiles.load", exclude=("src",), core_types=("AIC",),
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


class AivTiles(Tiles):
    load = replay_unit("Tiles.load", exclude=("src",), core_types=("AIV",),
                       anchors=lambda api, i: {api.src.buffer: api.src.address + i * 512})(Tiles.load)


def test_a_unit_is_replayed_on_the_core_types_it_names_only():
    """core_types=: on the AIC cores of an AIC-only launch, a unit naming the AIC replays as one naming no type
    (2 templates, 14 hits: test_replay's GoodTiles); one naming the AIV only runs for real (no unit call reaches a
    replayer). The records are the exact engine's either way."""
    exact, _ = observe("exact", tiles_kernel(GoodTiles, 8), execute=False)
    on_aic, chip = observe("replay", tiles_kernel(AicTiles, 8), execute=False)
    assert on_aic == exact and len(chip.replayer.templates) == 2 and chip.replayer.hits == 14
    on_aiv, chip = observe("replay", tiles_kernel(AivTiles, 8), execute=False)
    assert on_aiv == exact and chip.replayer is None
