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


# The data paths each core can move data on, per NpuArch, named "SRC->DST" as the instructions' records name them.
# 2201 (A2/A3): the instructions modelled here, Fixpipe to L1 and GM (asc-devkit@82b89a15 docs/zh/guide/.../架构规格/
# NPU架构版本2201.md), and the paths NPU架构版本3510.md lists as removed (they exist on 2201).
# 3510 (Ascend 950): NPU架构版本3510.md: "adds L0C->UB and UB<->L1; removes GM->L0A, GM->L0B and L1->GM".
# [INFERENCE] which core issues the new paths follows their pipe in that page's bandwidth table: L1->UB (MTE1)
# and L0C->UB (FIX) on the AIC, UB->L1 (MTE3) on the AIV. [CONFLICT] the 950 INIs still list
# Intrinsic_data_move_out2l0a/l0b and l12out in [AICoreintrinsicDtypeMap]; the architecture page is followed.
_A2_AIC_PATHS = frozenset({"GM->L1", "GM->L0A", "GM->L0B", "L1->L0A", "L1->L0B", "L1->BT", "L1->FB", "L1->GM",
                           "L0C->GM", "L0C->L1"})
_GM_UB = frozenset({"GM->UB", "UB->GM"})
DATA_PATHS: dict[int, dict[str, frozenset]] = {
    2201: {"AIC": _A2_AIC_PATHS, "AIV": _GM_UB},
    3510: {"AIC": (_A2_AIC_PATHS - {"GM->L0A", "GM->L0B", "L1->GM"}) | {"L0C->UB", "L1->UB"},
           "AIV": _GM_UB | {"UB->L1"}},
}
# Cross-core flag modes (asc-devkit@82b89a15 CrossCoreSetFlag(ISASI).md): 0 all cores of a type, 1 the AIVs of an
# AI core, 2 an AIC and both its AIVs (flag IDs 0-15); 4 (3510 only, MIX_AIC_1_2) an AIC and one AIV (flag IDs 0-10,
# and 16-26 on the AIC for AIV1).
CROSS_CORE_MODES: dict[int, tuple[int, ...]] = {2201: (0, 1, 2), 3510: (0, 1, 2, 4)}
MODE4_FLAGS = range(0, 11)  # an AIV's mode-4 flag IDs; the AIC's are these and these + MODE4_AIV1_OFFSET
MODE4_AIV1_OFFSET = 16


def mode4_route(setter: str, sub_block: int, flag: int) -> tuple[str, int, int]:
    """Where a mode-4 CrossCoreSetFlag lands: (receiving core type, its sub-block, the flag ID it counts).
    The AIC's 0-10 reach AIV0's 0-10 and its 16-26 AIV1's 0-10; AIV0's 0-10 reach the AIC's 0-10, AIV1's the
    AIC's 16-26 (CrossCoreSetFlag(ISASI).md, "flagId取值范围说明")."""
    if setter == "AIC":
        return ("AIV", 0, flag) if flag < MODE4_AIV1_OFFSET else ("AIV", 1, flag - MODE4_AIV1_OFFSET)
    return "AIC", 0, flag + MODE4_AIV1_OFFSET * sub_block


def missing_path(npu_arch: int, core_type: CoreType, path: str) -> str | None:
    """Why `path` cannot be used on this core, or None when it exists."""
    if path in DATA_PATHS[npu_arch][core_type.name]:
        return None
    elsewhere = [name for name, paths in DATA_PATHS[npu_arch].items() if path in paths]
    where = f" (only the {elsewhere[0]} has it)" if elsewhere else ""
    return f"{path} does not exist on arch {npu_arch} {core_type.name}{where}"


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
