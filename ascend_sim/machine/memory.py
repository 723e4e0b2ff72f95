"""Byte-addressed memories: the per-core buffers (L1, L0A, L0B, L0C, UB, BT, FB) and global memory (GM)."""
from __future__ import annotations

import numpy as np

from ascend_sim.machine.faults import Misaligned, OutOfBounds


class Buffer:
    """One physical memory: a zero-initialised byte array with a name, a capacity and an alignment rule."""

    __slots__ = ("name", "data", "capacity", "alignment", "key")

    def __init__(self, name: str, capacity: int, alignment: int, data: np.ndarray | None = None):
        self.name = name
        self.capacity = capacity
        self.alignment = alignment
        self.data = np.zeros(capacity, dtype=np.uint8) if data is None else data
        self.key = name  # identity used by the race checker

    def check(self, start: int, end: int, what: str = "access") -> None:
        """Fault if [start, end) is not inside the buffer."""
        if start < 0 or end > self.capacity or start > end:
            raise OutOfBounds(f"{what} of bytes [{start}, {end}) outside {self.name} of {self.capacity} bytes",
                              buffer=self.name, addr_range=(start, end))

    def check_aligned(self, address: int, alignment: int | None = None, what: str = "address") -> None:
        align = self.alignment if alignment is None else alignment
        if address % align:
            raise Misaligned(f"{what} {address} in {self.name} is not a multiple of {align} bytes",
                             buffer=self.name, addr_range=(address, address + 1))

    def view(self, dtype: np.dtype, byte_offset: int, count: int) -> np.ndarray:
        """`count` elements of `dtype` starting at `byte_offset` (a writable view)."""
        dtype = np.dtype(dtype)
        return self.data[byte_offset:byte_offset + count * dtype.itemsize].view(dtype)

    def strided(self, byte_offset: int, shape: tuple, strides: tuple, dtype=np.uint8) -> np.ndarray:
        """A writable strided view (strides in bytes); the caller has bounds-checked the range."""
        return np.ndarray(shape, dtype, self.data, byte_offset, strides)

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.capacity} B, align {self.alignment})"


class GlobalMemory:
    """Global memory shared by all cores: named allocations, each its own byte array.

    An access outside every allocation is the hardware's 0x800000 fault ("The DDR address of the MTE
    instruction is out of range"); here it is caught per allocation.
    """

    def __init__(self):
        self.allocations: dict[str, Buffer] = {}

    def alloc(self, name: str, nbytes: int) -> Buffer:
        if name in self.allocations:
            raise ValueError(f"GM allocation {name!r} already exists")
        buf = Buffer(f"GM:{name}", int(nbytes), 1)
        self.allocations[name] = buf
        return buf

    def upload(self, name: str, array: np.ndarray) -> Buffer:
        """Allocate and fill from a host array (its bytes, C order)."""
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buf = self.alloc(name, raw.size)
        buf.data[:] = raw
        return buf

    def __getitem__(self, name: str) -> Buffer:
        return self.allocations[name]
