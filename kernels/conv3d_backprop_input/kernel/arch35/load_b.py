"""The weight into L1 (DN2NZ / ND2NZ, transposed or not) and L1 -> L0B (LoadData2DV2, reversing the kernel taps).

Ports impl/conv_bp_input_sub_func_load_gm_to_l1.h (LoadToB1Dn2Nz, LoadToB1Nd2Nz, LoadToB1TransposeForDkHkWkIsOne,
LoadToB1Dn2NzTranspose, LoadToB1Nd2NzForDkHkWkIsOne, LoadToB1Nd2NzTranspose, LoadGmDataToB1DHWCN2NzTranspose,
LoadGmDataToB1, LoadToB1), impl/conv_bp_input_sub_func_index_calc.h (CalcCurCinSizeB1, CalcCoutIndexAndSizeB1) and
the B half of impl/conv_bp_input_sub_func_load_l1_to_l0.h (InitLoadToB2Params, UpdateLoadToB2ParamsN/K,
LoadToB2NoTransposeNoReverse, LoadToB2ReverseOnlyCommon, LoadToB2); the kernel split H loads are in
kernel_split.py, the HW split's L1 -> L0B with Cout held whole in kernel_split_hw.py.

L1 layouts: not transposed (TRANSPOSE_AND_REVERSE): (cin1, hkwk, cout_align16, cin0); transposed (REVERSE_ONLY):
(cout1, hkwk, cin_align16, cout0). With enableVecTrans the weight comes from the workspace the AIV pre-pass wrote,
(Cout, dk*hk*wk, AlignUp16(Cin)), and is loaded as ND.
"""
from __future__ import annotations

from ascend_sim.ascendc import DataCopy, Dn2NzParams, LoadData, LoadData2DParamsV2, Nd2NzParams
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split import (LoadToB1Dn2NzTransposeForKernelSplitH,
                                                                      LoadToB1Nd2NzForKernelSplit)
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split_hw import (LoadToB2ForKernelSplitB1FullLoad,
                                                                         UpdateLoadToB2ParamsNForKernelSplitHW)
from kernels.conv3d_backprop_input.kernel.arch35.load_a import InitZeroValue
from kernels.conv3d_backprop_input.kernel.arch35.util import (FORMAT_DHWCN, FORMAT_NCDHW, TPL_NO_SPLIT_KERNEL,
                                                              TPL_NO_TRANSPOSE_NO_REVERSE, TPL_REVERSE_ONLY,
                                                              TPL_SPLIT_KERNEL_H, TPL_SPLIT_KERNEL_HW,
                                                              TPL_TRANSPOSE_ONLY, AlignUp16, CurHkWk, DivCeil16,
                                                              DivCeilC0, DivCeilHkWk, DivHkWk)


def _nz_params(cls, num, src_matrix, dst_matrix, dValue, srcDValue, c0Stride, nValue, nStride):
    p = cls()
    if cls is Dn2NzParams:
        p.dnNum, p.srcDnMatrixStride = num, src_matrix
    else:
        p.ndNum, p.srcNdMatrixStride = num, src_matrix
    p.dstNzMatrixStride, p.dValue, p.srcDValue = dst_matrix, dValue, srcDValue
    p.dstNzC0Stride, p.nValue, p.dstNzNStride = c0Stride, nValue, nStride
    return p


def LoadToB1NotTransposed(api, cls, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """LoadToB1Dn2Nz (NCDHW) / LoadToB1Nd2Nz (NDHWC): (cout, cin, dkhkwk) -> (cin1, hkwk, cout_align, cin0)."""
    t = api.tiling_
    curCout1Cout0Size = AlignUp16(curCoutSize)
    if curCout1Cout0Size != curCoutSize:
        InitZeroValue(api, useB1Buf)
    srcD = t.dkHkWk if cls is Dn2NzParams else t.cinG
    p = _nz_params(cls, curCoutSize, t.cinG * t.dkHkWk, t.c0, curCinSize, srcD,
                   api.singleShapeHWk_ * curCout1Cout0Size, api.singleShapeHWk_, curCout1Cout0Size)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def LoadToB1TransposeForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """(cout, cin) -> (cout1, cin_align, cout0), one DN matrix."""
    t = api.tiling_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    p = _nz_params(Dn2NzParams, 1, 1, 1, curCoutSize, t.cinG, curCin1Cin0Size, curCinSize, 1)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def LoadToB1Dn2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """NCDHW (cout, cin, dk, hk, wk), one DN matrix per cin -> (cout1, hkwk, cin_align, cout0)."""
    t = api.tiling_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    p = _nz_params(Dn2NzParams, curCinSize, t.dkHkWk, t.c0, curCoutSize, t.cinG * t.dkHkWk,
                   api.singleShapeHWk_ * curCin1Cin0Size, api.singleShapeHWk_, curCin1Cin0Size)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def LoadToB1Nd2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """NDHWC (cout, dk, hk, wk, cin) or the vecTrans workspace (cout, dkhkwk, cin_align16), one DN matrix per
    kernel tap (a DataCopy with Dn2NzParams, despite the name) -> (cout1, hkwk, cin_align, cout0)."""
    t = api.tiling_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    cin_stride = AlignUp16(t.cinG) if t.enableVecTrans else t.cinG
    p = _nz_params(Dn2NzParams, api.singleShapeHWk_, cin_stride, curCin1Cin0Size << t.c0BitsB, curCoutSize,
                   cin_stride * t.dkHkWk, api.singleShapeHWk_ * curCin1Cin0Size, curCinSize, 1)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def LoadToB1Nd2NzForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """1x1x1 kernel, (cout, cin) as ND -> (cin1, cout_align, cin0) for TRANSPOSE_ONLY."""
    t = api.tiling_
    curCout1Cout0Size = AlignUp16(curCoutSize)
    if curCout1Cout0Size != curCoutSize:
        InitZeroValue(api, useB1Buf)
    p = _nz_params(Nd2NzParams, 1, 0, 0, curCinSize, t.cinG * t.dkHkWk, curCout1Cout0Size, curCoutSize, 1)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def LoadGmDataToB1DHWCN2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf) -> None:
    """(dk, hk, wk, cin, cout) -> (cout1, hkwk, cin_align, cout0)."""
    t = api.tiling_
    curCin1Cin0Size = AlignUp16(curCinSize)
    if curCin1Cin0Size != curCinSize:
        InitZeroValue(api, useB1Buf)
    p = _nz_params(Nd2NzParams, api.singleShapeHWk_, t.cinG * t.cout, curCin1Cin0Size << t.c0BitsB, curCoutSize,
                   t.cout, api.singleShapeHWk_ * curCin1Cin0Size, curCinSize, 1)
    DataCopy(useB1Buf, api.weightGlobal_[src], p)


def CalcCoutIndexAndSizeB1(api, kIdx: int) -> tuple[int, int]:
    t = api.tiling_
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW and api.kSCoutFullLoad_:
        return 0, t.singleCoreCout  # the whole of Cout in one B1 buffer
    if kIdx >= api.kIterStepKbTail:
        kbL1Size = (api.stepKbTail - 1) * t.baseK + api.tailK_
    else:
        kbL1Size = api.curStepKb_ * t.baseK
    curCoutIdx = DivHkWk(api, kIdx * t.baseK)
    curCoutSize = min(DivHkWk(api, kbL1Size), api.singleShapeCout_ - curCoutIdx)
    if api.enableSplitK_:
        curCoutIdx += api.curCoutStartIdx_
    return curCoutIdx, curCoutSize


def LoadGmDataToB1(api, kIdx: int, curDkIdx: int) -> None:
    t = api.tiling_
    b2 = api.loadB2Condition
    useB1Buf = api.inQueL1B_.AllocTensor(api.SrcBT)
    curCinIdx = api.curNIdx_ * t.baseN
    curCinSize = min(t.baseN, api.singleShapeCin_ - curCinIdx)
    curCoutIdx, curCoutSize = CalcCoutIndexAndSizeB1(api, kIdx)
    if t.enableVecTrans:
        cinAlign = AlignUp16(t.cinG)
        src = curCoutIdx * cinAlign * t.dkHkWk + curCinIdx + curDkIdx * t.hkWk * cinAlign
        if api.kernelSplitMode == TPL_NO_SPLIT_KERNEL:
            LoadToB1Nd2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf)
        else:
            LoadToB1Nd2NzForKernelSplit(api, curCinSize, curCoutSize, src, useB1Buf)
    elif api.filterFormat == FORMAT_NCDHW:
        # curHkIdx_ / curWkIdx_: the kernel row (tap) of NO_HK (NO_HK_WK); 0 otherwise
        src = (curCoutIdx * t.cinG * t.dkHkWk + curCinIdx * t.dkHkWk + curDkIdx * t.hkWk
               + api.curHkIdx_ * t.wk + api.curWkIdx_)
        if b2 == TPL_TRANSPOSE_ONLY:
            LoadToB1Nd2NzForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf)
        elif b2 != TPL_REVERSE_ONLY:
            LoadToB1NotTransposed(api, Dn2NzParams, curCinSize, curCoutSize, src, useB1Buf)
        elif t.dkHkWk == 1:
            LoadToB1TransposeForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf)
        elif api.kernelSplitMode == TPL_SPLIT_KERNEL_H:
            LoadToB1Dn2NzTransposeForKernelSplitH(api, curCinSize, curCoutSize, src, useB1Buf)
        else:  # the HW split with Cout held whole too (without it the entry refuses the tiling: dkHkWk_)
            LoadToB1Dn2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf)
    elif api.filterFormat == FORMAT_DHWCN:
        src = (curCoutIdx + curCinIdx * t.cout
               + (curDkIdx * t.hkWk + api.curHkIdx_ * t.wk + api.curWkIdx_) * t.cinG * t.cout)
        LoadGmDataToB1DHWCN2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf)
    else:  # NDHWC
        src = (curCoutIdx * t.cinG * t.dkHkWk + curCinIdx
               + (curDkIdx * t.hkWk + api.curHkIdx_ * t.wk + api.curWkIdx_) * t.cinG)
        if b2 == TPL_TRANSPOSE_ONLY:
            LoadToB1Nd2NzForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf)
        elif b2 != TPL_REVERSE_ONLY:
            LoadToB1NotTransposed(api, Nd2NzParams, curCinSize, curCoutSize, src, useB1Buf)
        elif t.dkHkWk == 1:
            LoadToB1TransposeForDkHkWkIsOne(api, curCinSize, curCoutSize, src, useB1Buf)
        elif api.kernelSplitMode == TPL_SPLIT_KERNEL_H or (api.kernelSplitMode == TPL_SPLIT_KERNEL_HW
                                                           and not api.kSCoutFullLoad_):
            LoadToB1Nd2NzForKernelSplit(api, curCinSize, curCoutSize, src, useB1Buf)
        else:  # the HW split with Cout held whole picks its taps at the L1 -> L0B load
            LoadToB1Nd2NzTranspose(api, curCinSize, curCoutSize, src, useB1Buf)
    api.inQueL1B_.EnQue(useB1Buf)


def LoadToB1(api, kIdx: int, curDkIdx: int, loadFlag: bool) -> None:
    if not loadFlag or kIdx >= api.kIter_ or (api.isB1FullLoadFlag_ and not api.isLoadB1_):
        return
    LoadGmDataToB1(api, kIdx, curDkIdx)


def InitLoadToB2Params(api) -> None:
    p = LoadData2DParamsV2()
    p.mStartPosition = 0
    p.kStartPosition = 0
    p.ifTranspose = api.loadB2Condition not in (TPL_REVERSE_ONLY, TPL_NO_TRANSPOSE_NO_REVERSE)
    p.mStep = 1
    p.dstStride = 1
    api.load2dv2_ = p


def UpdateLoadToB2ParamsN(api) -> None:
    t, p = api.tiling_, api.load2dv2_
    api.blockBaseN_ = DivCeil16(api.baseUseN_)
    blockSize = t.c0 << 4
    if api.loadB2Condition != TPL_REVERSE_ONLY:
        p.kStep = api.blockBaseN_
        api.baseB1Offset_ = 0
        api.dstB2Stride_ = api.blockBaseN_ * blockSize
    else:
        if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:
            UpdateLoadToB2ParamsNForKernelSplitHW(api)
        else:
            p.srcStride = -api.blockBaseN_  # negative: walks the kernel taps backwards
            api.dstB2Stride_ = 0
        p.mStep = api.blockBaseN_
        p.dstStride = api.blockBaseN_


def UpdateLoadToB2ParamsK(api, kPos: int) -> None:
    if api.loadB2Condition != TPL_REVERSE_ONLY:
        api.load2dv2_.srcStride = api.curLoadKbl1_ >> api.tiling_.c0BitsB


def LoadToB2NoTransposeNoReverse(api, l1B1Matrix, kPos: int, l0b) -> None:
    p = api.load2dv2_
    p.mStartPosition = 0
    p.kStartPosition = 0
    p.kStep = 1
    p.mStep = api.blockBaseN_ * DivCeilC0(api, api.baseUseK_)
    srcB1Offset = kPos * AlignUp16(api.baseUseN_) * api.tiling_.baseK
    LoadData(l0b, l1B1Matrix[srcB1Offset], p)


def LoadToB2ReverseOnlyCommon(api, l1B1Matrix, blockSize: int, kPos: int, l0b) -> None:
    """baseK may cross several hkwk groups: one call per group, each walking its taps backwards."""
    t, p = api.tiling_, api.load2dv2_
    curHkWkSize = CurHkWk(api)
    kStartPos = kPos * (t.baseK >> t.c0BitsB)
    kEndPos = kStartPos + ((api.baseUseK_ + t.c0 - 1) >> t.c0BitsB)
    hwKStartIdx = DivHkWk(api, kStartPos)
    hwKEndIdx = DivCeilHkWk(api, kEndPos)
    dstB2Offset = 0
    for i in range(hwKEndIdx - hwKStartIdx):
        curHWkStart = (hwKStartIdx + i) * curHkWkSize
        curHWkEnd = curHWkStart + curHkWkSize
        kStepStart = max(curHWkStart, kStartPos)
        kStepEnd = min(curHWkEnd, kEndPos)
        p.kStep = kStepEnd - kStepStart
        p.kStartPosition = curHWkStart
        p.mStartPosition = (curHWkEnd - 1 - kStepStart) * api.blockBaseN_
        LoadData(l0b[dstB2Offset], l1B1Matrix, p)
        dstB2Offset += (kStepEnd - kStepStart) * api.blockBaseN_ * blockSize


def LoadToB2(api, l1B1Matrix, kPos: int, l0b) -> None:
    t, b2 = api.tiling_, api.loadB2Condition
    blockSize = t.c0 << 4
    if b2 == TPL_REVERSE_ONLY:
        if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW and api.kSCoutFullLoad_:
            LoadToB2ForKernelSplitB1FullLoad(api, l1B1Matrix, blockSize, l0b)  # the sub-kernel's taps picked here
        elif t.dkHkWk == 1 and api.kernelSplitMode != TPL_SPLIT_KERNEL_HW:  # transposed in L1, nothing to reverse
            LoadToB2NoTransposeNoReverse(api, l1B1Matrix, kPos, l0b)
        else:
            LoadToB2ReverseOnlyCommon(api, l1B1Matrix, blockSize, kPos, l0b)
    elif b2 == TPL_NO_TRANSPOSE_NO_REVERSE:
        LoadToB2NoTransposeNoReverse(api, l1B1Matrix, kPos, l0b)
    elif b2 == TPL_TRANSPOSE_ONLY:
        kBlockC0Num = kPos * t.baseK >> t.c0BitsB
        for i in range(api.baseUseK_ >> t.c0BitsB):
            srcB1Offset = api.baseB1Offset_ + (kBlockC0Num + i) * blockSize
            LoadData(l0b[i * api.blockBaseN_ * blockSize], l1B1Matrix[srcB1Offset], api.load2dv2_)
    else:  # TRANSPOSE_AND_REVERSE: one transposing call per C0 block of K, from the mirrored tap
        kBlockC0Num = kPos * t.baseK >> t.c0BitsB
        curL1Cout = DivHkWk(api, api.curLoadKbl1_) << t.c0BitsB
        dstB2Offset = 0
        for i in range(api.baseUseK_ >> t.c0BitsB):
            iRev = kBlockC0Num + i
            idxC1out = DivHkWk(api, iRev)
            srcB1Offset = (api.baseB1Offset_ + idxC1out * blockSize
                           + (api.singleShapeHWk_ - 1 + idxC1out * api.singleShapeHWk_ - iRev) * curL1Cout)
            LoadData(l0b[dstB2Offset], l1B1Matrix[srcB1Offset], api.load2dv2_)
            dstB2Offset += api.dstB2Stride_
