"""`watch` at the `ascend-sim debug` prompt: stop when a record writes an element of an operator tensor, or a byte
range of a GM allocation or of a core's buffer (Debugger.watch); `continue` reports the old and new value.

A mixin of DebugShell: watchpoints share the breakpoints' numbers, `delete` and `info watchpoints`.
"""
from __future__ import annotations

import numpy as np

from frontends.debugger.parsing import Breakpoint, CommandError, integer


class WatchCommands:
    def do_watch(self, rest: str) -> None:
        parsed = self.parse_tensor(rest)
        if parsed is not None:
            t, index, text, _ = parsed
            if len(index) != len(t.logical_shape) or any(isinstance(i, slice) for i in index):
                raise CommandError(f"watch {t.name} needs one element: {len(t.logical_shape)} integers "
                                   f"({t.logical_format} {t.logical_shape})")
            lo = t.byte_offset(tuple(index))
            key, hi, label = ("GM", t.allocation), lo + t.dtype.itemsize, f"{t.name}{text}"
            show = lambda: str(self.dbg.tensor(t.name, tuple(index))[()])
        else:
            key, lo, hi, label = self._watched_bytes(rest)
            show = lambda: " ".join(f"{b:02x}" for b in self._state_bytes(key)[lo:hi][:32])
        predicate = self.dbg.watch(key, lo, hi)
        number = self.next_number
        self.next_number += 1
        self.breakpoints[number] = Breakpoint(number, label, predicate, "watchpoint", show)
        self.say(f"Watchpoint {number}: {label} (bytes [{lo}, {hi}) of {_where(key)}); value now {show()}")

    def _watched_bytes(self, rest: str):
        words = rest.split()
        options = {w.split("=")[0]: w.split("=", 1)[1] for w in words if "=" in w}
        words = [w for w in words if "=" not in w]
        if set(options) - {"core"}:
            raise CommandError(f"watch: unknown option {sorted(set(options) - {'core'})[0]!r}; only core=")
        chip = self.dbg.chip
        if len(words) == 4 and words[0] == "gm":
            name, key = words[1], ("GM", words[1])
            if name not in chip.gm.allocations:
                raise CommandError(f"watch gm: no allocation {name!r}; GM holds {', '.join(chip.gm.allocations)}")
        elif len(words) == 3:
            name = words[0]
            core = integer(options.get("core", str(self.dbg.record.core if self.dbg.record else 0)), "core")
            if core not in range(len(chip.cores)):
                raise CommandError(f"watch: no core {core}; cores 0-{len(chip.cores) - 1}")
            if name not in chip.cores[core].buffers:
                raise CommandError(f"watch: {name!r} is neither a tensor ({', '.join(self.tensor_names()) or 'none'})"
                                   f" nor a buffer of core {core} ({', '.join(chip.cores[core].buffers)})")
            key = (core, name)
        else:
            raise CommandError("watch needs TENSOR[INDEX], BUFFER [core=C] LO HI or gm NAME LO HI")
        lo, hi = integer(words[-2], "watch LO"), integer(words[-1], "watch HI")
        size = self._state_bytes(key).size
        if not 0 <= lo < hi <= size:
            raise CommandError(f"watch: bytes [{lo}, {hi}) outside {name}'s {size} bytes; LO < HI <= {size}")
        return key, lo, hi, f"{_where(key)} [{lo}, {hi})"

    def _state_bytes(self, key) -> np.ndarray:
        return self.dbg.gm(key[1]) if key[0] == "GM" else self.dbg.buffer(*key)

    def report_watch_hits(self) -> None:
        """After a stop: each watchpoint the record hit, with the value before and after it."""
        index = self.dbg.seq - 1
        hits = [bp for bp in self.breakpoints.values()
                if bp.kind == "watchpoint" and bp.predicate(self.dbg.record, index)]
        if not hits:
            return
        self.dbg.back()
        old = [bp.show() for bp in hits]
        self.dbg.step()
        for bp, before in zip(hits, old):
            self.say(f"Watchpoint {bp.number}: {bp.text}")
            self.say(f"Old value = {before}")
            self.say(f"New value = {bp.show()}")


def _where(key) -> str:
    return f"gm {key[1]}" if key[0] == "GM" else f"core {key[0]} {key[1]}"
