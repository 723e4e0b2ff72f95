"""The B operand (the weight, FRACTAL_Z_3D: [(kd, cin1, kh, kw)][cout aligned to 16][C0]) into L0B.

FRACTAL_Z_3D is already the ZN layout Mmad reads from L0B (a 512-byte fractal = 16 couts x C0 of K), so every move
is a LoadData 2D of whole fractals without transpose:
- BL1 bypass on (LoadBL0Tools, conv3d_mte1_sub_api.h): straight from GM into L0B on MTE2;
- bypass off: LoadBL1Tools (conv3d_mte2_sub_api.h) copies a kBL1 x nBL1 block into L1 (LoadData 2D from GM, or
  DataCopy when the block is too long or narrower than Cout), then LoadBL0Tools moves the L0 block L1 -> L0B.
"""
from __future__ import annotations

from ascend_sim.ascendc import DataCopy, DataCopyParams, LoadData, LoadData2DParams
from kernels.conv3d_v2.kernel.util import BLOCK_L0_N, LOAD2D_MAX_REPEAT_TIMES, CeilDIV


class LoadBL1Tools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.loadData2dParams = LoadData2DParams()
        self.dataCopyParams = DataCopyParams()

    def LoadBL1(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.PreProcess()
        if t.nBL1 >= c.orgCo:  # the whole Cout: the block is contiguous in GM
            repeatTimes = self.currentKBL1 * t.nBL1 // (BLOCK_L0_N * c.cin0)
            if repeatTimes > LOAD2D_MAX_REPEAT_TIMES:
                p = self.dataCopyParams
                p.blockCount, p.srcStride = 1, 0
                p.blockLen = CeilDIV(self.currentKBL1 * t.nBL1, c.cin0)
                DataCopy(c.bl1, c.bgm[self.bL1GmOffset], p)
            else:
                self.loadData2dParams.repeatTimes = repeatTimes
                LoadData(c.bl1, c.bgm[self.bL1GmOffset], self.loadData2dParams)
        else:  # one row of currentNBL1 couts per K C0 group
            p = self.dataCopyParams
            p.blockCount = self.currentKBL1 // c.cin0
            p.blockLen = self.currentNBL1
            p.srcStride = c.orgCoAlignN0 - self.currentNBL1
            DataCopy(c.bl1, c.bgm[self.bL1GmOffset], p)

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.bL1GmOffset = c.kBL1Iter * t.kBL1 * c.orgCoAlignN0 + c.nBL1Iter * t.nBL1 * c.cin0
        self.currentNBL1 = c.nBL1TailAlign if c.nBL1Iter == c.maxNBL1Iter else t.nBL1
        self.currentKBL1 = t.kBL1Tail if c.kBL1Iter == c.maxKBL1Iter else t.kBL1
        self.loadData2dParams.srcStride = 1


class LoadBL0Tools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.k0_ = 32 // conv.sizeOfWeight

    def SetN(self, n: int) -> None:
        self.currentNL0_ = n
        self.numNL0Block_ = n // BLOCK_L0_N

    def LoadBL0(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        if c.bl1bypass:
            self.currentSrcN_ = c.orgCoAlignN0
            src, whole = c.bgm, t.nL0 >= c.orgCo
        else:
            self.currentSrcN_ = c.nBL1TailAlign if c.nBL1Iter == c.maxNBL1Iter else t.nBL1
            src, whole = c.bl1, t.nBL1 == t.nL0
        currentKL0 = c.kL0Tail if c.kIter == c.maxKL0Iter else c.singleCoreKL0
        load2dSrcOffset = c.kBL0Iter * c.singleCoreKL0 * self.currentSrcN_ + c.nBL0Iter * t.nL0xk0
        if whole:  # the L0 block is contiguous in the source: one load of every fractal
            LoadData(c.bl0, src[load2dSrcOffset], self._params(self.numNL0Block_ * (currentKL0 // self.k0_)))
        else:  # one load per K C0 group: numNL0Block fractals of that row
            params = self._params(self.numNL0Block_)
            dstStep, srcStep = self.currentNL0_ * self.k0_, self.currentSrcN_ * self.k0_
            for part in range(currentKL0 // self.k0_):
                LoadData(c.bl0[part * dstStep], src[load2dSrcOffset + part * srcStep], params)

    @staticmethod
    def _params(repeatTimes: int) -> LoadData2DParams:
        return LoadData2DParams(repeatTimes=repeatTimes, srcStride=1)
