"""TPipe, TQue and TBuf: buffer allocation and the queue protocol, implemented as the flags they are.

EnQue = SetFlag(producer -> consumer), DeQue = WaitFlag of it; FreeTensor = SetFlag(consumer -> producer),
the next AllocTensor of that buffer = WaitFlag of it (reference §3.5). As in asc-devkit's TQueBind on 2201
(impl/basic_api/kernel_tquebind_impl.h), the event ID is taken from the TPipe at each EnQue / FreeTensor
(AllocEventID) and given back at the DeQue / AllocTensor that waits on it (ReleaseEventID).

On the cube core of arch 2201, TPipe::Init (the constructor) takes M_MTE1 event IDs 0, 1 and 2 and sets them, and
TPipe::Destroy (the destructor) waits and releases them, then barriers PIPE_ALL (kernel_tpipe_impl.h: "for matmul
macro", IDs 0 and 1 for the L0A/L0B ping-pong, 2 for loading a bias): the high-level matmul and convolution APIs
start by waiting M_MTE1 before their first L0 load, and these sets are what lets the first wait through.
"""
from __future__ import annotations

import functools
import sys
from collections import deque

import numpy as np

from ascend_sim.engine.chip import current_core
from ascend_sim.isa.sync import pipe_barrier, set_flag, wait_flag
from ascend_sim.machine.faults import CapacityExceeded, ParameterOutOfRange, SyncFault
from ascend_sim.machine.pipes import HardEvent, Pipe
from ascend_sim.machine.tensor import LocalTensor, TPosition

_getframe = sys._getframe  # the queue calls pass their caller's frame: the flags' source walk starts there

# (producer, consumer) pipes of each queue position on the cube core
_QUEUE_PIPES = {
    TPosition.A1: (Pipe.MTE2, Pipe.MTE1), TPosition.B1: (Pipe.MTE2, Pipe.MTE1), TPosition.C1: (Pipe.MTE2, Pipe.MTE1),
    TPosition.A2: (Pipe.MTE1, Pipe.M), TPosition.B2: (Pipe.MTE1, Pipe.M), TPosition.CO1: (Pipe.M, Pipe.FIX),
    TPosition.C2: (Pipe.MTE1, Pipe.M),  # the bias table: filled by MTE1 (L1 -> BT), read by Mmad
    TPosition.VECIN: (Pipe.MTE2, Pipe.V), TPosition.VECOUT: (Pipe.V, Pipe.MTE3),
    TPosition.VECCALC: (Pipe.V, Pipe.V),  # V_V: a PipeBarrier<PIPE_V> (kernel_event.h), no flag
}


L0_FREE_EVENT_IDS = 3  # M_MTE1 IDs TPipe::Init sets on the AIC (2201)


@functools.cache  # each TQue binds two: by name, through Enum's Python properties, once per pair
def _event(src: Pipe, dst: Pipe) -> HardEvent:
    return HardEvent[f"{src.name}_{dst.name}"]


class TPipe:
    """Owns the kernel's buffer memory (per physical buffer, allocated upwards) and its event IDs."""

    def __init__(self):
        self.core = current_core()
        self.used: dict[str, int] = {}
        self.event_ids: dict[HardEvent, set[int]] = {}
        self.queues: list[TQue] = []
        self.destroyed = False
        self.core.tpipes.append(self)  # destroyed when the kernel returns, like the C++ destructor
        if self.core.core_type.name == "AIC":  # the L0 halves (0, 1) and the bias table (2) start out free
            for _ in range(L0_FREE_EVENT_IDS):
                set_flag(self.core, HardEvent.M_MTE1, self.AllocEventID(HardEvent.M_MTE1), "TPipe.Init")

    def InitBuffer(self, target, num_or_len: int, length: int | None = None) -> None:
        """InitBuffer(que, num, len) for a TQue or InitBuffer(buf, len) for a TBuf."""
        if isinstance(target, TQue):
            num, length = int(num_or_len), int(length)
        else:
            num, length = 1, int(num_or_len)
        length = -(-length // 32) * 32  # lengths are rounded up to 32 B
        buf_name = target.position.buffer_name
        buffer = self.core.buffers.get(buf_name)
        if buffer is None:  # e.g. a VECIN queue on the cube core, an A1 buffer on a vector core
            raise self.core.fault(ParameterOutOfRange(
                f"{target.position.name} is in {buf_name}, which the {self.core.core_type.title} "
                f"({self.core.core_type.name}) does not have; it has {', '.join(self.core.buffers)}"),
                "InitBuffer", Pipe.S)
        align = buffer.alignment
        start = -(-self.used.get(buf_name, 0) // align) * align
        stride = -(-length // align) * align
        end = start + stride * (num - 1) + length
        if end > buffer.capacity:
            raise self.core.fault(CapacityExceeded(
                f"InitBuffer of {num} x {length} bytes at {target.position.name} needs bytes [{start}, {end}) but "
                f"{buf_name} has {buffer.capacity}", buffer=buf_name, addr_range=(start, end)),
                "InitBuffer", Pipe.S)
        self.used[buf_name] = end
        target._bind(self, buffer, [start + i * stride for i in range(num)], length)

    def AllocEventID(self, event: HardEvent) -> int:
        taken = self.event_ids.get(event)
        if taken is None:
            taken = self.event_ids[event] = set()
        for i in range(self.core.event_ids):
            if i not in taken:
                taken.add(i)
                return i
        raise self.core.fault(SyncFault(f"no free event ID for {event.value}: all "
                                        f"{self.core.platform.event_ids} are taken"), "AllocEventID", Pipe.S)

    FetchEventID = AllocEventID

    def ReleaseEventID(self, event: HardEvent, event_id: int) -> None:
        taken = self.event_ids.get(event)
        if taken is not None:
            taken.discard(event_id)
            if not taken:  # no ID of the event taken: as before the first (equal states, equal replay keys)
                del self.event_ids[event]

    def Destroy(self) -> None:
        """Wait for the queues' outstanding FreeTensor flags (and, on the AIC, the M_MTE1 events Init set), barrier
        PIPE_ALL, release all memory and event IDs. A second call (the destructor after an explicit Destroy)
        does nothing, as isDestroy makes it in asc-devkit."""
        if self.destroyed:
            return
        self.destroyed = True
        for que in self.queues:
            for slot in sorted(que.freed_pending):
                wait_flag(self.core, que.back, que.free_ids.pop(slot), "TPipe.Destroy")
            que.freed_pending.clear()
        if self.core.core_type.name == "AIC":
            for event_id in range(L0_FREE_EVENT_IDS):
                wait_flag(self.core, HardEvent.M_MTE1, event_id, "TPipe.Destroy")
        pipe_barrier(self.core, Pipe.ALL, "TPipe.Destroy")
        self.queues.clear()
        self.used.clear()
        self.event_ids.clear()


class TBuf:
    """Scratch memory at a position: Get() a tensor, no queue semantics."""

    def __init__(self, position: TPosition):
        self.position = position
        self.buffer = None

    def _bind(self, pipe, buffer, addresses, length):
        self.buffer, self.address, self.length = buffer, addresses[0], length

    def Get(self, dtype, count: int | None = None) -> LocalTensor:
        size = self.length // np.dtype(dtype).itemsize if count is None else count
        return LocalTensor(self.buffer, self.address, dtype, size, self.position.name)

    def GetWithOffset(self, count: int, offset: int, dtype) -> LocalTensor:
        """`count` elements starting `offset` bytes into the buffer."""
        return LocalTensor(self.buffer, self.address + offset, dtype, count, self.position.name)


class TQue:
    """A queue of `num` buffers at a position, with the producer/consumer flags of that position."""

    def __init__(self, position: TPosition, depth: int = 1):
        if position not in _QUEUE_PIPES:
            raise ValueError(f"TQue position={position.name} has no queue semantics; use one of "
                             f"{[p.name for p in _QUEUE_PIPES]} (or a TBuf)")
        self.position = position
        self.depth = depth
        self.producer, self.consumer = _QUEUE_PIPES[position]

    def _bind(self, pipe: TPipe, buffer, addresses, length):
        self.pipe, self.buffer, self.addresses, self.length = pipe, buffer, addresses, length
        pipe.queues.append(self)
        fwd, back = _event(self.producer, self.consumer), _event(self.consumer, self.producer)
        self.fwd, self.back = fwd, back
        self.enque_ids: dict[int, int] = {}  # slot -> event ID of its EnQue flag, until DeQue waits on it
        self.free_ids: dict[int, int] = {}  # slot -> event ID of its FreeTensor flag, until AllocTensor waits
        self.free_slots = deque(range(len(addresses)))
        self.freed_pending: set[int] = set()  # slots whose FreeTensor flag is not yet waited
        self.queued: deque = deque()

    def _slot_of(self, tensor: LocalTensor) -> int:
        try:
            return self.addresses.index(tensor.address)
        except ValueError:
            raise self.pipe.core.fault(SyncFault(f"tensor at {tensor.address} does not belong to this "
                                                 f"{self.position.name} queue"), "FreeTensor", self.consumer)

    def AllocTensor(self, dtype) -> LocalTensor:
        core = self.pipe.core
        if not self.free_slots:
            raise core.fault(CapacityExceeded(
                f"AllocTensor on a {self.position.name} queue with all {len(self.addresses)} buffers in use "
                "(missing FreeTensor?)", buffer=self.buffer.name), "AllocTensor", self.producer)
        slot = self.free_slots.popleft()
        if slot in self.freed_pending:  # wait until the consumer has released this buffer
            self.freed_pending.discard(slot)
            event_id = self.free_ids.pop(slot)
            wait_flag(core, self.back, event_id, "TQue.AllocTensor", _getframe(1))
            self.pipe.ReleaseEventID(self.back, event_id)
        size = self.length // np.dtype(dtype).itemsize
        return LocalTensor(self.buffer, self.addresses[slot], dtype, size, self.position.name)

    def EnQue(self, tensor: LocalTensor) -> None:
        slot = self._slot_of(tensor)
        if slot in self.enque_ids:  # its DeQue would find one flag for two entries
            raise self.pipe.core.fault(SyncFault(f"EnQue of a buffer already in the {self.position.name} queue "
                                                 "(EnQue twice without a DeQue)", buffer=self.buffer.name,
                                                 addr_range=(self.addresses[slot], self.addresses[slot] + self.length)),
                                       "EnQue", self.producer)
        event_id = self.enque_ids[slot] = self.pipe.AllocEventID(self.fwd)
        set_flag(self.pipe.core, self.fwd, event_id, "TQue.EnQue", _getframe(1))
        self.queued.append(tensor)

    def DeQue(self, dtype=None) -> LocalTensor:
        if not self.queued:
            raise self.pipe.core.fault(SyncFault(f"DeQue on an empty {self.position.name} queue"), "DeQue",
                                       self.consumer)
        tensor = self.queued.popleft()
        event_id = self.enque_ids.pop(self._slot_of(tensor))
        wait_flag(self.pipe.core, self.fwd, event_id, "TQue.DeQue", _getframe(1))
        self.pipe.ReleaseEventID(self.fwd, event_id)
        return tensor if dtype is None else tensor.ReinterpretCast(dtype)

    def FreeAllEvent(self) -> None:
        """Wait for every buffer's outstanding FreeTensor flag and give its event ID back (TQueBind::FreeAllEvent:
        the buffers stay usable; their next AllocTensor waits for nothing)."""
        for slot in sorted(self.freed_pending):
            event_id = self.free_ids.pop(slot)
            wait_flag(self.pipe.core, self.back, event_id, "TQue.FreeAllEvent")
            self.pipe.ReleaseEventID(self.back, event_id)
        self.freed_pending.clear()

    def FreeTensor(self, tensor: LocalTensor) -> None:
        slot = self._slot_of(tensor)
        if slot in self.free_slots:
            raise self.pipe.core.fault(SyncFault("FreeTensor of a buffer that is not allocated (double free)"),
                                       "FreeTensor", self.consumer)
        event_id = self.free_ids[slot] = self.pipe.AllocEventID(self.back)
        set_flag(self.pipe.core, self.back, event_id, "TQue.FreeTensor", _getframe(1))
        self.freed_pending.add(slot)
        self.free_slots.append(slot)


def protocol_state(*objects) -> tuple:
    """The queue protocol's state of TQues and TPipes, as values: a queue's slots, event IDs and queued tensors, a
    pipe's taken event IDs and used memory. What a replayable unit's short key (engine/replay.py) holds of them."""
    state = []
    for obj in objects:
        d = obj.__dict__
        free_slots = d.get("free_slots")
        if free_slots is not None:  # a queue
            enque_ids, free_ids, freed_pending, queued = d["enque_ids"], d["free_ids"], d["freed_pending"], d["queued"]
            if enque_ids or free_ids or freed_pending or queued:
                state.append((tuple(enque_ids.items()), tuple(free_ids.items()), tuple(free_slots),
                              frozenset(freed_pending),
                              tuple([(t.address, t.dtype, t.size) for t in queued]) if queued else ()))
            else:  # no flag pending, nothing queued: its free slots (slot numbers; the form above starts with a tuple)
                state.append(tuple(free_slots))
        elif isinstance(obj, TPipe):
            event_ids = d["event_ids"]
            state.append((tuple([(event, frozenset(ids)) for event, ids in event_ids.items()]) if event_ids else (),
                          tuple(d["used"].items()), d["destroyed"]))
        else:  # a queue never given a buffer (InitBuffer)
            state.append(None)
    return tuple(state)
