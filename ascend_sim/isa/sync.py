"""SetFlag / WaitFlag / PipeBarrier inside a core, SyncAll across cores, and the block index queries."""
from __future__ import annotations

from ..chip import current_core
from ..pipes import HardEvent, Pipe


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
