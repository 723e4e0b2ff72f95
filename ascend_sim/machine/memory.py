"""Byte-addressed memories: the per-core buffers (L1, L0A, L0B, L0C, UB, BT, FB) and global memory (GM).

In timing-only mode (Chip(execute=False)) a memory is a size-only descriptor: it has its name, capacity and
alignment, so every bounds and alignment check fires as in a full run, but no bytes (`data` is None), since no
instruction's semantics run.

With shared=True a full run's bytes are in anonymous shared mappings (one per memory), so a process forked from
this one writes into the same memory as its parent: engine/forked_data.py runs independent AI cores' data work that
way. Only then: a process has a limited number of mappings (vm.max_map_count, 65,530 here) and a chip holds a
few hundred memories, so plain arrays are the default.
"""
from __future__ import annotations

import mmap
from collections.abc import Callable

import numpy as np

from ascend_sim.machine.faults import Misaligned, OutOfBounds


class Buffer:
    """One physical memory: a zero-initialised byte array with a name, a capacity and an alignment rule.

    allocate=False: size only (data None), for timing-only runs; shared=True: the bytes in a shared mapping
    (shared_zeros)."""

    __slots__ = ("name", "data", "capacity", "alignment", "key", "written")

    def __init__(self, name: str, capacity: int, alignment: int, data: np.ndarray | None = None, *,
                 allocate: bool = True, shared: bool = False):
        self.name = name
        self.capacity = capacity
        self.alignment = alignment
        if data is None and allocate:
            data = shared_zeros(capacity) if shared else np.zeros(capacity, dtype=np.uint8)
        self.data = data
        self.key = name  # identity used by the race checker
        self.written = None  # the WrittenRanges of a watched buffer (machine/written.py), set by its core

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
        self._check_holds_bytes()
        return self.data[byte_offset:byte_offset + count * dtype.itemsize].view(dtype)

    def strided(self, byte_offset: int, shape: tuple, strides: tuple, dtype=np.uint8) -> np.ndarray:
        """A writable strided view (strides in bytes); the caller has bounds-checked the range."""
        self._check_holds_bytes()
        return np.ndarray(shape, dtype, self.data, byte_offset, strides)

    @property
    def shared(self) -> bool:
        """Whether the bytes are in a shared mapping (shared_zeros), seen by processes forked from this one."""
        if self.data is None or self.data.size == 0:
            return self.data is not None
        base = self.data.base
        return base.__class__ is memoryview and base.obj.__class__ is mmap.mmap

    def _check_holds_bytes(self) -> None:
        if self.data is None:
            raise RuntimeError(f"{self.name} is size-only (a timing-only run): it holds no bytes to read or write")

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {self.capacity} B, align {self.alignment})"


def shared_zeros(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes in an anonymous shared mapping (MAP_SHARED | MAP_ANONYMOUS), which a forked process
    shares instead of copying."""
    if nbytes <= 0:
        return np.zeros(0, dtype=np.uint8)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.uint8)


class GlobalMemory:
    """Global memory shared by all cores: named allocations, each its own byte array.

    An access outside every allocation is the hardware's 0x800000 fault ("The DDR address of the MTE
    instruction is out of range"); here it is caught per allocation.

    allocate=False (timing-only): allocations are size-only; upload and place take the size and copy nothing.
    """

    def __init__(self, allocate: bool = True, shared: bool = False):
        self.allocations: dict[str, Buffer] = {}
        self.allocate = allocate
        self.shared = shared  # allocations in shared mappings (Buffer's `shared`)

    def alloc(self, name: str, nbytes: int) -> Buffer:
        if name in self.allocations:
            raise ValueError(f"GM allocation {name!r} already exists")
        buf = Buffer(f"GM:{name}", int(nbytes), 1, allocate=self.allocate, shared=self.shared)
        self.allocations[name] = buf
        return buf

    def upload(self, name: str, array: np.ndarray) -> Buffer:
        """Allocate and fill from a host array (its bytes, C order)."""
        if not self.allocate:
            return self.alloc(name, array.nbytes)
        raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        buf = self.alloc(name, raw.size)
        buf.data[:] = raw
        return buf

    def place(self, name: str, shape: tuple, dtype, make: Callable[[], np.ndarray]) -> Buffer:
        """Allocate an array of `shape` and `dtype` and fill it from make() (a host conversion), which a size-only
        memory never calls: a timing-only run neither converts nor copies its operands."""
        dtype = np.dtype(dtype)
        if not self.allocate:
            return self.alloc(name, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
        array = make()
        if array.shape != tuple(shape) or array.dtype != dtype:
            raise ValueError(f"GM {name!r}: the conversion gave {array.dtype} {array.shape}, the layout says "
                             f"{dtype} {tuple(shape)}")
        return self.upload(name, array)

    def __getitem__(self, name: str) -> Buffer:
        return self.allocations[name]
