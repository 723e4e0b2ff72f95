"""The HW kernel split's way out (kernelSplitMode TPL_SPLIT_KERNEL_HW): L0C -> the AIV's UB, or with
kSUseWorkSpace the AIC's workspace slice, then AIV sub-block 0 re-interleaves the two W phases into rows of y.

Port of impl/conv_bp_input_sub_func_kernelsplit_hw.h (LoadL0c2UbForKernelSplitInner, LoadL0c2GMForKernelSplitInner,
LoadL0c2OutForKernelSplitHW, LoadWorkSpaceDataToUb(Inner), InterleaveUbOutForKernelSplit, SetDataCopyPadLoopInfo,
DataCopyUbToGmForKernelSplit, LoadUbToGmForKernelSplit, Rearrange2GmForL0cToWorkSpace, Rearrange2Gm),
impl/conv_bp_input_sub_func_index_calc.h (CalcCutInWIndex) and impl/conv_bp_input_sub_func_vector_intrinsics.h
(InterleaveKernelSplitNormal / InterleaveKernelSplit1x1, on the simulator's Reg:: micro-API).

A tile of a sub-kernel is baseUseM of its pixels, which cover a head (the end of a dx row), whole rows and a tail
in dx (CalcCutInWIndex, in dx pixels: crossBlockNum 1 doubles the sub-kernel's counts). The AIC Fixpipes each piece
NZ2DN, rounded to DstT, into its AIV's UB (CFG_COLUMN_MAJOR_UB; each piece's row Fixpiped whole to its 32-byte
alignment) or into the workspace: channel n at n * hwSize, each piece's row padded to 32 bytes (AlignUpByDtype), the
W phase rearrangeW at rearrangeW * hwSize * baseUseN, in the workspace the AIC's slice at GetAicBlockIdx() * 2 *
hwAlign. After the second W phase the AIV (from the workspace: after copying both phases to UB with DataCopyPad
Compact, as many channels at a time as UB holds) interleaves them
element by element (Reg::Interleave; 8-bit types as uint8), and writes the rows of its H phase to y every other
row: one DataCopyPad UB -> GM per piece, repeated over the channels by SetLoopModePara(UB_TO_OUT) (loop1Size
channels, UB planes 2 * hwSize apart, y planes Di*Hi*Wi apart), then ResetLoopModePara. With an odd wi the
interleaved rows carry one pixel too many, which the copies leave out.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (CFG_COLUMN_MAJOR, CFG_COLUMN_MAJOR_UB, DataCopyExtParams, DataCopyMVType, DataCopyPad,
                                DataCopyPadExtParams, Fixpipe, FixpipeParamsArch3510, HardEvent, LoopModeParams,
                                Nz2DnParams, PaddingMode, Reg, ResetLoopModePara, SetFlag, SetLoopModePara,
                                WaitFlag)
from kernels.conv3d_backprop_input.kernel.arch35.util import (TOTAL_UB_SIZE, AlignUp, AlignUp16, DivCeil,
                                                              GetAicBlockIdx)

CROSS_BLOCK_NUM = 1  # two W phases: shifts of 1 double and halve
ONE_BLK_SHIFT_SIZE = 5  # 32-byte DataBlocks


def AlignUpByDtype(a: int, dtypeBit: int) -> int:
    return ((a + (1 << dtypeBit) - 1) >> dtypeBit) << dtypeBit


def Align32ByteBits(api) -> int:
    """Elements of DstT in 32 bytes, as a shift: 4 (16) for the 16- and 32-bit types, 5 (32) for 8-bit."""
    return 5 if api.DstT.itemsize == 1 else 4


def CalcCutInWIndex(api, crossBlockNum: int) -> None:
    """headWi_ / midHi_ / tailWi_ of the tile, in dx pixels of rows wiUsed = AlignUp(wi, strideW) wide."""
    t = api.tiling_
    doubleBaseUseM = api.baseUseM_ << crossBlockNum
    wiUsed = AlignUp(t.wi, t.strideW)
    mSize = api.curMIdx_ * (t.baseM << crossBlockNum)
    curWiPos = wiUsed - mSize % wiUsed  # what the previous tile left of its last row
    api.headWi_ = 0 if curWiPos > doubleBaseUseM or curWiPos == wiUsed else curWiPos
    leftBaseUseM = doubleBaseUseM - api.headWi_
    api.midHi_ = leftBaseUseM // wiUsed
    api.tailWi_ = leftBaseUseM - api.midHi_ * wiUsed


def HwAlign(api, align32Byte: int) -> int:
    """The elements of one W phase of the largest tile: the slice of a core is twice this."""
    t = api.tiling_
    hi = DivCeil(t.baseM, api.splitWi_)
    return AlignUpByDtype(api.splitWi_, align32Byte) * hi * t.baseN


def TileHwSize(api, align32Byte: int, crossBlockNum: int) -> int:
    """One channel's elements of one W phase of this tile: head, middle rows and tail, each row 32-byte aligned."""
    srcWi = min(api.baseUseM_, api.splitWi_)
    return (AlignUpByDtype(api.headWi_ >> crossBlockNum, align32Byte) + api.midHi_ * AlignUpByDtype(srcWi, align32Byte)
            + AlignUpByDtype(api.tailWi_ >> crossBlockNum, align32Byte))


# ------------------------------------------------------------------------------------------- AIC: L0C -> GM
def FixpipePieces(api, useC1Buf, p: FixpipeParamsArch3510, dst, config, alignM: bool, crossBlockNum: int) -> None:
    """The tile's head, middle rows and tail, one channel hwSize apart: the shared body of
    LoadL0c2GMForKernelSplitInner (mSize the pieces' own lengths) and LoadL0c2UbForKernelSplitInner (alignM: each
    piece Fixpiped whole to its 32-byte alignment; the rows past the tile are padding the AIV never writes out)."""
    align32Byte = Align32ByteBits(api)
    srcWi = min(api.baseUseM_, api.splitWi_)
    realHeadWi = api.headWi_ >> crossBlockNum
    realTailWi = api.tailWi_ >> crossBlockNum
    alignMidWi = AlignUpByDtype(srcWi, align32Byte)
    srcOffset = dstOffset = 0
    p.dstStride = TileHwSize(api, align32Byte, crossBlockNum)  # one channel to the next (elements)
    if api.headWi_:
        alignHeadWi = AlignUpByDtype(realHeadWi, align32Byte)
        p.params = Nz2DnParams(dnNum=1, srcNzMatrixStride=0, dstDnMatrixStride=0, srcNzC0Stride=1)
        p.mSize = alignHeadWi if alignM else realHeadWi
        Fixpipe(dst[dstOffset], useC1Buf[srcOffset], p, config)
        srcOffset += realHeadWi << 4  # L0C rows are 16 fp32 wide whatever the dtype
        dstOffset += alignHeadWi
    if api.midHi_:
        p.params = Nz2DnParams(dnNum=api.midHi_, srcNzMatrixStride=srcWi, dstDnMatrixStride=alignMidWi,
                               srcNzC0Stride=1)
        p.mSize = alignMidWi if alignM else srcWi
        Fixpipe(dst[dstOffset], useC1Buf[srcOffset], p, config)
        srcOffset += api.midHi_ * srcWi << 4
        dstOffset += api.midHi_ * alignMidWi
    if api.tailWi_:
        p.params = Nz2DnParams(dnNum=1, srcNzMatrixStride=0, dstDnMatrixStride=0, srcNzC0Stride=1)
        p.mSize = AlignUpByDtype(realTailWi, align32Byte) if alignM else realTailWi
        Fixpipe(dst[dstOffset], useC1Buf[srcOffset], p, config)


def LoadL0c2GMForKernelSplitInner(api, useC1Buf, p: FixpipeParamsArch3510, crossBlockNum: int) -> None:
    """Into the workspace: W phase rearrangeW after the other, in the AIC's slice, until the AIV has both."""
    align32Byte = Align32ByteBits(api)
    hwSize = TileHwSize(api, align32Byte, crossBlockNum)
    wsDstOffset = (hwSize * api.baseUseN_ * api.rearrangeWIndex_
                   + GetAicBlockIdx() * (HwAlign(api, align32Byte) << crossBlockNum))
    FixpipePieces(api, useC1Buf, p, api.l0cOutWorkspace_[wsDstOffset], CFG_COLUMN_MAJOR, False, crossBlockNum)


def LoadL0c2UbForKernelSplitInner(api, useC1Buf, p: FixpipeParamsArch3510, crossBlockNum: int) -> None:
    """Into AIV sub-block 0's UB: W phase rearrangeW after the other."""
    api.vecOutBuf_ = api.vecBuf_.Get(api.DstT)
    hwSize = TileHwSize(api, Align32ByteBits(api), crossBlockNum)
    ubDstOffset = hwSize * api.baseUseN_ * api.rearrangeWIndex_
    FixpipePieces(api, useC1Buf, p, api.vecOutBuf_[ubDstOffset], CFG_COLUMN_MAJOR_UB, True, crossBlockNum)


def LoadL0c2OutForKernelSplitHW(api, useC1Buf, p: FixpipeParamsArch3510) -> None:
    """The tile of the current sub-kernel, rounded to DstT, into the AIV's UB or (kSUseWorkSpace) the workspace.
    p: the Fixpipe parameters with the dtype's quant mode set (SetFixPipeQuantVal)."""
    CalcCutInWIndex(api, CROSS_BLOCK_NUM)
    p.nSize = api.baseUseN_
    p.reluEn = bool(api.tiling_.enRelu)
    p.srcStride = AlignUp16(api.baseUseM_)
    if api.kSUseWorkSpace_:
        LoadL0c2GMForKernelSplitInner(api, useC1Buf, p, CROSS_BLOCK_NUM)
    else:
        LoadL0c2UbForKernelSplitInner(api, useC1Buf, p, CROSS_BLOCK_NUM)


# --------------------------------------------------------------------------------------------- AIV: -> y
def ReinterpretDstT(api, tensor):
    """The 8-bit types move and interleave as uint8 (Interleave has no hifloat8)."""
    return tensor.ReinterpretCast(np.uint8) if api.DstT.itemsize == 1 else tensor


def LoadWorkSpaceDataToUb(api, hwSize: int, curUseN: int, srcOffset: int) -> None:
    """Both W phases of curUseN channels: phase 0 at UB 0, phase 1 right after it."""
    t = api.tiling_
    size = api.DstT.itemsize
    api.vecOutBuf_ = api.vecBuf_.Get(api.DstT)
    mte2Param = DataCopyExtParams(1, curUseN * hwSize * size, 0, 0)
    ub, ws = ReinterpretDstT(api, api.vecOutBuf_), ReinterpretDstT(api, api.l0cOutWorkspace_)
    pad = DataCopyPadExtParams(False, 0, 0, 0)
    DataCopyPad(ub, ws[srcOffset], mte2Param, pad, mode=PaddingMode.Compact)
    if t.wk != 1 or t.hk != 1:  # a 1x1 kernel has one W phase only
        DataCopyPad(ub[hwSize * curUseN], ws[srcOffset + hwSize * api.baseUseN_], mte2Param, pad,
                    mode=PaddingMode.Compact)
    eventIdMte2ToVec = api.pipe_.FetchEventID(HardEvent.MTE2_V)
    SetFlag(HardEvent.MTE2_V, eventIdMte2ToVec)
    WaitFlag(HardEvent.MTE2_V, eventIdMte2ToVec)
    api.pipe_.ReleaseEventID(HardEvent.MTE2_V, eventIdMte2ToVec)  # a fetch holds no ID (splitk_cast.py)


def InterleaveUbOutForKernelSplit(api, dataLen: int, crossBlockNum: int) -> None:
    """UB [0, dataLen) and [dataLen, 2 dataLen) interleaved element by element into [2 dataLen, 4 dataLen), one
    register (VL bytes) of each source at a time (a 1x1 kernel interleaves with zeros)."""
    t = api.tiling_
    buf = ReinterpretDstT(api, api.vecOutBuf_)
    ReDstT = buf.dtype
    vfLen = Reg.VL // ReDstT.itemsize
    doubleVfLen = vfLen << crossBlockNum
    repeatTimes = DivCeil(dataLen, vfLen)
    twoBlockLen = dataLen << crossBlockNum
    preg = Reg.CreateMask(ReDstT, Reg.MaskPattern.ALL)
    src0, src1, dst0, dst1 = (Reg.RegTensor(ReDstT) for _ in range(4))
    kernelFlag1 = t.wk == 1 and t.hk == 1
    for i in range(repeatTimes):  # InterleaveKernelSplitNormal / InterleaveKernelSplit1x1
        Reg.LoadAlign(src0, buf[i * vfLen])
        if kernelFlag1:
            Reg.Duplicate(src1, 0)
        else:
            Reg.LoadAlign(src1, buf[dataLen + i * vfLen])
        Reg.Interleave(dst0, dst1, src0, src1)
        Reg.StoreAlign(buf[twoBlockLen + i * doubleVfLen], dst0, preg)
        Reg.StoreAlign(buf[twoBlockLen + vfLen + i * doubleVfLen], dst1, preg)


def SetDataCopyPadLoopInfo(api, hwSize: int, curUseN: int, crossBlockNum: int) -> None:
    size = api.DstT.itemsize
    SetLoopModePara(LoopModeParams(loop1Size=curUseN, loop2Size=1,
                                   loop1SrcStride=(hwSize << crossBlockNum) * size,
                                   loop1DstStride=api.diHiWi_ * size, loop2SrcStride=0, loop2DstStride=0),
                    DataCopyMVType.UB_TO_OUT)


def DataCopyUbToGmForKernelSplit(api, output, srcOffset: int, dstOffset: int, crossBlockNum: int) -> None:
    """The interleaved head, middle rows and tail of one channel into y (the loop mode repeats them per channel)."""
    t = api.tiling_
    size = api.DstT.itemsize
    wiUsed = AlignUp(t.wi, t.strideW)
    align32Byte = Align32ByteBits(api)
    p = DataCopyExtParams()
    p.srcStride = 0
    if api.headWi_:
        realHeadWi = api.headWi_
        if api.rearrangeWIndex_ == 1 and t.wi & 1:
            realHeadWi -= 1  # an odd wi: the head's last pixel is the padding column
        p.blockLen, p.blockCount, p.dstStride = realHeadWi * size, 1, 0
        DataCopyPad(output[dstOffset], api.vecOutBuf_[srcOffset], p)
        srcOffset += AlignUpByDtype(api.headWi_ >> crossBlockNum, align32Byte) << crossBlockNum
        dstOffset += realHeadWi + t.wi  # past the other H phase's row
    if api.midHi_:
        srcWi = min(api.baseUseM_, api.splitWi_)
        alignWi = AlignUpByDtype(srcWi, align32Byte)
        p.srcStride = ((alignWi << crossBlockNum) - wiUsed) * size >> ONE_BLK_SHIFT_SIZE
        p.blockLen, p.blockCount, p.dstStride = t.wi * size, api.midHi_, t.wi * size
        DataCopyPad(output[dstOffset], api.vecOutBuf_[srcOffset], p)
        srcOffset += alignWi * api.midHi_ << crossBlockNum
        dstOffset += t.wi * api.midHi_ << crossBlockNum
    if api.tailWi_:
        p.blockLen, p.blockCount, p.dstStride = api.tailWi_ * size, 1, 0
        DataCopyPad(output[dstOffset], api.vecOutBuf_[srcOffset], p)


def LoadUbToGmForKernelSplit(api, output, curUseN: int, hwSize: int, dstNOffset: int, crossBlockNum: int) -> None:
    t = api.tiling_
    wiUsed = AlignUp(t.wi, t.strideW)
    mSize = api.curMIdx_ * t.baseM << crossBlockNum
    hiUsed = mSize // wiUsed
    mUseSize = hiUsed * t.wi + mSize - hiUsed * wiUsed
    curSkipMSize = hiUsed * t.wi  # the other H phase's rows
    dstOffset = (api.curNIdx_ * t.baseN * api.diHiWi_ + api.curDinIdx_ * api.hiWi_ + mUseSize + curSkipMSize
                 + api.rearrangeHIndex_ * t.wi + dstNOffset)
    SetDataCopyPadLoopInfo(api, hwSize, curUseN, crossBlockNum)
    srcOffset = (curUseN * hwSize) << crossBlockNum  # the interleaved copy
    DataCopyUbToGmForKernelSplit(api, output, srcOffset, dstOffset, crossBlockNum)
    ResetLoopModePara(DataCopyMVType.UB_TO_OUT)


def Rearrange2GmForL0cToWorkSpace(api, output, align32Byte: int, hwSize: int, dataLen: int,
                                  crossBlockNum: int) -> None:
    """As many channels at a time as four UB regions of their size fit (the two phases, their interleave)."""
    size = api.DstT.itemsize
    loopIter = DivCeil(dataLen * size * 4, TOTAL_UB_SIZE())
    baseUseN = api.baseUseN_ // loopIter
    loopIter = DivCeil(api.baseUseN_, baseUseN)
    tailUseN = api.baseUseN_ - (loopIter - 1) * baseUseN
    srcNOffset = GetAicBlockIdx() * HwAlign(api, align32Byte) << crossBlockNum
    dstNOffset = 0
    pipe = api.pipe_
    eventIdVecToMte3 = pipe.FetchEventID(HardEvent.V_MTE3)
    eventIdMte3ToMte2 = pipe.FetchEventID(HardEvent.MTE3_MTE2)
    for i in range(loopIter):
        if i != 0:
            WaitFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
        last = i == loopIter - 1
        curUseN = tailUseN if last else baseUseN
        LoadWorkSpaceDataToUb(api, hwSize, curUseN, srcNOffset)
        InterleaveUbOutForKernelSplit(api, curUseN * hwSize, crossBlockNum)
        SetFlag(HardEvent.V_MTE3, eventIdVecToMte3)
        WaitFlag(HardEvent.V_MTE3, eventIdVecToMte3)
        LoadUbToGmForKernelSplit(api, output, curUseN, hwSize, dstNOffset, crossBlockNum)
        srcNOffset += baseUseN * hwSize
        dstNOffset += baseUseN * api.diHiWi_
        if not last:
            SetFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
    pipe.ReleaseEventID(HardEvent.V_MTE3, eventIdVecToMte3)
    pipe.ReleaseEventID(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)


def Rearrange2Gm(api, output) -> None:
    """AIV sub-block 0: the H phase of the tile, both W phases interleaved, into y (VecPostProcess)."""
    api.vecOutBuf_ = api.vecBuf_.Get(api.DstT)
    CalcCutInWIndex(api, CROSS_BLOCK_NUM)
    align32Byte = Align32ByteBits(api)
    hwSize = TileHwSize(api, align32Byte, CROSS_BLOCK_NUM)
    dataLen = hwSize * api.baseUseN_
    if api.kSUseWorkSpace_:
        Rearrange2GmForL0cToWorkSpace(api, output, align32Byte, hwSize, dataLen, CROSS_BLOCK_NUM)
        return
    InterleaveUbOutForKernelSplit(api, dataLen, CROSS_BLOCK_NUM)  # both W phases are in UB already
    pipe = api.pipe_
    eventIdVecToMte3 = pipe.FetchEventID(HardEvent.V_MTE3)
    SetFlag(HardEvent.V_MTE3, eventIdVecToMte3)
    WaitFlag(HardEvent.V_MTE3, eventIdVecToMte3)
    pipe.ReleaseEventID(HardEvent.V_MTE3, eventIdVecToMte3)
    LoadUbToGmForKernelSplit(api, output, api.baseUseN_, hwSize, 0, CROSS_BLOCK_NUM)
