"""`Fill(GlobalTensor<T>& gm, size, value)` (the adv API InitGlobalMemory): a vector core sets `size` elements of
GM to `value`.

Follows asc-devkit @ 82b89a15 impl/adv_api/detail/utils/init_global_memory/init_global_memory_v310_impl.h: on the
AIC it does nothing; on the AIV it takes the free UB (the stack buffer: the API may only be called before any
InitBuffer, so UB from address 0), Duplicates the value into min(UB, 255 repeats of 256 B) of it, orders MTE3
behind V (V_MTE3), writes the GM range with DataCopyPad in bursts of that size plus a tail, and ends with a PIPE_MTE3
barrier. [own rule] Duplicate takes no 8-bit type: an 8-bit Fill duplicates the value's byte pair as uint16.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.engine.chip import current_core
from ascend_sim.isa.sync import PipeBarrier, SetFlag, WaitFlag
from ascend_sim.isa.vector.datacopy import DataCopyExtParams, DataCopyPad
from ascend_sim.isa.vector.elementwise import Duplicate
from ascend_sim.machine.pipes import HardEvent, Pipe
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor

MAX_REPEAT_TIMES, MAX_REPEAT_LEN = 255, 256


def Fill(gmWorkspaceAddr: GlobalTensor, size: int, value) -> None:
    if not isinstance(gmWorkspaceAddr, GlobalTensor):
        raise TypeError(f"Fill(gmWorkspaceAddr, size, value): gmWorkspaceAddr must be a GlobalTensor, got "
                        f"{type(gmWorkspaceAddr).__name__}")
    core = current_core()
    if core.core_type.name == "AIC":
        return
    dtype = gmWorkspaceAddr.dtype
    ub = core.buffers["UB"]
    popBuffer = LocalTensor(ub, 0, dtype, ub.capacity // dtype.itemsize, "LCM")
    popSize = min(popBuffer.size, MAX_REPEAT_TIMES * MAX_REPEAT_LEN // dtype.itemsize)
    rounds, tail = divmod(int(size), popSize)
    if dtype.itemsize == 1:
        byte = int(np.array([value], dtype).view(np.uint8)[0])
        Duplicate(popBuffer.ReinterpretCast(np.uint16), np.uint16(byte * 257), -(-popSize // 2))
    else:
        Duplicate(popBuffer, value, popSize)
    SetFlag(HardEvent.V_MTE3, 0)
    WaitFlag(HardEvent.V_MTE3, 0)
    offset = 0
    for _ in range(rounds):
        DataCopyPad(gmWorkspaceAddr[offset], popBuffer, DataCopyExtParams(1, popSize * dtype.itemsize, 0, 0))
        offset += popSize
    if tail:
        DataCopyPad(gmWorkspaceAddr[offset], popBuffer, DataCopyExtParams(1, tail * dtype.itemsize, 0, 0))
    PipeBarrier(Pipe.MTE3)


InitGlobalMemory = Fill
