"""The vector core's part of the MIX fp16/bf16 NCDHW build: each dx tile from the workspace into NCDHW.

Per tile the AIC has Fixpipe'd baseUseM x baseUseN of dx into its workspace slot as [cin1][baseUseM][C0] (NZ,
store_c.CopyData2TmpWorkspace) and raised cross-core flag 6. The AIV (VecPostProcess):
- CopyInToUB: DataCopy GM -> UB, one block of baseUseM rows per C0 channels, UB rows baseM apart; then flag 5
  (mode 2, PIPE_MTE2: counts once the copy has read the slot) lets the AIC Fixpipe the next tile into it;
- TransFormat: TransDataTo5HD turns each [baseM][C0] block into C0 rows of baseM pixels ([cin][baseM] in UB);
- CopyOutToGm: DataCopyPad UB -> GM, one row of baseUseM pixels per real channel into NCDHW (channels DiHiWi
  apart); with baseUseM not a multiple of 16 (UB rows are not whole blocks apart then) one copy per channel.

Ports the CopyInToUB, TransFormat, CopyOutToGm, JudgeComputeNecessary and VecPostProcess members of Conv3dDx
(op_kernel/arch22/conv3d_backprop_input_v2.h); `op` is the driver, `op.dedx` its Conv3DBackpropInput.
"""
from __future__ import annotations

from ascend_sim.ascendc import (PIPE_MTE2, CrossCoreSetFlag, DataCopy, DataCopyExtParams, DataCopyPad, DataCopyParams,
                                GetBlockIdx, GetSubBlockIdx, TPosition, TQue, TransDataTo5HD, TransDataTo5HDParams)
from ascend_sim.machine.dtypes import float16
from kernels.conv3d_backprop_input.kernel.arch22.util import BLOCK_CUBE, CalcRemainder, Ceil

ONE_BLK_SIZE = 32
NCHW_CONV_ADDR_LIST_SIZE = 16
UINT32_MAX = 2**32 - 1
SYNC_MODE2 = 2
SYNC_AIC_AIV_FLAG = 6  # the AIC's "tile in the workspace"
SYNC_AIV_AIC_FLAG = 5  # the AIV's "workspace slot read"


def InitMixCoreBuffer(op, ubSize: int) -> None:
    """The AIV's two queues, half of UB each, on the API's TPipe."""
    half = ubSize // 2
    op.vecInQueue, op.vecOutQueue = TQue(TPosition.VECIN, 1), TQue(TPosition.VECOUT, 1)
    op.dedx.pipe.InitBuffer(op.vecInQueue, 1, half)
    op.dedx.pipe.InitBuffer(op.vecOutQueue, 1, half)


def CopyInToUB(op) -> None:
    d, t = op.dedx, op.dedx.tiling
    size = op.yType.itemsize
    vecInBuf = op.vecInQueue.AllocTensor(op.yType)
    srcOffset = GetBlockIdx() * t.baseM * t.baseN
    DataCopy(vecInBuf, op.l0cOutGm[srcOffset], DataCopyParams(
        blockCount=Ceil(d.baseUseN, BLOCK_CUBE), blockLen=d.baseUseM * t.c0 * size // ONE_BLK_SIZE, srcStride=0,
        dstStride=(t.baseM - d.baseUseM) * t.c0 * size // ONE_BLK_SIZE))
    op.vecInQueue.EnQue(vecInBuf)


def TransFormat(op) -> None:
    """Per C0 channels: 16 source blocks of 16 consecutive pixels' C0 values -> 16 channel rows of those pixels,
    repeated along M (src 16 blocks further, dst one block further)."""
    d, t = op.dedx, op.dedx.tiling
    vecInBuf = op.vecInQueue.DeQue(op.yType)
    vecOutBuf = op.vecOutQueue.AllocTensor(op.yType)
    params = TransDataTo5HDParams(dstHighHalf=False, srcHighHalf=False,
                                  repeatTimes=Ceil(d.baseUseM, NCHW_CONV_ADDR_LIST_SIZE), dstRepStride=1,
                                  srcRepStride=NCHW_CONV_ADDR_LIST_SIZE)
    if params.repeatTimes == 1:  # the API's note: one repeat takes strides of 0
        params.dstRepStride = params.srcRepStride = 0
    baseCount = 0
    for _ in range(d.baseUseN >> t.c0Bits):
        dstLocalList = [vecOutBuf[baseCount + i * t.baseM].GetPhyAddr() for i in range(NCHW_CONV_ADDR_LIST_SIZE)]
        srcLocalList = [vecInBuf[baseCount + i * t.c0].GetPhyAddr() for i in range(NCHW_CONV_ADDR_LIST_SIZE)]
        TransDataTo5HD(dstLocalList, srcLocalList, params, dtype=float16)  # TransDataTo5HD<half>: bits only
        baseCount += t.baseM << t.c0Bits
    op.vecOutQueue.EnQue(vecOutBuf)
    op.vecInQueue.FreeTensor(vecInBuf)


def CopyOutToGm(op, output) -> None:
    d, t = op.dedx, op.dedx.tiling
    size = op.yType.itemsize
    vecOutBuf = op.vecOutQueue.DeQue(op.yType)
    diHiWi = t.di * t.hi * t.wi
    dstStride = (diHiWi - d.baseUseM) * size
    dstOffset = d.curNL0Idx * t.baseN * diHiWi + d.curML0Idx * t.baseM + d.curDinIdx * t.hi * t.wi
    curCinSize = min(d.baseUseN, d.singleShapeCin - d.curNL0Idx * t.baseN)  # real channels only
    if (d.baseUseM & 0xF) == 0 and dstStride <= UINT32_MAX:
        DataCopyPad(output[dstOffset], vecOutBuf, DataCopyExtParams(
            blockCount=curCinSize, blockLen=d.baseUseM * size,
            srcStride=(t.baseM - d.baseUseM) * size // ONE_BLK_SIZE, dstStride=dstStride))
    else:
        ubOffset = 0
        params = DataCopyExtParams(blockCount=1, blockLen=d.baseUseM * size, srcStride=0, dstStride=0)
        for _ in range(curCinSize):
            DataCopyPad(output[dstOffset], vecOutBuf[ubOffset], params)
            dstOffset += diHiWi
            ubOffset += t.baseM
    op.vecOutQueue.FreeTensor(vecOutBuf)


def JudgeComputeNecessary(op) -> bool:
    """Whether some kernel plane reaches this output depth (the AIC's Compute wrote nothing otherwise)."""
    d, t = op.dedx, op.dedx.tiling
    for curKdIdx in range(t.dk):
        if t.strideD > t.dk:
            dTmp = d.curDinIdx + t.padFront
            if CalcRemainder(dTmp, t.strideD) >= t.dk or dTmp // t.strideD >= t.dout:
                continue
        else:
            dTmp = d.curDinIdx + t.padFront - curKdIdx * t.dilationD
            if dTmp < 0 or CalcRemainder(dTmp, t.strideD) > 0 or dTmp >= t.dout * t.strideD:
                continue
        return True
    return False


def VecPostProcess(op, output) -> None:
    """After flag 6: the tile into NCDHW; flag 5 as soon as the slot is read (or at once if nothing was written)."""
    if not op.dedx.needComputeFlag or not JudgeComputeNecessary(op):
        CrossCoreSetFlag(SYNC_MODE2, PIPE_MTE2, SYNC_AIV_AIC_FLAG)
        return
    if GetSubBlockIdx() > 0:
        CrossCoreSetFlag(SYNC_MODE2, PIPE_MTE2, SYNC_AIV_AIC_FLAG)
        return
    CopyInToUB(op)
    CrossCoreSetFlag(SYNC_MODE2, PIPE_MTE2, SYNC_AIV_AIC_FLAG)
    TransFormat(op)
    CopyOutToGm(op, output)


# Replay (ascend_sim/engine/replay.py): the post-process of a tile is a unit, declared in replay_keys.py (appended
# here so that no kernel line above moves: records carry their source line).
from kernels.conv3d_backprop_input.kernel.arch22.replay_keys import vec_post_unit  # noqa: E402

VecPostProcess = vec_post_unit(VecPostProcess, JudgeComputeNecessary)
