"""The weight of a grouped convolution (GroupConvType GroupConv_Weight_Gfz) into L0B: the group-opt tools of
conv3d_groupopt_sub_api.h (LoadBL1WithGroupOptTools, LoadBL0WithGroupOptTools).

The weight is FRACTAL_Z_3D per group-opt block (several original groups folded into one block of cinOpt x coutOpt
channels; the host's enlarge rule). The moves are load_b.py's, with the K blocks of the group's own Cin; in the last
block of a core whose folded Cin is larger than what is left of x (specialGroupDimTail), the rows of the missing
channels are skipped: one LoadData 2D per (kd, cin1, kh, kw) row of the real channels.
"""
from __future__ import annotations

from ascend_sim.ascendc import DataCopy, DataCopyParams, LoadData, LoadData2DParams
from kernels.conv3d_v2.kernel.util import BLOCK_L0_N, LOAD2D_MAX_REPEAT_TIMES, AlignB, CeilDIV


def _in_short_tail(c) -> bool:
    """The last group-opt block of a core whose folded channels run past the real Cin."""
    t = c.conv3dTiling
    return (c.isGroupOptDimTail and c.groupOptIter >= c.maxGroupOptIter - 1
            and AlignB(c.orgCi, c.cin0) * t.groupOpt > AlignB(t.orgCi, c.cin0))


class LoadBL1WithGroupOptTools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.loadData2dParams = LoadData2DParams()
        self.dataCopyParams = DataCopyParams()

    def LoadBL1(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.PreProcess()
        if self.specialGroupDimTail():
            return
        if self.currentNBL1 >= c.orgCo:
            repeatTimes = self.currentKBL1 * t.nBL1 // (BLOCK_L0_N * c.cin0)
            if repeatTimes > LOAD2D_MAX_REPEAT_TIMES:
                p = self.dataCopyParams
                p.blockCount, p.srcStride = 1, 0
                p.blockLen = CeilDIV(self.currentKBL1 * t.nBL1, c.cin0)
                DataCopy(c.bl1, c.bgm[self.bL1GmOffset], p)
            else:
                self.loadData2dParams.repeatTimes = repeatTimes
                LoadData(c.bl1, c.bgm[self.bL1GmOffset], self.loadData2dParams)
        else:
            p = self.dataCopyParams
            p.blockCount, p.blockLen = self.currentKBL1 // c.cin0, self.currentNBL1
            p.srcStride = c.orgCoAlignN0 - self.currentNBL1
            DataCopy(c.bl1, c.bgm[self.bL1GmOffset], p)

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.bL1GmOffset = c.kBL1Iter * c.groupKBL1 * c.orgCoAlignN0 + c.nBL1Iter * t.nBL1 * c.cin0
        self.currentNBL1 = t.nBL1
        if c.isGroupOptDimTail:
            self.currentNBL1 = t.nBL1 if c.singleCoreCo >= t.nBL1 else AlignB(c.singleCoreCo, BLOCK_L0_N)
        if c.nBL1Iter == c.maxNBL1Iter:
            self.currentNBL1 = c.nBL1TailAlign
        self.currentKBL1 = c.groupKBL1Tail if c.kBL1Iter == c.maxKBL1Iter else c.groupKBL1
        self.loadData2dParams.srcStride = 1

    def _load_row(self, bl1Offset: int, gmOffset: int, repeatTimes: int) -> None:
        """One row of repeatTimes fractals, in pieces of at most 255 (LoadData2dWithBeyond255)."""
        c = self.self_
        step = LOAD2D_MAX_REPEAT_TIMES * BLOCK_L0_N * c.cin0
        while repeatTimes > 0:
            self.loadData2dParams.repeatTimes = min(repeatTimes, LOAD2D_MAX_REPEAT_TIMES)
            LoadData(c.bl1[bl1Offset], c.bgm[gmOffset], self.loadData2dParams)
            repeatTimes -= LOAD2D_MAX_REPEAT_TIMES
            bl1Offset += step
            gmOffset += step

    def specialGroupDimTail(self) -> bool:
        c = self.self_
        if not _in_short_tail(c):
            return False
        t = c.conv3dTiling
        repeatTimes = self.currentNBL1 // BLOCK_L0_N
        cin0xKhxKw = c.cin0 * c.kernelHxkernelW
        currentKd = CeilDIV(self.currentKBL1, c.cin1 * cin0xKhxKw)
        cin1xKhxKw = c.cin1 * c.kernelHxkernelW
        if currentKd == 1:
            cin1xKhxKw = self.currentKBL1 // c.cin0
            skipCinRepeats = (c.kBL1Iter * c.groupKBL1) // (c.cin1 * cin0xKhxKw)
            skipCinOffset = (AlignB(c.orgCi, c.cin0) - c.cin1 * c.cin0) * c.kernelHxkernelW * c.orgCoAlignN0
            self.bL1GmOffset += skipCinOffset * skipCinRepeats
        else:
            self.bL1GmOffset = (c.kBL1Iter * (c.groupKBL1 // (c.cin0 * c.cin1)) * c.orgCi * c.orgCoAlignN0
                                + c.nBL1Iter * t.nBL1 * c.cin0)
        bl1Offset = 0
        for kd in range(currentKd):
            gmOffset = self.bL1GmOffset + kd * AlignB(c.orgCi, c.cin0) * AlignB(c.orgCo, c.cin0) * c.kernelHxkernelW
            for _ in range(cin1xKhxKw):
                self._load_row(bl1Offset, gmOffset, repeatTimes)
                gmOffset += c.orgCoAlignN0 * c.cin0
                bl1Offset += self.currentNBL1 * c.cin0
        return True


class LoadBL0WithGroupOptTools:
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
        else:
            self.currentSrcN_ = c.nBL1TailAlign if c.nBL1Iter == c.maxNBL1Iter else t.nBL1
        self.currentKL0 = c.kL0Tail if c.kIter == c.maxKL0Iter else c.singleCoreKL0
        self.load2dSrcOffset = c.kBL0Iter * c.singleCoreKL0 * self.currentSrcN_ + c.nBL0Iter * t.nL0 * self.k0_
        if c.bl1bypass:
            if self.specialGroupDimTail():
                return
            src, whole = c.bgm, self.currentNL0_ >= c.orgCo
        else:
            src, whole = c.bl1, self.currentSrcN_ == self.currentNL0_
        if whole:
            LoadData(c.bl0, src[self.load2dSrcOffset], self._params(self.numNL0Block_ * (self.currentKL0 // self.k0_)))
        else:
            params = self._params(self.numNL0Block_)
            dstStep, srcStep = self.currentNL0_ * self.k0_, self.currentSrcN_ * self.k0_
            for part in range(self.currentKL0 // self.k0_):
                LoadData(c.bl0[part * dstStep], src[self.load2dSrcOffset + part * srcStep], params)

    @staticmethod
    def _params(repeatTimes: int) -> LoadData2DParams:
        return LoadData2DParams(repeatTimes=repeatTimes, srcStride=1)

    def specialGroupDimTail(self) -> bool:
        c = self.self_
        if not _in_short_tail(c):
            return False
        t = c.conv3dTiling
        params = self._params(self.numNL0Block_)
        dstStep, srcStep = self.currentNL0_ * self.k0_, self.currentSrcN_ * self.k0_
        cin0xKhxKw = c.cin0 * c.kernelHxkernelW
        currentKd = CeilDIV(self.currentKL0, c.cin1 * cin0xKhxKw)
        cin1xKhxKw = c.cin1 * c.kernelHxkernelW
        if currentKd == 1:
            cin1xKhxKw = self.currentKL0 // c.cin0
            skipCinRepeats = (c.kBL0Iter * t.kL0) // (c.cin1 * cin0xKhxKw)
            skipCinOffset = (AlignB(c.orgCi, c.cin0) - c.cin1 * c.cin0) * c.kernelHxkernelW * self.currentSrcN_
            self.load2dSrcOffset += skipCinOffset * skipCinRepeats
        else:
            self.load2dSrcOffset = (c.kBL0Iter * (t.kL0 // (self.k0_ * c.cin1)) * c.orgCi * self.currentSrcN_
                                    + c.nBL0Iter * t.nL0 * self.k0_)
        bl0Offset = 0
        for kd in range(currentKd):
            gmOffset = (self.load2dSrcOffset
                        + kd * AlignB(c.orgCi, c.cin0) * AlignB(c.orgCo, c.cin0) * c.kernelHxkernelW)
            for _ in range(cin1xKhxKw):
                LoadData(c.bl0[bl0Offset], c.bgm[gmOffset], params)
                gmOffset += srcStep
                bl0Offset += dstStep
        return True
