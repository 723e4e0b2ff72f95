"""Pipes and hardware events of the AI Core (reference §3.4)."""
from __future__ import annotations

from enum import Enum, IntEnum


class Pipe(IntEnum):
    """The instruction queues. PIPE_ALL is only a barrier target."""

    S = 0
    V = 1
    M = 2
    MTE1 = 3
    MTE2 = 4
    MTE3 = 5
    FIX = 6
    ALL = 7


PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL = (
    Pipe.S, Pipe.V, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.FIX, Pipe.ALL)
QUEUES = (Pipe.S, Pipe.V, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.FIX)

# The intra-core events of the A2/A3 cube core (HardEventAic) and vector core (HardEventAiv), from asc-devkit
# impl/basic_api/kernel_event.h. A same-pipe event (FIX_FIX, V_V) is a PipeBarrier on that pipe.
AIC_EVENTS = ("MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE3_MTE1", "MTE1_MTE3", "MTE2_M", "M_MTE2", "M_FIX",
              "FIX_M", "MTE3_MTE2", "MTE2_MTE3", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX", "FIX_MTE2",
              "FIX_S", "M_S", "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX")
AIV_EVENTS = ("MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3", "V_V", "MTE3_MTE2", "MTE2_MTE3", "S_V", "V_S", "S_MTE2",
              "MTE2_S", "S_MTE3", "MTE3_S")


class HardEvent(Enum):
    """SRC_DST event names as in Ascend C; `.src` and `.dst` are the pipes."""

    # members are singletons compared by identity: hashed by identity in C, not by Enum's Python __hash__ (the
    # queues' event IDs and the replay keys' queue states hash them per call)
    __hash__ = object.__hash__

    MTE2_MTE1 = "MTE2_MTE1"
    MTE1_MTE2 = "MTE1_MTE2"
    MTE1_M = "MTE1_M"
    M_MTE1 = "M_MTE1"
    MTE2_V = "MTE2_V"
    V_MTE2 = "V_MTE2"
    MTE3_V = "MTE3_V"
    V_MTE3 = "V_MTE3"
    M_V = "M_V"
    V_M = "V_M"
    V_V = "V_V"
    MTE3_MTE1 = "MTE3_MTE1"
    MTE1_MTE3 = "MTE1_MTE3"
    MTE1_V = "MTE1_V"
    MTE2_M = "MTE2_M"
    M_MTE2 = "M_MTE2"
    V_MTE1 = "V_MTE1"
    M_FIX = "M_FIX"
    FIX_M = "FIX_M"
    MTE3_MTE2 = "MTE3_MTE2"
    MTE2_MTE3 = "MTE2_MTE3"
    S_V = "S_V"
    V_S = "V_S"
    S_MTE2 = "S_MTE2"
    MTE2_S = "MTE2_S"
    S_MTE3 = "S_MTE3"
    MTE3_S = "MTE3_S"
    MTE2_FIX = "MTE2_FIX"
    FIX_MTE2 = "FIX_MTE2"
    FIX_S = "FIX_S"
    M_S = "M_S"
    FIX_MTE3 = "FIX_MTE3"
    MTE1_FIX = "MTE1_FIX"
    FIX_MTE1 = "FIX_MTE1"
    FIX_FIX = "FIX_FIX"

    @property
    def src(self) -> Pipe:
        return Pipe[self.value.split("_")[0]]

    @property
    def dst(self) -> Pipe:
        return Pipe[self.value.split("_")[1]]
