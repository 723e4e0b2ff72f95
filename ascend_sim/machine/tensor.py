"""GlobalTensor, LocalTensor and TPosition: typed windows onto byte-addressed memory."""
from __future__ import annotations

from enum import Enum

import numpy as np

from ascend_sim.machine.memory import Buffer


class TPosition(Enum):
    """Logical positions of Ascend C; `.buffer_name` is the physical buffer on A2/A3 (reference §3.5)."""

    # members are singletons compared by identity: hashed by identity in C, not by Enum's Python __hash__ (the
    # queues' event IDs and the replay keys' queue states hash them per call)
    __hash__ = object.__hash__

    GM = "GM"
    A1 = "A1"
    B1 = "B1"
    C1 = "C1"
    A2 = "A2"
    B2 = "B2"
    CO1 = "CO1"
    C2 = "C2"
    C2PIPE2GM = "C2PIPE2GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"

    @property
    def buffer_name(self) -> str:
        return _PHYSICAL[self.value]


_PHYSICAL = {"GM": "GM", "A1": "L1", "B1": "L1", "C1": "L1", "A2": "L0A", "B2": "L0B", "CO1": "L0C",
             "C2": "BT", "C2PIPE2GM": "FB", "VECIN": "UB", "VECOUT": "UB", "VECCALC": "UB"}


class GmAddr:
    """A byte address in global memory: what a kernel receives as a GM_ADDR argument."""

    __slots__ = ("buffer", "offset")

    def __init__(self, buffer: Buffer, offset: int = 0):
        self.buffer = buffer
        self.offset = offset

    def __add__(self, nbytes: int) -> "GmAddr":
        return GmAddr(self.buffer, self.offset + nbytes)

    def __repr__(self) -> str:
        return f"GmAddr({self.buffer.name}+{self.offset})"


_new = object.__new__


class _Tensor:
    __slots__ = ("buffer", "address", "dtype", "size", "position_name")

    def __init__(self, buffer: Buffer, address: int, dtype, size: int, position_name: str):
        self.buffer = buffer
        self.address = address  # bytes from the start of the buffer
        self.dtype = np.dtype(dtype)
        self.size = size  # elements
        self.position_name = position_name

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def end(self) -> int:
        return self.address + self.nbytes

    def GetSize(self) -> int:
        return self.size

    def GetPhyAddr(self) -> int:
        return self.address

    def __getitem__(self, offset: int):
        """The tensor starting `offset` elements further on (Ascend C `tensor[offset]`)."""
        if offset.__class__ is not int:  # a numpy integer or a bool: as an int
            offset = int(offset)
        cls = self.__class__
        dtype = self.dtype
        if cls is LocalTensor or cls is GlobalTensor:  # the plain classes: copy the fields without __init__
            view = _new(cls)
            view.buffer = self.buffer
            view.address = self.address + offset * dtype.itemsize
            view.dtype = dtype
            view.size = self.size - offset
            view.position_name = self.position_name
            return view
        return cls(self.buffer, self.address + offset * dtype.itemsize, dtype, self.size - offset,
                   self.position_name)

    def ReinterpretCast(self, dtype):
        dt = np.dtype(dtype)
        return type(self)(self.buffer, self.address, dt, self.nbytes // dt.itemsize, self.position_name)

    def numpy(self, count: int | None = None) -> np.ndarray:
        """A read-only copy of the elements, for inspection (not an instruction; costs no cycles)."""
        count = self.size if count is None else count
        self.buffer.check(self.address, self.address + count * self.dtype.itemsize, "inspection")
        return self.buffer.view(self.dtype, self.address, count).copy()

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.position_name} @ {self.buffer.name}+{self.address}, "
                f"{self.dtype}, {self.size} elements)")


class GlobalTensor(_Tensor):
    """A typed window onto GM. Create with `GlobalTensor(dtype)` then `SetGlobalBuffer(addr, size)`."""

    def __init__(self, buffer=None, address: int = 0, dtype=np.float16, size: int = 0, position_name="GM"):
        if not isinstance(buffer, Buffer):  # GlobalTensor(dtype) form
            dtype, buffer = (buffer if buffer is not None else dtype), None
        super().__init__(buffer, address, dtype, size, "GM")

    def SetGlobalBuffer(self, addr: GmAddr, size: int | None = None) -> "GlobalTensor":
        self.buffer = addr.buffer
        self.address = addr.offset
        self.size = (addr.buffer.capacity - addr.offset) // self.dtype.itemsize if size is None else int(size)
        return self


class LocalTensor(_Tensor):
    """A typed window onto one of the core's buffers, at a logical position (A1, B2, CO1, ...)."""

    @property
    def position(self) -> str:
        return self.position_name
