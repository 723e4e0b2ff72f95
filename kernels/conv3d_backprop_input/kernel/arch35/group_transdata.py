"""groupConvMode ENLARGE: the AIV builds the block-diagonal weight of `enlarge` groups in UB and copies it into
the AIC's L1 (impl/conv_bp_input_sub_func_group_transdata.h, the Gather VFs of
conv_bp_input_sub_func_vector_intrinsics.h, GetB1Tbuf of conv_bp_input_sub_func_utils.h).

The tiling merges `enlarge` original groups into one (cinG = enlarge * cin/oriGroup, coutG likewise): the weight of
the merged group is block-diagonal, group j's (coutPerGroup x cinPerGroup) taps on the diagonal, zeros elsewhere.
Per B1 load AIV sub-block 0 waits for the AIC to free the B1 buffer (FLAG_MTE1_ID_2), zeroes its ND buffer
(Duplicate), brings the curEnlarge groups of this kernel plane in by one 4-loop ND-DMA straight onto the diagonal
([coutG][cinG1 * 16][hk*wk]), gathers it into NZ ([coutG1][hk*wk][cinG1 * 16][cout0], Reg::Gather with an index
of c0 couts by 256 / (sizeof(IndexT) * c0) cin rows), copies the block's cout / cin window into b1UbPing_ or
b1UbPong_ (UB -> L1, the AIC's L1) and sets FLAG_MTE1_ID_1. The layout in L1 is the REVERSE_ONLY one of the GM
loads, (cout1, hkwk, cin_align16, cout0), so the AIC's LoadToB2 is unchanged. 8-bit types are compiled out in the
source (the ND-DMA takes none) and the tiling never enlarges them.
"""
from __future__ import annotations

from ascend_sim.ascendc import (PIPE_MTE3, PIPE_V, DataCopy, DataCopyParams, Duplicate, GetSubBlockIdx, HardEvent,
                                NdDmaConfig, NdDmaLoopInfo, NdDmaParams, PipeBarrier, Reg, SetFlag, SetValue,
                                WaitFlag)
from kernels.conv3d_backprop_input.kernel.arch35.load_b import CalcCoutIndexAndSizeB1
from kernels.conv3d_backprop_input.kernel.arch35.sync import CvCrossCoreSet, CvCrossCoreWait
from kernels.conv3d_backprop_input.kernel.arch35.util import (BLOCK_CUBE, FLAG_MTE1_ID_1, FLAG_MTE1_ID_2,
                                                              FORMAT_NCDHW, FORMAT_NDHWC, AlignUp16, DivCeil16,
                                                              DivCeilC0)

GROUP_NDDMA_DIM_NUM = 4
INDEX_0, INDEX_1, INDEX_2, INDEX_3 = 0, 1, 2, 3
SHIFT_BIT_4 = 4
VECTOR_REG_WIDTH = Reg.VL
nddmaConfig = NdDmaConfig(False)


def InitGroupCopyParams(api) -> None:
    """The ctx member groupCopyParams_ (NdDmaParams<SrcBT, 4>): set on the first load of a tile, reused after."""
    api.groupCopyParams_ = NdDmaParams(NdDmaLoopInfo(dim=GROUP_NDDMA_DIM_NUM), 0)


def GetB1Tbuf(api, kIdx: int):
    """b1UbPing_ for even stepKb rounds, b1UbPong_ for odd ones (bl1Pbuffer 2); always ping with one buffer."""
    b1PingPongFlag = True
    if api.tiling_.bl1Pbuffer > 1:
        b1PingPongFlag = bool((1 + kIdx // api.tiling_.stepKb) & 1)
    return (api.b1UbPing_ if b1PingPongFlag else api.b1UbPong_).Get(api.SrcBT)


def InitUbZero4Group(api) -> None:
    """ndVecBuf_ = 0 over cout1G * hkWk * cin1G * 16 * c0 elements."""
    t = api.tiling_
    api.ndVecTensor_ = api.ndVecBuf_.Get(api.SrcBT)
    groupHalfUbSize = (t.cout1G * t.hkWk * t.cin1G * BLOCK_CUBE * api.SrcBT.itemsize) << t.c0BitsB
    Duplicate(api.ndVecTensor_, 0, groupHalfUbSize // api.SrcBT.itemsize)


def _set_loop(info, index: int, size: int | None, srcStride: int, dstStride: int) -> None:
    if size is not None:
        info.loopSize[index] = size
    info.loopSrcStride[index] = srcStride
    info.loopDstStride[index] = dstStride


def LoadUbDiag4Group(api, srcGmOffset: int) -> None:
    """LoadUbDiag4GroupNCDHW / NDHWC / DHWCN: the curEnlarge groups' weight onto the diagonal of the ND buffer,
    [enlarge * coutPerGroup][cinG1 * 16][hk * wk], by one 4-loop ND-DMA (loop 3 steps from group to group)."""
    t = api.tiling_
    info = api.groupCopyParams_.loopInfo
    if api.groupIterIdx_ == GetSubBlockIdx():
        cinPerGroup = t.cinG // t.enlarge
        coutPerGroup = t.coutG // t.enlarge
        dstCoutGStride = (api.curEnlargeCin1_ * t.hkWk) << SHIFT_BIT_4  # the enlarged cinG rows
        dstEnlargeStride = coutPerGroup * dstCoutGStride + cinPerGroup * t.hkWk  # diagonal: one block on
        if api.filterFormat == FORMAT_NCDHW:  # (cout, cinPerGroup, dk, hk, wk)
            _set_loop(info, INDEX_0, t.hkWk, 1, 1)
            _set_loop(info, INDEX_1, cinPerGroup, t.dkHkWk, t.hkWk)
            _set_loop(info, INDEX_2, coutPerGroup, cinPerGroup * t.dkHkWk, dstCoutGStride)
            _set_loop(info, INDEX_3, None, coutPerGroup * cinPerGroup * t.dkHkWk, dstEnlargeStride)
        elif api.filterFormat == FORMAT_NDHWC:  # (cout, dk, hk, wk, cinPerGroup)
            _set_loop(info, INDEX_0, cinPerGroup, 1, t.hkWk)
            _set_loop(info, INDEX_1, t.hkWk, cinPerGroup, 1)
            _set_loop(info, INDEX_2, coutPerGroup, cinPerGroup * t.dkHkWk, dstCoutGStride)
            _set_loop(info, INDEX_3, None, coutPerGroup * cinPerGroup * t.dkHkWk, dstEnlargeStride)
        else:  # DHWCN (dk, hk, wk, cinPerGroup, cout)
            _set_loop(info, INDEX_0, coutPerGroup, 1, dstCoutGStride)
            _set_loop(info, INDEX_1, cinPerGroup, t.cout, t.hkWk)
            _set_loop(info, INDEX_2, t.hkWk, cinPerGroup * t.cout, 1)
            _set_loop(info, INDEX_3, None, coutPerGroup, dstEnlargeStride)
    info.loopSize[INDEX_3] = api.curEnlarge
    DataCopy(api.ndVecTensor_, api.weightGlobal_[srcGmOffset], api.groupCopyParams_, nddmaConfig)


def ExpandGatherIdxByStride(idxAddr, repeatTimes: int, numPerRepeat: int, initialDstOffset: int, mask: int,
                            cinStride: int, IndexT) -> None:
    """__simd_vf__: the first c0 indices, repeatTimes more copies each cinStride further, numPerRepeat apart."""
    idxReg = Reg.RegTensor(IndexT)
    Reg.LoadAlign(idxReg, idxAddr)
    maskReg, _ = Reg.UpdateMask(IndexT, mask)
    dstOffset = initialDstOffset
    for _ in range(repeatTimes):
        Reg.Adds(idxReg, idxReg, cinStride, maskReg)
        Reg.StoreAlign(idxAddr[dstOffset], idxReg, maskReg)
        dstOffset += numPerRepeat


def SetGatherIdxDn2Nz(api) -> None:
    """The gather index: element (cin row r, cout i) of a register reads cout i's row of the ND buffer at cin r."""
    t = api.tiling_
    IndexT = api.IndexT
    api.idxVecTensor_ = api.idxVecBuf_.Get(IndexT)
    idxVal = 0
    for idx in range(t.c0):  # cinG * hk * wk * [0, 1, ..., c0 - 1]
        SetValue(api.idxVecTensor_, idx, idxVal)
        idxVal += (api.curEnlargeCin1_ * t.hkWk) << SHIFT_BIT_4
    eventId = api.pipe_.FetchEventID(HardEvent.S_V)
    SetFlag(HardEvent.S_V, eventId)
    WaitFlag(HardEvent.S_V, eventId)
    api.pipe_.ReleaseEventID(HardEvent.S_V, eventId)  # a fetch never holds the ID (the simulated TPipe takes it)
    repeatTimes = VECTOR_REG_WIDTH // (IndexT.itemsize << t.c0BitsB) - 1
    ExpandGatherIdxByStride(api.idxVecTensor_, repeatTimes, t.c0, t.c0, t.c0, t.hkWk, IndexT)


def GatherDn2Nz4Group(api, srcAddr, dstAddr, cout1G: int, hkWk: int, cin1GIterMax: int, srcCout1GStride: int,
                      srcCin1GStride: int, dstCout1GStride: int, dstKStride: int, dstCin1GStride: int) -> None:
    """__simd_vf__: one Gather + StoreAlign per (cout1, tap, register of cin rows)."""
    gatherReg = Reg.RegTensor(api.SrcBT)
    idxReg = Reg.RegTensor(api.IndexT)
    maskReg = Reg.CreateMask(api.SrcBT, Reg.MaskPattern.ALL)
    Reg.LoadAlign(idxReg, api.idxVecTensor_)
    for cout1GIdx in range(cout1G):
        for kIdx in range(hkWk):
            for cin1GIdx in range(cin1GIterMax):
                srcOffset = cout1GIdx * srcCout1GStride + cin1GIdx * srcCin1GStride + kIdx
                dstOffset = cout1GIdx * dstCout1GStride + kIdx * dstKStride + cin1GIdx * dstCin1GStride
                Reg.Gather(gatherReg, srcAddr[srcOffset], idxReg, maskReg)
                Reg.StoreAlign(dstAddr[dstOffset], gatherReg, maskReg)


def Dn2Nz4Group(api) -> None:
    """[coutG, cinG, hk, wk] (ND, in ndVecBuf_) -> [coutG1, hk, wk, cinG1 * 16, cout0] (NZ, in nzVecBuf_)."""
    t = api.tiling_
    if api.groupIterIdx_ == GetSubBlockIdx():  # the index is set once per tile
        SetGatherIdxDn2Nz(api)
        PipeBarrier(PIPE_V)
    C0PerReg = VECTOR_REG_WIDTH // (api.IndexT.itemsize << t.c0BitsB)
    C0LoopTimes = BLOCK_CUBE // C0PerReg
    srcCout1GStride = (BLOCK_CUBE * api.curEnlargeCin1_ * t.hkWk) << t.c0BitsB
    srcCin1GStride = C0PerReg * t.hkWk
    dstCout1GStride = ((t.hkWk * api.curEnlargeCin1_) << t.c0BitsB) << SHIFT_BIT_4
    dstKStride = (api.curEnlargeCin1_ << t.c0BitsB) << SHIFT_BIT_4
    dstCin1GStride = C0PerReg << t.c0BitsB
    api.nzVecTensor_ = api.nzVecBuf_.Get(api.SrcBT)
    cout1G = DivCeilC0(api, api.singleShapeCout_)
    GatherDn2Nz4Group(api, api.ndVecTensor_, api.nzVecTensor_, cout1G, t.hkWk, api.curEnlargeCin1_ * C0LoopTimes,
                      srcCout1GStride, srcCin1GStride, dstCout1GStride, dstKStride, dstCin1GStride)


def CopyUb2L14Group(api, curCout1Size: int, curCin1Cin0Size: int, srcUbOffset: int, useB1Buf) -> None:
    """From [coutG1, hk, wk, cinG1 * 16, cout0] the window [curCout1Size, hk, wk, curCin1Cin0Size, cout0] -> L1."""
    p = DataCopyParams()
    p.blockCount = curCout1Size * api.tiling_.hkWk
    p.blockLen = curCin1Cin0Size  # one cin row of c0 couts is one 32-byte block
    p.srcStride = (api.curEnlargeCin1_ << SHIFT_BIT_4) - curCin1Cin0Size
    p.dstStride = 0
    DataCopy(useB1Buf, api.nzVecTensor_[srcUbOffset], p)


def fetched_flag(api, event) -> None:
    """SetFlag / WaitFlag on an event ID fetched for the purpose (and given back: see SetGatherIdxDn2Nz)."""
    eventId = api.pipe_.FetchEventID(event)
    SetFlag(event, eventId)
    WaitFlag(event, eventId)
    api.pipe_.ReleaseEventID(event, eventId)


def GroupTransdataWeightCore(api, curCinSize: int, curCoutSize: int, srcGmOffset: int, srcUbOffset: int,
                             useB1Buf) -> None:
    curCin1Cin0Size = AlignUp16(curCinSize)
    curCout1Size = DivCeilC0(api, curCoutSize)
    CvCrossCoreWait(FLAG_MTE1_ID_2)  # the AIC has freed the B1 buffer
    if api.groupIterIdx_ > GetSubBlockIdx():  # vdup waits for the last vgather
        PipeBarrier(PIPE_V)
    InitUbZero4Group(api)
    fetched_flag(api, HardEvent.V_MTE2)  # nddma waits for vdup
    LoadUbDiag4Group(api, srcGmOffset)
    fetched_flag(api, HardEvent.MTE2_V)  # vgather waits for nddma
    Dn2Nz4Group(api)
    fetched_flag(api, HardEvent.V_S)  # the next loop's SetValue waits for this vgather
    fetched_flag(api, HardEvent.V_MTE3)  # ub2l1 waits for vgather
    CopyUb2L14Group(api, curCout1Size, curCin1Cin0Size, srcUbOffset, useB1Buf)
    CvCrossCoreSet(PIPE_MTE3, FLAG_MTE1_ID_1)  # the weight is in L1


def GroupTransdataWeight(api, kIdx: int, curDkIdx: int) -> None:
    if GetSubBlockIdx() != 0:
        return
    t = api.tiling_
    useB1Tbuf = GetB1Tbuf(api, kIdx)
    curCinIdx = api.curNIdx_ * t.baseN
    curCinSize = min(t.baseN, api.singleShapeCin_ - curCinIdx)  # CalcCurCinSizeB1
    curCoutIdx, curCoutSize = CalcCoutIndexAndSizeB1(api, kIdx)
    curCin1Idx = (api.curCinStartIdx_ + curCinIdx) >> SHIFT_BIT_4
    curCout1Idx = (api.curCoutStartIdx_ + curCoutIdx) >> t.c0BitsB
    if api.filterFormat == FORMAT_NCDHW:
        srcGmOffset = curDkIdx * t.hkWk
    elif api.filterFormat == FORMAT_NDHWC:
        srcGmOffset = curDkIdx * t.hkWk * t.cinG // t.enlarge
    else:  # DHWCN
        srcGmOffset = curDkIdx * t.hkWk * t.cinG // t.enlarge * t.cout
    srcUbOffset = ((curCout1Idx * t.hkWk * api.curEnlargeCin1_ + curCin1Idx) << t.c0BitsB) << SHIFT_BIT_4
    if api.SrcBT.itemsize > 1:  # "调用指令不支持hif8": compiled out for hifloat8 / fp8 / int8
        GroupTransdataWeightCore(api, curCinSize, curCoutSize, srcGmOffset, srcUbOffset, useB1Tbuf)


def SetEnlargeShape(api) -> None:
    """SetSingleShape's ENLARGE part: how many original groups this block's cout holds and their cin blocks."""
    t = api.tiling_
    api.curEnlarge = api.singleShapeCout_ // (t.cout // t.oriGroup)
    api.curEnlargeCin1_ = DivCeil16(api.curEnlarge * (t.cin // t.oriGroup))
