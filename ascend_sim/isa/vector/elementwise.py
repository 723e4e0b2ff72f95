"""Element-wise vector instructions on PIPE_V: binary (Add, Sub, Mul, Div, Max, Min), binary with a scalar
(Adds, Muls, Maxs, Mins), unary (Exp, Ln, Abs, Relu) and Duplicate, each in its two API forms:

* the count form, `Add(dst, src0, src1, count)`: the first `count` elements, contiguous. On dav_c220 this is
  one instruction in Counter mode with default strides (SetMaskCount; SetVectorMask(0, count); vadd(..., 1,
  1, 1, 1, 8, 8, 8); SetMaskNorm; mask reset to all ones: impl/basic_api/dav_c220/kernel_operator_vec_*_impl.h);
* the repeat form, `Add(dst, src0, src1, mask, repeatTime, BinaryRepeatParams)`: repeatTime repeats of 8
  DataBlocks, with a continuous mask (a count per repeat) or a bit mask (uint64_t mask[2] = [low, high]).
  `isSetMask=False` leaves the mask registers as SetVectorMask / SetMaskCount set them.

Dtypes: the A2/A3 lists of each API page (asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/基础算术/).
Integer results wrap (two's complement), a modelling choice: the pages do not say.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.isa.common import check_range
from ascend_sim.isa.vector.common import (V, check_count, check_dtype, check_element_count, check_same_dtype, check_ub,
                                          current_core, elements_per_repeat, make_plan, run_elementwise, selection,
                                          set_mask, vector_cost)
from ascend_sim.machine.dtypes import bfloat16
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.record import define

F16, F32, I16, I32 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.int32)
U16, U32 = np.dtype(np.uint16), np.dtype(np.uint32)
ARITH = frozenset((F16, F32, I16, I32))  # Add/Sub/Mul/Max/Min and the scalar forms on A2/A3
FLOAT = frozenset((F16, F32))


@dataclass(slots=True)
class BinaryRepeatParams:
    """Strides of a binary instruction: per operand, DataBlocks between the blocks of one repeat (BlkStride)
    and between the first blocks of consecutive repeats (RepStride). Defaults: contiguous (1 and 8)."""

    dstBlkStride: int = 1
    src0BlkStride: int = 1
    src1BlkStride: int = 1
    dstRepStride: int = 8
    src0RepStride: int = 8
    src1RepStride: int = 8
    blockNumber: int = 8  # reserved (kernel_struct_binary.h)
    repeatStrideMode: bool = False  # reserved
    strideSizeMode: bool = False  # reserved


@dataclass(slots=True)
class UnaryRepeatParams:
    """Strides of a unary instruction (block strides are uint16_t, repeat strides uint8_t)."""

    dstBlkStride: int = 1
    srcBlkStride: int = 1
    dstRepStride: int = 8
    srcRepStride: int = 8
    halfBlock: bool = False  # CastDequant only
    blockNumber: int = 8  # reserved
    repeatStrideMode: bool = False  # reserved
    strideSizeMode: bool = False  # reserved


BINARY_RANGES = {f: (0, 255) for f in ("dstBlkStride", "src0BlkStride", "src1BlkStride", "dstRepStride",
                                         "src0RepStride", "src1RepStride")}
UNARY_RANGES = {"dstBlkStride": (0, 65535), "srcBlkStride": (0, 65535), "dstRepStride": (0, 255),
                 "srcRepStride": (0, 255)}


def run_on_plan(rec) -> None:
    """The semantics of every instruction built by issue_vector: fn over the plan's selected elements."""
    fn, plan, operands, _ = rec.args
    run_elementwise(plan, operands, fn)


def check_params(core, name, params, kind, ranges) -> None:
    if not isinstance(params, kind):
        raise TypeError(f"{name}: repeatParams must be a {kind.__name__}, got {type(params).__name__}")
    for field, (lo, hi) in ranges.items():
        check_range(core, name, V, field, getattr(params, field), lo, hi)
    # 高维切分.md: "dstBlkStride 不支持设置为0 ... 可能产生未定义行为"
    check_range(core, name, V, "dstBlkStride", params.dstBlkStride, 1, ranges["dstBlkStride"][1])


def issue_vector(core, spec, name, params, tensors, strides, fn, repeat_time, mask, is_set_mask, dtype, count=None,
                 read_registers=()):
    """Issue one vector instruction over `tensors` (dst first) with (blk, rep) `strides` per tensor: the count
    form when `count` is given, else the repeat form with its mask. read_registers: other registers the
    instruction's result depends on ((name, value) pairs), recorded after the mask's."""
    per_repeat = elements_per_repeat(*(t.dtype for t in tensors))
    if count is not None:  # the count form: Counter mode, default strides unless given, mask restored after
        check_element_count(core, name, count, per_repeat)
        repeats, key = -(-count // per_repeat), ("count", count)
        strides = strides or tuple((1, 8) for _ in tensors)
        registers = (("mask_mode", "COUNT"), ("vector_mask", (0, count)))
    else:
        check_range(core, name, V, "repeatTime", repeat_time, 0, 255)
        if is_set_mask:
            set_mask(core, name, mask, per_repeat)
        repeats, key = selection(core, name, repeat_time, per_repeat)
        registers = (("mask_mode", core.registers.get("mask_mode", "NORM")),
                     ("vector_mask", core.registers.get("vector_mask")))
    registers += read_registers
    plan = make_plan(repeats, per_repeat, key, tuple((t.address, t.dtype.itemsize, blk, rep)
                                                      for t, (blk, rep) in zip(tensors, strides))) \
        if repeats > 0 else None
    if plan is None:  # count 0, repeatTime 0 or an empty mask: a NOP that takes its issue slot
        core.issue(spec, V, params, registers=registers)
        return None
    _check_overlaps(core, name, plan, tensors, params, dtype)
    bufs = [t.buffer for t in tensors]
    reads = tuple((b, lo, hi) for b, (lo, hi) in zip(bufs[1:], plan.byte_ranges[1:]))
    writes = ((bufs[0], *plan.byte_ranges[0]),)
    operands = tuple((t.buffer, t.address, t.dtype) for t in tensors)
    timing = (name, dtype, repeats, per_repeat)  # priced by vector_cost on the run's platform
    return core.issue(spec, V, params, reads, writes, (fn, plan, operands, timing), registers=registers)


# 通用说明和约束.md (通用地址重叠约束): across repeats, only these may read in a later repeat what an earlier one
# wrote, and only through src1 with src1RepStride or dstRepStride 0 (the accumulate pattern)
_ACCUMULATE = frozenset(("Add", "Sub", "Mul", "Max", "Min"))
_ACCUMULATE_DTYPES = frozenset((F16, F32, I32))


def _check_overlaps(core, name, plan, tensors, params, dtype) -> None:
    """Fault on the overlaps 通用说明和约束.md does not support: dst meeting a source in part within a repeat, or
    a later repeat reading what an earlier repeat's dst wrote (outside the accumulate exception)."""
    roles = ["src"] if len(tensors) == 2 else [f"src{i}" for i in range(len(tensors) - 1)]
    if plan.partial_overlap is not None:
        r, i = plan.partial_overlap
        raise core.fault(ParameterOutOfRange(
            f"repeat {r}: dst overlaps {roles[i]} only in part (within a repeat dst and a source must overlap "
            "100% or not at all)", buffer=tensors[0].buffer.name, addr_range=plan.byte_ranges[0]), name, V)
    if plan.later_reads:
        allowed = (name in _ACCUMULATE and dtype in _ACCUMULATE_DTYPES and plan.later_reads == (1,)
                   and (getattr(params, "src1RepStride", None) == 0 or getattr(params, "dstRepStride", None) == 0))
        if not allowed:
            raise core.fault(ParameterOutOfRange(
                f"a later repeat reads {roles[plan.later_reads[0]]} where an earlier repeat wrote dst (unsupported "
                "except Add/Sub/Mul/Max/Min of half/float/int32 through src1 with src1RepStride or dstRepStride 0)",
                buffer=tensors[0].buffer.name, addr_range=plan.byte_ranges[0]), name, V)


# ------------------------------------------------------------------------------------------ the instructions
def _wrap(ufunc):
    def apply(*xs):
        with np.errstate(all="ignore"):
            return ufunc(*xs)
    return apply


_BINARY = {"Add": (np.add, ARITH), "Sub": (np.subtract, ARITH), "Mul": (np.multiply, ARITH),
           "Div": (np.divide, FLOAT), "Max": (np.maximum, ARITH), "Min": (np.minimum, ARITH)}
_SCALAR = {"Adds": (np.add, ARITH), "Muls": (np.multiply, ARITH), "Maxs": (np.maximum, ARITH),
           "Mins": (np.minimum, ARITH)}
_UNARY = {"Exp": (np.exp, FLOAT), "Ln": (np.log, FLOAT), "Abs": (np.abs, FLOAT),
          "Relu": (lambda x: np.maximum(x, np.zeros((), x.dtype)), frozenset((F16, F32, I32)))}
_DOCS = {"Add": "dst = src0 + src1", "Sub": "dst = src0 - src1", "Mul": "dst = src0 * src1",
         "Div": "dst = src0 / src1", "Max": "dst = max(src0, src1)", "Min": "dst = min(src0, src1)",
         "Adds": "dst = src + scalar", "Muls": "dst = src * scalar", "Maxs": "dst = max(src, scalar)",
         "Mins": "dst = min(src, scalar)", "Exp": "dst = e^src", "Ln": "dst = ln(src)", "Abs": "dst = |src|",
         "Relu": "dst = max(src, 0)", "Duplicate": "dst = scalar"}
SPECS = {name: define(name, V, cost=vector_cost, execute=run_on_plan,
                      params=UnaryRepeatParams if name in _SCALAR or name in _UNARY else BinaryRepeatParams,
                      doc=_DOCS[name])
         for name in (*_BINARY, *_SCALAR, *_UNARY)}
SPECS["Duplicate"] = define("Duplicate", V, cost=vector_cost, execute=run_on_plan, doc=_DOCS["Duplicate"])


def _binary(name):
    ufunc, dtypes = _BINARY[name]
    fn = _wrap(ufunc)

    def api(dst, src0, src1, *args, isSetMask: bool = True):
        core = current_core()
        for t, role in ((dst, "dst"), (src0, "src0"), (src1, "src1")):
            check_ub(core, name, V, t, role)
        check_dtype(core, name, dst, dtypes)
        check_same_dtype(core, name, dst, src0, src1)
        if len(args) == 1:
            count = check_count(core, name, args[0])
            return issue_vector(core, SPECS[name], name, {"count": count}, (dst, src0, src1), None, fn, None,
                                None, False, dst.dtype, count=count)
        mask, repeat_time, p = _level0_args(name, args)
        check_params(core, name, p, BinaryRepeatParams, BINARY_RANGES)
        strides = ((p.dstBlkStride, p.dstRepStride), (p.src0BlkStride, p.src0RepStride),
                   (p.src1BlkStride, p.src1RepStride))
        return issue_vector(core, SPECS[name], name, p, (dst, src0, src1), strides, fn, repeat_time, mask,
                            isSetMask, dst.dtype)
    api.__name__ = api.__qualname__ = name
    api.__doc__ = f"{name}: {_DOCS[name]} (count form or mask/repeatTime/BinaryRepeatParams form)."
    return api


def _scalar(name):
    ufunc, dtypes = _SCALAR[name]

    def api(dst, src, scalarValue, *args, isSetMask: bool = True):
        core = current_core()
        check_ub(core, name, V, dst, "dst")
        check_ub(core, name, V, src, "src")
        check_dtype(core, name, dst, dtypes)
        check_same_dtype(core, name, dst, src)
        scalar = _as_scalar(core, name, scalarValue, dst.dtype)
        fn = _wrap(lambda x: ufunc(x, scalar))
        if len(args) == 1:
            count = check_count(core, name, args[0])
            return issue_vector(core, SPECS[name], name, {"count": count, "scalarValue": scalar.item()},
                                (dst, src), None, fn, None, None, False, dst.dtype, count=count)
        mask, repeat_time, p = _level0_args(name, args)
        check_params(core, name, p, UnaryRepeatParams, UNARY_RANGES)
        return issue_vector(core, SPECS[name], name, p, (dst, src),
                            ((p.dstBlkStride, p.dstRepStride), (p.srcBlkStride, p.srcRepStride)), fn, repeat_time,
                            mask, isSetMask, dst.dtype)
    api.__name__ = api.__qualname__ = name
    api.__doc__ = f"{name}: {_DOCS[name]} (count form or mask/repeatTime/UnaryRepeatParams form)."
    return api


def _unary(name):
    ufunc, dtypes = _UNARY[name]
    fn = _wrap(ufunc)

    def api(dst, src, *args, isSetMask: bool = True):
        core = current_core()
        check_ub(core, name, V, dst, "dst")
        check_ub(core, name, V, src, "src")
        check_dtype(core, name, dst, dtypes)
        check_same_dtype(core, name, dst, src)
        if len(args) == 1:
            count = check_count(core, name, args[0])
            return issue_vector(core, SPECS[name], name, {"count": count}, (dst, src), None, fn, None, None, False,
                                dst.dtype, count=count)
        mask, repeat_time, p = _level0_args(name, args)
        check_params(core, name, p, UnaryRepeatParams, UNARY_RANGES)
        return issue_vector(core, SPECS[name], name, p, (dst, src),
                            ((p.dstBlkStride, p.dstRepStride), (p.srcBlkStride, p.srcRepStride)), fn, repeat_time,
                            mask, isSetMask, dst.dtype)
    api.__name__ = api.__qualname__ = name
    api.__doc__ = f"{name}: {_DOCS[name]} (count form or mask/repeatTime/UnaryRepeatParams form)."
    return api


def _level0_args(name, args):
    if len(args) != 3:
        raise TypeError(f"{name} takes (..., count) or (..., mask, repeatTime, repeatParams); got {len(args)} "
                        "trailing arguments")
    return args


def _as_scalar(core, name, value, dtype):
    """The scalar in the operands' type (as the C++ template argument T converts it)."""
    try:
        with np.errstate(all="ignore"):
            return np.asarray(value).astype(dtype)
    except (TypeError, ValueError):
        raise core.fault(ParameterOutOfRange(f"scalarValue={value!r} is not a {dtype} value"), name, V) from None


Add, Sub, Mul, Div, Max, Min = (_binary(n) for n in ("Add", "Sub", "Mul", "Div", "Max", "Min"))
Adds, Muls, Maxs, Mins = (_scalar(n) for n in ("Adds", "Muls", "Maxs", "Mins"))
Exp, Ln, Abs, Relu = (_unary(n) for n in ("Exp", "Ln", "Abs", "Relu"))

DUPLICATE_DTYPES = frozenset((F16, bfloat16, I16, U16, F32, I32, U32))  # Duplicate.md, A2/A3


def Duplicate(dst, scalarValue, *args, isSetMask: bool = True):
    """dst = scalarValue: Duplicate(dst, value, count) or Duplicate(dst, value, mask, repeatTime, dstBlockStride,
    dstRepeatStride)."""
    core = current_core()
    name = "Duplicate"
    check_ub(core, name, V, dst, "dst")
    check_dtype(core, name, dst, DUPLICATE_DTYPES)
    scalar = _as_scalar(core, name, scalarValue, dst.dtype)
    def fn():  # broadcast into the selected elements
        return scalar
    if len(args) == 1:
        count = check_count(core, name, args[0])
        return issue_vector(core, SPECS[name], name, {"count": count, "scalarValue": scalar.item()}, (dst,), None,
                            fn, None, None, False, dst.dtype, count=count)
    if len(args) != 4:
        raise TypeError("Duplicate takes (dst, value, count) or (dst, value, mask, repeatTime, dstBlockStride, "
                        "dstRepeatStride)")
    mask, repeat_time, blk, rep = args
    check_range(core, name, V, "dstBlockStride", blk, 1, 65535)
    check_range(core, name, V, "dstRepeatStride", rep, 0, 255)
    params = {"dstBlockStride": blk, "dstRepeatStride": rep, "scalarValue": scalar.item()}
    return issue_vector(core, SPECS[name], name, params, (dst,), ((blk, rep),), fn, repeat_time, mask, isSetMask,
                        dst.dtype)


__all__ = ["BinaryRepeatParams", "UnaryRepeatParams", "Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls",
           "Maxs", "Mins", "Exp", "Ln", "Abs", "Relu", "Duplicate", "issue_vector", "check_params", "run_on_plan",
           "BINARY_RANGES", "UNARY_RANGES"]
