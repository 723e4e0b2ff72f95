"""The arch35 high-level API `Conv3DBackpropInput` (Convolution3DBackprop on __NPU_ARCH__ 3510), run on the simulator.

Usage, as the block driver Conv3dDxOswBlock calls it:

    dedx.Init(tiling)
    dedx.SetBatchCoreIdx(b); dedx.SetSingleShape(m, k, n, din); dedx.SetStartIdx(dinStart, mStart, cinStart, 0)
    dedx.SetOutBackprop(dy_gm[offA]); dedx.SetWeight(w_gm[offB])
    dedx.IterateAll(y_gm[offC])     # while Iterate(): VecPreProcess; GetTensorC; VecPostProcess
    dedx.End()

The GEMM per output depth din: M = dx pixels (Hi*Wi), N = Cin, K = (cout, kh, kw) in (cout1, hkwk, c0) order per
kernel plane kd. For every kd whose dy plane exists (dTmp = din + padFront - kd*dilationD divisible by strideD and
inside dout*strideD), the K loop (ComputeForKIter) loads A1/B1 (with preload into the second buffer when
al1/bl1Pbuffer > 1), then L0A by LoadDataWithStride (NZ) and L0B by LoadData2DV2, and accumulates into one L0C tile
(cmatrixInitVal only on the first K step of the first valid kd); GetTensorC Fixpipes the tile to y.

Ports convolution_3d_backprop/conv3d_bp_func_arch35.h (Init, InitParams, InitTque, SetSingleShape, SetStartIdx,
Iterate, Compute, ComputeForNoTilingHWk, UpdateL1ComputeInfo, UpdateCurHoSize, UpdateKComputeStatus,
UpdateFullLoadL1Status, IterateAll, GetTensorC, VecPostProcess, End), conv3d_bp_common_func.h (ComputeForKIter,
ComputeL1A/B, the preloads, ComputeL0A/B, CalFmapH, UpdateCurHoSizeCore), impl/conv_bp_input_sub_func.h (InitMmadParams,
CalcParamsMmad, MmadLocal, UpdateL1KParams) and FreeB1Tensor (conv3d_bp_kernel_split_func.h), for
kernelSplitMode 0, TPL_SPLIT_KERNEL_H (kernel_split.py) and TPL_SPLIT_KERNEL_HW
(kernel_split_hw.py, kernel_split_hw_out.py: the AIV sub-block 0 walks the tiles beside its AIC and re-interleaves
each H phase into y), groupMode ORIGIN and ENLARGE (the AIVs walk the K loop, AIV 0 builds the weight in the AIC's
L1: group_transdata.py, ComputeL0BForTBufData), loadB1Condition GM_TO_L1, NO_HK and
NO_HK_WK (large_attribute.py), without split-Dk (the other paths are refused by the entry), plus split-K through
UB: the AIV sub-block 0 walks the same blocks and tiles on its scalar unit (Compute and GetTensorC return at once
there) and casts the fp32 workspace after a block's last K segment (CalcInWorkspace, splitk_cast.py). The context
keeps the real ctx names (curMIdx_, baseUseM_, curHoIdx_, ...).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_FIX, PIPE_MTE3, GetSubBlockIdx, HardEvent, Mmad,
                                MmadParams, SetFlag, SetHF32Mode, TBuf, TPipe, TPosition, TQue, WaitFlag, api_call)
from ascend_sim.machine.dtypes import float32
from kernels.conv3d_backprop_input.kernel.arch35.c04_transdata import (MASK_REG_WIDTH, C04TransdataWeight, C04UbBufSize,
                                                                       InitC04Params)
from kernels.conv3d_backprop_input.kernel.arch35.group_transdata import (VECTOR_REG_WIDTH, GetB1Tbuf,
                                                                         GroupTransdataWeight, InitGroupCopyParams,
                                                                         SetEnlargeShape)
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split import (InitKernelSplitLists, InitParamsForKernelSplitH,
                                                                      RecalcStepForKernelSplit, SetKernelSplitParams,
                                                                      SetSingleShapeParams)
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split_hw import (
    CalcMatrixByteSizeForKernelSplitHW, InitFirstIterStateForKernelSplitHW, InitFullLoadFlagForKernelSplitHW,
    InitParamsForKernelSplitHW, IterateAllForKernelSplit, IterateForKernelSplit, UpdateFullLoadL1StatusForKernelSplitHW,
    UpdateLoadToB2ParamsKForKernelSplit)
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split_hw_out import Rearrange2Gm
from kernels.conv3d_backprop_input.kernel.arch35.large_attribute import ComputeForTilingHkWk, UpdateHkComputeStatus
from kernels.conv3d_backprop_input.kernel.arch35.load_a import (InitLoadToA2Params, LoadToA1, LoadToA2,
                                                                UpdateLoadToA2ParamsK, UpdateLoadToA2ParamsM)
from kernels.conv3d_backprop_input.kernel.arch35.load_b import (InitLoadToB2Params, LoadToB1, LoadToB2,
                                                                UpdateLoadToB2ParamsK, UpdateLoadToB2ParamsN)
from kernels.conv3d_backprop_input.kernel.arch35.splitk_cast import AccumulateSegmentOnWorkspace
from kernels.conv3d_backprop_input.kernel.arch35.store_c import LoadL0c2Gm
from kernels.conv3d_backprop_input.kernel.arch35.sync import (CrossCoreSetHead, CrossCoreSetHeadForMix,
                                                              CrossCoreWaitTail, CrossCoreWaitTailForMix,
                                                              CvCrossCoreSet, CvCrossCoreWait, NotifyVecAfterLoadToB2,
                                                              WaitForVecBeforeLoadToB2)
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, C04_COUT_SIZE, FLAG_FIXP_ID, FLAG_MTE2_VEC_ID,
                                                              TOTAL_UB_SIZE, TPL_GM_TO_L1, TPL_GM_TO_L1_NO_HK,
                                                              TPL_GM_TO_L1_NO_HK_WK, TPL_GROUP_MODE_ENLARGE,
                                                              TPL_GROUP_MODE_ORIGIN, TPL_NO_SPLIT_KERNEL,
                                                              TPL_SPLIT_KERNEL_H, TPL_SPLIT_KERNEL_HW, AlignUp,
                                                              AlignUpC0, CalFmapH, DivCeil, DivCeilC0, DivHkWk,
                                                              total_sizes)

_U32 = 0xFFFFFFFF


class Conv3DBackpropInput:
    """Conv3DBackpropInput<filter, input_size, dedy, y, ..., Conv3dConfig{loadB2Condition, kernelSplitMode,
    groupMode, loadB1Condition, enableC04}> on arch 3510. SrcAT = SrcBT = DstT = `dtype`; L0C is fp32."""

    def __init__(self, dtype, loadB2Condition: int, yFormat: str, filterFormat: str,
                 kernelSplitMode: int = TPL_NO_SPLIT_KERNEL, loadB1Condition: int = TPL_GM_TO_L1,
                 groupMode: int = TPL_GROUP_MODE_ORIGIN, enableC04Flag: bool = False):
        self.SrcAT = self.SrcBT = self.DstT = np.dtype(dtype)
        self.L0cT = float32
        self.IndexT = np.dtype(np.uint32 if self.SrcBT == float32 else np.uint16)  # the Gather index (intf_base)
        self.groupMode = groupMode
        self.enableC04Flag = enableC04Flag
        self.loadB2Condition = loadB2Condition
        self.kernelSplitMode = kernelSplitMode
        self.loadB1Condition = loadB1Condition
        self.yFormat = yFormat
        self.filterFormat = filterFormat
        self.kSCoutFullLoad_ = self.kSUseWorkSpace_ = 0  # SetKernelSplitParams, called before Init

    # ------------------------------------------------------------------------------------------------ Init
    @api_call
    def Init(self, tiling, hasBias: bool = False) -> None:
        self.hasBias_ = hasBias
        self.tiling_ = tiling
        self.curEnableFullLoad_ = tiling.enableFullLoad
        if tiling.hf32Flag:
            SetHF32Mode(True)
        self.InitParams()
        self.InitTque()
        CrossCoreSetHeadForMix(self)

    def InitParams(self) -> None:
        t = self.tiling_
        self.singleShapeDin_ = self.singleShapeM_ = self.singleShapeCin_ = self.singleShapeCout_ = 0
        # InitSingleShapeParams: the taps of one K row (NO_HK: one kernel row, NO_HK_WK: one tap)
        self.singleShapeHWk_ = {TPL_GM_TO_L1_NO_HK: t.wk, TPL_GM_TO_L1_NO_HK_WK: 1}.get(self.loadB1Condition, t.hkWk)
        self.l0cPingPongFlag_ = 1
        self.isFirstIter_ = True
        self.curStepKa_, self.curStepKb_ = t.stepKa, t.stepKb
        self.enableSplitDk_ = t.singleIterateDk != t.dk
        self.enableSplitK_ = bool(t.enableSplitK)
        self.useUbAccumForSplitK_ = bool(t.useUbAccumForSplitK)
        InitKernelSplitLists(self)
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            InitParamsForKernelSplitHW(self)
        elif self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            InitParamsForKernelSplitH(self)
        else:  # InitParamsForNormal
            if self.enableC04Flag:  # the A1 fmap holds 4 channels (the small-C0 layout)
                self.channelSize_ = C04_COUT_SIZE
            else:
                curChannelSize = DivHkWk(self, self.curStepKa_ * t.baseK)
                self.channelSize_ = min(curChannelSize, AlignUpC0(self, t.singleCoreCout))
            self.curHoSize_ = CalFmapH(self, min(t.baseM, t.singleCoreM))
        self.hoWo_ = t.ho * t.wo
        self.doHoWo_ = t.dout * self.hoWo_
        self.hiWi_ = t.hi * t.wi
        self.diHiWi_ = t.di * self.hiWi_
        self.realWoSize_ = t.wo
        if self.enableC04Flag and ASCEND_IS_AIV():
            InitC04Params(self)
        # InitFullLoadFlag (GM_TO_L1)
        self.isA1FullLoadFlag_ = False
        baseB1Cond = t.baseN >= t.singleCoreCin and t.enlarge == 1
        if self.loadB1Condition != TPL_GM_TO_L1:
            self.isB1FullLoadFlag_ = False
        elif self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            InitFullLoadFlagForKernelSplitHW(self)
        elif self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            self.isB1FullLoadFlag_ = (baseB1Cond and (t.dk == 1 or t.dout == 1)
                                      and t.baseK * self.curStepKb_ >= t.singleCoreCout * self.splitHkWkList_[0])
        else:
            self.isB1FullLoadFlag_ = (baseB1Cond
                                      and t.baseK * self.curStepKb_ >= t.singleCoreCout * self.singleShapeHWk_
                                      and t.bl1Pbuffer == 1 and t.singleIterateDk == 1)
        self.hoExpand_ = t.ho if self.kernelSplitMode != TPL_NO_SPLIT_KERNEL else t.hoExpand
        self.l0PingPongFlag_ = 0
        l0a, l0b, _ = total_sizes()
        self.l0aPingPongAddr_ = (l0a >> 1) // self.SrcAT.itemsize
        self.l0bPingPongAddr_ = (l0b >> 1) // self.SrcBT.itemsize
        self.enableL0PingPong_ = (t.al0Pbuffer - 1) & (t.bl0Pbuffer - 1)
        self.mmad_ = MmadParams()
        InitLoadToA2Params(self)
        InitLoadToB2Params(self)
        # InitParamsPart2
        self.mIter_ = self.nIter_ = self.kIter_ = self.tailM_ = self.tailN_ = self.tailK_ = 0
        self.curMIdx_ = self.curNIdx_ = self.curLoadKbl1_ = self.curDinIdx_ = self.curDkIdx_ = 0
        self.kIterStepKaTail = self.kIterStepKbTail = self.stepKaTail = self.stepKbTail = 0
        self.curHoIdx_ = self.baseB1Offset_ = self.blockBaseN_ = 0
        self.curHkIdx_ = self.curWkIdx_ = self.curWoLeftIdx_ = self.curWoRightIdx_ = 0
        self.baseUseM_ = self.baseUseN_ = self.baseUseK_ = 0
        self.curDinStartIdx_ = self.curHoStartIdx_ = self.curCinStartIdx_ = self.curCoutStartIdx_ = 0
        self.curMStartIdx_ = self.curBatchCoreIdx_ = 0
        self.isLoadA1_ = self.isLoadB1_ = True
        self.isFreeA1_ = self.isFreeB1_ = False
        self.needComputeFlag_ = True
        self.isLastKSegment_ = False
        self.realMSize_ = 0
        self.dstB2Stride_ = 0
        self.cacheA1Buf_ = self.cacheB1Buf_ = None
        self.groupIterIdx_ = self.curEnlarge = self.curEnlargeCin1_ = 0
        self.c04LoadToB1IterIdx_ = 0

    def VecFillsB1(self) -> bool:
        """ENLARGE and C04: the AIV builds the weight in the AIC's L1 (b1UbPing_ / b1UbPong_), so it walks the K
        loop too; otherwise the AIC loads it from GM into its inQueL1B_."""
        return self.groupMode == TPL_GROUP_MODE_ENLARGE or self.enableC04Flag

    def CalcMatrixByteSize(self) -> tuple[int, int]:
        t = self.tiling_
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            return CalcMatrixByteSizeForKernelSplitHW(self)
        hoSize = min(self.hoExpand_, self.curHoSize_)
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            channels = self.channelSize_  # sized for the largest sub-kernel
        elif self.enableC04Flag:
            channels = C04_COUT_SIZE
        else:
            channels = DivHkWk(self, self.curStepKa_ * t.baseK)
        if self.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:
            a = t.baseM * channels * self.SrcAT.itemsize  # one dy row window, not whole wo rows
        else:
            a = hoSize * t.wo * t.strideW * channels * self.SrcAT.itemsize
        b = t.baseN * self.curStepKb_ * t.baseK * self.SrcBT.itemsize
        return a, b

    def InitTque(self) -> None:
        t = self.tiling_
        aMatrixByteSize, bMatrixByteSize = self.CalcMatrixByteSize()
        self.pipe_ = TPipe()
        self.inQueL1A_, self.inQueL1B_ = TQue(TPosition.A1, 2), TQue(TPosition.B1, 2)  # depth 2: preload
        self.l0cPing_, self.l0cPong_ = TQue(TPosition.CO1, 1), TQue(TPosition.CO1, 1)
        self.l0aBuf_, self.l0bBuf_ = TBuf(TPosition.A2), TBuf(TPosition.B2)
        self.vecBuf_ = TBuf(TPosition.VECIN)
        if self.VecFillsB1():  # on both cores: the AIV's B1 addresses are its AIC's (the TPipes allocate alike)
            self.b1UbPing_, self.b1UbPong_ = TBuf(TPosition.B1), TBuf(TPosition.B1)
            self.pipe_.InitBuffer(self.b1UbPing_, bMatrixByteSize)
            if t.bl1Pbuffer > 1:
                self.pipe_.InitBuffer(self.b1UbPong_, bMatrixByteSize)
        if ASCEND_IS_AIV():
            self.InitUbByteSize()
            return
        if not self.VecFillsB1():
            self.pipe_.InitBuffer(self.inQueL1B_, t.bl1Pbuffer, bMatrixByteSize)
        self.pipe_.InitBuffer(self.inQueL1A_, t.al1Pbuffer, aMatrixByteSize)
        l0a, l0b, l0c = total_sizes()
        if t.cl0Pbuffer > 1:
            self.pipe_.InitBuffer(self.l0cPing_, 1, l0c >> 1)
            self.pipe_.InitBuffer(self.l0cPong_, 1, l0c >> 1)
        else:
            self.pipe_.InitBuffer(self.l0cPing_, 1, l0c)
        self.pipe_.InitBuffer(self.l0aBuf_, l0a)
        self.pipe_.InitBuffer(self.l0bBuf_, l0b)
        self.InitUbByteSize()

    def InitUbByteSize(self) -> None:
        """The UB (impl/conv_bp_input_sub_func_ub_init.h): the whole UB of AIV sub-block 0 for split-K's cast and
        the HW split's re-interleave (without the workspace the HW split's AIC takes it too: its Fixpipe writes
        sub-block 0's UB); for ENLARGE, on each AIV, two halves (the ND and the NZ weight, less one register) and
        the gather index; for C04, on each AIV, the same two halves less one register, one mask register and one
        block, then the index and the mask."""
        if ASCEND_IS_AIV() and self.enableC04Flag:
            self.ndVecBuf_, self.nzVecBuf_ = TBuf(TPosition.VECIN), TBuf(TPosition.VECOUT)
            self.idxVecBuf_, self.maskVecBuf_ = TBuf(TPosition.VECCALC), TBuf(TPosition.VECCALC)
            self.pipe_.InitBuffer(self.ndVecBuf_, C04UbBufSize())
            self.pipe_.InitBuffer(self.nzVecBuf_, C04UbBufSize())
            self.pipe_.InitBuffer(self.idxVecBuf_, VECTOR_REG_WIDTH)
            self.pipe_.InitBuffer(self.maskVecBuf_, MASK_REG_WIDTH)
            return
        if ASCEND_IS_AIV() and self.groupMode == TPL_GROUP_MODE_ENLARGE and not self.useUbAccumForSplitK_:
            GROUP_UB_BUF_SIZE = (TOTAL_UB_SIZE() - VECTOR_REG_WIDTH) // 2
            self.ndVecBuf_, self.nzVecBuf_ = TBuf(TPosition.VECIN), TBuf(TPosition.VECOUT)
            self.idxVecBuf_ = TBuf(TPosition.VECCALC)
            self.pipe_.InitBuffer(self.ndVecBuf_, GROUP_UB_BUF_SIZE)
            self.pipe_.InitBuffer(self.nzVecBuf_, GROUP_UB_BUF_SIZE)
            self.pipe_.InitBuffer(self.idxVecBuf_, VECTOR_REG_WIDTH)
            InitGroupCopyParams(self)
            return
        if GetSubBlockIdx() != 0:
            return
        hw = self.kernelSplitMode == TPL_SPLIT_KERNEL_HW
        if ASCEND_IS_AIV() and (self.useUbAccumForSplitK_ or hw):
            self.pipe_.InitBuffer(self.vecBuf_, TOTAL_UB_SIZE())
        elif ASCEND_IS_AIC() and hw and not self.kSUseWorkSpace_:
            self.pipe_.InitBuffer(self.vecBuf_, TOTAL_UB_SIZE())

    # --------------------------------------------------------------------------------------------- setters
    @api_call
    def SetWeight(self, weight) -> None:
        self.weightGlobal_ = weight

    @api_call
    def SetOutBackprop(self, outBackprop) -> None:
        self.outBackPropGlobal_ = outBackprop

    @api_call
    def SetBatchCoreIdx(self, batchCoreIdx: int) -> None:
        self.curBatchCoreIdx_ = batchCoreIdx

    @api_call
    def SetSingleShape(self, singleShapeM: int, singleShapeK: int, singleShapeN: int, singleShapeD: int) -> None:
        t = self.tiling_
        self.singleShapeDin_ = singleShapeD
        if self.singleShapeM_ != singleShapeM:
            self.singleShapeM_ = singleShapeM
            self.mIter_ = DivCeil(singleShapeM, t.baseM)
            self.tailM_ = singleShapeM - (self.mIter_ - 1) * t.baseM
        if self.singleShapeCin_ != singleShapeN:
            self.singleShapeCin_ = singleShapeN
            self.nIter_ = DivCeil(singleShapeN, t.baseN)
            self.tailN_ = singleShapeN - (self.nIter_ - 1) * t.baseN
        # kernel split: the sub-kernel (and so K) may change from block to block
        if self.kernelSplitMode != TPL_NO_SPLIT_KERNEL or self.singleShapeCout_ * self.singleShapeHWk_ != singleShapeK:
            self.singleShapeCout_ = singleShapeK // self.singleShapeHWk_
            self.InitStepKParams()
        if self.groupMode == TPL_GROUP_MODE_ENLARGE:
            SetEnlargeShape(self)

    def InitStepKParams(self) -> None:
        t = self.tiling_
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            RecalcStepForKernelSplit(self)  # the sub-kernel order changes with the pads: its steps too
        if self.kernelSplitMode != TPL_NO_SPLIT_KERNEL:  # only the sub-kernel's taps: no zero products in K
            tmpSingleCoreK = (t.cout1 if t.group == 1 else t.cout1G) * self.splitHkWkC0List_[self.splitIndex_]
        elif self.enableC04Flag:  # 4 couts a tap, the tail of K not aligned to c0
            tmpSingleCoreK = self.singleShapeHWk_ * C04_COUT_SIZE
        else:
            tmpSingleCoreK = DivCeilC0(self, self.singleShapeCout_) * self.singleShapeHWk_ * t.c0
        self.kIter_ = DivCeil(tmpSingleCoreK, t.baseK)
        self.tailK_ = tmpSingleCoreK - (self.kIter_ - 1) * t.baseK
        self.kIterStepKaTail = (DivCeil(self.kIter_, self.curStepKa_) - 1) * self.curStepKa_
        self.kIterStepKbTail = (DivCeil(self.kIter_, self.curStepKb_) - 1) * self.curStepKb_
        self.stepKaTail = self.kIter_ - self.kIterStepKaTail
        self.stepKbTail = self.kIter_ - self.kIterStepKbTail

    @api_call
    def SetStartIdx(self, curDinStartIdx: int, curMStartIdx: int, curCinStartIdx: int, curCoutStartIdx: int) -> None:
        t = self.tiling_
        self.curDinStartIdx_ = curDinStartIdx
        self.curMStartIdx_ = curMStartIdx
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            self.curBackPropPadUp_ = t.backpropPadUp >> 1
            self.curHoStartIdx_ = curMStartIdx // self.splitWi_ - self.curBackPropPadUp_
        else:
            padUp = self.curBackPropPadUp_ if self.kernelSplitMode == TPL_SPLIT_KERNEL_H else t.backpropPadUp
            self.curHoStartIdx_ = curMStartIdx // t.wi - padUp
        self.curCinStartIdx_ = curCinStartIdx
        self.curCoutStartIdx_ = curCoutStartIdx

    @api_call
    def SetKernelSplitParams(self, kSCoutFullLoad: int, kSUseWorkSpace: int) -> None:
        SetKernelSplitParams(self, kSCoutFullLoad, kSUseWorkSpace)

    @api_call
    def SetSingleShapeParams(self, curSplitHk: int, curBackpropPadUp: int) -> None:
        SetSingleShapeParams(self, curSplitHk, curBackpropPadUp)

    @api_call
    def FreeB1Tensor(self) -> None:
        """Release a weight kept in L1 across blocks (full load with dk == 1)."""
        t = self.tiling_
        if ASCEND_IS_AIV():
            return  # the vector core has no L1 (the source leaves this to the queue being empty there)
        if self.isLoadB1_ and not self.isFreeB1_:
            return  # nothing was loaded in this round
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            keep = self.isB1FullLoadFlag_ and t.dk == 1
        elif self.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            return  # the H split keeps no weight across blocks
        else:
            # C04 and groups > 1 never keep the weight between rounds
            keep = (self.isB1FullLoadFlag_ and t.dk == 1 and not self.enableC04Flag and self.curEnableFullLoad_
                    and t.group == 1)
        if keep:
            self.isLoadB1_ = True
            self.isFreeB1_ = False
            self.inQueL1B_.FreeTensor(self.cacheB1Buf_)

    # ----------------------------------------------------------------------------------------- iteration
    @api_call
    def Iterate(self, enPartialSum: bool = False, hasBias: bool = False) -> bool:
        """One baseM x baseN tile of dx for one output depth, in L0C; False when the block is done."""
        if self.isFirstIter_:
            self.InitFirstIterState()
        else:
            if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW and IterateForKernelSplit(self):
                # ProcessKernelSplitIteration: the next sub-kernel of the same tile
                self.UpdateFullLoadL1Status()
                if self.tiling_.hk != 1:
                    self.Compute()
                return True
            if not self.AdvanceIterIndices():
                return False
        self.UpdateL1ComputeInfo()
        self.Compute()
        return True

    def InitFirstIterState(self) -> None:
        t = self.tiling_
        self.groupIterIdx_ = 0
        self.needComputeFlag_ = True
        self.curMIdx_ = self.curNIdx_ = 0
        self.curDinIdx_ = self.curDinStartIdx_
        self.curDkIdx_ = 0
        self.curHoIdx_ = self.curHoStartIdx_
        self.isFirstIter_ = False
        self.isLoadA1_ = True
        self.isFreeA1_ = False
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            InitFirstIterStateForKernelSplitHW(self)
        elif (not self.isB1FullLoadFlag_ or t.dk > 1 or self.enableC04Flag or not self.curEnableFullLoad_
              or t.group != 1):
            self.isLoadB1_ = True
            self.isFreeB1_ = False

    def AdvanceIterIndices(self) -> bool:
        """M fastest, then N, then the output depth."""
        self.curMIdx_ += 1
        if self.curMIdx_ >= self.mIter_:
            self.curMIdx_ = 0
            self.curNIdx_ += 1
            if self.curNIdx_ >= self.nIter_:
                self.curNIdx_ = 0
                self.curDinIdx_ += 1
                if self.curDinIdx_ >= self.curDinStartIdx_ + self.singleShapeDin_:
                    return False
        return True

    def UpdateL1ComputeInfo(self) -> None:
        t = self.tiling_
        self.baseUseM_ = self.tailM_ if self.curMIdx_ + 1 == self.mIter_ else t.baseM
        if self.kernelSplitMode == TPL_NO_SPLIT_KERNEL:
            Hd = (t.hk - 1) * t.dilationH + 1
            Wd = (t.wk - 1) * t.dilationW + 1
            backpropPadDown = max(t.backpropPadDown, 255)  # the Load3D's padList[3] is 255
            Hp = self.hoExpand_ + t.backpropPadUp + backpropPadDown
            Wp = (t.wo - 1) * t.strideW + 1 + t.backpropPadLeft + t.backpropPadRight
            M = (Hp - Hd + 1) * (Wp - Wd + 1)
            if M < self.baseUseM_ and self.mIter_ == 1:
                self.baseUseM_ = M
        self.baseUseN_ = self.tailN_ if self.curNIdx_ + 1 == self.nIter_ else t.baseN
        self.needComputeFlag_ = True
        self.UpdateCurHoSize()
        self.UpdateKComputeStatus()
        self.UpdateFullLoadL1Status()

    def UpdateCurHoSize(self) -> None:
        t = self.tiling_
        curWi = self.splitWi_ if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW else t.wi
        curMIdx = self.curMStartIdx_ + self.curMIdx_ * t.baseM
        curHiIdx, curWiIdx = divmod(curMIdx, curWi)
        self.load3d_.mStartPt = curWiIdx
        hiCal = DivCeil(self.baseUseM_ + curWiIdx, curWi)
        if self.kernelSplitMode != TPL_NO_SPLIT_KERNEL:
            self.curHoIdx_ = curHiIdx - self.curBackPropPadUp_
            hk = self.splitHkList_[self.splitIndex_]
        else:
            self.curHoIdx_ = curHiIdx - t.backpropPadUp
            hk = t.hk
        self.UpdateCurHoSizeCore(self.curHoIdx_ + hiCal + (hk - 1) * t.dilationH)

    def UpdateCurHoSizeCore(self, endHoIdx: int) -> None:
        # uint32_t in the source: a window wholly inside the top pad wraps around (and then loads zeros only)
        endHoIdx &= _U32
        if self.curHoIdx_ < self.hoExpand_ and endHoIdx > 0:
            self.curHoSize_ = min(endHoIdx, self.hoExpand_) - max(self.curHoIdx_, 0)
        else:
            self.needComputeFlag_ = False
            self.curHoSize_ = 0

    def CalcCurDoutIdx(self, kd: int) -> int | None:
        """The dy plane kernel plane kd reads for the current output depth, or None when it reads none."""
        t = self.tiling_
        dTmp = self.curDinIdx_ + t.padFront - kd * t.dilationD
        if dTmp < 0 or (t.strideD > 1 and dTmp % t.strideD > 0) or dTmp >= t.dout * t.strideD:
            return None
        return dTmp // t.strideD if t.strideD > 1 else dTmp

    def UpdateKComputeStatus(self) -> None:
        if not self.needComputeFlag_:
            return
        kds = range(self.curDkIdx_, self.curDkIdx_ + self.tiling_.singleIterateDk)
        self.needComputeFlag_ = any(self.CalcCurDoutIdx(kd) is not None for kd in kds)
        if self.loadB1Condition != TPL_GM_TO_L1:
            UpdateHkComputeStatus(self)

    def IsLastMNIter(self) -> bool:
        return self.curMIdx_ == self.mIter_ - 1 and self.curNIdx_ == self.nIter_ - 1

    def UpdateFullLoadL1Status(self) -> None:
        t = self.tiling_
        if not self.isB1FullLoadFlag_ and not self.isA1FullLoadFlag_:
            return
        isLastMNIter = self.IsLastMNIter()
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            UpdateFullLoadL1StatusForKernelSplitHW(self, isLastMNIter)
            return
        isLastDIter = ((t.dk == 1 and self.curDinIdx_ == self.curDinStartIdx_ + self.singleShapeDin_ - 1)
                       or t.dk > 1)
        suppressB1Free = (self.isB1FullLoadFlag_ and t.dk == 1 and self.curEnableFullLoad_ and not self.enableC04Flag
                          and t.group == 1)
        self.isFreeB1_ = isLastMNIter and isLastDIter and not suppressB1Free

    # ------------------------------------------------------------------------------------------- compute
    def Compute(self) -> None:
        if not self.needComputeFlag_:
            self.FreeFullLoadL1Tensor()  # NoNeedComputeHandle without bias
            return
        aic = ASCEND_IS_AIC()
        if not aic and not self.VecFillsB1():
            return  # every step of the K loop is the cube's (ASCEND_IS_AIC_SCALAR / _SHOULD_RETURN)
        que = l0c = None
        if aic:  # ComputeStart
            self.InitMmadParams()
            UpdateLoadToA2ParamsM(self)
            UpdateLoadToB2ParamsN(self)
            que = self.l0cPing_ if self.l0cPingPongFlag_ else self.l0cPong_
            l0c = que.AllocTensor(self.L0cT)
        CrossCoreSetHead(self)
        if self.loadB1Condition == TPL_GM_TO_L1:
            l0PingPongFlag = self.ComputeForNoTilingHWk(l0c, self.l0PingPongFlag_)
        else:
            l0PingPongFlag = ComputeForTilingHkWk(self, l0c, self.l0PingPongFlag_)
        if aic:  # ComputeEnd
            que.EnQue(l0c)
        self.l0PingPongFlag_ = l0PingPongFlag
        CrossCoreWaitTail(self)

    def FreeFullLoadL1Tensor(self) -> None:
        if not ASCEND_IS_AIC():
            return
        if self.isB1FullLoadFlag_ and self.isFreeB1_ and not self.isLoadB1_:
            self.inQueL1B_.FreeTensor(self.cacheB1Buf_)
            self.isLoadB1_ = True
        if self.isA1FullLoadFlag_ and self.isFreeA1_ and not self.isLoadA1_:
            self.inQueL1A_.FreeTensor(self.cacheA1Buf_)
            self.isLoadA1_ = True

    def InitMmadParams(self) -> None:
        p = self.mmad_
        p.m = self.baseUseM_
        if self.curMIdx_ == self.mIter_ - 1:
            p.m = DivCeil(self.baseUseM_, BLOCK_CUBE) * BLOCK_CUBE
        p.k = self.tiling_.baseK
        p.n = self.baseUseN_
        p.unitFlag = 0
        p.kDirectionAlign = False
        p.cmatrixSource = False
        p.cmatrixInitVal = True

    def ComputeForNoTilingHWk(self, l0c, l0PingPongFlag: int) -> int:
        isFirstDk = self.curDkIdx_ == 0
        for curInnerKdIdx in range(self.curDkIdx_, self.curDkIdx_ + self.tiling_.singleIterateDk):
            self.groupIterIdx_ = 0
            curDoutIdx = self.CalcCurDoutIdx(curInnerKdIdx)
            if curDoutIdx is None:
                continue
            l0PingPongFlag = self.ComputeForKIter(l0c, curInnerKdIdx, curDoutIdx, isFirstDk, l0PingPongFlag)
            isFirstDk = False
        return l0PingPongFlag

    def UpdateL1KParams(self, kIdx: int, curStepKa: int, curStepKb: int) -> tuple[int, int]:
        t = self.tiling_
        # C04: the K tail need not be a multiple of c0, Mmad's K is (the weight's extra rows are zero)
        tailMmadK = AlignUp(self.tailK_, t.c0) if self.enableC04Flag else self.tailK_
        if self.kIter_ == 1:
            self.baseUseK_ = self.load3d_.kExtension = self.curLoadKbl1_ = self.tailK_
            self.mmad_.k = tailMmadK
            return self.stepKaTail, self.stepKbTail
        if kIdx == 0:
            self.curLoadKbl1_ = self.curStepKb_ * t.baseK
            self.baseUseK_ = self.load3d_.kExtension = self.mmad_.k = t.baseK
        if kIdx + 1 == self.kIter_:
            self.baseUseK_ = self.load3d_.kExtension = self.tailK_
            self.mmad_.k = tailMmadK
        if kIdx == self.kIterStepKaTail:
            curStepKa = self.stepKaTail
        if kIdx == self.kIterStepKbTail:
            curStepKb = self.stepKbTail
            self.curLoadKbl1_ = (curStepKb - 1) * t.baseK + self.tailK_
        return curStepKa, curStepKb

    def ComputeForKIter(self, l0c, curInnerKdIdx: int, curDoutIdx: int, isFirstDk: bool,
                        l0PingPongFlag: int) -> int:
        t = self.tiling_
        curStepKa, curStepKb = self.curStepKa_, self.curStepKb_
        l0aKIdx = l0bKIdx = 0
        aic = ASCEND_IS_AIC()
        for kIdx in range(self.kIter_):
            curStepKa, curStepKb = self.UpdateL1KParams(kIdx, curStepKa, curStepKb)
            # ComputeL1A / ComputeL1B, then the preloads of the next L1 step into the second buffer
            if aic:
                LoadToA1(self, kIdx, curDoutIdx, kIdx == 0 if t.al1Pbuffer > 1 else l0aKIdx == 0)
            self.LoadToB1(kIdx, curInnerKdIdx, kIdx == 0 if t.bl1Pbuffer > 1 else l0bKIdx == 0)
            if t.al1Pbuffer > 1 and aic:
                LoadToA1(self, self.curStepKa_ + kIdx, curDoutIdx, l0aKIdx == 0)
            if t.bl1Pbuffer > 1:
                self.LoadToB1(self.curStepKb_ + kIdx, curInnerKdIdx, l0bKIdx == 0)
            l0b = None
            if aic:
                WaitFlag(HardEvent.M_MTE1, l0PingPongFlag & 1)
                l0a = self.l0aBuf_.Get(self.SrcAT)
                l0b = self.l0bBuf_.Get(self.SrcBT)
                if l0PingPongFlag:
                    l0a, l0b = l0a[self.l0aPingPongAddr_], l0b[self.l0bPingPongAddr_]
                UpdateLoadToA2ParamsK(self, l0aKIdx)
                self.ComputeL0A(l0aKIdx, curStepKa, l0a)
            if self.kernelSplitMode != TPL_SPLIT_KERNEL_HW:
                UpdateLoadToB2ParamsK(self, l0bKIdx)
            elif self.kSCoutFullLoad_:
                UpdateLoadToB2ParamsKForKernelSplit(self, l0bKIdx)
            if self.VecFillsB1():
                self.ComputeL0BForTBufData(l0bKIdx, curStepKb, l0b, kIdx)
            else:
                self.ComputeL0B(l0bKIdx, curStepKb, l0b)
            if aic:
                SetFlag(HardEvent.MTE1_M, l0PingPongFlag)
                WaitFlag(HardEvent.MTE1_M, l0PingPongFlag)
                self.mmad_.cmatrixInitVal = kIdx == 0 and isFirstDk  # CalcParamsMmad
                Mmad(l0c, l0a, l0b, self.mmad_)
                SetFlag(HardEvent.M_MTE1, l0PingPongFlag)
                l0PingPongFlag ^= self.enableL0PingPong_
            l0aKIdx = 0 if l0aKIdx + 1 == curStepKa else l0aKIdx + 1  # CalcL0KIdx
            l0bKIdx = 0 if l0bKIdx + 1 == curStepKb else l0bKIdx + 1
        return l0PingPongFlag

    def LoadToB1(self, kIdx: int, curDkIdx: int, loadFlag: bool) -> None:
        """LoadToB1: ENLARGE's and C04's AIVs build the weight in L1 (both cores count groupIterIdx_ /
        c04LoadToB1IterIdx_); otherwise the AIC loads it from GM (load_b.py)."""
        if not self.VecFillsB1():
            LoadToB1(self, kIdx, curDkIdx, loadFlag)
            return
        if not loadFlag or kIdx >= self.kIter_ or (self.isB1FullLoadFlag_ and not self.isLoadB1_):
            return
        if self.groupMode == TPL_GROUP_MODE_ENLARGE:
            if ASCEND_IS_AIV():
                GroupTransdataWeight(self, kIdx, curDkIdx)
            self.groupIterIdx_ += 1
        else:
            if ASCEND_IS_AIV():
                C04TransdataWeight(self, kIdx, curDkIdx)
            self.c04LoadToB1IterIdx_ += 1

    def ComputeL0A(self, l0aKIdx: int, curStepKa: int, l0a) -> None:
        """ComputeL0A, and ComputeL0AForKernelSplit (the HW split may keep A1 across its sub-kernels)."""
        full = self.isA1FullLoadFlag_
        if l0aKIdx == 0 and (not full or self.isLoadA1_):
            self.isLoadA1_ = False
            self.cacheA1Buf_ = self.inQueL1A_.DeQue(self.SrcAT)
        LoadToA2(self, self.cacheA1Buf_, l0a)
        if l0aKIdx == curStepKa - 1 and (not full or self.isFreeA1_):
            self.isLoadA1_ = True
            self.inQueL1A_.FreeTensor(self.cacheA1Buf_)

    def ComputeL0B(self, l0bKIdx: int, curStepKb: int, l0b) -> None:
        """ComputeL0BForTQueData."""
        full = self.isB1FullLoadFlag_
        if l0bKIdx == 0 and (not full or self.isLoadB1_):
            self.isLoadB1_ = False
            self.cacheB1Buf_ = self.inQueL1B_.DeQue(self.SrcBT)
        LoadToB2(self, self.cacheB1Buf_, l0bKIdx, l0b)
        if l0bKIdx == curStepKb - 1 and (not full or self.isFreeB1_):
            self.isLoadB1_ = True
            self.inQueL1B_.FreeTensor(self.cacheB1Buf_)

    def ComputeL0BForTBufData(self, l0bKIdx: int, curStepKb: int, l0b, kIdx: int) -> None:
        """The weight the AIV put in b1UbPing_ / b1UbPong_: the AIC waits for it, loads L0B, gives it back."""
        full = self.isB1FullLoadFlag_
        aic = ASCEND_IS_AIC()
        if l0bKIdx == 0 and (not full or self.isLoadB1_):
            self.isLoadB1_ = False
            if aic:
                WaitForVecBeforeLoadToB2(self)
            self.cacheB1Buf_ = GetB1Tbuf(self, kIdx)
        if aic:
            LoadToB2(self, self.cacheB1Buf_, l0bKIdx, l0b)
        if l0bKIdx == curStepKb - 1 and (not full or self.isFreeB1_):
            self.isLoadB1_ = True
            if aic:
                NotifyVecAfterLoadToB2(self)

    # -------------------------------------------------------------------------------------------- output
    @api_call
    def IterateAll(self, output, enAtomic: int = 0) -> None:
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            IterateAllForKernelSplit(self, output, enAtomic)
        elif self.enableSplitK_:
            self.CalcSplitK_(output)
        else:
            while self.Iterate():
                self.GetTensorC(output, enAtomic)
        self.isFirstIter_ = True

    def CalcSplitK_(self, output) -> None:
        """Split-K over cout in kSegment pieces: the first piece writes, the others add (fp32: atomically into y;
        16/8-bit: atomically into the fp32 workspace, which the AIV casts into y after the last piece)."""
        t = self.tiling_
        self.isLastKSegment_ = False
        firstTile = True
        for kIdx in range(self.curCoutStartIdx_, t.coutG, t.kSegment):
            self.curCoutStartIdx_ = kIdx
            self.UpdateSplitKTail(kIdx)
            enAtomic = 0 if kIdx == 0 else 1
            iterCnt = 0
            while self.Iterate():
                self.realMSize_ = t.singleCoreM if iterCnt else self.baseUseM_
                iterCnt += 1
                if firstTile and self.useUbAccumForSplitK_ and ASCEND_IS_AIC():
                    CvCrossCoreWait(FLAG_FIXP_ID)  # [port] the AIV has read the slice of the last block
                    firstTile = False
                self.GetTensorC(output, enAtomic)
            self.VecPostProcess(output, enAtomic)
            self.isFirstIter_ = True
        self.CalcInWorkspace(output)

    def VecPostProcess(self, output, enAtomic: int = 0) -> None:
        """HW split: AIV sub-block 0 re-interleaves the H phase into y. After a K segment: the last one tells the
        AIV its workspace tiles are complete (FLAG_MTE2_VEC_ID)."""
        if self.kernelSplitMode == TPL_SPLIT_KERNEL_HW and ASCEND_IS_AIV() and GetSubBlockIdx() == 0:
            Rearrange2Gm(self, output)
        if (self.useUbAccumForSplitK_ and ASCEND_IS_AIC() and self.isLastKSegment_ and self.needComputeFlag_):
            CvCrossCoreSet(PIPE_FIX, FLAG_MTE2_VEC_ID)

    def CalcInWorkspace(self, output) -> None:
        """The AIV's cast of the block's workspace into y, once the AIC's last segment is there."""
        if not self.useUbAccumForSplitK_ or not ASCEND_IS_AIV():
            return
        if self.needComputeFlag_:
            CvCrossCoreWait(FLAG_MTE2_VEC_ID)
            AccumulateSegmentOnWorkspace(self, output)
        CvCrossCoreSet(PIPE_MTE3, FLAG_FIXP_ID)  # [port] the slice may be overwritten (sync.py)

    def UpdateSplitKTail(self, kIdx: int) -> None:
        t = self.tiling_
        if kIdx + t.kSegment < t.coutG:
            return
        self.isLastKSegment_ = True
        self.singleShapeCout_ = t.kSegmentTail
        self.InitStepKParams()

    @api_call
    def GetTensorC(self, output, enAtomic: int = 0) -> None:
        LoadL0c2Gm(self, output, enAtomic)

    @api_call
    def End(self) -> None:
        CrossCoreWaitTailForMix(self)
        if ASCEND_IS_AIC():  # the AIV never bound these queues (nothing to wait for there)
            self.inQueL1A_.FreeAllEvent()
            if not self.VecFillsB1():  # ENLARGE / C04 never bind it (their B1 is two TBufs): nothing pending
                self.inQueL1B_.FreeAllEvent()
            self.l0cPing_.FreeAllEvent()
            if self.tiling_.cl0Pbuffer > 1:
                self.l0cPong_.FreeAllEvent()
        if self.tiling_.hf32Flag:
            SetHF32Mode(False)
