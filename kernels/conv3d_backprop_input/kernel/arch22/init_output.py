"""The init-output pass (initOutputFlag == 1, "L0_INIT"): every core zeroes its slice of y, then all cores meet.

Output positions that no (kd, kh, kw) reaches are never written by the main pass (skipped tiles, output depths
without a valid kernel plane, trailing rows/planes dropped by ReCalSingleCoreShapeForOutputPad), so y is
pre-zeroed: L0C is set to zero by an Mmad of zeroed L0A/L0B, then each core Fixpipes those zeros over its
ceil(size/cores) (32-element aligned) slice in chunks of one L0C (L0C/64 rows x 16), tails as NZ plus one
row-major piece, and SyncAllCores is the cube cores' barrier: CrossCoreSetFlag<0, PIPE_FIX>(SYNC_AIC_FLAG) (it
counts once this core's Fixpipes are done) and CrossCoreWaitFlag(SYNC_AIC_FLAG). y is NDC1HWC0 or, for the MIX
fp16/bf16 NCDHW build, NCDHW (then the size counts Cin channels, not cin1 x C0). The vector cores of the MIX
launch return from Process at once.

Ports conv3d_backprop_input_v2_init_output.h (Conv3dDxInitOutput<yType, yFormat, InitOutputFlag::L0_INIT>).
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, CFG_NZ, CFG_ROW_MAJOR, PIPE_FIX, CrossCoreSetFlag, CrossCoreWaitFlag,
                                Fixpipe, FixpipeParamsV220, GetBlockIdx, GetBlockNum, GlobalTensor, HardEvent,
                                InitConstValue, InitConstValueParams, Mmad, MmadParams, SetFlag, TBuf, TPipe, TPosition,
                                TQue, WaitFlag)
from kernels.conv3d_backprop_input.kernel.arch22.store_c import quant_mode
from kernels.conv3d_backprop_input.kernel.arch22.util import (BLOCK_CUBE, FORMAT_NCDHW, FORMAT_NDC1HWC0, AlignUp, Ceil,
                                                              total_sizes)

NO_INIT, L0_INIT, L1_INIT = 0, 1, 2
BEST_FIXPIPE_ELEMENTS = 32  # 128 B of fp32
FRACTAL_LEN_BITS = 9
SYNC_AIC_FLAG = 11  # asc-devkit kernel_operator_sync_impl.h: the cross-core flag of the cube cores' barrier


class Conv3dDxInitOutput:
    def __init__(self, y_dtype, yFormat: str = FORMAT_NDC1HWC0):
        self.yType = np.dtype(y_dtype)
        self.yFormat = yFormat

    def Init(self, y, tilingData) -> None:
        t = tilingData.conv3DDxTiling
        m = t.hi * t.wi
        if self.yFormat == FORMAT_NCDHW:
            self.outputSize = m * t.cin * t.di * t.batch
        else:
            c0 = 32 // self.yType.itemsize
            self.outputSize = m * t.cin1 * c0 * t.di * t.batch
        self.yGm = GlobalTensor(self.yType).SetGlobalBuffer(y, self.outputSize)
        self.pipe = TPipe()
        if ASCEND_IS_AIV():  # the real AIV books L0 addresses it has no buffers for; nothing else happens
            return
        l0a_size, l0b_size, l0c_size = total_sizes()
        self.l0aSize, self.l0bSize, self.l0cSize = l0a_size, l0b_size, l0c_size
        self.l0A, self.l0B, self.l0C = TBuf(TPosition.A2), TBuf(TPosition.B2), TQue(TPosition.CO1)
        self.pipe.InitBuffer(self.l0A, l0a_size)
        self.pipe.InitBuffer(self.l0B, l0b_size)
        self.pipe.InitBuffer(self.l0C, 1, l0c_size)
        self.L0C_M = l0c_size // 64  # rows of 16 fp32
        self.L0C_ELEMENTS = self.L0C_M * BLOCK_CUBE

    def SetL0CZero(self) -> None:
        l0a = self.l0A.Get(np.float16)
        l0b = self.l0B.Get(np.float16)
        l0c = self.l0C.AllocTensor(np.float32)
        InitConstValue(l0a, InitConstValueParams(1, self.l0aSize >> FRACTAL_LEN_BITS, 0, 0))
        InitConstValue(l0b, InitConstValueParams(1, self.l0bSize >> FRACTAL_LEN_BITS, 0, 0))
        eventId = self.pipe.FetchEventID(HardEvent.MTE1_M)
        SetFlag(HardEvent.MTE1_M, eventId)
        WaitFlag(HardEvent.MTE1_M, eventId)
        self.pipe.ReleaseEventID(HardEvent.MTE1_M, eventId)
        # m*n = L0C_M*16 is far above the 2560 threshold: no PIPE_M barrier needed
        Mmad(l0c, l0a, l0b, MmadParams(m=self.L0C_M, n=BLOCK_CUBE, k=1, cmatrixInitVal=True))
        self.l0C.EnQue(l0c)

    def Process(self) -> None:
        if ASCEND_IS_AIV():
            return
        self.ProcessWithL0()

    def SyncAllCores(self) -> None:
        """The cube cores' barrier: counts once this core's Fixpipes have written their zeros."""
        CrossCoreSetFlag(0, PIPE_FIX, SYNC_AIC_FLAG)
        CrossCoreWaitFlag(SYNC_AIC_FLAG)

    def ProcessWithL0(self) -> None:
        usedCoreNum = GetBlockNum()
        clearSizePerCore = AlignUp(Ceil(self.outputSize, usedCoreNum), BEST_FIXPIPE_ELEMENTS)
        usedCoreNum = Ceil(self.outputSize, clearSizePerCore)
        if GetBlockIdx() >= usedCoreNum:
            self.SyncAllCores()
            return
        self.SetL0CZero()
        l0c = self.l0C.DeQue(np.float32)
        offset = clearSizePerCore * GetBlockIdx()
        tail = min(self.outputSize - offset, clearSizePerCore)
        loop = 0
        if tail > self.L0C_ELEMENTS:
            loop = tail // self.L0C_ELEMENTS
            tail -= self.L0C_ELEMENTS * loop
        elif tail == self.L0C_ELEMENTS:
            loop, tail = 1, 0
        quant = quant_mode(self.yType)
        for _ in range(loop):
            Fixpipe(self.yGm[offset], l0c, FixpipeParamsV220(nSize=BLOCK_CUBE, mSize=self.L0C_M, srcStride=1,
                                                             dstStride=1, quantPre=quant), CFG_NZ)
            offset += self.L0C_ELEMENTS
        if tail:
            mSize = tail >> 4
            if mSize > 0:
                Fixpipe(self.yGm[offset], l0c, FixpipeParamsV220(nSize=BLOCK_CUBE, mSize=mSize, srcStride=1,
                                                                 dstStride=1, quantPre=quant), CFG_NZ)
            tailBlockSize = mSize << 4
            remainNSize = tail - tailBlockSize
            if remainNSize:
                offset += tailBlockSize
                self._write_remainder(offset, l0c, remainNSize, quant)
        self.l0C.FreeTensor(l0c)
        self.SyncAllCores()

    def _write_remainder(self, offset: int, l0c, remainNSize: int, quant) -> None:
        """The last < 16 elements: one row-major (NZ2ND) Fixpipe of nSize = remainNSize, mSize = 1."""
        Fixpipe(self.yGm[offset], l0c, FixpipeParamsV220(nSize=remainNSize, mSize=1, srcStride=1, dstStride=1,
                                                         quantPre=quant), CFG_ROW_MAJOR)

    def Destroy(self) -> None:
        self.pipe.Destroy()
