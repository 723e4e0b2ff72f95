"""The pointwise tools of the Conv3D API (ops-nn conv/conv3d_v2/op_kernel/impl/conv3d_mte2_pointwise_sub_api.h,
conv3d_mte1_pointwise_sub_api.h, conv3d_pointwise_sub_api.h): a 1x1x1 convolution of NCDHW data as a plain GEMM,
y[cout][pixel] = w[cout][cin] . x[cin][pixel] (+ bias[cout]), one output depth per Iterate.

The roles of L0A and L0B are swapped: the API's "al0" (the feature map) lives in L0B and its "bl0" (the weight) in
L0A, so Mmad(cl0, bl0, al0) has the weight as its left operand (m = couts) and the pixels as n. L0C then holds
y[cout][pixel] in NZ, and Fixpipe with NZ2ND (CFG_ROW_MAJOR) writes NCDHW rows directly: mSize couts, nSize pixels,
the row pitch Do*Ho*Wo.
- x: GM [cin][Di*Hi*Wi] -> L1 by DataCopy Nd2Nz (rows = cin, columns = pixels): [pixel/C0][cin][C0] for b16; for
  fp32 in 16-row groups, [cin/16][pixel/8][16][8]. Then L1 -> L0B by LoadData 2D with ifTranspose (b16) or
  LoadDataWithTranspose (fp32), one call per M (b16) or K (fp32) fractal group: ZN with N = pixels.
- weight: GM [cout][cin] -> L1 by Nd2Nz (rows = couts): [cin/k0][cout][k0], then L1 -> L0A by LoadData 2D, one
  call per K fractal: ZZ with M = couts.
- a K tail (Cin not a multiple of kL0) is zero-filled in L1 (InitConstValue) and the Mmad's k is aligned to 16.
- bias (float32): GM -> L1 by Nd2Nz as one value per 32-byte row ([cout][8], the value in column 0), then
  LoadBiasL0WithBroadcast: those rows -> L0A (LoadData 2D, a couts x 8 A operand) and 1.0 into L0B
  (InitConstValue, an 8 x pixels B operand); MadBias (k = 8, cmatrixInitVal) puts bias[cout] in every pixel of L0C
  and the K steps accumulate onto it. Not the bias table.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (CFG_ROW_MAJOR, PIPE_MTE2, DataCopy, Fixpipe, FixpipeParamsV220, InitConstValue,
                                InitConstValueParams, LoadData, LoadData2DParams, LoadData2dTransposeParams,
                                LoadDataWithTranspose, Mmad, MmadParams, Nd2NzParams, PipeBarrier)
from kernels.conv3d_v2.kernel.store_c import CopyOutTools, GetQuantPre
from kernels.conv3d_v2.kernel.util import AL1_BLOCK_SIZE, BLOCK_L0_M, BLOCK_L0_N, MAX_UINT16, AlignB

DATA_COPY_OP_LEN = 16  # the K / M alignment of the pointwise loads
K0_BIAS = 8            # the K of the bias Mmad (one 32-byte fp32 row)
FRACTAL_SIZE = 512
ONE_BLK_SIZE = 32


def _nd2nz(nValue: int, dValue: int, srcDValue: int, dstNzC0Stride: int) -> Nd2NzParams:
    return Nd2NzParams(ndNum=1, nValue=nValue, dValue=dValue, srcNdMatrixStride=0, srcDValue=srcDValue,
                       dstNzC0Stride=dstNzC0Stride, dstNzNStride=1, dstNzMatrixStride=1)


def _zero_fill(tensor, blockNum: int) -> None:
    InitConstValue(tensor, InitConstValueParams(repeatTimes=1, blockNum=blockNum, dstGap=0, initValue=0))
    PipeBarrier(PIPE_MTE2)


class LoadAL1WithPointWiseTools:
    """x rows (cin) x pixels of one output depth -> L1."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        t = conv.conv3dTiling
        self.al1BlockNum = AL1_BLOCK_SIZE // conv.sizeOfInput
        self.dihiwi = conv.orgDi * t.orgHixWi
        self.alignMAL1Tail = AlignB(conv.mAL1Tail, BLOCK_L0_M)
        self.alignKAL1Tail = AlignB(t.kAL1Tail, DATA_COPY_OP_LEN)

    def LoadAL1(self) -> None:
        c = self.self_
        self.PreProcess()
        if c.mAL1Iter == c.maxMAL1Iter or c.kAL1Iter == c.maxKAL1Iter:  # zero the L1 block, sized as L0B reads it
            _zero_fill(c.al1, self.alignCurrentMAL1 * self.alignCurrentKAL1 // self.al1BlockNum)
        if c.InputT == np.float32:
            self.loadAL1ByKAlignTo16()
        else:
            self.loadAL1ByNormal()

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        if c.mAL1Iter == c.maxMAL1Iter:
            self.currentMAL1, self.alignCurrentMAL1 = c.mAL1Tail, self.alignMAL1Tail
        else:
            self.currentMAL1 = self.alignCurrentMAL1 = t.mAL1
        if c.kAL1Iter == c.maxKAL1Iter:
            self.currentKAL1, self.alignCurrentKAL1 = t.kAL1Tail, self.alignKAL1Tail
        else:
            self.currentKAL1 = self.alignCurrentKAL1 = t.kAL1
        self.aL1GmOffset = c.kAL1Iter * t.kAL1 * self.dihiwi + c.dOutIter * t.orgHixWi + c.mAL1Iter * t.mAL1

    def loadAL1ByNormal(self) -> None:
        c = self.self_
        if self.dihiwi > MAX_UINT16:  # srcDValue is 16 bits: one cin row per copy
            p = _nd2nz(1, self.currentMAL1, self.currentMAL1, self.alignCurrentKAL1)
            for i in range(self.currentKAL1):
                DataCopy(c.al1[i * self.al1BlockNum], c.agm[self.aL1GmOffset + i * self.dihiwi], p)
        else:
            p = _nd2nz(self.currentKAL1, self.currentMAL1, self.dihiwi, self.alignCurrentKAL1)
            DataCopy(c.al1, c.agm[self.aL1GmOffset], p)

    def loadAL1ByKAlignTo16(self) -> None:
        """fp32: 16 cin rows per copy, each group its own [pixel/8][16][8] block (what LoadDataWithTranspose
        joins into 16 x 16 squares)."""
        c = self.self_
        singleDataCopyElements = DATA_COPY_OP_LEN * self.alignCurrentMAL1
        dataCopyTimes = self.alignCurrentKAL1 // DATA_COPY_OP_LEN
        tailKAL1 = self.currentKAL1 % DATA_COPY_OP_LEN
        wide = self.dihiwi > MAX_UINT16
        p = (_nd2nz(1, self.currentMAL1, self.currentMAL1, DATA_COPY_OP_LEN) if wide else
             _nd2nz(DATA_COPY_OP_LEN, self.currentMAL1, self.dihiwi, DATA_COPY_OP_LEN))
        upperLimits = dataCopyTimes if tailKAL1 == 0 else dataCopyTimes - 1
        for copyIdx in range(dataCopyTimes):
            dst = copyIdx * singleDataCopyElements
            src = self.aL1GmOffset + self.dihiwi * copyIdx * DATA_COPY_OP_LEN
            rows = DATA_COPY_OP_LEN if copyIdx < upperLimits else tailKAL1
            if wide:
                for inner in range(rows):
                    DataCopy(c.al1[dst + inner * self.al1BlockNum], c.agm[src + self.dihiwi * inner], p)
            else:
                p.nValue = rows
                DataCopy(c.al1[dst], c.agm[src], p)


class LoadBL1WithPointWiseTools:
    """weight couts x cin -> L1 as [cin/k0][cout][k0]."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        t = conv.conv3dTiling
        self.bl1BlockNum = ONE_BLK_SIZE // conv.sizeOfWeight
        self.alignNBL1Tail = AlignB(conv.nBL1Tail, BLOCK_L0_M)
        self.alignKBL1Tail = AlignB(t.kBL1Tail, DATA_COPY_OP_LEN)

    def LoadBL1(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.PreProcess()
        if c.nBL1Iter == c.maxNBL1Iter or c.kBL1Iter == c.maxKBL1Iter:
            _zero_fill(c.bl1, self.alignCurrentNBL1 * self.alignCurrentKBL1 // self.bl1BlockNum)
        bL1GmOffset = c.nBL1Iter * t.nBL1 * c.orgCi + c.kBL1Iter * t.kBL1
        if c.orgCi > MAX_UINT16:  # srcDValue is 16 bits: one cout row per copy
            p = _nd2nz(1, self.currentKBL1, self.currentKBL1, self.alignCurrentNBL1)
            for i in range(self.currentNBL1):
                DataCopy(c.bl1[i * self.bl1BlockNum], c.bgm[bL1GmOffset + c.orgCi * i], p)
        else:
            DataCopy(c.bl1, c.bgm[bL1GmOffset],
                     _nd2nz(self.currentNBL1, self.currentKBL1, c.orgCi, self.alignCurrentNBL1))

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        if c.nBL1Iter == c.maxNBL1Iter:
            self.currentNBL1, self.alignCurrentNBL1 = c.nBL1Tail, self.alignNBL1Tail
        else:
            self.currentNBL1 = self.alignCurrentNBL1 = t.nBL1
        if c.kBL1Iter == c.maxKBL1Iter:
            self.currentKBL1, self.alignCurrentKBL1 = t.kBL1Tail, self.alignKBL1Tail
        else:
            self.currentKBL1 = self.alignCurrentKBL1 = t.kBL1


class LoadAL0WithPointWiseTools:
    """x L1 -> L0B (the API's al0 lives in L0B here): ZN with N = pixels."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        t = conv.conv3dTiling
        self.alignMAL1Tail = AlignB(conv.mAL1Tail, BLOCK_L0_M)
        self.alignKAL1Tail = AlignB(t.kAL1Tail, DATA_COPY_OP_LEN)
        self.alignKL0Tail = AlignB(conv.kL0Tail, DATA_COPY_OP_LEN)
        self.fractalElements = FRACTAL_SIZE // conv.sizeOfInput

    def SetM(self, m: int) -> None:
        c = self.self_
        self.currentML0_ = m
        self.numML0Block_ = m // BLOCK_L0_N
        self.currentMAL1 = self.alignMAL1Tail if c.mAL1Iter == c.maxMAL1Iter else c.conv3dTiling.mAL1

    def LoadAL0(self) -> None:
        c = self.self_
        self.currentKL0 = self.alignKL0Tail if c.kIter == c.maxKL0Iter else c.conv3dTiling.kL0
        if c.InputT == np.float32:
            self.LoadAL0ByLoad2dTranspose()
        else:
            self.LoadAL0ByLoad2d()

    def LoadAL0ByLoad2dTranspose(self) -> None:
        """fp32: one LoadDataWithTranspose per 16-deep K group; each 16-pixel square splits into two 8-deep K
        fractals, numML0Block fractals apart."""
        c, t = self.self_, self.self_.conv3dTiling
        load2dSrcOffset = c.kAL0Iter * t.kL0 * self.currentMAL1 + c.mAL0Iter * t.mL0 * DATA_COPY_OP_LEN
        p = LoadData2dTransposeParams(repeatTimes=self.numML0Block_, srcStride=1, dstGap=0,
                                      dstFracGap=self.numML0Block_ - 1)
        dstStep, srcStep = DATA_COPY_OP_LEN * self.currentML0_, DATA_COPY_OP_LEN * self.currentMAL1
        for part in range(self.currentKL0 // DATA_COPY_OP_LEN):
            LoadDataWithTranspose(c.al0[part * dstStep], c.al1[load2dSrcOffset + part * srcStep], p)

    def LoadAL0ByLoad2d(self) -> None:
        """b16: one LoadData 2D (ifTranspose) per 16-pixel column block, over its K fractals."""
        c, t = self.self_, self.self_.conv3dTiling
        currentKAL1 = self.alignKAL1Tail if c.kAL1Iter == c.maxKAL1Iter else t.kAL1
        load2dSrcOffset = c.mAL0Iter * t.mL0 * currentKAL1 + c.kAL0Iter * t.kL0 * BLOCK_L0_N
        p = LoadData2DParams(repeatTimes=self.currentKL0 // c.cin0, srcStride=1, ifTranspose=True,
                             dstGap=self.numML0Block_ - 1)
        continueOffset = currentKAL1 * BLOCK_L0_N
        for part in range(self.numML0Block_):
            LoadData(c.al0[part * self.fractalElements], c.al1[load2dSrcOffset + part * continueOffset], p)


class LoadBL0WithPointWiseTools:
    """weight L1 -> L0A (the API's bl0 lives in L0A here): ZZ with M = couts."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.alignNBL1Tail = AlignB(conv.nBL1Tail, BLOCK_L0_N)
        self.alignKL0Tail = AlignB(conv.kL0Tail, DATA_COPY_OP_LEN)
        self.k0_ = ONE_BLK_SIZE // conv.sizeOfWeight
        self.fractalElements = FRACTAL_SIZE // conv.sizeOfWeight

    def SetN(self, n: int) -> None:
        self.currentNL0_ = n

    def LoadBL0(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        currentNBL1 = self.alignNBL1Tail if c.nBL1Iter == c.maxNBL1Iter else t.nBL1
        currentKL0 = self.alignKL0Tail if c.kIter == c.maxKL0Iter else t.kL0
        load2dSrcOffset = c.kBL0Iter * t.kL0 * currentNBL1 + c.nBL0Iter * t.nL0 * self.k0_
        numKL0Block = currentKL0 // self.k0_
        p = LoadData2DParams(repeatTimes=self.currentNL0_ // BLOCK_L0_M, srcStride=1, dstGap=numKL0Block - 1)
        continueOffset = currentNBL1 * self.k0_
        for part in range(numKL0Block):
            LoadData(c.bl0[part * self.fractalElements], c.bl1[load2dSrcOffset + part * continueOffset], p)


class LoadBiasL1WithPointWiseTools:
    """bias GM -> L1, one value per 32-byte row (K0_BIAS fp32 columns, the rest zero)."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.currentNL0_ = 0

    def SetN(self, n: int) -> None:
        self.currentNL0_ = n

    def LoadChannelWiseL1(self, tensorL1, tensorGm) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        if c.biasFullLoadFlag:
            tensorGmOffset, self.currentNL0_ = 0, c.singleCoreCo
        else:
            tensorGmOffset = c.nBL1Iter * t.nBL1 + c.nBL0Iter * t.nL0
        _zero_fill(tensorL1, AlignB(self.currentNL0_, BLOCK_L0_M))  # one 32-byte row per cout
        DataCopy(tensorL1, tensorGm[tensorGmOffset], _nd2nz(self.currentNL0_, 1, 1, 1))


class LoadBiasL0WithBroadcastTools:
    """The bias rows -> L0A as a couts x 8 A operand, 1.0 -> L0B as an 8 x pixels B operand."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.tilingNBL1_ = conv.conv3dTiling.nBL1

    def SetMN(self, m: int, n: int) -> None:
        self.currentML0_, self.currentNL0_ = m, n

    def LoadBiasL0WithBroadcast(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        offset = 0
        if t.biasFullLoadFlag:
            offset = c.nBL1Iter * self.tilingNBL1_ * K0_BIAS + c.nBL0Iter * t.nL0 * K0_BIAS
        LoadData(c.al0BiasB, c.biasL1[offset], LoadData2DParams(repeatTimes=self.currentML0_ // BLOCK_L0_M,
                                                                srcStride=1))
        InitConstValue(c.bl0BiasB, InitConstValueParams(repeatTimes=1, blockNum=self.currentNL0_ // BLOCK_L0_N,
                                                        dstGap=0, initValue=1))


class MMadWithPointWiseTools:
    """Mmad(cl0, weight in L0A, x in L0B): m = couts, n = pixels; k of the last step aligned to 16 (the fp32
    LoadDataWithTranspose moves 16-deep squares)."""

    def SetParams(self, conv) -> None:
        self.self_ = conv
        self.alignKL0Tail = AlignB(conv.kL0Tail, DATA_COPY_OP_LEN)

    def SetMN(self, m: int, n: int) -> None:
        self.currentML0_, self.currentNL0_ = m, n

    def MadBias(self) -> None:
        c = self.self_
        p = MmadParams(m=self.currentML0_, n=self.currentNL0_, k=K0_BIAS)
        p.cmatrixInitVal, p.cmatrixSource, p.isBias = True, False, False
        Mmad(c.cl0, c.al0BiasB, c.bl0BiasB, p)

    def Mad(self, isFirst: bool, isLast: bool) -> None:
        c = self.self_
        p = MmadParams(m=self.currentML0_, n=self.currentNL0_,
                       k=c.conv3dTiling.kL0 if c.kIter != c.maxKL0Iter else self.alignKL0Tail)
        p.cmatrixInitVal = False if c.enableBias else c.kIter == 0
        p.cmatrixSource, p.isBias = False, False
        Mmad(c.cl0, c.bl0, c.al0, p)


class CopyOutWithPointWiseTools(CopyOutTools):
    """L0C (couts x pixels, NZ) -> y NCDHW by Fixpipe NZ2ND: mSize couts, nSize pixels, row pitch Do*Ho*Wo.
    SetParams and SetMN are CopyOutTools' own."""

    def SetFixpipeIntriParams(self) -> FixpipeParamsV220:
        c, t = self.self_, self.self_.conv3dTiling
        p = FixpipeParamsV220()
        if c.nBL1Iter == c.maxNBL1Iter and c.nBL0Iter == c.maxNL0Iter:
            p.mSize = c.singleCoreCo - c.nBL1Iter * t.nBL1 - c.nBL0Iter * t.nL0
            p.srcStride = AlignB(c.nL0Tail, BLOCK_L0_M)
        else:
            p.mSize = p.srcStride = t.nL0
        if c.mAL1Iter == c.maxMAL1Iter and c.mAL0Iter == c.maxML0Iter:
            p.nSize = c.singleCoreM - c.mAL1Iter * t.mAL1 - c.mAL0Iter * t.mL0
        else:
            p.nSize = t.mL0
        p.dstStride = self.valueHoWo_ * c.orgDo
        p.quantPre = GetQuantPre(c.OutputT)
        p.reluEn = False
        return p

    def CopyOut(self, output) -> None:
        Fixpipe(output[self.CalcFixpipeOffset()], self.self_.cl0, self.SetFixpipeIntriParams(), CFG_ROW_MAJOR)

    def CalcFixpipeOffset(self) -> int:
        c, t = self.self_, self.self_.conv3dTiling
        offsetM = self.tilingMAL1_ * c.mAL1Iter + t.mL0 * c.mAL0Iter
        offsetCout = self.tilingNBL1_ * c.nBL1Iter + t.nL0 * c.nBL0Iter
        return offsetCout * c.orgDo * self.valueHoWo_ + c.dOutIter * self.valueHoWo_ + offsetM  # one depth per call
