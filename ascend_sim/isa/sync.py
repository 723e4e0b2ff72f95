"""SetFlag / WaitFlag / PipeBarrier inside a core, SyncAll across cores, and the block index queries."""
from __future__ import annotations

from ascend_sim.engine.chip import current_core
from ascend_sim.machine.coretypes import CROSS_CORE_MODES, MODE4_AIV1_OFFSET, MODE4_FLAGS
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
                             "2: an AIC and its AIVs; 4, arch 3510: an AIC and one AIV).")
CROSS_CORE_WAIT_FLAG = define("CrossCoreWaitFlag", Pipe.S, doc="Stop issuing until the flag's counter is non-zero, "
                              "then decrement it.")
_CROSS_MODES = {0: "every core of this type", 1: "the AIVs of this AI core", 2: "an AIC and its AIVs",
                4: "an AIC and one of its AIVs"}


def _check_cross_core(core, name: str, flagId: int, modeId: int, pipe) -> None:
    kernel_type = core.chip.kernel_type
    if not kernel_type.cross_core_flags:
        raise core.fault(SyncFault(f"{name} in a {kernel_type.value} kernel: the hardware enables cross-core flags "
                                   "only for MIX kernel types"), name, pipe)
    arch = core.platform.npu_arch
    if modeId not in CROSS_CORE_MODES[arch]:
        allowed = ", ".join(map(str, CROSS_CORE_MODES[arch]))
        raise core.fault(ParameterOutOfRange(f"modeId={modeId!r} must be one of {allowed} on arch {arch}"
                                             + (" (A2/A3)" if arch == 2201 else "")), name, pipe)
    if modeId == 4:
        return _check_mode4(core, name, flagId, kernel_type, pipe)
    if modeId and not kernel_type.aiv_per_aic:
        raise core.fault(SyncFault(f"modeId={modeId} ({_CROSS_MODES[modeId]}) needs a MIX_AIC_1_1 or MIX_AIC_1_2 "
                                   f"kernel, not {kernel_type.value}"), name, pipe)
    if modeId == 1 and core.core_type.name != "AIV":
        raise core.fault(SyncFault("modeId=1 synchronises the AIVs of one AI core; the AIC cannot take part"),
                         name, pipe)
    if flagId.__class__ is not int or not 0 <= flagId <= 15:
        raise core.fault(ParameterOutOfRange(f"flagId={flagId!r} outside [0, 15]"), name, pipe)


def _check_mode4(core, name: str, flagId, kernel_type, pipe) -> None:
    if kernel_type.aiv_per_aic != 2:
        raise core.fault(SyncFault(f"modeId=4 ({_CROSS_MODES[4]}) needs a MIX_AIC_1_2 kernel, not "
                                   f"{kernel_type.value}"), name, pipe)
    ids = [MODE4_FLAGS]
    if core.core_type.name == "AIC":
        ids.append(range(MODE4_FLAGS.start + MODE4_AIV1_OFFSET, MODE4_FLAGS.stop + MODE4_AIV1_OFFSET))
    if flagId.__class__ is not int or not any(flagId in r for r in ids):
        text = " or ".join(f"[{r.start}, {r.stop - 1}]" for r in ids)
        raise core.fault(ParameterOutOfRange(f"flagId={flagId!r} outside {text} for modeId=4 on the "
                                             f"{core.core_type.name}"), name, pipe)


def CrossCoreSetFlag(modeId: int, pipe: Pipe, flagId: int) -> None:
    """CrossCoreSetFlag<modeId, pipe>(flagId): counts up flag `flagId` of the cores `modeId` names once every
    earlier instruction of `pipe` on this core has completed (PIPE_ALL is not allowed, PIPE_S only in mode 4)."""
    core = current_core()
    name = "CrossCoreSetFlag"
    scalar_ok = modeId == 4  # mode 4 (arch 3510) also takes PIPE_S
    if pipe not in core.core_type.pipes or (pipe == Pipe.S and not scalar_ok):
        raise core.fault(ParameterOutOfRange(
            f"pipe={getattr(pipe, 'name', pipe)} must be one of the {core.core_type.name}'s pipes "
            f"{[p.name for p in core.core_type.pipes if p != Pipe.S or scalar_ok]}"), name, Pipe.S)
    _check_cross_core(core, name, flagId, modeId, pipe)
    core.issue(CROSS_CORE_SET_FLAG, pipe, {"modeId": modeId, "flagId": flagId}, event=(modeId, flagId))


def CrossCoreWaitFlag(flagId: int, modeId: int = 0) -> None:
    """CrossCoreWaitFlag(flagId): the scalar unit issues nothing more until flag `flagId` of this core counts
    above zero, then counts it down (on A2 the template's mode and pipe have no effect)."""
    core = current_core()
    _check_cross_core(core, "CrossCoreWaitFlag", flagId, modeId, Pipe.S)
    core.issue(CROSS_CORE_WAIT_FLAG, Pipe.S, {"flagId": flagId}, event=(modeId, flagId))
