"""PIPE_M: Mmad on the 16x16x16 cube. A in L0A (ZZ, or NZ on the 950), B in L0B (ZN), C in L0C (NZ, fp32).

Operands: float16, bfloat16, float32 (or HF32); on arch 3510 also hifloat8 x hifloat8 and float8_e4m3fn x
float8_e4m3fn (asc-devkit@82b89a15 Mmad.md table 5), 16x32-byte fractals (K fractal 32), exact products summed in
fp32; CTRL[45] = 1 makes float8_e4m3fn x float8_e4m3fn run as hifloat8 (isa/ctrl.py). The e5m2 mixes of table 5
are not modelled (no dtype here).

The A fractal is 16 rows (M) x 32 bytes (C0 = 16 / 8 / 32 elements of K for 16- / 32- / 8-bit types), row major,
on every arch. The order of the fractals follows the platform's `l0a_layout`: "ZZ" (A2/A3, Mmad.md table 2) puts
them M-block major, [m1][k1][16][c0]; "NZ" (the 950, Mmad.md table 1 "A ... Nz"; LoadData_2D_V2 and
LoadDataWithStride write fractal (k // C0) * dstStride + m // 16) puts them K-block major, [k1][m1][16][c0].
GEMV (m = 1) reads a plain vector on both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.engine.front_end_cache import cached
from ascend_sim.isa.common import FRACTAL, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.ctrl import HIF8_MMAD_BIT, ctrl_value
from ascend_sim.machine.dtypes import EIGHT_BIT_DTYPES, arch_refuses, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.mmad import product
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Kind, define, operands_type

M = Pipe.M


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


SET_HF32_MODE = define("SetHF32Mode", Pipe.S, kind=Kind.REGISTER_WRITE,
                       doc="Round fp32 cube operands to HF32 before multiplying.")
SET_HF32_TRANS_MODE = define("SetHF32TransMode", Pipe.S, kind=Kind.REGISTER_WRITE,
                             doc="How fp32 rounds to HF32 (nearest even or half away).")


def SetHF32Mode(enable: bool) -> None:
    """Round fp32 cube operands to HF32 before multiplying (A2/A3/950); doubles the fp32 rate."""
    current_core().write_register(SET_HF32_MODE, "hf32", bool(enable))


def SetHF32TransMode(mode: int) -> None:
    current_core().write_register(SET_HF32_TRANS_MODE, "hf32_trans_mode", int(mode))


_DTYPE_KEY = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32",
              **{dtype: name for name, dtype in EIGHT_BIT_DTYPES.items()}}


_FLOAT32 = np.dtype(np.float32)
_MMAD_RANGES = {"m": (0, 4095), "n": (0, 4095), "k": (0, 4095), "unitFlag": (0, 3)}
_check_mmad = fields_checker(_MMAD_RANGES)


MmadOperands = operands_type(
    "MmadOperands", "abuf a0 a_bytes bbuf b0 b_bytes cbuf c0_addr c_bytes dtype m k m1 n1 k1 c0 init gemv operand "
    "hf32_rounding bias_bt a_nz",
    "A (a_bytes of abuf at a0, ZZ), B (b_bytes of bbuf at b0, ZN) and C (c_bytes of cbuf at c0_addr, NZ fp32); "
    "dtype the operands' element type, m x k x n in m1 x k1 x n1 fractals of 16 x c0; init: C = A.B (else +=); "
    "gemv: A is one row; operand the cube_k key (a dtype or 'hf32'); hf32_rounding (mantissa bits, trans mode) or "
    "None; bias_bt the bias table C starts from, or None; a_nz: L0A holds NZ fractals (the 950), else ZZ.")


def _mmad_cost(ops, model) -> float:
    """A fixed overhead, then m1 x n1 x k1 fractal products at the cube rate of the operand dtype."""
    return model.rates.mmad_overhead + ops.m1 * ops.n1 * ops.k1 * (ops.c0 / model.cube_k[ops.operand])


def _mmad_execute(rec) -> None:
    """C (m x n, fp32, NZ in L0C) = A (m x k, ZZ or NZ in L0A) . B (k x n, ZN in L0B), or C += A . B."""
    ops = rec.args
    prod = product(ops)  # machine/mmad.py
    n1 = ops.n1
    c = ops.cbuf.data[ops.c0_addr:ops.c0_addr + ops.c_bytes].view(np.float32).reshape(n1, ops.m1 * 16, 16)
    rows = c[:, :1] if ops.gemv else c  # GEMV: only row 0 of each C fractal is written
    prod_nz = prod.reshape(prod.shape[0], n1, 16).transpose(1, 0, 2)
    if ops.bias_bt is not None:  # C = bias row (BT, fp32) broadcast over the m rows, plus A . B
        rows[...] = prod_nz + ops.bias_bt.view(np.float32, 0, n1 * 16).reshape(n1, 1, 16)
    elif ops.init:
        rows[...] = prod_nz
    else:
        rows += prod_nz


def _eight_bit_operand(core, name: str, dtype: np.dtype) -> np.dtype:
    """The dtype the cube multiplies 8-bit operands as: refused off arch 3510; CTRL[45] turns fp8 into hif8."""
    if dtype not in EIGHT_BIT_DTYPES.values():
        raise core.fault(ParameterOutOfRange(f"fm and filter are {dtype}: 8-bit Mmad operands modelled are "
                                             f"{sorted(EIGHT_BIT_DTYPES)}"), name, M)
    refused = arch_refuses(dtype, core.platform.npu_arch)
    if refused:
        raise core.fault(ParameterOutOfRange(f"fm and filter: {refused}"), name, M)
    return hifloat8 if (ctrl_value(core) >> HIF8_MMAD_BIT) & 1 else dtype


MMAD = define("Mmad", M, kind=Kind.COMPUTE, operands=MmadOperands, cost=_mmad_cost, execute=_mmad_execute,
              params=MmadParams,
              doc="C = or += A . B on the cube, fp32 accumulation in L0C.")


@cached
def Mmad(dst, fm, filter, params: MmadParams) -> None:
    """C (m x n, fp32 in L0C) = or += A (m x k in L0A) . B (k x n in L0B); or = bias (BT) + A . B."""
    core = current_core()
    name = "Mmad"
    if dst.__class__ is not LocalTensor or dst.buffer.name != "L0C":
        expect_position(core, name, M, dst, ("L0C",), "dst")
    if fm.__class__ is not LocalTensor or fm.buffer.name != "L0A":
        expect_position(core, name, M, fm, ("L0A",), "fm")
    if filter.__class__ is not LocalTensor or filter.buffer.name != "L0B":
        expect_position(core, name, M, filter, ("L0B",), "filter")
    _check_mmad(core, name, M, params)
    if dst.address % core.alignments.mmad_dst_L0C:
        check_aligned(core, name, M, dst, core.alignments.mmad_dst_L0C, "dst")
    if fm.address % FRACTAL:
        check_aligned(core, name, M, fm, FRACTAL, "fm")
    if filter.address % FRACTAL:
        check_aligned(core, name, M, filter, FRACTAL, "filter")
    dtype = fm.dtype
    if dtype is not filter.dtype and dtype != filter.dtype:
        raise core.fault(ParameterOutOfRange(f"fm is {fm.dtype} but filter is {filter.dtype}"), name, M)
    if dst.dtype is not _FLOAT32 and dst.dtype != _FLOAT32:
        raise core.fault(ParameterOutOfRange(f"dst in L0C must be float32 for {fm.dtype} operands"), name, M)
    depends = ()
    if dtype.itemsize == 1:
        dtype = _eight_bit_operand(core, name, dtype)
        depends = (("ctrl", ctrl_value(core)),)
    init = params.cmatrixInitVal and not params.isBias  # as the A2 MmadCal passes it to the hardware
    # cmatrixSource=1 without init: C starts from the bias table (one fp32 row of n values, broadcast over m).
    # Own rule: the four-operand Mmad names no BT address; the bias row is read from BT address 0, where the
    # APIs that use this form (Conv3D) keep their only C2 buffer.
    bias_bt = core.buffers["BT"] if (not init and params.cmatrixSource) else None
    m, n, k = params.m, params.n, params.k
    if m == 0 or n == 0 or k == 0:
        core.issue(MMAD, M, params)
        return
    size = dtype.itemsize
    c0 = 32 // size
    k_unit = 16 if (size == 4 and params.kDirectionAlign) else c0
    m1, n1 = -(-m // 16), -(-n // 16)
    k1 = -(-k // k_unit) * (k_unit // c0)
    a_bytes = k * size if m == 1 else m1 * k1 * FRACTAL
    b_bytes, c_bytes = k1 * n1 * FRACTAL, n1 * m1 * 1024
    registers = core.registers
    hf32 = size == 4 and registers["hf32"]
    operand = "hf32" if hf32 else _DTYPE_KEY.get(dtype, "bfloat16")
    # HF32 rounding: (mantissa bits of the platform, the trans mode register), or None
    hf32_rounding = (core.platform.hf32_mantissa_bits, registers["hf32_trans_mode"]) if hf32 else None
    abuf, bbuf, cbuf = fm.buffer, filter.buffer, dst.buffer
    a0, b0, c_0 = fm.address, filter.address, dst.address
    gemv = m == 1  # GEMV: L0A holds A as a plain vector and only row 0 of each C fractal is written

    reads = ((abuf, a0, a0 + a_bytes), (bbuf, b0, b0 + b_bytes))
    if bias_bt is not None:
        reads += ((bias_bt, 0, n1 * 16 * 4),)
    elif not init:  # accumulating reads C as well
        reads += ((cbuf, c_0, c_0 + c_bytes),)
    core.issue(MMAD, M, params, reads, ((cbuf, c_0, c_0 + c_bytes),),
               MmadOperands(abuf, a0, a_bytes, bbuf, b0, b_bytes, cbuf, c_0, c_bytes, dtype, m, k, m1, n1, k1, c0,
                            init, gemv, operand, hf32_rounding, bias_bt, core.platform.l0a_layout == "NZ"),
               registers=(("hf32", hf32), ("hf32_trans_mode", registers["hf32_trans_mode"])) + depends)
