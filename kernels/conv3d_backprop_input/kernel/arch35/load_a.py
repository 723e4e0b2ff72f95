"""dy into L1 (DN2NZ / ND2NZ with zero insertion) and L1 -> L0A (LoadDataWithStride into NZ).

Ports impl/conv_bp_sub_func_load_gm_to_l1a.h (CalcSetFmatrixParams, CalcCurCoutSizeA1, CalcOutToA1DstAddr,
CalcLoadToA1Dn2NzParams, CalcLoadToA1Nd2NzParams, LoadToA1ForDn2Nz, LoadToA1ForNd2Nz, LoadToA1) and the A half of
impl/conv_bp_input_sub_func_load_l1_to_l0.h (InitLoadToA2Params, UpdateLoadToA2ParamsM/K, LoadToA2), for
kernelSplitMode 0 and TPL_SPLIT_KERNEL_H (no zero insertion along H there: A1StrideH) with loadB1Condition GM_TO_L1,
and TPL_SPLIT_KERNEL_HW (CalcRealWo4KernelSplit, CalcCurHoSize4KernelSplit, CalcLoadToA1Dn2NzParams4KernelSplit:
dense dy, the sub-kernel's own pads from subPad*List_, Cout whole in L1 when kSCoutFullLoad).

Stride > 1 is turned into a stride-1 img2col by zero insertion in L1: the A1 buffer is zeroed (Fill, the 3510 name
of InitConstValue) and dy rows land strideH rows apart (dstNzMatrixStride) with their pixels strideW apart
(dstNzNStride). Negative backprop pads crop W (woStart/woEnd); the Load3D pads carry the positive ones, with
padList[3] fixed to 255 as the source does.
"""
from __future__ import annotations

from ascend_sim.ascendc import (PIPE_MTE2, DataCopy, Dn2NzParams, InitConstValue, InitConstValueParams,
                                LoadData3DParamsV2, LoadDataRepeatParamWithStride, LoadDataWithStride, Nd2NzParams,
                                PipeBarrier, SetLoadDataRepeatWithStride)
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, C04_COUT_SIZE, FORMAT_NCDHW,
                                                              TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK,
                                                              TPL_SPLIT_KERNEL_H, TPL_SPLIT_KERNEL_HW, AlignDown,
                                                              AlignUp, DivCeil, DivCeil16, DivHkWk)


def InitZeroValue(api, buf) -> None:
    """Zero a whole L1 buffer before a zero-inserting copy, then order MTE2 behind it (utils.h InitZeroValue)."""
    nblocks = buf.GetSize() * buf.dtype.itemsize >> 5
    InitConstValue(buf, InitConstValueParams(1, nblocks, 0, 0))
    PipeBarrier(PIPE_MTE2)


def CalcSetFmatrixParams(api, fmapH: int, fmapW: int) -> None:
    t, p = api.tiling_, api.load3d_
    p.l1W = fmapW
    p.l1H = fmapH
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:  # the sub-kernel's own pads, negative ones cropped in GM
        i = api.splitHIndex_ * t.strideW + api.splitWIndex_
        top = max(api.subPadUpList_[i], 0) if api.curHoIdx_ < 0 else 0
        p.padList = (max(api.subPadLeftList_[i], 0), max(api.subPadRightList_[i], 0), top, 255)
        return
    if t.backpropPadLeft < 0:
        left = DivCeil(abs(t.backpropPadLeft), t.strideW) * t.strideW + t.backpropPadLeft
    else:
        left = t.backpropPadLeft
    if t.backpropPadRight < 0:
        woExpand = (t.wo - 1) * t.strideW + 1
        woEnd = DivCeil(woExpand + t.backpropPadRight, t.strideW)
        right = woExpand + t.backpropPadRight - ((woEnd - 1) * t.strideW + 1)
    else:
        right = t.backpropPadRight
    top = abs(api.curHoIdx_) if api.curHoIdx_ < 0 else 0
    if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:  # the kernel column's own window
        left = abs(api.curWoLeftIdx_) if api.curWoLeftIdx_ < 0 else 0
        right = abs(api.curWoRightIdx_) if api.curWoRightIdx_ > 0 else 0
    p.padList = (left, right, top, 255)  # padList[3] is fixed to 255


def CalcCurCoutSizeA1(api, kIdx: int, curCoutIdx: int) -> int:
    t = api.tiling_
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW and api.kSCoutFullLoad_:
        return t.singleCoreCout  # the whole of Cout in one A1 buffer
    if kIdx >= api.kIterStepKaTail:
        kaL1Size = (api.stepKaTail - 1) * t.baseK + api.tailK_
    else:
        kaL1Size = api.curStepKa_ * t.baseK
    curCoutSize = C04_COUT_SIZE if api.enableC04Flag else DivHkWk(api, kaL1Size)
    if api.enableSplitK_:
        return min(curCoutSize, api.singleShapeCout_ - (curCoutIdx - api.curCoutStartIdx_))
    return min(curCoutSize, api.singleShapeCout_ - curCoutIdx)


def CalcOutToA1DstAddr(api, strideH: int, curHoSize: int, woExpand: int) -> tuple[int, int]:
    """(loadToA1HLoop, out2A1DstAddrOffset): the dy rows to copy, and the L1 row of the first one."""
    hDstDataSkipLine = 0
    actualDstDataStartIdx = 0 if api.curHoIdx_ < 0 else api.curHoIdx_
    if strideH > 1 and actualDstDataStartIdx % strideH:
        hDstDataSkipLine = AlignUp(actualDstDataStartIdx, strideH) - actualDstDataStartIdx
    loadToA1HLoop = DivCeil(curHoSize - hDstDataSkipLine, strideH)
    if api.enableC04Flag:  # the small-C0 fmap: 4 elements a pixel
        out2A1DstAddrOffset = hDstDataSkipLine * woExpand * C04_COUT_SIZE
    else:
        out2A1DstAddrOffset = (hDstDataSkipLine * woExpand) << api.tiling_.c0BitsA
    if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:
        loadToA1HLoop, woExpand, out2A1DstAddrOffset = _no_hk_wk_window(api, hDstDataSkipLine, woExpand,
                                                                        out2A1DstAddrOffset)
    return loadToA1HLoop, out2A1DstAddrOffset, woExpand


def _no_hk_wk_window(api, hDstDataSkipLine: int, allWoExpand: int, out2A1DstAddrOffset: int) -> tuple[int, int, int]:
    """NO_HK_WK: one dy row, only the (zero-inserted) columns the kernel column reads: (1, woExpand, offset)."""
    t = api.tiling_
    woExpand = (api.realWoSize_ - 1) * t.strideW + 1
    actualDstWoEndIdx = allWoExpand - 1 + api.curWoRightIdx_ if api.curWoRightIdx_ < 0 else 0
    if t.strideW > 1 and actualDstWoEndIdx % t.strideW:
        woExpand += actualDstWoEndIdx - AlignDown(actualDstWoEndIdx, t.strideW)  # ends in a zero-inserted column
    wDstDataSkipPoint = 0
    actualDstWoStartIdx = max(api.curWoLeftIdx_, 0)
    if t.strideW > 1 and actualDstWoStartIdx % t.strideW:
        wDstDataSkipPoint = AlignUp(actualDstWoStartIdx, t.strideW) - actualDstWoStartIdx
        woExpand += wDstDataSkipPoint  # starts in a zero-inserted column
    if hDstDataSkipLine > 0 and woExpand < allWoExpand:
        out2A1DstAddrOffset -= (hDstDataSkipLine * (allWoExpand - woExpand)) << t.c0BitsA
    out2A1DstAddrOffset += wDstDataSkipPoint << t.c0BitsA
    return 1, woExpand, out2A1DstAddrOffset


def _wo_window(t) -> tuple[int, int, int, bool]:
    """(woExpand, woStart, woEnd, resetWoExpand): the zero-inserted dy row, cropped by negative W pads."""
    woExpand = (t.wo - 1) * t.strideW + 1
    reset = t.backpropPadLeft < 0 or t.backpropPadRight < 0
    woStart = DivCeil(abs(t.backpropPadLeft), t.strideW) if t.backpropPadLeft < 0 else 0
    woEnd = (DivCeil(woExpand + t.backpropPadRight, t.strideW) if t.backpropPadRight < 0
             else DivCeil(woExpand, t.strideW))
    if reset:
        woExpand = 1 if woEnd == woStart else (woEnd - woStart - 1) * t.strideW + 1
    return woExpand, woStart, woEnd, reset


def A1StrideH(api) -> int:
    """The zero insertion along H: strideH, or 1 under kernel split H (each sub-kernel is stride 1 in H)."""
    return 1 if api.kernelSplitMode == TPL_SPLIT_KERNEL_H else api.tiling_.strideH


def CalcLoadToA1Params(api, params, curCoutIdx: int, kIdx: int, nd: bool) -> int:
    """CalcLoadToA1Dn2NzParams / CalcLoadToA1Nd2NzParams: fills params, returns out2A1DstAddrOffset."""
    t = api.tiling_
    strideH = A1StrideH(api)
    curHoSize = api.curHoSize_
    curCoutSize = CalcCurCoutSizeA1(api, kIdx, curCoutIdx)
    woExpand, woStart, woEnd, reset = _wo_window(t)
    loadToA1HLoop, out2A1DstAddrOffset, woExpand = CalcOutToA1DstAddr(api, strideH, curHoSize, woExpand)
    if t.strideW * strideH > 1 or api.realWoSize_ != t.wo or reset:
        if reset:
            api.realWoSize_ = woEnd - woStart
        num, matrix_stride = loadToA1HLoop, t.wo * (t.cout if nd else 1)
        nValue, nStride, dstMatrix = api.realWoSize_, t.strideW, (strideH * woExpand) << t.c0BitsA
    else:
        num, matrix_stride = 1, 0
        nValue, nStride, dstMatrix = loadToA1HLoop * t.wo, 1, 0
    if nd:
        params.ndNum, params.srcNdMatrixStride, params.srcDValue = num, matrix_stride, t.cout
    else:
        params.dnNum, params.srcDnMatrixStride, params.srcDValue = num, matrix_stride, api.doHoWo_
    params.nValue = nValue
    params.dValue = curCoutSize
    params.dstNzC0Stride = curHoSize * woExpand
    params.dstNzNStride = nStride
    params.dstNzMatrixStride = dstMatrix
    CalcSetFmatrixParams(api, curHoSize, woExpand)
    return out2A1DstAddrOffset


def CalcRealWo4KernelSplit(api, realWo: int) -> int:
    """backpropPadLeft 0: the dy columns a sub-kernel reads (one fewer when its left pad is cut or wi is even)."""
    t = api.tiling_
    i = api.splitHIndex_ * t.strideW + api.splitWIndex_
    if t.hk in (4, 2):
        if not t.wi & 1 or api.subPadLeftList_[i] < 0:
            realWo -= 1
    elif t.hk == 3 and api.subPadLeftList_[i] < 0:
        realWo -= 1
    return realWo


def CalcCurHoSize4KernelSplit(api, curDoutIdx: int, curOriHoIdx: int, woOffset: int, realWo: int,
                              curHoSize: int) -> int:
    """The last dy plane of the last batch: no row past the end of dy."""
    t = api.tiling_
    isLastTail = api.curBatchCoreIdx_ == t.batch - 1 and curDoutIdx == t.dout - 1
    if isLastTail and curHoSize > 0:
        curStartHoWo = api.curHoStartIdx_ * t.wo
        dn2nzHoWo = curOriHoIdx * t.wo + woOffset + realWo + t.wo * (curHoSize - 1)
        extraHoWo = curStartHoWo + dn2nzHoWo - api.hoWo_
        if extraHoWo > 0:
            curHoSize -= extraHoWo // t.wo
    return curHoSize


def CalcLoadToA1Dn2NzParams4KernelSplit(api, params, curCoutSize: int, curDoutIdx: int, curOriHoIdx: int,
                                        woOffset: int) -> tuple[int, int]:
    """The dense dy rows of the sub-kernel (no zero insertion): fills params, returns (curOriHoIdx, woOffset)."""
    t = api.tiling_
    curHoSize = api.curHoSize_
    realWo = t.wo
    i = api.splitHIndex_ * t.strideW + api.splitWIndex_
    if t.backpropPadUp == 0 and api.subPadUpList_[i] < 0:
        curOriHoIdx -= api.subPadUpList_[i]  # skip the rows the sub-kernel never reaches
    isNegativeWPad = t.backpropPadLeft < 0 or t.backpropPadRight < 0
    if isNegativeWPad:  # each sub-kernel crops its own columns
        leftCrop = -api.subPadLeftList_[i] if api.subPadLeftList_[i] < 0 else 0
        rightCrop = -api.subPadRightList_[i] if api.subPadRightList_[i] < 0 else 0
        woOffset += leftCrop
        realWo -= leftCrop + rightCrop
    elif t.backpropPadLeft == 0:
        if api.subPadLeftList_[i] < 0:
            woOffset -= api.subPadLeftList_[i]
        realWo = CalcRealWo4KernelSplit(api, realWo)
    curHoSize = CalcCurHoSize4KernelSplit(api, curDoutIdx, curOriHoIdx, woOffset, realWo, curHoSize)
    # cropped W: the GM rows are not contiguous, so one DN matrix per dy row
    if isNegativeWPad or (t.backpropPadLeft == 0 and (t.wk != 1 or t.hk != 1)):
        params.dnNum, params.nValue, params.srcDnMatrixStride = curHoSize, realWo, t.wo
        params.dstNzMatrixStride = realWo << t.c0BitsA
    else:
        params.dnNum, params.nValue, params.srcDnMatrixStride = 1, curHoSize * realWo, 0
        params.dstNzMatrixStride = 0
    params.dValue = curCoutSize
    params.srcDValue = api.doHoWo_
    params.dstNzC0Stride = curHoSize * realWo
    params.dstNzNStride = 1
    CalcSetFmatrixParams(api, curHoSize, realWo)
    return curOriHoIdx, woOffset


def LoadToA1ForKernelSplitHW(api, useA1Buf, kIdx: int, curDoutIdx: int) -> None:
    """LoadToA1ForDn2Nz's TPL_SPLIT_KERNEL_HW branch (the split takes NCDHW dy only)."""
    t = api.tiling_
    params = Dn2NzParams()
    curHoStartOffset = max(api.curHoStartIdx_, 0)
    curOriHoIdx = 0 if api.curHoIdx_ < 0 else api.curHoIdx_ - curHoStartOffset
    curCoutIdx = DivHkWk(api, kIdx * t.baseK)
    curCoutSize = CalcCurCoutSizeA1(api, kIdx, curCoutIdx)
    curOriHoIdx, woOffset = CalcLoadToA1Dn2NzParams4KernelSplit(api, params, curCoutSize, curDoutIdx, curOriHoIdx,
                                                                0)
    src = curCoutIdx * api.doHoWo_ + curDoutIdx * api.hoWo_ + curOriHoIdx * t.wo + woOffset
    if params.dnNum > 0:
        DataCopy(useA1Buf, api.outBackPropGlobal_[src], params)


def LoadToA1(api, kIdx: int, curDoutIdx: int, loadFlag: bool) -> None:
    """The cout range of K step kIdx of dy plane curDoutIdx, rows [curHoIdx, +curHoSize) -> an A1 buffer."""
    if not loadFlag or kIdx >= api.kIter_ or (api.isA1FullLoadFlag_ and not api.isLoadA1_):
        return
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
        useA1Buf = api.inQueL1A_.AllocTensor(api.SrcAT)
        LoadToA1ForKernelSplitHW(api, useA1Buf, kIdx, curDoutIdx)
        api.inQueL1A_.EnQue(useA1Buf)
        return
    t = api.tiling_
    useA1Buf = api.inQueL1A_.AllocTensor(api.SrcAT)
    nd = api.yFormat != FORMAT_NCDHW  # the source picks DN2NZ by the y (cType) format
    params = Nd2NzParams() if nd else Dn2NzParams()
    curHoStartOffset = max(api.curHoStartIdx_, 0)
    curHoIdx = 0 if api.curHoIdx_ < 0 else api.curHoIdx_ - curHoStartOffset
    curOriHoIdx = curHoIdx
    curCoutIdx = 0
    if not api.enableC04Flag:  # C04: every K step reads the same 4 channels
        curCoutIdx = DivHkWk(api, kIdx * t.baseK) + (api.curCoutStartIdx_ if api.enableSplitK_ else 0)
    strideH = A1StrideH(api)
    if t.strideW * strideH > 1:
        InitZeroValue(api, useA1Buf)
    out2A1DstAddrOffset = CalcLoadToA1Params(api, params, curCoutIdx, kIdx, nd)
    if strideH > 1:
        # the relative dy row: the current (dilated) row minus the core's first, both before zero insertion
        curHoIdx = 0 if api.curHoIdx_ < 0 else api.curHoIdx_
        curOriHoIdx = DivCeil(curHoIdx, strideH) - DivCeil(curHoStartOffset, strideH)
    if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:
        woOffset = DivCeil(api.curWoLeftIdx_, t.strideW) if api.curWoLeftIdx_ > 0 else 0
    else:
        woOffset = DivCeil(abs(t.backpropPadLeft), t.strideW) if t.backpropPadLeft < 0 else 0
    if nd:
        src = curCoutIdx + curDoutIdx * api.hoWo_ * t.cout + (curOriHoIdx * t.wo + woOffset) * t.cout
    else:
        src = curCoutIdx * api.doHoWo_ + curDoutIdx * api.hoWo_ + curOriHoIdx * t.wo + woOffset
    if (params.ndNum if nd else params.dnNum) > 0:
        # C04 copies with DataCopy<SrcAT, true>: the SmallC0 mode, 4 elements a pixel (C04 takes NCDHW dy only)
        DataCopy(useA1Buf[out2A1DstAddrOffset], api.outBackPropGlobal_[src], params,
                 enableSmallC0=api.enableC04Flag)
    api.inQueL1A_.EnQue(useA1Buf)


def InitLoadToA2Params(api) -> None:
    t = api.tiling_
    p = LoadData3DParamsV2()
    p.mExtension = t.baseM
    p.kExtension = t.baseK
    p.mStartPt = 0
    p.kStartPt = 0
    p.strideW = 1  # zero insertion turned the stride into 1
    p.strideH = 1
    # NO_HK: one kernel row per Load3D, NO_HK_WK: one tap; the HW split: the first sub-kernel
    filterH = 1 if api.loadB1Condition in (TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK) else t.hk
    filterW = 1 if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK else t.wk
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
        filterH, filterW = api.splitHkList_[api.splitIndex_], api.splitWkList_[api.splitIndex_]
    p.filterW = filterW & 255
    p.filterH = filterH & 255
    p.filterSizeW = bool((filterW >> 8) & 255)
    p.filterSizeH = bool((filterH >> 8) & 255)
    p.dilationFilterW = 1 if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK else t.dilationW
    p.dilationFilterH = 1 if api.loadB1Condition in (TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK) else t.dilationH
    p.enTranspose = False
    p.fMatrixCtrl = False
    p.channelSize = api.channelSize_
    api.load3d_ = p


def UpdateLoadToA2ParamsM(api) -> None:
    # [DEVIATION] the source sets mExtension = baseUseM_; the simulated LoadDataWithStride does not model a window
    # ending in half a fractal, so the M tail is rounded up to 16 rows (the extra rows are the bottom pad's zeros;
    # Mmad runs them anyway, m being rounded the same way, and Fixpipe drops them).
    api.load3d_.mExtension = DivCeil16(api.baseUseM_) * BLOCK_CUBE
    SetLoadDataRepeatWithStride(LoadDataRepeatParamWithStride(0, 1, 0, DivCeil16(api.baseUseM_)))


def UpdateLoadToA2ParamsK(api, kPos: int) -> None:
    api.load3d_.kStartPt = kPos * api.tiling_.baseK


def LoadToA2(api, l1A1Matrix, l0a) -> None:
    LoadDataWithStride(l0a, l1A1Matrix, api.load3d_)
