"""A template's hit side (engine/replay.py `Template.ready`): made at its first hit only, and its GM spans are the
extent of the GM ranges of the records its block stands for."""

import numpy as np

from ascend_sim import Chip
from ascend_sim.engine import replay
from ascend_sim.engine.replay_engine import expand
from ascend_sim.machine.tensor import GmAddr
from tests.ascend_sim.engine.test_engines import all_fields, dx_run
from tests.ascend_sim.engine.test_replay import GoodTiles, tiles_kernel


def _plain_gm_extent(records) -> dict:
    """{GM buffer: (lowest, highest) byte} over the records' reads and writes, written out for the test."""
    extent: dict = {}
    for r in records:
        for buf, lo, hi in list(r.reads) + list(r.writes):
            if buf.name.startswith("GM:"):
                old_lo, old_hi = extent.get(buf, (lo, hi))
                extent[buf] = (min(old_lo, lo), max(old_hi, hi))
    return extent


def test_gm_spans_are_the_gm_extent_of_the_records_with_nested_blocks_made(monkeypatch):
    """Checked on every template of a dx layer whose tiles replay their kernel planes (nested blocks), against
    the records those blocks make, as the template is made (the chip still running)."""
    checked = []
    real_template = replay._template

    def template_and_check(u, core, roots, before, records, *args):
        made = real_template(u, core, roots, before, records, *args)
        if made is not None:
            assert made.ready().gm_spans == _plain_gm_extent(expand(records, core.chip, {})), u.name
            checked.append(any(item.__class__ is replay.Block for item in records))
        return made
    monkeypatch.setattr(replay, "_template", template_and_check)
    dx_run("C3D conv3a, shrunk", False, "replay", check_races=False)
    assert checked and any(checked)  # some templates hold the blocks of their replayed kernel planes


def test_a_templates_hit_side_is_made_at_its_first_hit_only(monkeypatch):
    hit = set()
    real_replay = replay.Replayer._replay
    monkeypatch.setattr(replay.Replayer, "_replay", lambda self, core, objects, template, shifts: hit.add(
        id(template)) or real_replay(self, core, objects, template, shifts))
    runs = []
    for engine in ("exact", "replay"):
        chip = Chip(engine=engine, execute=False, check_races=False)
        src = GmAddr(chip.gm.upload("in", np.arange(256 * 8, dtype=np.float16)))
        runs.append(all_fields(chip.launch(tiles_kernel(GoodTiles, 8), 1, src)))
    assert runs[0] == runs[1]
    templates = list(chip.replayer.templates.values())
    # one core: the first call's template (no register written yet) is never hit, the second's by the 6 after it
    assert [id(t) in hit for t in templates] == [False, True] and chip.replayer.hits == 6
    assert [t.pending is None for t in templates] == [False, True]

