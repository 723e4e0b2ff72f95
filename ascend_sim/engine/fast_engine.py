"""The fast engine: the kernel's Python only issues records; the scheduler runs once, compiled, afterwards.

On the exact engine each record goes to its core's scheduler as it is issued, and the scheduler runs the passes
(races, semantics, hooks) on each record as it starts. The scheduler's decisions depend only on the records
submitted so far, in the order they were submitted (core after core, program order), so the same schedule can
be computed after the kernel's Python has finished: the compiled transcription of the scheduler
(fast_schedule.py) times every record and says in which order the exact scheduler would have started them; the
passes then run on the records in that order. Results, cycles, per-pipe figures, records and faults are the
exact engine's, record for record (tests/ascend_sim/engine/test_engines.py).

When the compiled pass finds anything but a clean end (a deadlock, a flag left set, a cross-core count past 15,
a core left at a SyncAll), or when the kernel's Python raised, the records issued so far are submitted to the
exact scheduler instead, in the same order: it reaches the same state the exact engine would have and raises
the same fault, with the same message. The fast engine runs no hooks (a hook may look at the machine while the
kernel runs); `Chip(engine="auto")` picks the exact engine when hooks are attached.

The race checks run compiled too (fast_races.py), before the other passes: when they find no race, the passes
run without the Python checkers; when they find one, the passes run with them, in the same order, and the
Python checker raises the fault at the same record, with its own message.
"""
from __future__ import annotations


def run_passes(chip, cores) -> bool:
    """Schedule the cores' streams with the compiled pass and run the passes in the exact engine's order.
    False (nothing done) when the stream does not end cleanly: the caller falls back to `submit_all`."""
    from ascend_sim.passes.fast_schedule import schedule

    streams = [core.stream for core in cores]
    s = schedule(streams, [core.core_type.name for core in cores], [core.group for core in cores], chip.platform)
    if not s.clean:
        return False
    records = [rec for stream in streams for rec in stream]
    if chip.record:  # the records carry their schedule as on the exact engine
        for rec, issue, start, end in zip(records, *s.times()):
            rec.issue = issue
            rec.start = start
            rec.end = end
    for i, by in s.releases(records):
        records[i].released_by = by
    checked = chip.check_races and _no_race(chip, records, s)
    if chip.execute or (chip.check_races and not checked):
        runs = [core.run_checked if checked else core._run for core in cores]
        for i in s.order.tolist():
            rec = records[i]
            runs[rec.core](rec)
    elif chip.record:  # all the passes would do: log the order they ran in
        chip.executed = list(map(records.__getitem__, s.order.tolist()))
    for core, free, busy in zip(cores, s.pipe_free(), s.busy()):
        core.schedule.pipe_free = free
        core.schedule.busy = busy
        core.stream = []  # the records live on in the log if they are recorded
    return True


def _no_race(chip, records, s) -> bool:
    """The compiled race checker (fast_races.py) finds no race where the Python checkers, run on the records in
    the schedule's order, would; on anything else the Python checkers run and raise their own fault."""
    from ascend_sim.passes.fast_races import CLEAN, first_race

    return first_race(records, s, chip.gm_races.granule, chip.gm_races.shared) == CLEAN


def submit_all(cores) -> None:
    """Submit every record issued so far to the exact scheduler, in the order the exact engine submits them
    (core after core, program order): the passes run and faults are raised exactly as there."""
    for core in cores:
        submit = core.schedule.submit
        for rec in core.stream:
            submit(rec)
        core.stream = []
