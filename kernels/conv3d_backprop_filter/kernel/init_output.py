"""The init-output pass: every cube core zeroes its slice of dw, then they meet; the main pass adds into it.

dw is written with atomic adds only (cores splitting K, batch or depth each add their part), so it starts at
zero: InitConstValue zeroes L1 (the whole L1, totalL1Size), then each core copies those zeros over its
ceil(size/cores) (256-element aligned) slice with DataCopy L1 -> GM (MTE3) in chunks of L1.

Ports conv3d_backprop_filter_v2_init_output.h (Conv3dDwInitOutput): the pass ends with the cube cores' barrier
CrossCoreSetFlag<0, PIPE_MTE3> + CrossCoreWaitFlag (so the launch is a MIX kernel, KERNEL_TYPE_MIX_AIC_1_0 as on
the device).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyParams,
                                GetBlockIdx, GetBlockNum, GlobalTensor, HardEvent, InitConstValue, InitConstValueParams,
                                SetFlag, TBuf, TPipe, TPosition, WaitFlag)
from kernels.conv3d_backprop_filter.kernel.util import BLOCK_CUBE, ONE_BLK_SIZE, Ceil

MAX_BLOCK_NUM = (1 << 15) - 1
SYNC_AIC_FLAG = 11  # asc-devkit kernel_operator_sync_impl.h: the cross-core flag of the cube cores' barrier


class Conv3dDwInitOutput:
    def __init__(self, y_dtype=np.float32):
        self.yType = np.dtype(y_dtype)

    def Init(self, y, tilingData) -> None:
        self.InitTilingData(tilingData)
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y)
        self.pipe = TPipe()
        if ASCEND_IS_AIV():  # no L1 on a vector core; Process returns there at once
            return
        self.localBuffer = TBuf(TPosition.A1)  # TPosition::TSCM: L1 on A2
        self.pipe.InitBuffer(self.localBuffer, self.totalL1Size)

    def InitTilingData(self, tilingData) -> None:
        t = tilingData.dwTiling
        self.totalL1Size = tilingData.params.totalL1Size
        mSize = t.cout1G * t.k0
        nSize = t.cin1G * t.k0 * t.dk * t.hk * t.wk
        self.outputSize = mSize * nSize * t.group

    def Process(self) -> None:
        if ASCEND_IS_AIV():
            return
        usedCoreNum = GetBlockNum()
        clearSizePerCore = Ceil(Ceil(self.outputSize, usedCoreNum), BLOCK_CUBE * BLOCK_CUBE) * BLOCK_CUBE * BLOCK_CUBE
        usedCoreNum = Ceil(self.outputSize, clearSizePerCore)
        if GetBlockIdx() >= usedCoreNum:
            self.SyncAllCores()
            return
        offset = clearSizePerCore * GetBlockIdx()
        realClearSize = min(self.outputSize - offset, clearSizePerCore)
        popBuffer = self.localBuffer.Get(self.yType)
        size = self.yType.itemsize
        localSize = min(popBuffer.GetSize(), realClearSize)
        repeatTime = Ceil(localSize * size // ONE_BLK_SIZE, MAX_BLOCK_NUM)
        blockNum = Ceil(localSize * size // ONE_BLK_SIZE, repeatTime)
        localSize = blockNum * repeatTime * ONE_BLK_SIZE // size
        InitConstValue(popBuffer, InitConstValueParams(repeatTime, blockNum, 0, 0))
        eventId = self.pipe.FetchEventID(HardEvent.MTE2_MTE3)
        SetFlag(HardEvent.MTE2_MTE3, eventId)
        WaitFlag(HardEvent.MTE2_MTE3, eventId)
        self.pipe.ReleaseEventID(HardEvent.MTE2_MTE3, eventId)
        rounds, tail = divmod(realClearSize, localSize)
        params = DataCopyParams(1, localSize * size // ONE_BLK_SIZE, 0, 0)
        for _ in range(rounds):
            DataCopy(self.yGm[offset], popBuffer, params)
            offset += localSize
        if tail:
            params.blockLen = tail * size // ONE_BLK_SIZE
            DataCopy(self.yGm[offset], popBuffer, params)
        self.SyncAllCores()

    def SyncAllCores(self) -> None:
        """Every cube core waits until all of them have stored their zeros (the vector cores do not take part)."""
        CrossCoreSetFlag(0, PIPE_MTE3, SYNC_AIC_FLAG)
        CrossCoreWaitFlag(SYNC_AIC_FLAG)  # released once every cube core's MTE3 stores are done, its own too

    def Destroy(self) -> None:
        self.pipe.Destroy()
