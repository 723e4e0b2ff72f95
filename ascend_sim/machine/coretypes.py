"""Core types as data: which buffers, pipes and intra-core events a core has, and how a launch pairs them.

On A2/A3 (arch 2201) an AI Core is split: one cube core (AIC) and two vector cores (AIV), each with its own
scalar unit and instruction stream. A launch names its kernel type; a MIX kernel runs the same kernel function
on an AIC and its paired AIV(s), which branch on ASCEND_IS_AIC / ASCEND_IS_AIV.
"""
from __future__ import annotations

from enum import Enum

from ascend_sim.machine.pipes import AIC_EVENTS, AIV_EVENTS, HardEvent, Pipe


class CoreType:
    """Buffers (sized by the platform), pipes and the legal HardEvent pairs of one kind of core."""

    def __init__(self, name: str, title: str, buffers: tuple[str, ...], pipes: tuple[Pipe, ...], events: tuple):
        self.name, self.title, self.buffers, self.pipes = name, title, buffers, pipes
        # event name -> (src pipe, dst pipe), for the legal events only; looked up by string (cheap to hash)
        self.events = {name: (HardEvent(name).src, HardEvent(name).dst) for name in events}

    def __repr__(self) -> str:
        return f"<core type {self.name}>"


AIC = CoreType("AIC", "cube core", ("L1", "L0A", "L0B", "L0C", "BT", "FB"),
               (Pipe.S, Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3), AIC_EVENTS)
AIV = CoreType("AIV", "vector core", ("UB",), (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3), AIV_EVENTS)


class KernelType(Enum):
    """The launch's kernel type (Ascend C KERNEL_TYPE_*): which cores run it, how many AIV per AIC, and whether
    the hardware enables cross-core flags (only the MIX types do)."""

    AIC_ONLY = "AIC_ONLY"
    AIV_ONLY = "AIV_ONLY"
    MIX_AIC_1_0 = "MIX_AIC_1_0"  # cube cores only, with cross-core flags
    MIX_AIV_1_0 = "MIX_AIV_1_0"  # vector cores only, with cross-core flags
    MIX_AIC_1_1 = "MIX_AIC_1_1"
    MIX_AIC_1_2 = "MIX_AIC_1_2"

    @property
    def aiv_per_aic(self) -> int:
        return {"MIX_AIC_1_1": 1, "MIX_AIC_1_2": 2}.get(self.value, 0)

    @property
    def cross_core_flags(self) -> bool:
        return self.value.startswith("MIX")


def launch_cores(kernel_type: KernelType, block_dim: int) -> list[tuple[CoreType, int, int, int]]:
    """The cores a launch runs, in the order they are numbered: (type, block index, sub-block index, AI core).

    AIC_ONLY / AIV_ONLY: block_dim cores of that type. MIX: block_dim AI cores, each an AIC followed by its
    AIV(s); an AIV's block index is its AIC's times the ratio plus its sub-block (GetBlockIdx on the AIV)."""
    if kernel_type in (KernelType.AIC_ONLY, KernelType.MIX_AIC_1_0):
        return [(AIC, i, 0, i) for i in range(block_dim)]
    if kernel_type in (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0):
        return [(AIV, i, 0, i) for i in range(block_dim)]
    ratio = kernel_type.aiv_per_aic
    cores = []
    for i in range(block_dim):
        cores.append((AIC, i, 0, i))
        cores += [(AIV, i * ratio + sub, sub, i) for sub in range(ratio)]
    return cores
