"""The init-output pass Conv3dDxInitOutput (conv3d_backprop_input_v2/conv3d_backprop_input_v2_init_output_arch35.h),
run when the tiling sets initOutputFlag = L0_INIT (some dx elements receive no contribution, e.g. stride > kernel).

Each vector core zeroes its slice of y with Fill (ceil(size / blockNum) elements rounded up to 32, the 128 B that
move best of fp32), 8-bit y as int8; then the vector cores meet (CrossCoreSetFlag<0, PIPE_MTE3>(SYNC_AIV_FLAG),
CrossCoreWaitFlag) and release their AIC (CrossCoreSetFlag<2, PIPE_MTE3>(VEC_FALG_ID)), which waits for it before
its driver starts.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, Fill,
                                GetBlockIdx, GetBlockNum, GlobalTensor)
from kernels.conv3d_backprop_input.kernel.arch35.util import AlignUp, DivCeil

NO_INIT, L0_INIT, L1_INIT = 0, 1, 2
VEC_FALG_ID = 5  # the source's spelling
SYNC_AIV_FLAG = 12  # asc-devkit impl/basic_api/dav_3510/kernel_operator_sync_impl.h
ONE_BLK_SIZE = 32


class Conv3dDxInitOutput:
    def __init__(self, yType):
        self.yType = np.dtype(yType)

    def Init(self, y, tilingData) -> None:
        t = tilingData
        self.outputSize_ = t.hi * t.wi * t.cin * t.di * t.batch
        self.y = y

    def ProcessWithL0(self) -> None:
        clearSizePerCore = AlignUp(DivCeil(self.outputSize_, GetBlockNum()), ONE_BLK_SIZE)
        if GetBlockIdx() >= DivCeil(self.outputSize_, clearSizePerCore):
            self.SyncAllCores()
            return
        offset = clearSizePerCore * GetBlockIdx()
        realClearSize = min(self.outputSize_ - offset, clearSizePerCore)
        dtype = np.dtype(np.int8) if self.yType.itemsize == 1 else self.yType
        yGm_ = GlobalTensor(dtype).SetGlobalBuffer(self.y)
        Fill(yGm_[offset], realClearSize, dtype.type(0))
        self.SyncAllCores()

    def Process(self) -> None:
        if ASCEND_IS_AIV():
            self.ProcessWithL0()
        if ASCEND_IS_AIC():
            CrossCoreWaitFlag(VEC_FALG_ID, 2)

    def SyncAllCores(self) -> None:
        CrossCoreSetFlag(0, PIPE_MTE3, SYNC_AIV_FLAG)
        CrossCoreWaitFlag(SYNC_AIV_FLAG)
        CrossCoreSetFlag(2, PIPE_MTE3, VEC_FALG_ID)

    def Destroy(self) -> None:
        pass  # its TPipe holds nothing
