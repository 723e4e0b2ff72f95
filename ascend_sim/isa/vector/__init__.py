"""The vector core (AIV) instruction set: UB data movement (MTE2 / MTE3) and the PIPE_V instructions."""
from __future__ import annotations

from ascend_sim.isa.vector.cast import Cast, RoundMode
from ascend_sim.isa.vector.common import MASK_PLACEHOLDER
from ascend_sim.isa.vector.datacopy import (DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, PaddingMode,
                                            copy_ub, copy_ub_contiguous)
from ascend_sim.isa.vector.elementwise import (Abs, Add, Adds, BinaryRepeatParams, Div, Duplicate, Exp, Ln, Max, Maxs,
                                               Min, Mins, Mul, Muls, Relu, Sub, UnaryRepeatParams)
from ascend_sim.isa.vector.init_global_memory import Fill, InitGlobalMemory
from ascend_sim.isa.vector.mask import ResetMask, SetMaskCount, SetMaskNorm, SetVectorMask
from ascend_sim.isa.vector.reduce import (BlockReduceMax, BlockReduceMin, BlockReduceSum, ReduceMax, ReduceOrder,
                                          ReduceSum, ReduceType, WholeReduceMax, WholeReduceMin, WholeReduceSum)
from ascend_sim.isa.vector.set_value import SetValue
from ascend_sim.isa.vector.transdata import TransDataTo5HD, TransDataTo5HDParams

__all__ = ["Cast", "RoundMode", "MASK_PLACEHOLDER", "DataCopyExtParams", "DataCopyPad", "DataCopyPadExtParams", "PaddingMode",
           "copy_ub",
           "copy_ub_contiguous", "Abs", "Add", "Adds", "BinaryRepeatParams", "Div", "Duplicate", "Exp", "Ln", "Max",
           "Maxs", "Min", "Mins", "Mul", "Muls", "Relu", "Sub", "UnaryRepeatParams", "ResetMask", "SetMaskCount",
           "SetMaskNorm", "SetVectorMask", "BlockReduceMax", "BlockReduceMin", "BlockReduceSum", "ReduceMax",
           "ReduceOrder", "ReduceSum", "ReduceType", "WholeReduceMax", "WholeReduceMin", "WholeReduceSum",
           "TransDataTo5HD", "TransDataTo5HDParams", "SetValue",
           "Fill", "InitGlobalMemory"]
