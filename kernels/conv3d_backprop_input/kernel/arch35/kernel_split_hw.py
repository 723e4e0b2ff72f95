"""Kernel split along H and W (kernelSplitMode TPL_SPLIT_KERNEL_HW): the API side of Conv3dDxKsBlock.

The tiling sends it stride 2x2 with a square kernel of 1 to 4 taps. The dx pixels (hi, wi) of one parity of (hi +
padUp, wi + padLeft) take only the kernel taps of that parity: four sub-kernels of splitHk x splitWk taps (4x4: four
2x2; 3x3: 2x2, 2x1, 1x2, 1x1), each a stride-1 convolution of the dense dy, whose output is one pixel in four of
dx. Per basic tile (M = ceil(hi/2) * ceil(wi/2) pixels of one sub-kernel) the API runs the four sub-kernels in the
order rearrangeW fastest, then rearrangeH (IterateForKernelSplit): each Compute is a K loop over the sub-kernel's
taps only. The AIC Fixpipes each result into its AIV's UB or its workspace slice, the two W phases of one H phase
side by side; after the second W phase AIV sub-block 0 interleaves them into dx rows (kernel_split_hw_out.py,
Rearrange2Gm).

Ports convolution_3d_backprop/conv3d_bp_kernel_split_func.h (CalcSubKernelBackpadBegin/End,
CalcSubKernelPadListForKernelSplit, InitParamsForKernelSplitHW, CalFmapHForKernelSplitInner, UpdateHoSizeForKernelSplit,
UpdateHoIdxForKernelSplit, RecalcBaseUseMForKernelSplit, IterateForKernelSplit, the cross-core pair
CrossCoreCWaitVForKS / CrossCoreCSeitVForKS / CrossCoreVWaitCForKS / CrossCoreVSeitCForKS, IterateAllForKernelSplit)
and the TPL_SPLIT_KERNEL_HW branches of conv3d_bp_func_arch35.h (InitFullLoadFlag, CalcMatrixByteSize,
UpdateFullLoadL1Status with CheckFreeA1ForKernelSplit, InitFirstIterState) and of
impl/conv_bp_input_sub_func_load_l1_to_l0.h (UpdateLoadToB2ParamsKForKernelSplit,
LoadToB2ForKernelSplitB1FullLoad: with Cout held whole in L1 the sub-kernel's taps are picked at the L1 -> L0B
load).
"""
from __future__ import annotations

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_FIX, PIPE_MTE3, GetSubBlockIdx, LoadData)
from kernels.conv3d_backprop_input.kernel.arch35.sync import CvCrossCoreSet, CvCrossCoreWait
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, FLAG_FIXP_ID, FLAG_MTE2_VEC_ID, AlignUpC0,
                                                              DivCeil)



# ------------------------------------------------------------------------------------------- sub-kernel params
def CalcSubKernelBackpadBegin(kernelSize: int, stride: int, backPad: int, idx: int) -> int:
    """The first (top / left) backprop pad of sub-kernel idx; the source supports stride 2 only (>> 1)."""
    subKernelSize = (kernelSize + stride - idx - 1) >> 1
    missPointNum = (kernelSize - idx - backPad) >> 1
    return subKernelSize - 1 - missPointNum


def CalcSubKernelBackpadEnd(kernelSize: int, stride: int, backPad: int, idx: int) -> int:
    subKernelSize = (kernelSize + stride - idx - 1) >> 1
    idxReverse = kernelSize - ((subKernelSize - 1) * stride + 1 + idx)
    missPointNum = (kernelSize - idxReverse - backPad) >> 1
    return subKernelSize - 1 - missPointNum


def CalcSubKernelPadListForKernelSplit(api) -> None:
    """subPadLeftList_ / subPadRightList_ / subPadUpList_ of the four sub-kernels (index splitH * 2 + splitW); the
    bottom pad is the Load3D's fixed 255."""
    t = api.tiling_
    subKernel02PadRight = subKernel13PadRight = 0
    swapped = ((t.backpropPadLeft in (0, 2) and t.wk in (4, 2)) or (t.backpropPadLeft == 1 and t.wk == 3))
    if t.wi & 1:  # an odd wi: one more right pad on the sub-kernels whose last column is cut
        if swapped:
            subKernel02PadRight = 1
        else:
            subKernel13PadRight = 1
    left0 = CalcSubKernelBackpadBegin(t.wk, t.strideW, t.backpropPadLeft, 0)
    left1 = CalcSubKernelBackpadBegin(t.wk, t.strideW, t.backpropPadLeft, 1)
    right0 = CalcSubKernelBackpadEnd(t.wk, t.strideW, t.backpropPadRight, 0) + subKernel02PadRight
    right1 = CalcSubKernelBackpadEnd(t.wk, t.strideW, t.backpropPadRight, 1) + subKernel13PadRight
    up0 = CalcSubKernelBackpadBegin(t.hk, t.strideH, t.backpropPadUp, 0)
    up1 = CalcSubKernelBackpadBegin(t.hk, t.strideH, t.backpropPadUp, 1)
    api.subPadLeftList_ = [left0, left1, left0, left1]
    api.subPadRightList_ = [right0, right1, right0, right1]
    api.subPadUpList_ = [up0, up0, up1, up1]


def InitParamsForKernelSplitHW(api) -> None:
    t = api.tiling_
    api.splitWStartIndex_ = t.padLeft % t.strideW
    api.splitHStartIndex_ = t.padUp % t.strideH
    api.splitIndex_ = api.splitHStartIndex_ * t.strideW + api.splitWStartIndex_
    # a stride larger than the kernel that cannot be split (1x1 with stride 2): the tail sub-kernel falls back
    wkLeft = DivCeil(t.wk, t.strideW)
    wkRight = t.wk - wkLeft or wkLeft
    hkUp = DivCeil(t.hk, t.strideH)
    hkDown = t.hk - hkUp or hkUp
    api.splitWkList_ = [wkLeft, wkRight, wkLeft, wkRight]
    api.splitHkList_ = [hkUp, hkUp, hkDown, hkDown]
    api.splitHkWkList_ = [w * h for w, h in zip(api.splitWkList_, api.splitHkList_)]
    api.splitHkWkC0List_ = [hw * t.c0 for hw in api.splitHkWkList_]
    api.splitWi_ = DivCeil(t.wi, t.strideW)
    alignedCout = AlignUpC0(api, t.singleCoreCout)
    if api.kSCoutFullLoad_:
        api.channelSize_ = alignedCout
    else:
        api.channelSize_ = min(api.curStepKa_ * t.baseK // api.splitHkWkList_[0], alignedCout)
    api.coutChannelSize_ = api.curStepKb_ * t.baseK // api.splitHkWkList_[0]
    api.curHoSize_ = CalFmapHForKernelSplit(api, t.baseM)
    CalcSubKernelPadListForKernelSplit(api)


def CalFmapHForKernelSplitInner(api, mL1Size: int, hk: int) -> int:
    """dy rows an M block of mL1Size sub-kernel pixels reads (splitWi_ pixels a row)."""
    t = api.tiling_
    if mL1Size % api.splitWi_ == 0:
        hiCal = mL1Size // api.splitWi_
    elif mL1Size > api.splitWi_:
        hiCal = mL1Size // api.splitWi_ + 2  # the first and last rows are partial
    else:
        hiCal = 2
    khDilation = t.khDilation if hk == t.hk else (hk - 1) * t.dilationH + 1
    return (hiCal - 1) + khDilation


def CalFmapHForKernelSplit(api, mL1Size: int) -> int:
    return CalFmapHForKernelSplitInner(api, mL1Size, api.splitHkList_[api.splitIndex_])


def CalFmapHMaxForKernelSplit(api, mL1Size: int) -> int:
    return CalFmapHForKernelSplitInner(api, mL1Size, api.splitHkList_[0])  # sub-kernel 0 is the largest


def InitFullLoadFlagForKernelSplitHW(api) -> None:
    """A1 and B1 stay in L1 across the four sub-kernels (and B1 across tiles) when Cout is held whole."""
    t = api.tiling_
    isDoutDkFullLoad = t.dk == 1 or t.dout == 1
    baseB1Cond = t.baseN >= t.singleCoreCin and t.enlarge == 1
    needReloadA1 = t.wk == 3 or (t.backpropPadLeft in (0, 2) and t.wk in (4, 2))
    api.isA1FullLoadFlag_ = bool(api.kSCoutFullLoad_ and t.al1Pbuffer == 1 and isDoutDkFullLoad and not needReloadA1)
    api.isB1FullLoadFlag_ = bool(api.kSCoutFullLoad_ and baseB1Cond and t.bl1Pbuffer == 1 and isDoutDkFullLoad)


def CalcMatrixByteSizeForKernelSplitHW(api) -> tuple[int, int]:
    t = api.tiling_
    hoSize = min(t.ho, CalFmapHMaxForKernelSplit(api, t.baseM))
    a = hoSize * t.wo * api.channelSize_ * api.SrcAT.itemsize
    if api.kSCoutFullLoad_:
        b = t.baseN * api.channelSize_ * api.singleShapeHWk_ * api.SrcBT.itemsize
    else:
        b = t.baseN * api.curStepKb_ * t.baseK * api.SrcBT.itemsize
    return a, b


# ------------------------------------------------------------------------------------------------- iteration
def InitFirstIterStateForKernelSplitHW(api) -> None:
    api.rearrangeHIndex_ = api.rearrangeWIndex_ = 0
    api.splitHIndex_ = api.splitHStartIndex_
    api.splitWIndex_ = api.splitWStartIndex_
    if api.tiling_.dk > 1:  # with dk == 1 a weight held whole is not loaded again
        api.isLoadB1_ = True
        api.isFreeB1_ = False


def UpdateHoSizeForKernelSplit(api) -> None:
    hiCal = DivCeil(api.baseUseM_ + api.load3d_.mStartPt, api.splitWi_)
    endHoIdx = api.curHoIdx_ + hiCal + (api.splitHkList_[api.splitIndex_] - 1) * api.tiling_.dilationH
    api.UpdateCurHoSizeCore(endHoIdx)


def UpdateHoIdxForKernelSplit(api) -> None:
    """The H phases' sub-kernels have other top pads (backpropPadUp 2) or other heights (hk 3)."""
    t = api.tiling_
    if t.backpropPadUp == 2 and api.rearrangeHIndex_ > 0 and api.rearrangeWIndex_ == 0:
        api.curHoIdx_ += 1
        UpdateHoSizeForKernelSplit(api)
    if t.hk in (2, 4):  # the sub-kernels are all one size
        return
    UpdateHoSizeForKernelSplit(api)


def RecalcBaseUseMForKernelSplit(api) -> None:
    """Entering the second H phase: with hi odd it has one sub-kernel row fewer, so fewer pixels (or none)."""
    t = api.tiling_
    if api.rearrangeHIndex_ == 0 or api.rearrangeWIndex_ > 0:
        return
    subKernelM = t.hi // t.strideH * api.splitWi_
    curMIdx = api.curMStartIdx_ + api.curMIdx_ * t.baseM
    if curMIdx >= subKernelM:
        api.needComputeFlag_ = False
        api.curHoSize_ = 0
    elif curMIdx + api.baseUseM_ > subKernelM:
        api.baseUseM_ = subKernelM - curMIdx
        api.mmad_.m = DivCeil(api.baseUseM_, BLOCK_CUBE) * BLOCK_CUBE


def IterateForKernelSplit(api) -> bool:
    """The next of the four sub-kernels of the tile (rearrangeW fastest); False once all four ran."""
    t = api.tiling_
    api.splitWIndex_ = 0 if api.splitWIndex_ + 1 >= t.strideW else api.splitWIndex_ + 1
    rearrangeWNext = api.rearrangeWIndex_ + 1
    wWrapped = rearrangeWNext >= t.strideW
    api.rearrangeWIndex_ = 0 if wWrapped else rearrangeWNext
    hIncr = 1 if wWrapped else 0
    api.splitHIndex_ = 0 if api.splitHIndex_ + hIncr >= t.strideH else api.splitHIndex_ + hIncr
    rearrangeHNext = api.rearrangeHIndex_ + hIncr
    api.rearrangeHIndex_ = 0 if rearrangeHNext >= t.strideH else rearrangeHNext
    res = not wWrapped or rearrangeHNext < t.strideH
    api.splitIndex_ = api.splitHIndex_ * t.strideW + api.splitWIndex_
    RecalcBaseUseMForKernelSplit(api)
    UpdateHoIdxForKernelSplit(api)
    api.InitStepKParams()  # RecalcStepForKernelSplit, then kIter_ and the step tails of the sub-kernel
    p, i = api.load3d_, api.splitIndex_
    p.filterW = api.splitWkList_[i] & 255
    p.filterH = api.splitHkList_[i] & 255
    p.filterSizeW = bool((api.splitWkList_[i] >> 8) & 255)
    p.filterSizeH = bool((api.splitHkList_[i] >> 8) & 255)
    return res


def CheckFreeA1ForKernelSplit(api) -> bool:
    """The sub-kernels crop the dy rows (columns) differently: A1 must be loaded again for the next one."""
    t = api.tiling_
    if t.backpropPadLeft < 0 or t.backpropPadRight < 0:
        return True
    n = t.strideW * t.strideH
    if t.backpropPadUp == 0 and any(pad < 0 for pad in api.subPadUpList_[:n]):
        return True
    return t.backpropPadLeft == 0 and any(pad < 0 for pad in api.subPadLeftList_[:n])


def UpdateFullLoadL1StatusForKernelSplitHW(api, isLastMNIter: bool) -> None:
    t = api.tiling_
    isLastRearrangeHWIter = api.rearrangeWIndex_ == t.strideW - 1 and api.rearrangeHIndex_ == t.strideH - 1
    api.isFreeA1_ = isLastRearrangeHWIter or CheckFreeA1ForKernelSplit(api)
    api.isFreeB1_ = isLastMNIter and t.dk > 1 and isLastRearrangeHWIter


# ------------------------------------------------------------------------------------------ AIC <-> AIV flags
def CrossCoreCWaitVForKS(api) -> None:
    """The AIC waits until the AIV has read the workspace slice of the previous H phase."""
    if api.needComputeFlag_:
        CvCrossCoreWait(FLAG_FIXP_ID)


def CrossCoreCSeitVForKS(api) -> None:
    """Both W phases of this H phase are in UB or the workspace (set from PIPE_FIX; the source waits on PIPE_MTE2
    with the workspace, PIPE_V without)."""
    if api.needComputeFlag_:
        CvCrossCoreSet(PIPE_FIX, FLAG_MTE2_VEC_ID)


def CrossCoreVWaitCForKS(api) -> None:
    if api.needComputeFlag_:
        CvCrossCoreWait(FLAG_MTE2_VEC_ID)


def CrossCoreVSeitCForKS(api) -> None:
    if api.needComputeFlag_:
        CvCrossCoreSet(PIPE_MTE3, FLAG_FIXP_ID)


def IterateAllForKernelSplit(api, output, enAtomic: int) -> None:
    """Every tile of the block, sub-kernel by sub-kernel: the AIC writes each W phase to the workspace and tells
    AIV sub-block 0 after the last; the AIV re-interleaves the H phase into y and tells the AIC the slice is free."""
    t = api.tiling_
    isKernel1x1 = t.wk == 1 and t.hk == 1
    lastRearrangeW = t.strideW - 1
    while api.Iterate():
        if isKernel1x1 and api.rearrangeHIndex_ != 0:
            continue
        if ASCEND_IS_AIC():
            if api.rearrangeWIndex_ == 0:
                CrossCoreCWaitVForKS(api)
            if not isKernel1x1 or api.rearrangeWIndex_ == 0:
                api.GetTensorC(output, enAtomic)
            if api.rearrangeWIndex_ == lastRearrangeW:
                CrossCoreCSeitVForKS(api)
        if ASCEND_IS_AIV():
            if GetSubBlockIdx() != 0:
                continue
            if api.rearrangeWIndex_ == lastRearrangeW:
                CrossCoreVWaitCForKS(api)
                if api.needComputeFlag_:
                    api.VecPostProcess(output, enAtomic)
                CrossCoreVSeitCForKS(api)


# ---------------------------------------------------------------------------------------------- L1 -> L0B
def UpdateLoadToB2ParamsNForKernelSplitHW(api) -> None:
    """REVERSE_ONLY's N parameters: with Cout held whole the B1 rows are (cout1, hk*wk, cin) and the sub-kernel's
    taps are read from them; otherwise B1 holds the sub-kernel alone, reversed as usual."""
    t, p = api.tiling_, api.load2dv2_
    blockSize = t.c0 << 4
    if api.kSCoutFullLoad_:
        p.srcStride = api.blockBaseN_ if t.strideH == t.hk else -api.blockBaseN_ * t.strideW
        api.dstB2Stride_ = api.blockBaseN_ * api.splitHkWkList_[api.splitIndex_] * blockSize
    else:
        p.srcStride = -api.blockBaseN_
        api.dstB2Stride_ = 0


def UpdateLoadToB2ParamsKForKernelSplit(api, kPos: int) -> None:
    t, p, i = api.tiling_, api.load2dv2_, api.splitIndex_
    kRepeat = t.baseK // api.splitHkWkC0List_[i]  # cout1 blocks per K step
    api.startAddrOffset_ = t.hkWk * kPos * kRepeat  # the cout blocks already consumed
    p.kStep = api.splitWkList_[i]  # 1 or 2 here
    p.mStartPosition = ((api.splitHkList_[i] - 1) * t.strideH * t.wk + (api.splitWkList_[i] - 1) * t.strideW
                        + (api.splitHIndex_ * t.wk + api.splitWIndex_)) * api.blockBaseN_


def LoadToB2ForKernelSplitB1FullLoad(api, l1B1Matrix, blockSize: int, l0b) -> None:
    """The sub-kernel's taps out of the whole kernel in L1: stride == kernel reads each tap once (forward stride);
    otherwise row by row of the sub-kernel, each row's taps backwards strideW apart."""
    t, p, i = api.tiling_, api.load2dv2_, api.splitIndex_
    srcB1Offset = dstB2Offset = 0
    if t.strideH == t.hk:
        for k in range(api.baseUseK_ >> t.c0BitsB):
            p.kStartPosition = api.startAddrOffset_ + k * t.hkWk
            LoadData(l0b[dstB2Offset], l1B1Matrix[srcB1Offset], p)
            dstB2Offset += api.dstB2Stride_
        return
    firstMStartPosition = p.mStartPosition
    curMPos = t.wk * t.strideH * api.blockBaseN_
    dstStride = api.splitWkList_[i] * api.blockBaseN_ * blockSize
    curKRepeat = max(api.baseUseK_ // api.splitHkWkC0List_[i], 1)
    for k in range(curKRepeat):
        p.mStartPosition = firstMStartPosition
        p.kStartPosition = 0
        srcB1Offset = (api.startAddrOffset_ + k * t.hkWk) * api.blockBaseN_ * blockSize
        for j in range(api.splitHkList_[i]):
            p.mStartPosition -= j * curMPos  # cumulative, as the source (splitHk <= 2 here)
            dstB2Offset = j * dstStride + k * api.dstB2Stride_
            LoadData(l0b[dstB2Offset], l1B1Matrix[srcB1Offset], p)
