"""The loop mode of the 950's GM <-> UB copies: SetLoopModePara / ResetLoopModePara (PIPE_S register writes).

SetLoopModePara(loopParams, type) makes every later DataCopyPad of that direction run its blockCount x blockLen copy
loop2Size x loop1Size times, the source and destination moving loop1SrcStride / loop1DstStride bytes per inner
iteration and loop2SrcStride / loop2DstStride per outer one; ResetLoopModePara(type) puts the register back to
"normal" (one iteration of each loop), which the kernel must do after the copies.

Sources: asc-devkit 82b89a15 docs/zh/api/SIMD-API/基础API/Memory矢量计算/数据搬运辅助配置接口/SetLoopModePara.md
(LoopModeParams, DataCopyMVType, ranges: loop sizes below 2^21; the UB side's strides below 2^21 and 32-byte
aligned, the GM side's below 2^40; "the 950 only"), ResetLoopModePara.md, and the dav_3510 implementation
(impl/basic_api/dav_3510/kernel_operator_data_copy_impl.h: SetLoopModeUBParaImpl writes LOOP_SIZE_UBTOOUT[42:21] =
loop2Size, [20:0] = loop1Size and the stride registers; ResetUBLoopModeParaImpl writes loop sizes 1 and 1, "硬件约定
置1为normal"). A core starts in normal mode. The register is one per direction: UB_TO_OUT for the MTE3 copies,
OUT_TO_UB for the MTE2 ones.

Modelled: DataCopyPad UB -> GM (Normal and Compact) and GM -> UB (Normal, with its padding) in loop mode. Not
modelled (a fault says so): a GM -> UB DataCopyPad in Compact mode, or a DataCopy (not Pad), issued while its
direction's loop mode is on. The arch35 dx kernel's C04 weight load (LoadUb4C04) sets OUT_TO_UB with both loop
sizes 1, the normal value, and never resets it.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ascend_sim.isa.arch35.common import require_arch35
from ascend_sim.isa.common import check_fields, current_core
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define


class DataCopyMVType(Enum):
    UB_TO_OUT = 0
    OUT_TO_UB = 1


@dataclass(slots=True)
class LoopModeParams:
    loop1Size: int = 0
    loop2Size: int = 0
    loop1SrcStride: int = 0
    loop1DstStride: int = 0
    loop2SrcStride: int = 0
    loop2DstStride: int = 0


NORMAL = (1, 1, 0, 0, 0, 0)  # the reset value: one iteration of each loop
_REGISTER = {DataCopyMVType.UB_TO_OUT: "loop_mode_ubtoout", DataCopyMVType.OUT_TO_UB: "loop_mode_outtoub"}
_UB_STRIDE = (0, 2**21 - 1)
_GM_STRIDE = (0, 2**40 - 1)
_SIZE = (0, 2**21 - 1)
# the UB side of each direction: its strides are short and 32-byte aligned
_RANGES = {
    DataCopyMVType.UB_TO_OUT: {"loop1Size": _SIZE, "loop2Size": _SIZE, "loop1SrcStride": _UB_STRIDE,
                               "loop2SrcStride": _UB_STRIDE, "loop1DstStride": _GM_STRIDE,
                               "loop2DstStride": _GM_STRIDE},
    DataCopyMVType.OUT_TO_UB: {"loop1Size": _SIZE, "loop2Size": _SIZE, "loop1SrcStride": _GM_STRIDE,
                               "loop2SrcStride": _GM_STRIDE, "loop1DstStride": _UB_STRIDE,
                               "loop2DstStride": _UB_STRIDE},
}
_UB_SIDE = {DataCopyMVType.UB_TO_OUT: ("loop1SrcStride", "loop2SrcStride"),
            DataCopyMVType.OUT_TO_UB: ("loop1DstStride", "loop2DstStride")}

SET_LOOP_MODE_PARA = define("SetLoopModePara", Pipe.S, kind=Kind.REGISTER_WRITE,
                            doc="Turn on the loop mode of the GM <-> UB copies of one direction (arch 3510).")
RESET_LOOP_MODE_PARA = define("ResetLoopModePara", Pipe.S, kind=Kind.REGISTER_WRITE,
                              doc="Put the loop mode register of one direction back to normal (arch 3510).")


def _check_type(core, name: str, type) -> None:
    if not isinstance(type, DataCopyMVType):
        raise core.fault(ParameterOutOfRange(f"type={type!r} is not a DataCopyMVType (UB_TO_OUT or OUT_TO_UB)"),
                         name, Pipe.S)


def SetLoopModePara(loopParams: LoopModeParams, type: DataCopyMVType) -> None:
    core = current_core()
    name = "SetLoopModePara"
    require_arch35(core, name, Pipe.S, name)
    _check_type(core, name, type)
    check_fields(core, name, Pipe.S, loopParams, _RANGES[type])
    for field in _UB_SIDE[type]:
        value = getattr(loopParams, field)
        if value % 32:
            raise core.fault(ParameterOutOfRange(
                f"{field}={value} is not a multiple of 32 bytes (the UB side of {type.name} must be 32-byte "
                "aligned)"), name, Pipe.S)
    p = loopParams
    core.write_register(SET_LOOP_MODE_PARA, _REGISTER[type], (p.loop1Size, p.loop2Size, p.loop1SrcStride,
                                                              p.loop1DstStride, p.loop2SrcStride, p.loop2DstStride))


def ResetLoopModePara(type: DataCopyMVType) -> None:
    core = current_core()
    name = "ResetLoopModePara"
    require_arch35(core, name, Pipe.S, name)
    _check_type(core, name, type)
    core.write_register(RESET_LOOP_MODE_PARA, _REGISTER[type], NORMAL)


def loop_mode(core, type: DataCopyMVType) -> tuple:
    """The (loop1Size, loop2Size, loop1SrcStride, loop1DstStride, loop2SrcStride, loop2DstStride) a copy of this
    direction runs with now (NORMAL when it was never set or was reset)."""
    return core.registers.get(_REGISTER[type], NORMAL)


def refuse_loop_mode(core, type: DataCopyMVType, name: str, pipe) -> None:
    """Fault by name when a copy that does not model the loop mode issues while it is on."""
    if loop_mode(core, type)[:2] != (1, 1):
        raise core.fault(ParameterOutOfRange(
            f"{name} while SetLoopModePara({type.name}) is on (loop sizes {loop_mode(core, type)[:2]}): the loop "
            "mode is modelled for DataCopyPad (Normal both ways, Compact UB -> GM) only; call ResetLoopModePara "
            "first"), name, pipe)


__all__ = ["DataCopyMVType", "LoopModeParams", "SetLoopModePara", "ResetLoopModePara"]
