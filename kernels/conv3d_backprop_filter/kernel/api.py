"""The high-level API `Conv3DBackpropFilter` (the kernel-side dw API of Ascend C, arch22), run on the simulator.

Usage, as in the Ascend C documentation (ConvBackpropApi::Conv3DBackpropFilter):

    dw = Conv3DBackpropFilter(dtype)
    dw.Init(tiling.dwTiling)
    dw.SetFmap(x_gm)                 # SetInput: x (NDC1HWC0), offset to this core's batch / depth / cin / rows
    dw.SetOutBackprop(dy_gm)         # SetGradOutput: dy (NDC1HWC0), offset to this core's cout / first pixel
    dw.SetSingleShape(M, N, K, hoStartIdx)
    dw.IterateAll(y_gm, 1)           # or: while dw.Iterate(): dw.GetTensorC(y_gm, 1)
    dw.End()

The GEMM of one (batch, output depth): M = Cout, N = (cin1, kh, kw, cin0) [times dk when the depth taps are
folded into N], K = Ho*Wo. A = dy^T: dy rows in L1 as an NC1HWC0 "fmap" of H = 1, W = pixels, C = couts, read
by LoadData 3Dv2 with a 1x1 window and enTranspose into L0A. B = img2col(x) over the K pixels: x rows in L1
(NC1HWC0), LoadData 3Dv2 into L0B through the RIGHT fmatrix with the real strides, kernel, dilation and pads.
Each baseM x baseN tile accumulates over K in L0C and is added into dw (fp32, FRACTAL_Z_3D) by Fixpipe with
the atomic add on, so cores splitting K, batch or depth sum their parts in GM.

Ports conv_bp_func.h (Init, SetFmap, SetOutBackprop, SetSingleShape, Iterate, Compute, IterateAll, GetTensorC,
End) with the state under the real ctx names (curML0Idx, baseUseM, ...); the loads and the store are in
load_a.py, load_b.py and store_c.py.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_M, GlobalTensor, HardEvent, Mmad, MmadParams, PipeBarrier, SetFlag,
                                SetHF32Mode, TBuf, TPipe, TPosition, TQue, WaitFlag, api_call)
from ascend_sim.machine.dtypes import float32
from kernels.conv3d_backprop_filter.kernel.load_a import InitLoadToA2Params, LoadL12L0a, LoadToA1
from kernels.conv3d_backprop_filter.kernel.load_b import (CalcParamsL12L0b, InitLoadToB2Params, InitSetFmatrixParams,
                                                          LoadL12L0b, LoadToB1)
from kernels.conv3d_backprop_filter.kernel.store_c import LoadL0c2Gm
from kernels.conv3d_backprop_filter.kernel.util import BLOCK_CUBE, Ceil, DivHkWk, total_sizes

ORDER_M, ORDER_N = 0, 1
MMAD_THRESHOLD = 2560  # m*n below which consecutive Mmads on one L0C tile need a PIPE_M barrier


class Out2L1ScalarParams:
    """What one Iterate loads into / frees from L1, and where the loads start (conv_bp_sub_func.h)."""

    def __init__(self):
        self.isLoad2L1A = self.isLastMAL1 = self.isFreeAL1 = False
        self.out2A1SrcAddr = 0
        self.isLoad2L1B = self.isFreeBL1 = False
        self.out2B1SrcAddr = self.singleShapeHi = self.bL1cin1CopyLen = 0


class Conv3DBackpropFilter:
    """Conv3DBackpropFilter<x (NDC1HWC0), filter_size, dedy (NDC1HWC0), y (FRACTAL_Z_3D, float32)>.

    `dtype` is the dtype of x and dedy (SrcT: float16, bfloat16 or float32); y and L0C are float32.
    """

    def __init__(self, dtype):
        self.SrcT = np.dtype(dtype)
        self.DstT = self.L0cT = float32
        self.c0 = 32 // self.SrcT.itemsize  # the divisor of ShiftDivChannelSize
        self.isFp32 = self.SrcT == np.float32
        self.tiling = None

    # --------------------------------------------------------------------------------------- Init
    @api_call
    def Init(self, tiling) -> None:
        self.tiling = tiling
        self._check_tiling()
        self._init_params()
        if ASCEND_IS_AIV():  # the vector cores of a MIX launch use the API's state, not its cube buffers
            return
        self._init_tque()
        SetHF32Mode(bool(tiling.hf32Flag))

    def _check_tiling(self) -> None:
        t = self.tiling
        for name in ("batch", "cin", "cout", "cin1G", "cout1G", "dout", "ho", "wo", "di", "hi", "wi", "dk", "hk",
                     "wk", "singleCoreBatch", "singleCoreCout", "singleCoreHo", "singleCoreCin", "baseM", "baseK",
                     "baseN", "stepM", "stepN", "stepKa", "stepKb"):
            if getattr(t, name) <= 0:
                raise ValueError(f"tiling {name}={getattr(t, name)} must be larger than 0")
        if t.channelSize != self.c0 or t.k0 != self.c0:
            raise ValueError(f"tiling channelSize={t.channelSize}, k0={t.k0} do not match the {self.SrcT} data "
                             f"(C0={self.c0})")

    def _init_params(self) -> None:
        t = self.tiling
        self.baseMK = t.baseM * t.baseK
        self.baseKN = t.baseK * t.baseN
        self.baseMN = t.baseM * t.baseN
        self.hwK = t.hk * t.wk
        self.hwO = t.ho * t.wo
        self.hwI = t.hi * t.wi
        self.kal1 = t.stepKa * t.baseK
        self.kbl1 = t.stepKb * t.baseK
        # hi = (ho - 1) * strideH + (hk - 1) * dilationH + 1, less the strideH added back per row
        self.strideKernelDilationH = (t.hk - 1) * t.dilationH + 1 - t.strideH
        self.isFirstIter = True
        self.isDeterministic = False
        self.l0aPingPongFlag = 0
        self.l0cPingPongFlag = 1
        self.useL0PingPong = (t.al0Pbuffer - 1) & (t.bl0Pbuffer - 1)
        self.curML0Idx = self.curNL0Idx = self.curML1Idx = self.curNL1Idx = 0
        self.curStepM = self.curStepN = 1
        self.baseUseM, self.baseUseN, self.baseUseK = t.baseM, t.baseN, t.baseK
        self.bL1HiCopyLenPing = self.bL1HiCopyLenPong = self.bL1PadUpPing = self.bL1PadUpPong = 0
        self.curLoadKal1 = 0
        self.srcL12L0aOffset = 0
        self.cacheA1BufPing = self.cacheA1BufPong = self.cacheB1BufPing = self.cacheB1BufPong = None
        InitLoadToB2Params(self)
        InitLoadToA2Params(self)
        InitSetFmatrixParams(self)
        # InitMmadParams: kDirectionAlign for fp32 (A was transposed into L0A by the 3Dv2 load)
        self.mmad = MmadParams(m=t.baseM, n=t.baseN, k=t.baseK, unitFlag=0, kDirectionAlign=self.isFp32,
                               cmatrixSource=False, cmatrixInitVal=False)

    def _init_tque(self) -> None:
        t = self.tiling
        size = self.SrcT.itemsize
        aMatrixByteSize = t.stepM * t.baseM * t.stepKa * t.baseK * size
        bl1BoundByteSize = t.bl1Bound * size
        self.pipe = TPipe()
        self.a1Ping, self.a1Pong = TQue(TPosition.A1), TQue(TPosition.A1)
        self.b1Ping, self.b1Pong = TQue(TPosition.B1), TQue(TPosition.B1)
        self.l0cPing, self.l0cPong = TQue(TPosition.CO1), TQue(TPosition.CO1)
        self.l0aBuf, self.l0bBuf = TBuf(TPosition.A2), TBuf(TPosition.B2)
        self.pipe.InitBuffer(self.a1Ping, 1, aMatrixByteSize)
        self.pipe.InitBuffer(self.b1Ping, 1, bl1BoundByteSize)
        if t.al1Pbuffer > 1:
            self.pipe.InitBuffer(self.a1Pong, 1, aMatrixByteSize)
        if t.bl1Pbuffer > 1:
            self.pipe.InitBuffer(self.b1Pong, 1, bl1BoundByteSize)
        self.pipe.InitBuffer(self.l0cPing, 1, self.baseMN * 4)
        if t.cl0Pbuffer > 1:
            self.pipe.InitBuffer(self.l0cPong, 1, self.baseMN * 4)
        l0a_size, l0b_size = total_sizes()
        self.pipe.InitBuffer(self.l0aBuf, l0a_size)
        self.pipe.InitBuffer(self.l0bBuf, l0b_size)
        self.l0aPingPongAddr = l0a_size // 2 // size
        self.l0bPingPongAddr = l0b_size // 2 // size
        # The L0A/L0B halves start out free: TPipe() set M_MTE1 0 and 1 (its Destroy waits for them).

    # --------------------------------------------------------------------------------------- setters
    @api_call
    def SetFmap(self, fmap: GlobalTensor) -> None:
        self.fmapGlobal = fmap

    SetInput = SetFmap  # the asc-devkit name

    @api_call
    def SetOutBackprop(self, outBackprop: GlobalTensor) -> None:
        self.outBackPropGlobal = outBackprop

    SetGradOutput = SetOutBackprop  # the asc-devkit name

    @api_call
    def SetSingleShape(self, singleShapeM: int, singleShapeN: int, singleShapeK: int, hoStartIdx: int) -> None:
        """M = couts, N = (cin, kh, kw) elements of this core's block, K = pixels (whole rows of Wo)."""
        t = self.tiling
        self.singleShapeCout = singleShapeM
        # fp32: cin rounded up to 8 in GM
        self.singleShapeCin = Ceil(DivHkWk(singleShapeN, self.hwK), t.channelSize) * t.channelSize
        self.singleShapeHo = singleShapeK // t.wo
        self.hoStartIdx = hoStartIdx
        self.hiStartIdx = hoStartIdx * t.strideH - t.padUp
        # InitStepMParams / InitStepKParams / InitStepNParams
        self.mIter = Ceil(self.singleShapeCout, t.baseM)
        self.tailM = self.singleShapeCout - t.baseM * (self.mIter - 1)
        hoWo = self.singleShapeHo * t.wo
        self.kIter = Ceil(hoWo, t.baseK)
        self.tailK = hoWo - t.baseK * (self.kIter - 1)
        self.stepKaRound = Ceil(self.kIter, t.stepKa)
        self.stepKbRound = Ceil(self.kIter, t.stepKb)
        self.nIter = Ceil(Ceil(self.singleShapeCin, t.channelSize) * t.channelSize * self.hwK, t.baseN)
        self.tailN = self.singleShapeCin * self.hwK - t.baseN * (self.nIter - 1)
        for name in ("mIter", "kIter", "nIter"):
            if getattr(self, name) <= 0:
                raise ValueError(f"SetSingleShape(M={singleShapeM}, N={singleShapeN}, K={singleShapeK}): {name} "
                                 "would be 0")

    # --------------------------------------------------------------------------------------- Iterate
    def _update_idx_and_step(self) -> None:
        t = self.tiling
        self.curML0Idx = self.curML1Idx
        self.curNL0Idx = self.curNL1Idx
        self.curStepM = t.stepM if self.mIter - self.curML0Idx > t.stepM else self.mIter - self.curML1Idx
        self.curStepN = t.stepN if self.nIter - self.curNL0Idx > t.stepN else self.nIter - self.curNL1Idx

    @api_call
    def Iterate(self, enPartialSum: bool = False) -> bool:
        """Compute the next baseM x baseN tile of dw into L0C (all of this block's K); False when all are done.

        ORDER_N (iterateOrder 1): M innermost, B stays in L1; ORDER_M: N innermost, A stays in L1.
        """
        t = self.tiling
        p = Out2L1ScalarParams()
        kaGreater = self.kIter > t.stepKa * t.al1Pbuffer
        kbGreater = self.kIter > t.stepKb * t.bl1Pbuffer
        p.isLoad2L1A = p.isFreeAL1 = kaGreater
        p.isLoad2L1B = p.isFreeBL1 = kbGreater
        if self.isFirstIter:
            self.curML0Idx = self.curNL0Idx = self.curML1Idx = self.curNL1Idx = 0
            self.isFirstIter = False
            self.curStepM = min(self.mIter, t.stepM)
            self.curStepN = min(self.nIter, t.stepN)
            isLastNLoop, isLastMLoop = self.nIter == 1, self.mIter == 1
            isNLastStep = isLastNLoop or t.stepN == 1
            isMLastStep = isLastMLoop or t.stepM == 1
            p.isLoad2L1A = True
            p.isFreeAL1 = (kaGreater or (t.iterateOrder and isMLastStep)
                           or (not t.iterateOrder and isLastNLoop and isMLastStep))
            p.isLoad2L1B = True
            p.isFreeBL1 = (kbGreater or (t.iterateOrder and isLastMLoop and isNLastStep)
                           or (not t.iterateOrder and isNLastStep))
        elif t.iterateOrder == ORDER_N:
            self.curML0Idx += 1
            if self.curML0Idx >= self.curML1Idx + self.curStepM:
                self.curML0Idx = self.curML1Idx
                self.curNL0Idx += 1
                if self.curNL0Idx >= self.curNL1Idx + self.curStepN:
                    self.curML1Idx += self.curStepM
                    if self.curNL0Idx >= self.nIter and self.curML1Idx >= self.mIter:
                        return False
                    if self.curML1Idx >= self.mIter:
                        self.curML1Idx = 0
                        self.curNL1Idx += self.curStepN
                    self._update_idx_and_step()
                    if self.curML0Idx == 0:
                        p.isLoad2L1B = True  # the N block changed: replace B in L1
                p.isLoad2L1A = True
            if self.curML0Idx == self.mIter - 1 or self.curML0Idx == self.curML1Idx + self.curStepM - 1:
                p.isFreeAL1 = True
            if self.curML0Idx == self.mIter - 1 and (self.curNL0Idx == self.nIter - 1
                                                    or self.curNL0Idx == self.curNL1Idx + self.curStepN - 1):
                p.isFreeBL1 = True
        else:  # ORDER_M
            self.curNL0Idx += 1
            if self.curNL0Idx >= self.curNL1Idx + self.curStepN:
                self.curNL0Idx = self.curNL1Idx
                self.curML0Idx += 1
                if self.curML0Idx >= self.curML1Idx + self.curStepM:
                    self.curNL1Idx += self.curStepN
                    if self.curML0Idx >= self.mIter and self.curNL1Idx >= self.nIter:
                        return False
                    if self.curNL1Idx >= self.nIter:
                        self.curNL1Idx = 0
                        self.curML1Idx += self.curStepM
                    self._update_idx_and_step()
                    if self.curNL0Idx == 0:
                        p.isLoad2L1A = True  # the M block changed: replace A in L1
                p.isLoad2L1B = True
            if self.curNL0Idx == self.nIter - 1 and (self.curML0Idx == self.mIter - 1
                                                    or self.curML0Idx == self.curML1Idx + self.curStepM - 1):
                p.isFreeAL1 = True
            if self.curNL0Idx == self.nIter - 1 or self.curNL0Idx == self.curNL1Idx + self.curStepN - 1:
                p.isFreeBL1 = True
        self.baseUseM = self.tailM if self.curML0Idx + 1 == self.mIter else t.baseM
        self.baseUseN = self.tailN if self.curNL0Idx + 1 == self.nIter else t.baseN
        self._compute(p)
        return True

    def _cal_out2l1_scalar_params(self, p: Out2L1ScalarParams) -> None:
        """CalOut2L1ScalarParams: where this tile's A and B loads start in GM, how many cin1 planes B takes."""
        t = self.tiling
        if p.isLoad2L1A:
            p.out2A1SrcAddr = self.curML1Idx * t.baseM * self.hwO
            p.isLastMAL1 = (self.mIter - 1) // t.stepM == self.curML0Idx // t.stepM
        if p.isLoad2L1B:
            localN = t.baseN // self.c0
            b1SrCin = DivHkWk(self.curNL1Idx * localN, self.hwK)
            singleShapeHi = self.singleShapeHo * t.strideH + self.strideKernelDilationH
            p.singleShapeHi = min(t.hi, singleShapeHi)
            p.out2B1SrcAddr = b1SrCin * self.hwI
            bL1N = self.curStepN * localN
            bL1cin1CopyLen = 1 if self.hwK > bL1N else Ceil(bL1N, self.hwK)  # CeilHkWk
            if self.hwK > bL1N:
                if self.hwK % bL1N != 0:
                    bL1cin1CopyLen += 1  # one cin1 row is already more than the block: one row more
            elif (2 * bL1N) % self.hwK != 0:
                bL1cin1CopyLen += 1  # unless the tail is exactly half a row, a trailing row more
            cin1RemainLen = self.singleShapeCin // self.c0 - b1SrCin
            p.bL1cin1CopyLen = min(cin1RemainLen, bL1cin1CopyLen)

    def _compute(self, p: Out2L1ScalarParams) -> None:
        t = self.tiling
        CalcParamsL12L0b(self)
        alignedBaseUseM = Ceil(self.baseUseM, BLOCK_CUBE) * BLOCK_CUBE  # CalcParamsL12L0a
        self.load3dA.kExtension = alignedBaseUseM
        self.load3dA.channelSize = alignedBaseUseM
        self.mmad.m, self.mmad.n = self.baseUseM, self.baseUseN  # CalcParamsMmad
        curML0IdxModStepMulBaseM = (self.curML0Idx % t.stepM) * t.baseM
        self._cal_out2l1_scalar_params(p)
        l0c = (self.l0cPing if self.l0cPingPongFlag else self.l0cPong).AllocTensor(self.L0cT)
        a1PingPongFlag = b1PingPongFlag = True
        kaIdx = kbIdx = kaStepIdx = kbStepIdx = 0
        curMKL1Idx = self.stepKaRound * (self.curML1Idx // t.stepM)
        curNKL1Idx = self.stepKbRound * (self.curNL1Idx // t.stepN)
        l0a_all = self.l0aBuf.Get(self.SrcT)
        l0b_all = self.l0bBuf.Get(self.SrcT)
        for k in range(self.kIter):
            isLastKIter = k + 1 == self.kIter
            isLastStepKa = kaIdx + 1 == t.stepKa
            isLastStepKb = kbIdx + 1 == t.stepKb
            isLoadA1, isLoadB1 = kaIdx == 0, kbIdx == 0
            self.baseUseK = self.tailK if isLastKIter else t.baseK
            # L1 ping or pong by the parity of the (block, K step) index
            if t.bl1Pbuffer > 1:
                b1PingPongFlag = bool((curNKL1Idx + kbStepIdx + 1) & 1)
            LoadToB1(self, b1PingPongFlag, k, p, isLoadB1, kbStepIdx)
            if t.al1Pbuffer > 1:
                a1PingPongFlag = bool((curMKL1Idx + kaStepIdx + 1) & 1)
            LoadToA1(self, a1PingPongFlag, k, p, isLoadA1, kaStepIdx)

            WaitFlag(HardEvent.M_MTE1, self.l0aPingPongFlag)
            alignedBaseUseK = Ceil(self.baseUseK, t.k0) * t.k0
            l0b = l0b_all[self.l0bPingPongAddr] if self.l0aPingPongFlag else l0b_all
            self.load3dB.mStartPt = (k - kbIdx) * t.baseK % t.wo + kbIdx * t.baseK  # posM inside the B1 rows
            self.load3dB.mExtension = alignedBaseUseK
            if p.isLoad2L1B and isLoadB1:
                if b1PingPongFlag:
                    self.cacheB1BufPing = self.b1Ping.DeQue(self.SrcT)
                else:
                    self.cacheB1BufPong = self.b1Pong.DeQue(self.SrcT)
            pads = list(self.load3dB.padList)
            if b1PingPongFlag:
                self.load3dB.l1H, pads[2] = self.bL1HiCopyLenPing, self.bL1PadUpPing
            else:
                self.load3dB.l1H, pads[2] = self.bL1HiCopyLenPong, self.bL1PadUpPong
            self.load3dB.padList = pads
            LoadL12L0b(self, self.cacheB1BufPing if b1PingPongFlag else self.cacheB1BufPong, l0b)
            if p.isFreeBL1 and (isLastStepKb or isLastKIter):
                if b1PingPongFlag:
                    self.b1Ping.FreeTensor(self.cacheB1BufPing)
                else:
                    self.b1Pong.FreeTensor(self.cacheB1BufPong)

            l0a = l0a_all[self.l0aPingPongAddr] if self.l0aPingPongFlag else l0a_all
            mOffset = curML0IdxModStepMulBaseM * self.curLoadKal1
            self.srcL12L0aOffset = kaIdx * t.baseK * t.channelSize + mOffset
            self.load3dA.mExtension = alignedBaseUseK
            if p.isLoad2L1A and isLoadA1:
                if a1PingPongFlag:
                    self.cacheA1BufPing = self.a1Ping.DeQue(self.SrcT)
                else:
                    self.cacheA1BufPong = self.a1Pong.DeQue(self.SrcT)
            LoadL12L0a(self, self.cacheA1BufPing if a1PingPongFlag else self.cacheA1BufPong, l0a, kaStepIdx)
            if p.isFreeAL1 and (isLastStepKa or isLastKIter):
                if a1PingPongFlag:
                    self.a1Ping.FreeTensor(self.cacheA1BufPing)
                else:
                    self.a1Pong.FreeTensor(self.cacheA1BufPong)

            SetFlag(HardEvent.MTE1_M, self.l0aPingPongFlag)
            WaitFlag(HardEvent.MTE1_M, self.l0aPingPongFlag)
            self.mmad.cmatrixInitVal = k == 0
            self.mmad.k = self.baseUseK
            self._mmad_local(l0a, l0b, l0c)
            SetFlag(HardEvent.M_MTE1, self.l0aPingPongFlag)
            self.l0aPingPongFlag ^= self.useL0PingPong
            if isLastStepKa:
                kaStepIdx += 1
                kaIdx = 0
            else:
                kaIdx += 1
            if isLastStepKb:
                kbStepIdx += 1
                kbIdx = 0
            else:
                kbIdx += 1
        (self.l0cPing if self.l0cPingPongFlag else self.l0cPong).EnQue(l0c)

    def _mmad_local(self, l0a, l0b, l0c) -> None:
        m = self.mmad
        Mmad(l0c, l0a, l0b, MmadParams(m=m.m, n=m.n, k=m.k, unitFlag=m.unitFlag, kDirectionAlign=m.kDirectionAlign,
                                       cmatrixSource=m.cmatrixSource, cmatrixInitVal=m.cmatrixInitVal))
        if m.m * m.n < MMAD_THRESHOLD:
            PipeBarrier(PIPE_M)

    # --------------------------------------------------------------------------------------- output
    @api_call
    def GetTensorC(self, output: GlobalTensor, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
        """Fixpipe the current L0C tile into dw (FRACTAL_Z_3D, fp32), added to GM when enAtomic == 1."""
        LoadL0c2Gm(self, output, enAtomic, enSequentialWrite)

    @api_call
    def IterateAll(self, output: GlobalTensor, enAtomic: int = 0) -> None:
        while self.Iterate():
            self.GetTensorC(output, enAtomic)
        self.isFirstIter = True

    @api_call
    def IterateAllDeterministic(self, output: GlobalTensor, enAtomic: int = 0) -> None:
        """IterateAll into a per-core workspace of this block's tiles (isDeterministic: the tile rows are the
        block's couts, not the whole cout1G*C0), for the vector cores to reduce in a fixed order."""
        self.isDeterministic = True
        while self.Iterate():
            self.GetTensorC(output, enAtomic)
        self.isFirstIter = True
        self.isDeterministic = False

    @api_call
    def End(self) -> None:
        """Clear HF32 (the M -> MTE1 events TPipe() set are waited by its Destroy)."""
        if ASCEND_IS_AIV():
            return
        if self.tiling.hf32Flag:
            SetHF32Mode(False)


# Replay (ascend_sim/engine/replay.py): a tile's K loop is a unit, declared in replay_keys.py (appended here so that
# no kernel line above moves: records carry their source line).
from kernels.conv3d_backprop_filter.kernel.replay_keys import compute_unit  # noqa: E402

Conv3DBackpropFilter._compute = compute_unit(Conv3DBackpropFilter._compute)
