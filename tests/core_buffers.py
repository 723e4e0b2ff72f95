"""Direct access to one simulated core's buffers, for the instruction tests: a LocalTensor over a buffer, and the
buffer's bytes written or read as an array (outside any instruction, so nothing is recorded or timed)."""
import numpy as np

from ascend_sim.ascendc import LocalTensor


def local(core, where, dtype, offset_bytes=0):
    """A LocalTensor of dtype from offset_bytes to the end of buffer `where` (L1, L0A, ...)."""
    buf = core.buffers[where]
    return LocalTensor(buf, offset_bytes, dtype, (buf.capacity - offset_bytes) // np.dtype(dtype).itemsize, where)


def fill(core, where, values):
    """Write values' bytes at the start of buffer `where`."""
    raw = np.ascontiguousarray(values).view(np.uint8)
    core.buffers[where].data[:raw.size] = raw


def elems(core, where, dtype, n):
    """The first n elements of buffer `where` as dtype (a copy)."""
    return core.buffers[where].data[:n * np.dtype(dtype).itemsize].view(dtype).copy()
