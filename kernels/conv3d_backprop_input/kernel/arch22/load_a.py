"""The A operand (gradOutput, dy): GM -> L1 with zero insertion for the H/W strides, then img2col into L0A.

The dx GEMM is a stride-1 correlation over a "pre-enlarged" dy: in L1 every dy pixel of a row sits sW blocks
apart and every row sH rows apart, zeros in between (InitConstValue first, then DataCopy with a dstStride).
The L1 A layout is an NC1HWC0 feature map [cout1][curHoSize][woExpand][C0]; LoadData 3Dv2 then reads it with
the kernel size, the dilation and the backprop pads (left/right from the tiling, top = rows above dy, bottom
255 so that rows past the loaded window read as zeros).

Real counterparts (conv_bp_sub_func.h): InitLoadToA2Params, UpdateLoadToA2ParamsM, UpdateCurHoSize,
CalcHDstDataSkipLine, CalcLoadToA1DataCopyParams, CalcSetFmatrixParams, LoadToA1, LoadToA2.
"""
from __future__ import annotations

from ascend_sim.ascendc import (PIPE_MTE2, DataCopy, DataCopyParams, InitConstValue, InitConstValueParams, LoadData,
                                LoadData3DParamsV2, PipeBarrier)
from kernels.conv3d_backprop_input.kernel.arch22.util import BLOCK_CUBE, CalFmapH

UINT16_MAX = 65535


def InitLoadToA2Params(api) -> None:
    """The Load3Dv2 fields that never change: stride 1 (zeros are already inserted), kernel, dilation, pads."""
    t = api.tiling
    p = LoadData3DParamsV2()
    p.mExtension = t.baseM
    p.kExtension = t.baseK
    p.mStartPt = 0
    p.kStartPt = 0
    p.strideW = 1
    p.strideH = 1
    p.filterW = t.wk & 255
    p.filterH = t.hk & 255
    p.filterSizeW = bool((t.wk >> 8) & 255)
    p.filterSizeH = bool((t.hk >> 8) & 255)
    p.dilationFilterW = t.dilationW
    p.dilationFilterH = t.dilationH
    p.enTranspose = False
    p.fMatrixCtrl = False
    p.channelSize = api.channelSize
    p.padList = [t.backpropPadLeft, t.backpropPadRight, 0, 255]
    api.load3d = p


def UpdateLoadToA2ParamsM(api) -> None:
    """mExtension (16-rounded on the last M block) and mStartPt (the column of the block's first pixel)."""
    t = api.tiling
    p = api.load3d
    p.mExtension = api.baseUseM
    if api.curML0Idx == api.mIter - 1:
        p.mExtension = ((api.baseUseM + BLOCK_CUBE - 1) >> 4) * BLOCK_CUBE
    p.mStartPt = api.curML0Idx * t.baseM % t.wi


def UpdateCurHoSize(api) -> None:
    """Rows of dilated dy this M block loads: CalFmapH clipped to the rows that exist ([0, hoExpand))."""
    t = api.tiling
    cur = CalFmapH(t, t.baseM * t.stepM)
    hoExpand = (t.ho - 1) * t.strideH + 1
    if api.curHoIdx < 0:
        cur += api.curHoIdx
        cur = min(cur, hoExpand)
    elif api.curHoIdx + cur >= hoExpand:
        cur = hoExpand - api.curHoIdx if api.curHoIdx < hoExpand else 0
    api.curHoSize = cur


def CalcHDstDataSkipLine(api) -> int:
    """Leading window rows that are inserted zeros (their dilated index is not a multiple of strideH)."""
    strideH = api.tiling.strideH
    start = max(api.curHoIdx, 0)
    if strideH > 1 and start % strideH:
        return (start + strideH - 1) // strideH * strideH - start
    return 0


def CalcSetFmatrixParams(api, fmapH: int, fmapW: int) -> None:
    p = api.load3d
    p.l1W = fmapW
    p.l1H = fmapH
    pads = list(p.padList)
    pads[2] = -api.curHoIdx if api.curHoIdx < 0 else 0
    p.padList = pads


def CalcLoadToA1DataCopyParams(api, curCout1Idx: int):
    """The DataCopy shape of one A1 load: returns (params, cout1Loop, hLoop, srcStride, dstStride, padOffset)."""
    t = api.tiling
    c0 = t.c0
    if api.loadB2Condition == 2:
        curCout1Size = api.curLoadKal1 >> t.c0Bits
    else:
        curCout1Size = api.curLoadKal1 // api.HkWkC0
    curCout1Size = min(curCout1Size, api.singleShapeCout1 - curCout1Idx)
    params = DataCopyParams()
    cout1Loop, hLoop, srcDataStride, dstDataStride, padOffset = 0, 0, 0, 0, 0
    skip = CalcHDstDataSkipLine(api)
    strideH, strideW = t.strideH, t.strideW
    woExpand = t.wo
    curHoSize = api.curHoSize
    if curHoSize <= skip:
        params.blockCount = 0
    elif strideW > 1:
        # one DataCopy per dy row: Wo C0-vectors, each strideW-1 blocks apart in L1
        params.blockLen = 1
        params.blockCount = t.wo
        params.dstStride = strideW - 1
        cout1Loop = curCout1Size
        hLoop = (curHoSize - skip + strideH - 1) // strideH
        srcDataStride = t.wo * c0
        woExpand = (woExpand - 1) * strideW + 1
        dstDataStride = woExpand * c0
        padOffset = skip * dstDataStride
    else:
        hLoop = 1
        if strideH > 1:
            # one DataCopy per cout1: whole dy rows, each (strideH-1) rows apart in L1
            rows = (curHoSize - skip + strideH - 1) // strideH
            params.srcStride = 0
            params.dstStride = (strideH - 1) * t.wo
            params.blockLen = t.wo
            params.blockCount = rows
            srcDataStride = api.hwO * c0
            dstDataStride = t.wo * c0
            cout1Loop = curCout1Size
            padOffset = skip * t.wo * c0
        else:
            # stride 1: curCout1Size planes of curHoSize*Wo vectors in one DataCopy
            gap = (t.ho - curHoSize) * t.wo
            params.dstStride = 0
            params.blockLen = curHoSize * t.wo
            if gap <= UINT16_MAX:
                params.srcStride = gap
                params.blockCount = curCout1Size
                cout1Loop = 1
            else:  # the gap does not fit 16 bits: one plane at a time
                params.srcStride = 0
                params.blockCount = 1
                cout1Loop = curCout1Size
                dstDataStride = t.wo * c0
    CalcSetFmatrixParams(api, curHoSize, woExpand)
    return params, cout1Loop, hLoop, srcDataStride, dstDataStride, padOffset


def LoadToA1(api, kIdx: int, curDoutIdx: int, pingPongFlag: bool, loadFlag: bool) -> None:
    """dy plane curDoutIdx, cout1 range of K step kIdx, window rows [curHoIdx, +curHoSize) -> A1 ping or pong."""
    if not loadFlag:
        return
    t = api.tiling
    que = api.a1Ping if pingPongFlag else api.a1Pong
    buf = que.AllocTensor(api.SrcT)
    if t.strideW * t.strideH > 1:
        nblocks = buf.GetSize() * buf.dtype.itemsize >> 5
        InitConstValue(buf, InitConstValueParams(1, nblocks, 0, 0))
        PipeBarrier(PIPE_MTE2)
    curCout1Idx = kIdx * t.baseK // api.HkWkC0
    params, cout1Loop, hLoop, srcDataStride, dstDataStride, padOffset = CalcLoadToA1DataCopyParams(
        api, curCout1Idx)
    if params.blockCount > 0:
        # GM offsets are relative to the core's first aligned dy row (already in outBackPropGlobal)
        curHoStartOffset = max(api.curHoStartIdx, 0)
        curHoIdx = 0 if api.curHoIdx < 0 else api.curHoIdx - curHoStartOffset
        curOriHoIdx = curHoIdx
        if t.strideH > 1:
            skipHoSize = curHoStartOffset % t.strideH
            skipHoSize = t.strideH - skipHoSize if skipHoSize > 0 else 0
            curOriHoIdx = (curHoIdx - skipHoSize + t.strideH - 1) // t.strideH
        hoStride = t.wo * t.c0
        coutStride = t.ho * hoStride
        srcBase = (curDoutIdx * t.cout1 + curCout1Idx) * coutStride + curOriHoIdx * hoStride
        dstC = padOffset
        dstStrideC = api.curHoSize * dstDataStride
        for _ in range(cout1Loop):
            src, dst = srcBase, dstC
            for _ in range(hLoop):
                DataCopy(buf[dst], api.outBackPropGlobal[src], params)
                src += srcDataStride
                dst += dstDataStride * t.strideH
            dstC += dstStrideC
            srcBase += coutStride
    que.EnQue(buf)


def LoadToA2(api, a1, l0a) -> None:
    """img2col of the A1 window into L0A (ZZ): rows = dx pixels, columns = (cout1, kh, kw, cout0)."""
    LoadData(l0a, a1, api.load3d)
