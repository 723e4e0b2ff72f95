"""Mmads reading L0C or bias-table bytes no instruction of the launch wrote (an accumulating Mmad, a bias Mmad) are
faults naming the core, instruction, line, buffer and the unwritten bytes, the same on every engine, a replayed
unit's included (machine/written.py); a Fixpipe reading L0C padding no Mmad wrote is not."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_NZ, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, HardEvent, Mmad,
                                MmadParams, SetFlag, TBuf, TPipe, TPosition, WaitFlag, replay_unit)
from ascend_sim.machine.faults import UnwrittenRead
from ascend_sim.machine.tensor import GmAddr
from ascend_sim.machine.written import WrittenRanges

ENGINES = ("exact", "fast", "replay")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 64), st.integers(0, 24)), max_size=30))
def test_written_ranges_agree_with_a_byte_map(steps):
    written, ranges = np.zeros(96, bool), WrittenRanges()
    for is_write, lo, size in steps:
        hi = lo + size
        if is_write:
            written[lo:hi] = True
            ranges.add(lo, hi)
            continue
        missing = np.flatnonzero(~written[lo:hi])
        if missing.size == 0:
            assert ranges.first_gap(lo, hi) is None
        else:  # the first run of unwritten bytes
            start = lo + missing[0]
            end = start + 1
            while end < hi and not written[end]:
                end += 1
            assert ranges.first_gap(lo, hi) == (start, end)
    # disjoint, sorted and never touching: one range per run of written bytes
    runs = np.flatnonzero(np.diff(np.concatenate([[0], written.astype(int), [0]])))
    assert list(zip(ranges.starts, ranges.ends)) == list(zip(runs[::2], runs[1::2]))


class _Cube:
    """L0A, L0B (zeros: not watched) and a 2 KiB L0C."""

    def __init__(self):
        self.pipe = TPipe()
        self.a, self.b, self.c = TBuf(TPosition.A2), TBuf(TPosition.B2), TBuf(TPosition.CO1)
        for buf, size in ((self.a, 1024), (self.b, 1024), (self.c, 2048)):
            self.pipe.InitBuffer(buf, size)

    def mmad(self, n=16, **params):
        Mmad(self.c.Get(np.float32), self.a.Get(np.float16), self.b.Get(np.float16), MmadParams(16, n, 16, **params))

    @replay_unit("_Cube.accumulate")
    def accumulate(self):  # enough records for a template (replay.MIN_RECORDS), the last an accumulating Mmad
        for _ in range(3):
            SetFlag(HardEvent.MTE1_M, 0)
            WaitFlag(HardEvent.MTE1_M, 0)
        self.mmad(cmatrixInitVal=False)

    def fixpipe(self, out, n=16):
        SetFlag(HardEvent.M_FIX, 0)
        WaitFlag(HardEvent.M_FIX, 0)
        Fixpipe(GlobalTensor(np.float32).SetGlobalBuffer(out), self.c.Get(np.float32),
                FixpipeParamsV220(nSize=n, mSize=16, srcStride=16, dstStride=16), CFG_NZ)


def _run(engine, body, block_dim=1):
    chip = Chip(engine=engine)
    out = GmAddr(chip.gm.alloc("out", 4096 * block_dim))
    return chip.launch(body, block_dim, out)


def _fault(engine, body, block_dim=1) -> str:
    with pytest.raises(UnwrittenRead) as info:
        _run(engine, body, block_dim)
    return str(info.value)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_accumulating_mmad_on_unwritten_l0c_faults(engine):
    def body(out):
        _Cube().mmad(cmatrixInitVal=False)
    message = _fault(engine, body)
    assert message.startswith("[core 0, M Mmad, at test_unwritten_reads.py:")
    assert message.endswith("read of unwritten memory: read of bytes [0, 1024) of L0C, of which [0, 1024) no "
                            "instruction of this launch wrote: the hardware reads what the previous kernel left "
                            "there (L0C[0, 1024))")


@pytest.mark.parametrize("engine", ENGINES)
def test_the_fault_names_the_unwritten_part_of_a_partly_written_range(engine):
    def body(out):
        cube = _Cube()
        cube.mmad(n=16)  # writes L0C [0, 1024)
        cube.mmad(n=32, cmatrixInitVal=False)  # reads [0, 2048)
    assert "of which [1024, 2048) no instruction" in _fault(engine, body)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bias_mmad_without_a_loaded_bias_table_faults(engine):
    def body(out):
        _Cube().mmad(cmatrixInitVal=False, cmatrixSource=True)
    assert "M Mmad" in (message := _fault(engine, body)) and "of BT, of which [0, 64)" in message


@pytest.mark.parametrize("engine", ENGINES)
def test_an_mmad_over_what_earlier_mmads_wrote_runs_and_a_fixpipe_of_padding_is_no_fault(engine):
    def body(out):
        cube = _Cube()
        cube.mmad(n=16)  # C = A.B over L0C [0, 1024)
        cube.mmad(n=16, cmatrixInitVal=False)  # C += A.B over what the first wrote
        cube.fixpipe(out, n=32)  # [0, 2048): the second 16 columns are padding the kernel would drop
    assert _run(engine, body).instructions


@pytest.mark.parametrize("engine", ENGINES)
def test_a_replayed_unit_faults_on_the_core_that_did_not_write_l0c(engine):
    """Core 0 initialises L0C before the unit, core 1 does not: the unit's template (made on core 0, where its
    read was written) must not be replayed on core 1 as if it were."""
    def body(out):
        cube = _Cube()
        if GetBlockIdx() != 1:
            cube.mmad()
        for _ in range(2):
            cube.accumulate()
    message = _fault(engine, body, block_dim=3)
    assert message.startswith("[core 1, M Mmad, at test_unwritten_reads.py:")
    assert "of which [0, 1024) no instruction" in message


def test_a_replayed_unit_hits_where_its_reads_were_written():
    def body(out):
        cube = _Cube()
        cube.mmad()
        for _ in range(4):
            cube.accumulate()
    chip = Chip(engine="replay")
    chip.launch(body, 3, GmAddr(chip.gm.alloc("out", 4096)))
    assert chip.replayer.hits == 3 * 4 - 1  # all but the first call, on every core
