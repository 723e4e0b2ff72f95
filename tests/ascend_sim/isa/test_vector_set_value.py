"""SetValue (LocalTensor::SetValue): one UB element stored by the scalar unit, ordered before a vector read by
S_V; the index checked by name."""
import numpy as np
import pytest
from vector_reference import run_aiv

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, SetFlag, SetValue, TBuf, TPipe,
                                TPosition, WaitFlag)


def _kernel(values, index_base=0):
    def kernel(out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 256)
        t = buf.Get(np.uint32)
        for i, v in enumerate(values):
            SetValue(t, index_base + i, v)
        SetFlag(HardEvent.S_MTE3, 0)
        WaitFlag(HardEvent.S_MTE3, 0)
        DataCopy(GlobalTensor(np.uint32).SetGlobalBuffer(out), t, DataCopyParams(1, 8, 0, 0))
    return kernel


@pytest.mark.parametrize("platform", ["Ascend910B2", "Ascend950PR_9589"])
def test_set_value_stores_each_element(platform):
    values = [0, 9 * 16, 18 * 16, 2**32 - 1]
    chip, report = run_aiv(_kernel(values, 3), out_bytes=256, platform=platform)
    out = chip.gm["out"].data.view(np.uint32)
    np.testing.assert_array_equal(out[3:7], values)
    assert report.cores[0].counts["SetValue"] == 4


def test_set_value_index_outside_the_tensor_is_refused():
    with pytest.raises(ParameterOutOfRange, match=r"index=64 outside \[0, 64\)"):
        run_aiv(_kernel([1], 64), out_bytes=256)
