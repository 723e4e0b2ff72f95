"""The A operand (dy, the output gradient): GM -> L1, then LoadData 3Dv2 with enTranspose into L0A.

GM -> L1 (LoadToA1): one DataCopy takes, for the cout1 planes of this M block, the K step's run of pixels
(blockLen = kal1 pixels of C0 couts each, srcStride = the rest of the Ho*Wo plane). L1 A layout:
[cout1][pixels][C0], an NC1HWC0 "fmap" with H = 1, W = pixels, C = couts. fp32 with an odd number of cout1
planes zero-fills one more plane, so that the 16-aligned channel count the load reads is defined.

L1 -> L0A (LoadL12L0a): a 1x1 window over that fmap gives X[pixel][cout]; enTranspose stores X^T (couts x
pixels) as the ZZ A operand of the Mmad (M = cout, K = pixels). kExtension = channelSize = the 16-aligned
couts of the tile, mExtension = the C0-aligned pixels of this K step; the source starts at the K step's
first pixel (srcL12L0aOffset) so kStartPt / mStartPt stay 0.

Real counterparts (conv_bp_sub_func.h): InitLoadToA2Params, LoadToA1, LoadL12L0a.
"""
from __future__ import annotations

from ascend_sim.ascendc import (DataCopy, DataCopyParams, InitConstValue, InitConstValueParams, LoadData,
                                LoadData3DParamsV2)
from kernels.conv3d_backprop_filter.kernel.util import (BLOCK_CUBE, MAX_16BITS_STRIDE, MAX_L1W, ONE_BLK_SIZE,
                                                        CalRows2Copy, Ceil)


def InitLoadToA2Params(api) -> None:
    p = LoadData3DParamsV2()
    p.kStartPt = p.mStartPt = 0
    p.strideW = p.strideH = 1
    p.filterW = p.filterH = 1
    p.dilationFilterW = p.dilationFilterH = 1
    p.filterSizeW = p.filterSizeH = False
    p.enTranspose = True
    p.fMatrixCtrl = False
    p.channelSize = BLOCK_CUBE
    p.padList = [0, 0, 0, 0]  # InitSetFmatrixParams
    api.load3dA = p


def LoadToA1(api, cachePosA1: bool, kaIdx: int, params, isLoadA1: bool, kaStepIdx: int) -> None:
    """dy: the cout1 planes of this M block, pixels [kaStepIdx*kal1, +blockLen) of this core -> A1 ping/pong."""
    if not isLoadA1 or not params.isLoad2L1A:
        return
    t = api.tiling
    que = api.a1Ping if cachePosA1 else api.a1Pong
    useA1Buf = que.AllocTensor(api.SrcT)
    srcAddr = params.out2A1SrcAddr + kaStepIdx * api.kal1 * t.channelSize
    dataCopyParams = DataCopyParams()
    dataCopyParams.dstStride = 0
    if api.stepKaRound == kaStepIdx + 1:  # the last K step: up to the end of this block's pixels
        dataCopyParams.blockLen = api.singleShapeHo * t.wo - kaIdx * t.baseK
    else:
        dataCopyParams.blockLen = api.kal1
    api.curLoadKal1 = dataCopyParams.blockLen
    if params.isLastMAL1:  # the last M block: its tail couts
        blockCount = ((api.curStepM - 1) * t.baseM + api.tailM) // api.c0
    else:
        blockCount = api.curStepM * t.baseM // api.c0
    if api.isFp32 and blockCount & 1:
        # the load reads 16-aligned couts: zero the odd plane after the last one
        InitConstValue(useA1Buf[blockCount * dataCopyParams.blockLen * ONE_BLK_SIZE // 4],
                       InitConstValueParams(1, dataCopyParams.blockLen, 0, 0))
    srcStride = api.hwO - dataCopyParams.blockLen
    if srcStride <= MAX_16BITS_STRIDE:
        dataCopyParams.srcStride = srcStride
        dataCopyParams.blockCount = blockCount
        DataCopy(useA1Buf, api.outBackPropGlobal[srcAddr], dataCopyParams)
    else:  # the plane gap does not fit 16 bits: one plane at a time
        dataCopyParams.srcStride = 0
        dataCopyParams.blockCount = 1
        src, dst = srcAddr, 0
        for _ in range(blockCount):
            DataCopy(useA1Buf[dst], api.outBackPropGlobal[src], dataCopyParams)
            src += api.hwO * t.channelSize
            dst += dataCopyParams.blockLen * t.channelSize
    que.EnQue(useA1Buf)


def LoadL12L0a(api, l1AMatrix, l0a, kaStepIdx: int) -> None:
    """X^T of this K step's pixels and the tile's couts into L0A (ZZ, M = couts, K = pixels)."""
    t = api.tiling
    p = api.load3dA
    kl1 = api.kal1
    if api.stepKaRound == kaStepIdx + 1:
        kl1 = api.singleShapeHo * t.wo - kaStepIdx * api.kal1
    if api.isFp32:
        p.l1W, p.l1H = kl1, 1
        p.kExtension = Ceil(api.baseUseM, t.m0) * t.m0
        p.mExtension = Ceil(api.baseUseK, t.k0) * t.k0
        p.channelSize = p.kExtension
    elif kl1 <= MAX_L1W:
        p.l1W, p.l1H = kl1, 1
    else:  # l1W is 15 bits: read the pixels as whole rows of Wo instead
        a1SrcHo = kaStepIdx * api.kal1 // t.wo
        hoCopyLen = min(CalRows2Copy(kl1, t.wo), api.singleShapeHo - a1SrcHo)
        p.l1W, p.l1H = t.wo, hoCopyLen
    LoadData(l0a, l1AMatrix[api.srcL12L0aOffset], p)
