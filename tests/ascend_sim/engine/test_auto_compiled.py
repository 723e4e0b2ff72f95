"""The auto engine's choice of the compiled passes: once the process's launches reach AUTO_COMPILED_FROM records
(this one's included), or once numba is loaded (its first load costs more than a short stream saves); the replayed
calls' records are left unmade only then. Whichever it takes, the results are the exact engine's (test_engines.py)."""
from __future__ import annotations

import sys

from ascend_sim.engine import chip
from ascend_sim.engine.replay_engine import Block, stream_records
from ascend_sim.passes import fast_races, fast_schedule  # noqa: F401  (loaded, so that numba can be hidden)
from tests.ascend_sim.engine.test_replay import GoodTiles, observe, tiles_kernel


def test_compiled_passes_pay_from_the_threshold_or_once_numba_is_loaded(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    monkeypatch.setattr(chip, "_python_records", [0])
    assert not chip._compiled_pays(chip.AUTO_COMPILED_FROM - 1)
    assert chip._compiled_pays(chip.AUTO_COMPILED_FROM)
    monkeypatch.setitem(sys.modules, "numba", object())
    assert chip._compiled_pays(1)


def test_earlier_launches_records_count_toward_the_threshold_until_numba_is_loaded(monkeypatch):
    numba = sys.modules["numba"]
    monkeypatch.delitem(sys.modules, "numba")
    monkeypatch.setattr(chip, "_python_records", [0])
    (_, report, _), _ = observe("auto", tiles_kernel(GoodTiles, 8))
    ran = sum(report["instruction_counts"].values())
    assert ran > 0 and chip._python_records == [ran]
    assert not chip._compiled_pays(chip.AUTO_COMPILED_FROM - ran - 1)
    assert chip._compiled_pays(chip.AUTO_COMPILED_FROM - ran)
    monkeypatch.setitem(sys.modules, "numba", numba)  # loaded: the Python share stops counting
    observe("auto", tiles_kernel(GoodTiles, 8))
    assert chip._python_records == [ran]


def test_a_block_counts_as_its_templates_records():
    class Template:
        size = 40

    class Core:
        stream = [object(), Block(Template(), 0, 0, {}, None), object()]

    assert stream_records([Core(), Core()]) == 2 * (40 + 2)
