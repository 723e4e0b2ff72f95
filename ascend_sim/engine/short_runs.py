"""Runs of LoadData / Mmad records too short to plan (replay_data.RunPlan refuses them: fewer than MIN_MMADS
Mmads, on an L1 window as large as what they read), run record by record except their LoadData2D copies that go
alike, which run as one strided copy.

C3D conv3a and X3D load each Mmad's B with three LoadData2D in a row (C3D: 8 fractals each, transposed, their
sources 512 bytes apart going down and their destinations 4096 bytes apart going up): 12,672 records on C3D, each
a record's Python and a numpy copy. Consecutive LoadData2D records of one run that copy alike (the same buffers,
pitches, repeats, transpose and dtype, each one's source and destination start a fixed step after the one
before) are one strided copy over a leading axis of those steps, when no two of their destination fractals
overlap (then the order the records wrote them in cannot matter: the source is L1, never the destination, and
is read only). The bytes are those of isa/mte1.py's LoadData2D run record by record (tests:
tests/ascend_sim/engine/test_short_runs.py).
"""
from __future__ import annotations

FRACTAL = 512  # bytes a LoadData2D repeat moves


class ShortRun:
    """A short run's records as steps: (first record of the step, how many records, source step, destination
    step); a step of one record runs as the record, a longer one as one copy (load2d_copies)."""

    __slots__ = ("steps",)

    def __init__(self, steps: list):
        self.steps = steps

    @classmethod
    def compiled(cls, args_list: list) -> ShortRun | None:
        """The run's steps from its records' operands (in the run's order; they depend only on local addresses,
        the same on every core), or None when no two records join (then the records run as they are)."""
        steps = []
        j = 0
        while j < len(args_list):
            count, s_step, d_step = _alike_after(args_list, j)
            steps.append((j, count, s_step, d_step))
            j += count
        return cls(steps) if len(steps) < len(args_list) else None

    def run(self, chains, core: int, records: list, runs, operands, names) -> None:
        """The run's data work (`records`: its records, indices into `runs` / `operands` / `names`; `chains`: the
        pass's replay_data.L0CChains, which the records run through)."""
        for j, count, s_step, d_step in self.steps:
            i = records[j]
            if count == 1:
                chains.run(runs[i], operands[i], core, names[i])
            else:  # LoadData2D neither reads nor writes L0C: the kept sums stay kept
                load2d_copies(operands[i].args, count, s_step, d_step)


    def run_loads(self, records: list, runs, operands) -> None:
        """The steps of a list of loads (RunPlan's last loads: none reads or writes L0C) run in order."""
        for j, count, s_step, d_step in self.steps:
            i = records[j]
            if count == 1:
                runs[i](operands[i])
            else:
                load2d_copies(operands[i].args, count, s_step, d_step)


def load2d_copies(ops, count: int, s_step: int, d_step: int) -> None:
    """`count` LoadData2D (isa/mte1.py's Load2DOperands `ops` of the first; the k-th's source and destination
    k * s_step and k * d_step bytes later) as one strided copy; their destination fractals do not overlap."""
    sbuf, s0, s_pitch, dbuf, d0, d_pitch, reps, transpose, dtype, _ = ops
    if transpose:  # element [r][c] of each 16 x 16 fractal goes to [c][r]
        dbuf.strided(d0, (count, reps, 16, 16), (d_step, d_pitch, 32, 2), dtype)[...] = \
            sbuf.strided(s0, (count, reps, 16, 16), (s_step, s_pitch, 32, 2), dtype).transpose(0, 1, 3, 2)
    else:
        dbuf.strided(d0, (count, reps, FRACTAL), (d_step, d_pitch, 1))[...] = \
            sbuf.strided(s0, (count, reps, FRACTAL), (s_step, s_pitch, 1))


def _alike_after(args_list: list, j: int) -> tuple:
    """How many records from j on copy alike with j (1 when j is not a LoadData2D or the next does not join),
    and their source and destination steps."""
    first = args_list[j]
    if not _is_load2d(first) or j + 1 == len(args_list):
        return 1, 0, 0
    second = args_list[j + 1]
    if not (_is_load2d(second) and _same_form(first, second)):
        return 1, 0, 0
    s_step, d_step = second.s0 - first.s0, second.d0 - first.d0
    if not _apart(d_step, first.d_pitch, first.reps):
        return 1, 0, 0
    count = 2
    while j + count < len(args_list):
        nxt = args_list[j + count]
        if not (_is_load2d(nxt) and _same_form(first, nxt) and nxt.s0 == first.s0 + count * s_step
                and nxt.d0 == first.d0 + count * d_step):
            break
        count += 1
    return count, s_step, d_step


def _is_load2d(args) -> bool:
    fields = getattr(args, "_fields", None)
    return fields is not None and len(fields) > 2 and fields[2] == "s_pitch"


def _same_form(a, b) -> bool:
    """Two LoadData2D operands that differ at most in their source and destination starts (buffers by name:
    a run's records come from templates made on other cores)."""
    return (a.sbuf.name == b.sbuf.name and a.dbuf.name == b.dbuf.name != a.sbuf.name and a.s_pitch == b.s_pitch
            and a.d_pitch == b.d_pitch and a.reps == b.reps and a.transpose == b.transpose and a.dtype == b.dtype)


def _apart(d_step: int, d_pitch: int, reps: int) -> bool:
    """Loads d_step bytes apart, each of `reps` fractals d_pitch apart, write no fractal twice: each load's
    fractals are apart, and each load's span fits in the step (a sufficient rule; interleaved loads, which it
    refuses, run record by record)."""
    return (reps == 1 or d_pitch >= FRACTAL) and abs(d_step) >= (reps - 1) * d_pitch + FRACTAL
