"""The kernel entry `conv3dv2` (ops-nn conv/conv3d_v2/op_kernel/conv3d_v2.cpp, arch22) and the base kernel
KernelConv3DV2 (conv3dv2.h), run on every core.

Dispatch (conv3d_v2_kernel_dispatch.h): the tiling key is GET_TPL_TILING_KEY(ConvL0PingPong, ConvBL1ByPass,
GroupConvType, OutputOrder). NDC1HWC0 data with GroupConv_Weight_Gfz runs KernelConv3DV2WithGroups, OutputOrder
HW_Mode runs KernelConv3DV2HwMode, everything else KernelConv3DV2 (M mode). The fmap format is a compile-time
choice of the entry (FORMAT_X), not part of the key: NCDHW data (with an NCDHW filter and y) runs
KernelConv3DV2PointWise, and only for keys with the weight through L1, no groups and M mode (any other key
compiles to an empty kernel; here it is refused). A grouped key with HW mode is refused before any instruction.

Per core (KernelConv3DV2::InitSingleCoreData): the block index splits into (m, n, do, batch) with m fastest; each
dimension's share is ceil(whole / dim) and the last core of a dimension takes the tail (CountIdxTail); a core
past the last real share of any dimension does nothing. The GM tensors handed to the API are offset to the core's
first batch, first input plane and row (clamped at 0: the API handles the pads), first cout.

The real entry is a MIX 1:2 launch (KERNEL_TYPE_MIX_AIC_1_2) whose vector cores serve only the quantised output
(PER_CHANNEL_NO_OFFSET); for float data the cube cores do all the work, and the simulator launches those only.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import GetBlockIdx, GlobalTensor
from kernels.conv3d_v2.kernel.api import Conv3D
from kernels.conv3d_v2.kernel.util import GROUPCONV_WEIGHT_GFZ, HW_MODE, M_MODE, NCDHW, NDC1HWC0, NOGROUP_CONV, CeilDIV

N0 = 16
SINGLE_BLOCK_SIZE = 32


def decode_tiling_key(key: int) -> tuple[int, int, int, int]:
    """(ConvL0PingPong, ConvBL1ByPass, GroupConvType, OutputOrder), packed low bits first (2, 1, 1, 1 bits)."""
    return key & 3, (key >> 2) & 1, (key >> 3) & 1, (key >> 4) & 1


def not_ported_variant(key: int, fmap_format: str = NDC1HWC0) -> str | None:
    """Why the kernel variant this key (and fmap format) selects is not available here, or None."""
    _, bl1bypass, group_type, output_order = decode_tiling_key(key)
    if fmap_format == NCDHW:
        if bl1bypass or group_type == GROUPCONV_WEIGHT_GFZ or output_order == HW_MODE:
            return (f"tiling key {key} with NCDHW data: the entry runs KernelConv3DV2PointWise only with the weight "
                    "through L1, no groups and M mode (conv3d_v2_kernel_dispatch.h); other keys run nothing")
        return None
    if group_type == GROUPCONV_WEIGHT_GFZ and output_order == HW_MODE:
        return (f"tiling key {key} selects KernelConv3DV2WithGroups with OutputOrder HW_Mode, which is not ported "
                "(the grouped kernel splits M as M mode does; the host tiling does not pair them)")
    return None


class KernelConv3DV2:
    GROUP_CONV_TYPE = NOGROUP_CONV
    OUTPUT_ORDER = M_MODE

    FORMAT = NDC1HWC0

    def __init__(self, x_dtype, bias_dtype, l0pingpong: int, bl1bypass: int):
        self.A_T = self.B_T = self.C_T = np.dtype(x_dtype)
        self.BIAS_T = np.dtype(bias_dtype)
        self.conv = Conv3D(self.A_T, self.B_T, self.C_T, self.BIAS_T, l0pingpong, bl1bypass, self.GROUP_CONV_TYPE,
                           self.OUTPUT_ORDER, self.FORMAT)
        self.blockIdx = GetBlockIdx()
        self.c0In = self.c0K = self.c0Out = SINGLE_BLOCK_SIZE // self.A_T.itemsize

    def Init(self, x, filter, bias, y, workspace, allTilingData) -> None:
        self.InitTilingData(allTilingData)
        self.InitC1N1()
        self.normalInit = self.InitSingleCoreData()
        self.InitBuffer(x, filter, bias, y)

    def Process(self) -> None:
        if not self.normalInit or self.blockIdx >= self.numBlocks:
            return
        self.Conv3DV2KernelImpl()

    def InitTilingData(self, allTilingData) -> None:
        self.conv3dRunInfo, self.conv3dApiTiling = allTilingData.convRunInfo, allTilingData.convApiTiling
        r = self.conv3dRunInfo
        self.numBlocks = r.mDim * r.nDim * r.groupDim * r.doDim * r.batchDim

    def InitC1N1(self) -> None:
        r = self.conv3dRunInfo
        self.c1In, self.c1Out = CeilDIV(r.cin, self.c0In), CeilDIV(r.cout, self.c0Out)
        self.n1 = CeilDIV(r.cout, N0)

    def CountIdxTail(self, dataPerDim: int, dim: int, wholeDim: int, realWholeDim: int):
        """(singleCoreDim, dimIdxStart, isDimTail) of this core along one dimension, or None past the last share."""
        dimIdx = (self.blockIdx // dataPerDim) % dim
        maxDimPerCore = CeilDIV(wholeDim, dim)
        realDim = CeilDIV(wholeDim, maxDimPerCore)
        if dimIdx >= realDim:
            return None
        isDimTail = dimIdx == realDim - 1
        single = realWholeDim - (realDim - 1) * maxDimPerCore if isDimTail else maxDimPerCore
        return single, dimIdx * maxDimPerCore, isDimTail

    def InitSingleCoreData(self) -> bool:
        r = self.conv3dRunInfo
        shares = (self.CountIdxTail(r.mDim * r.nDim * r.doDim, r.batchDim, r.batch, r.batch),
                  self.CountIdxTail(r.nDim * r.mDim, r.doDim, r.dout, r.dout),
                  self.CountIdxTail(r.mDim, r.nDim, self.n1 * N0, r.cout),
                  self.CountIdxTail(1, r.mDim, r.wout * r.hout, r.wout * r.hout))
        if any(share is None for share in shares):
            return False
        ((self.singleCoreBatch, self.batchIdxStart, self.isBatchDimTail),
         (self.singleCoreDout, self.doIdxStart, self.isDoDimTail),
         (self.singleCoreN, self.nIdxStart, self.isNDimTail),
         (self.singleCoreM, self.mIdxStart, self.isMDimTail)) = shares
        return True

    def InitBuffer(self, x, filter, bias, y) -> None:
        r = self.conv3dRunInfo
        self.fmapOneBatchSize = r.din * self.c1In * r.hin * r.win * self.c0In
        self.outputOneBatchSize = r.dout * self.c1Out * r.hout * r.wout * self.c0Out
        self.fmapGm, self.filterGm = GlobalTensor(self.A_T), GlobalTensor(self.B_T)
        self.outputGm, self.biasGm = GlobalTensor(self.C_T), GlobalTensor(self.BIAS_T)
        if not self.normalInit:
            return
        diIdxStart = self.doIdxStart * r.strideD - r.padHead
        hiIdxStart = (self.mIdxStart // r.wout) * r.strideH - r.padTop
        fmStartAddr = (self.batchIdxStart * self.fmapOneBatchSize
                       + max(diIdxStart, 0) * self.c1In * r.hin * r.win * self.c0In
                       + max(hiIdxStart, 0) * r.win * self.c0In)
        weightStartAddr = self.nIdxStart * self.c0K
        outputStartAddr = (self.batchIdxStart * self.outputOneBatchSize
                           + self.doIdxStart * self.c1Out * r.hout * r.wout * self.c0Out
                           + self.nIdxStart * r.hout * r.wout + self.mIdxStart * self.c0Out)
        self.fmapGm.SetGlobalBuffer(x)
        self.filterGm.SetGlobalBuffer(filter)
        self.outputGm.SetGlobalBuffer(y)
        self.fmapGm, self.filterGm = self.fmapGm[fmStartAddr], self.filterGm[weightStartAddr]
        self.outputGm = self.outputGm[outputStartAddr]
        if r.hasBias:
            self.biasGm = GlobalTensor(self.BIAS_T).SetGlobalBuffer(bias)[self.nIdxStart]

    def Conv3DV2KernelImpl(self) -> None:
        r, conv = self.conv3dRunInfo, self.conv
        conv.Init(self.conv3dApiTiling)
        if self.isDoDimTail or self.isNDimTail or self.isMDimTail:
            conv.SetSingleOutputShape(self.singleCoreN, self.singleCoreDout, self.singleCoreM, 0)
        diIdxStart = self.doIdxStart * r.strideD
        conv.SetInputStartPosition(max(diIdxStart, 0), self.mIdxStart, 0)
        conv.SetWeight(self.filterGm)
        if r.hasBias:
            conv.SetBias(self.biasGm)
        for batchIter in range(self.singleCoreBatch):
            conv.SetInput(self.fmapGm[batchIter * self.fmapOneBatchSize])
            conv.IterateAll(self.outputGm[batchIter * self.outputOneBatchSize])
            conv.End()


class KernelConv3DV2WithGroups(KernelConv3DV2):
    """conv3dv2_with_groups.h: the block index splits into (m, n, do, group-opt, batch); each core runs its
    group-opt blocks through the API's IterateAllWithGroups. A group-opt block is `enlarge` original groups folded
    into cinOpt x coutOpt channels (the host's rule); the core whose share ends in the last, partly empty block
    passes its real Cin / Cout there to SetGroupOptInfo."""

    GROUP_CONV_TYPE = GROUPCONV_WEIGHT_GFZ

    def Init(self, x, filter, bias, y, workspace, allTilingData) -> None:
        self.singleCoreCinTail = self.singleCoreCoutTail = 0
        super().Init(x, filter, bias, y, workspace, allTilingData)

    def Process(self) -> None:
        if not self.normalInit or self.blockIdx > self.numBlocks:  # the real check is ">" here
            return
        self.Conv3DV2KernelImpl()

    def InitSingleCoreData(self) -> bool:
        r, a = self.conv3dRunInfo, self.conv3dApiTiling
        shares = (self.CountIdxTail(r.groupDim * r.mDim * r.nDim * r.doDim, r.batchDim, r.batch, r.batch),
                  self.CountIdxTail(r.doDim * r.nDim * r.mDim, r.groupDim, a.groupOpt, a.groupOpt),
                  self.CountIdxTail(r.nDim * r.mDim, r.doDim, r.dout, r.dout),
                  self.CountIdxTail(r.mDim, r.nDim, CeilDIV(a.coutOpt, N0) * N0, a.coutOpt),
                  self.CountIdxTail(1, r.mDim, r.wout * r.hout, r.wout * r.hout))
        if any(share is None for share in shares):
            return False
        ((self.singleCoreBatch, self.batchIdxStart, self.isBatchDimTail),
         (self.singleCoreGroupOpt, self.groupOptIdxStart, self.isGroupOptDimTail),
         (self.singleCoreDout, self.doIdxStart, self.isDoDimTail),
         (self.singleCoreN, self.nIdxStart, self.isNDimTail),
         (self.singleCoreM, self.mIdxStart, self.isMDimTail)) = shares
        preCoreSumCout = self.groupOptIdxStart * a.coutOpt + self.nIdxStart
        curCoreSumCout = a.singleCoreGroupOpt * a.singleCoreCo
        if preCoreSumCout >= r.cout:
            return False  # every cout of this core's share is past the real ones
        groupDimTailCout = CeilDIV(r.cout % a.coutOpt, self.c0Out) * self.c0Out
        if self.isGroupOptDimTail and groupDimTailCout != 0 and self.nIdxStart >= groupDimTailCout:
            self.singleCoreGroupOpt -= 1  # no real data in the last block for this core: skip it
            return True
        if self.isGroupOptDimTail:
            self.singleCoreCinTail = r.cin % a.cinOpt
            if self.isNDimTail or preCoreSumCout + curCoreSumCout >= r.cout:
                self.singleCoreCoutTail = (r.cout % a.coutOpt) % a.singleCoreCo
        return True

    def InitBuffer(self, x, filter, bias, y) -> None:
        r, a = self.conv3dRunInfo, self.conv3dApiTiling
        self.fmapOneBatchSize = r.din * self.c1In * r.hin * r.win * self.c0In
        self.outputOneBatchSize = r.dout * self.c1Out * r.hout * r.wout * self.c0Out
        self.fmapGm, self.filterGm = GlobalTensor(self.A_T), GlobalTensor(self.B_T)
        self.outputGm, self.biasGm = GlobalTensor(self.C_T), GlobalTensor(self.BIAS_T)
        if not self.normalInit:
            return
        fmapOneGroupOptSize = a.cinOpt * r.hin * r.win
        weightOneGroupOptSize = a.cinOpt * a.kernelD * a.kernelH * a.kernelW * a.coutOpt
        outputOneGroupOptSize = a.coutOpt * r.hout * r.wout
        diIdxStart = self.doIdxStart * r.strideD - r.padHead
        hiIdxStart = (self.mIdxStart // r.wout) * r.strideH - r.padTop
        fmStartAddr = (self.batchIdxStart * self.fmapOneBatchSize
                       + max(diIdxStart, 0) * self.c1In * r.hin * r.win * self.c0In
                       + self.groupOptIdxStart * fmapOneGroupOptSize + max(hiIdxStart, 0) * r.win * self.c0In)
        weightStartAddr = self.groupOptIdxStart * weightOneGroupOptSize + self.nIdxStart * self.c0K
        outputStartAddr = (self.batchIdxStart * self.outputOneBatchSize
                           + self.doIdxStart * self.c1Out * r.hout * r.wout * self.c0Out
                           + self.groupOptIdxStart * outputOneGroupOptSize + self.nIdxStart * r.hout * r.wout
                           + self.mIdxStart * self.c0Out)
        self.fmapGm = self.fmapGm.SetGlobalBuffer(x)[fmStartAddr]
        self.filterGm = self.filterGm.SetGlobalBuffer(filter)[weightStartAddr]
        self.outputGm = self.outputGm.SetGlobalBuffer(y)[outputStartAddr]
        if r.hasBias:
            self.biasGm = self.biasGm.SetGlobalBuffer(bias)[self.groupOptIdxStart * a.coutOpt + self.nIdxStart]

    def Conv3DV2KernelImpl(self) -> None:
        r, conv = self.conv3dRunInfo, self.conv
        conv.Init(self.conv3dApiTiling)
        if self.isDoDimTail or self.isNDimTail or self.isMDimTail or self.isGroupOptDimTail:
            conv.SetSingleOutputShape(self.singleCoreN, self.singleCoreDout, self.singleCoreM, self.singleCoreGroupOpt)
        conv.SetInputStartPosition(max(self.doIdxStart * r.strideD, 0), self.mIdxStart, 0)
        for batchIter in range(self.singleCoreBatch):
            conv.SetGroupOptInfo(self.singleCoreCinTail, self.singleCoreCoutTail, self.isGroupOptDimTail)
            conv.SetInput(self.fmapGm[batchIter * self.fmapOneBatchSize])
            conv.SetWeight(self.filterGm)
            if r.hasBias:
                conv.SetBias(self.biasGm)
            conv.IterateAll(self.outputGm[batchIter * self.outputOneBatchSize])
            conv.End()


class KernelConv3DV2HwMode(KernelConv3DV2):
    """conv3dv2_hw_mode.h: M is split over the output rows (mDim cores along Hout); the API runs in HW mode."""

    OUTPUT_ORDER = HW_MODE

    def Process(self) -> None:
        if not self.normalInit or self.blockIdx > self.numBlocks:  # the real check is ">" here
            return
        self.Conv3DV2KernelImpl()

    def InitSingleCoreData(self) -> bool:
        r = self.conv3dRunInfo
        shares = (self.CountIdxTail(r.mDim * r.nDim * r.doDim, r.batchDim, r.batch, r.batch),
                  self.CountIdxTail(r.nDim * r.mDim, r.doDim, r.dout, r.dout),
                  self.CountIdxTail(r.mDim, r.nDim, self.n1 * N0, r.cout),
                  self.CountIdxTail(1, r.mDim, r.hout, r.hout))
        if any(share is None for share in shares):
            return False
        ((self.singleCoreBatch, self.batchIdxStart, self.isBatchDimTail),
         (self.singleCoreDout, self.doIdxStart, self.isDoDimTail),
         (self.singleCoreN, self.nIdxStart, self.isNDimTail),
         (self.singleCoreM, self.mIdxStart, self.isMDimTail)) = shares
        return True

    def InitBuffer(self, x, filter, bias, y) -> None:
        r = self.conv3dRunInfo
        super().InitBuffer(x, filter, bias, y)  # batch, depth, cout offsets as in M mode; rows below
        if not self.normalInit:
            return
        hiIdxStart = self.mIdxStart * r.strideH - r.padTop
        fmStartAddr = (self.batchIdxStart * self.fmapOneBatchSize
                       + max(self.doIdxStart * r.strideD - r.padHead, 0) * self.c1In * r.hin * r.win * self.c0In
                       + max(hiIdxStart, 0) * r.win * self.c0In)
        outputStartAddr = (self.batchIdxStart * self.outputOneBatchSize
                           + self.doIdxStart * self.c1Out * r.hout * r.wout * self.c0Out
                           + self.nIdxStart * r.hout * r.wout + self.mIdxStart * r.wout * self.c0Out)
        self.fmapGm = GlobalTensor(self.A_T).SetGlobalBuffer(x)[fmStartAddr]
        self.outputGm = GlobalTensor(self.C_T).SetGlobalBuffer(y)[outputStartAddr]

    def Conv3DV2KernelImpl(self) -> None:
        r, conv = self.conv3dRunInfo, self.conv
        conv.Init(self.conv3dApiTiling)
        if self.isDoDimTail or self.isNDimTail or self.isMDimTail:
            conv.SetSingleOutputShape(self.singleCoreN, self.singleCoreDout, self.singleCoreM, 0)
        conv.SetInputStartPosition(max(self.doIdxStart * r.strideD, 0), max(self.mIdxStart * r.strideH, 0), 0)
        conv.SetWeight(self.filterGm)
        if r.hasBias:
            conv.SetBias(self.biasGm)
        for batchIter in range(self.singleCoreBatch):
            conv.SetInput(self.fmapGm[batchIter * self.fmapOneBatchSize])
            conv.IterateAll(self.outputGm[batchIter * self.outputOneBatchSize])
            conv.End()


class KernelConv3DV2PointWise(KernelConv3DV2):
    """conv3dv2_pointwise.h: the M-mode core split of KernelConv3DV2 on NCDHW x, an NCDHW (Cout x Cin) weight and
    NCDHW y; the API runs its pointwise tools (pointwise.py)."""

    FORMAT = NCDHW

    def Process(self) -> None:
        if not self.normalInit or self.blockIdx > self.numBlocks:  # the real check is ">" here
            return
        self.Conv3DV2KernelImpl()

    def InitBuffer(self, x, filter, bias, y) -> None:
        r = self.conv3dRunInfo
        self.fmapOneBatchSize = r.cin * r.din * r.hin * r.win
        self.outputOneBatchSize = r.cout * r.dout * r.hout * r.wout
        self.fmapGm, self.filterGm = GlobalTensor(self.A_T), GlobalTensor(self.B_T)
        self.outputGm, self.biasGm = GlobalTensor(self.C_T), GlobalTensor(self.BIAS_T)
        if not self.normalInit:
            return
        fmStartAddr = self.batchIdxStart * self.fmapOneBatchSize + self.doIdxStart * r.hin * r.win + self.mIdxStart
        weightStartAddr = self.nIdxStart * r.cin
        outputStartAddr = (self.batchIdxStart * self.outputOneBatchSize + self.nIdxStart * r.dout * r.hout * r.wout
                           + self.doIdxStart * r.hout * r.wout + self.mIdxStart)
        self.fmapGm = self.fmapGm.SetGlobalBuffer(x)[fmStartAddr]
        self.filterGm = self.filterGm.SetGlobalBuffer(filter)[weightStartAddr]
        self.outputGm = self.outputGm.SetGlobalBuffer(y)[outputStartAddr]
        if r.hasBias:
            self.biasGm = self.biasGm.SetGlobalBuffer(bias)[self.nIdxStart]


def kernel_class(tiling_key: int, fmap_format: str = NDC1HWC0) -> type:
    """The kernel class the entry instantiates for this key and fmap format (conv3d_v2_kernel_dispatch.h)."""
    reason = not_ported_variant(tiling_key, fmap_format)
    if reason is not None:
        raise ValueError(reason)
    _, _, group_type, output_order = decode_tiling_key(tiling_key)
    if fmap_format == NCDHW:
        return KernelConv3DV2PointWise
    if group_type == GROUPCONV_WEIGHT_GFZ:
        return KernelConv3DV2WithGroups
    return KernelConv3DV2HwMode if output_order == HW_MODE else KernelConv3DV2


def conv3dv2(x, filter, bias, y, workspace, tilingData, *, tiling_key: int, dtype, bias_dtype,
             fmap_format: str = NDC1HWC0) -> None:
    """One core's work. x, filter, y: GmAddr of `dtype` data (DTYPE_X = DTYPE_FILTER = DTYPE_Y), NDC1HWC0,
    FRACTAL_Z_3D, NDC1HWC0 or, with fmap_format NCDHW (FORMAT_X), all three NCDHW; bias: GmAddr of `bias_dtype`
    values (DTYPE_BIAS) or None."""
    l0pingpong, bl1bypass, _, _ = decode_tiling_key(tiling_key)
    op = kernel_class(tiling_key, fmap_format)(dtype, bias_dtype, l0pingpong, bl1bypass)
    op.Init(x, filter, bias, y, workspace, tilingData)
    op.Process()
