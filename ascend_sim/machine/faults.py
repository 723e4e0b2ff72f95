"""Simulated hardware faults: what a real AI Core would trap on (or silently corrupt), reported with context."""
from __future__ import annotations


class SimFault(Exception):
    """A kernel bug found by the simulator.

    Names the rule broken, and where known: the core, the instruction (with its pipe), the buffer, the byte
    range and the kernel source line that issued the instruction.
    """

    rule = "fault"

    def __init__(self, message: str, *, core: int | None = None, instruction: str | None = None,
                 pipe: str | None = None, buffer: str | None = None,
                 addr_range: tuple[int, int] | None = None, source: str | None = None, core_name: str | None = None):
        self.message = message
        self.core = core
        self.core_name = core_name  # "AIV 0" when the launch numbers its cores differently from its blocks
        self.instruction = instruction
        self.pipe = pipe
        self.buffer = buffer
        self.addr_range = addr_range
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.core is not None:
            where.append(f"core {self.core}" + (f" ({self.core_name})" if self.core_name else ""))
        if self.instruction:
            where.append(f"{self.pipe + ' ' if self.pipe else ''}{self.instruction}")
        if self.source:
            where.append(f"at {self.source}")
        head = f"[{', '.join(where)}] " if where else ""
        region = ""
        if self.buffer is not None:
            region = f" ({self.buffer}" + (f"[{self.addr_range[0]}, {self.addr_range[1]})" if self.addr_range else "") + ")"
        return f"{head}{self.rule}: {self.message}{region}"


class OutOfBounds(SimFault):
    rule = "out of bounds"


class Misaligned(SimFault):
    rule = "misaligned address"


class CapacityExceeded(SimFault):
    rule = "buffer overflow"


class UnwrittenRead(SimFault):
    rule = "read of unwritten memory"


class ParameterOutOfRange(SimFault):
    rule = "parameter out of range"


class MissingDataPath(SimFault):
    rule = "no such data path"


class SyncFault(SimFault):
    rule = "synchronisation error"


class RaceFault(SimFault):
    rule = "race between pipes"


class CrossCoreRace(RaceFault):
    rule = "race between cores"
