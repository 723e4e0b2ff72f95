"""The mask registers of the vector core as scalar-pipe register writes: SetVectorMask, SetMaskCount,
SetMaskNorm, ResetMask (docs/zh/api/SIMD-API/基础API/Memory矢量计算/掩码操作/). An instruction issued with
isSetMask=False reads them; one issued with isSetMask=True sets the mask word itself first, as
AscendCUtils::SetMask does in asc-devkit."""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.common import check_range, current_core
from ascend_sim.isa.vector.common import COUNT, FULL_MASK, NORM, V
from ascend_sim.record import Kind, define

SET_VECTOR_MASK = define("SetVectorMask", kind=Kind.REGISTER_WRITE,
                         doc="Write the 128-bit vector mask (high, low) or a count.")
SET_MASK_MODE = define("SetMaskMode", kind=Kind.REGISTER_WRITE,
                       doc="SetMaskCount / SetMaskNorm: Counter or Normal mask mode.")


def SetVectorMask(*args, dtype=np.float16) -> None:
    """SetVectorMask(maskHigh, maskLow) writes the 128 mask bits; SetVectorMask(len) (SetVectorMask<T>(len))
    sets the low `len` bits in Normal mode (a full repeat from the repeat size on), the count in Counter mode."""
    core = current_core()
    name = "SetVectorMask"
    if len(args) == 2:
        hi, lo = (int(a) for a in args)
        check_range(core, name, V, "maskHigh", hi, 0, FULL_MASK)
        check_range(core, name, V, "maskLow", lo, 0, FULL_MASK)
    elif len(args) == 1:
        length = int(args[0])
        if core.registers.get("mask_mode", NORM) == COUNT:
            check_range(core, name, V, "len", length, 0, FULL_MASK)
            hi, lo = 0, length
        else:
            per_repeat = 256 // np.dtype(dtype).itemsize
            check_range(core, name, V, "len", length, 0, 2**31 - 1)
            m = min(length, per_repeat)
            hi, lo = ((1 << (m - 64)) - 1) if m > 64 else 0, (1 << min(m, 64)) - 1
    else:
        raise TypeError("SetVectorMask takes (maskHigh, maskLow) or (len)")
    core.write_register(SET_VECTOR_MASK, "vector_mask", (hi, lo))


def SetMaskCount() -> None:
    """Counter mode: the low mask word counts the elements of the next instructions; repeatTime is ignored."""
    current_core().write_register(SET_MASK_MODE, "mask_mode", COUNT)


def SetMaskNorm() -> None:
    """Normal mode (the default): the mask selects elements in every repeat."""
    current_core().write_register(SET_MASK_MODE, "mask_mode", NORM)


def ResetMask() -> None:
    """Every mask bit set again."""
    current_core().write_register(SET_VECTOR_MASK, "vector_mask", (FULL_MASK, FULL_MASK))


__all__ = ["SetVectorMask", "SetMaskCount", "SetMaskNorm", "ResetMask"]
