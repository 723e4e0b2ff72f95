"""`info queues` and `timeline` at the `ascend-sim debug` prompt, on a matmul run: the TQue tensor in flight
between an EnQue and its DeQue, and the pipes drawn where the records ran."""
import io
import re
import sys

import numpy as np
import pytest

from frontends.cli import main

PROMPT = "(ascend-sim) "
MATMUL = ["matmul", "--m", "256", "--n", "256", "--k", "256"]


@pytest.fixture
def session(monkeypatch, capsys, debug_shells):
    shells = debug_shells

    def run(script):
        monkeypatch.setattr(sys, "stdin", io.StringIO(script))
        assert main(["debug", *MATMUL]) == 0
        out = capsys.readouterr().out
        return [chunk.splitlines()[1:] for chunk in out.split(PROMPT)[1:]], shells[-1].dbg
    return run


def test_info_queues_shows_a_tensor_between_enqueue_and_dequeue(session):
    _, dbg = session("")
    enq = next(i for i, r in enumerate(dbg.records) if r.core == 0 and r.name == "SetFlag"
               and r.params.get("api") == "TQue.EnQue")
    deq = next(i for i, r in enumerate(dbg.records) if i > enq and r.core == 0 and r.name == "WaitFlag"
               and r.event == dbg.records[enq].event)
    rec = dbg.records[enq]
    src, dst = rec.params["event"].split("_")
    out, _ = session(f"goto {enq}\ninfo queues core=0\ngoto {deq}\ninfo queues core=0\ninfo queues core=9\n")
    assert out[1][0].startswith("core 0 TQue calls applied: EnQue 1, DeQue 0")
    assert out[1][1:3] == ["  enqueued, not yet dequeued: 1",
                           f"    {src} -> {dst} id {rec.params['id']}: EnQue #{enq} at {rec.source}, waiting for its "
                           f"DeQue on {dst}"]
    assert not any(f"EnQue #{enq} " in line for line in out[3])  # its DeQue took it
    assert out[4] == ["error: info queues: no core 9"]


def test_timeline_draws_the_current_mmad_where_it_ran(session):
    out, dbg = session("break Mmad core=1\nc\ntimeline\ntimeline cycles=50\ntimeline core=1 width=3\n")
    index = int(re.search(r"#(\d+) core", out[1][0]).group(1))
    rec = dbg.records[index]
    header, *rows = out[2]
    lo, hi, scale = (float(x) for x in re.search(r"cycles \[(\d+), (\d+)\), ([\d.]+) cycles per", header).groups())
    m_row = next(r for r in rows if r.startswith("  M    |"))[len("  M    |"):-1]
    first, last = int((rec.start - lo) / scale), int(-(-(rec.end - lo) // scale))
    assert set(m_row[first:last - 1]) == {"M"}  # its last column may be shared with the next record
    assert rows[-1].strip().startswith(f"^ #{index} M Mmad [{rec.start:.0f}, {rec.end:.0f})")
    assert rows[-1].index("^") - len("  M    |") == first
    order = [r.split("|")[0].strip() for r in rows[:-1]]
    assert order == [p for p in ("MTE2", "MTE1", "M", "FIX") if p in order]
    assert "lowercase: not yet" in header and any(c.islower() for r in rows[:-1] for c in r.split("|")[1])
    assert out[3] == ["error: timeline: cycles=50 below 96 (one column per cycle at least)"]
    assert out[4] == ["error: timeline: unexpected 'width=3'; give core=C cycles=N"]


def test_info_pipes_gives_clock_busy_cycles_last_and_next(session):
    out, dbg = session("goto 50\ninfo pipes\n")
    core = dbg.records[50].core
    for line in out[1]:
        match = re.match(r"  core (\d+) (\w+) +clock +(\d+)  busy +(\d+)  last #(\d+) \w+ at [^;\s]+(?:; next #(\d+) )?",
                         line)
        assert match, line
        c, pipe, clock, busy, last, following = match.groups()
        mine = [(i, r) for i, r in enumerate(dbg.records) if r.core == core and r.pipe.name == pipe]
        applied = [(i, r) for i, r in mine if i <= 50]
        assert int(c) == core and int(last) == applied[-1][0] and int(clock) == round(applied[-1][1].end)
        assert int(busy) == round(sum(r.end - r.start for _, r in applied))
        later = [i for i, _ in mine if i > 50]
        assert (int(following) if following else None) == (later[0] if later else None)


def test_print_l1_as_the_nz_matrix_a_load_put_there(session):
    out, dbg = session("break DataCopy(Nd2Nz) core=0\nc\nprint L1 addr=0 rows=128 cols=64 full\n"
                       "print L1 addr=0 fmap=2,3\nprint L1 rows=4 cols=4\n")
    rec = dbg.records[int(re.search(r"#(\d+) core", out[1][0]).group(1))]
    assert rec.writes[0][1] == 0  # the first A slice lands at L1 address 0
    a = np.random.default_rng(0).standard_normal((1, 256, 256)).astype(np.float16)  # the command's A (--seed 0)
    assert out[2][0] == "L1 core 0 addr 0: NZ matrix (rows, cols) (128, 64) float16"
    printed = np.array([float(x) for x in re.findall(r"-?\d+\.\d*(?:e-?\d+)?", " ".join(out[2][1:]))], np.float16)
    assert np.array_equal(printed.reshape(128, 64), a[0, :128, :64])
    assert out[3] == ["error: print L1: fmap=2,3 must be C1,H,W, three positive integers"]
    assert out[4] == ["error: print L1 needs addr= (the byte address of the tensor in L1)"]


def test_l1_fmap_view():
    from ascend_sim import Chip
    from ascend_sim.ascendc import DataCopy, DataCopyParams, GlobalTensor, TBuf, TPipe, TPosition
    from ascend_sim.debug import Debugger
    from ascend_sim.machine.tensor import GmAddr
    c1, h, w, c0 = 2, 3, 4, 16
    x = np.random.default_rng(1).standard_normal((c1, h, w, c0)).astype(np.float16)

    def kernel(src):
        pipe = TPipe()
        l1 = TBuf(TPosition.A1)
        pipe.InitBuffer(l1, 4096)
        DataCopy(l1.Get(np.float16)[256], GlobalTensor(np.float16).SetGlobalBuffer(src),
                 DataCopyParams(1, c1 * h * w, 0, 0))
    chip = Chip()
    dbg = Debugger.launch(chip, kernel, 1, GmAddr(chip.gm.upload("x", x)))
    dbg.goto(len(dbg))
    view = dbg.l1_fmap(0, 512, c1, h, w, np.float16)
    for c in range(c1 * c0):
        assert np.array_equal(view[c], x[c // c0, :, :, c % c0])
