"""The runtime's own synchronisation (asc-devkit kernel_tpipe_impl.h, kernel_tquebind_impl.h on 2201): TPipe()
sets M_MTE1 0, 1, 2 on the cube core, TPipe::Destroy waits for them and barriers PIPE_ALL (once, however often it
is called), TQue::FreeAllEvent waits for the buffers' outstanding FreeTensor flags."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import run_kernel

from ascend_sim import Chip, SyncFault
from ascend_sim.ascendc import HardEvent, TPipe, TPosition, TQue, WaitFlag


def _sync(log):
    return [(r.name, r.pipe.name, (r.event[1] if r.name != "PipeBarrier" else None), r.params["api"]) for r in log]


def test_tpipe_sets_and_destroy_waits_the_m_mte1_events_on_the_aic_only():
    _, report = run_kernel(lambda: TPipe())
    init = [("SetFlag", "M", i, "TPipe.Init") for i in range(3)]
    destroy = [("WaitFlag", "MTE1", i, "TPipe.Destroy") for i in range(3)] + [("PipeBarrier", "ALL", None,
                                                                               "TPipe.Destroy")]
    assert _sync(report.logs[0]) == init + destroy
    aiv = Chip().launch(lambda: TPipe(), 1, kernel_type="AIV_ONLY")
    assert _sync(aiv.logs[0]) == [("PipeBarrier", "ALL", None, "TPipe.Destroy")]


def test_the_first_wait_of_an_l0_ping_pong_passes_on_the_events_tpipe_set():
    def body():
        pipe = TPipe()
        WaitFlag(HardEvent.M_MTE1, 0)  # the matmul / convolution APIs start like this
        WaitFlag(HardEvent.M_MTE1, 1)
        pipe.Destroy()  # explicit, then again when the kernel returns: the second does nothing
    with pytest.raises(SyncFault, match=r"deadlock: #\d+ MTE1 WaitFlag .* no SetFlag<M_MTE1>\(0\) follows it"):
        run_kernel(body)  # Destroy's own waits for 0 and 1 now have no SetFlag left

    def balanced():
        from ascend_sim.ascendc import SetFlag
        pipe = TPipe()
        for event_id in (0, 1):
            WaitFlag(HardEvent.M_MTE1, event_id)
            SetFlag(HardEvent.M_MTE1, event_id)  # the M pipe hands the L0 half back
        pipe.Destroy()
    _, report = run_kernel(balanced)
    assert [r.params["api"] for r in report.logs[0]].count("TPipe.Destroy") == 4


def test_free_all_event_waits_for_the_outstanding_free_flags():
    def body():
        pipe = TPipe()
        que = TQue(TPosition.A1, 1)
        pipe.InitBuffer(que, 2, 1024)
        for _ in range(2):
            t = que.AllocTensor(np.float16)
            que.EnQue(t)
            que.FreeTensor(que.DeQue())
        que.FreeAllEvent()
        que.AllocTensor(np.float16)  # nothing left to wait for
    _, report = run_kernel(body)
    waits = [r for r in report.logs[0] if r.name == "WaitFlag" and r.event[0] == "MTE1_MTE2"]
    assert [r.params["api"] for r in waits] == ["TQue.FreeAllEvent"] * 2


def _line_of(marker: str) -> str:
    """This file's name and the line holding `marker` (a comment): the source a record issued there names."""
    import pathlib
    lines = pathlib.Path(__file__).read_text().splitlines()
    return f"{pathlib.Path(__file__).name}:{next(n for n, line in enumerate(lines, 1) if marker in line)}"


def test_every_flag_names_the_kernel_line_that_issued_it():
    # SetFlag / WaitFlag and the queue calls start their source walk at their caller's frame; from a helper of
    # the kernel's own (outside ascend_sim) the helper's line is the source, as it is for any instruction
    from ascend_sim.ascendc import SetFlag

    def hand_back(event_id):
        SetFlag(HardEvent.M_MTE1, event_id)  # helper SetFlag

    def body():
        pipe = TPipe()
        que = TQue(TPosition.A1, 1)
        pipe.InitBuffer(que, 2, 1024)
        for _ in range(3):  # the third AllocTensor waits for the first FreeTensor
            WaitFlag(HardEvent.M_MTE1, 0)  # kernel WaitFlag
            hand_back(0)
            t = que.AllocTensor(np.float16)  # kernel AllocTensor
            que.EnQue(t)  # kernel EnQue
            que.FreeTensor(que.DeQue())  # kernel DeQue and FreeTensor
    for engine in ("exact", "replay"):
        _, report = run_kernel(body, engine=engine)
        sources = {(r.name, r.params["api"], r.source) for r in report.logs[0] if r.params is not None
                   and r.params.get("api", "").startswith(("SetFlag", "WaitFlag", "TQue"))}
        assert sources == {("WaitFlag", "WaitFlag", _line_of("# kernel WaitFlag")),
                           ("SetFlag", "SetFlag", _line_of("# helper SetFlag")),
                           ("WaitFlag", "TQue.AllocTensor", _line_of("# kernel AllocTensor")),
                           ("SetFlag", "TQue.EnQue", _line_of("# kernel EnQue")),
                           ("WaitFlag", "TQue.DeQue", _line_of("# kernel DeQue and FreeTensor")),
                           ("SetFlag", "TQue.FreeTensor", _line_of("# kernel DeQue and FreeTensor"))}, engine
