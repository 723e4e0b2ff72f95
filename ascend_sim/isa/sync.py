"""SetFlag / WaitFlag / PipeBarrier inside a core, SyncAll across cores, and the block index queries."""
from __future__ import annotations

from ascend_sim.engine.chip import current_core
from ascend_sim.machine.faults import ParameterOutOfRange, SyncFault
from ascend_sim.machine.pipes import HardEvent, Pipe
from ascend_sim.record import define


def SetFlag(event: HardEvent, event_id: int = 0) -> None:
    """Set flag (src, dst, id) once every earlier instruction of the source pipe has completed."""
    current_core().set_flag(event, event_id)


def WaitFlag(event: HardEvent, event_id: int = 0) -> None:
    """Block the destination pipe until the flag is set, then clear it."""
    current_core().wait_flag(event, event_id)


def PipeBarrier(pipe: Pipe) -> None:
    """Order everything after the barrier behind everything before it, on `pipe` (or PIPE_ALL)."""
    current_core().pipe_barrier(pipe)


def SyncAll() -> None:
    """Cross-core barrier: every core waits until all cores have drained everything issued before it."""
    core = current_core()
    core.pipe_barrier(Pipe.ALL)
    core.sync_all()


def GetBlockIdx() -> int:
    return current_core().block_idx


def GetBlockNum() -> int:
    return current_core().block_dim


def GetSubBlockIdx() -> int:
    """Which AIV of its AI core this is (0 or 1 in a MIX 1:2 kernel); 0 on an AIC."""
    return current_core().sub_block_idx


def ASCEND_IS_AIC() -> bool:
    """True on a cube core: a MIX kernel's cube part runs under `if ASCEND_IS_AIC():`."""
    return current_core().core_type.name == "AIC"


def ASCEND_IS_AIV() -> bool:
    return current_core().core_type.name == "AIV"


CROSS_CORE_SET_FLAG = define("CrossCoreSetFlag", doc="Signal other cores once the earlier instructions of the "
                             "pipe have completed (mode 0: all cores of this type; 1: the AIVs of this AI core; "
                             "2: an AIC and its AIVs).")
CROSS_CORE_WAIT_FLAG = define("CrossCoreWaitFlag", Pipe.S, doc="Stop issuing until the flag's counter is non-zero, "
                              "then decrement it.")
_CROSS_MODES = {0: "every core of this type", 1: "the AIVs of this AI core", 2: "an AIC and its AIVs"}


def _check_cross_core(core, name: str, flagId: int, modeId: int, pipe) -> None:
    kernel_type = core.chip.kernel_type
    if not kernel_type.cross_core_flags:
        raise core.fault(SyncFault(f"{name} in a {kernel_type.value} kernel: the hardware enables cross-core flags "
                                   "only for MIX kernel types"), name, pipe)
    if modeId not in _CROSS_MODES:
        raise core.fault(ParameterOutOfRange(f"modeId={modeId!r} must be 0, 1 or 2 on A2/A3"), name, pipe)
    if modeId and not kernel_type.aiv_per_aic:
        raise core.fault(SyncFault(f"modeId={modeId} ({_CROSS_MODES[modeId]}) needs a MIX_AIC_1_1 or MIX_AIC_1_2 "
                                   f"kernel, not {kernel_type.value}"), name, pipe)
    if modeId == 1 and core.core_type.name != "AIV":
        raise core.fault(SyncFault("modeId=1 synchronises the AIVs of one AI core; the AIC cannot take part"),
                         name, pipe)
    if flagId.__class__ is not int or not 0 <= flagId <= 15:
        raise core.fault(ParameterOutOfRange(f"flagId={flagId!r} outside [0, 15]"), name, pipe)


def CrossCoreSetFlag(modeId: int, pipe: Pipe, flagId: int) -> None:
    """CrossCoreSetFlag<modeId, pipe>(flagId): counts up flag `flagId` of the cores `modeId` names once every
    earlier instruction of `pipe` on this core has completed (PIPE_S and PIPE_ALL are not allowed)."""
    core = current_core()
    name = "CrossCoreSetFlag"
    if pipe not in core.core_type.pipes or pipe == Pipe.S:
        raise core.fault(ParameterOutOfRange(
            f"pipe={getattr(pipe, 'name', pipe)} must be one of the {core.core_type.name}'s pipes "
            f"{[p.name for p in core.core_type.pipes if p != Pipe.S]}"), name, Pipe.S)
    _check_cross_core(core, name, flagId, modeId, pipe)
    core.issue(CROSS_CORE_SET_FLAG, pipe, {"modeId": modeId, "flagId": flagId}, event=(modeId, flagId))


def CrossCoreWaitFlag(flagId: int, modeId: int = 0) -> None:
    """CrossCoreWaitFlag(flagId): the scalar unit issues nothing more until flag `flagId` of this core counts
    above zero, then counts it down (on A2 the template's mode and pipe have no effect)."""
    core = current_core()
    _check_cross_core(core, "CrossCoreWaitFlag", flagId, modeId, Pipe.S)
    core.issue(CROSS_CORE_WAIT_FLAG, Pipe.S, {"flagId": flagId}, event=(modeId, flagId))
