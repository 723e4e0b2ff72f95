"""PIPE_M: Mmad on the 16x16x16 cube. A in L0A (ZZ), B in L0B (ZN), C in L0C (NZ, fp32)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import round_to_hf32
from ..faults import ParameterOutOfRange
from ..pipes import Pipe
from .common import FRACTAL, check_aligned, check_fields, current_core, expect_position

M = Pipe.M
_OPERAND_RATE = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32"}


@dataclass(slots=True)
class MmadParams:
    m: int = 0
    n: int = 0
    k: int = 0
    isBias: bool = False
    fmOffset: int = 0
    enSsparse: bool = False
    enWinogradA: bool = False
    enWinogradB: bool = False
    unitFlag: int = 0
    kDirectionAlign: bool = False
    cmatrixSource: bool = False
    cmatrixInitVal: bool = True


def SetHF32Mode(enable: bool) -> None:
    """Round fp32 cube operands to HF32 before multiplying (A2/A3/950); doubles the fp32 rate."""
    current_core().registers["hf32"] = bool(enable)


def SetHF32TransMode(mode: int) -> None:
    current_core().registers["hf32_trans_mode"] = int(mode)


def _dtype_key(dtype) -> str:
    return {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32"}.get(np.dtype(dtype), "bfloat16")


def Mmad(dst, fm, filter, params: MmadParams) -> None:
    """C (m x n, fp32 in L0C) = or += A (m x k in L0A) . B (k x n in L0B)."""
    core = current_core()
    name = "Mmad"
    expect_position(core, name, M, dst, ("L0C",), "dst")
    expect_position(core, name, M, fm, ("L0A",), "fm")
    expect_position(core, name, M, filter, ("L0B",), "filter")
    check_fields(core, name, M, params, {"m": (0, 4095), "n": (0, 4095), "k": (0, 4095), "unitFlag": (0, 3)})
    check_aligned(core, name, M, dst, core.platform.alignments.mmad_dst_L0C, "dst")
    check_aligned(core, name, M, fm, FRACTAL, "fm")
    check_aligned(core, name, M, filter, FRACTAL, "filter")
    if fm.dtype != filter.dtype:
        raise core.fault(ParameterOutOfRange(f"fm is {fm.dtype} but filter is {filter.dtype}"), name, M)
    if dst.dtype != np.float32:
        raise core.fault(ParameterOutOfRange(f"dst in L0C must be float32 for {fm.dtype} operands"), name, M)
    if not params.cmatrixInitVal and params.cmatrixSource:
        raise core.fault(ParameterOutOfRange("cmatrixSource=1 (bias from BT) is not modelled"), name, M)
    m, n, k = params.m, params.n, params.k
    if m == 0 or n == 0 or k == 0:
        core.issue(name, M, params, (), (), 0.0)
        return
    dtype = fm.dtype
    c0 = 32 // dtype.itemsize
    k_unit = 16 if (dtype.itemsize == 4 and params.kDirectionAlign) else c0
    m1, n1 = -(-m // 16), -(-n // 16)
    k1 = -(-k // k_unit) * (k_unit // c0)
    a_bytes = k * dtype.itemsize if m == 1 else m1 * k1 * FRACTAL
    b_bytes, c_bytes = k1 * n1 * FRACTAL, n1 * m1 * 1024
    hf32 = dtype.itemsize == 4 and core.registers["hf32"]
    operand = "hf32" if hf32 else _dtype_key(dtype)
    cube_k = core.platform.cube.cube_k(operand)
    cycles = core.platform.rates.mmad_overhead + m1 * n1 * k1 * (c0 / cube_k)
    abuf, bbuf, cbuf = fm.buffer, filter.buffer, dst.buffer
    a0, b0, c_0 = fm.address, filter.address, dst.address
    init = params.cmatrixInitVal
    mantissa, mode = core.platform.hf32_mantissa_bits, core.registers["hf32_trans_mode"]
    gemv = m == 1  # GEMV: L0A holds A as a plain vector and only row 0 of each C fractal is written

    def run():
        # ZZ [m1][k1][16][c0] -> (m1*16, k1*c0); ZN [k1][n1][16 n][c0 k] -> (k1*c0, n1*16)
        if gemv:
            a = abuf.view(dtype, a0, k).astype(np.float32).reshape(1, k)
        else:
            a = abuf.view(dtype, a0, m1 * k1 * 16 * c0).reshape(m1, k1, 16, c0)
            a = a.astype(np.float32).transpose(0, 2, 1, 3).reshape(m1 * 16, k1 * c0)[:, :k]
        b = bbuf.view(dtype, b0, k1 * n1 * 16 * c0).reshape(k1, n1, 16, c0)
        b = b.astype(np.float32).transpose(0, 3, 1, 2).reshape(k1 * c0, n1 * 16)[:k]  # K is masked exactly at k
        if hf32:
            a, b = round_to_hf32(a, mantissa, mode), round_to_hf32(b, mantissa, mode)
        prod = a @ b  # fp16/bf16 products are exact in fp32; accumulation in fp32
        c = cbuf.view(np.float32, c_0, n1 * m1 * 256).reshape(n1, m1 * 16, 16)
        rows = c[:, :1] if gemv else c
        prod_nz = prod.reshape(prod.shape[0], n1, 16).transpose(1, 0, 2)
        if init:
            rows[...] = prod_nz
        else:
            rows += prod_nz

    reads = ((abuf, a0, a0 + a_bytes), (bbuf, b0, b0 + b_bytes))
    if not init:  # accumulating reads C as well
        reads += ((cbuf, c_0, c_0 + c_bytes),)
    core.issue(name, M, params, reads, ((cbuf, c_0, c_0 + c_bytes),), cycles, run)
