"""The high-level API `Conv3DBackpropInput` (the kernel-side dx API of Ascend C, arch22), run on the simulator.

Usage, as in the Ascend C documentation:

    dedx = Conv3DBackpropInput(dtype, loadB2Condition)
    dedx.Init(tiling.conv3DDxTiling)
    dedx.SetSingleShape(M, K, N, D)
    dedx.SetStartPosition(dinStartIdx, hoStartIdx)
    dedx.SetGradOutput(dy_gm)       # already offset to this core's batch / group / first dy row
    dedx.SetWeight(filter_gm)       # already offset to this core's group / cin range
    while dedx.Iterate():           # one baseM x baseN tile of dx for one output depth, in L0C
        dedx.GetTensorC(y_gm)       # Fixpipe into NDC1HWC0
    dedx.End()

The GEMM per output depth di: M = dx pixels (Hi*Wi, row-major), N = Cin, K = (cout1, kh, kw, cout0) per kernel
plane kd. For every kd whose dy plane exists, dout = (di + padFront - kd*dilationD) / strideD, the K loop runs
with A from dy[dout] (zero-inserted in L1, img2col into L0A) and B from weight[kd] (rotated, transposed into
L0B), accumulating into the same L0C tile (cmatrixInitVal only on the very first Mmad).

Ports conv3d_bp_func.h (Init, SetSingleShape, SetStartIdx, Iterate, Compute, IterateAll, GetTensorC, End) and
the InitParams / InitTque / JudgeIterateSkip helpers. Internal state keeps the real ctx names (curML0Idx,
baseUseM, curHoIdx, ...) so that a kernel developer can compare it with the C++ side by side.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, PIPE_M, GlobalTensor, HardEvent, Mmad, MmadParams, PipeBarrier, SetFlag,
                                SetHF32Mode, TBuf, TPipe, TPosition, TQue, WaitFlag, api_call)
from ascend_sim.machine.dtypes import float32
from kernels.conv3d_backprop_input.kernel.arch22.load_a import (CalcHDstDataSkipLine, InitLoadToA2Params, LoadToA1,
                                                                LoadToA2, UpdateCurHoSize, UpdateLoadToA2ParamsM)
from kernels.conv3d_backprop_input.kernel.arch22.load_b import (InitLoadToB2Params, LoadToB1, LoadToB2,
                                                                UpdateLoadToB2ParamsK, UpdateLoadToB2ParamsN)
from kernels.conv3d_backprop_input.kernel.arch22.store_c import LoadL0c2Gm
from kernels.conv3d_backprop_input.kernel.arch22.util import (BLOCK_CUBE, FORMAT_NDC1HWC0, CalFmapH, Ceil, DivCeil,
                                                              total_sizes)

ORDER_M, ORDER_N = 0, 1
MMAD_THRESHOLD = 10 * 256  # m*n at or below which consecutive Mmads on one L0C tile need a PIPE_M barrier


class Conv3DBackpropInput:
    """Conv3DBackpropInput<filter, input_size, dedy, y, {loadB2Condition, enableKernelSplit=false}>.

    `dtype` is the dtype of filter and dedy (SrcT); y (DstT) has the same dtype; L0C is float32. yFormat is y's
    CubeFormat: "NDC1HWC0", or "NCDHW" (GetTensorC then writes the tile to a workspace slot for the AIV).
    """

    def __init__(self, dtype, loadB2Condition: int, dst_dtype=None, yFormat: str = FORMAT_NDC1HWC0):
        self.yFormat = yFormat
        self.SrcT = np.dtype(dtype)
        self.DstT = np.dtype(dst_dtype if dst_dtype is not None else dtype)
        self.L0cT = float32
        self.loadB2Condition = int(loadB2Condition)
        self.isB16 = self.SrcT.itemsize == 2
        self.tiling = None

    # --------------------------------------------------------------------------------------- Init
    @api_call
    def Init(self, tiling) -> None:
        self.tiling = tiling
        SetHF32Mode(bool(tiling.hf32Flag))
        self._check_tiling()
        self._init_params()
        self._init_tque()

    def _check_tiling(self) -> None:
        t = self.tiling
        for name in ("batch", "cin", "cout", "ho", "wo", "hi", "wi", "hk", "wk", "singleCoreBatch",
                     "singleCoreCout", "singleCoreHo", "singleCoreCin", "baseM", "baseK", "baseN", "stepM",
                     "stepN", "stepKa", "stepKb"):
            if getattr(t, name) <= 0:
                raise ValueError(f"tiling {name}={getattr(t, name)} must be larger than 0")
        if t.stepM != 1 or t.stepN != 1:
            raise ValueError(f"tiling stepM={t.stepM}, stepN={t.stepN}: the kernel supports only 1")
        if t.c0 != 32 // self.SrcT.itemsize:
            raise ValueError(f"tiling c0={t.c0} does not match the {self.SrcT} data (C0={32 // self.SrcT.itemsize})")

    def _init_params(self) -> None:
        t = self.tiling
        self.baseMN = t.baseM * t.baseN
        self.isFirstIter = True
        self.usingCacheC1Ping = True
        self.HkWk = t.hk * t.wk
        self.HkWkC0 = self.HkWk * t.c0
        self.DkHkWkC0 = t.dk * self.HkWkC0
        self.curCin1Size = t.stepN * t.baseN // t.c0
        self.isB1FullLoadFlag = (t.dk == 1 and t.bl1Pbuffer == 1
                                 and t.baseK * t.stepKb >= t.singleCoreCout * self.HkWk
                                 and self.curCin1Size >= t.singleCoreCin1)
        self.hwI = t.hi * t.wi
        self.hwO = t.ho * t.wo
        if self.DstT == np.float32:
            self.alignedCout1 = DivCeil(t.cout1G * t.c0, BLOCK_CUBE)
            self.alignedCout = self.alignedCout1 * BLOCK_CUBE
        self.channelSize = t.stepKa * t.baseK // self.HkWk
        self.curHoSize = CalFmapH(t, t.baseM * t.stepM)
        self.l0aPingPongFlag = 0
        self.useL0PingPong = (t.al0Pbuffer - 1) & (t.bl0Pbuffer - 1)
        self.curPingCoutIdx = self.curPongCoutIdx = 0
        self.baseUseM = t.baseM
        self.baseUseN = t.baseN
        self.baseUseAlignN = t.baseN
        self.curStepM = self.curStepN = 1
        self.curML0Idx = self.curNL0Idx = self.curML1Idx = self.curNL1Idx = 0
        self.curDinIdx = self.curDinStartIdx = 0
        self.curHoIdx = self.curHoStartIdx = 0
        self.needComputeFlag = self.needComputeKFlag = False
        self.isLoadB1 = True
        self.isFreeB1 = False
        self.mmad = MmadParams()
        self.cacheA1BufPing = self.cacheA1BufPong = self.cacheB1BufPing = self.cacheB1BufPong = None
        InitLoadToA2Params(self)
        if self.isB16:
            InitLoadToB2Params(self)

    def _init_tque(self) -> None:
        t = self.tiling
        hoSize = self.curHoSize
        hoExpand = (t.ho - 1) * t.strideH + 1
        if hoExpand < self.curHoSize:
            hoSize = hoExpand
        size = self.SrcT.itemsize
        aBytes = hoSize * t.wo * t.strideW * t.stepKa * t.baseK // self.HkWk * size
        if self.isB16:
            bBytes = t.stepN * t.baseN * t.stepKb * t.baseK * size
        else:  # fp32: whole 16-cout groups per kernel position
            bBytes = t.stepN * t.baseN * DivCeil(t.stepKb * t.baseK // self.HkWkC0, 2) * self.HkWk * BLOCK_CUBE * size
        self.pipe = TPipe()
        self.a1Ping, self.a1Pong = TQue(TPosition.A1), TQue(TPosition.A1)
        self.b1Ping, self.b1Pong = TQue(TPosition.B1), TQue(TPosition.B1)
        self.c1Ping, self.c1Pong = TQue(TPosition.CO1), TQue(TPosition.CO1)
        self.l0aBuf, self.l0bBuf = TBuf(TPosition.A2), TBuf(TPosition.B2)
        if ASCEND_IS_AIV():
            # [DEVIATION] the MIX kernel's AIV books these L1/L0 buffers in its TPipe too, as addresses only (it
            # never touches them: Compute returns on the AIV); the simulated AIV has no L1/L0, so it skips them.
            return
        self.pipe.InitBuffer(self.a1Ping, 1, aBytes)
        self.pipe.InitBuffer(self.b1Ping, 1, bBytes)
        if t.al1Pbuffer > 1:
            self.pipe.InitBuffer(self.a1Pong, 1, aBytes)
        if t.bl1Pbuffer > 1:
            self.pipe.InitBuffer(self.b1Pong, 1, bBytes)
        self.pipe.InitBuffer(self.c1Ping, 1, self.baseMN * 4)
        if t.cl0Pbuffer > 1:
            self.pipe.InitBuffer(self.c1Pong, 1, self.baseMN * 4)
        l0a_size, l0b_size, _ = total_sizes()
        self.pipe.InitBuffer(self.l0aBuf, l0a_size)
        self.pipe.InitBuffer(self.l0bBuf, l0b_size)
        self.l0aPingPongAddr = l0a_size // 2 // size
        self.l0bPingPongAddr = l0b_size // 2 // size
        # The L0A/L0B halves start out free: TPipe() set M_MTE1 0 and 1 on the AIC (its Destroy waits for them).

    # --------------------------------------------------------------------------------------- setters
    @api_call
    def SetWeight(self, weight: GlobalTensor) -> None:
        self.weightGlobal = weight

    @api_call
    def SetGradOutput(self, outBackprop: GlobalTensor) -> None:
        self.outBackPropGlobal = outBackprop

    SetOutBackprop = SetGradOutput  # the OPSNN name

    @api_call
    def SetSingleShape(self, singleShapeM: int, singleShapeK: int, singleShapeN: int, singleShapeD: int = 1) -> None:
        t = self.tiling
        self.singleShapeDin = singleShapeD
        self.singleShapeM = singleShapeM
        self.singleShapeCin1 = (singleShapeN + t.c0 - 1) >> t.c0Bits
        self.singleShapeCout1 = singleShapeK // self.DkHkWkC0
        self.singleShapeHin = singleShapeM // t.wi
        self.singleShapeCin = singleShapeN
        # InitStepMParams / InitStepKParams / InitStepNParams
        self.mIter = Ceil(singleShapeM, t.baseM)
        self.tailM = singleShapeM - (self.mIter - 1) * t.baseM
        kTotal = self.singleShapeCout1 * self.HkWkC0
        self.kIter = Ceil(kTotal, t.baseK)
        self.tailK = kTotal - (self.kIter - 1) * t.baseK
        self.stepKaRound = Ceil(self.kIter, t.stepKa)
        self.stepKbRound = Ceil(self.kIter, t.stepKb)
        cinAlign = self.singleShapeCin1 * t.c0
        self.nIter = Ceil(cinAlign, t.baseN)
        self.tailN = cinAlign - (self.nIter - 1) * t.baseN
        for name in ("mIter", "kIter", "nIter"):
            if getattr(self, name) <= 0:
                raise ValueError(f"SetSingleShape(M={singleShapeM}, K={singleShapeK}, N={singleShapeN}): {name} "
                                 "would be 0")
        self.kIterStepKaTail = (Ceil(self.kIter, t.stepKa) - 1) * t.stepKa
        self.kIterStepKbTail = (Ceil(self.kIter, t.stepKb) - 1) * t.stepKb
        self.stepKaTail = self.kIter - self.kIterStepKaTail
        self.stepKbTail = self.kIter - self.kIterStepKbTail

    @api_call
    def SetStartPosition(self, curDinStartIdx: int, curHoStartIdx: int) -> None:
        """First output depth, and the first window row in dilated-dy coordinates (negative inside the pad)."""
        self.curDinStartIdx = curDinStartIdx
        self.curHoStartIdx = curHoStartIdx

    SetStartIdx = SetStartPosition  # the OPSNN name

    # --------------------------------------------------------------------------------------- Iterate
    def _update_idx_and_step(self) -> None:
        t = self.tiling
        self.curML0Idx = self.curML1Idx
        self.curNL0Idx = self.curNL1Idx
        self.curHoIdx = self.curHoStartIdx + self.curML0Idx * t.baseM // t.wi
        self.curStepM = t.stepM if self.mIter - self.curML0Idx > t.stepM else self.mIter - self.curML1Idx
        self.curStepN = t.stepN if self.nIter - self.curNL0Idx > t.stepN else self.nIter - self.curNL1Idx

    @api_call
    def Iterate(self, enPartialSum: bool = False) -> bool:
        """Compute the next baseM x baseN tile of dx (one output depth) into L0C; False when all are done.

        ORDER_N (iterateOrder 1): M innermost, then N, then depth. ORDER_M swaps M and N.
        """
        t = self.tiling
        if self.isFirstIter:
            self.curML0Idx = self.curNL0Idx = self.curML1Idx = self.curNL1Idx = 0
            self.curDinIdx = self.curDinStartIdx
            self.curHoIdx = self.curHoStartIdx
            self.curPingCoutIdx = self.curPongCoutIdx = 0
            self.isFirstIter = False
            self.isLoadB1 = True
            self.isFreeB1 = False
            self.curStepM = t.stepM if self.mIter - self.curML0Idx > t.stepM else self.mIter - self.curML1Idx
            self.curStepN = t.stepN if self.nIter - self.curNL0Idx > t.stepN else self.nIter - self.curNL1Idx
        elif t.iterateOrder == ORDER_N:
            self.curML0Idx += 1
            if self.curML0Idx >= self.curML1Idx + self.curStepM:
                self.curML0Idx = self.curML1Idx
                self.curNL0Idx += 1
                if self.curNL0Idx >= self.curNL1Idx + self.curStepN:
                    self.curML1Idx += self.curStepM
                    if self.curNL0Idx >= self.nIter and self.curML1Idx >= self.mIter:
                        self.curML1Idx = self.curNL1Idx = 0
                        self.curDinIdx += 1
                        if self.curDinIdx >= self.curDinStartIdx + self.singleShapeDin:
                            return False
                    if self.curML1Idx >= self.mIter:
                        self.curML1Idx = 0
                        self.curNL1Idx += self.curStepN
                    self._update_idx_and_step()
        else:  # ORDER_M
            self.curNL0Idx += 1
            if self.curNL0Idx >= self.curNL1Idx + self.curStepN:
                self.curNL0Idx = self.curNL1Idx
                self.curML0Idx += 1
                if self.curML0Idx >= self.curML1Idx + self.curStepM:
                    self.curNL1Idx += self.curStepN
                    if self.curML0Idx >= self.mIter and self.curNL1Idx >= self.nIter:
                        self.curML1Idx = self.curNL1Idx = 0
                        self.curDinIdx += 1
                        if self.curDinIdx >= self.curDinStartIdx + self.singleShapeDin:
                            return False
                    if self.curNL1Idx >= self.nIter:
                        self.curNL1Idx = 0
                        self.curML1Idx += self.curStepM
                    self._update_idx_and_step()
        self.isFreeB1 = (self.isB1FullLoadFlag and self.curML0Idx == self.mIter - 1
                         and self.curNL0Idx == self.nIter - 1
                         and self.curDinIdx == self.curDinStartIdx + self.singleShapeDin - 1)
        if self.curML0Idx + 1 == self.mIter:
            self.baseUseM = self.tailM
        elif self.curML0Idx == 0:
            self.baseUseM = t.baseM
        if self.curNL0Idx + 1 == self.nIter:
            self.baseUseN = self.tailN
        elif self.curNL0Idx == 0:
            self.baseUseN = t.baseN
        self.baseUseAlignN = (self.baseUseN + BLOCK_CUBE - 1) // BLOCK_CUBE * BLOCK_CUBE
        self._judge_iterate_skip()
        self._compute()
        return True

    def _judge_iterate_skip(self) -> None:
        """Skip a tile whose loaded dy rows are all inserted zeros (only when the output was pre-zeroed)."""
        self.needComputeFlag = True
        UpdateCurHoSize(self)
        skip = CalcHDstDataSkipLine(self)
        if self.curHoSize <= skip and self.tiling.initOutputFlag == 1:
            self.needComputeFlag = False

    def _init_mmad_params(self) -> None:
        m = self.mmad
        m.m = self.baseUseM
        if self.curML0Idx == self.mIter - 1:
            m.m = ((self.baseUseM + BLOCK_CUBE - 1) >> 4) * BLOCK_CUBE
        m.k = self.tiling.baseK
        m.n = self.baseUseN
        m.unitFlag = 0
        m.kDirectionAlign = False
        m.cmatrixSource = False
        m.cmatrixInitVal = True

    def _mmad_local(self, l0a, l0b, l0c) -> None:
        if self.mmad.m * self.mmad.n <= MMAD_THRESHOLD:
            PipeBarrier(PIPE_M)
        p = self.mmad
        Mmad(l0c, l0a, l0b, MmadParams(m=p.m, n=p.n, k=p.k, unitFlag=p.unitFlag,
                                       kDirectionAlign=p.kDirectionAlign, cmatrixSource=p.cmatrixSource,
                                       cmatrixInitVal=p.cmatrixInitVal))

    def _valid_dout(self, curKdIdx: int) -> int | None:
        """The dy plane that kernel plane kd reads for output depth curDinIdx, or None if there is none.

        [DEVIATION] The real kernel takes a separate branch when strideD > dk (dTmp = di + padFront for every kd),
        which does not select a single kd (reference §3.3); the general formula below is used for every stride.
        The operator never sends strideD > dk here anyway (it pads the kernel with zero planes, see operator.py).
        """
        t = self.tiling
        dTmp = self.curDinIdx + t.padFront - curKdIdx * t.dilationD
        if dTmp < 0 or dTmp % t.strideD > 0 or dTmp >= t.dout * t.strideD:
            return None
        return dTmp // t.strideD if t.strideD > 1 else dTmp

    def _compute(self) -> None:
        t = self.tiling
        UpdateLoadToA2ParamsM(self)
        if not self.needComputeFlag:
            if self.isFreeB1 and not self.isLoadB1:
                self.b1Ping.FreeTensor(self.cacheB1BufPing)
            return
        if ASCEND_IS_AIV():  # the MIX kernel's AIV walks the tiles' indices only
            return
        self._init_mmad_params()
        if self.isB16 and (self.curNL0Idx == 0 or self.curNL0Idx + 1 == self.nIter):
            UpdateLoadToB2ParamsN(self)
        isFirstDk = True
        a1PingPongFlag = True
        b1PingPongFlag = True
        l0aPingPongFlag = self.l0aPingPongFlag
        l0c = (self.c1Ping if self.usingCacheC1Ping else self.c1Pong).AllocTensor(self.L0cT)
        self.needComputeKFlag = False
        l0a_all = self.l0aBuf.Get(self.SrcT)
        l0b_all = self.l0bBuf.Get(self.SrcT)
        for curKdIdx in range(t.dk):
            curDoutIdx = self._valid_dout(curKdIdx)
            if curDoutIdx is None:
                continue
            a1PingPongFlag, b1PingPongFlag, l0aPingPongFlag = self._compute_kernel_plane(
                curKdIdx, curDoutIdx, isFirstDk, a1PingPongFlag, b1PingPongFlag, l0aPingPongFlag, l0c, l0a_all,
                l0b_all)
            isFirstDk = False
        (self.c1Ping if self.usingCacheC1Ping else self.c1Pong).EnQue(l0c)
        self.l0aPingPongFlag = l0aPingPongFlag

    def _compute_kernel_plane(self, curKdIdx: int, curDoutIdx: int, isFirstDk: bool, a1PingPongFlag: bool,
                              b1PingPongFlag: bool, l0aPingPongFlag: int, l0c, l0a_all, l0b_all) -> tuple:
        """The K loop of kernel plane curKdIdx against dy plane curDoutIdx into the tile's L0C; returns the A1, B1
        and L0 ping-pong flags it leaves.

        [port] The body of Compute's `for curKdIdx` loop (conv3d_bp_func.h), a method here so that replay can take
        one kernel plane as a unit (kernel/arch22/replay_keys.py); the C++ has it inline. The loop's locals it
        reads and updates are its arguments and its result.
        """
        t = self.tiling
        self.needComputeKFlag = True
        kaIdx = kbIdx = kaStepIdx = kbStepIdx = 0
        self.load3d.kExtension = t.baseK
        self.mmad.k = t.baseK
        self.curLoadKal1 = t.stepKa * t.baseK
        self.curLoadKbl1 = t.stepKb * t.baseK
        for kIdx in range(self.kIter):
            isLastKIdx = kIdx + 1 == self.kIter
            if isLastKIdx:
                self.load3d.kExtension = self.tailK
                self.mmad.k = self.tailK
            if kIdx == self.kIterStepKaTail:
                self.curLoadKal1 = (self.stepKaTail - 1) * t.baseK + self.tailK
            if kIdx == self.kIterStepKbTail:
                self.curLoadKbl1 = (self.stepKbTail - 1) * t.baseK + self.tailK
            # A1/B1 ping or pong by the parity of the (M block, K step) index (stepM = stepN = 1)
            isLoadA1 = kaIdx == 0
            if isLoadA1 and t.al1Pbuffer > 1:
                a1PingPongFlag = bool((self.curML1Idx * self.stepKaRound + kaStepIdx + 1) & 1)
            LoadToA1(self, kIdx, curDoutIdx, a1PingPongFlag, isLoadA1)
            isLoadB1 = kbIdx == 0
            if isLoadB1 and t.bl1Pbuffer > 1:
                b1PingPongFlag = bool((self.curNL1Idx * self.stepKbRound + kbStepIdx + 1) & 1)
            LoadToB1(self, kIdx, curKdIdx, b1PingPongFlag, isLoadB1)

            l0a = l0a_all[self.l0aPingPongAddr] if l0aPingPongFlag else l0a_all
            self.load3d.kStartPt = kaIdx * t.baseK
            if isLoadA1:
                if a1PingPongFlag:
                    self.cacheA1BufPing = self.a1Ping.DeQue(self.SrcT)
                else:
                    self.cacheA1BufPong = self.a1Pong.DeQue(self.SrcT)
            WaitFlag(HardEvent.M_MTE1, l0aPingPongFlag)
            LoadToA2(self, self.cacheA1BufPing if a1PingPongFlag else self.cacheA1BufPong, l0a)
            isLastStepKa = kaIdx + 1 == t.stepKa
            if isLastStepKa or isLastKIdx:
                if a1PingPongFlag:
                    self.a1Ping.FreeTensor(self.cacheA1BufPing)
                else:
                    self.a1Pong.FreeTensor(self.cacheA1BufPong)

            l0b = l0b_all[self.l0bPingPongAddr] if l0aPingPongFlag else l0b_all
            if isLoadB1 and (not self.isB1FullLoadFlag or self.isLoadB1):
                if b1PingPongFlag:
                    self.cacheB1BufPing = self.b1Ping.DeQue(self.SrcT)
                else:
                    self.cacheB1BufPong = self.b1Pong.DeQue(self.SrcT)
                if self.isLoadB1:
                    self.isLoadB1 = False
            if self.isB16 and (kIdx == 0 or kIdx == self.kIterStepKbTail):
                UpdateLoadToB2ParamsK(self)
            LoadToB2(self, self.cacheB1BufPing if b1PingPongFlag else self.cacheB1BufPong, kbIdx, kIdx,
                     b1PingPongFlag, l0b)
            isLastStepKb = kbIdx + 1 == t.stepKb
            if (isLastStepKb or isLastKIdx) and (not self.isB1FullLoadFlag or self.isFreeB1):
                if b1PingPongFlag:
                    self.b1Ping.FreeTensor(self.cacheB1BufPing)
                else:
                    self.b1Pong.FreeTensor(self.cacheB1BufPong)

            SetFlag(HardEvent.MTE1_M, l0aPingPongFlag)
            WaitFlag(HardEvent.MTE1_M, l0aPingPongFlag)
            self._mmad_local(l0a, l0b, l0c)
            SetFlag(HardEvent.M_MTE1, l0aPingPongFlag)
            if isFirstDk and kIdx == 0:
                self.mmad.cmatrixInitVal = False
            l0aPingPongFlag ^= self.useL0PingPong
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
        return a1PingPongFlag, b1PingPongFlag, l0aPingPongFlag

    # --------------------------------------------------------------------------------------- output
    @api_call
    def GetTensorC(self, output: GlobalTensor, enAtomic: int = 0, enSequentialWrite: bool = False) -> None:
        """Fixpipe the current L0C tile into the NDC1HWC0 output (nothing if the tile was skipped)."""
        LoadL0c2Gm(self, output, enAtomic, enSequentialWrite, self.yFormat)

    @api_call
    def IterateAll(self, output: GlobalTensor, enAtomic: int = 0) -> None:
        while self.Iterate():
            self.GetTensorC(output, enAtomic)
        self.isFirstIter = True

    @api_call
    def End(self) -> None:
        """Wait for the queues' outstanding FreeTensor flags (FreeAllEvent) and clear HF32."""
        t = self.tiling
        if ASCEND_IS_AIV():  # its queues never held a buffer (see _init_tque)
            if t.hf32Flag:
                SetHF32Mode(False)
            return
        self.a1Ping.FreeAllEvent()
        if t.al1Pbuffer > 1:
            self.a1Pong.FreeAllEvent()
        self.b1Ping.FreeAllEvent()
        if t.bl1Pbuffer > 1:
            self.b1Pong.FreeAllEvent()
        self.c1Ping.FreeAllEvent()
        if t.cl0Pbuffer > 1:
            self.c1Pong.FreeAllEvent()
        if self.tiling.hf32Flag:
            SetHF32Mode(False)


# Replay (ascend_sim/engine/replay.py): a tile's K loop and a kernel plane's are units, declared in replay_keys.py
# (applied here so that no kernel line above moves: records carry their source line).
from kernels.conv3d_backprop_input.kernel.arch22.replay_keys import compute_unit, kernel_plane_unit  # noqa: E402

Conv3DBackpropInput._compute = compute_unit(Conv3DBackpropInput._compute)
Conv3DBackpropInput._compute_kernel_plane = kernel_plane_unit(Conv3DBackpropInput._compute_kernel_plane)
