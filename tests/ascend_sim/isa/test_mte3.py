"""MTE3 on the cube core: DataCopy L1 -> GM, plain and under SetAtomicAdd, against tests/isa_reference.py."""
import isa_reference as ref
import numpy as np
import pytest
from core_buffers import fill, launch_body, local

from ascend_sim.ascendc import DataCopy, DataCopyParams, GlobalTensor, SetAtomicAdd, SetAtomicNone


@pytest.mark.parametrize("atomic", [False, True])
@pytest.mark.parametrize("count,blen,sgap,dgap", [(1, 4, 0, 0), (3, 2, 1, 5), (4, 1, 0, 2)])
def test_datacopy_l1_to_gm(atomic, count, blen, sgap, dgap):
    rng = np.random.default_rng(count * 10 + blen)
    l1 = rng.standard_normal(1024).astype(np.float32)
    gm0 = rng.standard_normal(1024).astype(np.float32)

    def body(core, gm):
        fill(core, "L1", l1)
        if atomic:
            SetAtomicAdd(np.float32)
        DataCopy(GlobalTensor(np.float32).SetGlobalBuffer(gm[0])[3], local(core, "L1", np.float32, 64),
                 DataCopyParams(count, blen, sgap, dgap))
        if atomic:
            SetAtomicNone()

    chip, bufs = launch_body(body, [gm0])
    plain = ref.ref_datacopy(np.zeros_like(gm0), l1, 3, 16, count, blen, sgap, dgap, 4)
    moved = ref.ref_datacopy(np.zeros(gm0.size, bool), np.ones(l1.size, bool), 3, 16, count, blen, sgap, dgap, 4)
    expect = np.where(moved, (gm0 + plain) if atomic else plain, gm0)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), expect)
    assert chip.cores[0].log[-2 if atomic else -1].pipe.name == "MTE3"
