"""MTE2 on the Ascend 950 (arch 3510): GM -> L1 with the DN2NZ conversion (`Dn2NzParams`) and the 3510 form
of ND2NZ (`Nd2NzParams` with the 3510 struct's wider fields).

Sources: asc-devkit 82b89a15 docs/zh/.../矩阵计算的搬入/DataCopy（GMToL1随路转换-DN2NZ搬运）.md and
...-ND2NZ搬运）.md (fields, ranges, the zero pad of the last C0 column), include/basic_api/kernel_struct_data_copy.h
(the 3510 field widths), impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h (dstNzMatrixStride is handed
to the hardware as dstNzMatrixStride * sizeof(T) / 32). A stride larger than the data (dstNzNStride = strideW,
dstNzMatrixStride = strideH * woExpand * c0) leaves the skipped L1 rows as they were: the arch35 dx kernel zeroes
its A1 buffer first and gets its zero insertion that way (ops-nn e5c3fa93 conv_bp_sub_func_load_gm_to_l1a.h).

DN2NZ's SmallC0 mode (the `enableSmallC0` template argument, the same DN2NZ page): with dValue <= 4 each of the
nValue rows is 4 elements (4 * sizeof(T) bytes) wide, zero-padded from dValue to 4, rows back to back (dstNzC0Stride
and dstNzNStride are ignored), and the matrix's end zero-padded to 32 bytes; dnNum > 1 puts the matrices
dstNzMatrixStride elements apart. The arch35 dx kernel's C04 path loads its 4-channel dy this way.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import BLOCK, check_aligned, current_core, expect_position, fields_checker
from ascend_sim.isa.mte2 import DATA_COPY_ND2NZ, Nd2NzOperands, Nd2NzParams, _mte2_cost, _nd2nz_execute, _nd2nz_maps
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor
from ascend_sim.record import Kind, define

MTE2 = Pipe.MTE2


@dataclass(slots=True)
class Dn2NzParams:
    """dnNum DN matrices (dValue rows of srcDValue elements, nValue of them used: a column-major nValue x dValue
    matrix) into NZ: column d of the N x D matrix goes to C0-wide column block d // C0, row n to row n."""

    dnNum: int = 0
    nValue: int = 0
    dValue: int = 0
    srcDnMatrixStride: int = 0
    srcDValue: int = 0
    dstNzC0Stride: int = 0
    dstNzNStride: int = 0
    dstNzMatrixStride: int = 0


_B40 = 2**40 - 1
# the DN2NZ doc's table 4; the ND2NZ fields the 3510 struct widens (dValue uint32, the source strides uint64)
# take the same ranges as their DN2NZ twins [own rule: the ND2NZ doc prints the A2 table for every product, which
# would refuse the dx kernel's srcNdMatrixStride = wo * cout; dav_3510 passes the uint64 strides through]
_DN2NZ_RANGES = {"dnNum": (0, 4095), "nValue": (0, 16384), "dValue": (0, 2**21 - 1),
                 "srcDnMatrixStride": (0, _B40), "srcDValue": (1, _B40), "dstNzC0Stride": (1, 16384),
                 "dstNzNStride": (1, 16384), "dstNzMatrixStride": (0, 16384)}
_ND2NZ_3510_RANGES = {"ndNum": (0, 4095), "nValue": (0, 16384), "dValue": (0, 2**21 - 1),
                      "srcNdMatrixStride": (0, _B40), "srcDValue": (1, _B40), "dstNzC0Stride": (1, 16384),
                      "dstNzNStride": (1, 16384), "dstNzMatrixStride": (0, 16384)}
_check_dn2nz = fields_checker(_DN2NZ_RANGES)
_check_nd2nz = fields_checker(_ND2NZ_3510_RANGES)


@lru_cache(maxsize=256)
def _dn2nz_maps(dnNum, nValue, dValue, sMS, sD, c0s, ns, dMS, c0):
    """As mte2._nd2nz_maps, with the source transposed: element (n, d) of matrix i is at i*sMS + d*sD + n."""
    c1 = -(-dValue // c0)
    i = np.arange(dnNum).reshape(-1, 1, 1, 1)
    r = np.arange(nValue).reshape(1, -1, 1, 1)
    j = np.arange(c1).reshape(1, 1, -1, 1)
    e = np.arange(c0).reshape(1, 1, 1, -1)
    col = j * c0 + e
    dst = (i * dMS + j * (c0s * c0) + r * (ns * c0) + e).reshape(-1)
    valid = np.broadcast_to(col < dValue, (dnNum, nValue, c1, c0)).reshape(-1)
    src = (i * sMS + np.minimum(col, dValue - 1) * sD + r).reshape(-1)
    strided = None
    if dValue % c0 == 0 and np.unique(dst).size == dst.size:
        strided = ((dnNum, nValue, c1, c0), (sMS, 1, c0 * sD, sD), (dMS, ns * c0, c0s * c0, 1))
    return src, dst, np.flatnonzero(~valid), int(src.max()) + 1, int(dst.max()) + 1, strided


SMALL_C0 = 4  # the SmallC0 row: 4 elements


@lru_cache(maxsize=256)
def _dn2nz_small_c0_maps(dnNum, nValue, dValue, sMS, sD, dMS, c0):
    """SmallC0: element (n, d) of matrix i (at i*sMS + d*sD + n) -> i*dMS + n*4 + d; d in [dValue, 4) and the
    matrix's tail up to 32 bytes are zero."""
    rows = -(-nValue * SMALL_C0 // c0) * c0  # elements of one matrix, the tail padded to 32 bytes
    i = np.arange(dnNum).reshape(-1, 1)
    e = np.arange(rows).reshape(1, -1)
    n, d = e // SMALL_C0, e % SMALL_C0
    dst = (i * dMS + e).reshape(-1)
    valid = np.broadcast_to((d < dValue) & (n < nValue), (dnNum, rows)).reshape(-1)
    src = (i * sMS + np.minimum(d, dValue - 1) * sD + np.minimum(n, nValue - 1)).reshape(-1)
    return src, dst, np.flatnonzero(~valid), int(src.max()) + 1, int(dst.max()) + 1, None


DATA_COPY_DN2NZ = define("DataCopy(Dn2Nz)", MTE2, kind=Kind.MOVE, operands=Nd2NzOperands, cost=_mte2_cost,
                         execute=_nd2nz_execute, params=Dn2NzParams,
                         doc="GM -> L1 (arch 3510): dnNum DN (column-major) matrices into NZ.")


def _check_operands(core, name, dst, src, what):
    require_arch35(core, name, MTE2, what)
    if dst.__class__ is not LocalTensor or dst.buffer.name != "L1":
        expect_position(core, name, MTE2, dst, ("L1",), "dst")
    if src.__class__ is not GlobalTensor:
        expect_position(core, name, MTE2, src, ("GM",), "src")
    if dst.address % BLOCK:
        check_aligned(core, name, MTE2, dst, BLOCK, "dst")
    if src.dtype != dst.dtype:
        raise core.fault(ParameterOutOfRange(f"src is {src.dtype} but dst is {dst.dtype}: {name} does not convert"),
                         name, MTE2)


def _check_matrix_stride(core, name, value, size):
    if value * size % BLOCK:
        raise core.fault(ParameterOutOfRange(
            f"dstNzMatrixStride={value} elements is not a whole number of 32-byte blocks: the hardware takes "
            f"dstNzMatrixStride * {size} / 32 blocks and would drop the rest"), name, MTE2)


def copy_gm_to_l1_dn2nz(dst, src, params: Dn2NzParams, enableSmallC0: bool = False) -> None:
    """DataCopy<T, enableSmallC0>(L1, GM, Dn2NzParams): the transpose of ND2NZ's source walk, the same NZ
    destination; SmallC0: 4-element rows (module docstring)."""
    core = current_core()
    name = "DataCopy(Dn2Nz)"
    _check_operands(core, name, dst, src, "DataCopy with Dn2NzParams")
    _check_dn2nz(core, name, MTE2, params)
    p = params
    size = src.dtype.itemsize
    if p.dnNum > 1:  # one matrix never uses the stride (the dx kernel passes 1 element then)
        _check_matrix_stride(core, name, p.dstNzMatrixStride, size)
    if p.dnNum == 0 or p.nValue == 0 or p.dValue == 0:
        core.issue(DATA_COPY_DN2NZ, MTE2, params)
        return
    if enableSmallC0:
        if p.dValue > SMALL_C0:
            raise core.fault(ParameterOutOfRange(
                f"dValue={p.dValue} with enableSmallC0: the SmallC0 mode takes dValue <= {SMALL_C0}"), name, MTE2)
        maps = _dn2nz_small_c0_maps(p.dnNum, p.nValue, p.dValue, p.srcDnMatrixStride, p.srcDValue,
                                    p.dstNzMatrixStride, BLOCK // size)
    else:
        maps = _dn2nz_maps(p.dnNum, p.nValue, p.dValue, p.srcDnMatrixStride, p.srcDValue, p.dstNzC0Stride,
                           p.dstNzNStride, p.dstNzMatrixStride, BLOCK // size)
    _issue(core, DATA_COPY_DN2NZ, dst, src, params, maps, p.dnNum * p.nValue * p.dValue * size,
           ((p.dnNum, p.dValue, p.nValue * size), (p.srcDnMatrixStride * size, p.srcDValue * size, 1)))


def copy_gm_to_l1_nd2nz_arch35(dst, src, params: Nd2NzParams) -> None:
    """DataCopy(L1, GM, Nd2NzParams) on arch 3510: the A2 semantics with the 3510 field ranges."""
    core = current_core()
    name = "DataCopy(Nd2Nz)"
    _check_operands(core, name, dst, src, "the 3510 Nd2NzParams")
    _check_nd2nz(core, name, MTE2, params)
    p = params
    size = src.dtype.itemsize
    _check_matrix_stride(core, name, p.dstNzMatrixStride, size)
    if p.ndNum == 0 or p.nValue == 0 or p.dValue == 0:
        core.issue(DATA_COPY_ND2NZ, MTE2, params)
        return
    maps = _nd2nz_maps(p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride, p.srcDValue, p.dstNzC0Stride,
                       p.dstNzNStride, p.dstNzMatrixStride, BLOCK // size)
    _issue(core, DATA_COPY_ND2NZ, dst, src, params, maps, p.ndNum * p.nValue * p.dValue * size,
           ((p.ndNum, p.nValue, p.dValue * size), (p.srcNdMatrixStride * size, p.srcDValue * size, 1)))


def _issue(core, spec, dst, src, params, maps, nbytes, gm_walk):
    dtype = src.dtype
    size = dtype.itemsize
    sspan, dspan = maps[3], maps[4]
    sbuf, dbuf, s0, d0 = src.buffer, dst.buffer, src.address, dst.address
    core.issue(spec, MTE2, params, ((sbuf, s0, s0 + sspan * size),), ((dbuf, d0, d0 + dspan * size),),
               Nd2NzOperands(sbuf, s0, dbuf, d0, dtype, maps, nbytes), "GM->L1", nbytes,
               footprint=((sbuf, s0, gm_walk[0], gm_walk[1], False),))
