"""A launch and the garbage collector: a dropped run is freed by reference counting (no cycle between the chip,
its cores and their schedules once the report is built), and the launch leaves the young generations empty."""
import gc
import weakref

import numpy as np
import pytest
from conftest import l1_and_l0a, run_kernel

from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                                SetFlag, WaitFlag)


def _body(src):
    l1, l0a = l1_and_l0a()  # a TPipe: it refers to its core, as the core refers to it
    DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 64, 0, 0))
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    LoadData(l0a, l1, LoadData2DParams(repeatTimes=2))


@pytest.mark.parametrize("engine", ["exact", "fast"])
@pytest.mark.parametrize("execute", [True, False])
def test_a_dropped_run_is_freed_without_the_cyclic_collector(engine, execute):
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        chip, report = run_kernel(_body, np.zeros(4096, np.float16), block_dim=2, engine=engine, execute=execute)
        assert report.instructions > 0 and len(chip.cores) == 2
        alive = [weakref.ref(obj) for core in chip.cores
                 for obj in (core, core.schedule)]
        alive.append(weakref.ref(chip))
        del chip, report
        assert [ref() for ref in alive] == [None] * len(alive)
    finally:
        if was_enabled:
            gc.enable()


def test_a_launch_leaves_no_young_objects_for_the_collector():
    gc.collect()
    assert gc.isenabled()
    chip, report = run_kernel(_body, np.zeros(4096, np.float16), block_dim=2)
    # the run's objects were moved to the oldest generation when gc was re-enabled
    assert gc.get_count()[0] < 100
    assert report.instructions > 0


def test_a_dropped_replayed_run_is_freed_without_the_cyclic_collector(monkeypatch):
    """A lazily scheduled replay run (its logs made on first read) is freed by reference counting too: the lazy
    logs hold the launch's buffers, not the chip whose cores hold the logs."""
    from ascend_sim.passes import fast_schedule
    from tests.ascend_sim.engine.test_engines import dx_run

    made = []
    init = fast_schedule.Schedule.__init__

    def spy(self, *args):
        init(self, *args)
        made.append(weakref.ref(self))
    monkeypatch.setattr(fast_schedule.Schedule, "__init__", spy)
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        result = dx_run("C3D conv3a, shrunk", execute=False, engine="replay", check_races=False)
        assert made and made[-1]() is not None, "the run was not scheduled lazily"
        del result
        assert [ref() for ref in made] == [None] * len(made)
    finally:
        if was_enabled:
            gc.enable()
