"""Cast on PIPE_V: element type conversion with a RoundMode, in the count form or the repeat form (a repeat is
256 B of the wider type: 64 elements when either side is 32-bit, else 128; each operand's elements fill its own
32 B blocks, so fp32 -> fp16 with contiguous strides is UnaryRepeatParams(1, 1, 4, 8)).

Pairs and modes: the A2 table of docs/zh/api/SIMD-API/基础API/Memory矢量计算/类型转换/Cast.md. CAST_NONE
means CAST_RINT where the conversion loses precision and no rounding where it does not; CAST_ODD rounds an
inexact result to the neighbour whose last mantissa bit is 1. Float -> integer results outside the integer
range saturate and NaN becomes 0, int32 -> int16 saturates: a modelling choice (the page does not say).
int32 -> half (with SetDeqScale) is not modelled and faults. On arch 3510 the 950 table's pairs with hifloat8 and
float8_e4m3fn are added (isa/arch35/cast_8bit.py).
"""
from __future__ import annotations

from enum import Enum
from functools import partial

import ml_dtypes
import numpy as np

from ascend_sim.isa.arch35.cast_8bit import EIGHT_BIT, PAIRS_3510, convert_8bit
from ascend_sim.isa.arch35.common import eight_bit_saturation, require_arch35
from ascend_sim.isa.vector.common import V, check_count, check_ub, current_core, vector_cost
from ascend_sim.isa.vector.elementwise import UNARY_RANGES, UnaryRepeatParams, check_params, issue_vector, run_on_plan
from ascend_sim.machine.dtypes import bfloat16
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.record import define


class RoundMode(Enum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_FLOOR = 2
    CAST_CEIL = 3
    CAST_ROUND = 4
    CAST_TRUNC = 5
    CAST_ODD = 6
    CAST_HYBRID = 7  # arch 3510, into hifloat8: a stochastic rounding (not modelled)


F16, F32, I16, I32 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.int16), np.dtype(np.int32)
_R = ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC")
PAIRS = {  # (src, dst) -> the round modes the A2 table lists
    (I16, F16): (*_R, "CAST_NONE"), (I16, F32): ("CAST_NONE",), (F16, I16): _R, (F16, I32): _R,
    (F16, F32): ("CAST_NONE",), (bfloat16, I32): _R, (bfloat16, F32): ("CAST_NONE",), (I32, I16): ("CAST_NONE",),
    (I32, F32): (*_R, "CAST_NONE"), (F32, I16): _R, (F32, F16): (*_R, "CAST_ODD", "CAST_NONE"), (F32, bfloat16): _R,
    (F32, I32): _R, (F32, F32): _R,
}


def _round_to_float(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    """x rounded into the float type dst: the nearest (ties to even) or a neighbour by the mode."""
    near = x.astype(dst)
    if mode in ("CAST_RINT", "CAST_NONE"):
        return near
    wide = x.astype(np.float64)
    back = near.astype(np.float64)
    down = np.where(back > wide, np.nextafter(near, np.array(-np.inf, dst)), near)
    up = np.where(back < wide, np.nextafter(near, np.array(np.inf, dst)), near)
    if mode == "CAST_FLOOR":
        return down
    if mode == "CAST_CEIL":
        return up
    if mode == "CAST_TRUNC":
        return np.where(wide >= 0, down, up)
    exact = back == wide
    if mode == "CAST_ROUND":  # nearest, ties away from zero; inf counts as 2^maxexp (IEEE overflow rule)
        beyond = 2.0 ** ml_dtypes.finfo(dst).maxexp
        d_down = wide - np.where(np.isinf(down), -beyond, down.astype(np.float64))
        d_up = np.where(np.isinf(up), beyond, up.astype(np.float64)) - wide
        away = np.where(wide >= 0, up, down)
        nearest = np.where(d_down < d_up, down, up)
        return np.where(exact, near, np.where(d_down == d_up, away, nearest))
    if mode == "CAST_ODD":
        bits = down.view(np.uint16 if dst.itemsize == 2 else np.uint32)
        return np.where(exact | np.isnan(wide), near, np.where(bits & 1, down, up))
    raise ValueError(mode)


def _round_to_int(x: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    wide = x.astype(np.float64)
    if mode == "CAST_ROUND":
        r = np.where(wide >= 0, np.floor(wide + 0.5), np.ceil(wide - 0.5))
    else:
        r = {"CAST_RINT": np.rint, "CAST_NONE": np.rint, "CAST_FLOOR": np.floor, "CAST_CEIL": np.ceil,
             "CAST_TRUNC": np.trunc}[mode](wide)
    info = np.iinfo(dst)
    r = np.clip(np.nan_to_num(r, nan=0.0), info.min, info.max)
    return r.astype(dst)


def convert(values: np.ndarray, dst: np.dtype, mode: str) -> np.ndarray:
    """The conversion of one Cast on an array of source elements."""
    with np.errstate(all="ignore"):
        if dst.kind == "i":
            if values.dtype.kind == "i":
                info = np.iinfo(dst)
                return np.clip(values, info.min, info.max).astype(dst)
            return _round_to_int(values, dst, mode)
        if values.dtype == dst:  # float -> float of the same type: round to an integral value
            return _round_to_int_valued(values, mode)
        return _round_to_float(values, dst, mode)


def _round_to_int_valued(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "CAST_ROUND":  # ties away from zero; x - trunc(x) is exact
        whole = np.trunc(x)
        return np.where(np.abs(x - whole) >= x.dtype.type(0.5), whole + np.sign(x), whole).astype(x.dtype)
    return {"CAST_RINT": np.rint, "CAST_FLOOR": np.floor, "CAST_CEIL": np.ceil, "CAST_TRUNC": np.trunc}[mode](x)


CAST = define("Cast", V, cost=vector_cost, execute=run_on_plan, params=UnaryRepeatParams,
              doc="dst = the src element converted to dst's type with a RoundMode.")


def Cast(dst, src, roundMode: RoundMode, *args, isSetMask: bool = True):
    """Cast(dst, src, roundMode, count) or Cast(dst, src, roundMode, mask, repeatTime, UnaryRepeatParams)."""
    core = current_core()
    name = "Cast"
    check_ub(core, name, V, dst, "dst")
    check_ub(core, name, V, src, "src")
    if not isinstance(roundMode, RoundMode):
        raise core.fault(ParameterOutOfRange(f"roundMode={roundMode!r} is not a RoundMode"), name, V)
    modes, conversion = PAIRS.get((src.dtype, dst.dtype)), convert
    if src.dtype in EIGHT_BIT or dst.dtype in EIGHT_BIT:  # the 950's 8-bit pairs (isa/arch35/cast_8bit.py)
        require_arch35(core, name, V, f"Cast from {src.dtype} to {dst.dtype}")
        modes, conversion = PAIRS_3510.get((src.dtype, dst.dtype)), convert_8bit
    if modes is None:
        raise core.fault(ParameterOutOfRange(
            f"Cast from {src.dtype} to {dst.dtype} is not an A2/A3 pair (int32 -> half with SetDeqScale is not "
            "modelled)"), name, V)
    mode = roundMode.name
    if mode not in modes:
        raise core.fault(ParameterOutOfRange(f"Cast {src.dtype} -> {dst.dtype} takes roundMode "
                                             f"{'/'.join(modes)}, not {mode}"), name, V)
    if mode == "CAST_HYBRID":
        raise core.fault(ParameterOutOfRange("roundMode=CAST_HYBRID (a stochastic rounding) is not modelled"), name, V)
    target = dst.dtype
    fn = partial(conversion, dst=target, mode=mode)
    ctrl = ()
    if target.itemsize == 1:  # an 8-bit encode saturates as CTRL says now (carried in fn, CTRL recorded)
        saturation, ctrl = eight_bit_saturation(core, name, V, target)
        fn = partial(conversion, dst=target, mode=mode, saturation=saturation)
    if len(args) == 1:
        count = check_count(core, name, args[0])
        # a repeat is 256 B of the wider type: the narrower side's repeats are 4 blocks apart (CastImpl's
        # count form in impl/basic_api/dav_c220/kernel_operator_vec_vconv_impl.h; int4 is not modelled), 2 blocks
        # for an 8-bit side of a 32-bit one
        wide = max(dst.dtype.itemsize, src.dtype.itemsize)
        strides = ((1, 8 * dst.dtype.itemsize // wide), (1, 8 * src.dtype.itemsize // wide))
        return issue_vector(core, CAST, name, {"count": count, "roundMode": mode}, (dst, src), strides, fn, None,
                            None, False, src.dtype if src.dtype.itemsize >= dst.dtype.itemsize else dst.dtype,
                            count=count, read_registers=ctrl)
    if len(args) != 3:
        raise TypeError("Cast takes (dst, src, roundMode, count) or (dst, src, roundMode, mask, repeatTime, "
                        "repeatParams)")
    mask, repeat_time, p = args
    check_params(core, name, p, UnaryRepeatParams, UNARY_RANGES)
    return issue_vector(core, CAST, name, p, (dst, src),
                        ((p.dstBlkStride, p.dstRepStride), (p.srcBlkStride, p.srcRepStride)), fn, repeat_time, mask,
                        isSetMask, src.dtype if src.dtype.itemsize >= dst.dtype.itemsize else dst.dtype,
                        read_registers=ctrl)


__all__ = ["RoundMode", "Cast"]
