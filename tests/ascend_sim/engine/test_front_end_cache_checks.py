"""Which cached-front-end hits `AICore.accept` bounds-checks (front_end_cache.py, descriptor.View.checked): a
view's byte ranges are checked once on its core, by the miss or by its first hit, and a hit at its own addresses
after that is accepted unchecked; a hit whose GM or on-chip addresses moved is checked every time. The
expectations are written out by hand from each kernel's calls; the records themselves are compared with the cache
off in test_front_end_cache.py and test_front_end_cache_relative.py, and the faults of moved hits there too."""
import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.engine.core import AICore
from tests.ascend_sim.engine import test_engines as corpus
from tests.ascend_sim.engine.test_front_end_cache import _agree, _copies, caches  # noqa: F401 (the fixture)
from tests.ascend_sim.engine.test_front_end_cache_relative import _loads


@pytest.fixture
def checked(monkeypatch):
    """(core, record name, whether accept skipped the bounds check) of every record accepted, in order."""
    seen = []
    accept = AICore.accept

    def spy(core, rec, checked=False):
        seen.append((core.index, rec.name, checked))
        return accept(core, rec, checked)
    monkeypatch.setattr(AICore, "accept", spy)
    return seen


def _of(seen, name):
    return [(core, skipped) for core, n, skipped in seen if n == name]


def test_a_view_is_checked_once_at_its_own_place_and_once_at_each_moved_place(checked, caches):
    # L0A places (elements): the miss at 0; a hit there; two hits at the other half; one at a third place; 0 again
    _loads([(0, 0), (0, 0), (16384, 0), (16384, 0), (256, 0), (0, 0)])(Chip())
    assert (caches[-1].misses, caches[-1].hits) == (2, 5)  # the L1 fill and the first load miss
    assert [s for _, s in _of(checked, "LoadData2D")] == [False, True, False, True, False, True]


def test_a_view_taken_by_another_core_is_checked_there_once(checked, caches):
    # each core loads twice at one place: core 1 hits core 0's descriptor through a view on its own buffers
    launch = corpus._kernel(_two_loads, np.zeros(16384, np.float16), block_dim=2)
    launch(Chip())
    assert _of(checked, "LoadData2D") == [(0, False), (0, True), (1, False), (1, True)]


def test_a_hit_whose_gm_address_moved_is_checked_every_time(checked, caches):
    # the same DataCopy call site at GM offsets 0, 0, 512, 512, 0 (elements): only the repeats at the miss's own
    # address are accepted unchecked
    launch = corpus._kernel(lambda src: _copies(src, [(0, 16), (0, 16), (512, 16), (512, 16), (0, 16)]),
                            np.zeros(1024, np.float16))
    _agree(launch, caches)
    on = len(checked) // 2  # _agree ran the kernel with the cache off, then on
    assert [s for _, s in _of(checked[on:], "DataCopy")] == [False, True, False, False, True]
    assert not any(s for _, s in _of(checked[:on], "DataCopy"))  # the cache off checks every record


def _two_loads(src):
    from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                                    SetFlag, TBuf, TPipe, TPosition, WaitFlag)
    pipe = TPipe()
    l1b, l0b = TBuf(TPosition.A1), TBuf(TPosition.A2)
    pipe.InitBuffer(l1b, 32768)
    pipe.InitBuffer(l0b, 65536)
    l1, l0a = l1b.Get(np.float16), l0b.Get(np.float16)
    DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 1024, 0, 0))
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    for _ in range(2):
        LoadData(l0a, l1, LoadData2DParams(repeatTimes=2, srcStride=1))
