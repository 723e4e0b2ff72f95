"""The init-output pass: every core zeroes its slice of dw, then all cores meet; the main pass adds into it.

dw is written with atomic adds only (cores splitting K, batch or depth each add their part), so it starts at
zero: InitConstValue zeroes L1 (the whole L1, totalL1Size), then each core copies those zeros over its
ceil(size/cores) (256-element aligned) slice with DataCopy L1 -> GM (MTE3) in chunks of L1.

Ports conv3d_backprop_filter_v2_init_output.h (Conv3dDwInitOutput). [DEVIATION] The real pass ends with
CrossCoreSetFlag<0, PIPE_MTE3> + CrossCoreWaitFlag, a barrier of the cube cores; here it is SyncAll (a barrier
of every core, and a PIPE_ALL barrier inside the core), as in the dx port: the simulator's race checker orders a
core's own pipes only through flags and barriers (docs/simulator.md).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, DataCopy, DataCopyParams, GetBlockIdx, GetBlockNum, GlobalTensor,
                                HardEvent, InitConstValue, InitConstValueParams, SetFlag, SyncAll, TBuf, TPipe,
                                TPosition, WaitFlag)

from .util import BLOCK_CUBE, ONE_BLK_SIZE, Ceil

MAX_BLOCK_NUM = (1 << 15) - 1


class Conv3dDwInitOutput:
    def __init__(self, y_dtype=np.float32):
        self.yType = np.dtype(y_dtype)

    def Init(self, y, tilingData) -> None:
        self.InitTilingData(tilingData)
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y)
        self.pipe = TPipe()
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
        SyncAll()  # CrossCoreSetFlag<0, PIPE_MTE3>(SYNC_AIC_FLAG); CrossCoreWaitFlag(SYNC_AIC_FLAG) on hardware

    def Destroy(self) -> None:
        self.pipe.Destroy()
