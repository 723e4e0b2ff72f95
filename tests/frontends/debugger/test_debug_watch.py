"""Watchpoints (Debugger.watch, `watch` at the prompt): they stop exactly at the records that change the watched
bytes (found here by stepping one record at a time and comparing), not at a strided write whose span only covers
them; the prompt reports the old and new value."""
import io
import sys

import numpy as np
import pytest

from frontends.cli import main
from tests.frontends.debugger.test_debug_tensors import MATMUL, simulate

PROMPT = "(ascend-sim) "


@pytest.fixture(scope="module")
def run():
    return simulate(MATMUL)


def changes(dbg, key, lo, hi) -> list:
    """The records after which bytes [lo, hi) of `key` differ from before (stepping and comparing)."""
    read = (lambda: dbg.gm(key[1])[lo:hi].copy()) if key[0] == "GM" else (lambda: dbg.buffer(*key)[lo:hi].copy())
    dbg.goto(0)
    found, before = [], read()
    for i in range(len(dbg)):
        dbg.step()
        now = read()
        if not np.array_equal(now, before):
            found.append(i)
        before = now
    return found


def stops(dbg, predicate) -> list:
    dbg.goto(0)
    found = []
    while dbg.continue_(predicate) is not None:
        found.append(dbg.seq - 1)
    return found


@pytest.mark.parametrize("key, lo, hi", [(("GM", "C"), 3538, 3540), ((1, "L0C"), 0, 256), ((0, "L0A"), 512, 1024),
                                         ((0, "L1"), 100, 104)])
def test_watch_stops_where_the_bytes_change(run, key, lo, hi):
    dbg, _, _ = run
    expect = changes(dbg, key, lo, hi)
    assert expect and stops(dbg, dbg.watch(key, lo, hi)) == expect


def test_a_strided_write_over_the_bytes_does_not_stop(run):
    """L0A fractal 1 lies inside the span of A's first LoadData 2D of a tile (it writes fractals 0, 4, 8)."""
    dbg, _, _ = run
    first = next(i for i, r in enumerate(dbg.records) if r.name == "LoadData2D" and r.writes[0][0].name == "L0A"
                 and r.core == 0)
    assert dbg.records[first].writes[0][1] <= 512 < dbg.records[first].writes[0][2]
    assert first not in stops(dbg, dbg.watch((0, "L0A"), 512, 1024))


def test_watch_refuses_bad_ranges(run):
    dbg, _, _ = run
    with pytest.raises(ValueError, match=r"bytes \[0, 999999\) outside L0C of 131072 bytes"):
        dbg.watch((0, "L0C"), 0, 999999)
    with pytest.raises(KeyError, match="no buffer"):
        dbg.watch((0, "L9"), 0, 2)


def test_watch_at_the_prompt(monkeypatch, capsys, run):
    dbg, _, _ = run
    t = dbg.tensors["c"]
    lo = t.byte_offset((1, 33, 17))
    fixpipe = stops(dbg, dbg.watch(("GM", "C"), lo, lo + 2))
    mmads = stops(dbg, dbg.watch((1, "L0C"), 0, 256))
    dbg.goto(len(dbg))
    value = str(dbg.tensor("c", (1, 33, 17))[()])
    script = ("watch c[1, 33, 17]\nwatch L0C core=1 0 256\ninfo watchpoints\nc\nc\nc\nc\nc\ndelete 2\nrc\n"
              "watch c[1, 33]\nwatch L0C core=7 0 2\nwatch gm Q 0 2\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert main(["debug", *MATMUL]) == 0
    out = [chunk.splitlines()[1:] for chunk in capsys.readouterr().out.split(PROMPT)[1:]]
    assert out[0] == ["Watchpoint 1: c[1, 33, 17] (bytes [3538, 3540) of gm C); value now nan"]
    assert out[2] == ["1   watchpoint  c[1, 33, 17]", "2   watchpoint  core 1 L0C [0, 256)"]
    stopped = [int(lines[0].split("#")[1].split()[0]) for lines in out[3:7]]
    assert stopped == sorted(mmads + fixpipe)
    assert out[6][0].startswith("Watchpoint 1, ") and out[6][2:] == ["Watchpoint 1: c[1, 33, 17]", "Old value = nan",
                                                                    f"New value = {value}"]
    assert out[7][0].startswith("The run ended")
    assert out[9][0].startswith(f"Watchpoint 1, #{fixpipe[0]} core 1 pipe FIX Fixpipe")
    assert out[10] == ["error: watch c needs one element: 3 integers (ND (2, 40, 24))"]
    assert out[11] == ["error: watch: no core 7; cores 0-1"]
    assert out[12][0].startswith("error: watch gm: no allocation 'Q'")
