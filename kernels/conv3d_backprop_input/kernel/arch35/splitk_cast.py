"""The vector side of split-K with UB accumulation: the fp32 partial sums the AIC Fixpiped into its workspace slice
are copied into UB, Cast once to the output type and written to y (impl/conv_bp_input_sub_func_splitk_cast.h:
DataCopyCastVecToOutput, MoveFromUsrSpaceToUbCast, AccumulateSegmentOnWorkspace).

The AIC writes each K segment's tile (fp32, NoQuant) into its slice of the workspace, the first segment plainly,
the later ones with SetAtomicAdd<float>; the slice is [Din][AlignUp(singleCoreCin, baseN)][AlignUp(singleCoreM,
baseM)] with every tile stored whole (NZ2DN: baseUseN rows of baseUseM; NZ2ND: baseUseM rows of baseUseN). After
the last segment of a block the AIC sets FLAG_MTE2_VEC_ID (mode 4) and the block's AIV sub-block 0, which has
walked the same block and K segments on its scalar unit, waits for it and casts the block baseM rows at a time:
DataCopyPad GM -> UB (Compact), MTE2_V, Cast (hifloat8: CAST_ROUND, the others CAST_RINT), V_MTE3, DataCopyPad
UB -> y (Compact), MTE3_MTE2 before the next segment's copy overwrites the UB buffer.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (Cast, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, GetSubBlockIdx, HardEvent,
                                PaddingMode, RoundMode, SetFlag, WaitFlag)
from ascend_sim.machine.dtypes import float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.util import FORMAT_NCDHW, AlignUp, GetAicBlockIdx


def DataCopyCastVecToOutput(api, output, dinIdx: int = 0, mOffsetInOutput: int = 0, curSegM: int = 0) -> None:
    """UB (the cast tile, N rows of segM for NCDHW, segM rows of N for NDHWC) -> y."""
    t = api.tiling_
    size = api.DstT.itemsize
    p = DataCopyExtParams()
    segM = curSegM if curSegM > 0 else api.realMSize_
    m = api.curMIdx_ * t.baseM + mOffsetInOutput
    if api.yFormat == FORMAT_NCDHW:
        dstOffset = (api.curNIdx_ * t.baseN * api.diHiWi_ + (api.curDinStartIdx_ + dinIdx) * api.hiWi_ + m)
        p.blockCount, p.blockLen = api.baseUseN_, segM * size
        p.dstStride = api.diHiWi_ * size - p.blockLen
    else:
        dstOffset = api.curNIdx_ * t.baseN + (api.curDinStartIdx_ + dinIdx) * api.hiWi_ * t.cin + m * t.cin
        p.blockCount, p.blockLen = segM, api.baseUseN_ * size
        p.dstStride = t.cin * size - p.blockLen
    DataCopyPad(output[dstOffset], api.castVecTensor_.ReinterpretCast(api.DstT), p, mode=PaddingMode.Compact)


def MoveFromUsrSpaceToUbCast(api, output) -> None:
    t = api.tiling_
    singleCoreCinAlignBaseN = AlignUp(t.singleCoreCin, t.baseN)
    singleCoreMAlignBaseM = AlignUp(t.singleCoreM, t.baseM)
    dinStride = singleCoreCinAlignBaseN * singleCoreMAlignBaseM
    coreOffset = GetAicBlockIdx() * dinStride * t.singleCoreDin
    api.castVecTensor_ = api.vecBuf_.Get(float32)
    totalM, baseM = api.realMSize_, t.baseM
    pipe = api.pipe_
    # FetchEventID: the simulated TPipe takes the IDs; they are given back below, as a fetch never holds them
    eventIdMte2ToVec = pipe.FetchEventID(HardEvent.MTE2_V)
    eventIdVecToMte3 = pipe.FetchEventID(HardEvent.V_MTE3)
    eventIdMte3ToMte2 = pipe.FetchEventID(HardEvent.MTE3_MTE2)
    roundMode = RoundMode.CAST_ROUND if api.DstT == np.dtype(hifloat8) else RoundMode.CAST_RINT
    isFirstSeg = True
    for dinIdx in range(api.singleShapeDin_):
        dinSrcOffset = coreOffset + dinIdx * dinStride
        for mSegIdx in range(0, totalM, baseM):
            curSegM = min(totalM - mSegIdx, baseM)
            if not isFirstSeg:
                WaitFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
            count = curSegM * api.baseUseN_
            DataCopyPad(api.castVecTensor_, api.l0cOutGm_[dinSrcOffset + mSegIdx * api.baseUseN_],
                        DataCopyExtParams(1, count * 4, 0, 0), DataCopyPadExtParams(False, 0, 0, 0),
                        mode=PaddingMode.Compact)
            SetFlag(HardEvent.MTE2_V, eventIdMte2ToVec)
            WaitFlag(HardEvent.MTE2_V, eventIdMte2ToVec)
            Cast(api.castVecTensor_.ReinterpretCast(api.DstT), api.castVecTensor_, roundMode, count)
            SetFlag(HardEvent.V_MTE3, eventIdVecToMte3)
            WaitFlag(HardEvent.V_MTE3, eventIdVecToMte3)
            DataCopyCastVecToOutput(api, output, dinIdx, mSegIdx, curSegM)
            isLastSeg = dinIdx + 1 == api.singleShapeDin_ and mSegIdx + curSegM >= totalM
            if not isLastSeg:
                SetFlag(HardEvent.MTE3_MTE2, eventIdMte3ToMte2)
            isFirstSeg = False
    for event, event_id in ((HardEvent.MTE2_V, eventIdMte2ToVec), (HardEvent.V_MTE3, eventIdVecToMte3),
                            (HardEvent.MTE3_MTE2, eventIdMte3ToMte2)):
        pipe.ReleaseEventID(event, event_id)


def AccumulateSegmentOnWorkspace(api, output, enSequentialWrite: bool = False) -> None:
    if GetSubBlockIdx() > 0 or enSequentialWrite:
        return
    MoveFromUsrSpaceToUbCast(api, output)
