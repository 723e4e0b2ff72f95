"""The high-level API `Conv3D` (Conv3dApi::Conv3D of asc-devkit, dav_m220 = Atlas A2), run on the simulator.

Usage, as in the Ascend C documentation (Conv3D-Kernel interface):

    conv = Conv3D(x_dtype, weight_dtype, y_dtype, bias_dtype, l0pingpong, bl1bypass)
    conv.Init(tiling.convApiTiling)
    conv.SetSingleOutputShape(singleCo, singleDo, singleCoreM)     # only when this core's share is a tail
    conv.SetInputStartPosition(diStartPos, mStartPos)
    conv.SetWeight(filter_gm); conv.SetBias(bias_gm)                # offset to this core's first cout
    conv.SetInput(x_gm)                                             # this core's batch, first input row / plane
    conv.IterateAll(y_gm)       # or: while conv.Iterate(): conv.GetTensorC(y_gm)
    conv.End()

One Iterate computes an mL0 x nL0 block of y (output pixels x couts, one output depth) in L0C: the K loop (ReduceK)
runs over (kd, cin1, kh, kw, c0) in kL0 steps, A by LoadData 3Dv2 from the L1 window, B by LoadData 2D (from GM when
BL1 is bypassed), Mmad accumulating in fp32, the first step starting from the bias in BT. The order of the blocks is
the tiling's iterateMNOrder: M first (mL0 within mAL1, then nL0, then mAL1, then the output depth, then nBL1) or
N first. The L0 ping-pong mode and the BL1 bypass are template parameters (the tiling key), each with its own event
protocol, as in conv3d_iterate_base_impl.h.

Ports conv3d_common_init_func.h (Init, InitParams, InitBuffer, Init*DirectionBaseValue), conv3d_common_set_func.h,
conv3d_iterate_impl.h / conv3d_iterate_base_impl.h (Iterate, IterateMFirst/NFirst, ReduceK, the ReduceK* variants),
conv3d_common_func.h (IterateAll, GetTensorC) and conv_forward_common_func.h (SetInput, SetWeight, SetBias, End).
With groupConvType (groups > 1, the weight in group-opt blocks) IterateAll runs IterateAllWithGroups and the
weight goes through the group-opt tools (load_b_groups.py); with outputOrder (HW mode, from the ops-nn copy of
this API) an M block is part of one output row (hw_mode.py) and the rows are an extra loop. With formatType NCDHW
(the pointwise kernel) the tools are the pointwise ones (pointwise.py): L0A and L0B swap roles, the bias goes through
L0A/L0B and a bias Mmad instead of the bias table, and Fixpipe writes NCDHW rows. The AL1/BL1 preload (ReduceKPreloadDbAll / ReduceKPreloadDbInput) runs as in the ops-nn
copy of this API that the real kernel compiles; asc-devkit's Init clears its flags (docs/conv3d_v2.md).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (PIPE_M, GlobalTensor, HardEvent, PipeBarrier, SetFlag, SetHF32Mode, SetHF32TransMode,
                                TBuf, TPipe, TPosition, TQue, WaitFlag, api_call)
from ascend_sim.machine.dtypes import float32
from kernels.conv3d_v2.kernel.bias import LoadBiasBtTools, LoadChannelWiseL1Tools
from kernels.conv3d_v2.kernel.hw_mode import (CopyOutWithHwModeTools, LoadAL0WithHwModeTools, LoadAL1WithHwModeTools,
                                              LoadBL1WithHwModeTools)
from kernels.conv3d_v2.kernel.load_a import LoadAL0Tools, LoadAL1Tools
from kernels.conv3d_v2.kernel.load_b import LoadBL0Tools, LoadBL1Tools
from kernels.conv3d_v2.kernel.load_b_groups import LoadBL0WithGroupOptTools, LoadBL1WithGroupOptTools
from kernels.conv3d_v2.kernel.mmad import MMadTools
from kernels.conv3d_v2.kernel.pointwise import (DATA_COPY_OP_LEN, K0_BIAS, CopyOutWithPointWiseTools,
                                                LoadAL0WithPointWiseTools, LoadAL1WithPointWiseTools,
                                                LoadBiasL0WithBroadcastTools, LoadBiasL1WithPointWiseTools,
                                                LoadBL0WithPointWiseTools, LoadBL1WithPointWiseTools,
                                                MMadWithPointWiseTools)
from kernels.conv3d_v2.kernel.store_c import CopyOutTools
from kernels.conv3d_v2.kernel.util import (ALL_CLOSE, BLOCK_L0_M, BLOCK_L0_N, BT_SIZE, C0_SIZE, L0A_OPEN, L0A_SIZE,
                                           L0B_OPEN, L0B_SIZE, M_MODE, NCDHW, NDC1HWC0, NOGROUP_CONV, ORDER_MTERFIRST,
                                           ORDER_NTERFIRST, AlignB, CeilDIV, GetCurrentKD)


class Conv3D:
    """Conv3D<fmap, weight, output, bias, Conv3DV2Param{l0pingpong, bl1bypass, groupConvType, outputOrder}>;
    formatType is the fmap's format (Config::formatA): NDC1HWC0, or NCDHW for the pointwise kernel."""

    def __init__(self, input_dtype, weight_dtype, output_dtype, bias_dtype, l0pingpong: int, bl1bypass: int,
                 groupConvType: int = NOGROUP_CONV, outputOrder: int = M_MODE, formatType: str = NDC1HWC0):
        self.InputT, self.WeightT = np.dtype(input_dtype), np.dtype(weight_dtype)
        self.OutputT, self.BiasT, self.L0cT = np.dtype(output_dtype), np.dtype(bias_dtype), float32
        self.l0pingpong, self.bl1bypass = int(l0pingpong), bool(bl1bypass)
        self.groupConvType, self.outputOrder = bool(groupConvType), bool(outputOrder)
        self.madIns, self.loadBL0Ins = MMadTools(), LoadBL0Tools()
        if self.outputOrder:  # HW mode: one output row per M block (hw_mode.py)
            self.loadAl1Ins, self.loadAL0Ins = LoadAL1WithHwModeTools(), LoadAL0WithHwModeTools()
            self.loadBL1Ins, self.copyOutIns = LoadBL1WithHwModeTools(), CopyOutWithHwModeTools()
        else:
            self.loadAl1Ins, self.loadAL0Ins = LoadAL1Tools(), LoadAL0Tools()
            self.loadBL1Ins, self.copyOutIns = LoadBL1Tools(), CopyOutTools()
        if self.groupConvType:  # LoadBL1WithGroupOptTools / LoadBL0WithGroupOptTools
            self.loadBL1Ins, self.loadBL0Ins = LoadBL1WithGroupOptTools(), LoadBL0WithGroupOptTools()
        self.loadBiasL1Ins, self.loadBiasBTIns = LoadChannelWiseL1Tools(), LoadBiasBtTools()
        self.pointWise = formatType == NCDHW
        if self.pointWise:  # the ContextData conditionals on Config::formatA == NCDHW
            self.loadAl1Ins, self.loadAL0Ins = LoadAL1WithPointWiseTools(), LoadAL0WithPointWiseTools()
            self.loadBL1Ins, self.loadBL0Ins = LoadBL1WithPointWiseTools(), LoadBL0WithPointWiseTools()
            self.madIns, self.copyOutIns = MMadWithPointWiseTools(), CopyOutWithPointWiseTools()
            self.loadBiasL1Ins, self.loadBiasBTIns = LoadBiasL1WithPointWiseTools(), LoadBiasL0WithBroadcastTools()
        self.enableBias = False
        self.isFirstIterate = True
        self.freeAL1TensorFlag = self.freeBL1TensorFlag = False
        self.loadAL1Flag = self.loadBL1Flag = self.loadAL0Flag = self.loadBL0Flag = True
        self.mL0IsDivisibleByWo = False
        self.kIter = self.kAL0Iter = self.kBL0Iter = self.kAL1Iter = self.kBL1Iter = 0
        self.mAL1Iter = self.mAL0Iter = self.nBL1Iter = self.nBL0Iter = self.dOutIter = 0
        self.mStartPos = self.diStartPos = self.hiStartPos = 0
        self.hoL1Iter = 0
        self.multiKAL1 = self.multiKBL1 = 1
        self.groupOptIter = 0
        self.singleCoreCinTail = self.singleCoreCoutTail = 0
        self.isGroupOptDimTail = False

    # ------------------------------------------------------------------------------------------------- Init
    @api_call
    def Init(self, tiling) -> None:
        self.pipe = TPipe()
        self.InitParams(tiling)
        if self.pointWise:
            self.InitBufferPointWise()
        else:
            self.InitBuffer()
        self.InitKDirectionBaseValue()
        self.InitMDirectionBaseValue()
        self.InitCoutDirectionBaseValue()
        self.ddr2l1LoopD = self.singleCoreDo
        self.singleCoreGroupOpt = tiling.singleCoreGroupOpt
        self.maxGroupOptIter = self.singleCoreGroupOpt
        SetHF32Mode(bool(tiling.hf32Enable))
        SetHF32TransMode(False)
        self.InitPreloadFlags()

    def InitPreloadFlags(self) -> None:
        """Preload the next L1 block(s) during the K loop when AL1 (and BL1) are double-buffered, K takes several
        L1 blocks of one size, and no depth pad or fully padded row block needs a zero fill (the ops-nn copy of this
        API; asc-devkit's Init computes the same flags and then clears them)."""
        t = self.conv3dTiling
        preloadAL1Flag = (t.pBufferFlag & 0x18) >> 3
        L0ASet2dFlag = bool(self.padHead or self.padTail or self.padUp >= self.kernelH or self.padDown >= self.kernelH)
        kAL1TailCase = t.kAL1Tail != t.kAL1
        plain = not self.kAL1fullload and not L0ASet2dFlag and not kAL1TailCase
        self.preloadAL1DbFlag = preloadAL1Flag == 1 and plain
        self.preloadABL1DbFlag = preloadAL1Flag == 3 and plain and not self.kBL1fullload

    def InitParams(self, t) -> None:
        self.conv3dTiling = t
        self.kernelH, self.kernelW, self.kernelD = t.kernelH, t.kernelW, t.kernelD
        self.dilatedKernelH = 1 + (t.kernelH - 1) * t.dilationH
        self.dilatedKernelW = 1 + (t.kernelW - 1) * t.dilationW
        self.dilatedKernelD = 1 + (t.kernelD - 1) * t.dilationD
        self.kernelHxkernelW = t.kernelH * t.kernelW
        self.kernelHxkernelWxkernelD = self.kernelHxkernelW * t.kernelD
        self.orgHi, self.orgWi, self.orgDi = t.orgHi, t.orgWi, t.orgDi
        self.orgHo, self.orgWo, self.orgDo = t.orgHo, t.orgWo, t.orgDo
        self.orgCo, self.orgCi = t.coutOpt, t.cinOpt
        self.singleCoreCo, self.singleCoreDo, self.singleCoreM = t.singleCoreCo, t.singleCoreDo, t.singleCoreM
        if self.outputOrder:  # HW mode: an M block is part of one output row; singleCoreM holds the rows
            self.singleCoreM, self.singleCoreHo = t.orgWo, t.singleCoreM
            self.ddr2l1LoopHo = self.singleCoreHo
        self.singleCoreCin = t.cinOpt
        self.strideH, self.strideW, self.strideD = t.strideH, t.strideW, t.strideD
        self.dilationH, self.dilationW, self.dilationD = t.dilationH, t.dilationW, t.dilationD
        self.padHead, self.padTail, self.padUp, self.padDown = t.padHead, t.padTail, t.padTop, t.padBottom
        self.padLeft, self.padRight = t.padLeft, t.padRight
        self.biasFullLoadFlag = bool(t.biasFullLoadFlag)
        self.sizeOfInput, self.sizeOfWeight = self.InputT.itemsize, self.WeightT.itemsize
        self.sizeOfBias, self.sizeOfL0c = self.BiasT.itemsize, 4
        self.cin0 = C0_SIZE // self.sizeOfInput
        self.orgCoAlignK0 = AlignB(self.orgCo, self.cin0)
        self.orgCoAlignN0 = AlignB(self.orgCo, BLOCK_L0_N)

    def InitBuffer(self) -> None:
        t = self.conv3dTiling
        cl0Spacesize = t.mL0 * t.nL0
        bl1Spacesize = t.nBL1 * t.kBL1
        biasl1Spacesize = t.nL0 * self.sizeOfBias  # the bias follows the L0C split unless fully loaded
        if self.biasFullLoadFlag:
            biasl1Spacesize = AlignB(self.singleCoreCo * self.sizeOfBias, BLOCK_L0_N * self.sizeOfBias)
        hoAL1Max = min(t.mAL1, self.singleCoreM) // self.orgWo + 2
        hiAL1Max = (hoAL1Max - 1) * self.strideH + self.dilatedKernelH
        win = self.orgWi
        if self.outputOrder:  # kH rows of the columns one mAL1 block reads
            hiAL1Max = self.dilatedKernelH
            win = min((t.mAL1 - 1) * self.strideW + self.dilatedKernelW, self.orgWi)
        al1Spacesize = t.cin1InAL1 * self.cin0 * min(hiAL1Max, self.orgHi) * win
        self.InitBufferWithDoubleBuf(cl0Spacesize, al1Spacesize, bl1Spacesize)
        self.queueBiasL1 = TQue(TPosition.A1, 1)
        self.pipe.InitBuffer(self.queueBiasL1, 1, AlignB(biasl1Spacesize, C0_SIZE))
        self.queueBiasBT = TQue(TPosition.C2, 1)
        self.pipe.InitBuffer(self.queueBiasBT, 1, AlignB(t.nL0 * self.sizeOfL0c, BT_SIZE))

    def InitBufferPointWise(self) -> None:
        """The pointwise L1 / L0C buffers: x as [K aligned to 16] x [mAL1 pixels], the bias as K0_BIAS-wide rows
        in L1 (no BT buffer)."""
        t = self.conv3dTiling
        cl0Spacesize = t.mL0 * t.nL0
        bl1Spacesize = t.nBL1 * t.kBL1
        biasl1Spacesize = t.nL0 * self.sizeOfBias  # the bias follows the L0C split unless fully loaded
        if self.biasFullLoadFlag:
            biasl1Spacesize = AlignB(self.singleCoreCo * self.sizeOfBias, BLOCK_L0_N * self.sizeOfBias)
        biasl1Spacesize *= K0_BIAS
        mAL1 = t.mAL1 if t.mAL1 < self.singleCoreM else AlignB(self.singleCoreM, DATA_COPY_OP_LEN)
        al1Spacesize = mAL1 * AlignB(t.kAL1, DATA_COPY_OP_LEN)
        self.InitBufferWithDoubleBuf(cl0Spacesize, al1Spacesize, bl1Spacesize)
        self.queueBiasL1 = TQue(TPosition.A1, 1)
        self.pipe.InitBuffer(self.queueBiasL1, 1, AlignB(biasl1Spacesize, C0_SIZE))

    def InitBufferWithDoubleBuf(self, cl0Spacesize: int, al1Spacesize: int, bl1Spacesize: int) -> None:
        flag = self.conv3dTiling.pBufferFlag
        cl0db, al1db, bl1db = (flag & 0x04) >> 2, (flag & 0x08) >> 3, (flag & 0x10) >> 4
        if self.pointWise:  # the fmap ("al0") in L0B, the weight ("bl0") in L0A
            self.l0aBuf, self.l0bBuf = TBuf(TPosition.B2), TBuf(TPosition.A2)
        else:
            self.l0aBuf, self.l0bBuf = TBuf(TPosition.A2), TBuf(TPosition.B2)
        self.pipe.InitBuffer(self.l0aBuf, L0A_SIZE)
        self.pipe.InitBuffer(self.l0bBuf, L0B_SIZE)
        self.al0Ping = self.l0aBuf.Get(self.InputT)
        self.al0Pong = self.al0Ping[L0A_SIZE // 2 // self.sizeOfInput]
        self.bl0Ping = self.l0bBuf.Get(self.WeightT)
        self.bl0Pong = self.bl0Ping[L0B_SIZE // 2 // self.sizeOfWeight]
        self.al0, self.bl0 = self.al0Ping, self.bl0Ping
        if self.pointWise:  # the bias Mmad's operands: rows of bias in L0A, ones in L0B
            self.al0BiasB, self.bl0BiasB = self.l0bBuf.Get(self.BiasT), self.l0aBuf.Get(self.BiasT)
        self.queueCL0 = TQue(TPosition.CO1, 1)
        self.pipe.InitBuffer(self.queueCL0, 2 if cl0db else 1, cl0Spacesize * self.sizeOfL0c)
        self.queueAL1 = TQue(TPosition.A1, 2)
        self.pipe.InitBuffer(self.queueAL1, 2 if al1db else 1, AlignB(al1Spacesize * self.sizeOfInput, C0_SIZE))
        self.queueBL1 = TQue(TPosition.B1, 2)
        if not self.bl1bypass:
            self.pipe.InitBuffer(self.queueBL1, 2 if bl1db else 1, AlignB(bl1Spacesize * self.sizeOfWeight, C0_SIZE))

    def InitKDirectionBaseValue(self, updateKAL1: int = 0, updateKBL1: int = 0, updateKL0: int = 0) -> None:
        """K steps of the core's Cin (updated K blocks for the groups' tail, where Cin shrinks)."""
        t = self.conv3dTiling
        currentKAL1, currentKBL1 = updateKAL1 or t.kAL1, updateKBL1 or t.kBL1
        self.cin1 = CeilDIV(self.singleCoreCin, self.cin0)
        self.singleCoreKL0 = (updateKL0 or t.kL0) if (not self.bl1bypass and self.groupConvType) else t.kL0
        alignCinKhKwKd = AlignB(self.singleCoreCin, self.cin0) * self.kernelHxkernelWxkernelD
        self.maxKAL1Iter = CeilDIV(alignCinKhKwKd, currentKAL1) - 1
        self.ddr2l0LoopK = CeilDIV(alignCinKhKwKd, self.singleCoreKL0)
        self.maxKL0Iter = self.ddr2l0LoopK - 1
        if not self.bl1bypass:
            self.maxKBL1Iter = CeilDIV(alignCinKhKwKd, currentKBL1) - 1
            self.multiKBL1 = CeilDIV(currentKBL1, self.singleCoreKL0)
            self.kBL1fullload = alignCinKhKwKd == currentKBL1
            if self.groupConvType:
                self.groupKBL1Tail = alignCinKhKwKd % currentKBL1 or currentKBL1
        else:
            self.maxKBL1Iter, self.kBL1fullload = 0, False
            self.multiKBL1 = self.ddr2l0LoopK
        if self.pointWise:  # the real tail of Cin (the pointwise tools align it to 16 themselves)
            self.kL0Tail = self.singleCoreCin % t.kL0 or self.singleCoreKL0
        else:
            self.kL0Tail = alignCinKhKwKd % self.singleCoreKL0 or self.singleCoreKL0
        self.multiKAL1 = CeilDIV(currentKAL1, self.singleCoreKL0)
        self.kAL1fullload = alignCinKhKwKd == currentKAL1
        if self.groupConvType:
            self.groupKAL1Tail = alignCinKhKwKd % currentKAL1 or currentKAL1
            self.groupKAL1, self.groupKBL1 = currentKAL1, currentKBL1

    def InitMDirectionBaseValue(self) -> None:
        t = self.conv3dTiling
        self.mAL1Tail = self.singleCoreM % t.mAL1 or t.mAL1
        self.ddr2l1LoopM = CeilDIV(self.singleCoreM, t.mAL1)
        self.maxMAL1Iter = self.ddr2l1LoopM - 1
        self.mAL0Tail = self.mAL1Tail % t.mL0 or t.mL0
        self.l12l0LoopM = t.mAL1DivmL0
        self.maxML0Iter = self.l12l0LoopM - 1

    def InitCoutDirectionBaseValue(self) -> None:
        t = self.conv3dTiling
        if self.bl1bypass:
            self.nL0Tail = self.singleCoreCo % t.nL0 or t.nL0
            self.maxNBL1Iter, self.ddr2l1LoopN = 0, 1
            self.nBL1Tail = self.nBL1TailAlign = 0
            self.l12l0LoopN = CeilDIV(self.singleCoreCo, t.nL0)
            self.maxNL0Iter = self.l12l0LoopN - 1
            return
        self.maxNBL1Iter = CeilDIV(self.singleCoreCo, t.nBL1) - 1
        self.nBL1Tail = self.singleCoreCo % t.nBL1 or t.nBL1
        self.nBL1TailAlign = AlignB(self.nBL1Tail, BLOCK_L0_N)
        self.nL0Tail = self.nBL1Tail % t.nL0 or t.nL0
        self.ddr2l1LoopN = self.maxNBL1Iter + 1
        self.l12l0LoopN = t.nBL1DivnL0
        self.maxNL0Iter = self.l12l0LoopN - 1

    # ------------------------------------------------------------------------------------------------- setters
    @api_call
    def SetInput(self, input: GlobalTensor) -> None:
        self.agm = input

    SetFmap = SetInput  # the ops-nn name

    @api_call
    def SetWeight(self, weight: GlobalTensor) -> None:
        self.bgm = weight

    @api_call
    def SetBias(self, bias: GlobalTensor) -> None:
        self.biasgm = bias
        self.enableBias = True

    @api_call
    def SetSingleOutputShape(self, singleCo: int, singleDo: int, singleCoreM: int, singleGroupOpt: int = 0) -> None:
        """This core's share when it is smaller than the tiling's (a tail core): Cout, output depths, M (in HW
        mode the output rows, as the ops-nn copy's (singleHo, singleWo) form sets them)."""
        self.singleCoreCo, self.singleCoreDo = singleCo, singleDo
        self.singleCoreGroupOpt = singleGroupOpt
        if self.outputOrder:
            self.singleCoreHo = self.ddr2l1LoopHo = singleCoreM
        else:
            self.singleCoreM = singleCoreM
            self.InitMDirectionBaseValue()
        self.InitCoutDirectionBaseValue()
        self.ddr2l1LoopD = self.singleCoreDo
        self.maxGroupOptIter = self.singleCoreGroupOpt

    @api_call
    def SetGroupOptInfo(self, singleCoreCinTail: int, singleCoreCoutTail: int, isGroupOptDimTail: bool = False):
        """The last group-opt block of a core with fewer real channels (groups not a multiple of the fold)."""
        self.singleCoreCinTail, self.singleCoreCoutTail = singleCoreCinTail, singleCoreCoutTail
        self.isGroupOptDimTail = bool(isGroupOptDimTail)

    @api_call
    def SetInputStartPosition(self, diStartPos: int, mStartPos: int, ciStartPos: int = 0) -> None:
        """The core's first output depth times strideD (not yet minus padHead) and its first output pixel (in HW
        mode its first output row times strideH, the ops-nn copy's hiStartPos)."""
        self.diStartPos = diStartPos
        if self.outputOrder:
            self.hiStartPos = mStartPos
        else:
            self.mStartPos = mStartPos

    SetFmapStartPosition = SetInputStartPosition  # the ops-nn name

    # ------------------------------------------------------------------------------------------------- Iterate
    @api_call
    def Iterate(self, enPartialSum: bool = False) -> bool:
        """Compute the next mL0 x nL0 block of y (one output depth) into L0C; False when all are done."""
        if self.isFirstIterate:
            self.FirstIterateImpl()
        elif self.conv3dTiling.iterateMNOrder == ORDER_MTERFIRST:
            if not self.IterateMFirst():
                return False
        elif self.conv3dTiling.iterateMNOrder == ORDER_NTERFIRST:
            if not self.IterateNFirst():
                return False
        # ops-nn's order (conv3d_common_func.h IterateImpl): the tail loop counts first, so the first Iterate of a
        # core whose only nBL1 block is a tail (a group-opt Cout tail) already knows it; asc-devkit's copy runs
        # IterateK first and computes that block nL0 wide (issue 22: a grouped batch-2 run wrote past y)
        self.UpdateL1TailLoop()
        self.IterateK()
        return True

    def FirstIterateImpl(self) -> None:
        self.nBL0Iter = self.mAL0Iter = self.mAL1Iter = self.nBL1Iter = self.dOutIter = 0
        self.loadAL1Flag, self.loadBL1Flag = True, not self.bl1bypass
        self.loadAL0Flag = self.loadBL0Flag = True
        if not self.pointWise:
            self.loadAl1Ins.SetLoadData3DParams()
            self.mL0IsDivisibleByWo = self.conv3dTiling.mL0 % self.orgWo == 0
        self.hoL1Iter = 0
        self.isFirstIterate = False

    def UpdateIterators(self) -> None:
        """After the last M block: the next output row (HW mode), else the next output depth."""
        if self.mAL1Iter == self.ddr2l1LoopM:
            self.mAL1Iter = 0
            if self.outputOrder:
                self.hoL1Iter += 1
            else:
                self.dOutIter += 1
        if self.outputOrder and self.hoL1Iter == self.ddr2l1LoopHo:
            self.hoL1Iter = 0
            self.dOutIter += 1

    def IterateMFirst(self) -> bool:
        """mL0 inside mAL1, then nL0 inside nBL1, then mAL1 (then the output row in HW mode), then the output
        depth, then nBL1 (input reuse)."""
        self.mAL0Iter += 1
        if self.mAL0Iter == self.l12l0LoopM:
            self.mAL0Iter = 0
            self.nBL0Iter += 1
        if self.nBL0Iter == self.l12l0LoopN:
            self.mAL0Iter = self.nBL0Iter = 0
            self.mAL1Iter += 1
            self.loadAL1Flag = True
        self.UpdateIterators()
        if self.dOutIter == self.ddr2l1LoopD:
            self.mAL0Iter = self.nBL0Iter = self.mAL1Iter = self.dOutIter = 0
            self.nBL1Iter += 1
            self.loadAL1Flag = self.loadBL1Flag = True
        return self.nBL1Iter != self.ddr2l1LoopN

    def IterateNFirst(self) -> bool:
        """nL0 inside nBL1, then mL0, then nBL1, then mAL1, then the output depth (weight reuse)."""
        self.nBL0Iter += 1
        if self.nBL0Iter == self.l12l0LoopN:
            self.nBL0Iter = 0
            self.mAL0Iter += 1
        if self.mAL0Iter == self.l12l0LoopM:
            self.mAL0Iter = self.nBL0Iter = 0
            self.nBL1Iter += 1
            self.loadBL1Flag = True
        if self.nBL1Iter == self.ddr2l1LoopN:
            self.mAL0Iter = self.nBL0Iter = self.nBL1Iter = 0
            self.mAL1Iter += 1
            self.loadAL1Flag = self.loadBL1Flag = True
        self.UpdateIterators()
        return self.dOutIter != self.ddr2l1LoopD

    def UpdateL1TailLoop(self) -> None:
        t = self.conv3dTiling
        self.l12l0LoopM = (CeilDIV(self.mAL1Tail, t.mL0) if self.mAL1Iter == self.maxMAL1Iter else t.mAL1DivmL0)
        self.maxML0Iter = self.l12l0LoopM - 1
        if self.bl1bypass:
            return
        self.l12l0LoopN = (CeilDIV(self.nBL1Tail, t.nL0) if self.nBL1Iter == self.maxNBL1Iter else t.nBL1DivnL0)
        self.maxNL0Iter = self.l12l0LoopN - 1

    def CalcL0CurrentN(self) -> int:
        last = self.nBL1Iter == self.maxNBL1Iter and self.nBL0Iter == self.maxNL0Iter
        return self.nL0Tail if last else self.conv3dTiling.nL0

    def CalcL0CurrentM(self) -> int:
        last = self.mAL1Iter == self.maxMAL1Iter and self.mAL0Iter == self.maxML0Iter
        return self.mAL0Tail if last else self.conv3dTiling.mL0

    def IterateK(self) -> None:
        n, m = self.CalcL0CurrentN(), self.CalcL0CurrentM()
        self.cl0 = self.queueCL0.AllocTensor(self.L0cT)
        self.loadAL0Ins.SetM(AlignB(m, BLOCK_L0_N))
        self.loadBL0Ins.SetN(AlignB(n, BLOCK_L0_M))
        if self.pointWise:  # couts are the Mmad's M, pixels its N
            self.madIns.SetMN(AlignB(n, BLOCK_L0_M), AlignB(m, BLOCK_L0_N))
            self.copyOutIns.SetMN(n, m)
            self.InitBiasWithPointWise(m, n)
        else:
            self.madIns.SetMN(AlignB(m, BLOCK_L0_M), AlignB(n, BLOCK_L0_N))
            self.copyOutIns.SetMN(m, AlignB(n, self.cin0))
            self.InitBiasWithNormal(n)
        if self.preloadABL1DbFlag:
            self.ReduceKPreloadDbAll()
        elif self.preloadAL1DbFlag:
            self.ReduceKPreloadDbInput()
        else:
            self.ReduceK()
        self.queueCL0.EnQue(self.cl0)
        self.cl0 = self.queueCL0.DeQue(self.L0cT)
        self.kIter = 0

    def InitBiasWithPointWise(self, m: int, n: int) -> None:
        if not self.enableBias:
            return
        self.loadBiasL1Ins.SetN(AlignB(n, BLOCK_L0_M))
        self.loadBiasBTIns.SetMN(AlignB(n, BLOCK_L0_M), AlignB(m, BLOCK_L0_N))
        if not self.biasFullLoadFlag:
            self.biasL1 = self.queueBiasL1.AllocTensor(self.BiasT)
            self.loadBiasL1Ins.LoadChannelWiseL1(self.biasL1, self.biasgm)
            self.queueBiasL1.EnQue(self.biasL1)
            self.biasL1 = self.queueBiasL1.DeQue(self.BiasT)
        self.CalcBias()

    def CalcBias(self) -> None:
        """Broadcast the bias into L0C with one Mmad, under the L0A/L0B events of the K loop."""
        events = (0, 2) if self.l0pingpong == L0B_OPEN else (0,)
        for event in events:
            WaitFlag(HardEvent.M_MTE1, event)
        self.loadBiasBTIns.LoadBiasL0WithBroadcast()
        for event in events:
            SetFlag(HardEvent.MTE1_M, event)
        for event in events:
            WaitFlag(HardEvent.MTE1_M, event)
        self.madIns.MadBias()
        for event in events:
            SetFlag(HardEvent.M_MTE1, event)

    def InitBiasWithNormal(self, n: int) -> None:
        if not self.enableBias:
            return
        self.loadBiasL1Ins.SetN(n)
        self.loadBiasBTIns.SetN(AlignB(n, BLOCK_L0_N))
        if not self.biasFullLoadFlag:
            self.biasL1 = self.queueBiasL1.AllocTensor(self.BiasT)
            self.loadBiasL1Ins.LoadChannelWiseL1(self.biasL1, self.biasgm)
            self.queueBiasL1.EnQue(self.biasL1)
            self.biasL1 = self.queueBiasL1.DeQue(self.BiasT)
        self.biasBT = self.queueBiasBT.AllocTensor(self.L0cT)
        self.loadBiasBTIns.LoadBiasBt()
        self.queueBiasBT.EnQue(self.biasBT)
        self.biasBT = self.queueBiasBT.DeQue(self.L0cT)

    # ------------------------------------------------------------------------------------------------- ReduceK
    def ReduceK(self) -> None:
        if self.loadAL1Flag or not self.kAL1fullload:
            if self.freeAL1TensorFlag:
                self.queueAL1.FreeTensor(self.al1)
                self.freeAL1TensorFlag = False
            self.LoadAL1Process(0)
        if not self.bl1bypass and (self.loadBL1Flag or not self.kBL1fullload):
            if self.freeBL1TensorFlag:
                self.queueBL1.FreeTensor(self.bl1)
                self.freeBL1TensorFlag = False
            self.LoadBL1Process(0)
        self.ReduceKFirstIterLoadL0(isLast=self.ddr2l0LoopK == 1)
        self.kIter = 1
        isOdd = 1
        while self.kIter < self.ddr2l0LoopK - 1:
            self.ReduceKIterLoadL1()
            self.ReduceKIterLoadL0(isOdd, isLast=False)
            self.kIter += 1
            isOdd = self.kIter & 1
        if self.kIter < self.ddr2l0LoopK:
            self.ReduceKIterLoadL1()
            self.ReduceKIterLoadL0(isOdd, isLast=True)
        self.ReduceKPostProcessLoadL0()

    def ReduceKIterLoadL1(self) -> None:
        if self.loadAL1Flag or (not self.kAL1fullload and self.kIter % self.multiKAL1 == 0):
            self.queueAL1.FreeTensor(self.al1)
            self.freeAL1TensorFlag = False
            self.LoadAL1Process(self.kIter // self.multiKAL1)
        if not self.bl1bypass and (self.loadBL1Flag or (not self.kBL1fullload and self.kIter % self.multiKBL1 == 0)):
            self.queueBL1.FreeTensor(self.bl1)
            self.freeBL1TensorFlag = False
            self.LoadBL1Process(self.kIter // self.multiKBL1)

    # ------------------------------------------------------------------------------------------------- preload
    def ReduceKPreloadDbAll(self) -> None:
        """AL1 and BL1 double-buffered: K blocks 0 and 1 of both are loaded first; at each L1 boundary the block
        in use is freed and the one after the next is loaded while the next one is taken from the queue."""
        if self.loadAL1Flag or not self.kAL1fullload:
            if self.freeAL1TensorFlag:
                self.queueAL1.FreeTensor(self.al1)
            self.LoadAL1PreloadProcess(0)
        if self.loadBL1Flag or not self.kBL1fullload:
            if self.freeBL1TensorFlag:
                self.queueBL1.FreeTensor(self.bl1)
            self.LoadBL1PreloadProcess(0)
        self.LoadAL1Process(1)
        self.LoadBL1Process(1)
        self.ReduceKFirstIterLoadL0(isLast=self.ddr2l0LoopK == 1)
        self.kIter, isOdd = 1, 1
        maxKAL1PreloadIter = self.ddr2l0LoopK - self.multiKAL1
        maxKBL1PreloadIter = self.ddr2l0LoopK - self.multiKBL1
        while self.kIter < self.ddr2l0LoopK:
            self.ReduceKPreloadDbAllLoadL1(maxKAL1PreloadIter, maxKBL1PreloadIter)
            self.ReduceKIterLoadL0(isOdd, isLast=self.kIter == self.ddr2l0LoopK - 1)
            self.kIter += 1
            isOdd = self.kIter & 1

    def ReduceKPreloadDbAllLoadL1(self, maxKAL1PreloadIter: int, maxKBL1PreloadIter: int) -> None:
        if self.kIter == maxKAL1PreloadIter:  # the last block is already loaded: take it
            self.queueAL1.FreeTensor(self.al1)
            self.al1 = self.queueAL1.DeQue(self.InputT)
        elif self.kIter < maxKAL1PreloadIter and (
                self.loadAL1Flag or (not self.kAL1fullload and self.kIter % self.multiKAL1 == 0)):
            self.queueAL1.FreeTensor(self.al1)
            self.LoadAL1Process(self.kIter // self.multiKAL1 + 1)
        if self.kIter == maxKBL1PreloadIter:
            self.queueBL1.FreeTensor(self.bl1)
            self.bl1 = self.queueBL1.DeQue(self.WeightT)
        elif self.kIter < maxKBL1PreloadIter and (
                self.loadBL1Flag or (not self.kBL1fullload and self.kIter % self.multiKBL1 == 0)):
            self.queueBL1.FreeTensor(self.bl1)
            self.LoadBL1Process(self.kIter // self.multiKBL1 + 1)

    def ReduceKPreloadDbInput(self) -> None:
        """AL1 double-buffered: the same for the feature map only; the weight as in ReduceK."""
        if self.freeAL1TensorFlag:
            self.queueAL1.FreeTensor(self.al1)
        self.LoadAL1PreloadProcess(0)
        self.LoadAL1Process(1)
        if not self.bl1bypass and (self.loadBL1Flag or not self.kBL1fullload):
            if self.freeBL1TensorFlag:
                self.queueBL1.FreeTensor(self.bl1)
            self.LoadBL1Process(0)
        self.ReduceKFirstIterLoadL0(isLast=self.ddr2l0LoopK == 1)
        self.kIter, isOdd = 1, 1
        maxKAL1PreloadIter = self.ddr2l0LoopK - self.multiKAL1
        while self.kIter < self.ddr2l0LoopK:
            self.ReduceKPreloadDbInputLoadL1(maxKAL1PreloadIter)
            self.ReduceKIterLoadL0(isOdd, isLast=self.kIter == self.ddr2l0LoopK - 1)
            self.kIter += 1
            isOdd = self.kIter & 1
        self.ReduceKPostProcessLoadL0()

    def ReduceKPreloadDbInputLoadL1(self, maxKAL1PreloadIter: int) -> None:
        if self.kIter == maxKAL1PreloadIter:
            self.queueAL1.FreeTensor(self.al1)
            self.al1 = self.queueAL1.DeQue(self.InputT)
        elif self.kIter < maxKAL1PreloadIter and self.kIter % self.multiKAL1 == 0:
            self.queueAL1.FreeTensor(self.al1)
            self.LoadAL1Process(self.kIter // self.multiKAL1 + 1)
        if not self.bl1bypass and (self.loadBL1Flag or (not self.kBL1fullload and self.kIter % self.multiKBL1 == 0)):
            self.queueBL1.FreeTensor(self.bl1)
            self.LoadBL1Process(self.kIter // self.multiKBL1)

    def LoadAL1PreloadProcess(self, kAL1Iter: int) -> None:
        """Load a block and queue it without taking it: the next LoadAL1Process's DeQue returns this one."""
        self.al1 = self.queueAL1.AllocTensor(self.InputT)
        self.kAL1Iter = kAL1Iter
        self.loadAl1Ins.LoadAL1()
        self.queueAL1.EnQue(self.al1)
        self.loadAL1Flag, self.freeAL1TensorFlag = True, False

    def LoadBL1PreloadProcess(self, kBL1Iter: int) -> None:
        self.bl1 = self.queueBL1.AllocTensor(self.WeightT)
        self.kBL1Iter = kBL1Iter
        self.loadBL1Ins.LoadBL1()
        self.queueBL1.EnQue(self.bl1)
        self.loadBL1Flag, self.freeBL1TensorFlag = True, False

    def LoadAL1Process(self, kAL1Iter: int) -> None:
        self.al1 = self.queueAL1.AllocTensor(self.InputT)
        self.kAL1Iter = kAL1Iter
        self.loadAl1Ins.LoadAL1()
        self.queueAL1.EnQue(self.al1)
        self.al1 = self.queueAL1.DeQue(self.InputT)
        self.loadAL1Flag = False  # only the K loop reloads it until the M/N/D position moves
        self.freeAL1TensorFlag = True

    def LoadBL1Process(self, kBL1Iter: int) -> None:
        self.bl1 = self.queueBL1.AllocTensor(self.WeightT)
        self.kBL1Iter = kBL1Iter
        self.loadBL1Ins.LoadBL1()
        self.queueBL1.EnQue(self.bl1)
        self.bl1 = self.queueBL1.DeQue(self.WeightT)
        self.loadBL1Flag = False
        self.freeBL1TensorFlag = True

    def ReduceKFirstIterLoadL0(self, isLast: bool) -> None:
        """The first K step; with BL1 bypassed it also arms the M -> MTE2 events the weight loads wait on."""
        mode, bypass = self.l0pingpong, self.bl1bypass
        if mode == ALL_CLOSE:
            self.al0, self.bl0 = self.al0Ping, self.bl0Ping
            if bypass:
                SetFlag(HardEvent.M_MTE2, 0)
                self.ReduceKNoPingPongBL1ByPass(True, isLast)
            else:
                self.ReduceKNoPingPongBL1NoByPass(True, isLast)
        elif mode == L0A_OPEN:
            self.bl0 = self.bl0Ping
            if bypass:
                SetFlag(HardEvent.M_MTE2, 2)
                self.ReduceKL0APingPongBL1ByPass(True, isLast, 0)
            else:
                self.ReduceKL0APingPongBL1NoByPass(True, isLast, 0)
        elif mode == L0B_OPEN:
            self.al0 = self.al0Ping
            if bypass:
                SetFlag(HardEvent.M_MTE2, 0)
                if self.ddr2l1LoopD > 1:
                    SetFlag(HardEvent.M_MTE2, 1)
                self.ReduceKL0BPingPongBL1ByPass(True, isLast, 0)
            else:
                self.ReduceKL0BPingPongBL1NoByPass(True, isLast, 0)
        else:
            if bypass:
                SetFlag(HardEvent.M_MTE2, 0)
                SetFlag(HardEvent.M_MTE2, 1)
                if self.ddr2l1LoopD > 1:
                    SetFlag(HardEvent.M_MTE2, 4)
            self.ReduceKL0AL0BPingPong(True, isLast, 0)

    def ReduceKIterLoadL0(self, isOdd: int, isLast: bool) -> None:
        mode, bypass = self.l0pingpong, self.bl1bypass
        if mode == ALL_CLOSE:
            (self.ReduceKNoPingPongBL1ByPass if bypass else self.ReduceKNoPingPongBL1NoByPass)(False, isLast)
        elif mode == L0A_OPEN:
            (self.ReduceKL0APingPongBL1ByPass if bypass else self.ReduceKL0APingPongBL1NoByPass)(False, isLast,
                                                                                                  isOdd)
        elif mode == L0B_OPEN:
            (self.ReduceKL0BPingPongBL1ByPass if bypass else self.ReduceKL0BPingPongBL1NoByPass)(False, isLast,
                                                                                                  isOdd)
        else:
            self.ReduceKL0AL0BPingPong(False, isLast, isOdd)

    def ReduceKPostProcessLoadL0(self) -> None:
        """Consume the M -> MTE2 events the first K step armed (BL1 bypass only)."""
        if not self.bl1bypass:
            return
        mode = self.l0pingpong
        if mode == ALL_CLOSE:
            WaitFlag(HardEvent.M_MTE2, 0)
        elif mode == L0A_OPEN:
            WaitFlag(HardEvent.M_MTE2, 2)
        elif mode == L0B_OPEN:
            WaitFlag(HardEvent.M_MTE2, 0)
            if self.ddr2l1LoopD > 1:
                WaitFlag(HardEvent.M_MTE2, 1)
        else:
            WaitFlag(HardEvent.M_MTE2, 0)
            WaitFlag(HardEvent.M_MTE2, 1)
            if self.ddr2l1LoopD > 1:
                WaitFlag(HardEvent.M_MTE2, 4)

    def _load_a(self) -> None:
        self.kAL0Iter = self.kIter % self.multiKAL1
        self.loadAL0Ins.LoadAL0()

    def _load_b(self) -> None:
        self.kBL0Iter = self.kIter % self.multiKBL1
        self.loadBL0Ins.LoadBL0()

    def ReduceKNoPingPongBL1ByPass(self, isFirst: bool, isLast: bool) -> None:
        WaitFlag(HardEvent.M_MTE1, 0)
        self._load_a()
        SetFlag(HardEvent.MTE1_M, 0)
        WaitFlag(HardEvent.M_MTE2, 0)
        self._load_b()
        SetFlag(HardEvent.MTE2_M, 1)
        WaitFlag(HardEvent.MTE1_M, 0)
        WaitFlag(HardEvent.MTE2_M, 1)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, 0)
        SetFlag(HardEvent.M_MTE2, 0)

    def ReduceKNoPingPongBL1NoByPass(self, isFirst: bool, isLast: bool) -> None:
        WaitFlag(HardEvent.M_MTE1, 0)
        self._load_a()
        self._load_b()
        SetFlag(HardEvent.MTE1_M, 0)
        WaitFlag(HardEvent.MTE1_M, 0)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, 0)

    def ReduceKL0APingPongBL1ByPass(self, isFirst: bool, isLast: bool, l0aFlag: int) -> None:
        WaitFlag(HardEvent.M_MTE1, l0aFlag)
        self.al0 = self.al0Pong if l0aFlag else self.al0Ping
        self._load_a()
        SetFlag(HardEvent.MTE1_M, l0aFlag)
        WaitFlag(HardEvent.M_MTE2, 2)
        if self.loadBL0Flag:
            self._load_b()
            SetFlag(HardEvent.MTE2_M, 2)
        WaitFlag(HardEvent.MTE1_M, l0aFlag)
        if self.loadBL0Flag:
            WaitFlag(HardEvent.MTE2_M, 2)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, l0aFlag)
        SetFlag(HardEvent.M_MTE2, 2)

    def ReduceKL0APingPongBL1NoByPass(self, isFirst: bool, isLast: bool, l0aFlag: int) -> None:
        WaitFlag(HardEvent.M_MTE1, l0aFlag)
        self.al0 = self.al0Pong if l0aFlag else self.al0Ping
        self._load_a()
        if self.loadBL0Flag:
            self._load_b()
        SetFlag(HardEvent.MTE1_M, l0aFlag)
        WaitFlag(HardEvent.MTE1_M, l0aFlag)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, l0aFlag)

    def ReduceKL0BPingPongBL1ByPass(self, isFirst: bool, isLast: bool, l0bFlag: int) -> None:
        WaitFlag(HardEvent.M_MTE1, 2)
        if self.loadAL0Flag:
            self._load_a()
            SetFlag(HardEvent.MTE1_M, 2)
        WaitFlag(HardEvent.M_MTE2, l0bFlag)
        self.bl0 = self.bl0Pong if l0bFlag else self.bl0Ping
        self._load_b()
        SetFlag(HardEvent.MTE2_M, l0bFlag)
        if self.loadAL0Flag:
            WaitFlag(HardEvent.MTE1_M, 2)
        WaitFlag(HardEvent.MTE2_M, l0bFlag)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, 2)
        SetFlag(HardEvent.M_MTE2, l0bFlag)

    def ReduceKL0BPingPongBL1NoByPass(self, isFirst: bool, isLast: bool, l0bFlag: int) -> None:
        WaitFlag(HardEvent.M_MTE1, 2)
        if self.loadAL0Flag:
            self._load_a()
            SetFlag(HardEvent.MTE1_M, 2)
        WaitFlag(HardEvent.M_MTE1, l0bFlag)
        self.bl0 = self.bl0Pong if l0bFlag else self.bl0Ping
        self._load_b()
        SetFlag(HardEvent.MTE1_M, l0bFlag)
        if self.loadAL0Flag:
            WaitFlag(HardEvent.MTE1_M, 2)
        WaitFlag(HardEvent.MTE1_M, l0bFlag)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, 2)
        SetFlag(HardEvent.M_MTE1, l0bFlag)

    def ReduceKL0AL0BPingPong(self, isFirst: bool, isLast: bool, l0abFlag: int) -> None:
        self.al0, self.bl0 = (self.al0Pong, self.bl0Pong) if l0abFlag else (self.al0Ping, self.bl0Ping)
        WaitFlag(HardEvent.M_MTE1, l0abFlag)
        self.kAL0Iter = self.kIter % self.multiKAL1
        self.loadAL0Ins.LoadAL0()
        if self.bl1bypass:
            WaitFlag(HardEvent.M_MTE2, l0abFlag)
        self._load_b()
        SetFlag(HardEvent.MTE1_M, l0abFlag)
        if self.bl1bypass:
            SetFlag(HardEvent.MTE2_M, l0abFlag)
        WaitFlag(HardEvent.MTE1_M, l0abFlag)
        if self.bl1bypass:
            WaitFlag(HardEvent.MTE2_M, l0abFlag)
        PipeBarrier(PIPE_M)
        self.madIns.Mad(isFirst, isLast)
        SetFlag(HardEvent.M_MTE1, l0abFlag)
        if self.bl1bypass:
            SetFlag(HardEvent.M_MTE2, l0abFlag)

    # ------------------------------------------------------------------------------------------------- output
    @api_call
    def GetTensorC(self, output: GlobalTensor, enSequentialWrite: bool = False) -> bool:
        """Fixpipe the block in L0C to y (NDC1HWC0) and free L0C and this block's bias buffers."""
        self.copyOutIns.CopyOut(output)
        self.queueCL0.FreeTensor(self.cl0)
        if self.enableBias:
            if not self.biasFullLoadFlag:
                self.queueBiasL1.FreeTensor(self.biasL1)
            if not self.pointWise:
                self.queueBiasBT.FreeTensor(self.biasBT)
        return False

    @api_call
    def IterateAll(self, output: GlobalTensor, enPartialSum: bool = False) -> bool:
        for tool in (self.loadBiasL1Ins, self.loadBL1Ins, self.loadAl1Ins, self.loadBL0Ins, self.madIns,
                     self.copyOutIns, self.loadBiasBTIns):
            tool.SetParams(self)
        if self.pointWise:
            self.loadAL0Ins.SetParams(self)
        else:
            self.loadAL0Ins.SetParams(self, self.loadAl1Ins)
        if self.groupConvType:
            self.IterateAllWithGroups(output, enPartialSum)
        else:
            self.IterateAllBase(output, enPartialSum)
        return False

    def IterateAllBase(self, output: GlobalTensor, enPartialSum: bool = False) -> None:
        fullBias = self.biasFullLoadFlag and self.enableBias
        if fullBias:  # the whole core's bias once into L1
            self.biasL1 = self.queueBiasL1.AllocTensor(self.BiasT)
            self.loadBiasL1Ins.LoadChannelWiseL1(self.biasL1, self.biasgm)
            self.queueBiasL1.EnQue(self.biasL1)
            self.biasL1 = self.queueBiasL1.DeQue(self.BiasT)
        while self.Iterate(enPartialSum):
            self.GetTensorC(output)
            if self.enableBias and not self.pointWise:
                self.queueBiasBT.FreeAllEvent()
        if fullBias:
            self.queueBiasL1.FreeTensor(self.biasL1)
        self.isFirstIterate = True
        self.nBL0Iter = self.nBL1Iter = 0

    # ------------------------------------------------------------------------------------------------- groups
    def IterateAllWithGroups(self, output: GlobalTensor, enPartialSum: bool = False) -> None:
        """One IterateAllBase per group-opt block of this core; the weight and the bias move one block on after
        each; the last block may have fewer channels (PreProcessGroupOptDimTail)."""
        t = self.conv3dTiling
        weightOneGroupOptSize = t.cinOpt * self.kernelHxkernelWxkernelD * t.coutOpt
        while self.groupOptIter < self.maxGroupOptIter - 1:
            self.IterateAllBase(output, enPartialSum)
            self.SetWeight(self.bgm[weightOneGroupOptSize])
            if self.enableBias:
                self.SetBias(self.biasgm[t.coutOpt])
            self.groupOptIter += 1
        tmpSingleCoreCo = self.singleCoreCo
        tmpPreload = (self.preloadAL1DbFlag, self.preloadABL1DbFlag)
        self.PreProcessGroupOptDimTail()
        self.IterateAllBase(output, enPartialSum)
        self.PostProcessGroupOptDimTail(tmpSingleCoreCo, tmpPreload)
        self.groupOptIter = 0

    def ReCalculationKTilingWithGroups(self) -> tuple[int, int, int]:
        """kAL1 / kBL1 / kL0 for the tail's smaller Cin, keeping kL0 a factor of both L1 blocks."""
        t = self.conv3dTiling
        curKAL1Kd = GetCurrentKD(t.kAL1, AlignB(self.orgCi, self.cin0), self.kernelHxkernelW)
        curKBL1Kd = GetCurrentKD(t.kBL1, AlignB(self.orgCi, self.cin0), self.kernelHxkernelW)
        curCinxKhxKw = AlignB(self.singleCoreCin, self.cin0) * self.kernelHxkernelW
        updateKAL1 = 0 if curCinxKhxKw > t.kAL1 else curCinxKhxKw
        updateKBL1 = 0 if curCinxKhxKw > t.kBL1 else curCinxKhxKw
        updateKL0 = 0
        if curKAL1Kd > 1:
            updateKAL1 = curKAL1Kd * curCinxKhxKw
        if updateKAL1 == 0:
            updateKAL1 = 0 if curCinxKhxKw % t.kAL1 == 0 else self.cin0 * self.kernelHxkernelW
        if curKBL1Kd > 1:
            updateKBL1 = curKBL1Kd * curCinxKhxKw
        if updateKBL1 == 0:
            updateKBL1 = 0 if (t.kBL1 == 0 or curCinxKhxKw % t.kBL1 == 0) else self.cin0 * self.kernelHxkernelW
        if updateKAL1 % t.kL0 or updateKBL1 % t.kL0:
            updateKL0 = self.cin0
        return updateKAL1, updateKBL1, updateKL0

    def PreProcessGroupOptDimTail(self) -> None:
        if not self.isGroupOptDimTail:
            return
        if self.singleCoreCinTail != 0:
            self.singleCoreCin = self.singleCoreCinTail
            self.InitKDirectionBaseValue(*self.ReCalculationKTilingWithGroups())
            self.preloadAL1DbFlag = self.preloadABL1DbFlag = False
        if self.singleCoreCoutTail != 0:
            self.singleCoreCo = self.singleCoreCoutTail
            self.InitCoutDirectionBaseValue()

    def PostProcessGroupOptDimTail(self, tmpSingleCoreCo: int, tmpPreload: tuple[bool, bool]) -> None:
        if not self.isGroupOptDimTail:
            return
        if self.singleCoreCin != self.conv3dTiling.cinOpt:
            self.singleCoreCin = self.conv3dTiling.cinOpt
            self.InitKDirectionBaseValue()
            self.preloadAL1DbFlag, self.preloadABL1DbFlag = tmpPreload
        if self.singleCoreCo != tmpSingleCoreCo:
            self.singleCoreCo = tmpSingleCoreCo
            self.InitCoutDirectionBaseValue()
        self.isGroupOptDimTail = False

    @api_call
    def End(self) -> None:
        """Free the L1 buffers still held and wait for every queue's outstanding events."""
        if self.freeAL1TensorFlag:
            self.queueAL1.FreeTensor(self.al1)
            self.freeAL1TensorFlag = False
        if self.freeBL1TensorFlag:
            self.queueBL1.FreeTensor(self.bl1)
            self.freeBL1TensorFlag = False
        self.queueAL1.FreeAllEvent()
        if not self.bl1bypass:
            self.queueBL1.FreeAllEvent()
        self.queueBiasL1.FreeAllEvent()
        if not self.pointWise:
            self.queueBiasBT.FreeAllEvent()
        self.queueCL0.FreeAllEvent()


# Replay (ascend_sim/engine/replay.py): an L0C block's K loop is a unit, declared in replay_keys.py (appended here so
# that no kernel line above moves: records carry their source line).
from kernels.conv3d_v2.kernel.replay_keys import iterate_k_unit  # noqa: E402

Conv3D.IterateK = iterate_k_unit(Conv3D.IterateK)
