"""The kernel-split block driver Conv3dDxKsBlock (conv3d_backprop_input_v2/conv3d_dx_kernel_split_block.h), for
kernelSplitMode TPL_SPLIT_KERNEL_H and TPL_SPLIT_KERNEL_HW.

The work is strideH sub-kernels x batch x dinCnt x mCnt x nCnt basic blocks; M is the rows of one sub-kernel's
output, DivCeil(hi, strideH) * wi (kSM_), and a sub-kernel whose rows are one fewer (kernelIdx >= kSTailIdx when hi
is not a multiple of strideH) has fewer M blocks (kSTailM_), so its surplus blocks are skipped. Per block: the
sub-kernel's rows (splitHk, CalcSubKernelBackPadUp's top pad) go to the API by SetSingleShapeParams, the weight
offset moves kSCoreIdx kernel rows (kernelSplitStrideB_), y moves kernelIdx dx rows and dy the block's first dy row
(CalcBlockKSOffset). Under TPL_SPLIT_KERNEL_H the vector cores return at once (only the vecTrans pre-pass, run by
the entry, uses them); the AIC waits for that pre-pass once before its first block.

Under TPL_SPLIT_KERNEL_HW the blocks are the plain driver's (CalBasicBlockCore), over M = DivCeil(hi, strideH) *
DivCeil(wi, strideW) pixels of a sub-kernel: the API runs the four sub-kernels of every tile itself
(kernel_split_hw.py). Both vector cores run the driver; sub-block 0 re-interleaves the AIC's results, which wait in
its UB or (kSUseWorkSpace) in the workspace after the vecTrans weight (l0cOutWorkspace_), into y. y moves whole dx rows:
mCoreIdx * (singleCoreM / splitWi) * strideH rows of wi.
"""
from __future__ import annotations

from ascend_sim.ascendc import ASCEND_IS_AIC, ASCEND_IS_AIV, GetBlockNum, GlobalTensor
from kernels.conv3d_backprop_input.kernel.arch35.api import Conv3DBackpropInput
from kernels.conv3d_backprop_input.kernel.arch35.rowc_block import (LOOP_DMN, LOOP_DNM, LOOP_MDN, Conv3dDxOswBlock,
                                                                    GetAicBlockIdx)
from kernels.conv3d_backprop_input.kernel.arch35.util import (FORMAT_NCDHW, FORMAT_NDHWC, TPL_SPLIT_KERNEL_H,
                                                              TPL_SPLIT_KERNEL_HW, AlignUp16, DivCeil)


class Conv3dDxKsBlock(Conv3dDxOswBlock):
    def __init__(self, dtype, filterFormat: str, dedyFormat: str, yFormat: str, b2Condition: int,
                 kernelSplitMode: int):
        super().__init__(dtype, filterFormat, dedyFormat, yFormat, b2Condition)
        self.kernelSplitMode = kernelSplitMode
        self.dedx_ = Conv3DBackpropInput(dtype, b2Condition, yFormat, filterFormat, kernelSplitMode)
        self.kSCoreIdx_ = 0
        self.kernelSplitStrideB_ = 0
        self.kSTailMCnt_ = self.kSM_ = self.kSTailM_ = 0

    def Init(self, filter, dedy, y, workSpace, tilingData) -> None:
        hw = self.kernelSplitMode == TPL_SPLIT_KERNEL_HW
        if ASCEND_IS_AIV() and not hw:
            return  # ASCEND_IS_AIV_SHOULD_RETURN for every mode but HW
        self.InitTilingData(tilingData)
        if self.enableVecTrans_:
            self.filterGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(workSpace)
            t = self.tiling_
            workSpace = workSpace + t.coutG * t.dk * t.hk * t.wk * AlignUp16(t.cinG) * self.dtype.itemsize
        else:
            self.filterGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(filter)
        self.dedyGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(dedy)
        self.yGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(y)
        self.dedx_.Init(tilingData)
        if hw and self.kSUseWorkSpace_:  # InitMixCoreBuffer
            self.dedx_.l0cOutWorkspace_ = GlobalTensor(self.dtype).SetGlobalBuffer(workSpace)

    def Process(self) -> None:
        if ASCEND_IS_AIV() and self.kernelSplitMode != TPL_SPLIT_KERNEL_HW:
            return
        if GetAicBlockIdx() >= self.usedCoreNum_:
            self.CrossCoreWaitVecTrans()  # ProcessForUnUsedCore
            self.dedx_.End()
            return
        self.CalBasicBlock()
        self.dedx_.End()

    def InitTilingData(self, tilingData) -> None:
        t = self.tiling_ = tilingData
        self.kSUseWorkSpace_ = t.kSUseWorkSpace
        self.dedx_.SetKernelSplitParams(t.kSCoutFullLoad, self.kSUseWorkSpace_)
        self.singleShapeM_ = t.singleCoreM
        self.singleShapeK_ = t.coutG * t.hk * t.wk
        self.singleShapeN_ = t.singleCoreCin
        self.singleShapeDin_ = t.singleCoreDin
        self.enableVecTrans_ = bool(t.enableVecTrans)
        self.preOffsetB_ = self.preEnableFullLoad = 0  # CheckFullLoadEnable's (the HW split runs the plain loop)
        self.CalBasicBlockCnt()
        self.InitBasicBlockLoopDirect()
        self.InitBlockStride()

    def CalBasicBlockCnt(self) -> None:
        t = self.tiling_
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:  # the API walks the sub-kernels of a block itself
            kSCnt = 1
            self.kSM_ = DivCeil(t.hi, t.strideH) * DivCeil(t.wi, t.strideW)
        else:
            kSCnt = t.strideH
            self.kSM_ = DivCeil(t.hi, t.strideH) * t.wi
        self.mCnt_ = DivCeil(self.kSM_, self.singleShapeM_)
        self.mCoreTail_ = self.kSM_ - (self.mCnt_ - 1) * self.singleShapeM_
        self.nCnt_ = DivCeil(t.cinG, self.singleShapeN_)
        self.nCoreTail_ = t.cinG - (self.nCnt_ - 1) * self.singleShapeN_
        if self.singleShapeDin_ > 1:
            self.dinCnt_ = DivCeil(t.di, self.singleShapeDin_)
            self.dinCoreTail_ = t.di - (self.dinCnt_ - 1) * self.singleShapeDin_
        else:
            self.dinCnt_, self.dinCoreTail_ = t.di, 1
        self.totalCnt_ = kSCnt * t.batch * t.group * self.dinCnt_ * self.mCnt_ * self.nCnt_
        self.usedCoreNum_ = min(self.totalCnt_, GetBlockNum())
        self.calRound_ = self.totalCnt_ // self.usedCoreNum_
        self.tailCnt_ = self.totalCnt_ - self.calRound_ * self.usedCoreNum_

    def InitBasicBlockLoopDirect(self) -> None:
        t = self.tiling_
        if t.dk > 1:
            self.loopDirect_ = LOOP_MDN
        elif t.hk // t.strideH > 1 or self.mCnt_ > self.nCnt_:
            self.loopDirect_ = LOOP_DMN
        else:
            self.loopDirect_ = LOOP_DNM

    def CalBasicBlockIdx(self, basicBlockIdx: int) -> None:
        t = self.tiling_
        mnCnt = self.mCnt_ * self.nCnt_
        depthMNCnt = self.dinCnt_ * mnCnt
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            self.kSCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, t.batch * depthMNCnt)
        self.batchCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, depthMNCnt)
        self.dCoreIdx_ = 0
        if self.loopDirect_ == LOOP_MDN:
            self.mCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, self.dinCnt_ * self.nCnt_)
            if self.dinCnt_ > 1:
                self.dCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, self.nCnt_)
            self.nCoreIdx_ = basicBlockIdx
        else:
            if self.dinCnt_ > 1:
                self.dCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, mnCnt)
            if self.loopDirect_ == LOOP_DMN:
                self.mCoreIdx_, self.nCoreIdx_ = divmod(basicBlockIdx, self.nCnt_)
            else:  # LOOP_DNM
                self.nCoreIdx_, self.mCoreIdx_ = divmod(basicBlockIdx, self.mCnt_)
        self.groupCoreIdx_ = 0

    @staticmethod
    def CalcSubKernelBackPadUp(kernelSize: int, stride: int, backPad: int, idx: int) -> int:
        """The top backprop pad of sub-kernel idx: its largest (subKernelSize - 1) less the dy rows the full
        kernel's pad skips before the sub-kernel's first tap."""
        subKernelSize = (kernelSize + stride - idx - 1) // stride
        curIdx = kernelSize - idx - backPad - 1
        missPointNum = (curIdx - 1) // stride + 1 if curIdx > 0 else 0
        return subKernelSize - 1 - missPointNum

    def InitKernelSplitStrideB(self) -> None:
        t = self.tiling_
        if self.enableVecTrans_:
            self.kernelSplitStrideB_ = t.wk * AlignUp16(t.cin)
        elif self.filterFormat == FORMAT_NDHWC:
            self.kernelSplitStrideB_ = t.wk * t.cin
        else:
            self.kernelSplitStrideB_ = t.wk

    def CalcBlockOffset(self, batchIdx: int, groupIdx: int) -> None:
        """CalcBlockOffsetA/B/C of TPL_SPLIT_KERNEL_H: no M offset on dy (CalcBlockKSOffset adds it), the block's
        output rows strideH dx rows apart."""
        t = self.tiling_
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            self.CalcBlockOffsetForKernelSplitHW(batchIdx)
            return
        self.offsetA_ = self.batchStrideA_ * batchIdx + self.coutStrideA_ * self.kCoreIdx_ * t.singleCoreCout
        self.offsetB_ = self.cinStrideB_ * self.nCoreIdx_ * t.singleCoreCin
        mOffsetC = self.mCoreIdx_ * t.singleCoreM
        mOffsetC += (mOffsetC // t.wi) * t.wi * (t.strideH - 1)  # singleCoreM need not be whole rows
        if self.yFormat == FORMAT_NDHWC:
            mOffsetC *= t.cin
        self.offsetC_ = self.batchStrideC_ * batchIdx + self.cinStrideC_ * self.nCoreIdx_ * t.singleCoreCin + mOffsetC

    def CalcBlockOffsetForKernelSplitHW(self, batchIdx: int) -> None:
        """CalcBlockOffsetA/B/C of TPL_SPLIT_KERNEL_HW (NCDHW dy and y, groups 1): dy from the block's first dense
        row, y from its first dx row (singleCoreM is whole sub-kernel rows)."""
        t = self.tiling_
        alignedHoStartIdx = max(self.curHoStartIdx_, 0)
        self.offsetA_ = (self.batchStrideA_ * batchIdx + self.coutStrideA_ * self.kCoreIdx_ * t.singleCoreCout
                         + alignedHoStartIdx * t.wo)
        self.offsetB_ = self.cinStrideB_ * self.nCoreIdx_ * t.singleCoreCin
        curSingleHi = t.singleCoreM // DivCeil(t.wi, t.strideW)
        mOffsetC = self.mCoreIdx_ * curSingleHi * t.strideH * t.wi
        self.offsetC_ = self.batchStrideC_ * batchIdx + self.cinStrideC_ * self.nCoreIdx_ * t.singleCoreCin + mOffsetC

    def CalcBlockKSOffset(self, kernelIdx: int) -> None:
        t = self.tiling_
        alignedHoStartIdx = max(self.curHoStartIdx_, 0)
        self.offsetB_ += self.kSCoreIdx_ * self.kernelSplitStrideB_
        if self.yFormat == FORMAT_NCDHW:
            self.offsetC_ += kernelIdx * t.wi
            self.offsetA_ += alignedHoStartIdx * t.wo
        else:
            self.offsetC_ += kernelIdx * t.wi * t.cin
            self.offsetA_ += alignedHoStartIdx * t.wo * t.cout

    def ReCalcMInfo(self, kSTailIdx: int, kernelIdx: int) -> None:
        if kSTailIdx != 0 and kernelIdx >= kSTailIdx:
            self.kSTailMCnt_ = DivCeil(self.kSTailM_, self.singleShapeM_)
            self.mCoreTail_ = self.kSTailM_ - (self.kSTailMCnt_ - 1) * self.singleShapeM_
        else:
            self.mCoreTail_ = self.kSM_ - (self.mCnt_ - 1) * self.singleShapeM_

    def SetIterateParams(self, mCoreUse: int, splitBaseHk: int, baseHkIter: int, splitTailHk: int,
                         kernelIdx: int) -> None:
        t, api = self.tiling_, self.dedx_
        nCoreUse = self.nCoreTail_ if self.nCoreIdx_ == self.nCnt_ - 1 else self.singleShapeN_
        dinCoreUse = self.dinCoreTail_ if self.dCoreIdx_ == self.dinCnt_ - 1 else self.singleShapeDin_
        curSplitHk = splitBaseHk if self.kSCoreIdx_ < baseHkIter else splitTailHk
        curBackpropPadUp = self.CalcSubKernelBackPadUp(t.hk, t.strideH, t.backpropPadUp, self.kSCoreIdx_)
        api.SetSingleShapeParams(curSplitHk, curBackpropPadUp)
        api.SetSingleShape(mCoreUse, self.singleShapeK_, nCoreUse, dinCoreUse)
        api.SetStartIdx(self.dCoreIdx_ * self.singleShapeDin_, self.mCoreIdx_ * t.singleCoreM,
                        self.nCoreIdx_ * t.singleCoreCin, 0)
        self.curHoStartIdx_ = api.curHoStartIdx_  # CalBasicBlockOffset
        self.CalcBlockOffset(self.batchCoreIdx_, self.groupCoreIdx_)
        self.CalcBlockKSOffset(kernelIdx)
        api.SetOutBackprop(self.dedyGm_[self.offsetA_])
        api.SetWeight(self.filterGm_[self.offsetB_])

    def CalBasicBlockCoreForSplitH(self, blockIdx: int, blockNum: int) -> None:
        t = self.tiling_
        splitBaseHk = DivCeil(t.hk, t.strideH)
        splitTailHk = t.hk // t.strideH
        baseHkIter = t.strideH if splitTailHk == splitBaseHk else t.hk - splitTailHk * t.strideH
        kernelStartIdx = t.padUp % t.strideH
        kernelStartIdx = 0 if kernelStartIdx == 0 else t.strideH - kernelStartIdx
        kSTailIdx = t.hi - (t.hi // t.strideH) * t.strideH
        self.kSTailM_ = (t.hi // t.strideH) * t.wi
        self.CrossCoreWaitVecTrans()
        for j in range(self.calRound_):
            self.CalBasicBlockIdx(j * blockNum + blockIdx)
            kernelIdx = (self.kSCoreIdx_ + kernelStartIdx) % t.strideH  # the first dx row of this sub-kernel
            self.ReCalcMInfo(kSTailIdx, kernelIdx)
            if kSTailIdx != 0 and kernelIdx >= kSTailIdx:
                if self.mCoreIdx_ >= self.kSTailMCnt_:
                    continue  # this sub-kernel has fewer output rows: fewer M blocks
                mCoreUse = self.mCoreTail_ if self.mCoreIdx_ == self.kSTailMCnt_ - 1 else self.singleShapeM_
            else:
                mCoreUse = self.mCoreTail_ if self.mCoreIdx_ == self.mCnt_ - 1 else self.singleShapeM_
            self.SetIterateParams(mCoreUse, splitBaseHk, baseHkIter, splitTailHk, kernelIdx)
            self.dedx_.IterateAll(self.yGm_[self.offsetC_], 0)

    def CalBasicBlock(self) -> None:
        blockIdx = GetAicBlockIdx()
        if blockIdx < self.tailCnt_:
            self.calRound_ += 1  # the tail blocks go to the first cores, one more round each
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            self.InitKernelSplitStrideB()
            self.CalBasicBlockCoreForSplitH(blockIdx, self.usedCoreNum_)
        else:
            self.CalBasicBlockCore(blockIdx, self.usedCoreNum_)
            if ASCEND_IS_AIC():
                self.dedx_.FreeB1Tensor()  # a weight held whole with dk == 1 is released after the last block
