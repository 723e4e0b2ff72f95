"""The auto engine's choice of the compiled passes: from AUTO_COMPILED_FROM records on, or once numba is loaded
(its first import and load cost more than a short stream saves); the replayed calls' records are left unmade only
then. Whichever it takes, the results are the exact engine's (test_engines.py)."""
from __future__ import annotations

import sys

from ascend_sim.engine import chip
from ascend_sim.engine.replay_engine import Block, stream_records


def test_compiled_passes_pay_from_the_threshold_or_once_numba_is_loaded(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    assert not chip._compiled_pays(chip.AUTO_COMPILED_FROM - 1)
    assert chip._compiled_pays(chip.AUTO_COMPILED_FROM)
    monkeypatch.setitem(sys.modules, "numba", object())
    assert chip._compiled_pays(1)


def test_a_block_counts_as_its_templates_records():
    class Template:
        size = 40

    class Core:
        stream = [object(), Block(Template(), 0, 0, {}, None), object()]

    assert stream_records([Core(), Core()]) == 2 * (40 + 2)
