"""Races between an Ascend 950 AIC and its AIVs on the on-chip buffers they share (engine/chip.py wiring:
the AIC's L1, written by its AIVs' MTE3; AIV 0's UB, written by its AIC's Fixpipe): only a cross-core flag or
SyncAll orders two cores' accesses, by the GM rule (passes/races.py, GmRaceChecker). A missing
CrossCoreWaitFlag is a CrossCoreRace naming both cores, pipes, instructions, the buffer, the bytes and the
kernel lines; with the flag the run is clean, and every engine says the same."""
import numpy as np
import pytest

from ascend_sim import Chip, SimFault
from ascend_sim.ascendc import (ASCEND_IS_AIC, CFG_ROW_MAJOR_UB, PIPE_FIX, PIPE_MTE1, PIPE_MTE3, CrossCoreSetFlag,
                                CrossCoreWaitFlag, DataCopy, DataCopyParams, Fixpipe, FixpipeParamsArch3510,
                                GetSubBlockIdx, GlobalTensor, HardEvent, LoadData, LoadData2DParamsV2, Nz2NdParams,
                                SetFlag, TBuf, TPipe, TPosition, WaitFlag, replay_unit)
from ascend_sim.engine import replay_passes
from ascend_sim.machine.dtypes import float32
from ascend_sim.machine.faults import CrossCoreRace
from ascend_sim.machine.tensor import GmAddr
from tests.ascend_sim.engine.test_engines import all_fields

A5 = "Ascend950PR_9589"
ENGINES = ("exact", "fast", "replay")
FLAG_L1_FULL, FLAG_UB_FULL = 6, 9  # the dx kernel's FLAG_MTE1_ID_1 and the AIC -> AIV 0 Fixpipe flag


def _l1_kernel(flagged):
    """AIV 0 copies GM -> UB -> its AIC's L1 and (if `flagged`) tells the AIC; the AIC loads that L1 into L0A
    (AIV 1 does nothing)."""
    def body(x):
        pipe = TPipe()
        b1 = TBuf(TPosition.B1)
        pipe.InitBuffer(b1, 4096)
        if ASCEND_IS_AIC():
            l0a = TBuf(TPosition.A2)
            pipe.InitBuffer(l0a, 4096)
            if flagged:
                CrossCoreWaitFlag(FLAG_L1_FULL, 4)
            LoadData(l0a.Get(np.float16), b1.Get(np.float16), LoadData2DParamsV2(mStep=1, kStep=1))
        elif GetSubBlockIdx() == 0:
            ub = TBuf(TPosition.VECIN)
            pipe.InitBuffer(ub, 4096)
            src = ub.Get(np.float16)
            DataCopy(src, GlobalTensor(np.float16).SetGlobalBuffer(x), DataCopyParams(1, 16, 0, 0))
            SetFlag(HardEvent.MTE2_MTE3, 0)
            WaitFlag(HardEvent.MTE2_MTE3, 0)
            DataCopy(b1.Get(np.float16), src, DataCopyParams(1, 16, 0, 0))
            if flagged:
                CrossCoreSetFlag(4, PIPE_MTE3, FLAG_L1_FULL)
    return body


def _ub_kernel(flagged):
    """The AIC's Fixpipe writes AIV 0's UB and (if `flagged`) tells it; AIV 0 copies that UB out to GM."""
    def body(out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECIN)
        pipe.InitBuffer(buf, 4096)
        ub = buf.Get(float32)
        if ASCEND_IS_AIC():
            l0c = TBuf(TPosition.CO1)
            pipe.InitBuffer(l0c, 4096)
            Fixpipe(ub, l0c.Get(float32), FixpipeParamsArch3510(nSize=16, mSize=16, srcStride=16, dstStride=16,
                                                                 params=Nz2NdParams(1, 0, 0)), CFG_ROW_MAJOR_UB)
            if flagged:
                CrossCoreSetFlag(4, PIPE_FIX, FLAG_UB_FULL)
        elif GetSubBlockIdx() == 0:
            if flagged:
                CrossCoreWaitFlag(FLAG_UB_FULL, 4)
            DataCopy(GlobalTensor(float32).SetGlobalBuffer(out), ub, 256)
    return body


def _launch(engine, body, kernel_type="MIX_AIC_1_2", raises=False):
    """What a run shows on `engine`: ("fault", type, message), or its records, report and GM bytes."""
    chip = Chip(A5, engine=engine)
    gm = GmAddr(chip.gm.upload("x", np.arange(2048, dtype=np.float16)))
    try:
        report = chip.launch(body, 1, gm, kernel_type=kernel_type)
    except SimFault as fault:
        if raises:
            raise
        return ("fault", type(fault).__name__, str(fault))
    return all_fields(report), report.to_dict(), bytes(chip.gm["x"].data)


def _agreed(body, **kwargs):
    exact, *others = [_launch(engine, body, **kwargs) for engine in ENGINES]
    for other in others:
        assert other == exact
    return exact


def test_an_aiv_write_of_l1_without_the_flag_races_with_the_aic_load():
    kind, name, text = _agreed(_l1_kernel(flagged=False))
    assert (kind, name) == ("fault", "CrossCoreRace")
    # the core that met it (AIV 0, core 1) with its pipe, instruction and line; the other core's load with its own
    assert text.startswith("[core 1 (AIV 0), MTE3 DataCopy(UB->L1), at test_shared_buffer_races.py:")
    assert "write of core 0's L1[0, 512) is not ordered after the read" in text
    assert "by core 0's #3 MTE1 LoadData2DV2 at test_shared_buffer_races.py:" in text
    with pytest.raises(CrossCoreRace) as info:
        _launch("exact", _l1_kernel(flagged=False), raises=True)
    assert (info.value.core, info.value.buffer, info.value.addr_range) == (1, "L1", (0, 512))


def test_the_cross_core_flag_orders_the_aiv_l1_write_before_the_aic_load():
    records, *_ = _agreed(_l1_kernel(flagged=True))
    assert any(r[2] == "DataCopy(UB->L1)" for r in records)


def test_an_aic_fixpipe_into_ub_without_the_flag_races_with_the_aiv_read():
    kind, name, text = _agreed(_ub_kernel(flagged=False))
    assert (kind, name) == ("fault", "CrossCoreRace")
    assert "core 1's UB" in text and "Fixpipe" in text and "DataCopy" in text and "FIX" in text
    assert text.count("test_shared_buffer_races.py:") == 2


def test_the_cross_core_flag_orders_the_fixpipe_into_ub_before_the_aiv_read():
    records, *_ = _agreed(_ub_kernel(flagged=True))
    assert any(r[2].startswith("Fixpipe") for r in records)


def test_only_the_950_mix_launch_shares_buffers():
    chip = Chip(A5)
    chip.launch(_ub_kernel(flagged=True), 1, GmAddr(chip.gm.alloc("x", 4096)), kernel_type="MIX_AIC_1_2")
    assert chip.gm_races.shared == {(0, "L1"), (1, "UB")}  # AIC 0's L1 (both AIVs), AIV 0's UB (the AIC)
    a2 = Chip("Ascend910B2")
    a2.launch(lambda: None, 2)
    assert a2.gm_races.shared == frozenset()


class L1Fills:
    """AIV 0 fills its AIC's L1 from UB on MTE3 in a replayable unit: every fill after the first is a replayed
    block, whose accesses the replay engine's checks take from the template (engine/replay_passes.py)."""

    def __init__(self):
        self.pipe = TPipe()
        self.b1, self.ub = TBuf(TPosition.B1), TBuf(TPosition.VECIN)
        self.pipe.InitBuffer(self.b1, 4096)
        self.pipe.InitBuffer(self.ub, 4096)

    @replay_unit("L1Fills.fill")
    def fill(self):
        DataCopy(self.b1.Get(np.float16), self.ub.Get(np.float16), DataCopyParams(1, 16, 0, 0))


def _rounds_kernel(racy_round=None):
    """Three rounds of AIV 0 filling L1 and the AIC loading it, each handed over by flags 6 (full) and 7 (free);
    in `racy_round` the AIC loads before it waits for flag 6."""
    def body(x):
        if ASCEND_IS_AIC():
            pipe = TPipe()
            b1, l0a = TBuf(TPosition.B1), TBuf(TPosition.A2)
            pipe.InitBuffer(b1, 4096)
            pipe.InitBuffer(l0a, 4096)
            for r in range(3):
                if r != racy_round:
                    CrossCoreWaitFlag(FLAG_L1_FULL, 4)
                LoadData(l0a.Get(np.float16), b1.Get(np.float16), LoadData2DParamsV2(mStep=1, kStep=1))
                if r == racy_round:
                    CrossCoreWaitFlag(FLAG_L1_FULL, 4)
                if r < 2:
                    CrossCoreSetFlag(4, PIPE_MTE1, FLAG_L1_FULL + 1)
        elif GetSubBlockIdx() == 0:
            fills = L1Fills()
            for r in range(3):
                if r:
                    CrossCoreWaitFlag(FLAG_L1_FULL + 1, 4)
                fills.fill()
                CrossCoreSetFlag(4, PIPE_MTE3, FLAG_L1_FULL)
    return body


@pytest.mark.parametrize("racy_round, clean", [(None, True), (2, False)])
def test_replayed_blocks_writing_the_shared_l1_are_checked_from_their_template(racy_round, clean, monkeypatch):
    found = []
    real = replay_passes.race_free
    monkeypatch.setattr(replay_passes, "race_free", lambda *a: found.append(real(*a)) or found[-1])
    observed = _agreed(_rounds_kernel(racy_round))
    assert found == [clean]  # the replay run's compiled checks on the blocks decided
    if not clean:
        assert observed[:2] == ("fault", "CrossCoreRace")
        assert "write of core 0's L1[0, 512) is not ordered after the read" in observed[2]


# ------------------------------------------------------------------------------------------ the arch35 dx kernel
ARCH35_MIX = {  # the dx kernel's users of the shared buffers: (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads,
    # groups); the AIV writes its AIC's L1 (group ENLARGE) / the AIC's Fixpipe writes AIV 0's UB (the HW split)
    "ENLARGE, UB -> L1": (1, 8, 8, (2, 6, 6), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), 8),
    "HW kernel split, L0C -> UB": (1, 16, 16, (1, 32, 32), (1, 4, 4), (1, 2, 2), (0, 0, 1, 1, 1, 1), 1),
}


@pytest.mark.parametrize("case", list(ARCH35_MIX))
def test_the_arch35_dx_kernel_orders_its_shared_buffers_on_every_engine(case):
    """The real kernel's flags (sync.py 6/7, 8/9) order every access of the shared L1 / UB: no race, and the
    engines agree on every record and byte with the shared-buffer checks on."""
    from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run

    n, cin, cout, dhw, ks, strides, pads, groups = ARCH35_MIX[case]
    rng = np.random.default_rng(3)
    do = tuple((dhw[i] + pads[2 * i] + pads[2 * i + 1] - ks[i]) // strides[i] + 1 for i in range(3))
    dy = rng.uniform(-1, 1, (n, cout) + do).astype(np.float16)
    w = rng.uniform(-1, 1, (cout, cin // groups) + ks).astype(np.float16)
    runs = [conv3d_backprop_input_v2_run((n, cin) + dhw, w, dy, strides=(1, 1) + strides, pads=pads, groups=groups,
                                         data_format="NCDHW", platform=A5, route="v2", engine=engine)
            for engine in ENGINES]
    exact = runs[0]
    shared_writes = {r.name for log in exact.report.logs for r in log
                     if any(buf.key[0] != r.core for buf, _, _ in r.writes if buf.key.__class__ is tuple)}
    assert shared_writes == ({"DataCopy(UB->L1)"} if groups > 1 else {"Fixpipe(Arch3510)"})
    for other in runs[1:]:
        assert _fields_but_operands(other.report) == _fields_but_operands(exact.report)
        assert other.report.to_dict() == exact.report.to_dict()
        assert other.result.tobytes() == exact.result.tobytes()


def _fields_but_operands(report):
    """all_fields without the operands (the register instructions' RegTensors are objects of their own run)."""
    return [fields[:5] + fields[6:] for fields in all_fields(report)]
