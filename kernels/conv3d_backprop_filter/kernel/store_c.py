"""L0C -> GM: one Fixpipe per tile into dw (FRACTAL_Z_3D, fp32), with the atomic add on when enAtomic == 1.

The tile's N columns are (cin1, kh, kw, cin0) and its M rows couts: in FRACTAL_Z_3D [(dk,) cin1, kh, kw]
[cout (alignCoutG)][C0] every C0-wide column of the NZ tile is one (cin1, kh, kw) row block, alignCoutG*C0
elements apart (dstStride in 32-byte blocks), and a tile starts at curNL0Idx*baseN*alignCoutG +
curML0Idx*baseM*C0. bf16/fp16 write 16-wide fp32 rows (C0 = 16); fp32 splits every 16 columns into two 8-wide
ones (isChannelSplit, C0 = 8).

Real counterpart (conv_bp_sub_func.h): LoadL0c2Gm.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import CFG_NZ, Fixpipe, FixpipeParamsV220, SetAtomicAdd, SetAtomicNone
from kernels.conv3d_backprop_filter.kernel.util import ONE_BLK_SIZE, Ceil, ShiftCeilM0


def LoadL0c2Gm(api, output, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
    t = api.tiling
    que = api.l0cPing if api.l0cPingPongFlag else api.l0cPong
    l0c = que.DeQue(np.float32)
    if enAtomic == 1:
        SetAtomicAdd(np.float32)
    srcStride = ShiftCeilM0(api.baseUseM, t.m0) * t.m0
    if not enSequentialWrite:
        if api.isDeterministic:  # a workspace of this block's couts
            alignCoutG = Ceil(api.singleShapeCout, t.channelSize) * t.channelSize
        else:
            alignCoutG = t.cout1G * t.channelSize
        dstOffset = api.curNL0Idx * t.baseN * alignCoutG + api.curML0Idx * t.baseM * t.channelSize
        dstStrideIn = alignCoutG * t.channelSize * 4 // ONE_BLK_SIZE
        target = output[dstOffset]
    else:  # the deterministic workspace: tiles one after another
        dstStrideIn = t.baseM * t.channelSize * 4 // ONE_BLK_SIZE
        target = output
    Fixpipe(target, l0c, FixpipeParamsV220(nSize=api.baseUseN, mSize=api.baseUseM, srcStride=srcStride,
                                           dstStride=dstStrideIn, isChannelSplit=api.isFp32), CFG_NZ)
    if enAtomic == 1:
        SetAtomicNone()
    que.FreeTensor(l0c)
    if t.cl0Pbuffer > 1:
        api.l0cPingPongFlag = not api.l0cPingPongFlag
