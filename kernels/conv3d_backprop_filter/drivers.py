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

from ascend_sim.ascendc import GetBlockIdx, GetBlockNum, GlobalTensor

from .api import Conv3DBackpropFilter
from .util import DivCeil

ROW_FIRST, COL_FIRST = 1, 2
NO_STREAMK_CALC, STREAMK_BATCHDOUT, STREAMK_HWOUT = 0, 1, 2


class Conv3dDw:
    def __init__(self, x_dtype, dedy_dtype=None, y_dtype=np.float32):
        self.xType = np.dtype(x_dtype)
        self.dedyType = np.dtype(dedy_dtype if dedy_dtype is not None else x_dtype)
        self.yType = np.dtype(y_dtype)
        self.dw = Conv3DBackpropFilter(self.xType)
        self.blockIdx = GetBlockIdx()

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
        self.seperateDk = self.group > 1 or self.dilationD > 1
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
    def InitSplitTilingData(self, tilingData) -> None:
        bb = tilingData.basicBlockTiling
        self.streamKType, self.coreStreamK = bb.streamKType, bb.coreStreamK
        super().InitSplitTilingData(tilingData)

    def CalBasicBlock(self) -> None:
        mCnt, nCnt, mCoreTail, nCoreTail = self._mn_counts()
        batchDout = self.batch * self.dout
        groupCnt = self.group if self.seperateDk else 1
        dkCnt = self.dk if self.seperateDk else 1
        batchDoutMnCnt = batchDout * mCnt * nCnt
        totalCnt = batchDoutMnCnt * groupCnt * dkCnt
        calRound, tailCnt = divmod(totalCnt, self.usedCoreNum)
        if self.streamKType == NO_STREAMK_CALC:
            basicBlockIdx, calRound = self._core_range(totalCnt)
        else:
            basicBlockIdx = self.blockIdx * calRound  # stream-K: whole rounds here, the tail round below
        self.kCoreIndx = 0
        for _ in range(calRound):
            if basicBlockIdx >= totalCnt:
                break
            groupDkIdx = basicBlockIdx // batchDoutMnCnt if self.seperateDk else 0
            localIdx = basicBlockIdx - groupDkIdx * batchDoutMnCnt
            groupIdx, dkIdx = groupDkIdx % groupCnt, groupDkIdx // groupCnt
            if self.coreBindOrder == ROW_FIRST:
                self.mCoreIndx, self.nCoreIndx, batchDoutIndex = self._bind(localIdx, batchDout, mCnt, nCnt)
            else:
                self.nCoreIndx, self.mCoreIndx, batchDoutIndex = self._bind(localIdx, batchDout, nCnt, mCnt)
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            basicBlockIdx += 1
            self._mn_block(batchIdx, doutIdx, groupIdx, dkIdx, mCnt, nCnt, mCoreTail, nCoreTail, self.singleShapeK)
        if self.streamKType != NO_STREAMK_CALC:
            self.CalStreamK(totalCnt, calRound, tailCnt, batchDout, mCnt, nCnt, mCoreTail, nCoreTail)

    def CalStreamK(self, totalCnt, calRound, tailCnt, batchDout, mCnt, nCnt, mCoreTail, nCoreTail) -> None:
        """The tail round: tailCnt (m, n[, group, dk]) blocks, each split over coreStreamK cores along
        batch*dout (STREAMK_BATCHDOUT) or along whole output rows (STREAMK_HWOUT); every part is added."""
        if tailCnt == 0 or self.coreStreamK == 0 or self.streamKType not in (STREAMK_BATCHDOUT, STREAMK_HWOUT):
            return
        groupCnt = self.group if self.seperateDk else 1
        mnCnt = mCnt * nCnt
        tailBlockIdx, splitIdx = divmod(self.blockIdx, self.coreStreamK)
        basicBlockIdx = calRound * self.usedCoreNum + tailBlockIdx
        if self.blockIdx >= tailCnt * self.coreStreamK or basicBlockIdx >= totalCnt:
            return
        groupDkIdx, localIdx = divmod(basicBlockIdx, mnCnt)
        groupIdx, dkIdx = groupDkIdx % groupCnt, groupDkIdx // groupCnt
        if self.coreBindOrder == ROW_FIRST:
            self.mCoreIndx, self.nCoreIndx = divmod(localIdx, nCnt)
        else:
            nIndex, self.mCoreIndx = divmod(localIdx, mCnt)
            self.nCoreIndx = nIndex % nCnt
        if self.streamKType == STREAMK_BATCHDOUT:
            perSplit = DivCeil(batchDout, self.coreStreamK)
            splitCnt = DivCeil(batchDout, perSplit)
            if splitIdx >= splitCnt:
                return
            coreUse = batchDout - (splitCnt - 1) * perSplit if splitIdx == splitCnt - 1 else perSplit
            if coreUse == 0:
                return
            kCoreUse = self.singleShapeK
            self.singleCoreHo = self.singleShapeK // self.wo
            self.kCoreIndx = 0
            hoStartIdx = 0
            batchDouts = [splitIdx * perSplit + i for i in range(coreUse)]
        else:
            streamSingleShapeK = DivCeil(DivCeil(self.singleShapeK, self.coreStreamK), self.wo) * self.wo
            if streamSingleShapeK == 0:
                return
            splitCnt = DivCeil(self.singleShapeK, streamSingleShapeK)
            if splitIdx >= splitCnt:
                return
            kCoreUse = (self.singleShapeK - (splitCnt - 1) * streamSingleShapeK if splitIdx == splitCnt - 1
                        else streamSingleShapeK)
            if kCoreUse == 0:
                return
            kCoreUse = max(kCoreUse, self.wo)
            self.singleCoreHo = streamSingleShapeK // self.wo
            self.singleShapeK = streamSingleShapeK
            self.kCoreIndx = splitIdx
            hoStartIdx = splitIdx * streamSingleShapeK // self.wo
            batchDouts = range(batchDout)
        mCoreUse = mCoreTail if self.mCoreIndx == mCnt - 1 else self.singleShapeM
        nCoreUse = nCoreTail if self.nCoreIndx == nCnt - 1 else self.singleShapeN
        for batchDoutIndex in batchDouts:
            batchIdx, doutIdx = divmod(batchDoutIndex, self.dout)
            self.CalcOffset(batchIdx, doutIdx, groupIdx, dkIdx, True)
            self.ReCalDkCinSingleCoreShape(batchIdx, doutIdx, groupIdx, dkIdx)
            if self.singleShapeNInCurrentHo == 0 or self.singleShapeMInCurrentHo == 0:
                continue
            self.hoStartIdx = hoStartIdx
            self._iterate_block(mCoreUse, min(nCoreUse, self.singleShapeNInCurrentHo), kCoreUse)
