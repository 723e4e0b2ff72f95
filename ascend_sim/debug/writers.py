"""Who wrote a byte: the Writer of a byte, and the byte-level map of a Fixpipe store back to its L0C source.

Shared by the replay debugger (who-wrote) and provenance (the chain of records behind an element).
"""
from __future__ import annotations

__all__ = ["Writer", "fixpipe_source_byte", "strided_index"]


class Writer:
    """A record that wrote (or, for a Fixpipe's source, accumulated) a byte: where it sits in the run."""

    __slots__ = ("record", "seq")

    def __init__(self, record, seq: int):
        self.record, self.seq = record, seq

    core = property(lambda self: self.record.core)
    pipe = property(lambda self: self.record.pipe.name)
    name = property(lambda self: self.record.name)
    start = property(lambda self: self.record.start)
    end = property(lambda self: self.record.end)
    source = property(lambda self: self.record.source)

    def __repr__(self) -> str:
        r = self.record
        return f"<#{self.seq} core {r.core} {r.pipe.name} {r.name} [{r.start:.0f}, {r.end:.0f}) at {r.source}>"


def fixpipe_source_byte(fix, gm_buf, byte_offset: int):
    """The L0C byte (first byte of the fp32 value) that Fixpipe `fix` wrote to GM byte byte_offset, or None."""
    ops = fix.args  # FixpipeOperands (isa/fixpipe.py)
    if ops.dbuf is not gm_buf:
        return None
    s0, s_pitch, s_nd, d0, d_nd = ops.s0, ops.s_pitch, ops.s_nd, ops.d0, ops.d_nd
    shape, strides, out, nd_num, nz2nd, split = ops.shape, ops.strides, ops.out, ops.nd_num, ops.nz2nd, ops.split
    size = out.itemsize
    for t in range(nd_num):
        base = d0 + t * d_nd * size
        # the destination element index in the strided view `shape` / `strides` (bytes)
        rel = byte_offset - base
        if rel < 0:
            continue
        idx = strided_index(rel - rel % size, shape, strides)
        if idx is None:
            continue
        if nz2nd:  # d[row, col] = values[col // 16, row, col % 16]
            row, col = idx
            n_i, r, c = col // 16, row, col % 16
        elif split:  # d[j, row, e] = values[j // 2, row, (j % 2) * 8 + e]
            j, row, e = idx
            n_i, r, c = j // 2, row, (j % 2) * 8 + e
        else:  # d[n, row, c] = values[n, row, c]
            n_i, r, c = idx
        return s0 + t * s_nd + n_i * s_pitch + r * 64 + c * 4
    return None


def strided_index(rel: int, shape, strides):
    """The index whose byte offset in the strided view is `rel`, or None."""
    order = sorted(range(len(shape)), key=lambda d: strides[d], reverse=True)

    def search(rest: int, pos: int, idx: list):
        if pos == len(order):
            return tuple(idx) if rest == 0 else None
        d = order[pos]
        stride, size = strides[d], shape[d]
        if stride == 0:
            return search(rest, pos + 1, idx)
        top = min(rest // stride, size - 1)
        for i in range(top, max(-1, top - 2), -1):
            idx[d] = i
            found = search(rest - i * stride, pos + 1, idx)
            if found is not None:
                return found
        return None
    return search(rel, 0, [0] * len(shape))
