"""The bytes of an on-chip buffer that the launch has written, for the buffers an Mmad reads as a starting value:
an accumulating Mmad adds L0C's old values, a bias Mmad starts from the bias table (BT). A kernel starts with
whatever the previous kernel left there, so an Mmad reading a byte that no instruction of this launch wrote is a
kernel bug; the simulator's buffers start zeroed and would hide it.

Other reads are not checked: kernels read padding they never wrote and drop what it gives (a Fixpipe of L0C rows
past the tile, as the 950 kernel split's 32-byte pieces do; an L1 row's tail; a UB block's unused lanes).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

from ascend_sim.machine.pipes import Pipe

WATCHED = ("L0C", "BT")
CHECKED_PIPE = Pipe.M  # whose reads of a watched buffer must be of written bytes: the Mmads'


class WrittenRanges:
    """Sorted, disjoint, non-touching byte ranges [start, end) written so far."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, lo: int, hi: int) -> None:
        if lo >= hi:
            return
        starts, ends = self.starts, self.ends
        i = bisect_left(ends, lo)  # the first range ending at or after lo (touching ones merge)
        j = bisect_right(starts, hi)  # past the last range starting at or before hi
        if i < j:
            lo, hi = min(lo, starts[i]), max(hi, ends[j - 1])
        starts[i:j] = (lo,)
        ends[i:j] = (hi,)

    def first_gap(self, lo: int, hi: int) -> tuple[int, int] | None:
        """The first unwritten part of [lo, hi), or None when all of it was written."""
        if lo >= hi:
            return None
        i = bisect_right(self.starts, lo) - 1
        if i >= 0 and self.ends[i] >= hi:
            return None
        if i >= 0 and self.ends[i] > lo:
            lo = self.ends[i]
        j = bisect_left(self.starts, lo, i + 1)
        return lo, min(hi, self.starts[j]) if j < len(self.starts) else hi
