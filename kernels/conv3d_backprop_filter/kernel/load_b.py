"""The B operand (x, the feature map): GM -> L1 rows, then img2col with LoadData 3Dv2 into L0B.

GM -> L1 (LoadToB1): for the K step's pixels (whole output rows from b1SrcHo on) the input rows they read,
hiCopyLen = rows * strideH + (hk-1)*dilationH + 1 - strideH, clipped to the feature map (rows above it become
padUp of the load), for bL1cin1CopyLen cin1 planes: L1 B layout [cin1][hiCopyLen][Wi][C0] (NC1HWC0).

L1 -> L0B (LoadL12L0b): SetFmatrix(l1H = hiCopyLen, l1W = Wi, pads, FMATRIX_RIGHT), then LoadData 3Dv2 with
isSetFMatrix = false, fMatrixCtrl = 1 and the real strides, kernel, dilation: the img2col rows are the K
step's pixels (mStartPt = its first pixel inside the loaded rows, mExtension = the C0-aligned count) and the
columns (cin1, kh, kw, C0) of the N tile (kStartPt, kExtension = baseUseN). Into L0B that is the ZN B operand
(K = pixels, N = (cin1, kh, kw, cin0)).

Real counterparts (conv_bp_sub_func.h / conv_bp_func.h): InitLoadToB2Params, InitSetFmatrixParams,
CalcParamsL12L0b, LoadToB1, LoadL12L0b.
"""
from __future__ import annotations

from ascend_sim.ascendc import FMATRIX_RIGHT, DataCopy, DataCopyParams, LoadData, LoadData3DParamsV2, SetFmatrix
from kernels.conv3d_backprop_filter.kernel.util import (MAX_16BITS_STRIDE, MAX_BLOCK_COUNT, MAX_BLOCK_LEN, CalRows2Copy,
                                                        CeilHkWk, RemainderOfHkWk)


def InitLoadToB2Params(api) -> None:
    t = api.tiling
    p = LoadData3DParamsV2()
    p.kExtension = t.baseN
    p.mExtension = t.baseM
    p.kStartPt = p.mStartPt = 0
    p.strideW, p.strideH = t.strideW, t.strideH
    p.filterW, p.filterH = t.wk & 255, t.hk & 255
    p.dilationFilterW, p.dilationFilterH = t.dilationW, t.dilationH
    p.filterSizeW, p.filterSizeH = bool((t.wk >> 8) & 255), bool((t.hk >> 8) & 255)
    p.enTranspose = False
    p.fMatrixCtrl = True
    p.channelSize = 16
    api.load3dB = p


def InitSetFmatrixParams(api) -> None:
    t = api.tiling
    p = api.load3dB
    p.l1W = t.wi
    p.l1H = 1
    p.padList = [t.padLeft, t.padRight, 0, t.padDown]  # padUp is set per B1 load


def CalcParamsL12L0b(api) -> None:
    """kExtension, kStartPt and channelSize of the N tile inside the cin1 planes loaded for its N block."""
    t = api.tiling
    p = api.load3dB
    p.kExtension = api.baseUseN
    localN = t.baseN // api.c0
    localUseN = api.baseUseN // api.c0
    kStartLocal = RemainderOfHkWk(api.curNL1Idx * localN, api.hwK) + (api.curNL0Idx % t.stepN) * localN
    p.kStartPt = kStartLocal * t.channelSize
    p.channelSize = CeilHkWk(kStartLocal + localUseN, api.hwK) * t.channelSize


def LoadToB1(api, cachePosB1: bool, kbIdx: int, params, isLoadB1: bool, kbStepIdx: int) -> None:
    """x: the input rows the K step's output rows read, of bL1cin1CopyLen cin1 planes -> B1 ping/pong."""
    if not isLoadB1 or not params.isLoad2L1B:
        return
    t = api.tiling
    que = api.b1Ping if cachePosB1 else api.b1Pong
    useB1Buf = que.AllocTensor(api.SrcT)
    b1SrcKAlign = kbStepIdx * api.kbl1
    b1SrcHo = b1SrcKAlign // t.wo  # the load needs whole rows: start at the row of the first pixel
    b1SrcHoGm = b1SrcHo + api.hoStartIdx
    b1SrcHiGm = b1SrcHoGm * t.strideH - t.padUp
    b1SrcHi = 0
    if b1SrcHiGm > 0 and api.hiStartIdx > 0:
        b1SrcHi = b1SrcHiGm - api.hiStartIdx
    elif b1SrcHiGm > 0:
        b1SrcHi = b1SrcHiGm
    kbl1 = api.kbl1
    if api.stepKbRound == kbStepIdx + 1:
        kbl1 = api.singleShapeHo * t.wo - b1SrcKAlign
    ho = CalRows2Copy(kbl1, t.wo)
    hiCopyLen = ho * t.strideH + api.strideKernelDilationH
    padUp = 0
    if b1SrcHiGm < 0:
        hiCopyLen += b1SrcHiGm
        padUp = -b1SrcHiGm
    if b1SrcHiGm + hiCopyLen > t.hi:
        hiCopyLen = t.hi - b1SrcHiGm
    hiCopyLen = min(hiCopyLen, params.singleShapeHi - b1SrcHi)

    blockLen = hiCopyLen * t.wi
    srcStride = api.hwI - blockLen
    srcOffset = (params.out2B1SrcAddr + b1SrcHi * t.wi) * t.channelSize
    dstOffset = 0
    dataCopyParams = DataCopyParams()
    dataCopyParams.dstStride = 0
    if blockLen <= MAX_BLOCK_LEN and srcStride <= MAX_16BITS_STRIDE:
        dataCopyParams.srcStride = srcStride
        dataCopyParams.blockLen = blockLen
        dataCopyParams.blockCount = MAX_BLOCK_COUNT
        for _ in range(params.bL1cin1CopyLen // MAX_BLOCK_COUNT):
            DataCopy(useB1Buf[dstOffset], api.fmapGlobal[srcOffset], dataCopyParams)
            srcOffset += MAX_BLOCK_COUNT * api.hwI * t.channelSize
            dstOffset += MAX_BLOCK_COUNT * blockLen * t.channelSize
        dataCopyParams.blockCount = params.bL1cin1CopyLen % MAX_BLOCK_COUNT
        if dataCopyParams.blockCount > 0:
            DataCopy(useB1Buf[dstOffset], api.fmapGlobal[srcOffset], dataCopyParams)
    else:  # a plane or its gap does not fit 16 bits: one plane at a time, row by row
        dataCopyParams.srcStride = 0
        dataCopyParams.blockCount = hiCopyLen
        dataCopyParams.blockLen = t.wi
        for _ in range(params.bL1cin1CopyLen):
            DataCopy(useB1Buf[dstOffset], api.fmapGlobal[srcOffset], dataCopyParams)
            srcOffset += api.hwI * t.channelSize
            dstOffset += blockLen * t.channelSize
    if cachePosB1:
        api.bL1HiCopyLenPing, api.bL1PadUpPing = hiCopyLen, padUp
    else:
        api.bL1HiCopyLenPong, api.bL1PadUpPong = hiCopyLen, padUp
    que.EnQue(useB1Buf)


def LoadL12L0b(api, l1BMatrix, l0b) -> None:
    """img2col of the B1 rows into L0B through the RIGHT fmatrix (IsResetLoad3dConfig {false, true})."""
    p = api.load3dB
    SetFmatrix(p.l1H, p.l1W, p.padList, FMATRIX_RIGHT)
    LoadData(l0b, l1BMatrix, p, isSetFMatrix=False)
