"""The weight loaded to L1 without the H (or H and W) kernel loop: loadB1Condition TPL_GM_TO_L1_NO_HK /
TPL_GM_TO_L1_NO_HK_WK, for kernels, pads or dilations too large for one Load3D (pads and dilations above 255, or
the whole hk*wk window not fitting L1).

The K of one Mmad is then (cout, wk) (NO_HK) or cout alone (NO_HK_WK): the API walks the kernel rows (and columns)
itself, one accumulation into the same L0C tile per (kd, kh[, kw]) tap. For kernel row kh, the dy rows of the tile
start khDilation - 1 - kh * dilationH rows below the tile's own first row (the kernel is reversed); rows wholly in the
pads or in the zero-inserted rows of stride H are skipped, as are taps whose dy window is empty. L1 holds one dy row
window with a 1-row (1x1 for NO_HK_WK) Load3D kernel, and the weight of one kernel row (tap), read at the GM offset
curHkIdx_ * wk + curWkIdx_.

Ports convolution_3d_backprop/conv3d_bp_large_attribute_func.h (ComputeForWkLoop, ComputeForTilingHkWk,
UpdateWkComputeStatus, UpdateHkComputeStatus).
"""
from __future__ import annotations

from kernels.conv3d_backprop_input.kernel.arch35.util import TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK, DivCeil


def ComputeForWkLoop(api, kwDilation: int, woExpand: int, woStartIdx: int, curWkIdx: int) -> bool:
    """NO_HK_WK: the dy columns kernel column curWkIdx reads for this tile (curWoLeftIdx_ .. curWoRightIdx_, the
    Load3D's left and right pads), False when none; NO_HK: always True (the Load3D walks wk itself)."""
    t = api.tiling_
    if api.loadB1Condition == TPL_GM_TO_L1_NO_HK:
        return True
    api.load3d_.mStartPt = 0  # the window starts exactly at the first wo of the tile
    api.curWkIdx_ = curWkIdx
    api.curWoLeftIdx_ = kwDilation - curWkIdx * t.dilationW - 1 - t.backpropPadLeft + woStartIdx
    skipLeftWoSize = max(api.curWoLeftIdx_, 0)
    woRightIdx = api.curWoLeftIdx_ + api.baseUseM_
    if api.curWoLeftIdx_ >= woExpand or woRightIdx <= 0:
        return False
    api.curWoRightIdx_ = (woRightIdx - woExpand if woRightIdx < woExpand
                          else api.baseUseM_ - woExpand + skipLeftWoSize)
    skipRightWoSize = abs(api.curWoRightIdx_) if api.curWoRightIdx_ < 0 else 0
    api.realWoSize_ = t.wo - DivCeil(skipLeftWoSize, t.strideW) - DivCeil(skipRightWoSize, t.strideW)
    return api.realWoSize_ > 0


def ComputeForTilingHkWk(api, l0c, l0PingPongFlag: int) -> int:
    """Compute's loop for NO_HK / NO_HK_WK: every valid (kd, kh[, kw]) accumulates into l0c."""
    t = api.tiling_
    isFirstDHWk = True
    curHoIdx = api.curHoIdx_
    woStartIdx = (api.curMStartIdx_ + api.curMIdx_ * t.baseM) % t.wi  # the tile's first wi
    curMStartPt = api.load3d_.mStartPt
    for curInnerKdIdx in range(api.curDkIdx_, api.curDkIdx_ + t.singleIterateDk):
        curDoutIdx = api.CalcCurDoutIdx(curInnerKdIdx)
        if curDoutIdx is None:
            continue
        api.curHoIdx_ += t.khDilation - 1  # the dy row of kernel row 0 (the kernel is reversed)
        for curHkIdx in range(t.hk):
            api.curHkIdx_ = curHkIdx
            endHoIdx = api.curHoIdx_ + DivCeil(api.baseUseM_ + curMStartPt, t.wi)
            if api.curHoIdx_ < api.hoExpand_ and endHoIdx > 0:
                realStartHo = max(api.curHoIdx_, 0)
                api.curHoSize_ = min(endHoIdx, api.hoExpand_) - realStartHo
                if realStartHo % t.strideH and realStartHo % t.strideH + api.curHoSize_ - 1 < t.strideH:
                    api.curHoIdx_ -= t.dilationH  # only zero-inserted rows: nothing to compute
                    continue
            else:
                api.curHoIdx_ -= t.dilationH  # the window is wholly in the pads
                continue
            wkIter = 1 if api.loadB1Condition == TPL_GM_TO_L1_NO_HK else t.wk
            for curWkIdx in range(wkIter):
                if not ComputeForWkLoop(api, t.kwDilation, t.woExpand, woStartIdx, curWkIdx):
                    continue
                l0PingPongFlag = api.ComputeForKIter(l0c, curInnerKdIdx, curDoutIdx, isFirstDHWk, l0PingPongFlag)
                isFirstDHWk = False
            api.curHoIdx_ -= t.dilationH
        api.curHoIdx_ = curHoIdx
    return l0PingPongFlag


def UpdateWkComputeStatus(api) -> None:
    if not api.needComputeFlag_:
        return
    t = api.tiling_
    woStartIdx = (api.curMStartIdx_ + api.curMIdx_ * t.baseM) % t.wi
    isKNeedCompute = False
    for curWkIdx in range(t.wk):
        curWoLeftIdx = t.kwDilation - curWkIdx * t.dilationW - 1 - t.backpropPadLeft + woStartIdx
        woRightIdx = curWoLeftIdx + api.baseUseM_
        if curWoLeftIdx >= t.woExpand or woRightIdx <= 0:
            continue
        if (curWoLeftIdx > 0 and curWoLeftIdx % t.strideW
                and DivCeil(curWoLeftIdx, t.strideW) == DivCeil(woRightIdx, t.strideW)):
            continue  # only zero-inserted columns
        isKNeedCompute = True
        break
    api.needComputeFlag_ = isKNeedCompute


def UpdateHkComputeStatus(api) -> None:
    """Whether any kernel row of the tile reads a real dy row (UpdateKComputeStatus's NO_HK / NO_HK_WK tail)."""
    if not api.needComputeFlag_:
        return
    t = api.tiling_
    isKNeedCompute = False
    curHoIdx = api.curHoIdx_ + t.khDilation - 1
    for _ in range(t.hk):
        endHoIdx = curHoIdx + DivCeil(api.baseUseM_ + api.load3d_.mStartPt, t.wi)
        if curHoIdx >= api.hoExpand_ or endHoIdx <= 0:
            curHoIdx -= t.dilationH
            continue
        if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:
            zero_inserted = curHoIdx > 0 and curHoIdx % t.strideH != 0
        else:
            zero_inserted = (curHoIdx > 0 and curHoIdx % t.strideH != 0
                             and DivCeil(curHoIdx, t.strideH) == DivCeil(endHoIdx, t.strideH))
        if zero_inserted:
            curHoIdx -= t.dilationH
            continue
        isKNeedCompute = True
        break
    api.needComputeFlag_ = isKNeedCompute
    if api.loadB1Condition == TPL_GM_TO_L1_NO_HK_WK:
        UpdateWkComputeStatus(api)
