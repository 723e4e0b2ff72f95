"""SetFlag / WaitFlag / PipeBarrier inside a core, SyncAll and the cross-core flags across cores, and the block
index queries. The specs of the synchronisation instructions live here; the scheduler (passes/schedule.py) keeps the
queue mechanics they need and recognises them by their kind."""
from __future__ import annotations

import sys

from ascend_sim.engine.chip import current_core
from ascend_sim.machine.coretypes import CROSS_CORE_MODES, MODE4_AIV1_OFFSET, MODE4_FLAGS
from ascend_sim.machine.faults import ParameterOutOfRange, SyncFault
from ascend_sim.machine.pipes import HardEvent, Pipe
from ascend_sim.record import Kind, define

_getframe = sys._getframe

SET_FLAG = define("SetFlag", kind=Kind.SET_FLAG,
                  doc="Set flag (src, dst, id) once every earlier instruction of src has completed.")
WAIT_FLAG = define("WaitFlag", kind=Kind.WAIT_FLAG, doc="Hold pipe dst until the flag is set, then clear it.")
PIPE_BARRIER = define("PipeBarrier", kind=Kind.BARRIER,
                      doc="Order everything after the barrier behind everything before it.")
SYNC_ALL = define("SyncAll", Pipe.ALL, kind=Kind.SYNC_ALL,
                  doc="Every core waits until all cores have drained everything before it.")


def SetFlag(event: HardEvent, event_id: int = 0) -> None:
    """Set flag (src, dst, id) once every earlier instruction of the source pipe has completed."""
    set_flag(current_core(), event, event_id, "SetFlag", _getframe(1))


def WaitFlag(event: HardEvent, event_id: int = 0) -> None:
    """Block the destination pipe until the flag is set, then clear it."""
    wait_flag(current_core(), event, event_id, "WaitFlag", _getframe(1))


def PipeBarrier(pipe: Pipe) -> None:
    """Order everything after the barrier behind everything before it, on `pipe` (or PIPE_ALL)."""
    pipe_barrier(current_core(), pipe)


def SyncAll() -> None:
    """Cross-core barrier: every core waits until all cores have drained everything issued before it."""
    core = current_core()
    pipe_barrier(core, Pipe.ALL)
    core.issue_sync(SYNC_ALL, Pipe.ALL, None)


# ---------------------------------------------------------------- the front ends (TPipe / TQue issue them too)
def _event_pipes(core, event: HardEvent, name: str) -> tuple[Pipe, Pipe]:
    pipes = core.core_type.events.get(event._value_) if event.__class__ is HardEvent else None
    if pipes is None:
        if event.__class__ is not HardEvent:
            raise core.fault(ParameterOutOfRange(f"{name} takes a HardEvent, got {event!r}"), name, Pipe.S)
        raise core.fault(SyncFault(f"HardEvent::{event.value} is not a legal event on the A2/A3 "
                                   f"{core.core_type.title} ({core.core_type.name}); same-pipe ordering needs "
                                   "PipeBarrier"), name, event.src)
    return pipes


def _check_event_id(core, event_id, name: str, pipe: Pipe) -> None:
    if event_id.__class__ is not int or not 0 <= event_id < core.event_ids:
        raise core.fault(ParameterOutOfRange(f"event id {event_id} outside [0, {core.event_ids})"), name, pipe)


def _decoded(core, spec, event: HardEvent, event_id: int, api: str):
    """What a SetFlag / WaitFlag call decodes to on `core`: (pipe, params, (event, id)), or the pipe alone for a
    same-pipe event (FIX_FIX, V_V). With the launch's front-end cache on, the event and id are checked on the
    first call with these arguments on a core of this type; later calls share its parameter dict (records never
    change their parameters) and skip the checks."""
    cache = core.front_end_cache
    if cache is not None and event.__class__ is HardEvent and event_id.__class__ is int:  # a key names it exactly
        key = (spec, core.core_type.name, event._value_, event_id, api)
        found = cache.flags.get(key)
        if found is None:
            found = cache.flags[key] = _decode(core, spec, event, event_id, api)
        return found
    return _decode(core, spec, event, event_id, api)


def _decode(core, spec, event: HardEvent, event_id: int, api: str):
    src, dst = _event_pipes(core, event, spec.name)
    pipe = src if spec is SET_FLAG else dst
    _check_event_id(core, event_id, spec.name, pipe)
    if src == dst:
        return src
    return pipe, {"event": event.value, "id": event_id, "api": api}, (event._value_, event_id)


def set_flag(core, event: HardEvent, event_id: int, api: str = "SetFlag", caller=None):
    """Issue a SetFlag; `caller` is the frame of the API call's caller when known (its source walk starts there)."""
    flag = _decoded(core, SET_FLAG, event, event_id, api)
    if flag.__class__ is not tuple:  # FIX_FIX / V_V: Ascend C issues PipeBarrier<pipe> instead of a flag
        return pipe_barrier(core, flag)
    src, params, key = flag
    balance = core.flag_balance.get(key, 0) + 1
    if balance > 1:
        raise core.fault(SyncFault(
            f"SetFlag<{event.value}>({event_id}) while the flag is already set and not yet waited "
            "(undefined on hardware)"), "SetFlag", src)
    _set_balance(core.flag_balance, key, balance)
    return core.issue_sync(SET_FLAG, src, params, key, caller)


def wait_flag(core, event: HardEvent, event_id: int, api: str = "WaitFlag", caller=None):
    flag = _decoded(core, WAIT_FLAG, event, event_id, api)
    if flag.__class__ is not tuple:  # FIX_FIX waits with PipeBarrier<PIPE_FIX>; V_V's wait does nothing
        return pipe_barrier(core, flag) if flag == Pipe.FIX else None
    dst, params, key = flag
    _set_balance(core.flag_balance, key, core.flag_balance.get(key, 0) - 1)
    return core.issue_sync(WAIT_FLAG, dst, params, key, caller)


def _set_balance(balances: dict, key, balance: int) -> None:
    """A flag's balance; a flag back at 0 leaves the dict, so that equal states are equal dicts (a replay unit's
    key holds the balances: a flag once set and waited is otherwise a different key)."""
    if balance:
        balances[key] = balance
    else:
        del balances[key]


def pipe_barrier(core, pipe: Pipe, api: str = "PipeBarrier"):
    if pipe == Pipe.S:
        raise core.fault(SyncFault("PipeBarrier<PIPE_S> is not supported (scalar ordering is automatic)"),
                         "PipeBarrier", pipe)
    return core.issue_sync(PIPE_BARRIER, pipe, {"pipe": pipe.name, "api": api})


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


CROSS_CORE_SET_FLAG = define("CrossCoreSetFlag", kind=Kind.CROSS_CORE_SET,
                             doc="Signal other cores once the earlier instructions of the "
                             "pipe have completed (mode 0: all cores of this type; 1: the AIVs of this AI core; "
                             "2: an AIC and its AIVs; 4, arch 3510: an AIC and one AIV).")
CROSS_CORE_WAIT_FLAG = define("CrossCoreWaitFlag", Pipe.S, kind=Kind.CROSS_CORE_WAIT,
                              doc="Stop issuing until the flag's counter is non-zero, "
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
    core.issue_sync(CROSS_CORE_SET_FLAG, pipe, {"modeId": modeId, "flagId": flagId}, (modeId, flagId))


def CrossCoreWaitFlag(flagId: int, modeId: int = 0) -> None:
    """CrossCoreWaitFlag(flagId): the scalar unit issues nothing more until flag `flagId` of this core counts
    above zero, then counts it down (on A2 the template's mode and pipe have no effect)."""
    core = current_core()
    _check_cross_core(core, "CrossCoreWaitFlag", flagId, modeId, Pipe.S)
    core.issue_sync(CROSS_CORE_WAIT_FLAG, Pipe.S, {"flagId": flagId}, (modeId, flagId))
