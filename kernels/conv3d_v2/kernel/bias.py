"""The bias: GM -> L1 (LoadChannelWiseL1Tools: one ND row into NZ, zero-padded to 16 channels), then L1 -> BT
(LoadBiasBtTools: fp32 in the bias table, converted from fp16 on the way), where Mmad's first K step reads it
(cmatrixSource). Real counterparts: conv3d_sub_api.h (dav_m220)."""
from __future__ import annotations

from ascend_sim.ascendc import DataCopy, DataCopyParams, InitConstValue, InitConstValueParams, Nd2NzParams
from kernels.conv3d_v2.kernel.util import AL1_BLOCK_SIZE, BLOCK_L0_N, BT_BLOCK_SIZE, MAX_UINT16, AlignB, CeilDIV


class LoadChannelWiseL1Tools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.currentNL0_ = 0

    def SetN(self, n: int) -> None:
        self.currentNL0_ = n

    def LoadChannelWiseL1(self, tensorL1, tensorGm) -> None:
        c = self.self_
        self.PreProcess()
        srcDValue = AlignB(c.singleCoreCo if c.biasFullLoadFlag else self.currentNL0_, BLOCK_L0_N)
        if self.currentNL0_ != srcDValue:  # not a multiple of 16 channels: zero the tail first
            blocks = srcDValue * c.sizeOfBias // AL1_BLOCK_SIZE
            InitConstValue(tensorL1, InitConstValueParams(repeatTimes=1, blockNum=blocks, dstGap=0, initValue=0))
        if self.currentNL0_ <= MAX_UINT16:
            DataCopy(tensorL1, tensorGm[self.tensorGmOffset], self._nd2nz(self.currentNL0_, srcDValue))
        else:  # dValue is 16 bits: whole pieces of limitLen channels, then the tail
            biasBlockNum = 32 // c.sizeOfBias
            limitLen = (MAX_UINT16 // biasBlockNum) * biasBlockNum
            num = self.currentNL0_ // limitLen
            p = self._nd2nz(limitLen, limitLen)
            p.ndNum, p.srcNdMatrixStride, p.dstNzMatrixStride = num, limitLen, limitLen
            DataCopy(tensorL1, tensorGm[self.tensorGmOffset], p)
            tail = self.currentNL0_ % limitLen
            if tail:
                offset = num * limitLen
                self.tensorGmOffset += offset
                DataCopy(tensorL1[offset], tensorGm[self.tensorGmOffset], self._nd2nz(tail, tail))

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.tensorGmOffset = c.nBL1Iter * t.nBL1 + c.nBL0Iter * t.nL0
        if c.biasFullLoadFlag:
            self.currentNL0_ = c.singleCoreCo

    @staticmethod
    def _nd2nz(dValue: int, srcDValue: int) -> Nd2NzParams:
        return Nd2NzParams(ndNum=1, nValue=1, dValue=dValue, srcNdMatrixStride=0, srcDValue=srcDValue,
                           dstNzC0Stride=1, dstNzNStride=1, dstNzMatrixStride=1)


class LoadBiasBtTools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.tilingNBL1_ = conv.conv3dTiling.nBL1
        self.currentNL0_ = 0

    def SetN(self, n: int) -> None:
        self.currentNL0_ = n

    def LoadBiasBt(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        offset = c.nBL1Iter * self.tilingNBL1_ + c.nBL0Iter * t.nL0 if t.biasFullLoadFlag else 0
        params = DataCopyParams(blockCount=1, blockLen=CeilDIV(self.currentNL0_ * c.sizeOfBias, BT_BLOCK_SIZE))
        DataCopy(c.biasBT, c.biasL1[offset], params)
