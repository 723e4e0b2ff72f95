"""The basic-block driver Conv3dDxOswBlock and its base Conv3dDxBase (conv3d_dx_rowc_block.h, conv3d_dx_block_base.h).

The work is batch x group x dinCnt x mCnt x nCnt basic blocks (M = Hi*Wi by singleCoreM, N = cinG by singleCoreCin,
D = Di by singleCoreDin), dealt round-robin to usedCoreNum = min(total, blockNum) cores; the first tailCnt cores
run one extra round. The index of a block is decoded in the loop order InitBasicBlockLoopDirect picks: LOOP_MDN when
dk > 1, LOOP_DMN when hk > 1 or mCnt > nCnt, else LOOP_DNM. GM offsets are element offsets in the NCDHW / NDHWC /
DHWCN layouts (InitBlockStride, CalcBlockOffset*). The vector cores return at once, except with split-K through UB
(AIV sub-block 0 walks the blocks beside its AIC and casts each block's fp32 workspace into y; the other AIV
returns) and with group ENLARGE (both AIVs walk the blocks; sub-block 0 builds each merged group's block-diagonal
weight in the AIC's L1, group_transdata.py).
"""
from __future__ import annotations

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, CrossCoreWaitFlag, GetBlockNum, GetSubBlockIdx,
                                GlobalTensor)
from ascend_sim.machine.dtypes import float32
from kernels.conv3d_backprop_input.kernel.arch35.api import Conv3DBackpropInput
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, FORMAT_NCDHW, FORMAT_NDHWC,
                                                              SYNC_AIV_AIC_DET_FLAG, SYNC_MODE2, TPL_GM_TO_L1,
                                                              TPL_GROUP_MODE_ENLARGE, TPL_GROUP_MODE_ORIGIN,
                                                              TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK, AlignUp,
                                                              DivCeil, GetAicBlockIdx)

LOOP_DNM, LOOP_DMN, LOOP_MDN = 1, 2, 3


class Conv3dDxBase:
    def __init__(self, dtype, filterFormat: str, dedyFormat: str, yFormat: str, b2Condition: int,
                 b1Condition: int = TPL_GM_TO_L1, groupMode: int = TPL_GROUP_MODE_ORIGIN, enableC04Flag: bool = False):
        self.dtype = dtype
        self.enableC04Flag = enableC04Flag
        self.filterFormat, self.dedyFormat, self.yFormat = filterFormat, dedyFormat, yFormat
        self.b1Condition = b1Condition
        self.groupMode = groupMode
        self.dedx_ = Conv3DBackpropInput(dtype, b2Condition, yFormat, filterFormat, loadB1Condition=b1Condition,
                                         groupMode=groupMode, enableC04Flag=enableC04Flag)
        self.batchStrideA_ = self.batchStrideC_ = self.groupStrideA_ = self.groupStrideB_ = 1
        self.groupStrideC_ = self.coutStrideA_ = self.cinStrideB_ = self.cinStrideC_ = 1
        self.offsetA_ = self.offsetB_ = self.offsetC_ = 0
        self.batchCoreIdx_ = self.mCoreIdx_ = self.nCoreIdx_ = self.kCoreIdx_ = 0
        self.dCoreIdx_ = self.groupCoreIdx_ = self.curHoStartIdx_ = 0

    def InitBlockStride(self) -> None:
        t = self.tiling_
        if self.dedyFormat == FORMAT_NCDHW:
            self.coutStrideA_ = t.dout * t.ho * t.wo
            self.batchStrideA_ = self.coutStrideA_ * t.cout
        else:
            self.batchStrideA_ = t.dout * t.ho * t.wo * t.cout
        if self.enableVecTrans_ or self.filterFormat == FORMAT_NDHWC:
            self.cinStrideB_ = 1
        elif self.filterFormat == FORMAT_NCDHW:
            self.cinStrideB_ = t.dk * t.hk * t.wk
        else:  # DHWCN
            self.cinStrideB_ = t.cout
        if self.yFormat == FORMAT_NCDHW:
            self.cinStrideC_ = t.di * t.hi * t.wi
            self.batchStrideC_ = self.cinStrideC_ * t.cin
        else:
            self.batchStrideC_ = t.di * t.hi * t.wi * t.cin
        if t.group > 1:
            self.groupStrideA_ = self.coutStrideA_ * t.coutG
            # ENLARGE: a merged group's weight is coutG rows of cin/oriGroup channels, not cinG
            cinG = t.cinG // t.enlarge if self.groupMode == TPL_GROUP_MODE_ENLARGE else t.cinG
            if self.filterFormat == FORMAT_NCDHW:
                self.groupStrideB_ = t.coutG * cinG * self.cinStrideB_
            elif self.filterFormat == FORMAT_NDHWC:
                self.groupStrideB_ = t.coutG * t.dk * t.hk * t.wk * cinG
            else:
                self.groupStrideB_ = t.coutG
            self.groupStrideC_ = self.cinStrideC_ * t.cinG

    def CalcBlockOffset(self, batchIdx: int, groupIdx: int) -> None:
        t = self.tiling_
        # CalcBlockOffsetA: the first dy row of the block (rows of the zero-inserted dy start at strideH multiples)
        alignedHoStartIdx = 0 if self.curHoStartIdx_ < 0 else DivCeil(self.curHoStartIdx_, t.strideH)
        mOffsetA = alignedHoStartIdx * t.wo * (1 if self.dedyFormat == FORMAT_NCDHW else t.cout)
        self.offsetA_ = (self.batchStrideA_ * batchIdx + self.coutStrideA_ * self.kCoreIdx_ * t.singleCoreCout
                         + mOffsetA)
        # CalcBlockOffsetB: ENLARGE loads the merged group's whole weight (the AIV picks the cin window in UB)
        if self.groupMode == TPL_GROUP_MODE_ENLARGE:
            self.offsetB_ = 0
        else:
            self.offsetB_ = self.cinStrideB_ * self.nCoreIdx_ * t.singleCoreCin
        mOffsetC = self.mCoreIdx_ * t.singleCoreM * (t.cin if self.yFormat == FORMAT_NDHWC else 1)
        self.offsetC_ = (self.batchStrideC_ * batchIdx + self.cinStrideC_ * self.nCoreIdx_ * t.singleCoreCin
                         + mOffsetC)
        if groupIdx:  # CalcGroupBlockOffset
            self.offsetA_ += self.groupStrideA_ * groupIdx
            self.offsetB_ += self.groupStrideB_ * groupIdx
            self.offsetC_ += self.groupStrideC_ * groupIdx


class Conv3dDxOswBlock(Conv3dDxBase):
    def AivHasWork(self) -> bool:
        """`enableC04Flag || groupMode || useUbAccumForSplitK_`: else the AIVs return (ASCEND_IS_AIV_SHOULD_RETURN)."""
        return self.enableC04Flag or self.groupMode == TPL_GROUP_MODE_ENLARGE or self.useUbAccumForSplitK_

    def Init(self, filter, dedy, y, workSpace, tilingData) -> None:
        self.InitTilingData(tilingData)
        if ASCEND_IS_AIV() and not self.AivHasWork():
            return
        if self.useUbAccumForSplitK_ and GetSubBlockIdx() != 0:
            return
        self.filterGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(workSpace if self.enableVecTrans_ else filter)
        if self.enableVecTrans_ and self.useUbAccumForSplitK_:  # the fp32 partial sums follow the weight
            t = self.tiling_
            workSpace = workSpace + t.coutG * t.dk * t.hk * t.wk * AlignUp(t.cinG, BLOCK_CUBE) * self.dtype.itemsize
        self.dedyGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(dedy)
        self.yGm_ = GlobalTensor(self.dtype).SetGlobalBuffer(y)
        self.InitMixCoreBuffer(workSpace)
        self.dedx_.Init(tilingData)

    def InitMixCoreBuffer(self, workSpace) -> None:
        self.dedx_.l0cOutGm_ = GlobalTensor(float32).SetGlobalBuffer(workSpace)

    def Process(self) -> None:
        if ASCEND_IS_AIV() and not self.AivHasWork():
            return
        if self.useUbAccumForSplitK_ and GetSubBlockIdx() != 0:
            return
        if GetAicBlockIdx() >= self.usedCoreNum_:
            self.CrossCoreWaitVecTrans()  # ProcessForUnUsedCore
            self.dedx_.End()
            return
        self.CalBasicBlock()
        self.dedx_.End()

    def CrossCoreWaitVecTrans(self) -> None:
        if self.enableVecTrans_ and ASCEND_IS_AIC():
            CrossCoreWaitFlag(SYNC_AIV_AIC_DET_FLAG, SYNC_MODE2)

    def InitTilingData(self, tilingData) -> None:
        t = self.tiling_ = tilingData
        self.singleShapeM_ = t.singleCoreM
        cout = t.coutG if t.group > 1 else t.cout
        kernel = {TPL_GM_TO_L1: t.hk * t.wk, TPL_GM_TO_L1_NO_HK: t.wk, TPL_GM_TO_L1_NO_HK_WK: 1}[self.b1Condition]
        self.singleShapeK_ = (t.kSegment if t.enableSplitK else cout) * kernel
        self.singleShapeN_ = t.singleCoreCin
        self.singleShapeDin_ = t.singleCoreDin
        self.enableVecTrans_ = bool(t.enableVecTrans)
        self.useUbAccumForSplitK_ = bool(t.useUbAccumForSplitK)
        self.preOffsetB_ = 0
        self.preEnableFullLoad = 0
        self.CalBasicBlockCnt()
        self.InitBasicBlockLoopDirect()
        self.InitBlockStride()

    def CalBasicBlockCnt(self) -> None:
        t = self.tiling_
        m = t.hi * t.wi
        self.mCnt_ = DivCeil(m, self.singleShapeM_)
        self.mCoreTail_ = m - (self.mCnt_ - 1) * self.singleShapeM_
        n = t.cinG
        tailN = t.cin - n * (t.group - 1)
        self.nCnt_ = DivCeil(n, self.singleShapeN_)
        self.nTailCnt_ = DivCeil(tailN, self.singleShapeN_)
        self.nCoreTail_ = n - (self.nCnt_ - 1) * self.singleShapeN_
        self.nGroupCoreTail_ = tailN % self.singleShapeN_
        kernel = {TPL_GM_TO_L1: t.hk * t.wk, TPL_GM_TO_L1_NO_HK: t.wk, TPL_GM_TO_L1_NO_HK_WK: 1}[self.b1Condition]
        self.coutGroupTail_ = t.cout * kernel - (t.group - 1) * self.singleShapeK_
        if self.singleShapeDin_ > 1:
            self.dinCnt_ = DivCeil(t.di, self.singleShapeDin_)
            self.dinCoreTail_ = t.di - (self.dinCnt_ - 1) * self.singleShapeDin_
        else:
            self.dinCnt_, self.dinCoreTail_ = t.di, 1
        self.totalCnt_ = t.batch * t.group * self.dinCnt_ * self.mCnt_ * self.nCnt_
        self.usedCoreNum_ = min(self.totalCnt_, GetBlockNum())
        self.calRound_ = self.totalCnt_ // self.usedCoreNum_
        self.tailCnt_ = self.totalCnt_ - self.calRound_ * self.usedCoreNum_

    def InitBasicBlockLoopDirect(self) -> None:
        t = self.tiling_
        if t.dk > 1:
            self.loopDirect_ = LOOP_MDN
        elif t.hk > 1 or self.mCnt_ > self.nCnt_:
            self.loopDirect_ = LOOP_DMN
        else:
            self.loopDirect_ = LOOP_DNM

    def CalBasicBlockIdx(self, basicBlockIdx: int) -> None:
        t = self.tiling_
        mnCnt = self.mCnt_ * self.nCnt_
        depthMNCnt = self.dinCnt_ * mnCnt
        if t.group > 1:
            self.batchCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, t.group * depthMNCnt)
            self.groupCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, depthMNCnt)
        else:
            self.batchCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, depthMNCnt)
        if self.loopDirect_ == LOOP_MDN:
            self.mCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, self.dinCnt_ * self.nCnt_)
            self.dCoreIdx_ = 0
            if self.dinCnt_ > 1:
                self.dCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, self.nCnt_)
            self.nCoreIdx_ = basicBlockIdx
        else:
            self.dCoreIdx_ = 0
            if self.dinCnt_ > 1:
                self.dCoreIdx_, basicBlockIdx = divmod(basicBlockIdx, mnCnt)
            if self.loopDirect_ == LOOP_DMN:
                self.mCoreIdx_, self.nCoreIdx_ = divmod(basicBlockIdx, self.nCnt_)
            else:  # LOOP_DNM
                self.nCoreIdx_, self.mCoreIdx_ = divmod(basicBlockIdx, self.mCnt_)

    def CheckFullLoadEnable(self) -> None:
        api = self.dedx_
        if self.offsetB_ == self.preOffsetB_:
            self.preEnableFullLoad = api.curEnableFullLoad_
            return
        self.preOffsetB_ = self.offsetB_
        if api.curEnableFullLoad_ == 1 and self.preEnableFullLoad == api.curEnableFullLoad_:
            api.FreeB1Tensor()  # the weight block changed: drop the one kept in L1, and stop keeping it
            api.curEnableFullLoad_ = 0
        self.preEnableFullLoad = api.curEnableFullLoad_

    def CalBasicBlockCore(self, blockIdx: int, blockNum: int) -> None:
        t = self.tiling_
        basicIdx = blockIdx
        for j in range(self.calRound_):
            self.CalBasicBlockIdx(basicIdx)
            basicIdx += blockNum
            mCoreUse = self.mCoreTail_ if self.mCoreIdx_ == self.mCnt_ - 1 else self.singleShapeM_
            nCoreUse = self.nCoreTail_ if self.nCoreIdx_ == self.nCnt_ - 1 else self.singleShapeN_
            dinCoreUse = self.dinCoreTail_ if self.dCoreIdx_ == self.dinCnt_ - 1 else self.singleShapeDin_
            coutCoreUse = self.singleShapeK_
            if t.group > 1:
                if self.groupCoreIdx_ == t.group - 1:
                    coutCoreUse = self.coutGroupTail_
                if t.cin % t.cinG and self.groupCoreIdx_ == t.group - 1:
                    if self.nCoreIdx_ == self.nTailCnt_ - 1:
                        nCoreUse = self.nGroupCoreTail_
                    elif self.nCoreIdx_ > self.nTailCnt_ - 1:
                        continue
            api = self.dedx_
            api.SetBatchCoreIdx(self.batchCoreIdx_)
            api.SetSingleShape(mCoreUse, coutCoreUse, nCoreUse, dinCoreUse)
            api.SetStartIdx(self.dCoreIdx_ * self.singleShapeDin_, self.mCoreIdx_ * t.singleCoreM,
                            self.nCoreIdx_ * t.singleCoreCin, 0)
            self.curHoStartIdx_ = api.curHoStartIdx_  # CalBasicBlockOffset
            self.CalcBlockOffset(self.batchCoreIdx_, self.groupCoreIdx_)
            api.SetOutBackprop(self.dedyGm_[self.offsetA_])
            api.SetWeight(self.filterGm_[self.offsetB_])
            self.CheckFullLoadEnable()
            if j == 0:
                self.CrossCoreWaitVecTrans()
            api.IterateAll(self.yGm_[self.offsetC_], 0)

    def CalBasicBlock(self) -> None:
        blockIdx = GetAicBlockIdx()
        if blockIdx < self.tailCnt_:
            self.calRound_ += 1  # the tail blocks go to the first cores, one more round each
        self.CalBasicBlockCore(blockIdx, self.usedCoreNum_)
        if ASCEND_IS_AIC():
            self.dedx_.FreeB1Tensor()  # a weight kept in L1 for the whole run (dk == 1) is released here
