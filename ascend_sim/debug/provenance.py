"""Provenance of one GM output element: the record that stored it, the Mmads that accumulated its L0C cell, and the
loads that brought their operands (MTE1 into L0A/L0B, MTE2 into L1), back to the GM bytes they read. A store that
is an atomic add (SetAtomicAdd) is followed by the earlier store of the value it added to, and so on; GM bytes a
move read that an earlier store of the run wrote (the workspace a MIX kernel's AIC hands to its AIV, then UB and
TransDataTo5HD on the AIV) are followed to that store.

The store and its Mmads come from Debugger.who_wrote. An Mmad's operands for one cell (row r, column c) are row r
of A in L0A (ZZ fractals, NZ on the 950) and column c of B in L0B (ZN fractals); their exact last writers and the source bytes of
each move are measured by running the records again (dataflow.DataFlow), never taken from the spans.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.debug.dataflow import is_move
from ascend_sim.debug.writers import Writer, fixpipe_source_byte

__all__ = ["Provenance", "Step", "trace_element"]

FRACTAL = 512  # bytes of one L0A/L0B fractal


@dataclass
class Step:
    """One record on the element's path. role: "stored", "accumulated", "loaded" or "wrote"; into: what it wrote
    ("gm y", "L0C", "L0A", "L1", ...); fed: the indices of the records it fed; nbytes: how many bytes of its output
    are on the path; inputs: {GM allocation: byte offsets} it read from GM for them; detail: for an Mmad, the
    cell of its product."""

    writer: object
    role: str
    into: str
    fed: set = field(default_factory=set)
    nbytes: int = 0
    inputs: dict = field(default_factory=dict)
    detail: str = ""


@dataclass
class Provenance:
    """The steps, the store first, then the Mmads (latest first), then the loads by stage and latest first."""

    steps: list

    def by_role(self, role: str) -> list:
        return [s for s in self.steps if s.role == role]

    def loads_into(self, into: str) -> list:
        return [s for s in self.steps if s.role == "loaded" and s.into == into]

    def inputs(self) -> dict:
        """{GM allocation: sorted byte offsets} of every GM byte the element was computed from."""
        merged: dict = {}
        for step in self.steps:
            for name, offsets in step.inputs.items():
                merged[name] = np.union1d(merged.get(name, np.zeros(0, np.int64)), offsets)
        return merged


def trace_element(dbg, gm_name: str, byte_offset: int) -> Provenance:
    """The provenance of byte `byte_offset` of GM allocation `gm_name` among the records applied so far. GM bytes a
    move read that an earlier record of the run wrote (a MIX kernel's workspace) are followed to that store."""

    steps: dict[int, Step] = {}
    flow = dbg.flow

    def gm_source(step: Step, name: str, src: np.ndarray, seq: int) -> None:
        """GM bytes a move at `seq` read: a store of this run before it, else an input of the computation."""
        written = {int(g) for g in np.unique(src // 2) if dbg.who_wrote(name, int(g) * 2, seq)}
        for granule in sorted(written):
            store(name, granule * 2, seq, seq)
        rest = src[[int(b) // 2 not in written for b in src]]
        if rest.size:
            step.inputs[name] = np.union1d(step.inputs.get(name, np.zeros(0, np.int64)), rest)

    def chase(core: int, key, offsets, before: int, fed: int) -> None:
        for seq, wrote in flow.last_writers(key, offsets, before, core).items():
            rec = dbg.records[seq]
            step = steps.get(seq)
            if step is None:
                step = steps[seq] = Step(Writer(rec, seq), "loaded" if is_move(rec) else "wrote", key[1])
            step.fed.add(fed)
            step.nbytes += int(wrote.size)
            if not is_move(rec):
                continue
            for src_key, src in flow.sources(seq, key, wrote).items():
                if src_key[0] == "GM":
                    gm_source(step, src_key[1], src, seq)
                else:
                    chase(core, src_key, src, seq, seq)

    def store(gm: str, byte: int, before, fed) -> None:
        gm_buf = dbg.chip.gm[gm]
        while True:
            writers = dbg.who_wrote(gm, byte, before)
            if not writers:
                return
            first = writers[0]
            rec = first.record
            if first.seq in steps:  # another byte of the same element: already on the path
                steps[first.seq].fed |= set() if fed is None else {fed}
                return
            stored = steps[first.seq] = Step(first, "stored", f"gm {gm}", set() if fed is None else {fed}, nbytes=1)
            if rec.name == "Fixpipe":
                l0c_byte = fixpipe_source_byte(rec, gm_buf, byte)
                for w in writers[1:]:
                    if w.name != "Mmad":
                        steps[w.seq] = Step(w, "wrote", "L0C", {first.seq}, 4)
                        continue
                    a_offsets, b_offsets, (row, col) = mmad_operands(w.record, l0c_byte)
                    p = w.record.params
                    steps[w.seq] = Step(w, "accumulated", "L0C", {first.seq}, 4,
                                        detail=f"row {row}, column {col} of its {p.m} x {p.n} x {p.k} product")
                    chase(w.core, (w.core, "L0A"), a_offsets, w.seq, w.seq)
                    chase(w.core, (w.core, "L0B"), b_offsets, w.seq, w.seq)
            elif is_move(rec):
                for src_key, src in flow.sources(first.seq, ("GM", gm), [byte]).items():
                    if src_key[0] == "GM":
                        gm_source(stored, src_key[1], src, first.seq)
                    else:
                        chase(rec.core, src_key, src, first.seq, first.seq)
            if not any(name == "atomic" and value is not None for name, value in rec.registers):
                return
            stored.detail = "an atomic add: the value it added to follows"  # SetAtomicAdd: the earlier store
            before = first.seq

    store(gm_name, byte_offset, None, None)
    if not steps:
        return Provenance([])
    order = {"stored": 0, "accumulated": 1, "wrote": 1, "loaded": 2}
    stage = {"L0C": 0, "L0A": 1, "L0B": 1, "L1": 2}
    ordered = sorted(steps.values(), key=lambda s: (order[s.role], stage.get(s.into, 3), -s.writer.seq))
    return Provenance(ordered)


def mmad_operands(rec, l0c_byte: int):
    """The L0A bytes of row r and the L0B bytes of column c that an Mmad multiplies into the L0C cell holding byte
    `l0c_byte` (NZ [n1][m1*16][16] fp32 at its destination): (A offsets, B offsets, (r, c))."""
    (_, a0, _, _, b0, _, _, c0_addr, _, dtype, m, k, m1, n1, k1, c0, _, gemv, *_, a_nz) = rec.args
    rel = l0c_byte - c0_addr
    block = m1 * 16 * 16 * 4  # one 16-column block of C
    row, col = (rel % block) // 64, (rel // block) * 16 + (rel % 64) // 4
    size = np.dtype(dtype).itemsize
    kk = np.arange(k)
    if gemv:
        a = a0 + kk * size
    elif a_nz:  # NZ [k1][m1][16][c0]
        a = a0 + ((kk // c0) * m1 + row // 16) * FRACTAL + (row % 16) * 32 + (kk % c0) * size
    else:  # ZZ [m1][k1][16][c0]
        a = a0 + ((row // 16) * k1 + kk // c0) * FRACTAL + (row % 16) * 32 + (kk % c0) * size
    b = b0 + ((kk // c0) * n1 + col // 16) * FRACTAL + (col % 16) * 32 + (kk % c0) * size
    return _bytes(a, size), _bytes(b, size), (int(row), int(col))


def _bytes(starts: np.ndarray, size: int) -> np.ndarray:
    return (starts[:, None] + np.arange(size)).reshape(-1)
