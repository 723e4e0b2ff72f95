"""Which bytes a record really wrote, and where the bytes a move wrote came from, measured by running the record.

A record's byte ranges are spans: a strided LoadData's span covers fractals it skips, so the spans alone cannot
say which record last wrote a byte. Instead a record is executed again, alone, on the debugger's arrays:

* written bytes: fill its read spans with random bytes and its write spans with a sentinel, execute, and see what
  changed; twice, with the same random bytes and another sentinel: a byte the record computes from its sources
  is the same in both runs, so it cannot equal both sentinels;
* sources of a move (an instruction of kind MOVE: DataCopy, LoadData, TransDataTo5HD ...): fill one read span
  with tags (each 2-byte granule its own index, in 14-bit digits, one run per digit), execute, and read the tags
  that arrived.

The debugger's state is restored after each run, byte for byte.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.record import Kind

__all__ = ["DataFlow", "is_move"]


def is_move(rec) -> bool:
    """Whether a record only moves bytes (its spec's kind is MOVE), so that the sources of what it wrote can be
    traced with tags."""
    return rec.spec.kind is Kind.MOVE
_DIGIT_BITS = 14
_SENTINELS = (0xA5, 0x3C)


class DataFlow:
    """Exact byte-level write sets and move sources of a debugger's records (cached per record)."""

    def __init__(self, dbg):
        self.dbg = dbg
        self._written: dict[int, list] = {}
        self._noise = np.random.default_rng(2024).integers(0, 256, 1 << 20, dtype=np.uint8)

    # ------------------------------------------------------------------ written bytes
    def written(self, seq: int) -> list:
        """[(state key, lo, bool mask over [lo, hi)), ...]: the bytes record `seq` writes, per write span."""
        found = self._written.get(seq)
        if found is None:
            rec = self.dbg.records[seq]
            masks = [np.zeros(hi - lo, bool) for _, lo, hi in rec.writes]
            with self._isolated(rec) as state:
                for sentinel in _SENTINELS:
                    for j, (buf, lo, hi) in enumerate(rec.reads):
                        state[self.dbg._key[id(buf)]][lo:hi] = self._noise_bytes(hi - lo, j)
                    for buf, lo, hi in rec.writes:
                        state[self.dbg._key[id(buf)]][lo:hi] = sentinel
                    _execute(rec)
                    for mask, (buf, lo, hi) in zip(masks, rec.writes):
                        mask |= state[self.dbg._key[id(buf)]][lo:hi] != sentinel
            found = self._written[seq] = [(self.dbg._key[id(buf)], lo, mask)
                                          for mask, (buf, lo, hi) in zip(masks, rec.writes)]
        return found

    def written_of(self, seq: int, key, offsets: np.ndarray) -> np.ndarray:
        """A bool array: which of `offsets` (bytes of state `key`) record `seq` writes."""
        hit = np.zeros(offsets.size, bool)
        for k, lo, mask in self.written(seq):
            if k != key:
                continue
            inside = (offsets >= lo) & (offsets < lo + mask.size)
            hit[inside] |= mask[offsets[inside] - lo]
        return hit

    def last_writers(self, key, offsets, before: int, core=None) -> dict:
        """{seq: offsets it wrote}: for each byte of state `key` in `offsets`, the last record before index
        `before` (of `core` if given) that wrote it. Bytes no record wrote are left out."""
        pending = np.unique(np.asarray(offsets, np.int64))
        found: dict[int, np.ndarray] = {}
        records, keys = self.dbg.records, self.dbg._key
        for i in range(before - 1, -1, -1):
            if not pending.size:
                break
            rec = records[i]
            if core is not None and rec.core != core:
                continue
            if not any(keys[id(buf)] == key and lo <= pending[-1] and hi > pending[0] for buf, lo, hi in rec.writes):
                continue
            hit = self.written_of(i, key, pending)
            if hit.any():
                found[i] = pending[hit]
                pending = pending[~hit]
        return found

    # ------------------------------------------------------------------ move sources
    def sources(self, seq: int, key, offsets) -> dict:
        """{state key: sorted source byte offsets} of the bytes `offsets` of state `key` that move record `seq`
        wrote; bytes it wrote as zero padding have no source."""
        rec = self.dbg.records[seq]
        offsets = np.asarray(offsets, np.int64)
        granules = np.unique(offsets // 2)
        found: dict = {}
        keys = self.dbg._key
        for j, (buf, lo, hi) in enumerate(rec.reads):
            src_key = keys[id(buf)]
            g0, g1 = lo // 2, -(-hi // 2)
            digits = max(1, -(-max(g1 - 1, 1).bit_length() // _DIGIT_BITS))
            source = np.zeros(granules.size, np.int64)
            padding = np.zeros(granules.size, bool)
            with self._isolated(rec) as state:
                for d in range(digits):
                    for b2, lo2, hi2 in rec.writes + rec.reads:  # unwritten bytes then read as padding
                        state[keys[id(b2)]][lo2:hi2] = 0
                    ids = np.arange(g0, g1, dtype=np.int64)
                    tags = (((ids >> (_DIGIT_BITS * d)) & ((1 << _DIGIT_BITS) - 1)) + 1).astype("<u2")
                    state[src_key][2 * g0:2 * g1] = tags.view(np.uint8)
                    _execute(rec)
                    got = state[key][2 * granules[0]:2 * granules[-1] + 2].view("<u2")[granules - granules[0]]
                    got = got.astype(np.int64)
                    padding |= got == 0
                    source += (got - 1) << (_DIGIT_BITS * d)
            moved = ~padding & (source >= g0) & (source < g1)
            if moved.any():
                byte = np.concatenate([2 * source[moved], 2 * source[moved] + 1])
                found[src_key] = np.union1d(found.get(src_key, np.zeros(0, np.int64)), byte)
        return found

    # ------------------------------------------------------------------ machinery
    def _noise_bytes(self, size: int, span: int) -> np.ndarray:
        noise = np.roll(self._noise, 7919 * (span + 1))
        return np.resize(noise, size)

    def _isolated(self, rec):
        return _Isolated(self.dbg, rec)


class _Isolated:
    """Installs the debugger's arrays and restores every byte of the record's spans afterwards."""

    def __init__(self, dbg, rec):
        self.dbg, self.rec = dbg, rec

    def __enter__(self):
        dbg, state = self.dbg, self.dbg._state
        self.saved = [(dbg._key[id(buf)], lo, state[dbg._key[id(buf)]][lo:hi].copy())
                      for buf, lo, hi in self.rec.reads + self.rec.writes]
        self.installed = dbg._installed()
        self.installed.__enter__()
        return state

    def __exit__(self, *exc):
        self.installed.__exit__(*exc)
        state = self.dbg._state
        for key, lo, data in reversed(self.saved):
            state[key][lo:lo + data.size] = data
        return False


def _execute(rec) -> None:
    with np.errstate(all="ignore"):  # random bytes are NaNs and infinities too
        rec.execute()
