"""L0C -> y in GM: Fixpipe NZ2DN straight into NCDHW, NZ2ND into NDHWC, with the dtype's quant mode.

Ports impl/conv_bp_input_sub_func_store_l0c.h (ComputeDstOffset, LoadL0c2GmForNz2Dn, LoadL0c2GmForNz2Nd),
_store_l0c_dispatch.h (FreeTensorC1Buf, L0CDeQue, SetEnAtomic, LoadL0c2Gm) and _store_l0c_fixpipe.h
(SetFixPipeQuantVal), for the outputs written straight to y and, with split-K through UB, the fp32 tiles
written into the AIC's workspace slice (CalSplitKWorkspaceOffset; NoQuant, dstStride = the tile's own width); the
kernel split H rows go through kernel_split.py, the HW split's tiles through kernel_split_hw_out.py.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.ascendc import (ASCEND_IS_AIV, CFG_COLUMN_MAJOR, CFG_ROW_MAJOR, Fixpipe, FixpipeParamsArch3510,
                                GetBlockIdx, Nz2DnParams, Nz2NdParams, QuantMode_t, SetAtomicAdd, SetAtomicNone)
from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split import (LoadL0c2GmDnForKernelSplitH,
                                                                      LoadL0c2GmNdForKernelSplitH)
from kernels.conv3d_backprop_input.kernel.arch35.kernel_split_hw_out import LoadL0c2OutForKernelSplitHW
from kernels.conv3d_backprop_input.kernel.arch35.util import (DQ_SCALAR_ONE, FORMAT_NCDHW, TPL_SPLIT_KERNEL_H,
                                                              TPL_SPLIT_KERNEL_HW, AlignUp, AlignUp16)


def SetFixPipeQuantVal(api, params: FixpipeParamsArch3510) -> None:
    """The quant mode of DstT: F322BF16, F322F16, QF322HIF8_PRE (half away) / QF322FP8_PRE with scale 1.0; fp32
    keeps NoQuant."""
    dst = api.DstT
    if dst == bfloat16:
        params.quantPre = QuantMode_t.F322BF16
    elif dst == float16:
        params.quantPre = QuantMode_t.F322F16
    elif dst == hifloat8:
        params.quantPre = QuantMode_t.QF322HIF8_PRE
        params.deqScalar = DQ_SCALAR_ONE
    elif dst == float8_e4m3fn:
        params.quantPre = QuantMode_t.QF322FP8_PRE
        params.deqScalar = DQ_SCALAR_ONE


def CalSplitKWorkspaceOffset(api, useN: int, blockIdx: int) -> int:
    """The tile's place in the core's slice [Din][AlignUp(singleCoreCin, baseN)][AlignUp(singleCoreM, baseM)]."""
    t = api.tiling_
    singleCoreCinAlignBaseN = AlignUp(t.singleCoreCin, t.baseN)
    singleCoreMAlignBaseM = AlignUp(t.singleCoreM, t.baseM)
    singleCoreWorkspaceSize = singleCoreCinAlignBaseN * singleCoreMAlignBaseM * t.singleCoreDin
    dinOffset = (api.curDinIdx_ - api.curDinStartIdx_) * singleCoreCinAlignBaseN * singleCoreMAlignBaseM
    nOffset = api.curNIdx_ * useN * singleCoreMAlignBaseM
    mOffset = api.curMIdx_ * useN * t.baseM
    return blockIdx * singleCoreWorkspaceSize + dinOffset + nOffset + mOffset


def LoadL0c2GmForNz2Dn(api, output, useC1Buf) -> None:
    """NZ (cin1, hi*wi, cin0) -> DN (cin, di, hi, wi): column n of the tile goes to channel n, diHiWi apart."""
    p = FixpipeParamsArch3510()
    SetFixPipeQuantVal(api, p)
    p.params = Nz2DnParams(dnNum=1, srcNzMatrixStride=0, dstDnMatrixStride=0, srcNzC0Stride=1)
    p.mSize = api.baseUseM_
    p.nSize = api.baseUseN_
    p.srcStride = AlignUp16(api.baseUseM_)
    p.reluEn = bool(api.tiling_.enRelu)
    if api.useUbAccumForSplitK_:  # fp32 partial sums, not yet rounded to DstT
        p.quantPre = QuantMode_t.NoQuant
        p.dstStride = api.baseUseM_
        dstOffset = CalSplitKWorkspaceOffset(api, api.baseUseN_, GetBlockIdx())
        Fixpipe(api.l0cOutGm_[dstOffset], useC1Buf, p, CFG_COLUMN_MAJOR)
        return
    p.dstStride = api.diHiWi_
    dstOffset = (api.curNIdx_ * api.tiling_.baseN * api.diHiWi_ + api.curDinIdx_ * api.hiWi_
                 + api.curMIdx_ * api.tiling_.baseM)
    Fixpipe(output[dstOffset], useC1Buf, p, CFG_COLUMN_MAJOR)


def LoadL0c2GmForNz2Nd(api, output, useC1Buf) -> None:
    """NZ (cin1, hi*wi, cin0) -> ND (di, hi, wi, cin): row m of the tile is pixel m, cin elements apart."""
    t = api.tiling_
    p = FixpipeParamsArch3510()
    SetFixPipeQuantVal(api, p)
    p.params = Nz2NdParams(ndNum=1)
    p.mSize = api.baseUseM_
    p.nSize = api.baseUseN_
    p.srcStride = AlignUp16(api.baseUseM_)
    if api.useUbAccumForSplitK_:  # the workspace tile stays contiguous for the AIV's copy and Cast
        p.quantPre = QuantMode_t.NoQuant
        p.dstStride = api.baseUseN_
        dstOffset = CalSplitKWorkspaceOffset(api, api.baseUseN_, GetBlockIdx())
        Fixpipe(api.l0cOutGm_[dstOffset], useC1Buf, p, CFG_ROW_MAJOR)
        return
    p.dstStride = t.cin
    dstOffset = (api.curNIdx_ * t.baseN + api.curDinIdx_ * api.hiWi_ * t.cin
                 + api.curMIdx_ * t.baseM * t.cin)
    Fixpipe(output[dstOffset], useC1Buf, p, CFG_ROW_MAJOR)


def SetEnAtomic(api, enAtomic: int) -> None:
    """fp32: atomic add into y; the 16/8-bit outputs with split-K through UB: into the fp32 workspace."""
    if enAtomic != 1:
        return
    if api.DstT == np.dtype(float32):
        SetAtomicAdd(api.DstT)
    elif api.enableSplitK_ and api.useUbAccumForSplitK_:
        SetAtomicAdd(float32)


def LoadL0c2Gm(api, output, enAtomic: int = 0) -> None:
    if ASCEND_IS_AIV():
        return  # ASCEND_IS_AIV_SHOULD_RETURN (the HW split calls it on the AIC only): L0C is the cube's
    if not api.needComputeFlag_:
        return  # no Mmad ran for this tile: nothing in L0C to move
    useC1Buf = (api.l0cPing_ if api.l0cPingPongFlag_ else api.l0cPong_).DeQue(api.L0cT)
    SetEnAtomic(api, enAtomic)
    if api.kernelSplitMode == TPL_SPLIT_KERNEL_H:  # LoadL0c2OutForNz2Dn / Nz2Nd's kernel-split branch
        p = FixpipeParamsArch3510()
        SetFixPipeQuantVal(api, p)
        store = LoadL0c2GmDnForKernelSplitH if api.yFormat == FORMAT_NCDHW else LoadL0c2GmNdForKernelSplitH
        store(api, output, useC1Buf, p)
    elif api.kernelSplitMode == TPL_SPLIT_KERNEL_HW:  # NCDHW y only: into the workspace for the AIV's re-interleave
        p = FixpipeParamsArch3510()
        SetFixPipeQuantVal(api, p)
        LoadL0c2OutForKernelSplitHW(api, useC1Buf, p)
    elif api.yFormat == FORMAT_NCDHW:
        LoadL0c2GmForNz2Dn(api, output, useC1Buf)
    else:
        LoadL0c2GmForNz2Nd(api, output, useC1Buf)
    if api.DstT in (np.dtype(float32), np.dtype(bfloat16), np.dtype(float16)) and enAtomic == 1:
        SetAtomicNone()  # [source] not for hifloat8 / fp8: docs/conv3d_backprop_input_arch35.md
    FreeTensorC1Buf(api, useC1Buf)


def FreeTensorC1Buf(api, useC1Buf) -> None:
    (api.l0cPing_ if api.l0cPingPongFlag_ else api.l0cPong_).FreeTensor(useC1Buf)
    if api.tiling_.cl0Pbuffer > 1:
        api.l0cPingPongFlag_ = not api.l0cPingPongFlag_
