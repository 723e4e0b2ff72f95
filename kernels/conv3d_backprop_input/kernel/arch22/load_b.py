"""The B operand (weight): GM (FRACTAL_Z_3D) -> L1 -> L0B, with the 180-degree rotation and the Cin/Cout swap.

GM -> L1 (LoadToB1): one DataCopy takes, for the kd slice and the cin1 range of this N block, every (cin1,
kh, kw) row's cout range of this K step. L1 B layout: [cin1][kh*kw][cout][cin0]; each 16 x C0 piece is a
fractal with rows = cout, columns = cin0.

L1 -> L0B:
- fp16/bf16 (LoadToB2V1): LoadData 2D with ifTranspose, one instruction per K fractal, walking the kernel
  positions backwards (kh -> hk-1-kh, kw -> wk-1-kw): the transposed fractal has rows = cin (N) and columns =
  cout (K), which is the ZN layout of B = W^T with the kernel rotated by 180 degrees.
- fp32 (LoadToB2Pro / LoadToB2ProGemm): 16 x 8 fractals cannot be transposed by LoadData 2D, so the L1 B
  buffer is read as a feature map of H = 1, W = cout * hk * wk, C = cin, and LoadData 3Dv2 into L0B (which
  always transposes) picks 16 couts of the reversed kernel position per instruction.
The kd slice is NOT reversed: the depth is gathered (see api.Compute).

Real counterparts (conv_bp_sub_func.h): InitLoadToB2Params, UpdateLoadToB2ParamsN/K, LoadToB2V1, LoadToB2Pro,
LoadToB2ProGemm, LoadToB2, LoadToB1BF16, LoadToB1Fp32, LoadToB1.
"""
from __future__ import annotations

from ascend_sim.ascendc import (FMATRIX_RIGHT, DataCopy, DataCopyParams, LoadData, LoadData2DParams, LoadData3DParamsV2,
                                SetFmatrix)
from kernels.conv3d_backprop_input.kernel.arch22.util import (BLOCK_CUBE, FRACTAL_ELEMS_B16, CalcDiv, CalcFloorAlign,
                                                              DivCeil)

MAX_16BITS_STRIDE = 65535
PADLIST_B = (0, 0, 0, 0)


# ----------------------------------------------------------------------------------------------- L1 -> L0B
def InitLoadToB2Params(api) -> None:
    api.load2d = LoadData2DParams(startIndex=0, repeatTimes=0, srcStride=0, dstGap=0, ifTranspose=True)
    api.idxC1in = 0
    api.baseB1Offset = 0


def UpdateLoadToB2ParamsN(api) -> None:
    api.blockBaseN = api.baseUseN >> api.tiling.c0Bits
    api.load2d.repeatTimes = api.blockBaseN


def UpdateLoadToB2ParamsK(api) -> None:
    """srcStride of the 2D load = distance in fractals between two cin1 rows of the L1 B buffer."""
    c0Bits = api.tiling.c0Bits
    if api.loadB2Condition == 2:
        api.load2d.srcStride = api.curLoadKbl1 >> c0Bits
    else:
        api.load2d.srcStride = CalcFloorAlign(api.curLoadKbl1 >> c0Bits, api.HkWk)


def LoadToB2V1(api, b1, kPos: int, l0b) -> None:
    """fp16/bf16: one transposing LoadData 2D per K fractal; source walks the kernel positions backwards."""
    t = api.tiling
    kRepeat = api.mmad.k >> t.c0Bits
    kBlockC0Num = kPos * (t.baseK >> t.c0Bits)  # first K fractal of this baseK inside the L1 buffer
    blockSize = FRACTAL_ELEMS_B16
    dstB2Stride = api.blockBaseN * blockSize
    HkWk = api.HkWk
    params = api.load2d
    if api.loadB2Condition == 2:  # 1x1 kernel: no reversal, consecutive fractals
        dst, src = 0, api.baseB1Offset + kBlockC0Num * blockSize
        for _ in range(kRepeat):
            LoadData(l0b[dst], b1[src], params)
            dst += dstB2Stride
            src += blockSize
    elif api.loadB2Condition == 0:  # baseK/C0 < hk*wk: one cout1, consecutive (reversed) kernel positions
        baseC1outIdx = CalcDiv(kBlockC0Num, HkWk)
        curL1CoutC0 = CalcDiv(api.curLoadKbl1, HkWk) * t.c0
        baseHkWkOffset = HkWk - 1 - kBlockC0Num + baseC1outIdx * HkWk
        dst = 0
        src = api.baseB1Offset + baseC1outIdx * blockSize + baseHkWkOffset * curL1CoutC0
        for _ in range(kRepeat):
            LoadData(l0b[dst], b1[src], params)
            dst += dstB2Stride
            src -= curL1CoutC0
    else:  # baseK/C0 >= hk*wk: whole kernels, possibly several cout1
        baseC1outIdx = CalcDiv(kBlockC0Num, HkWk)
        curL1Cout = CalcDiv(api.curLoadKbl1, HkWk)
        baseHkWkOffset = HkWk - 1 - kBlockC0Num + baseC1outIdx * HkWk
        dst = 0
        for i in range(kRepeat):
            idxC1out = baseC1outIdx + i // HkWk
            src = (api.baseB1Offset + idxC1out * blockSize
                   + (baseHkWkOffset - i % HkWk) * t.c0 * curL1Cout)
            LoadData(l0b[dst], b1[src], params)
            dst += dstB2Stride


def _load3d_b_params(api, wSize: int, mStart: int) -> LoadData3DParamsV2:
    """One LoadData 3Dv2 into L0B: 16 couts (mExtension) x baseUseN cin (kExtension) of a 1 x wSize fmap, read
    through the RIGHT fmatrix (fMatrixCtrl=1) so that A's left one is untouched."""
    return LoadData3DParamsV2(
        padList=PADLIST_B, l1H=1, l1W=wSize, channelSize=api.curStepN * api.baseUseN,
        kExtension=api.baseUseN, mExtension=BLOCK_CUBE,
        kStartPt=api.curNL0Idx % api.curStepN * api.baseUseN, mStartPt=mStart,
        strideW=1, strideH=1, filterW=1, filterH=1, dilationFilterW=1, dilationFilterH=1,
        enTranspose=True,  # into L0B the hardware always transposes, to give the ZN fractals
        enSmallK=False, padValue=0, filterSizeW=False, filterSizeH=False, fMatrixCtrl=True)


def _set_fmatrix_b(wSize: int) -> None:
    SetFmatrix(1, wSize, PADLIST_B, FMATRIX_RIGHT)


def LoadToB2Pro(api, b1, kPos: int, l0bKIdx: int, b1PingPongFlag: bool, l0b) -> None:
    """fp32, hk*wk > 1: per K block of 8 couts, a Load3Dv2 of 16 couts at the reversed kernel position."""
    t = api.tiling
    HkWk = api.HkWk
    kRepeat = api.mmad.k >> t.c0Bits
    kBlockC0Num = l0bKIdx * kRepeat
    baseHkOffset = kBlockC0Num // t.wk % t.hk
    baseWkOffset = kBlockC0Num % t.wk
    baseHkWkOffset = HkWk - 1 - baseHkOffset * t.wk - baseWkOffset
    curL1Cout = DivCeil(api.curLoadKbl1 // api.HkWkC0, 2) * BLOCK_CUBE
    wSize = curL1Cout * HkWk
    _set_fmatrix_b(wSize)
    numHkWk = kPos * api.mmad.k // api.HkWkC0
    mStartOffset = (numHkWk & 1) * t.c0  # lower or upper 8 couts of a 16-cout group
    curCoutIdx = api.curPingCoutIdx if b1PingPongFlag else api.curPongCoutIdx
    coutOffset = (kPos * t.baseK // (HkWk * BLOCK_CUBE) - curCoutIdx) * BLOCK_CUBE
    for i in range(kRepeat):
        baseCoutOffset = i // HkWk * t.c0
        dst = i * api.baseUseAlignN * t.c0
        mStart = (baseHkWkOffset - i % HkWk) * curL1Cout + baseCoutOffset + coutOffset + mStartOffset
        LoadData(l0b[dst], b1, _load3d_b_params(api, wSize, mStart), isSetFMatrix=False)


def LoadToB2ProGemm(api, b1, kPos: int, l0bKIdx: int, l0b) -> None:
    """fp32, 1x1 kernel: consecutive 16-cout pieces, no reversal."""
    kRepeat = DivCeil(api.mmad.k, BLOCK_CUBE)
    wSize = DivCeil(api.curLoadKbl1 // api.HkWkC0, 2) * BLOCK_CUBE
    _set_fmatrix_b(wSize)
    mStartL1Pos = l0bKIdx * api.mmad.k
    for i in range(kRepeat):
        dst = i * api.baseUseAlignN * BLOCK_CUBE
        LoadData(l0b[dst], b1, _load3d_b_params(api, wSize, i * BLOCK_CUBE + mStartL1Pos), isSetFMatrix=False)


def LoadToB2(api, b1, l0bKIdx: int, kPos: int, b1PingPongFlag: bool, l0b) -> None:
    if api.isB16:
        LoadToB2V1(api, b1, l0bKIdx, l0b)
    elif api.loadB2Condition == 2:
        LoadToB2ProGemm(api, b1, kPos, l0bKIdx, l0b)
    else:
        LoadToB2Pro(api, b1, kPos, l0bKIdx, b1PingPongFlag, l0b)


# ------------------------------------------------------------------------------------------------ GM -> L1
def _copy_rows(api, buf, src: int, params: DataCopyParams, srcStride: int, rowElems: int, blockCount: int):
    """One strided DataCopy, or one per row when the source gap does not fit 16 bits."""
    if srcStride <= MAX_16BITS_STRIDE:
        params.blockCount = blockCount
        params.srcStride = srcStride
        DataCopy(buf, api.weightGlobal[src], params)
    else:
        params.blockCount = 1
        dst = 0
        for _ in range(blockCount):
            DataCopy(buf[dst], api.weightGlobal[src], params)
            src += rowElems
            dst += params.blockLen * api.tiling.c0


def LoadToB1BF16(api, kIdx: int, curDkIdx: int, buf) -> None:
    t = api.tiling
    curCin1Idx = api.curNL1Idx * api.curCin1Size
    if api.loadB2Condition == 2:
        curCout1Idx = kIdx * t.baseK >> t.c0Bits
        curCout1Size = api.curLoadKbl1 >> t.c0Bits
    else:
        curCout1Idx = kIdx * t.baseK // api.HkWkC0
        curCout1Size = api.curLoadKbl1 // api.HkWkC0
    # FRACTAL_Z_3D rows (kd, cin1, kh, kw), each cout1G*C0 couts of C0 cin0
    src = ((curDkIdx * t.cin1G + curCin1Idx) * api.HkWkC0 * t.cout1G * t.c0 + curCout1Idx * t.c0 * t.c0)
    params = DataCopyParams()
    params.blockLen = min(curCout1Size, api.singleShapeCout1 - curCout1Idx) * t.c0
    params.dstStride = 0
    curCin1Size = min(api.curCin1Size, api.singleShapeCin1 - curCin1Idx)
    srcStride = t.cout1G * t.c0 - params.blockLen
    _copy_rows(api, buf, src, params, srcStride, t.cout1G * t.c0 * t.c0, curCin1Size * api.HkWk)


def LoadToB1Fp32(api, kIdx: int, curDkIdx: int, buf, b1PingPongFlag: bool) -> None:
    """fp32: couts of every FRACTAL_Z_3D row are padded to 16 (alignedCout); loads whole 16-cout groups."""
    t = api.tiling
    curCin1Idx = api.curNL1Idx * api.curCin1Size
    curCout1Idx = kIdx * t.baseK // (api.HkWk * BLOCK_CUBE)  # in 16-cout groups
    if b1PingPongFlag:
        api.curPingCoutIdx = curCout1Idx
    else:
        api.curPongCoutIdx = curCout1Idx
    src = ((curDkIdx * t.cin1G + curCin1Idx) * api.HkWkC0 * api.alignedCout
           + curCout1Idx * BLOCK_CUBE * t.c0)
    curCin1Size = min(api.curCin1Size, api.singleShapeCin1 - curCin1Idx)
    curCout1Size = DivCeil(api.curLoadKbl1 // api.HkWkC0, 2) * BLOCK_CUBE
    params = DataCopyParams()
    params.blockLen = min(curCout1Size, (api.alignedCout1 - curCout1Idx) * BLOCK_CUBE)
    params.dstStride = 0
    srcStride = api.alignedCout - params.blockLen
    _copy_rows(api, buf, src, params, srcStride, api.alignedCout * t.c0, curCin1Size * api.HkWk)


def LoadToB1(api, kIdx: int, curDkIdx: int, pingPongFlag: bool, loadFlag: bool) -> None:
    if api.isB1FullLoadFlag and not api.isLoadB1:
        return  # B stays resident in L1 for the whole core
    if not loadFlag:
        return
    que = api.b1Ping if pingPongFlag else api.b1Pong
    buf = que.AllocTensor(api.SrcT)
    if api.isB16:
        LoadToB1BF16(api, kIdx, curDkIdx, buf)
    else:
        LoadToB1Fp32(api, kIdx, curDkIdx, buf, pingPongFlag)
    que.EnQue(buf)


__all__ = ["InitLoadToB2Params", "UpdateLoadToB2ParamsN", "UpdateLoadToB2ParamsK", "LoadToB2", "LoadToB1"]
