"""The 950's L0C -> UB path across the cores of one AI core (engine/chip.py `_wire_l0c_to_ub`): in a MIX launch the
AIC's "UB" is its AIV sub-block 0's UB, so a Fixpipe into it on the AIC is read there by the AIV once the
cross-core flag says so; sub-block 1's UB stays its own; on A2/A3 the AIC has no UB at all."""
import numpy as np
import pytest
from core_buffers import fill

from ascend_sim import Chip
from ascend_sim.ascendc import (ASCEND_IS_AIC, CFG_ROW_MAJOR_UB, PIPE_FIX, CrossCoreSetFlag, CrossCoreWaitFlag,
                                DataCopy, Fixpipe, FixpipeParamsArch3510, GetSubBlockIdx, GlobalTensor, Nz2NdParams,
                                TBuf, TPipe, TPosition, current_core)
from ascend_sim.machine.dtypes import float32
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.tensor import GmAddr

M, N = 16, 16
TILE = np.arange(M * N, dtype=np.float32)  # L0C NZ of one 16 x 16 fractal: row m, column n at m * 16 + n


def _kernel(out):
    core = current_core()
    pipe = TPipe()
    buf = TBuf(TPosition.VECIN)
    pipe.InitBuffer(buf, 4096)
    ub = buf.Get(float32)
    if ASCEND_IS_AIC():
        fill(core, "L0C", TILE)
        l0c = TBuf(TPosition.CO1)
        pipe.InitBuffer(l0c, 4096)
        Fixpipe(ub, l0c.Get(float32), FixpipeParamsArch3510(nSize=N, mSize=M, srcStride=M, dstStride=N,
                                                             params=Nz2NdParams(1, 0, 0)), CFG_ROW_MAJOR_UB)
        CrossCoreSetFlag(4, PIPE_FIX, 9)  # -> AIV sub-block 0
    elif GetSubBlockIdx() == 0:
        CrossCoreWaitFlag(9, 4)
        DataCopy(GlobalTensor(float32).SetGlobalBuffer(out), ub, M * N)
    else:  # sub-block 1: its own UB, which the AIC never wrote
        DataCopy(GlobalTensor(float32).SetGlobalBuffer(out)[M * N], ub, M * N)


@pytest.mark.parametrize("engine", ["exact", "fast"])
def test_the_aic_fixpipes_into_its_aiv0s_ub(engine):
    chip = Chip("Ascend950PR_9589", engine=engine)
    out = chip.gm.alloc("out", 2 * M * N * 4)
    chip.launch(_kernel, 1, GmAddr(out), kernel_type="MIX_AIC_1_2")
    got = chip.gm["out"].data.view(np.float32)
    np.testing.assert_array_equal(got[:M * N], TILE)
    assert not got[M * N:].any()  # AIV1's UB is zeros
    aic, aiv0, aiv1 = chip.cores
    assert aic.buffers["UB"] is aiv0.buffers["UB"] and aiv1.buffers["UB"] is not aiv0.buffers["UB"]


def test_the_a2_aic_has_no_ub():
    def kernel():
        if ASCEND_IS_AIC():
            TPipe().InitBuffer(TBuf(TPosition.VECIN), 1024)
    with pytest.raises(ParameterOutOfRange, match=r"VECIN is in UB, which the cube core \(AIC\) does not have"):
        Chip("Ascend910B2").launch(kernel, 1, kernel_type="MIX_AIC_1_2")
