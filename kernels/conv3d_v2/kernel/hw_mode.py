"""HW mode (OutputOrder HW_Mode): the tools of the ops-nn API copy for it (impl/conv3d_mte2_hw_mode_sub_api.h,
conv3d_mte1_hw_mode_sub_api.h, conv3d_hw_mode_sub_api.h). The host picks HW mode when M mode's smallest L1 load
(whole output rows' input rows) does not fit L1.

An M block is part of ONE output row: mAL1 output columns of row hoL1Iter. The L1 window is then kH (dilated) input
rows by the columns those outputs read, [cin1LoadL1][hiLoadL1][wiLoadL1][C0], with the W and H pads moved into the
fmatrix; LoadData 3Dv2 starts at column mAL0Iter * mL0 of that window. The weight goes GM -> L1 by DataCopy only.
"""
from __future__ import annotations

from ascend_sim.ascendc import FMATRIX_LEFT, DataCopy, InitConstValue, InitConstValueParams, SetFmatrix
from kernels.conv3d_v2.kernel.load_a import LoadAL0Tools, LoadAL1Tools
from kernels.conv3d_v2.kernel.load_b import LoadBL1Tools
from kernels.conv3d_v2.kernel.store_c import CopyOutTools
from kernels.conv3d_v2.kernel.util import MAX_UINT16, CeilDIV


class LoadAL1WithHwModeTools(LoadAL1Tools):
    def LoadAL1(self) -> None:
        self.PreProcess()
        self.ProcessWoutMiddleData()
        self.ProcessHoutMiddleData()
        self.ProcessDoutMiddleData()
        if self.aL1IsFullPad:
            return
        self.SetFmatrixForLoad3D()
        self.CopyDataGMToL1()

    def SetFmatrixForLoad3D(self) -> None:
        SetFmatrix(self.hiLoadL1, self.wiLoadL1, (self.padLeftL1, self.padRightL1, self.padTopL1, self.padBottomL1),
                   FMATRIX_LEFT)

    def CopyDataGMToL1(self) -> None:
        """One DataCopy of hiLoadL1 row pieces per cin1 plane; after a kd slice's cin1 planes, dilationD planes on."""
        c = self.self_
        self.CalcAL1GmOffset()
        srcStrideBeyondMaxU16 = c.orgWi - self.wiLoadL1 > MAX_UINT16
        aL1Offset = self.Set2DForDinPadHead(0)
        plane = c.orgHi * c.orgWi * c.cin0
        for i in range(self.cin1LoadL1):
            if srcStrideBeyondMaxU16:  # one row piece at a time
                self.SetDataCopyParams(1)
                gm, l1 = self.aL1GmOffset, aL1Offset
                for _ in range(self.hiLoadL1):
                    DataCopy(c.al1[l1], c.agm[gm], self.dataCopyParams)
                    l1 += self.wiLoadL1 * c.cin0
                    gm += c.orgWi * c.cin0
            else:
                self.SetDataCopyParams(self.hiLoadL1)
                DataCopy(c.al1[aL1Offset], c.agm[self.aL1GmOffset], self.dataCopyParams)
            aL1Offset += self.hiLoadL1 * self.wiLoadL1 * c.cin0
            if (i + 1) % c.cin1 == 0:
                self.aL1GmOffset += ((c.dilationD - 1) * c.cin1 + 1) * plane
            else:
                self.aL1GmOffset += plane
        self.Set2DForDinPadTail(aL1Offset)

    def Set2DForDinPadHead(self, aL1Offset: int) -> int:
        if self.set2dFlagDHead:
            c = self.self_
            InitConstValue(c.al1, InitConstValueParams(self.cin1LoadL1PadHead // c.cin1,
                                                       c.cin1 * self.hiLoadL1 * self.wiLoadL1, 0, 0))
            aL1Offset += self.cin1LoadL1PadHead * self.hiLoadL1 * self.wiLoadL1 * c.cin0
            self.set2dFlagDHead = False
        return aL1Offset

    def Set2DForDinPadTail(self, aL1Offset: int) -> None:
        if self.set2dFlagDTail:
            c = self.self_
            InitConstValue(c.al1[aL1Offset], InitConstValueParams(self.cin1LoadL1PadTail // c.cin1,
                                                                  c.cin1 * self.hiLoadL1 * self.wiLoadL1, 0, 0))
            self.set2dFlagDTail = False

    def CalcAL1GmOffset(self) -> None:
        c = self.self_
        self.aL1GmOffset = ((self.diIdx * c.cin1 + self.cin1L1Idx) * c.orgHi * c.orgWi * c.cin0
                            + self.hiIdx * c.orgWi * c.cin0 + self.wiIdx * c.cin0)

    def SetDataCopyParams(self, blockCount: int) -> None:
        p = self.dataCopyParams
        p.blockCount, p.blockLen = blockCount, self.wiLoadL1
        p.srcStride, p.dstStride = self.self_.orgWi - self.wiLoadL1, 0

    def PreProcess(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.hoStartIdx = c.hoL1Iter
        self.hiLoadL1 = c.dilatedKernelH
        self.woStartIdx = c.mAL1Iter * t.mAL1
        woLoadL1 = c.mAL1Tail if c.mAL1Iter == c.maxMAL1Iter else t.mAL1
        self.wiLoadL1 = (woLoadL1 - 1) * c.strideW + c.dilatedKernelW
        cin1LoadL1 = t.kAL1 // c.kernelH // c.kernelW // c.cin0
        currentCin1LoadL1 = c.kAL1Iter * cin1LoadL1
        kAL1Tmp = t.kAL1Tail if c.kAL1Iter == c.maxKAL1Iter else t.kAL1
        self.loadData3Dv2Params.channelSize = kAL1Tmp // c.kernelHxkernelW
        self.cin1LoadL1 = kAL1Tmp // c.kernelH // c.kernelW // c.cin0
        self.kdL1Idx = (currentCin1LoadL1 // c.cin1) % c.kernelD
        self.cin1L1Idx = currentCin1LoadL1 % c.cin1
        self.padLeftL1 = self.padRightL1 = self.padTopL1 = self.padBottomL1 = 0
        self.aL1IsFullPad = self.set2dFlagDHead = self.set2dFlagDTail = False

    def ProcessWoutPad(self) -> bool:
        c = self.self_
        wiStartIdxWithPad = self.woStartIdx * c.strideW
        wiEndIdxWithPad = wiStartIdxWithPad + self.wiLoadL1
        self.wiIdx = wiStartIdxWithPad - c.padLeft
        if wiEndIdxWithPad <= c.padLeft:
            self.aL1IsFullPad = True
            return True
        if wiStartIdxWithPad < c.padLeft:
            self.wiIdx = 0
            self.wiLoadL1 = self.wiLoadL1 + wiStartIdxWithPad - c.padLeft
            self.padLeftL1 = c.padLeft - wiStartIdxWithPad
            if wiEndIdxWithPad >= c.orgWi + c.padLeft:
                self.wiLoadL1 = c.orgWi
                self.padRightL1 = wiEndIdxWithPad - (c.orgWi + c.padLeft)
            return True
        if wiStartIdxWithPad >= c.orgWi + c.padLeft:
            self.aL1IsFullPad = True
            return True
        if wiEndIdxWithPad > c.orgWi + c.padLeft:
            self.wiLoadL1 = c.orgWi + c.padLeft - wiStartIdxWithPad
            self.padRightL1 = wiEndIdxWithPad - (c.orgWi + c.padLeft)
            return True
        return False

    def ProcessWoutMiddleData(self) -> None:
        if self.ProcessWoutPad():
            return
        self.wiIdx = self.woStartIdx * self.self_.strideW - self.self_.padLeft

    def _hi_idx(self, hiStartIdxWithPad: int) -> int:
        c = self.self_
        return hiStartIdxWithPad - c.padUp if c.hiStartPos <= c.padUp else hiStartIdxWithPad - c.hiStartPos

    def ProcessHoutPad(self) -> bool:
        c = self.self_
        hiStartIdxWithPad = c.hiStartPos + self.hoStartIdx * c.strideH
        hiEndIdxWithPad = hiStartIdxWithPad + self.hiLoadL1
        self.hiIdx = self._hi_idx(hiStartIdxWithPad)
        if hiEndIdxWithPad <= c.padUp:
            self.aL1IsFullPad = True
            return True
        if hiStartIdxWithPad < c.padUp:
            self.hiIdx = 0
            self.hiLoadL1 = self.hiLoadL1 + hiStartIdxWithPad - c.padUp
            self.padTopL1 = c.padUp - hiStartIdxWithPad
            if hiEndIdxWithPad >= c.orgHi + c.padUp:
                self.hiLoadL1 = c.orgHi
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

    def ProcessHoutMiddleData(self) -> None:
        if self.ProcessHoutPad():
            return
        c = self.self_
        self.hiIdx = self._hi_idx(c.hiStartPos + self.hoStartIdx * c.strideH)


class LoadAL0WithHwModeTools(LoadAL0Tools):
    def SetLoadData3DParamsV2(self, p) -> None:
        c = self.self_
        p.kExtension = self.currentKL0_
        p.kStartPt = c.kAL0Iter * c.singleCoreKL0
        p.mExtension = self.currentML0_
        p.mStartPt = c.mAL0Iter * c.conv3dTiling.mL0  # the window starts at this M block's first column


class LoadBL1WithHwModeTools(LoadBL1Tools):
    def LoadBL1(self) -> None:
        c, t = self.self_, self.self_.conv3dTiling
        self.PreProcess()
        p = self.dataCopyParams
        if t.nBL1 >= c.orgCo:
            p.blockCount, p.srcStride = 1, 0
            p.blockLen = CeilDIV(self.currentKBL1 * t.nBL1, c.cin0)
        else:
            p.blockCount, p.blockLen = self.currentKBL1 // c.cin0, self.currentNBL1
            p.srcStride = c.orgCoAlignN0 - self.currentNBL1
        DataCopy(c.bl1, c.bgm[self.bL1GmOffset], p)


class CopyOutWithHwModeTools(CopyOutTools):
    def CalcFixpipeOffset(self) -> int:
        c, t = self.self_, self.self_.conv3dTiling
        offsetCout = self.tilingNBL1_ * c.nBL1Iter + t.nL0 * c.nBL0Iter
        offsetM = self.tilingMAL1_ * c.mAL1Iter + t.mL0 * c.mAL0Iter
        return (c.dOutIter * c.orgCoAlignK0 * self.valueHoWo_ + offsetCout * self.valueHoWo_
                + c.hoL1Iter * c.orgWo * c.cin0 + offsetM * c.cin0)
