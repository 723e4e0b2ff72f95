"""Kernel split along H (kernelSplitMode TPL_SPLIT_KERNEL_H): the API side of Conv3dDxKsBlock.

With strideH > 1, the dx rows hi with the same (hi + padUp) mod strideH take the kernel rows kh = idx, idx +
strideH, ... only: sub-kernel idx is a stride-1 convolution (in H) of the dy rows with splitHk = DivCeil(hk - idx,
strideH) kernel rows, whose output rows lie strideH rows apart in dx. The block driver deals one sub-kernel per basic
block (kSCoreIdx); here the API loads the sub-kernel's weight rows (hk stepping by strideH) into L1, runs the
stride-1 img2col over dy rows without zero insertion along H, and Fixpipes every output row strideH rows apart.

Ports convolution_3d_backprop/conv3d_bp_kernel_split_func.h (RecalcStepForKernelSplit, InitParamsForKernelSplitH,
SetKernelSplitParams, SetSingleShapeParams), impl/conv_bp_input_sub_func_load_gm_to_l1.h
(LoadToB1Dn2NzTransposeForKernelSplitH, LoadToB1Nd2NzForKernelSplit) and impl/conv_bp_input_sub_func_store_l0c.h
(CalcCutInWIndexForOnlyH, LoadL0c2GmDnForKernelSplitH, LoadL0c2GmNdForKernelSplitH). The HW split
(TPL_SPLIT_KERNEL_HW) is in kernel_split_hw.py and kernel_split_hw_out.py; it shares RecalcStepForKernelSplit,
SetKernelSplitParams and LoadToB1Nd2NzForKernelSplit with this module.
"""
from __future__ import annotations

from ascend_sim.ascendc import (CFG_COLUMN_MAJOR, CFG_ROW_MAJOR, DataCopy, Dn2NzParams, Fixpipe,
                                FixpipeParamsArch3510, Nz2DnParams, Nz2NdParams)
from kernels.conv3d_backprop_input.kernel.arch35.load_a import InitZeroValue
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, TPL_SPLIT_KERNEL_HW, AlignUp16, AlignUpC0,
                                                              CalFmapH, DivCeil)

SUB_KERNEL_NUM = 4


def InitKernelSplitLists(api) -> None:
    """The ctx arrays of the sub-kernels (conv3d_bp_impl_base.h: SUB_KERNEL_NUM entries each)."""
    api.splitHkList_ = [0] * SUB_KERNEL_NUM
    api.splitWkList_ = [0] * SUB_KERNEL_NUM
    api.splitHkWkList_ = [0] * SUB_KERNEL_NUM
    api.splitHkWkC0List_ = [0] * SUB_KERNEL_NUM
    api.splitIndex_ = 0
    api.splitWi_ = 0
    api.curBackPropPadUp_ = 0
    # the HW split's (InitParamsPart2 / Part3): its sub-kernel walk and the tile's head / rows / tail in dx
    api.splitHIndex_ = api.splitWIndex_ = api.splitHStartIndex_ = api.splitWStartIndex_ = 0
    api.rearrangeHIndex_ = api.rearrangeWIndex_ = 0
    api.subPadLeftList_ = api.subPadRightList_ = api.subPadUpList_ = [0] * SUB_KERNEL_NUM
    api.startAddrOffset_ = api.headWi_ = api.midHi_ = api.tailWi_ = 0


def RecalcStepForKernelSplit(api) -> None:
    """stepKa / stepKb of the current sub-kernel: the L1 holds channelSize_ (coutChannelSize_) channels of it."""
    t = api.tiling_
    hkwk = api.splitHkWkList_[api.splitIndex_]
    api.curStepKa_ = DivCeil(api.channelSize_ * hkwk, t.baseK)
    api.curStepKb_ = DivCeil(api.coutChannelSize_ * hkwk, t.baseK)
    if t.stepKb % api.curStepKb_ == 0:
        api.curStepKb_ = t.stepKb  # the sub-kernels divide each other: keep the tiling's stepKb


def InitParamsForKernelSplitH(api) -> None:
    t = api.tiling_
    api.splitIndex_ = 0
    api.splitWi_ = t.wi
    api.splitWkList_[0] = t.wk
    api.splitHkList_[0] = DivCeil(t.hk, t.strideH)  # the largest sub-kernel sizes the buffers
    api.splitHkWkList_[0] = api.splitHkList_[0] * t.wk
    curChannelSize = api.curStepKa_ * t.baseK // api.splitHkWkList_[0]
    api.channelSize_ = min(curChannelSize, AlignUpC0(api, t.singleCoreCout))
    api.coutChannelSize_ = api.curStepKb_ * t.baseK // api.splitHkWkList_[0]
    api.curHoSize_ = CalFmapH(api, min(t.baseM, t.singleCoreM))


def SetKernelSplitParams(api, kSCoutFullLoad: int, kSUseWorkSpace: int) -> None:
    api.kSCoutFullLoad_ = kSCoutFullLoad
    api.kSUseWorkSpace_ = kSUseWorkSpace


def SetSingleShapeParams(api, curSplitHk: int, curBackpropPadUp: int) -> None:
    """The block's sub-kernel: its kernel rows and the top backprop pad of its stride-1 convolution."""
    t, i = api.tiling_, api.splitIndex_
    api.curBackPropPadUp_ = curBackpropPadUp
    api.splitHkList_[i] = curSplitHk
    api.splitHkWkList_[i] = curSplitHk * api.splitWkList_[i]
    api.splitHkWkC0List_[i] = api.splitHkWkList_[i] * t.c0
    RecalcStepForKernelSplit(api)
    p = api.load3d_
    p.filterW = api.splitWkList_[i] & 255
    p.filterH = api.splitHkList_[i] & 255
    p.filterSizeW = bool((api.splitWkList_[i] >> 8) & 255)
    p.filterSizeH = bool((api.splitHkList_[i] >> 8) & 255)


# ------------------------------------------------------------------------------------------------ weight -> L1
def LoadToB1Dn2NzTransposeForKernelSplitH(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """NCDHW (cout, cin, dk, hk, wk) -> (cout1, splitHk*wk, cin_align, cout0): one DN2NZ per kernel row of the
    sub-kernel, strideH rows apart in GM."""
    t, i = api.tiling_, api.splitIndex_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    p = Dn2NzParams()
    p.dnNum = curCinSize
    p.srcDnMatrixStride = t.dkHkWk
    p.dstNzMatrixStride = 1 << t.c0BitsB
    p.dValue = curCoutSize
    p.srcDValue = t.cinG * t.dkHkWk
    p.dstNzC0Stride = api.splitHkWkList_[i] * curCin1Cin0Size
    p.nValue = api.splitWkList_[i]
    p.dstNzNStride = curCin1Cin0Size
    srcGmOffset = dstB1Offset = 0
    for _ in range(api.splitHkList_[i]):
        DataCopy(useB1Buf[dstB1Offset], api.weightGlobal_[src + srcGmOffset], p)
        srcGmOffset += t.wk * t.strideH
        dstB1Offset += api.splitWkList_[i] * (p.dstNzNStride << t.c0BitsB)


def LoadToB1Nd2NzForKernelSplit(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """NDHWC (cout, dk, hk, wk, cin), or the vecTrans workspace (cout, dkhkwk, cin_align16), -> (cout1,
    splitHk*splitWk, cin_align, cout0): one DN2NZ per kernel row of the sub-kernel (its taps as DN matrices),
    strideH rows apart; under TPL_SPLIT_KERNEL_HW the row's taps strideW apart from the sub-kernel's first."""
    t, i = api.tiling_, api.splitIndex_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    cinOffset = AlignUp16(t.cinG) if t.enableVecTrans else t.cinG
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
        strideW = t.strideW
        src += (api.splitHIndex_ * t.wk + api.splitWIndex_) * cinOffset
    else:
        strideW = 1  # TPL_SPLIT_KERNEL_H: every wk tap of the row
    p = Dn2NzParams()
    p.dnNum = api.splitWkList_[i]
    p.srcDnMatrixStride = cinOffset * strideW
    p.dstNzMatrixStride = curCin1Cin0Size << t.c0BitsB
    p.dValue = curCoutSize
    p.srcDValue = cinOffset * t.dkHkWk
    p.dstNzC0Stride = api.splitHkWkList_[i] * curCin1Cin0Size
    p.nValue = curCinSize
    p.dstNzNStride = 1
    srcGmOffset = dstB1Offset = 0
    for _ in range(api.splitHkList_[i]):
        DataCopy(useB1Buf[dstB1Offset], api.weightGlobal_[src + srcGmOffset], p)
        srcGmOffset += t.wk * cinOffset * t.strideH
        dstB1Offset += api.splitWkList_[i] * p.dstNzMatrixStride


# ------------------------------------------------------------------------------------------------ L0C -> y
def CalcCutInWIndexForOnlyH(api) -> None:
    """Split the tile's M range into a partial first row (headWi_), whole rows (midHi_) and a partial last row."""
    t = api.tiling_
    mSize = api.curMIdx_ * t.baseM + api.curMStartIdx_
    curWiPos = t.wi - mSize % t.wi
    api.headWi_ = min(0 if curWiPos == t.wi else curWiPos, api.baseUseM_)
    leftBaseUseM = max(api.baseUseM_ - api.headWi_, 0)
    api.midHi_ = leftBaseUseM // t.wi
    api.tailWi_ = leftBaseUseM - api.midHi_ * t.wi


def _fixpipe_rows(api, output, useC1Buf, p, dstOffset, skipDstOffset, rowDst, nd: bool) -> None:
    """The head, middle rows and tail of the tile (each aligned to 16 rows in L0C), every output row strideH rows
    of dx after the previous one. rowDst: elements per pixel of y along M (1 for DN, cin for ND)."""
    t = api.tiling_
    srcWi = min(api.baseUseM_, api.splitWi_)
    layout = CFG_ROW_MAJOR if nd else CFG_COLUMN_MAJOR

    def rows(num, srcStride, dstStride):
        if nd:
            return Nz2NdParams(ndNum=num, srcNdStride=srcStride, dstNdStride=dstStride)
        return Nz2DnParams(dnNum=num, srcNzMatrixStride=srcStride, dstDnMatrixStride=dstStride, srcNzC0Stride=1)

    srcOffset = 0
    if api.headWi_:
        p.params, p.mSize = rows(1, 0, 0), api.headWi_
        Fixpipe(output[dstOffset], useC1Buf[srcOffset], p, layout)
        srcOffset += api.headWi_ * BLOCK_CUBE  # L0C rows are 16 fp32 wide whatever the dtype
        dstOffset += api.headWi_ * rowDst + skipDstOffset
    if api.midHi_:
        dstRowStride = skipDstOffset + t.wi * rowDst
        p.params, p.mSize = rows(api.midHi_, srcWi, dstRowStride), srcWi
        Fixpipe(output[dstOffset], useC1Buf[srcOffset], p, layout)
        srcOffset += api.midHi_ * srcWi * BLOCK_CUBE
        dstOffset += api.midHi_ * dstRowStride
    if api.tailWi_:
        p.params, p.mSize = rows(1, 0, 0), api.tailWi_
        Fixpipe(output[dstOffset], useC1Buf[srcOffset], p, layout)


def LoadL0c2GmDnForKernelSplitH(api, output, useC1Buf, p: FixpipeParamsArch3510) -> None:
    """NZ (cin1, splithi*wi, cin0) -> DN (cin, di, hi, wi), the sub-kernel's rows strideH rows apart. p: the
    Fixpipe parameters with the dtype's quant mode set (SetFixPipeQuantVal)."""
    t = api.tiling_
    mSize = api.curMIdx_ * t.baseM
    skipDstOffset = t.wi * (t.strideH - 1)
    curSkipMSize = (mSize // t.wi) * skipDstOffset
    dstOffset = api.curNIdx_ * t.baseN * api.diHiWi_ + api.curDinIdx_ * api.hiWi_ + mSize + curSkipMSize
    CalcCutInWIndexForOnlyH(api)
    p.nSize = api.baseUseN_
    p.srcStride = AlignUp16(api.baseUseM_)
    p.dstStride = api.diHiWi_
    p.reluEn = bool(t.enRelu)
    _fixpipe_rows(api, output, useC1Buf, p, dstOffset, skipDstOffset, 1, nd=False)


def LoadL0c2GmNdForKernelSplitH(api, output, useC1Buf, p: FixpipeParamsArch3510) -> None:
    """NZ (cin1, splithi*wi, cin0) -> ND (di, hi, wi, cin), the sub-kernel's rows strideH rows apart."""
    t = api.tiling_
    mSize = api.curMIdx_ * t.baseM
    skipDstOffset = t.wi * (t.strideH - 1) * t.cin
    curSkipMSize = (mSize // t.wi) * skipDstOffset
    dstOffset = api.curNIdx_ * t.baseN + api.curDinIdx_ * api.hiWi_ * t.cin + mSize * t.cin + curSkipMSize
    CalcCutInWIndexForOnlyH(api)
    p.nSize = api.baseUseN_
    p.srcStride = AlignUp16(api.baseUseM_)
    p.dstStride = t.cin
    p.reluEn = bool(t.enRelu)
    _fixpipe_rows(api, output, useC1Buf, p, dstOffset, skipDstOffset, t.cin, nd=True)
