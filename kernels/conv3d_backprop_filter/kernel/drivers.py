"""The per-core drivers: which part of dw each core computes, and the GM offsets it hands to the API.

- `Conv3dDw` (tiling key 0, the base template): the block index splits into (k, n, m, batch*dout[, dk, group])
  with k fastest; the core owns singleCoreBatch (batch, dout) planes x singleCoreCout couts x singleCoreCin cins
  x singleCoreHo output rows (x singleCoreDk x singleCoreGroup) and runs IterateAll with the atomic add for each
  (group, batch*dout, dk).
- `Conv3dDwBasicBlockSplitMK` / `SplitKN` / `SplitMN` (keys 1, 2, 3): the work is a list of basic blocks over
  batch*dout and two of M, N, K (the third whole), bound to cores row first (coreBindOrder 1) or column first
  (2); each core takes a contiguous range (the first total % cores cores one more).
- `Conv3dDwBasicBlockSplitMNStreamK` (key 4): SplitMN over (group, dk,) batch*dout, M, N rounds every core
  completes; the blocks of the last partial round are split again over coreStreamK cores each, along
  batch*dout (streamKType 1) or along the output rows (2), all adding into dw.

Two layouts of N: with groups == 1 and dilationD == 1 the kernel depth is folded into N (N = dk*cin*hk*wk: the
dk input planes a (batch, dout) reads are consecutive in NDC1HWC0 and FRACTAL_Z_3D is dk-major), otherwise
(seperateDk) every (group, dk) is a GEMM of its own.

Ports op_kernel/arch22/conv3d_backprop_filter_v2.h (Conv3dDw: InitTilingData, CalSingleCoreShape,
ReCalDkCinSingleCoreShape, ReCalDkGroupSingleCoreShape, CalcOffset, CalcOffsetWithGroup, Process) and
conv3d_dw_v2_basic_block.h (CalBasicBlock, CalStreamK) for an NDC1HWC0 x: the NCDHW x of the real kernel goes
through the vector cores (TransDataTo6HD), which are not modelled; the host operator converts x instead.
ProcessWithDeterministic (the UB reduction on the vector cores) is not ported.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_FIX, PIPE_MTE3, Add, CrossCoreSetFlag,
                                CrossCoreWaitFlag, DataCopy, Duplicate, GetBlockIdx, GetBlockNum, GetSubBlockIdx,
                                GlobalTensor, HardEvent, SetFlag, TBuf, TPipe, TPosition, WaitFlag)
from kernels.conv3d_backprop_filter.kernel.api import Conv3DBackpropFilter
from kernels.conv3d_backprop_filter.kernel.util import DivCeil

ROW_FIRST, COL_FIRST = 1, 2
VEC_CUBE_RATIO = 2
UB_SIZE = 196608
MIN_DATA_SIZE = 256
SYNC_MODE0, SYNC_MODE2 = 0, 2
SYNC_AIC_ONLY_ALL_FLAG, SYNC_AIV_AIC_FLAG, SYNC_AIC_AIV_FLAG = 4, 6, 8
NO_STREAMK_CALC, STREAMK_BATCHDOUT, STREAMK_HWOUT = 0, 1, 2


class Conv3dDw:
    def __init__(self, x_dtype, dedy_dtype=None, y_dtype=np.float32, deterministic: bool = False):
        self.xType = np.dtype(x_dtype)
        self.dedyType = np.dtype(dedy_dtype if dedy_dtype is not None else x_dtype)
        self.yType = np.dtype(y_dtype)
        self.deterministic = deterministic  # DETERMINISTIC_MODE == 1
        self.dw = Conv3DBackpropFilter(self.xType)
        # block_idx: the AI core's index, the same on its cube core and its two vector cores
        self.blockIdx = GetBlockIdx() // VEC_CUBE_RATIO if ASCEND_IS_AIV() else GetBlockIdx()

    # ------------------------------------------------------------------------------------------------ setup
    def Init(self, x, dedy, y, workSpace, tilingData) -> None:
        self.InitTilingData(tilingData)
        self.xGm = GlobalTensor(self.xType).SetGlobalBuffer(x)
        self.dedyGm = GlobalTensor(self.dedyType).SetGlobalBuffer(dedy)
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y)
        self.dw.Init(tilingData.dwTiling)

    def InitTilingData(self, tilingData) -> None:
        p, t = tilingData.params, tilingData.dwTiling
        self.batchDim, self.mDim, self.nDim, self.kDim = p.batchDim, p.mDim, p.nDim, p.kDim
        self.groupDim, self.dkDim = p.groupDim, p.dkDim
        self.batch, self.dk, self.cout1G, self.c0, self.cin = t.batch, t.dk, t.cout1G, t.k0, t.cin
        self.coutG = t.cout1G * self.c0
        self.cinG = t.cin1G * self.c0
        self.k = t.ho * t.wo
        self.singleCoreBatch, self.singleCoreCout = t.singleCoreBatch, t.singleCoreCout
        self.singleCoreCin, self.singleCoreHo = t.singleCoreCin, t.singleCoreHo
        self.ho, self.wo, self.hi, self.wi, self.hk, self.wk = t.ho, t.wo, t.hi, t.wi, t.hk, t.wk
        self.strideH, self.strideD, self.padUp = t.strideH, t.strideD, t.padUp
        self.padFront, self.padBack = t.padFront, t.padBack
        self.dout, self.di = t.dout, t.di
        self.hoStartIdx = 0
        self.group, self.singleCoreGroup, self.singleCoreDk = t.group, t.singleCoreGroup, t.singleCoreDk
        self.dilationD, self.dilationH = t.dilationD, t.dilationH
        self.seperateDk = self.group > 1 or self.dilationD > 1 or self.deterministic
        self.dataSize = UB_SIZE // 2 // self.yType.itemsize  # deterministic: UB halves for the reduction
        if self.seperateDk:
            self.m = self.coutG
            self.n = self.cinG * t.hk * t.wk
            self.tailCinG = DivCeil(t.cin, self.c0) * self.c0 - self.cinG * (self.group - 1)
            self.tailCoutG = DivCeil(t.cout, self.c0) * self.c0 - self.coutG * (self.group - 1)
        else:
            self.m = DivCeil(t.cout, self.c0) * self.c0
            self.n = self.dk * self.cinG * t.hk * t.wk
            self.tailCinG, self.tailCoutG = self.cinG, self.coutG
        self.offsetA = self.offsetB = self.offsetC = 0
        self.kCoreIndx = self.nCoreIndx = self.mCoreIndx = self.batchCoreIndx = 0
        self.dkCoreIndx = self.groupCoreIndx = 0

    # ------------------------------------------------------------------------------------------------ work split
    def CalSingleCoreShape(self) -> None:
        bid = self.blockIdx
        self.kCoreIndx = bid % self.kDim
        self.nCoreIndx = (bid // self.kDim) % self.nDim
        self.mCoreIndx = (bid // (self.kDim * self.nDim)) % self.mDim
        self.batchCoreIndx = (bid // (self.kDim * self.nDim * self.mDim)) % self.batchDim
        hwK = self.hk * self.wk
        batchRemain = self.batch * self.dout - self.batchCoreIndx * self.singleCoreBatch
        mRemain = self.m - self.mCoreIndx * self.singleCoreCout
        nRemain = self.n - self.nCoreIndx * self.singleCoreCin * hwK
        kRemain = self.k - self.kCoreIndx * self.singleCoreHo * self.wo
        self.singleShapeBatch = min(batchRemain, self.singleCoreBatch)
        self.singleShapeM = min(mRemain, self.singleCoreCout)
        self.singleShapeN = min(nRemain, self.singleCoreCin * hwK)
        self.singleShapeK = min(kRemain, self.singleCoreHo * self.wo)
        self.hoStartIdx = self.kCoreIndx * self.singleCoreHo
        if self.seperateDk:
            totalDim = self.batchDim * self.kDim * self.nDim * self.mDim
            self.dkCoreIndx = (bid // totalDim) % self.dkDim
            self.groupCoreIndx = (bid // (totalDim * self.dkDim)) % self.groupDim
            self.singleShapeGroup = min(self.group - self.groupCoreIndx * self.singleCoreGroup, self.singleCoreGroup)
            self.singleShapeDk = min(self.dk - self.dkCoreIndx * self.singleCoreDk, self.singleCoreDk)
        else:
            self.dkCoreIndx = self.groupCoreIndx = 0
            self.singleShapeGroup = self.singleShapeDk = 1

    def ReCalDkCinSingleCoreShape(self, batchIdx: int, doutIdx: int, groupIdx: int, dkIdx: int) -> None:
        """This block's N (and M) for one output depth: kernel planes in the depth padding have no input."""
        self.singleShapeNInCurrentHo = self.singleShapeN
        self.singleShapeMInCurrentHo = self.singleShapeM
        if self.seperateDk:
            self.ReCalDkGroupSingleCoreShape(batchIdx, doutIdx, groupIdx, dkIdx)
            return
        hwK = self.hk * self.wk
        nStart = self.nCoreIndx * self.singleCoreCin * hwK
        d0 = doutIdx * self.strideD
        newDk = self.dk
        if d0 + self.dk > self.padFront + self.di:  # the last kernel planes fall into the back padding
            if d0 < self.padFront + self.di:
                newDk = self.padFront + self.di - d0
                if self.n // self.dk * newDk < nStart:
                    self.singleShapeNInCurrentHo = 0
                    return
                self.singleShapeNInCurrentHo = min(self.n // self.dk * newDk - nStart, self.singleCoreCin * hwK)
            else:
                self.singleShapeNInCurrentHo = 0
        if d0 < self.padFront:  # the first kernel planes fall into the front padding
            if d0 + newDk > self.padFront:
                newDk = d0 + newDk - self.padFront
                if self.n // self.dk * newDk < nStart:
                    self.singleShapeNInCurrentHo = 0
                    return
                self.singleShapeNInCurrentHo = min(self.n // self.dk * newDk - nStart, self.singleCoreCin * hwK)
            else:
                self.singleShapeNInCurrentHo = 0

    def ReCalDkGroupSingleCoreShape(self, batchIdx: int, doutIdx: int, groupIdx: int, dkIdx: int) -> None:
        dinIdx = doutIdx * self.strideD - self.padFront + dkIdx * self.dilationD
        if dinIdx < 0 or dinIdx >= self.di:
            self.singleShapeNInCurrentHo = self.singleShapeMInCurrentHo = 0
            return
        if groupIdx == self.group - 1:  # the last group may hold fewer channels
            hwK = self.hk * self.wk
            if self.tailCinG < self.cinG:
                tailN = self.tailCinG * hwK
                singleCoreN = self.singleCoreCin * hwK
                currentN = self.nCoreIndx * singleCoreN
                if tailN <= currentN:
                    self.singleShapeNInCurrentHo = 0
                    return
                self.singleShapeNInCurrentHo = min(tailN - currentN, singleCoreN)
            if self.tailCoutG < self.coutG:
                currentM = self.mCoreIndx * self.singleCoreCout
                if self.tailCoutG <= currentM:
                    self.singleShapeMInCurrentHo = 0
                    return
                self.singleShapeMInCurrentHo = min(self.tailCoutG - currentM, self.singleCoreCout)

    # ------------------------------------------------------------------------------------------------ offsets
    def CalcOffset(self, batchIdx: int, doutIdx: int, groupIdx: int, dkIdx: int, isBasicBlock: bool = False) -> None:
        """Element offsets of this block's first dy element (A), x element (B) and dw element (C)."""
        if self.seperateDk:
            self.CalcOffsetWithGroup(batchIdx, doutIdx, groupIdx, dkIdx)
            return
        hwO, hwI, hwK = self.ho * self.wo, self.hi * self.wi, self.hk * self.wk
        hoCal = (self.kCoreIndx * self.singleShapeK) // self.wo if isBasicBlock else self.kCoreIndx * self.singleCoreHo
        self.offsetA = ((batchIdx * self.dout + doutIdx) * self.m * hwO + self.mCoreIndx * self.singleCoreCout * hwO
                        + hoCal * self.wo * self.c0)
        dinIdx = max(doutIdx * self.strideD - self.padFront, 0)
        hiIdx = max(hoCal * self.strideH - self.padUp, 0)
        self.offsetB = ((batchIdx * self.di + dinIdx) * self.cinG * hwI + self.nCoreIndx * self.singleCoreCin * hwI
                        + hiIdx * self.wi * self.c0)
        self.offsetC = self.nCoreIndx * self.singleCoreCin * hwK * self.coutG + self.mCoreIndx * self.singleCoreCout * self.c0
        if doutIdx * self.strideD < self.padFront:  # skip the kernel planes in the front padding
            self.offsetC += (self.padFront - doutIdx * self.strideD) * self.cinG * hwK * self.coutG

    def CalcOffsetWithGroup(self, batchIdx: int, doutIdx: int, groupIdx: int, dkIdx: int) -> None:
        alignedCin = (self.group - 1) * self.cinG + self.tailCinG
        alignedCout = (self.group - 1) * self.coutG + self.tailCoutG
        hwO, hwI = self.ho * self.wo, self.hi * self.wi
        hoOffset = self.kCoreIndx * self.singleCoreHo * self.wo * self.c0
        self.offsetA = ((batchIdx * self.dout + doutIdx) * alignedCout * hwO + groupIdx * self.coutG * hwO
                        + self.mCoreIndx * self.singleCoreCout * hwO + hoOffset)
        dinIdx = doutIdx * self.strideD - self.padFront + dkIdx * self.dilationD  # < 0 was skipped before
        hiIdx = max(self.kCoreIndx * self.singleCoreHo * self.strideH - self.padUp, 0)
        self.offsetB = (batchIdx * self.di * alignedCin * hwI + dinIdx * alignedCin * hwI + groupIdx * self.cinG * hwI
                        + self.nCoreIndx * self.singleCoreCin * hwI + hiIdx * self.wi * self.c0)
        coutK = self.coutG * self.hk * self.wk
        cinCoutK = self.cinG * coutK
        self.offsetC = (groupIdx * self.dk * cinCoutK + dkIdx * cinCoutK + self.nCoreIndx * self.singleCoreCin * coutK
                        + self.mCoreIndx * self.singleCoreCout * self.c0)

    # ------------------------------------------------------------------------------------------------ run
    def _iterate_block(self, m: int, n: int, k: int) -> None:
        self.dw.SetFmap(self.xGm[self.offsetB])
        self.dw.SetOutBackprop(self.dedyGm[self.offsetA])
        self.dw.SetSingleShape(m, n, k, self.hoStartIdx)
        self.dw.IterateAll(self.yGm[self.offsetC], 1)  # 1: atomic add

    def Process(self) -> None:
        if ASCEND_IS_AIV():
            return
        if self.blockIdx >= GetBlockNum():
            self.dw.End()
            return
        self.CalSingleCoreShape()
        for i in range(self.singleShapeGroup):
            groupIdx = self.groupCoreIndx * self.singleCoreGroup + i
            for j in range(self.singleShapeBatch):
                batchDoutIdx = self.batchCoreIndx * self.singleCoreBatch + j
                batchIdx, doutIdx = divmod(batchDoutIdx, self.dout)
                for t in range(self.singleShapeDk):
                    dkIdx = self.dkCoreIndx * self.singleCoreDk + t
                    self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, groupIdx, dkIdx)
                    if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
                        continue
                    self.CalcOffset(batchIdx, doutIdx, groupIdx, dkIdx)
                    self._iterate_block(self.singleShapeMInCurrentHo, self.singleShapeNInCurrentHo,
                                        self.singleShapeK)
        self.dw.End()


class Conv3dDwBasicBlock(Conv3dDw):
    """The common part of the basic-block drivers: usedCoreNum, coreBindOrder, the task range of a core."""

    def Init(self, x, dedy, y, workSpace, tilingData) -> None:
        self.InitTilingData(tilingData)
        self.usedCoreNum = tilingData.basicBlockTiling.usedCoreNum
        self.coreBindOrder = tilingData.basicBlockTiling.coreBindOrder
        self.InitSplitTilingData(tilingData)
        self.xGm = GlobalTensor(self.xType).SetGlobalBuffer(x)
        self.dedyGm = GlobalTensor(self.dedyType).SetGlobalBuffer(dedy)
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y)
        self.dw.Init(tilingData.dwTiling)

    def Process(self) -> None:
        if self.blockIdx >= self.usedCoreNum:
            self.dw.End()  # the real code just returns; End consumes the M->MTE1 events our Init sets
            return
        if ASCEND_IS_AIV():  # NDC1HWC0 x: no TransData work for the vector cores
            return
        self.CalBasicBlock()
        self.dw.End()

    def _core_range(self, totalCnt: int) -> tuple[int, int]:
        """(first basic block, rounds) of this core: the first totalCnt % usedCoreNum cores take one more."""
        calRound, tailCnt = divmod(totalCnt, self.usedCoreNum)
        if self.blockIdx < tailCnt:
            return self.blockIdx * calRound + self.blockIdx, calRound + 1
        return self.blockIdx * calRound + tailCnt, calRound

    def _bind(self, basicBlockIdx: int, batchDout: int, aCnt: int, bCnt: int) -> tuple[int, int, int]:
        """(index along the first split axis, along the second, batch*dout index) of a basic block, row first
        (the first axis slowest, then batch*dout, then the second) or column first (the second axis slowest)."""
        if self.coreBindOrder == ROW_FIRST:
            batchDoutBCnt = batchDout * bCnt
            a = basicBlockIdx // batchDoutBCnt
            batchDoutIndex = (basicBlockIdx - a * batchDoutBCnt) // bCnt
            b = basicBlockIdx - a * batchDoutBCnt - batchDoutIndex * bCnt
        else:
            batchDoutBIndex = basicBlockIdx // bCnt
            b = basicBlockIdx - batchDoutBIndex * bCnt
            a = batchDoutBIndex % aCnt
            batchDoutIndex = basicBlockIdx // (aCnt * bCnt)
        return a, b, batchDoutIndex


class Conv3dDwBasicBlockSplitMK(Conv3dDwBasicBlock):
    def InitSplitTilingData(self, tilingData) -> None:
        self.singleShapeM = tilingData.basicBlockTiling.singleCoreM
        self.singleShapeK = tilingData.basicBlockTiling.singleCoreK
        self.singleShapeN = self.n

    def CalBasicBlock(self) -> None:
        mCnt = DivCeil(self.m, self.singleShapeM)
        mCoreTail = self.m - (mCnt - 1) * self.singleShapeM
        kCnt = DivCeil(self.k, self.singleShapeK)
        kCoreTail = max(self.k - (kCnt - 1) * self.singleShapeK, self.wo)
        batchDout = self.batch * self.dout
        basicBlockIdx, calRound = self._core_range(batchDout * mCnt * kCnt)
        self.nCoreIndx = 0
        for _ in range(calRound):
            # row first: K slowest, M fastest; column first: K fastest
            if self.coreBindOrder == ROW_FIRST:
                self.kCoreIndx, self.mCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, kCnt, mCnt)
            else:
                self.mCoreIndx, self.kCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, mCnt, kCnt)
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            basicBlockIdx += 1
            mCoreUse = mCoreTail if self.mCoreIndx == mCnt - 1 else self.singleShapeM
            kCoreUse = kCoreTail if self.kCoreIndx == kCnt - 1 else self.singleShapeK
            self.CalcOffset(batchIdx, doutIdx, 0, 0, True)
            self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, 0, 0)
            if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
                continue
            self.hoStartIdx = self.kCoreIndx * self.singleCoreHo
            self._iterate_block(mCoreUse, self.singleShapeNInCurrentHo, kCoreUse)


class Conv3dDwBasicBlockSplitKN(Conv3dDwBasicBlock):
    def InitSplitTilingData(self, tilingData) -> None:
        self.singleShapeM = self.m
        self.singleShapeK = tilingData.basicBlockTiling.singleCoreK
        self.singleShapeN = tilingData.basicBlockTiling.singleCoreN

    def CalBasicBlock(self) -> None:
        nCnt = DivCeil(self.n, self.singleShapeN)
        nCoreTail = self.n - (nCnt - 1) * self.singleShapeN
        kCnt = DivCeil(self.k, self.singleShapeK)
        kCoreTail = max(self.k - (kCnt - 1) * self.singleShapeK, self.wo)
        batchDout = self.batch * self.dout
        basicBlockIdx, calRound = self._core_range(batchDout * nCnt * kCnt)
        self.mCoreIndx = 0
        for _ in range(calRound):
            if self.coreBindOrder == ROW_FIRST:
                self.kCoreIndx, self.nCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, kCnt, nCnt)
            else:
                self.nCoreIndx, self.kCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, nCnt, kCnt)
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            basicBlockIdx += 1
            nCoreUse = nCoreTail if self.nCoreIndx == nCnt - 1 else self.singleShapeN
            kCoreUse = kCoreTail if self.kCoreIndx == kCnt - 1 else self.singleShapeK
            self.CalcOffset(batchIdx, doutIdx, 0, 0, True)
            self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, 0, 0)
            if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
                continue
            self.hoStartIdx = self.kCoreIndx * self.singleCoreHo
            self._iterate_block(self.singleShapeM, min(nCoreUse, self.singleShapeNInCurrentHo), kCoreUse)


class Conv3dDwBasicBlockSplitMN(Conv3dDwBasicBlock):
    def InitSplitTilingData(self, tilingData) -> None:
        self.singleShapeM = tilingData.basicBlockTiling.singleCoreM
        self.singleShapeK = self.k
        self.singleShapeN = tilingData.basicBlockTiling.singleCoreN

    def _mn_counts(self) -> tuple[int, int, int, int]:
        mCnt = DivCeil(self.m, self.singleShapeM)
        nCnt = DivCeil(self.n, self.singleShapeN)
        return mCnt, nCnt, self.m - (mCnt - 1) * self.singleShapeM, self.n - (nCnt - 1) * self.singleShapeN

    def CalBasicBlock(self) -> None:
        mCnt, nCnt, mCoreTail, nCoreTail = self._mn_counts()
        batchDout = self.batch * self.dout
        basicBlockIdx, calRound = self._core_range(batchDout * mCnt * nCnt)
        self.kCoreIndx = 0
        for _ in range(calRound):
            if self.coreBindOrder == ROW_FIRST:
                self.mCoreIndx, self.nCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, mCnt, nCnt)
            else:
                self.nCoreIndx, self.mCoreIndx, batchDoutIndex = self._bind(basicBlockIdx, batchDout, nCnt, mCnt)
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            basicBlockIdx += 1
            self._mn_block(batchIdx, doutIdx, 0, 0, mCnt, nCnt, mCoreTail, nCoreTail, self.singleShapeK)

    def _mn_block(self, batchIdx, doutIdx, groupIdx, dkIdx, mCnt, nCnt, mCoreTail, nCoreTail, kCoreUse) -> None:
        mCoreUse = mCoreTail if self.mCoreIndx == mCnt - 1 else self.singleShapeM
        nCoreUse = nCoreTail if self.nCoreIndx == nCnt - 1 else self.singleShapeN
        self.CalcOffset(batchIdx, doutIdx, groupIdx, dkIdx, True)
        self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, groupIdx, dkIdx)
        if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
            return
        self.hoStartIdx = self.kCoreIndx * self.singleCoreHo
        self._iterate_block(mCoreUse, min(nCoreUse, self.singleShapeNInCurrentHo), kCoreUse)


class Conv3dDwBasicBlockSplitMNStreamK(Conv3dDwBasicBlockSplitMN):
    def Init(self, x, dedy, y, workSpace, tilingData) -> None:
        super().Init(x, dedy, y, workSpace, tilingData)
        if workSpace is not None:
            self.workspaceGm = GlobalTensor(self.yType).SetGlobalBuffer(workSpace)

    def InitSplitTilingData(self, tilingData) -> None:
        bb = tilingData.basicBlockTiling
        self.streamKType, self.coreStreamK = bb.streamKType, bb.coreStreamK
        self.streamkWorkspaceSize = bb.singleCoreM * bb.singleCoreN
        self.channelSize = tilingData.dwTiling.channelSize
        super().InitSplitTilingData(tilingData)

    def Process(self) -> None:
        if self.blockIdx >= self.usedCoreNum:
            self.dw.End()  # the real code just returns; End consumes the M->MTE1 events our Init sets
            return
        if ASCEND_IS_AIV() and not (self.deterministic and self.streamKType != NO_STREAMK_CALC):
            return
        if self.deterministic and self.streamKType != NO_STREAMK_CALC and ASCEND_IS_AIV():
            self.InitMixCoreBuffer()
        self.CalBasicBlock()
        self.dw.End()

    def InitMixCoreBuffer(self) -> None:
        """The vector core's UB, two halves for the reduction."""
        self.vecPipe = TPipe()
        self.tmpBuf = TBuf(TPosition.VECCALC)
        self.vecPipe.InitBuffer(self.tmpBuf, UB_SIZE)

    def CalBasicBlock(self) -> None:
        mCnt, nCnt, mCoreTail, nCoreTail = self._mn_counts()
        batchDout = self.batch * self.dout
        groupCnt = self.group if self.seperateDk else 1
        dkCnt = self.dk if self.seperateDk else 1
        # deterministic: a block is (group, dk, m, n) over every batch*dout, so one core owns each dw tile
        blockCnt = mCnt * nCnt if self.deterministic else batchDout * mCnt * nCnt
        totalCnt = blockCnt * groupCnt * dkCnt
        calRound, tailCnt = divmod(totalCnt, self.usedCoreNum)
        if self.streamKType == NO_STREAMK_CALC:
            basicBlockIdx, calRound = self._core_range(totalCnt)
        else:
            basicBlockIdx = self.blockIdx * calRound  # stream-K: whole rounds here, the tail round below
        self.kCoreIndx = 0
        for _ in range(calRound if ASCEND_IS_AIC() else 0):
            if basicBlockIdx >= totalCnt:
                break
            groupDkIdx = basicBlockIdx // blockCnt if self.seperateDk else 0
            localIdx = basicBlockIdx - groupDkIdx * blockCnt
            groupIdx, dkIdx = groupDkIdx % groupCnt, groupDkIdx // groupCnt
            basicBlockIdx += 1
            if self.deterministic:
                if self.coreBindOrder == ROW_FIRST:
                    self.mCoreIndx, self.nCoreIndx = divmod(localIdx, nCnt)
                else:
                    nIndex, self.mCoreIndx = divmod(localIdx, mCnt)
                    self.nCoreIndx = nIndex % nCnt
                for batchDoutIndex in range(batchDout):
                    batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
                    self._mn_block(batchIdx, doutIdx, groupIdx, dkIdx, mCnt, nCnt, mCoreTail, nCoreTail,
                                   self.singleShapeK)
                continue
            if self.coreBindOrder == ROW_FIRST:
                self.mCoreIndx, self.nCoreIndx, batchDoutIndex = self._bind(localIdx, batchDout, mCnt, nCnt)
            else:
                self.nCoreIndx, self.mCoreIndx, batchDoutIndex = self._bind(localIdx, batchDout, nCnt, mCnt)
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            self._mn_block(batchIdx, doutIdx, groupIdx, dkIdx, mCnt, nCnt, mCoreTail, nCoreTail, self.singleShapeK)
        if self.streamKType != NO_STREAMK_CALC:
            self.CalStreamK(totalCnt, calRound, tailCnt, batchDout, mCnt, nCnt, mCoreTail, nCoreTail)

    def CalStreamK(self, totalCnt, calRound, tailCnt, batchDout, mCnt, nCnt, mCoreTail, nCoreTail) -> None:
        """The tail round: tailCnt (m, n[, group, dk]) blocks, each split over coreStreamK cores along
        batch*dout (STREAMK_BATCHDOUT) or along whole output rows (STREAMK_HWOUT). Each part is added into dw,
        or, deterministic, into the core's workspace, which the vector cores then sum in core order into dw."""
        if tailCnt == 0 or self.coreStreamK == 0 or self.streamKType not in (STREAMK_BATCHDOUT, STREAMK_HWOUT):
            return
        groupCnt = self.group if self.seperateDk else 1
        mnCnt = mCnt * nCnt
        tailBlockIdx, splitIdx = divmod(self.blockIdx, self.coreStreamK)
        basicBlockIdx = calRound * self.usedCoreNum + tailBlockIdx
        isParticipant = self.blockIdx < tailCnt * self.coreStreamK and basicBlockIdx < totalCnt
        groupDkIdx, localIdx = divmod(basicBlockIdx, mnCnt)
        groupIdx, dkIdx = groupDkIdx % groupCnt, groupDkIdx // groupCnt
        mCoreUse = nCoreUse = kCoreUse = 0
        batchDouts = ()
        if isParticipant:
            if self.coreBindOrder == ROW_FIRST:
                self.mCoreIndx, self.nCoreIndx = divmod(localIdx, nCnt)
            else:
                nIndex, self.mCoreIndx = divmod(localIdx, mCnt)
                self.nCoreIndx = nIndex % nCnt
            mCoreUse = mCoreTail if self.mCoreIndx == mCnt - 1 else self.singleShapeM
            nCoreUse = nCoreTail if self.nCoreIndx == nCnt - 1 else self.singleShapeN
            isParticipant, kCoreUse, batchDouts = self._stream_k_split(splitIdx, batchDout)
        if isParticipant and self.deterministic:
            if ASCEND_IS_AIV():
                self.CalcOffset(0, 0, groupIdx, dkIdx, True)
                self.InitStreamKWorkspace(self.streamkWorkspaceSize, self.blockIdx)
                CrossCoreSetFlag(SYNC_MODE2, PIPE_MTE3, SYNC_AIV_AIC_FLAG)
            else:
                CrossCoreWaitFlag(SYNC_AIV_AIC_FLAG, SYNC_MODE2)
        if isParticipant and ASCEND_IS_AIC():
            enAtomic = 0
            for batchDoutIndex in batchDouts:
                batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
                self.CalcOffset(batchIdx, doutIdx, groupIdx, dkIdx, True)
                self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, groupIdx, dkIdx)
                if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
                    continue
                self.dw.SetOutBackprop(self.dedyGm[self.offsetA])
                self.dw.SetSingleShape(mCoreUse, min(nCoreUse, self.singleShapeNInCurrentHo), kCoreUse,
                                       self.hoStartIdx)
                self.dw.SetFmap(self.xGm[self.offsetB])
                if self.deterministic:  # the first part written, the others added, in the core's own order
                    self.dw.IterateAllDeterministic(
                        self.workspaceGm[self.blockIdx * self.streamkWorkspaceSize], enAtomic)
                    enAtomic = 1
                else:
                    self.dw.IterateAll(self.yGm[self.offsetC], 1)
        if not self.deterministic:
            return
        if ASCEND_IS_AIC():  # every cube core's part is in its workspace
            CrossCoreSetFlag(SYNC_MODE0, PIPE_FIX, SYNC_AIC_ONLY_ALL_FLAG)
            CrossCoreWaitFlag(SYNC_AIC_ONLY_ALL_FLAG)
        if isParticipant:
            if ASCEND_IS_AIC():
                CrossCoreSetFlag(SYNC_MODE2, PIPE_FIX, SYNC_AIC_AIV_FLAG)
            else:
                self.ReduceStreamKToY(mCoreUse, nCoreUse, tailBlockIdx, isSplitM=mCnt != 1)

    def _stream_k_split(self, splitIdx: int, batchDout: int) -> tuple[bool, int, range]:
        """(takes part, its K, its batch*dout indices) of split splitIdx of a tail block; sets the K position."""
        if self.streamKType == STREAMK_BATCHDOUT:
            perSplit = DivCeil(batchDout, self.coreStreamK)
            splitCnt = DivCeil(batchDout, perSplit)
            if splitIdx >= splitCnt:
                return False, 0, range(0)
            coreUse = batchDout - (splitCnt - 1) * perSplit if splitIdx == splitCnt - 1 else perSplit
            if coreUse == 0:
                return False, 0, range(0)
            self.singleCoreHo = self.singleShapeK // self.wo
            self.kCoreIndx = 0
            self.hoStartIdx = 0
            return True, self.singleShapeK, range(splitIdx * perSplit, splitIdx * perSplit + coreUse)
        streamSingleShapeK = DivCeil(DivCeil(self.singleShapeK, self.coreStreamK), self.wo) * self.wo
        if streamSingleShapeK == 0:
            return False, 0, range(0)
        splitCnt = DivCeil(self.singleShapeK, streamSingleShapeK)
        if splitIdx >= splitCnt:
            return False, 0, range(0)
        kCoreUse = (self.singleShapeK - (splitCnt - 1) * streamSingleShapeK if splitIdx == splitCnt - 1
                    else streamSingleShapeK)
        if kCoreUse == 0:
            return False, 0, range(0)
        self.singleCoreHo = streamSingleShapeK // self.wo
        self.singleShapeK = streamSingleShapeK
        self.kCoreIndx = splitIdx
        self.hoStartIdx = splitIdx * streamSingleShapeK // self.wo
        return True, max(kCoreUse, self.wo), range(batchDout)

    # ------------------------------------------------------------------------------ the vector cores' part
    def InitStreamKWorkspace(self, blockSize: int, coreIdx: int) -> None:
        """Zero this cube core's workspace, half by each of its two vector cores (small blocks: the first)."""
        sub = GetSubBlockIdx()
        isSingleCore = blockSize <= MIN_DATA_SIZE
        if sub != 0 and isSingleCore:
            return
        taskDataSize = blockSize if isSingleCore else blockSize >> 1
        baseOffset = coreIdx * blockSize + sub * taskDataSize
        taskDataSize += sub * (blockSize & 1)
        ubSrc = self.tmpBuf.Get(self.yType)
        perDataSize = min(taskDataSize, self.dataSize)
        eventIdVToMte3 = self.vecPipe.FetchEventID(HardEvent.V_MTE3)
        Duplicate(ubSrc, 0.0, perDataSize)
        SetFlag(HardEvent.V_MTE3, eventIdVToMte3)
        WaitFlag(HardEvent.V_MTE3, eventIdVToMte3)
        processed = 0
        while processed < taskDataSize:
            curSize = min(taskDataSize - processed, perDataSize)
            DataCopy(self.workspaceGm[baseOffset + processed], ubSrc, curSize)
            processed += curSize

    def ReduceStreamKToY(self, mCoreUse: int, nCoreUse: int, tailBlockIdx: int, isSplitM: bool) -> None:
        """Sum the coreStreamK workspaces of a tail block in core order and write the sum into dw; the block's
        C0-wide column blocks are shared out over the 2*coreStreamK vector cores."""
        # [DEVIATION] the real code returns before its CrossCoreWaitFlag on the vector cores that get no column
        # block (and on an empty block), leaving the cube core's flag set; the simulator refuses flags left set
        # at the end of a kernel, so those cores wait it first and then return.
        CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG, SYNC_MODE2)
        # The cube core set this flag after waiting for this core's workspace zeros (V -> MTE3 -> flag): the
        # round trip orders the UB reuse below behind them.
        if mCoreUse == 0 or nCoreUse == 0:
            return
        reducerCore = tailBlockIdx * self.coreStreamK
        maxVecCore = self.coreStreamK * VEC_CUBE_RATIO
        localVecIdx = (self.blockIdx - reducerCore) * VEC_CUBE_RATIO + GetSubBlockIdx()
        alignedM = self.cout1G * self.channelSize
        totalBlockNum = DivCeil(nCoreUse, self.channelSize)
        useVecCore = min(totalBlockNum, maxVecCore)
        if localVecIdx >= useVecCore:
            return
        totalSize = totalBlockNum // useVecCore
        offsetBlock = totalSize * localVecIdx
        tailVecNum = totalBlockNum % useVecCore
        if tailVecNum:
            offsetBlock += min(localVecIdx, tailVecNum)
            totalSize += 1 if localVecIdx < tailVecNum else 0
        totalSize *= DivCeil(mCoreUse, 16) * 16 * self.channelSize
        curOffsetC = self.offsetC + offsetBlock * alignedM * self.channelSize
        vecOffsetC = offsetBlock * mCoreUse * self.channelSize
        ubSrc1 = self.tmpBuf.Get(self.yType)
        ubSrc2 = ubSrc1[self.dataSize]
        baseCore = tailBlockIdx * self.coreStreamK
        perDataSize = DivCeil(mCoreUse, 16) * 16 * self.channelSize if isSplitM else self.dataSize
        pipe = self.vecPipe
        eventIdMte2ToV, eventIdVToMte2 = pipe.FetchEventID(HardEvent.MTE2_V), pipe.FetchEventID(HardEvent.V_MTE2)
        eventIdMte3ToMte2 = pipe.FetchEventID(HardEvent.MTE3_MTE2)
        eventIdVToMte3 = pipe.FetchEventID(HardEvent.V_MTE3)
        processed = 0
        while processed < totalSize:
            curSize = min(totalSize - processed, perDataSize)
            DataCopy(ubSrc1, self.workspaceGm[baseCore * self.streamkWorkspaceSize + vecOffsetC + processed], curSize)
            for coreIdx in range(1, self.coreStreamK):
                srcOffset = (baseCore + coreIdx) * self.streamkWorkspaceSize + vecOffsetC + processed
                DataCopy(ubSrc2, self.workspaceGm[srcOffset], curSize)
                SetFlag(HardEvent.MTE2_V, eventIdMte2ToV)
                WaitFlag(HardEvent.MTE2_V, eventIdMte2ToV)
                Add(ubSrc1, ubSrc1, ubSrc2, curSize)
                SetFlag(HardEvent.V_MTE2, eventIdVToMte2)
                WaitFlag(HardEvent.V_MTE2, eventIdVToMte2)
            SetFlag(HardEvent.V_MTE3, eventIdVToMte3)
            WaitFlag(HardEvent.V_MTE3, eventIdVToMte3)
            DataCopy(self.yGm[curOffsetC], ubSrc1, curSize)
            processed += curSize
            curOffsetC += alignedM * self.channelSize if isSplitM else curSize
            SetFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
            WaitFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
