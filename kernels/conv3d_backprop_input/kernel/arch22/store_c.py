"""L0C -> GM: one Fixpipe per tile into the NDC1HWC0 dx (or, for the MIX NCDHW build, into this core's workspace
slot), converting fp32 to the output dtype on the way.

dst = curNL0Idx*baseN*HiWi + (curML0Idx*baseM + curDinIdx*HiWi*cin1) * C0 elements (relative to the core's
C offset); the C0-wide columns of the NZ tile land HiWi*C0 elements (= HiWi 32-byte blocks) apart, one per
cin1 plane. fp32 output uses channel split: every 16-column fractal becomes two C0 = 8 planes.

NCDHW build (CopyData2TmpWorkspace): the tile goes NZ, [ceil(baseUseN/16)][baseUseM][16] with no gaps, to the
slot at block_idx*baseM*baseN elements of the workspace, through the older FixpipeParams struct.

Real counterparts (conv_bp_sub_func.h): LoadL0c2Gm, CopyData2Gm, CopyData2TmpWorkspace, FreeL0cTensor.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (DataCopy, DataCopyCO12DstParams, Fixpipe, FixpipeParams, GetBlockIdx, QuantMode_t,
                                QuantParams)
from ascend_sim.machine.dtypes import bfloat16, float16
from kernels.conv3d_backprop_input.kernel.arch22.util import (BLOCK_CUBE, FORMAT_NCDHW, FORMAT_NDC1HWC0, Ceil,
                                                              ShiftCeilBlockCube)

UINT32_MAX = 2**32 - 1


def quant_mode(dst_dtype) -> QuantMode_t:
    dt = np.dtype(dst_dtype)
    if dt == float16:
        return QuantMode_t.F322F16
    if dt == bfloat16:
        return QuantMode_t.F322BF16
    return QuantMode_t.NoQuant


def CopyData2Gm(api, output, c1buf, quant: QuantMode_t) -> None:
    t = api.tiling
    dst = (api.curNL0Idx * t.baseN * api.hwI
           + (api.curML0Idx * t.baseM + api.curDinIdx * api.hwI * t.cin1) * t.c0)
    split = np.dtype(api.DstT) == np.float32
    alignedBaseUseM = ShiftCeilBlockCube(api.baseUseM) * BLOCK_CUBE
    if api.hwI <= UINT32_MAX:
        DataCopy(output[dst], c1buf, DataCopyCO12DstParams(
            nSize=api.baseUseN, mSize=api.baseUseM, dstStride=api.hwI, srcStride=alignedBaseUseM,
            quantPre=quant, reluPre=0, channelSplit=split, nz2ndEn=False))
    else:  # one C0 plane at a time when HiWi does not fit the 32-bit stride (fp16/bf16 only)
        src = 0
        for _ in range(api.baseUseN // t.c0):
            DataCopy(output[dst], c1buf[src], DataCopyCO12DstParams(
                nSize=t.c0, mSize=api.baseUseM, dstStride=api.baseUseM, srcStride=0, quantPre=quant,
                reluPre=0, channelSplit=split, nz2ndEn=False))
            dst += api.hwI * t.c0
            src += alignedBaseUseM * BLOCK_CUBE


def CopyData2TmpWorkspace(api, output, c1buf) -> None:
    """burstLen counts 32-byte blocks of fp32 L0C data: baseUseM rows of 16 are baseUseM * 2 of them."""
    t = api.tiling
    dstOffset = GetBlockIdx() * t.baseM * t.baseN
    params = FixpipeParams(cburstNum=Ceil(api.baseUseN, 16), burstLen=api.baseUseM * BLOCK_CUBE * 4 // 32,
                           srcStride=0, dstStride=0, quantParams=QuantParams(quant_mode(api.DstT)))
    Fixpipe(output[dstOffset], c1buf, params)


def FreeL0cTensor(api, l0c) -> None:
    (api.c1Ping if api.usingCacheC1Ping else api.c1Pong).FreeTensor(l0c)


def LoadL0c2Gm(api, output, enAtomic: int = 0, enSequentialWrite: bool = False,
               yFormat: str = FORMAT_NDC1HWC0) -> None:
    if not api.needComputeFlag:
        return  # the tile was skipped: nothing was computed, nothing is written
    c1buf = (api.c1Ping if api.usingCacheC1Ping else api.c1Pong).DeQue(np.float32)
    if not api.needComputeKFlag:  # no kernel plane reaches this output depth
        FreeL0cTensor(api, c1buf)
        return
    if enAtomic == 1:
        raise NotImplementedError("enAtomic=1 (SetAtomicAdd) is not used by the dx drivers")
    if enSequentialWrite:
        return
    if yFormat == FORMAT_NCDHW:
        CopyData2TmpWorkspace(api, output, c1buf)
    else:
        CopyData2Gm(api, output, c1buf, quant_mode(api.DstT))
    FreeL0cTensor(api, c1buf)
    if api.tiling.cl0Pbuffer > 1:
        api.usingCacheC1Ping = not api.usingCacheC1Ping
