"""CopyOutTools (conv3d_sub_api.h): L0C -> GM by Fixpipe into NDC1HWC0 (C0 of the output dtype), converting fp32 to
fp16/bf16 (F322F16/F322BF16) or splitting fp32 channels into C0 = 8 (isChannelSplit)."""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import CFG_NZ, Fixpipe, FixpipeParamsV220, QuantMode_t
from ascend_sim.machine.dtypes import bfloat16
from kernels.conv3d_v2.kernel.util import BLOCK_L0_M, AlignB


def GetQuantPre(out_dtype) -> QuantMode_t:
    dt = np.dtype(out_dtype)
    if dt == np.float32:
        return QuantMode_t.NoQuant
    return QuantMode_t.F322BF16 if dt == bfloat16 else QuantMode_t.F322F16


class CopyOutTools:
    def SetParams(self, conv) -> None:
        self.self_ = conv
        t = conv.conv3dTiling
        self.tilingNBL1_, self.tilingMAL1_ = t.nBL1, t.mAL1
        self.valueHoWo_ = conv.orgHo * conv.orgWo

    def SetMN(self, m: int, n: int) -> None:
        self.currentML0_, self.currentNL0_ = m, n

    def SetFixpipeIntriParams(self) -> FixpipeParamsV220:
        c, t = self.self_, self.self_.conv3dTiling
        p = FixpipeParamsV220()
        p.nSize = self.currentNL0_ if (c.nBL1Iter == c.maxNBL1Iter and c.nBL0Iter == c.maxNL0Iter) else t.nL0
        if c.mAL1Iter == c.maxMAL1Iter and c.mAL0Iter == c.maxML0Iter:
            p.mSize = c.singleCoreM - c.mAL1Iter * t.mAL1 - c.mAL0Iter * t.mL0
            p.srcStride = AlignB(c.mAL0Tail, BLOCK_L0_M)
        else:
            p.mSize = t.mL0
            p.srcStride = t.mL0
        p.dstStride = self.valueHoWo_
        p.quantPre = GetQuantPre(c.OutputT)
        p.reluEn = False
        p.isChannelSplit = np.dtype(c.OutputT) == np.float32
        return p

    def CopyOut(self, output) -> None:
        Fixpipe(output[self.CalcFixpipeOffset()], self.self_.cl0, self.SetFixpipeIntriParams(), CFG_NZ)

    def CalcFixpipeOffset(self) -> int:
        c, t = self.self_, self.self_.conv3dTiling
        offsetCout = self.tilingNBL1_ * c.nBL1Iter + t.nL0 * c.nBL0Iter
        offsetM = self.tilingMAL1_ * c.mAL1Iter + t.mL0 * c.mAL0Iter
        offsetDout = c.dOutIter  # one output depth per Iterate
        if c.groupConvType:  # a plane holds every group's couts; this group-opt block starts groupOptIter on
            return (offsetDout * AlignB(t.orgCo, c.cin0) * self.valueHoWo_
                    + c.groupOptIter * c.orgCoAlignK0 * self.valueHoWo_ + offsetCout * self.valueHoWo_
                    + offsetM * c.cin0)
        return offsetDout * c.orgCoAlignK0 * self.valueHoWo_ + offsetCout * self.valueHoWo_ + offsetM * c.cin0
