"""The per-core drivers: which part of dx each core computes, and the GM offsets it hands to the API.

- `Conv3dDx` (general; fp32, groups > 1, knowledge-map tilings): the block index splits into (k, n, m, batch, d,
  group) with k fastest; the core owns singleCoreBatch x singleCoreM x singleCoreCin1 x singleCoreDin (x
  singleCoreGroup) and runs IterateAll once per batch (and per super-group).
- `Conv3dDxBasicBlockSplitMN` (fp16/bf16 with groups == 1): the work is a list of (m block, batch*depth, n block)
  tasks, n fastest; each core takes a contiguous range (the first total % cores cores one extra) and runs
  IterateAll per task with D = 1.

Ports op_kernel/arch22/conv3d_backprop_input_v2.h (Conv3dDx: InitTilingData, CalSingleCoreShape,
ReCalSingleCoreShapeForOutputPad, CalcBlockOffset, Process, ProcessGroup, CalSingleCoreShapeInGroup,
InitMixCoreBuffer, MergeOutputTransDataIterateAll) and conv3d_dx_v2_basic_block.h (Conv3dDxBasicBlockSplitMN:
CalBasicBlock). yFormat is the y format the kernel is compiled for:
- "NDC1HWC0": the cube cores only (Init and Process return at once on a vector core);
- "NCDHW" (fp16/bf16, the MIX AIC:AIV 1:1 build): both cores of an AI core run the same index walk; per tile the
  AIC Fixpipes into its workspace slot and raises flag 6, the AIV moves the tile into NCDHW (vec_post.py) and
  raises flag 5 when the slot is free again, which the AIC waits for before its next tile.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_FIX, CrossCoreSetFlag, CrossCoreWaitFlag,
                                GetBlockIdx, GlobalTensor)
from kernels.conv3d_backprop_input.kernel.arch22.api import Conv3DBackpropInput
from kernels.conv3d_backprop_input.kernel.arch22.util import (BLOCK_CUBE, FORMAT_NCDHW, FORMAT_NDC1HWC0, DivCeil,
                                                              total_ub_size)
from kernels.conv3d_backprop_input.kernel.arch22.vec_post import (SYNC_AIC_AIV_FLAG, SYNC_AIV_AIC_FLAG, SYNC_MODE2,
                                                                  InitMixCoreBuffer, VecPostProcess)


class Conv3dDx:
    COPIED_NOT_USED: tuple[str, ...] = ()  # tiling fields InitTilingData copies that this driver never uses
    def __init__(self, filter_dtype, dedy_dtype, y_dtype, loadB2Condition: int, yFormat: str = FORMAT_NDC1HWC0):
        self.filterType = np.dtype(filter_dtype)
        self.dedyType = np.dtype(dedy_dtype)
        self.yType = np.dtype(y_dtype)
        self.yFormat = yFormat
        self.dedx = Conv3DBackpropInput(self.dedyType, loadB2Condition, self.yType, yFormat)
        self.blockIdx = GetBlockIdx()
        self.isFirstIter = True  # no tile handed to the AIV yet (kept across IterateAll calls)

    # ------------------------------------------------------------------------------------------------ setup
    def Init(self, filter, dedy, y, workspace, tilingData) -> None:
        if self.yFormat == FORMAT_NDC1HWC0 and ASCEND_IS_AIV():
            return
        self.InitTilingData(tilingData)
        self.filterGm = GlobalTensor(self.filterType).SetGlobalBuffer(filter)
        self.dedyGm = GlobalTensor(self.dedyType).SetGlobalBuffer(dedy)
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y)
        self.dedx.Init(tilingData.conv3DDxTiling)
        self.InitMixCoreBuffer(workspace)

    def InitMixCoreBuffer(self, workspace) -> None:
        """The workspace of the AIC -> AIV hand-over, and the AIV's UB queues (NCDHW build only)."""
        if self.yFormat != FORMAT_NCDHW:
            return
        self.l0cOutGm = GlobalTensor(self.yType).SetGlobalBuffer(workspace)
        if ASCEND_IS_AIV():
            InitMixCoreBuffer(self, total_ub_size())

    def InitTilingData(self, tilingData) -> None:
        p, t = tilingData.params, tilingData.conv3DDxTiling
        self.batchDim, self.mDim, self.nDim = p.batchDim, p.mDim, p.nDim
        self.kDim, self.dDim, self.groupDim = p.kDim, p.dDim, p.groupDim
        self.batch = t.batch
        self.m = t.hi * t.wi
        self.n = t.cin1 * t.c0
        self.k = t.dk * t.cout1 * t.hk * t.wk * t.c0
        self.group = t.group
        self.singleCoreBatch = t.singleCoreBatch
        self.singleCoreCout = t.singleCoreCout
        self.singleCoreCin = t.singleCoreCin
        self.singleCoreCin1 = t.singleCoreCin1
        self.singleCoreM = t.singleCoreM
        self.singleCoreDin = t.singleCoreDin
        self.singleCoreGroup = t.singleCoreGroup
        self.cin, self.cout1, self.cin1 = t.cin, t.cout1, t.cin1
        self.cout1G, self.cin1G, self.c0 = t.cout1G, t.cin1G, t.c0
        self.ho, self.wo, self.do = t.ho, t.wo, t.dout
        self.hi, self.wi, self.di = t.hi, t.wi, t.di
        self.hk, self.wk, self.dk = t.hk, t.wk, t.dk
        self.dilationD, self.dilationH = t.dilationD, t.dilationH
        self.strideH, self.strideW = t.strideH, t.strideW
        self.padFront = t.padFront
        self.backpropPadTail, self.backpropPadUp = t.backpropPadTail, t.backpropPadUp
        self.backpropPadDown = t.backpropPadDown
        if self.singleCoreM % self.wi:
            raise ValueError(f"tiling singleCoreM={self.singleCoreM} must be a multiple of wi={self.wi}")
        self.singleCoreHi = self.singleCoreM // self.wi
        self.offsetA = self.offsetB = self.offsetC = 0
        self.singleShapeKInGroup = self.singleShapeNInGroup = 0  # C++ members start at 0

    # ------------------------------------------------------------------------------------------------ work split
    def CalSingleCoreShape(self) -> None:
        bid = self.blockIdx
        self.kCoreIndx = bid % self.kDim
        self.nCoreIndx = (bid // self.kDim) % self.nDim
        self.mCoreIndx = (bid // (self.kDim * self.nDim)) % self.mDim
        self.batchCoreIndx = (bid // (self.kDim * self.nDim * self.mDim)) % self.batchDim
        self.dCoreIndx = (bid // (self.kDim * self.nDim * self.mDim * self.batchDim)) % self.dDim
        self.groupCoreIndx = (bid // (self.kDim * self.nDim * self.mDim * self.batchDim * self.dDim)) % self.groupDim
        # first window row of this core in dilated-dy coordinates, and its first real dy row
        self.curHoStartIdx = self.mCoreIndx * self.singleCoreHi - self.backpropPadUp
        self.alignedHoStartIdx = (0 if self.curHoStartIdx < 0
                                  else (self.curHoStartIdx + self.strideH - 1) // self.strideH)
        batchTail = self.batch - self.batchCoreIndx * self.singleCoreBatch
        mTail = self.m - self.mCoreIndx * self.singleCoreM
        dTail = self.di - self.dCoreIndx * self.singleCoreDin
        groupTail = self.group - self.groupCoreIndx * self.singleCoreGroup
        mTail, dTail = self.ReCalSingleCoreShapeForOutputPad(mTail, dTail)
        self.singleShapeBatch = min(batchTail, self.singleCoreBatch)
        self.singleShapeM = min(mTail, self.singleCoreM)
        self.singleShapeDin = min(dTail, self.singleCoreDin)
        self.singleShapeGroup = min(groupTail, self.singleCoreGroup)
        self.curDinStartIdx = self.dCoreIndx * self.singleCoreDin
        if self.group == 1:
            nTail = self.cin - self.nCoreIndx * self.singleCoreCin1 * self.c0
            self.singleShapeN = min(nTail, self.singleCoreCin1 * self.c0)
            self.singleShapeK = self.k
        else:
            nTail = self.cin - self.groupCoreIndx * self.singleCoreGroup * self.cin1G * self.c0
            cout1Tail = self.cout1 - self.groupCoreIndx * self.singleCoreGroup * self.cout1G
            self.singleShapeN = min(nTail, self.singleCoreGroup * self.cin1G * self.c0)
            self.singleShapeCout1 = min(cout1Tail, self.singleShapeGroup * self.cout1G)
            self.singleShapeK = self.singleShapeCout1 * self.dk * self.hk * self.wk

    def ReCalSingleCoreShapeForOutputPad(self, mTail: int, dTail: int) -> tuple[int, int]:
        """Drop trailing output planes/rows that no kernel position reaches (they rely on the init pass).

        The C++ compares unsigned with a signed remainder, so only a positive remainder has an effect.
        """
        diRemain = self.backpropPadTail - self.dilationD * (self.dk - 1)
        if diRemain > 0 and dTail > diRemain:
            dTail -= diRemain
        hiRemain = self.backpropPadDown - self.dilationH * (self.hk - 1)
        if hiRemain > 0 and mTail > hiRemain * self.wi:
            mTail -= hiRemain * self.wi
        return mTail, dTail

    def CalSingleCoreShapeInGroup(self, groupIdx: int) -> None:
        cout1Tail = self.singleShapeCout1 - groupIdx * self.cout1G
        nTail = self.singleShapeN - groupIdx * self.cin1G * self.c0
        if cout1Tail <= 0:
            self.singleShapeKInGroup = 0
            return
        if nTail <= self.nCoreIndx * self.singleCoreCin1 * self.c0:
            self.singleShapeNInGroup = 0
            return
        cout1InGroup = min(cout1Tail, self.cout1G)
        self.singleShapeKInGroup = cout1InGroup * self.dk * self.hk * self.wk * self.c0
        nTail -= self.nCoreIndx * self.singleCoreCin1 * self.c0
        self.singleShapeNInGroup = min(nTail, self.singleCoreCin1 * self.c0)

    # ------------------------------------------------------------------------------------------------ offsets
    def CalcBlockOffset(self, batchIdx: int) -> None:
        """Element offsets of this core's first dy element (A), weight element (B) and dx element (C)."""
        groupOffsetNum = self.groupCoreIndx * self.singleCoreGroup
        self.cout1StrideA = self.ho * self.wo * self.c0
        self.groupStrideA = self.cout1G * self.cout1StrideA
        self.doStrideA = self.cout1 * self.cout1StrideA
        self.batchStrideA = self.do * self.doStrideA
        coutOffsetA = self.kCoreIndx * self.singleCoreCout * self.ho * self.wo
        mOffsetA = self.alignedHoStartIdx * self.wo * self.c0
        self.offsetA = (batchIdx * self.batchStrideA + groupOffsetNum * self.groupStrideA + coutOffsetA + mOffsetA)
        # fp32: every FRACTAL_Z_3D row holds couts padded to a multiple of 16
        cinStrideB = self.hk * self.wk * DivCeil(self.cout1G * self.c0, BLOCK_CUBE) * BLOCK_CUBE * self.c0
        self.groupStrideB = self.dk * self.cin1G * cinStrideB
        self.offsetB = groupOffsetNum * self.groupStrideB + self.nCoreIndx * self.singleCoreCin1 * cinStrideB
        if self.yFormat == FORMAT_NCDHW:
            self.diStrideC = self.hi * self.wi
            cinStrideC = self.di * self.diStrideC
            self.batchStrideC = self.cin * cinStrideC
            self.groupStrideC = self.cin1G * self.c0 * cinStrideC
            self.offsetC = (batchIdx * self.batchStrideC + groupOffsetNum * self.groupStrideC
                            + self.nCoreIndx * self.singleCoreCin * cinStrideC
                            + self.mCoreIndx * self.singleCoreHi * self.wi)
            return
        self.cin1StrideC = self.hi * self.wi * self.c0
        self.groupStrideC = self.cin1G * self.cin1StrideC
        self.diStrideC = self.cin1 * self.cin1StrideC
        self.batchStrideC = self.di * self.diStrideC
        self.offsetC = (groupOffsetNum * self.groupStrideC + batchIdx * self.batchStrideC
                        + self.nCoreIndx * self.singleCoreCin1 * self.cin1StrideC
                        + self.mCoreIndx * self.singleCoreHi * self.wi * self.c0)

    def CalcBatchOffset(self) -> None:
        self.offsetA += self.batchStrideA
        self.offsetC += self.batchStrideC

    def CalcGroupOffset(self) -> None:
        self.offsetA += self.groupStrideA
        self.offsetB += self.groupStrideB
        self.offsetC += self.groupStrideC

    # ------------------------------------------------------------------------------------------------ run
    def DedxIterateAll(self) -> None:
        if self.yFormat == FORMAT_NCDHW:
            self.MergeOutputTransDataIterateAll(self.yGm[self.offsetC])
        else:
            self.dedx.IterateAll(self.yGm[self.offsetC], 0)

    def MergeOutputTransDataIterateAll(self, output) -> None:
        """Both cores walk the same tiles; the AIC hands each over through its workspace slot (flags 6 and 5)."""
        while self.dedx.Iterate():
            if ASCEND_IS_AIC():
                if not self.isFirstIter:
                    CrossCoreWaitFlag(SYNC_AIV_AIC_FLAG)  # the AIV has read the previous tile out of the slot
                self.dedx.GetTensorC(self.l0cOutGm[0])
                CrossCoreSetFlag(SYNC_MODE2, PIPE_FIX, SYNC_AIC_AIV_FLAG)
            if ASCEND_IS_AIV():
                CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG)
                VecPostProcess(self, output)
            self.isFirstIter = False
        self.dedx.isFirstIter = True

    def WaitLastSlotFree(self) -> None:
        """[DEVIATION] the real AIC never waits for the AIV's flag 5 of the last tile, so the kernel ends with it
        counted; the simulator faults a cross-core flag left counted, so the AIC waits for it here."""
        if self.yFormat == FORMAT_NCDHW and ASCEND_IS_AIC() and not self.isFirstIter:
            CrossCoreWaitFlag(SYNC_AIV_AIC_FLAG)

    def Process(self) -> None:
        if self.yFormat == FORMAT_NDC1HWC0 and ASCEND_IS_AIV():
            return
        self.CalSingleCoreShape()
        if self.alignedHoStartIdx >= self.ho:
            self.dedx.End()
            return
        self.dedx.SetStartPosition(self.curDinStartIdx, self.curHoStartIdx)
        self.CalcBlockOffset(self.batchCoreIndx * self.singleCoreBatch)
        if self.group == 1:
            self.dedx.SetSingleShape(self.singleShapeM, self.singleShapeK, self.singleShapeN, self.singleShapeDin)
            for _ in range(self.singleShapeBatch):
                self.dedx.SetGradOutput(self.dedyGm[self.offsetA])
                self.dedx.SetWeight(self.filterGm[self.offsetB])
                self.DedxIterateAll()
                self.CalcBatchOffset()
        else:
            self.ProcessGroup()
        self.WaitLastSlotFree()
        self.dedx.End()

    def ProcessGroup(self) -> None:
        for _ in range(self.singleShapeBatch):
            backupA, backupB, backupC = self.offsetA, self.offsetB, self.offsetC
            for groupIdx in range(self.singleShapeGroup):
                self.CalSingleCoreShapeInGroup(groupIdx)
                if self.singleShapeKInGroup == 0 or self.singleShapeNInGroup == 0:
                    continue
                self.dedx.SetSingleShape(self.singleShapeM, self.singleShapeKInGroup, self.singleShapeNInGroup,
                                         self.singleShapeDin)
                self.dedx.SetGradOutput(self.dedyGm[self.offsetA])
                self.dedx.SetWeight(self.filterGm[self.offsetB])
                self.DedxIterateAll()
                self.CalcGroupOffset()
            self.offsetA = backupA + self.batchStrideA
            self.offsetB = backupB
            self.offsetC = backupC + self.batchStrideC


class Conv3dDxBasicBlockSplitMN(Conv3dDx):
    # InitTilingData copies the split factors as the C++ does, but this driver deals basic blocks out over
    # coreNum cores and never uses them (only Conv3dDx.CalSingleCoreShape does): an override changes nothing
    COPIED_NOT_USED = ("batchDim", "mDim", "nDim", "kDim", "dDim", "groupDim")

    def InitTilingData(self, tilingData) -> None:
        super().InitTilingData(tilingData)
        self.usedCoreNum = tilingData.params.coreNum
        self.singleShapeM = self.singleCoreHi * self.wi
        self.singleShapeK = self.k
        self.singleShapeN = self.singleCoreCin1 * self.c0
        self.groupCoreIndx = self.kCoreIndx = 0
        self.singleCoreGroup = 1

    def Process(self) -> None:
        if self.yFormat == FORMAT_NDC1HWC0 and ASCEND_IS_AIV():
            return
        if self.blockIdx >= self.usedCoreNum:
            return
        self.CalBasicBlock()
        self.WaitLastSlotFree()
        self.dedx.End()

    def CalBasicBlock(self) -> None:
        mCnt = DivCeil(self.m, self.singleShapeM)
        mCoreTail = self.m - (mCnt - 1) * self.singleShapeM
        hiLen = (self.backpropPadDown - self.dilationH * (self.hk - 1)) * self.wi
        if hiLen > 0 and mCoreTail > hiLen:  # only a positive remainder counts (unsigned compare in C++)
            mCoreTail -= hiLen
        nCnt = DivCeil(self.n, self.singleShapeN)
        nCoreTail = self.cin - (nCnt - 1) * self.singleShapeN
        batchDepth = self.batch * self.di
        totalCnt = batchDepth * mCnt * nCnt
        calRound = totalCnt // self.usedCoreNum
        tailCnt = totalCnt - calRound * self.usedCoreNum
        if self.blockIdx < tailCnt:  # the first tailCnt cores take one task more
            basicBlockIdx = self.blockIdx * calRound + self.blockIdx
            calRound += 1
        else:
            basicBlockIdx = self.blockIdx * calRound + tailCnt
        batchDepthNcnt = batchDepth * nCnt
        curM, curN = self.singleShapeM, self.singleShapeN
        self.dedx.SetSingleShape(curM, self.singleShapeK, curN, 1)
        for _ in range(calRound):
            self.mCoreIndx = basicBlockIdx // batchDepthNcnt
            batchDepthIndex = (basicBlockIdx - self.mCoreIndx * batchDepthNcnt) // nCnt
            self.nCoreIndx = basicBlockIdx - self.mCoreIndx * batchDepthNcnt - batchDepthIndex * nCnt
            batchIdx = batchDepthIndex // self.di
            depthIdx = batchDepthIndex - batchIdx * self.di
            basicBlockIdx += 1
            mUse = mCoreTail if self.mCoreIndx == mCnt - 1 else self.singleShapeM
            nUse = nCoreTail if self.nCoreIndx == nCnt - 1 else self.singleShapeN
            if mUse != curM or nUse != curN:
                curM, curN = mUse, nUse
                self.dedx.SetSingleShape(curM, self.singleShapeK, curN, 1)
            self.curHoStartIdx = self.mCoreIndx * self.singleCoreHi - self.backpropPadUp
            self.alignedHoStartIdx = (0 if self.curHoStartIdx < 0
                                      else (self.curHoStartIdx + self.strideH - 1) // self.strideH)
            if self.alignedHoStartIdx >= self.ho:
                continue
            self.dedx.SetStartPosition(depthIdx, self.curHoStartIdx)
            self.CalcBlockOffset(batchIdx)
            self.dedx.SetGradOutput(self.dedyGm[self.offsetA])
            self.dedx.SetWeight(self.filterGm[self.offsetB])
            self.DedxIterateAll()
