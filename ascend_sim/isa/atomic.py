"""The atomic-add register: SetAtomicAdd<T>() / SetAtomicNone() (PIPE_S register writes).

While it is set, every transfer into GM from L0C (Fixpipe), L1 or UB adds its values to what GM holds instead
of overwriting them (asc-devkit docs: 基础API/原子操作/SetAtomicAdd.md, C-API asc_set_atomic_add.md). The
stores that honour it record the register value (`registers`), and their semantics read it from the record.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.common import current_core
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define

ATOMIC = "atomic"  # register name; its value is the dtype name of the adds, or None
ATOMIC_WRITE = "atomic"  # footprint kind of an atomic-add store: atomic adds of different cores commute

SET_ATOMIC_ADD = define("SetAtomicAdd", Pipe.S, kind=Kind.REGISTER_WRITE,
                        doc="Make later stores into GM atomic adds of type T.")
SET_ATOMIC_NONE = define("SetAtomicNone", Pipe.S, kind=Kind.REGISTER_WRITE,
                         doc="Make later stores into GM plain writes again.")

# int8/int16/int32 adds exist on the hardware too; only the float types the kernels here use are modelled
_ATOMIC_TYPES = ("float32", "float16", "bfloat16")


def SetAtomicAdd(dtype) -> None:
    """SetAtomicAdd<T>(): later GM stores (Fixpipe, L1 -> GM DataCopy) add into GM."""
    core = current_core()
    name = np.dtype(dtype).name
    if name not in _ATOMIC_TYPES:
        raise core.fault(ParameterOutOfRange(f"SetAtomicAdd<{name}>: modelled types are {_ATOMIC_TYPES}"),
                         "SetAtomicAdd", Pipe.S)
    core.write_register(SET_ATOMIC_ADD, ATOMIC, name)


def SetAtomicNone() -> None:
    current_core().write_register(SET_ATOMIC_NONE, ATOMIC, None)


def atomic_register(core, name: str, pipe, dst_dtype) -> tuple:
    """The store's `registers` entry: (("atomic", dtype name or None),). Faults when an atomic add of another
    type is set (the hardware would add the bytes as the wrong type)."""
    mode = core.registers.get(ATOMIC)
    if mode is not None:
        got = np.dtype(dst_dtype).name
        if got != mode:
            raise core.fault(ParameterOutOfRange(
                f"SetAtomicAdd<{mode}> is set but the store writes {got}: call SetAtomicAdd<{got}> or "
                "SetAtomicNone first"), name, pipe)
    return ((ATOMIC, mode),)


def store(rec, dst: np.ndarray, values) -> None:
    """dst = values, or dst += values under SetAtomicAdd (one rounding: 16-bit sums are exact in float64)."""
    if rec.registers[0][1] is None:
        dst[...] = values
    elif dst.dtype.itemsize == 4:
        dst += values
    else:
        dst[...] = (dst.astype(np.float64) + np.asarray(values, np.float64)).astype(dst.dtype)
