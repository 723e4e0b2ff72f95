"""API-level debugging: records carry the high-level API calls they were issued in (ascend_sim/engine/api_call.py), and
the debugger breaks on a call's entry, steps over calls (next), out of one (finish) and to the next one (until)."""
import io
import sys

import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.ascendc import HardEvent, PipeBarrier, SetFlag, WaitFlag
from ascend_sim.debug import Debugger
from ascend_sim.engine.api_call import api_call
from ascend_sim.machine.pipes import Pipe
from frontends.cli import main
from tests.frontends.debugger.test_debug_tensors import CONV, simulate

PROMPT = "(ascend-sim) "


class Toy:
    """A two-level API: Outer issues a flag pair around a call of Inner, which issues a barrier."""

    @api_call
    def Outer(self):
        SetFlag(HardEvent.MTE2_MTE1, 0)
        self.Inner()
        WaitFlag(HardEvent.MTE2_MTE1, 0)

    @api_call
    def Inner(self):
        PipeBarrier(Pipe.M)


def toy_kernel():
    toy = Toy()
    toy.Outer()
    PipeBarrier(Pipe.MTE2)
    toy.Outer()


def test_records_carry_their_api_calls():
    dbg = Debugger.launch(Chip(), toy_kernel, 1)
    names = [(r.name, tuple(name for name, _ in r.api)) for r in sorted(dbg.records, key=lambda r: r.seq)]
    assert names == [("SetFlag", ("Outer",)), ("PipeBarrier", ("Outer", "Inner")), ("WaitFlag", ("Outer",)),
                     ("PipeBarrier", ()),
                     ("SetFlag", ("Outer",)), ("PipeBarrier", ("Outer", "Inner")), ("WaitFlag", ("Outer",))]
    ids = {call for r in dbg.records for _, call in r.api}
    assert len(ids) == 4  # two calls of Outer, two of Inner: each its own id
    assert {c.name for c in dbg.api_calls.values()} == {"Outer", "Inner"}


def test_api_calls_outside_a_kernel_are_refused():
    with pytest.raises(RuntimeError, match="no kernel is running"):
        Toy().Inner()


@pytest.fixture(scope="module")
def conv():
    return simulate(CONV)[0]


def in_call(rec, name):
    return any(n == name for n, _ in rec.api)


def test_break_on_iterate_stops_at_each_call_entry(conv):
    dbg = conv
    dbg.goto(0)
    stops = []
    while dbg.continue_(dbg.break_on_api("Iterate")) is not None:
        stops.append(dbg.seq - 1)
    # independently: a record in an Iterate call whose core's previous record (in run order) was not in that call
    expect, last_call = [], {}
    for i, rec in enumerate(dbg.records):
        call = next((c for n, c in rec.api if n == "Iterate"), None)
        if call is not None and last_call.get(rec.core) != call:
            expect.append(i)
        last_call[rec.core] = call
    assert stops == expect and len(stops) >= 2


def test_finish_next_and_until(conv):
    dbg = conv
    dbg.goto(0)
    dbg.until("Iterate")
    assert in_call(dbg.record, "Iterate")
    core = dbg.record.core
    dbg.finish()  # every record of this Iterate call applied, none after it on the core that is not in it
    applied = dbg.records[:dbg.seq]
    call = next(c for n, c in dbg.record.api if n == "Iterate")
    assert not any(any(c == call for _, c in r.api) for r in dbg.records[dbg.seq:])
    assert any(any(c == call for _, c in r.api) for r in applied)
    state = {k: v.copy() for k, v in dbg._state.items()}
    dbg.back(5)
    dbg.step(5)
    assert all(np.array_equal(state[k], v) for k, v in dbg._state.items())
    # next at the start steps over Init, then over the first Iterate and its GetTensorC, on the first core (this
    # fp16 NCDHW run is the MIX build, whose driver calls Iterate and GetTensorC itself, as the real
    # MergeOutputTransDataIterateAll does, instead of IterateAll)
    dbg.goto(0)
    core = dbg.records[0].core
    dbg.next()
    init = [i for i, r in enumerate(dbg.records) if r.core == core and in_call(r, "Init")]
    assert dbg.seq - 1 == init[-1]
    for name in ("Iterate", "GetTensorC"):
        dbg.next()
        call = next(c for n, c in dbg.records[dbg.seq - 1].api if n == name)
        inside = [i for i, r in enumerate(dbg.records) if r.core == core and any(c == call for _, c in r.api)]
        assert dbg.seq - 1 == inside[-1]
    dbg.next()
    assert dbg.record.name == "CrossCoreSetFlag" and dbg.record.core == core  # flag 6: the tile is in the slot


def test_api_commands_at_the_prompt(monkeypatch, capsys, conv):
    script = "break Iterate\nc\nfinish\nuntil GetTensorC\nnext\nbreak Nothing\nuntil Nothing\nfinish\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    argv = ["conv3d-dx", "--cin", "20", "--cout", "24", "--dhw", "2,8,8", "--route", "v2", "--kernel", "2,3,3",
            "--stride", "1,2,2"]
    assert main(["debug", *argv]) == 0
    out = [chunk.splitlines()[1:] for chunk in capsys.readouterr().out.split(PROMPT)[1:]]
    dbg = conv
    dbg.goto(0)
    first = dbg.until("Iterate")
    assert out[0][0].startswith("Breakpoint 1: api=Iterate (")
    # the MIX NCDHW driver calls Iterate and GetTensorC itself (no IterateAll around them)
    assert out[1][0].startswith(f"Breakpoint 1, #{dbg.seq - 1} core {first.core}") and out[1][-1] == "    in Iterate"
    dbg.finish()
    assert out[2][0] == "Run till exit from Iterate" and out[2][1].startswith(f"#{dbg.seq - 1} ")
    dbg.until("GetTensorC")
    assert out[3][0].startswith(f"#{dbg.seq - 1} ") and out[3][-1] == "    in GetTensorC"
    dbg.next()
    assert out[4][0].startswith(f"#{dbg.seq - 1} ")
    assert out[5][0].startswith("error: break: no record of this run is named 'Nothing'; names: ") and \
        "API calls: End, GetTensorC, Init, Iterate" in out[5][0]
    assert out[6] == ["error: until: no API call 'Nothing' in this run; calls: End, GetTensorC, Init, Iterate"]
