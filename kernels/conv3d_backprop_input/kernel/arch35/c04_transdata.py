"""loadB1Condition VEC_TO_L1_C04: the AIVs build the C04 weight in UB and copy it into the AIC's L1
(impl/conv_bp_input_sub_func_c04_transdata.h, GatherDn2Nz4C04 of conv_bp_input_sub_func_vector_intrinsics.h,
InitC04Params of conv3d_bp_func_arch35.h).

With Cout <= 4 the K axis of one kernel plane is hk*wk taps of 4 couts (K = hk*wk*4, aligned up to c0), so a C0-wide
K block holds c0 / 4 taps. The two AIVs take turns by B1 load (`c04LoadToB1IterIdx_ & 1`); the one whose turn it is
copies the weight's cin window, vecBlockN_ cin at a time, GM -> UB as ND ([cout][vecBlockN_][dk*hk*wk], one block
of padding in front; DataCopyPad under SetLoopModePara(OUT_TO_UB)), the couts past Cout zeroed once (InitUbZero4C04),
gathers it into NZ ([k1][AlignUp16(cin)][c0], the taps reversed: K block d holds taps hk*wk-1-4d ... downwards, the
last block's missing taps cut by a mask loaded from UB), and copies that into b1UbPing_ / b1UbPong_ (UB -> L1). Both
AIVs wait for the AIC's FLAG_MTE1_ID_2 before and set FLAG_MTE1_ID_1 after each load (sync.py), whether or not it
was their turn. The source compiles the build out for 8-bit types; the tiling sends only fp16 / bf16 to C04.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (PIPE_V, DataCopy, DataCopyExtParams, DataCopyMVType, DataCopyPad,
                                DataCopyPadExtParams, DataCopyParams, Duplicate, GetSubBlockIdx, HardEvent,
                                LoopModeParams, PaddingMode, PipeBarrier, Reg, SetLoopModePara, SetValue)
from kernels.conv3d_backprop_input.kernel.arch35.group_transdata import (VECTOR_REG_WIDTH, ExpandGatherIdxByStride,
                                                                         GetB1Tbuf, fetched_flag)
from kernels.conv3d_backprop_input.kernel.arch35.sync import NotifyCubeAfterLoadToB1, WaitForCubeBeforeLoadToB1
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, C04_COUT_SIZE, C04_SHIFT_SIZE, TOTAL_UB_SIZE,
                                                              AlignUp, AlignUp16, DivCeil, DivCeil16)

ONE_BLOCK_SIZE = 32
ONE_BLK_SHIFT_SIZE = 5
MASK_REG_WIDTH = VECTOR_REG_WIDTH // 8  # one bit per byte lane


def C04UbBufSize() -> int:
    """C04_UB_BUF_SIZE: each of the ND and NZ buffers, after one register of index, one of mask and one block."""
    return (TOTAL_UB_SIZE() - VECTOR_REG_WIDTH - MASK_REG_WIDTH - ONE_BLOCK_SIZE) >> 1


def InitC04Params(api) -> None:
    """vecBlockN_: the cin (a multiple of 16) whose ND ([4][cin][dk*hk*wk]) and NZ weight fit half the UB each."""
    t = api.tiling_
    api.c04LoadToB1IterIdx_ = 0
    c04UbPixNum = C04UbBufSize() // api.SrcBT.itemsize
    tmpVal1 = t.dkHkWk << C04_SHIFT_SIZE
    tmpVal2 = AlignUp(t.hkWk << C04_SHIFT_SIZE, t.c0)
    api.vecBlockN_ = ((c04UbPixNum // max(tmpVal1, tmpVal2)) >> 4) << 4


def InitUbZero4C04(api, b1CinSize: int) -> None:
    """Zero the ND rows of the couts past Cout (they stay zero: the copies never write them)."""
    t = api.tiling_
    api.ndVecTensor_ = api.ndVecBuf_.Get(api.SrcBT)
    ubCinSize = min(b1CinSize, api.vecBlockN_)
    ubPixCount = ubCinSize * t.dkHkWk
    ubOffset = ONE_BLOCK_SIZE // api.SrcBT.itemsize + t.cout * api.vecBlockN_ * t.dkHkWk
    for _ in range(t.cout, C04_COUT_SIZE):
        Duplicate(api.ndVecTensor_[ubOffset], 0, ubPixCount)
        ubOffset += api.vecBlockN_ * t.dkHkWk


def LoadUb4C04(api, cinBlockSize: int, srcGmOffset: int) -> None:
    """The cinBlockSize cin of every cout (all dk*hk*wk taps) GM -> UB, each cout's row vecBlockN_ cin long."""
    t = api.tiling_
    loopParams = LoopModeParams(loop1Size=1, loop2Size=1)  # the normal loop: one iteration of each
    SetLoopModePara(loopParams, DataCopyMVType.OUT_TO_UB)
    size = api.SrcBT.itemsize
    cinDataLen = t.dkHkWk * size
    oriBlockLen = cinBlockSize * cinDataLen
    alignedBlockLen = AlignUp(oriBlockLen, ONE_BLOCK_SIZE)
    rightPadding = (alignedBlockLen - oriBlockLen) // size
    padParams = DataCopyPadExtParams(True, 0, rightPadding, 0)
    gm2UbParams = DataCopyExtParams()
    gm2UbParams.blockLen = oriBlockLen
    gm2UbParams.blockCount = t.cout
    gm2UbParams.srcStride = (t.cin - cinBlockSize) * cinDataLen
    gm2UbParams.dstStride = (api.vecBlockN_ * cinDataLen - alignedBlockLen) >> ONE_BLK_SHIFT_SIZE
    ubOffset = ONE_BLOCK_SIZE // size
    DataCopyPad(api.ndVecTensor_[ubOffset], api.weightGlobal_[srcGmOffset], gm2UbParams, padParams,
                mode=PaddingMode.Normal)


def SetGatherIdx4C04(api) -> None:
    """Lane (cin row r, tap group g, cout j) of a register reads ND element j*vecBlockN_*dkHkWk + r*dkHkWk +
    (c0/4 - 1 - g): the taps of a K block in reverse."""
    t = api.tiling_
    api.idxVecTensor_ = api.idxVecBuf_.Get(api.IndexT)
    idx = 0
    for kernelIdx in range(t.c0 // C04_COUT_SIZE - 1, -1, -1):
        idxVal = kernelIdx
        for _ in range(C04_COUT_SIZE):
            SetValue(api.idxVecTensor_, idx, idxVal)
            idx += 1
            idxVal += api.vecBlockN_ * t.dkHkWk
    fetched_flag(api, HardEvent.S_V)
    repeatTimes = (VECTOR_REG_WIDTH // api.IndexT.itemsize >> t.c0BitsB) - 1
    ExpandGatherIdxByStride(api.idxVecTensor_, repeatTimes, t.c0, t.c0, t.c0, t.dkHkWk, api.IndexT)


def SetGatherTailMask4C04(api) -> None:
    """The last K block reads only the hkWk % (c0/4) taps that exist: one mask word (32 lanes of bytes) per c0
    elements, its low bits on."""
    t = api.tiling_
    api.maskVecTensor_ = api.maskVecBuf_.Get(np.uint32)
    maskVal = 0xFFFFFFFF
    kernelNumInC0 = t.c0 >> C04_SHIFT_SIZE
    tmpVal = t.hkWk % kernelNumInC0
    if api.SrcBT.itemsize == 4:  # float
        if tmpVal == 1:
            maskVal = 0xFFFF
    else:  # bfloat16 / half: 2 bytes a lane, 8 bits a tap
        maskVal = {3: 0xFFFFFF, 2: 0xFFFF, 1: 0xFF}.get(tmpVal, maskVal)
    repeatTimes = VECTOR_REG_WIDTH // api.IndexT.itemsize >> t.c0BitsB
    for idx in range(repeatTimes):
        SetValue(api.maskVecTensor_, idx, maskVal)


def SetIdxAndMask4C04(api, loopIdx: int) -> None:
    """The gather index and tail mask are built once, on each AIV's first turn."""
    if api.c04LoadToB1IterIdx_ != GetSubBlockIdx() or loopIdx > 0:
        return
    SetGatherIdx4C04(api)
    PipeBarrier(PIPE_V)
    SetGatherTailMask4C04(api)
    fetched_flag(api, HardEvent.S_V)


def GatherDn2Nz4C04(api, idxAddr, srcAddr, dstAddr, maskAddr, k1: int, n1IterMax: int, srcN1Stride: int,
                    srcK1Stride: int, dstN1Stride: int, dstK1Stride: int) -> None:
    """__simd_vf__: the full K blocks from the last taps down, then the first (tail) block under the UB mask."""
    gatherReg = Reg.RegTensor(api.SrcBT)
    idxReg = Reg.RegTensor(api.IndexT)
    maskReg = Reg.CreateMask(api.SrcBT, Reg.MaskPattern.ALL)
    Reg.LoadAlign(idxReg, idxAddr)
    for k1Idx in range(k1, 1, -1):
        for n1Idx in range(n1IterMax):
            srcOffset = n1Idx * srcN1Stride + (k1Idx - 1) * srcK1Stride
            dstOffset = n1Idx * dstN1Stride + (k1 - k1Idx) * dstK1Stride
            Reg.Gather(gatherReg, srcAddr[srcOffset], idxReg, maskReg)
            Reg.StoreAlign(dstAddr[dstOffset], gatherReg, maskReg)
    tailMaskReg = Reg.CreateMask(api.SrcBT, Reg.MaskPattern.ALL)
    Reg.LoadAlign(tailMaskReg, maskAddr)
    for n1Idx in range(n1IterMax):
        srcOffset = n1Idx * srcN1Stride
        dstOffset = n1Idx * dstN1Stride + (k1 - 1) * dstK1Stride
        Reg.Gather(gatherReg, srcAddr[srcOffset], idxReg, tailMaskReg)
        Reg.StoreAlign(dstAddr[dstOffset], gatherReg, maskReg)


def Dn2Nz4C04(api, cinBlockSize: int, curDkIdx: int, loopIdx: int) -> None:
    """ND [4][cin][dk*hk*wk] of kernel plane curDkIdx -> NZ [k1][AlignUp16(cin)][c0] in nzVecBuf_. The source
    pointer starts k1*4 - hkWk taps before the plane, so the tail block's lanes past the plane's first tap read the
    previous elements (or the block of padding in front): the mask drops them."""
    t = api.tiling_
    SetIdxAndMask4C04(api, loopIdx)
    C0PerReg = VECTOR_REG_WIDTH // api.IndexT.itemsize >> t.c0BitsB
    C0LoopTimes = BLOCK_CUBE // C0PerReg
    kernelNumInC0 = t.c0 >> C04_SHIFT_SIZE
    k1 = DivCeil(t.hkWk, kernelNumInC0)
    n1 = DivCeil16(cinBlockSize)
    srcN1Stride = C0PerReg * t.dkHkWk
    srcK1Stride = kernelNumInC0
    dstN1Stride = C0PerReg << t.c0BitsB
    dstK1Stride = AlignUp16(cinBlockSize) << t.c0BitsB
    api.nzVecTensor_ = api.nzVecBuf_.Get(api.SrcBT)
    srcStart = ONE_BLOCK_SIZE // api.SrcBT.itemsize + curDkIdx * t.hkWk - (k1 * kernelNumInC0 - t.hkWk)
    GatherDn2Nz4C04(api, api.idxVecTensor_, api.ndVecTensor_[srcStart], api.nzVecTensor_, api.maskVecTensor_, k1,
                    n1 * C0LoopTimes, srcN1Stride, srcK1Stride, dstN1Stride, dstK1Stride)


def CopyUb2L14C04(api, cinBlockSize: int, b1CinSize: int, useB1Buf, dstB1Offset: int) -> None:
    """The NZ block into L1: in one piece when it is the whole B1 cin, else k1 rows of its cin, b1 cin apart."""
    t = api.tiling_
    p = DataCopyParams()
    if cinBlockSize == b1CinSize:
        p.blockCount = 1
        p.blockLen = (AlignUp16(cinBlockSize) * AlignUp(t.hkWk * C04_COUT_SIZE, t.c0)
                      * api.SrcBT.itemsize) >> ONE_BLK_SHIFT_SIZE
        p.srcStride = p.dstStride = 0
        DataCopy(useB1Buf, api.nzVecTensor_, p)
    else:
        p.blockCount = DivCeil(t.hkWk, t.c0 >> C04_SHIFT_SIZE)
        p.blockLen = AlignUp16(cinBlockSize)
        p.srcStride = 0
        p.dstStride = AlignUp16(b1CinSize) - AlignUp16(cinBlockSize)
        DataCopy(useB1Buf[dstB1Offset], api.nzVecTensor_, p)


def C04TransdataWeightCore(api, b1CinSize: int, srcGmOffset: int, useB1Buf, curDkIdx: int) -> None:
    t = api.tiling_
    loopCnt = DivCeil(b1CinSize, api.vecBlockN_)
    cinRemain = b1CinSize
    cinBlockSize = min(cinRemain, api.vecBlockN_)
    dstB1Offset = 0
    for i in range(loopCnt):
        fetched_flag(api, HardEvent.V_MTE2)  # the copy waits for the Duplicate or the last gather
        LoadUb4C04(api, cinBlockSize, srcGmOffset)
        srcGmOffset += cinBlockSize * t.dkHkWk
        fetched_flag(api, HardEvent.MTE2_V)  # the gather waits for the copy
        fetched_flag(api, HardEvent.MTE3_V)  # and for the last UB -> L1 copy
        Dn2Nz4C04(api, cinBlockSize, curDkIdx, i)
        fetched_flag(api, HardEvent.V_MTE3)  # UB -> L1 waits for the gather
        CopyUb2L14C04(api, cinBlockSize, b1CinSize, useB1Buf, dstB1Offset)
        dstB1Offset += AlignUp16(cinBlockSize) << t.c0BitsB
        cinRemain -= cinBlockSize
        cinBlockSize = min(cinRemain, api.vecBlockN_)


def C04TransdataWeight(api, kIdx: int, curDkIdx: int) -> None:
    """One B1 load: both AIVs take part in the handshake, the one whose turn it is builds the weight."""
    t = api.tiling_
    WaitForCubeBeforeLoadToB1(api)
    useB1Tbuf = GetB1Tbuf(api, kIdx)
    if GetSubBlockIdx() == (api.c04LoadToB1IterIdx_ & 1):
        curCinIdx = api.curNIdx_ * t.baseN
        b1CinSize = min(t.baseN, api.singleShapeCin_ - curCinIdx)  # CalcCurCinSizeB1
        srcGmOffset = curCinIdx * t.dkHkWk
        if api.SrcBT.itemsize > 1:  # "调用指令不支持hif8": compiled out for hifloat8 / fp8 / int8
            if GetSubBlockIdx() == api.c04LoadToB1IterIdx_:  # each AIV zeroes on its first turn only
                InitUbZero4C04(api, b1CinSize)
            C04TransdataWeightCore(api, b1CinSize, srcGmOffset, useB1Tbuf, curDkIdx)
    NotifyCubeAfterLoadToB1(api)

