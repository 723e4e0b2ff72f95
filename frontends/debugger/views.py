"""`info queues` and `timeline` at the `ascend-sim debug` prompt: the TQue protocol as its flags left it, and a text
view of a core's pipes around the current record.

A mixin of DebugShell (it uses self.dbg, self.say and self._core). Both are read from the applied records alone:
TQue.EnQue / DeQue / FreeTensor / AllocTensor are flags whose records name the call (params["api"]).
"""
from __future__ import annotations

from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind
from frontends.debugger.parsing import CommandError, integer

QUEUE_CALLS = ("TQue.EnQue", "TQue.DeQue", "TQue.AllocTensor", "TQue.FreeTensor")
TIMELINE_COLUMNS = 96
PIPE_ORDER = [Pipe.S, Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.V, Pipe.MTE3, Pipe.ALL]  # the data's way


class ViewCommands:
    # ------------------------------------------------------------------ info queues
    def info_queues(self, tail: str) -> None:
        core = self._core(tail, "queues")
        counts = dict.fromkeys(QUEUE_CALLS, 0)
        pending: dict = {}  # (event, id) -> (index, record) of the EnQue / FreeTensor not yet waited
        for i, rec in enumerate(self.dbg.records[:self.dbg.seq]):
            if rec.core != core or rec.event is None:
                continue
            api = rec.params.get("api")
            if api in counts:
                counts[api] += 1
            if rec.spec.kind is Kind.WAIT_FLAG:  # DeQue, AllocTensor, or TPipe.Destroy's final waits
                pending.pop(rec.event, None)
            elif api in ("TQue.EnQue", "TQue.FreeTensor"):
                pending[rec.event] = (i, rec)
        if not any(counts.values()):
            self.say(f"core {core}: no TQue call among the applied records")
            return
        self.say(f"core {core} TQue calls applied: " + ", ".join(f"{api[5:]} {n}" for api, n in counts.items()))
        enqueued = [(k, v) for k, v in pending.items() if v[1].params["api"] == "TQue.EnQue"]
        freed = [(k, v) for k, v in pending.items() if v[1].params["api"] == "TQue.FreeTensor"]
        for title, items, waiter in (("enqueued, not yet dequeued", enqueued, "DeQue"),
                                     ("freed, not yet allocated again", freed, "AllocTensor")):
            self.say(f"  {title}: {len(items) or 'none'}")
            for (event, event_id), (i, rec) in sorted(items, key=lambda item: item[1][0]):
                src, dst = event.split("_")
                self.say(f"    {src} -> {dst} id {event_id}: {rec.params['api'][5:]} #{i} at {rec.source}, waiting "
                         f"for its {waiter} on {dst}")

    # ------------------------------------------------------------------ timeline
    def do_timeline(self, rest: str) -> None:
        options = {}
        for token in rest.split():
            key, sep, value = token.partition("=")
            if not sep or key not in ("core", "cycles"):
                raise CommandError(f"timeline: unexpected {token!r}; give core=C cycles=N")
            options[key] = value
        dbg = self.dbg
        core = self._core(f"core={options['core']}" if "core" in options else "", "timeline")
        span = integer(options.get("cycles", "0"), "cycles") or None
        if span is not None and span < TIMELINE_COLUMNS:
            raise CommandError(f"timeline: cycles={span} below {TIMELINE_COLUMNS} (one column per cycle at least)")
        mine = [(i, r) for i, r in enumerate(dbg.records) if r.core == core]
        if not mine:
            raise CommandError(f"timeline: core {core} ran no record")
        rec = dbg.record if dbg.record is not None and dbg.record.core == core else None
        now = rec.start if rec is not None else (self._last_start(core) if dbg.seq else 0.0)
        end = max(r.end for _, r in mine)
        span = span or max(TIMELINE_COLUMNS, min(end, 2000))
        span = -(-span // TIMELINE_COLUMNS) * TIMELINE_COLUMNS  # whole cycles per column
        lo = float(int(max(0.0, min(now - span / 2, end - span))))  # whole cycles, as printed
        scale = span / TIMELINE_COLUMNS
        rows = {}
        for i, r in mine:
            if r.end <= lo or r.start >= lo + span or r.end == r.start:
                continue
            row = rows.setdefault(r.pipe, [" "] * TIMELINE_COLUMNS)
            first = int((max(r.start, lo) - lo) / scale)
            last = max(first + 1, int(-(-(min(r.end, lo + span) - lo) // scale)))
            mark = r.name[0].upper() if i < dbg.seq else r.name[0].lower()
            for col in range(first, min(last, TIMELINE_COLUMNS)):
                row[col] = mark
        bad = dbg.fault_record
        if bad is not None and bad.core == core and bad.start is not None and bad.end is not None:
            row = rows.setdefault(bad.pipe, [" "] * TIMELINE_COLUMNS)
            first = int((min(max(bad.start, lo), lo + span - 1) - lo) / scale)
            for col in range(first, max(first + 1, min(TIMELINE_COLUMNS, int(-(-(bad.end - lo) // scale))))):
                row[col] = "!"  # the faulting record, where it would have run
        self.say(f"timeline core {core}: cycles [{lo:.0f}, {lo + span:.0f}), {scale:.0f} cycles per column; "
                 f"uppercase: applied, lowercase: not yet; ^ the current record"
                 + ("; ! the faulting record" if bad is not None and bad.core == core else ""))
        for pipe in sorted(rows, key=PIPE_ORDER.index):
            self.say(f"  {pipe.name:<5s}|{''.join(rows[pipe])}|")
        if rec is not None:
            col = min(TIMELINE_COLUMNS - 1, int((rec.start - lo) / scale))
            self.say(f"  {'':<5s} {' ' * col}^ #{dbg.seq - 1} {rec.pipe.name} {rec.name} [{rec.start:.0f}, "
                     f"{rec.end:.0f})")

    def _last_start(self, core: int) -> float:
        starts = [r.start for r in self.dbg.records[:self.dbg.seq] if r.core == core]
        return starts[-1] if starts else 0.0
