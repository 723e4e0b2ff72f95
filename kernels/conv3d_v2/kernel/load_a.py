"""The A operand (the feature map x, NDC1HWC0): GM -> L1 window, then img2col into L0A by LoadData 3Dv2.

LoadAL1Tools (conv3d_mte2_sub_api.h): for the current M block (output rows [hoStartIdx, hoEndIdx)) and K block
(kd slice(s) x cin1 range), copy the input rows the kernel window touches into L1 as [cin1LoadL1][hiLoadL1][Wi][C0].
Rows above/below the input become the fmatrix's top/bottom pads; depth planes outside the input are zero-filled
in L1 (Set2DForDinPadHead/Tail); a block that is all padding loads nothing and L0A is zero-filled instead
(aL1IsFullPad -> LoadAL0Tools.SetAl02d). The K order in L1 is (kd, cin1, kh, kw, c0), the FRACTAL_Z_3D order.

LoadAL0Tools (conv3d_mte1_sub_api.h): one LoadData 3Dv2 per L0 block, reading the LEFT fmatrix SetFmatrix set.
"""
from __future__ import annotations

from ascend_sim.ascendc import (FMATRIX_LEFT, DataCopy, DataCopyParams, InitConstValue, InitConstValueParams, LoadData,
                                LoadData3DParamsV2, SetFmatrix)
from kernels.conv3d_v2.kernel.util import BLOCK_SIZE, MAX_UINT16, AlignB, CeilDIV


class LoadAL1Tools:
    def __init__(self):
        self.loadData3Dv2Params = LoadData3DParamsV2()
        self.dataCopyParams = DataCopyParams()
        self.aL1IsFullPad = False

    def SetParams(self, conv) -> None:
        self.self_ = conv

    def GetLoadData3DParams(self) -> LoadData3DParamsV2:
        return self.loadData3Dv2Params

    def GetSet2dFlag(self) -> bool:
        return self.aL1IsFullPad

    def SetLoadData3DParams(self) -> None:
        """The img2col fields that do not change between L1 loads."""
        c, p = self.self_, self.loadData3Dv2Params
        p.strideW, p.strideH = c.strideW, c.strideH
        p.filterW, p.filterSizeW = c.kernelW & 255, bool(c.kernelW >> 8)
        p.filterH, p.filterSizeH = c.kernelH & 255, bool(c.kernelH >> 8)
        p.dilationFilterW, p.dilationFilterH = c.dilationW, c.dilationH

    def LoadAL1(self) -> None:
        self.PreProcess()
        self.ProcessMMiddleData()
        self.ProcessDoutMiddleData()
        if self.aL1IsFullPad:
            return  # nothing to copy: LoadAL0 zero-fills L0A instead
        self.SetFmatrixForLoad3D()
        self.CopyDataGMToL1()

    # ------------------------------------------------------------------------------------------- GM -> L1
    def SetFmatrixForLoad3D(self) -> None:
        c = self.self_
        SetFmatrix(self.hiLoadL1, c.orgWi, (c.padLeft, c.padRight, self.padTopL1, self.padBottomL1), FMATRIX_LEFT)

    def CopyDataGMToL1(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.CalcAL1GmOffset()
        dataCopyLoop = CeilDIV(self.cin1LoadL1, c.cin1)
        dataCopySubLoop = 0
        blockCount = c.cin1
        srcStrideBeyondMaxU16 = False
        if t.orgHixWi - self.hiLoadL1 * c.orgWi > MAX_UINT16:  # the plane gap does not fit srcStride
            dataCopySubLoop = self.cin1LoadL1 // dataCopyLoop if dataCopyLoop > 0 else 0
            blockCount = 1
            srcStrideBeyondMaxU16 = True
        aL1Offset = 0
        if self.cin1LoadL1 > c.cin1 or srcStrideBeyondMaxU16:  # several kd slices (or one plane at a time)
            aL1Offset = self.Set2DForDinPadHead(aL1Offset)
            self.SetDataCopyParams(blockCount)
            aL1Offset = self.DataCopyWithLoop(aL1Offset, dataCopyLoop, dataCopySubLoop, srcStrideBeyondMaxU16)
            self.Set2DForDinPadTail(aL1Offset)
        else:
            aL1Offset = self.Set2DForDinPadHead(aL1Offset)
            self.SetDataCopyParams(self.cin1LoadL1)
            DataCopy(c.al1[aL1Offset], c.agm[self.aL1GmOffset], self.dataCopyParams)
            aL1Offset += self.cin1LoadL1 * self.hiLoadL1 * t.oriWixk0
            self.Set2DForDinPadTail(aL1Offset)

    def DataCopyWithLoop(self, aL1Offset, dataCopyLoop, dataCopySubLoop, srcStrideBeyondMaxU16) -> int:
        c, t = self.self_, self.self_.conv3dTiling
        for _ in range(dataCopyLoop):
            if srcStrideBeyondMaxU16:
                gm, l1 = self.aL1GmOffset, aL1Offset
                for _ in range(dataCopySubLoop):
                    DataCopy(c.al1[l1], c.agm[gm], self.dataCopyParams)
                    gm += t.oriHixOriWixk0
                    l1 += self.hiLoadL1 * t.oriWixk0
            else:
                DataCopy(c.al1[aL1Offset], c.agm[self.aL1GmOffset], self.dataCopyParams)
            # the next kd slice: one whole input plane on (all of x's channels when grouped)
            cin1Plane = CeilDIV(t.orgCi, c.cin0) if c.groupConvType else c.cin1
            self.aL1GmOffset += c.dilationD * cin1Plane * t.oriHixOriWixk0
            aL1Offset += c.cin1 * self.hiLoadL1 * t.oriWixk0
        return aL1Offset

    def Set2DForDinPadHead(self, aL1Offset: int) -> int:
        """Zero the kd slices that fall into the front depth pad."""
        if self.set2dFlagDHead:
            c, t = self.self_, self.self_.conv3dTiling
            InitConstValue(c.al1, self._init_params(self.cin1LoadL1PadHead // c.cin1,
                                                    c.cin1 * self.hiLoadL1 * c.orgWi))
            aL1Offset += self.cin1LoadL1PadHead * self.hiLoadL1 * t.oriWixk0
            self.set2dFlagDHead = False
        return aL1Offset

    def Set2DForDinPadTail(self, aL1Offset: int) -> None:
        """Zero the kd slices that fall into the back depth pad."""
        if self.set2dFlagDTail:
            c = self.self_
            InitConstValue(c.al1[aL1Offset], self._init_params(self.cin1LoadL1PadTail // c.cin1,
                                                               c.cin1 * self.hiLoadL1 * c.orgWi))
            self.set2dFlagDTail = False

    @staticmethod
    def _init_params(repeatTimes: int, blockNum: int) -> InitConstValueParams:
        return InitConstValueParams(repeatTimes=repeatTimes, blockNum=blockNum, dstGap=0, initValue=0)

    def CalcAL1GmOffset(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        if c.groupConvType:  # a plane holds every group's channels; this group-opt block starts groupOptIter on
            self.aL1GmOffset = (self.diIdx * AlignB(t.orgCi, c.cin0) * t.orgHixWi
                                + c.groupOptIter * t.cin1xOriHixOriWixk0)
        else:
            self.aL1GmOffset = self.diIdx * t.cin1xOriHixOriWixk0
        self.aL1GmOffset += self.cin1L1Idx * t.oriHixOriWixk0 + self.hiIdx * t.oriWixk0

    def SetDataCopyParams(self, blockCount: int) -> None:
        c = self.self_
        p = self.dataCopyParams
        p.blockCount = blockCount
        p.blockLen = self.hiLoadL1 * c.orgWi
        p.srcStride = c.conv3dTiling.orgHixWi - p.blockLen
        p.dstStride = 0

    # ------------------------------------------------------------------------------------------- indices
    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        isMTail = c.mAL1Iter == c.maxMAL1Iter
        currentML1 = c.mAL1Tail if isMTail else t.mAL1
        currentM = c.mStartPos + c.mAL1Iter * t.mAL1
        self.hoStartIdx = currentM // c.orgWo
        self.hoEndIdx = CeilDIV(currentM + currentML1, c.orgWo)
        self.hiLoadL1 = (self.hoEndIdx - self.hoStartIdx - 1) * c.strideH + c.dilatedKernelH
        tmpCurCoreHiStartIdx = (c.mStartPos // c.orgWo) * c.strideH
        self.curCoreHiStartIdx = 0 if tmpCurCoreHiStartIdx <= c.padUp else tmpCurCoreHiStartIdx - c.padUp
        currentCin1LoadL1 = c.kAL1Iter * t.cin1InAL1
        kAL1Tmp = t.kAL1Tail if c.kAL1Iter == c.maxKAL1Iter else t.kAL1
        if c.groupConvType:  # the K blocks may have been recomputed for a tail group-opt block
            cin1LoadL1 = c.groupKAL1 // c.kernelH // c.kernelW // c.cin0
            kAL1Tmp = c.groupKAL1Tail if c.kAL1Iter == c.maxKAL1Iter else c.groupKAL1
            currentCin1LoadL1 = c.kAL1Iter * cin1LoadL1
        self.loadData3Dv2Params.channelSize = kAL1Tmp // c.kernelHxkernelW
        self.cin1LoadL1 = kAL1Tmp // c.kernelH // c.kernelW // c.cin0
        self.kdL1Idx = (currentCin1LoadL1 // c.cin1) % c.kernelD
        self.cin1L1Idx = currentCin1LoadL1 % c.cin1
        self.padTopL1 = self.padBottomL1 = 0
        self.aL1IsFullPad = self.set2dFlagDHead = self.set2dFlagDTail = False

    def ProcessMPad(self) -> bool:
        """Rows of the window above or below the input: trim the load, move them into the fmatrix pads."""
        c = self.self_
        hiStartIdxWithPad = self.hoStartIdx * c.strideH
        hiEndIdxWithPad = hiStartIdxWithPad + self.hiLoadL1
        self.hiIdx = hiStartIdxWithPad - c.padUp - self.curCoreHiStartIdx
        if hiEndIdxWithPad <= c.padUp:
            self.aL1IsFullPad = True
            return True
        if hiStartIdxWithPad < c.padUp:
            self.hiIdx = 0
            self.hiLoadL1 = self.hiLoadL1 + hiStartIdxWithPad - c.padUp
            self.padTopL1 = c.padUp - hiStartIdxWithPad
            if hiEndIdxWithPad >= c.orgHi + c.padUp:
                self.hiLoadL1 = c.orgHi - self.hiIdx
                self.padBottomL1 = hiEndIdxWithPad - (c.orgHi + c.padUp)
            return True
        if hiStartIdxWithPad >= c.orgHi + c.padUp:
            self.aL1IsFullPad = True
            return True
        if hiEndIdxWithPad > c.orgHi + c.padUp:
            self.hiLoadL1 = c.orgHi + c.padUp - hiStartIdxWithPad
            self.padBottomL1 = hiEndIdxWithPad - (c.orgHi + c.padUp)
            return True
        return False

    def ProcessMMiddleData(self) -> None:
        if self.ProcessMPad():
            return
        c = self.self_
        self.hiIdx = self.hoStartIdx * c.strideH - c.padUp - self.curCoreHiStartIdx

    def _di_start_with_pad(self) -> int:
        c = self.self_
        return c.diStartPos + c.dOutIter * c.strideD + self.kdL1Idx * c.dilationD

    def _di_idx(self, diStartWithPad: int) -> int:
        """Input depth relative to the core's first loaded plane (the kernel offset x by max(di start, 0))."""
        c = self.self_
        return diStartWithPad - c.padHead if c.diStartPos <= c.padHead else diStartWithPad - c.diStartPos

    def ProcessDoutPad(self) -> bool:
        """kd slices in the front/back depth pad: zero-filled in L1, or the whole block is padding."""
        c = self.self_
        diStartWithPad = self._di_start_with_pad()
        diEndWithPad = (diStartWithPad + 1 if self.cin1LoadL1 <= c.cin1
                        else diStartWithPad + (self.cin1LoadL1 // c.cin1 - 1) * c.dilationD + 1)
        self.diIdx = self._di_idx(diStartWithPad)
        if diEndWithPad <= c.padHead:
            self.aL1IsFullPad = True
            return True
        if diStartWithPad < c.padHead:
            self.set2dFlagDHead = True
            kdTmp = CeilDIV(c.padHead - diStartWithPad, c.dilationD)
            self.cin1LoadL1PadHead = kdTmp * c.cin1
            self.diIdx = 0 if c.dilationD == 1 else kdTmp * c.dilationD - c.padHead + diStartWithPad
            self.cin1LoadL1 -= self.cin1LoadL1PadHead
            if diEndWithPad > c.orgDi + c.padHead:
                self.set2dFlagDTail = True
                kdTmp = CeilDIV(c.orgDi - self.diIdx, c.dilationD)
                self.cin1LoadL1PadTail = self.cin1LoadL1 - kdTmp * c.cin1
                self.cin1LoadL1 = kdTmp * c.cin1
            return True
        if diStartWithPad >= c.orgDi + c.padHead:
            self.aL1IsFullPad = True
            return True
        if diEndWithPad > c.orgDi + c.padHead:
            self.set2dFlagDTail = True
            kdTmp = CeilDIV(c.orgDi + c.padHead - diStartWithPad, c.dilationD)
            self.cin1LoadL1PadTail = self.cin1LoadL1 - kdTmp * c.cin1
            self.cin1LoadL1 = kdTmp * c.cin1
            return True
        return False

    def ProcessDoutMiddleData(self) -> None:
        if self.ProcessDoutPad():
            return
        self.diIdx = self._di_idx(self._di_start_with_pad())


class LoadAL0Tools:
    def SetParams(self, conv, aL1Tools: LoadAL1Tools) -> None:
        self.self_, self.aL1Tools_ = conv, aL1Tools

    def SetM(self, m: int) -> None:
        self.currentML0_ = m

    def LoadAL0(self) -> None:
        c = self.self_
        self.currentKL0_ = c.kL0Tail if c.kIter == c.maxKL0Iter else c.singleCoreKL0
        if self.aL1Tools_.GetSet2dFlag():
            self.SetAl02d()
            return
        p = self.aL1Tools_.GetLoadData3DParams()
        self.SetLoadData3DParamsV2(p)
        LoadData(c.al0, c.al1, p, isSetFMatrix=False)  # CONV3D_LOAD3DV2_DEFAULT_CONFIG: the fmatrix is set

    def SetAl02d(self) -> None:
        """The whole A block is padding: zero L0A."""
        c = self.self_
        blocks = self.currentML0_ * self.currentKL0_ * c.sizeOfInput // BLOCK_SIZE
        InitConstValue(c.al0, InitConstValueParams(1, blocks, 0, 0))

    def SetLoadData3DParamsV2(self, p: LoadData3DParamsV2) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        p.kExtension = self.currentKL0_
        p.kStartPt = c.kAL0Iter * c.singleCoreKL0
        p.mExtension = self.currentML0_
        if c.mL0IsDivisibleByWo:
            p.mStartPt = c.mAL0Iter * t.mL0 + c.mStartPos % c.orgWo
        else:
            p.mStartPt = c.mAL0Iter * t.mL0 + (c.mStartPos + c.mAL1Iter * t.mAL1) % c.orgWo
