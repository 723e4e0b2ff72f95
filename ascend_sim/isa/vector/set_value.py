"""`LocalTensor::SetValue(index, value)` on a UB tensor: the scalar unit stores one element into UB, written as
`SetValue(tensor, index, value)` (the simulator's LocalTensor has no instruction methods: machine/ sits below isa/).

Source: asc-devkit 82b89a15 docs/zh/api/SIMD-API/数据结构/LocalTensor/ (SetValue: a scalar write, to be ordered
before a vector read by SetFlag / WaitFlag<HardEvent::S_V>). One PIPE_S instruction, [own rule] costing one cycle.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.isa.common import current_core
from ascend_sim.isa.vector.common import check_in_ub
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define, operands_type

S = Pipe.S
SetValueOperands = operands_type("SetValueOperands", "buf address value", "buf at address = value (one element).")


def _execute(rec) -> None:
    buf, address, value = rec.args
    buf.view(value.dtype, address, 1)[0] = value


SET_VALUE = define("SetValue", S, kind=Kind.MOVE, operands=SetValueOperands, cost=lambda ops, model: 1.0,
                   execute=_execute, doc="UB element = a scalar, from the scalar unit.")


def SetValue(tensor, index: int, value) -> None:
    """tensor.SetValue(index, value): element `index` of a UB LocalTensor."""
    core = current_core()
    name = SET_VALUE.name
    check_in_ub(core, name, S, tensor, "tensor")
    if not 0 <= int(index) < tensor.size:
        raise core.fault(ParameterOutOfRange(f"index={index} outside [0, {tensor.size}) of the tensor"), name, S)
    address = tensor.address + int(index) * tensor.dtype.itemsize
    scalar = np.asarray(value).astype(tensor.dtype)[()]
    core.issue(SET_VALUE, S, {"index": int(index), "value": scalar.item()}, (),
               ((tensor.buffer, address, address + tensor.dtype.itemsize),),
               SetValueOperands(tensor.buffer, address, scalar))


__all__ = ["SetValue"]
