"""The AIV weight pre-transpose Conv3dDxVecTranspose, run before the block driver when the tiling sets
enableVecTrans (conv3d_backprop_input_v2/conv3d_backprop_input_v2_vec_transpose.h).

The NCDHW weight (Cout, Cin, dk*hk*wk) is rewritten into the user workspace as (Cout, dk*hk*wk, Cin1, Cin0 = 16):
each vector core takes (cout, cin1) slices round-robin; per slice DataCopyPad brings the 16 channel rows of
dk*hk*wk taps into UB (rows padded to 32 B), TransDataTo5HD transposes them (8-bit: twice, low then high half
of each 32-byte block, as uint8), and a strided DataCopy / DataCopyPad writes the 16-channel rows out. Then the
vector cores meet (CrossCoreSetFlag mode 0, flag 2) and release their AIC (mode 2, flag 6), whose block driver
waits for flag 6 before its first weight load (Conv3dDxOswBlock::CrossCoreWaitVecTrans).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag, DataCopy, DataCopyExtParams,
                                DataCopyPad, DataCopyPadExtParams, DataCopyParams, GetBlockIdx, GetBlockNum,
                                GlobalTensor, TPipe, TPosition, TQue, TransDataTo5HD, TransDataTo5HDParams,
                                current_core)

SYNC_MODE0, SYNC_MODE2 = 0, 2
SYNC_AIV_ONLY_ALL_DET_FLAG, SYNC_AIV_AIC_DET_FLAG = 2, 6
MULTIPLE_AIV_TO_AIC = 2
DATA_BLOCK_SIZE = 32
POINTS_PER_BLOCK_FP32, POINTS_PER_BLOCK_FP16, POINTS_PER_BLOCK_INT8 = 8, 16, 64


class Conv3dDxVecTranspose:
    def __init__(self, filterType):
        self.filterType = np.dtype(filterType)
        self.is8 = self.filterType.itemsize == 1

    def Init(self, filter, workSpace, tilingData) -> None:
        self.InitTilingData(tilingData)
        self.filterGm_ = GlobalTensor(self.filterType).SetGlobalBuffer(filter)
        self.ubOutGm_ = GlobalTensor(self.filterType).SetGlobalBuffer(workSpace)
        halfUbSize = current_core().platform.UB // 2
        self.tPipe_ = TPipe()
        self.vecInQueue_, self.vecOutQueue_ = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
        self.tPipe_.InitBuffer(self.vecInQueue_, 1, halfUbSize)
        self.tPipe_.InitBuffer(self.vecOutQueue_, 1, halfUbSize)

    def InitTilingData(self, t) -> None:
        size = self.filterType.itemsize
        self.cout_, self.cin_ = t.cout, t.cin
        self.cin0_ = 16
        self.cin1_ = (self.cin_ + self.cin0_ - 1) >> 4
        self.cin0Tail_ = self.cin_ - (self.cin1_ - 1) * self.cin0_
        self.dkhkwk_ = t.dk * t.hk * t.wk
        self.dkhkwkSize_ = self.dkhkwk_ * size
        self.dkhkwkSizeAlign_ = ((self.dkhkwkSize_ + DATA_BLOCK_SIZE - 1) >> 5) * DATA_BLOCK_SIZE
        self.dkhkwkAlign_ = self.dkhkwkSizeAlign_ // size
        self.totalCnt_ = self.cout_ * self.cin1_
        blocks = GetBlockNum()
        self.usedCoreNum_ = (self.totalCnt_ + 1) >> 1 if self.totalCnt_ < blocks * MULTIPLE_AIV_TO_AIC else blocks
        self.calBlockRound_ = self.totalCnt_ // (self.usedCoreNum_ * MULTIPLE_AIV_TO_AIC)
        self.tailBlockCnt_ = self.totalCnt_ - self.calBlockRound_ * (self.usedCoreNum_ * MULTIPLE_AIV_TO_AIC)

    def Process(self) -> None:
        idx = GetBlockIdx()
        if idx >= self.usedCoreNum_ * MULTIPLE_AIV_TO_AIC:
            self.VecNotifyCube()
            return
        if idx < self.tailBlockCnt_:
            self.calBlockRound_ += 1
            blockCntOffset = self.calBlockRound_ * idx
        else:
            blockCntOffset = self.tailBlockCnt_ + self.calBlockRound_ * idx
        for i in range(self.calBlockRound_):  # one Cin0 x dk*hk*wk slice at a time
            self.curCoutCnt_, self.curCin1Cnt_ = divmod(i + blockCntOffset, self.cin1_)
            self.CopyInToUB()
            self.TransFormat()
            self.CopyOutToGm()
        self.VecNotifyCube()

    def CopyInToUB(self) -> None:
        vecInBuf_ = self.vecInQueue_.AllocTensor(self.filterType)
        src = self.curCoutCnt_ * self.cin_ * self.dkhkwk_ + self.curCin1Cnt_ * self.cin0_ * self.dkhkwk_
        count = self.cin0Tail_ if self.curCin1Cnt_ == self.cin1_ - 1 else self.cin0_
        params = DataCopyExtParams(blockCount=count, blockLen=self.dkhkwkSize_, srcStride=0, dstStride=0)
        rightPadPoint = self.dkhkwkAlign_ - self.dkhkwk_
        if self.is8:  # the instruction takes no 8-bit floats: moved as uint8
            DataCopyPad(vecInBuf_.ReinterpretCast(np.uint8), self.filterGm_.ReinterpretCast(np.uint8)[src], params,
                        DataCopyPadExtParams(True, 0, rightPadPoint, 0))
        else:
            DataCopyPad(vecInBuf_, self.filterGm_[src], params, DataCopyPadExtParams(True, 0, rightPadPoint, 0))
        self.vecInQueue_.EnQue(vecInBuf_)

    def InitTransDataTo5DParams(self) -> TransDataTo5HDParams:
        p = TransDataTo5HDParams(dstHighHalf=False, srcHighHalf=False, repeatTimes=self.dkhkwkSizeAlign_ >> 5)
        if p.repeatTimes == 1:  # the API's rule: repeat strides 0 with one repeat
            p.dstRepStride = p.srcRepStride = 0
        else:
            points = {4: POINTS_PER_BLOCK_FP32, 2: POINTS_PER_BLOCK_FP16, 1: POINTS_PER_BLOCK_INT8}
            p.dstRepStride = (self.cin0_ * points[self.filterType.itemsize] * self.filterType.itemsize) >> 5
            p.srcRepStride = 1
        return p

    def TransFormat(self) -> None:
        vecInBuf_ = self.vecInQueue_.DeQue(self.filterType)
        vecOutBuf_ = self.vecOutQueue_.AllocTensor(self.filterType)
        p = self.InitTransDataTo5DParams()
        if self.filterType.itemsize == 4:
            dst = [vecOutBuf_[(i >> 1) * self.cin0_ + (i & 1) * POINTS_PER_BLOCK_FP32] for i in range(self.cin0_)]
        else:
            step = DATA_BLOCK_SIZE if self.is8 else self.cin0_
            dst = [vecOutBuf_[i * step] for i in range(self.cin0_)]
        src = [vecInBuf_[i * self.dkhkwkAlign_] for i in range(self.cin0_)]
        if self.is8:
            u8 = np.dtype(np.uint8)
            dst, src = [t.ReinterpretCast(u8) for t in dst], [t.ReinterpretCast(u8) for t in src]
            TransDataTo5HD(dst, src, p)
            p.srcHighHalf = True
            dst = [vecOutBuf_[(self.cin0_ + i) * DATA_BLOCK_SIZE].ReinterpretCast(u8) for i in range(self.cin0_)]
            TransDataTo5HD(dst, src, p)
        else:
            TransDataTo5HD(dst, src, p)
        self.vecOutQueue_.EnQue(vecOutBuf_)
        self.vecInQueue_.FreeTensor(vecInBuf_)

    def CopyOutToGm(self) -> None:
        vecOutBuf_ = self.vecOutQueue_.DeQue(self.filterType)
        size = self.filterType.itemsize
        dst = self.curCoutCnt_ * self.dkhkwk_ * self.cin1_ * self.cin0_ + self.curCin1Cnt_ * self.cin0_
        if self.is8:
            # after the transpose C0 is 32 wide with 16 valid channels: write the valid half of each row
            params = DataCopyExtParams(blockCount=self.dkhkwk_, blockLen=self.cin0_ * size,
                                       srcStride=(DATA_BLOCK_SIZE - self.cin0_) >> 5,
                                       dstStride=(self.cin1_ * self.cin0_ - self.cin0_) * size)
            DataCopyPad(self.ubOutGm_[dst], vecOutBuf_, params)
        else:
            params = DataCopyParams(blockCount=self.dkhkwk_, blockLen=(self.cin0_ * size) >> 5, srcStride=0,
                                    dstStride=((self.cin1_ * self.cin0_ - self.cin0_) * size) >> 5)
            DataCopy(self.ubOutGm_[dst], vecOutBuf_, params)
        self.vecOutQueue_.FreeTensor(vecOutBuf_)

    def VecNotifyCube(self) -> None:
        CrossCoreSetFlag(SYNC_MODE0, PIPE_MTE3, SYNC_AIV_ONLY_ALL_DET_FLAG)
        CrossCoreWaitFlag(SYNC_AIV_ONLY_ALL_DET_FLAG)
        CrossCoreSetFlag(SYNC_MODE2, PIPE_MTE3, SYNC_AIV_AIC_DET_FLAG)

    def Destroy(self) -> None:
        self.vecInQueue_.FreeAllEvent()
        self.vecOutQueue_.FreeAllEvent()
        self.tPipe_.Destroy()
