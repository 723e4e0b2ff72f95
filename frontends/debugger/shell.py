"""The `ascend-sim debug` prompt: a gdb-like line interface over ascend_sim.debug.Debugger.

Every command is one method `do_<name>(self, rest)`; ALIASES maps gdb's short forms to them. A bad command or
argument prints one line `error: ...` and the session goes on. Output goes to `out` (stdout), errors included, so
that a transcript keeps its order. `help` lists the commands; docs/debugging.md describes them.
"""
from __future__ import annotations

import linecache
import os
import re
import sys
from typing import TextIO

import numpy as np

from ascend_sim.debug import Debugger, break_on
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.pipes import Pipe
from frontends.cli.flags import one_line
from frontends.debugger.parsing import Breakpoint, CommandError, format_array, integer, parse_index
from frontends.debugger.tensor_commands import TensorCommands
from frontends.debugger.views import ViewCommands
from frontends.debugger.watch import WatchCommands

PROMPT = "(ascend-sim) "
ALIASES = {"n": "next", "u": "until", "fin": "finish", "b": "break", "d": "delete", "c": "continue", "s": "step", "rs": "reverse-step",
           "rc": "reverse-continue", "l": "list", "p": "print", "q": "quit", "i": "info", "bt": "where",
           "exit": "quit"}
# what an empty line repeats (gdb repeats the moving and showing commands, not break/delete/goto)
REPEATABLE = {"next", "finish", "step", "reverse-step", "continue", "reverse-continue", "list", "where", "print", "info", "echo",
              "who-wrote", "x", "check", "timeline"}
HELP = {
    "break": "break [b] CRITERIA [if EXPR]: stop at records matching every criterion: name=Mmad, pipe=M, core=3, "
             "file.py:123 (or file.py), seq=N, api=Iterate (the entry of each call), a bare instruction or API name; EXPR is Python over `rec`",
    "delete": "delete [d] [N]: delete breakpoint or watchpoint N, or all of them",
    "watch": "watch TENSOR[INDEX] | BUFFER [core=C] LO HI | gm NAME LO HI: stop where a record writes it "
             "(continue, reverse-continue), with the old and new value",
    "info": "info breakpoints | watchpoints | registers [core=C] | flags [core=C] | pipes [core=C|all] (clock, busy "
            "cycles, last and next record) | "
            "queues [core=C] (TQue tensors enqueued or freed and not yet taken)",
    "timeline": "timeline [core=C] [cycles=N]: the core's pipes as text around the current record",
    "continue": "continue [c]: apply records until a breakpoint matches (the record is applied) or the end",
    "step": "step [s] [N]: apply the next N records (default 1)",
    "next": "next [n] [N]: step over one record of this core, or over a whole deeper API call (Iterate, ...)",
    "finish": "finish: run to the end of the API call the current record is in",
    "until": "until [u] NAME: continue to the entry of the next call of API method NAME (GetTensorC, ...)",
    "reverse-step": "reverse-step [rs] [N]: undo the last N records (default 1)",
    "reverse-continue": "reverse-continue [rc]: go back to the previous record a breakpoint matches, or the start",
    "goto": "goto SEQ | start | end: make record #SEQ the current record (applied); start: none applied",
    "where": "where: the current record: seq, core, pipe, name, cycles, source line, parameters",
    "list": "list [l]: the kernel source around the current record's line",
    "print": "print [p] TENSOR[INDEX] (an operator argument, logical: print y[0, 3, :, 2, 2]) | L0A|L0B|L0C [core=C addr=A m=M k=K n=N dtype=D full] | gm NAME[SLICE] [dtype=D shape=S] "
             "| L1 [core=C] addr=A rows=R cols=K | L1 addr=A fmap=C1,H,W | EXPR (Python over rec, dbg, np); on an Mmad the "
             "L0 views default to its operands",
    "x": "x TENSOR[INDEX]: an operator argument in its device format (NDC1HWC0, FRACTAL_Z_3D, ND, ...)",
    "check": "check: the operator's output against its reference: the first wrong element and its provenance",
    "who-wrote": "who-wrote [--all] TENSOR[INDEX] (one element: the store, the Mmads, the loads back to GM; alike "
                 "records as one line with their range, --all: every record) | "
                 "who-wrote GM_NAME BYTE | who-wrote BUFFER BYTE [core=C]: the record that wrote the byte "
                 "(a Fixpipe: then the Mmads that accumulated it)",
    "echo": "echo TEXT: print TEXT",
    "help": "help [COMMAND]: this list, or one command's line",
    "quit": "quit [q]: leave the debugger",
}


class ConditionFailed(Exception):
    """A breakpoint's `if` expression raised on a record: the session stops there, as gdb does."""

    def __init__(self, number: int, index: int, err: BaseException):
        super().__init__(f"breakpoint {number}'s condition failed on #{index}: {type(err).__name__}: {err}")
        self.index = index


class DebugShell(TensorCommands, WatchCommands, ViewCommands):
    """The interpreter: `execute(line)` runs one command line; `done` turns true after quit. operator: the run's
    frontends.debugger.tensors.OperatorTensors (its reference and output name, for `check`), or None."""

    def __init__(self, dbg: Debugger, dtype: str = "float16", out: TextIO | None = None, operator=None):
        self.dbg = dbg
        self.operator = operator
        self._expected = None
        self.dtype_name = dtype  # of the operator's operands: what L0A/L0B and gm print as by default
        self.out = out or sys.stdout
        self.breakpoints: dict[int, Breakpoint] = {}
        self.next_number = 1
        self.last: str | None = None
        self.done = False
        records = dbg.records
        self.names = {r.name for r in records}
        self.cores = sorted({r.core for r in records})
        self.api_names = {call.name for call in dbg.api_calls.values()}
        self.files = {os.path.basename(r.src[0].co_filename) for r in records if r.src[0] is not None}

    # ------------------------------------------------------------------ driving
    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def execute(self, line: str, repeat: bool = True) -> None:
        """Run one command line; an empty one repeats the last repeatable command when `repeat`."""
        line = line.strip()
        if not line:
            if repeat and self.last:
                line = self.last
            else:
                return
        if line.startswith("#"):
            return
        word, _, rest = line.partition(" ")
        name = ALIASES.get(word, word)
        method = getattr(self, "do_" + name.replace("-", "_"), None)
        if method is None:
            self.say(f"error: undefined command {word!r}; `help` lists the commands")
            self.last = None
            return
        self.last = line if name in REPEATABLE else None
        try:
            method(rest.strip())
        except ConditionFailed as stop:
            self.dbg.goto(stop.index + 1)
            self.say(f"error: {one_line(stop)}; stopped there")
            self._where()
        except Exception as err:  # noqa: BLE001 - every failure of a command is one line and the session goes on
            self.say(f"error: {one_line(err) or type(err).__name__}")

    def run_lines(self, lines, *, echo: bool, repeat: bool) -> None:
        """Run command lines (a -x file: no repeat; piped stdin: repeat), each echoed after the prompt when `echo`."""
        for line in lines:
            line = line.rstrip("\n")
            if echo:
                self.say(PROMPT + line)
            self.execute(line, repeat=repeat)
            if self.done:
                return

    def completions(self) -> tuple[list[str], list[str]]:
        """What tab completes at the prompt: the commands (and their short forms), then the names their arguments
        take in this run (tensors and their aliases, GM allocations, buffers, record and API call names)."""
        names = [*self.tensor_names(), *self.tensor_aliases(), *self.dbg.chip.gm.allocations, *self.names,
                 *self.api_names, "L0A", "L0B", "L0C", "L1", "gm", "--all", "breakpoints", "watchpoints",
                 "registers", "flags", "pipes", "queues", "start", "end"]
        return [*HELP, *ALIASES], names

    def interact(self, stdin: TextIO) -> None:
        """Read commands until quit or end of input: with a prompt on a terminal (line editing, history, tab
        completion: frontends/debugger/prompt.py), else echoed (a transcript)."""
        if stdin.isatty():
            if sys.stdout.isatty():
                from frontends.debugger.prompt import terminal_reader
                read = terminal_reader(PROMPT, *self.completions())
            else:  # output to a pipe or a file: no screen to edit on
                def read():
                    return input(PROMPT)
            while not self.done:
                try:
                    line = read()
                except EOFError:
                    self.say()
                    return
                except KeyboardInterrupt:
                    self.say("^C")
                    continue
                self.execute(line)
        else:
            self.run_lines(stdin, echo=True, repeat=True)

    # ------------------------------------------------------------------ breakpoints
    def do_break(self, rest: str) -> None:
        spec, condition = _split_condition(rest)
        criteria: dict = {}
        for token in spec.split():
            key, sep, value = token.partition("=")
            if not sep:
                key, value = ("source", token) if (":" in token or token.endswith(".py")) else (
                    "api" if token in self.api_names and token not in self.names else "name", token)
            if key == "file":
                key = "source"
            if key not in ("name", "pipe", "core", "seq", "source", "api"):
                raise CommandError(f"break: unknown criterion {key!r}; use name=, pipe=, core=, seq=, api=, "
                                   "file.py:LINE")
            if key in criteria:
                raise CommandError(f"break: {key} given twice")
            criteria[key] = self._criterion(key, value)
        if not criteria and condition is None:
            raise CommandError("break needs a criterion: name=Mmad, pipe=M, core=3, file.py:123, seq=N, api=Iterate "
                               "or if EXPR")
        number = self.next_number
        test = None
        if condition is not None:
            try:
                code = compile(condition, f"<breakpoint {number}>", "eval")
            except SyntaxError as err:
                raise CommandError(f"break: the condition {condition!r} is not a Python expression: {err.msg}")

            def test(rec, code=code):
                return eval(code, {"np": np, "__builtins__": __builtins__}, {"rec": rec, "r": rec})
        api = self.dbg.break_on_api(criteria["api"]) if "api" in criteria else None
        matcher = break_on(condition=test, **{k: v for k, v in criteria.items() if k != "api"})

        def predicate(rec, index=None):
            try:
                return (api is None or api(rec, index)) and matcher(rec, index)
            except Exception as err:
                raise ConditionFailed(number, index, err) from err
        predicate.takes_index = True
        text = " ".join(f"{k}={v}" if k != "source" else str(v) for k, v in criteria.items())
        if condition is not None:
            text = f"{text} if {condition}".strip()
        self.breakpoints[number] = Breakpoint(number, text, predicate)
        self.next_number += 1
        count = self._count_matches(predicate)
        self.say(f"Breakpoint {number}: {text} ({count})")

    def _count_matches(self, predicate) -> int:
        count = 0
        for i, rec in enumerate(self.dbg.records):
            try:
                count += bool(predicate(rec, i))
            except ConditionFailed as err:
                return f"its condition fails on #{err.index}: {one_line(err.__cause__)}"
        return f"{count} matching record{'s' if count != 1 else ''} in this run"

    def _criterion(self, key: str, value: str):
        if key == "name":
            if value not in self.names:
                apis = f"; API calls: {', '.join(sorted(self.api_names))}" if self.api_names else ""
                raise CommandError(f"break: no record of this run is named {value!r}; names: "
                                   f"{', '.join(sorted(self.names))}{apis}")
            return value
        if key == "pipe":
            if value.upper() not in Pipe.__members__ or value.upper() == "ALL":
                raise CommandError(f"break: {value!r} is not a pipe; pipes: "
                                   f"{', '.join(p.name for p in Pipe if p.name != 'ALL')}")
            return value.upper()
        if key == "api":
            if value not in self.api_names:
                raise CommandError(f"break: no API call {value!r} in this run; calls: "
                                   f"{', '.join(sorted(self.api_names)) or 'none (no record carries an API call)'}")
            return value
        if key == "core":
            core = integer(value, "core")
            if core not in self.cores:
                raise CommandError(f"break: core {core} ran no record; cores {self.cores[0]}-{self.cores[-1]}")
            return core
        if key == "seq":
            seq = integer(value, "seq")
            if not 0 <= seq < len(self.dbg):
                raise CommandError(f"break: seq {seq} outside the run's records [0, {len(self.dbg) - 1}]")
            return seq
        file, _, line = value.rpartition(":") if ":" in value else (value, "", "")
        if os.path.basename(file) not in self.files:
            raise CommandError(f"break: no record of this run comes from {os.path.basename(file)!r}; files: "
                               f"{', '.join(sorted(self.files))}")
        if line:
            integer(line, "line")
        return value

    def do_delete(self, rest: str) -> None:
        if not rest:
            self.breakpoints.clear()
            self.say("Deleted all breakpoints and watchpoints.")
            return
        for token in rest.split():
            number = integer(token, "breakpoint number")
            if number not in self.breakpoints:
                raise CommandError(f"delete: no breakpoint number {number}")
            del self.breakpoints[number]
            self.say(f"Deleted breakpoint {number}.")

    # ------------------------------------------------------------------ moving
    def _predicates(self) -> list:
        return [bp.predicate for bp in self.breakpoints.values()]

    def do_continue(self, rest: str) -> None:
        _no_arguments("continue", rest)
        rec = self.dbg.continue_(self._predicates())
        if rec is None:
            self._at_end()
            return
        self._where(self._hits())
        self.report_watch_hits()

    def do_reverse_continue(self, rest: str) -> None:
        _no_arguments("reverse-continue", rest)
        rec = self.dbg.reverse_continue(self._predicates())
        if rec is None:
            self.say("At the start of the run: no record applied.")
            return
        self._where(self._hits())
        self.report_watch_hits()

    def _hits(self) -> str:
        index = self.dbg.seq - 1
        hits = [bp for bp in self.breakpoints.values() if bp.predicate(self.dbg.record, index)]
        kinds = {bp.kind for bp in hits}
        kind = "Breakpoint" if kinds == {"breakpoint"} else "Watchpoint" if kinds == {"watchpoint"} else "Stop"
        return f"{kind} {', '.join(str(bp.number) for bp in hits)}, "

    def do_step(self, rest: str) -> None:
        count = _count(rest, "step")
        if self.dbg.seq == len(self.dbg):
            self._at_end()
            return
        self.dbg.step(count)
        self._where()

    def do_reverse_step(self, rest: str) -> None:
        count = _count(rest, "reverse-step")
        self.dbg.back(count)
        self._where()

    def do_next(self, rest: str) -> None:
        count = _count(rest, "next")
        if self.dbg.at_end:
            self._at_end()
            return
        for _ in range(count):
            self.dbg.next()
        self._where()

    def do_finish(self, rest: str) -> None:
        _no_arguments("finish", rest)
        rec = self.dbg.record
        if rec is None or not rec.api:
            raise CommandError("finish: the current record was issued in no API call (where shows the calls)")
        name = rec.api[-1][0]
        self.dbg.finish()
        self.say(f"Run till exit from {name}")
        self._where()

    def do_until(self, rest: str) -> None:
        name = rest.strip()
        if not name:
            raise CommandError("until needs an API call name: until GetTensorC")
        if name not in self.api_names:
            raise CommandError(f"until: no API call {name!r} in this run; calls: "
                               f"{', '.join(sorted(self.api_names)) or 'none (no record carries an API call)'}")
        if self.dbg.until(name) is None:
            self._at_end()
            return
        self._where()

    def do_goto(self, rest: str) -> None:
        if rest == "start":
            self.dbg.goto(0)
        elif rest == "end":
            self.dbg.goto(len(self.dbg))
        else:
            if not rest:
                raise CommandError("goto needs a record number, start or end")
            seq = integer(rest, "goto")
            if not 0 <= seq < len(self.dbg):
                raise CommandError(f"goto: record {seq} outside [0, {len(self.dbg) - 1}] (or start, end)")
            self.dbg.goto(seq + 1)
        self._where()

    def open_post_mortem(self) -> None:
        """Start at the end of a faulting run: every record that ran applied, the state just before the fault."""
        dbg = self.dbg
        dbg.goto(len(dbg))
        self.say(f"The run stopped in a simulated kernel fault: {one_line(dbg.fault)}")
        self.say(f"Post-mortem: all {len(dbg)} records that ran are applied; the state is the one just before the "
                 "faulting instruction.")
        bad = dbg.fault_record
        if bad is not None:
            self.say(f"The faulting record (not applied): core {bad.core} pipe {bad.pipe.name} {bad.name}  at "
                     f"{bad.source}")
            self.say(f"    {_params(bad.params)}")
        else:
            self.say("The fault was found when the kernel made the call: no record was made for it.")
        self.say("`help` lists the commands.")

    def _at_end(self) -> None:
        self.say(f"The run ended: all {len(self.dbg)} records applied.")
        if self.dbg.fault is not None:
            self.say(f"It ended in a fault: {one_line(self.dbg.fault)}")

    # ------------------------------------------------------------------ showing
    def do_where(self, rest: str) -> None:
        _no_arguments("where", rest)
        self._where()

    def _where(self, prefix: str = "") -> None:
        dbg = self.dbg
        rec = dbg.record
        if rec is None:
            following = dbg.records[0] if len(dbg) else None
            nxt = f"; next: #0 core {following.core} {following.pipe.name} {following.name} at {following.source}" \
                if following is not None else ""
            self.say(f"At the start of the run: no record applied{nxt}")
            return
        self.say(f"{prefix}#{dbg.seq - 1} core {rec.core} pipe {rec.pipe.name} {rec.name}  cycles [{rec.start:.0f}, "
                 f"{rec.end:.0f}) ({rec.end - rec.start:.0f} cycles)  at {rec.source}")
        self.say(f"    {_params(rec.params)}")
        if rec.api:
            self.say(f"    in {' > '.join(name for name, _ in rec.api)}")

    def do_list(self, rest: str) -> None:
        _no_arguments("list", rest)
        rec = self.dbg.record if self.dbg.record is not None else (self.dbg.records[0] if len(self.dbg) else None)
        if rec is None or rec.src[0] is None:
            raise CommandError("list: the current record has no source line")
        path, line = rec.src[0].co_filename, rec.src[1]
        linecache.checkcache(path)
        lines = linecache.getlines(path)
        if not lines:
            raise CommandError(f"list: cannot read {path}")
        first, last = max(1, line - 5), min(len(lines), line + 5)
        self.say(f"{path}:")
        for number in range(first, last + 1):
            mark = "=>" if number == line else "  "
            self.say(f"{mark}{number:5d}  {lines[number - 1].rstrip()}")

    def do_print(self, rest: str) -> None:
        if not rest:
            raise CommandError("print needs L0A, L0B, L0C, gm NAME or a Python expression")
        word, _, tail = rest.partition(" ")
        tensor = self.parse_tensor(rest)
        if tensor is not None:
            self.print_tensor(tensor, device=False)
        elif word.upper() == "L1":
            self._print_l1(tail)
        elif word.upper() in ("L0A", "L0B", "L0C"):
            self._print_l0(word.upper(), tail)
        elif word == "gm":
            self._print_gm(tail)
        else:
            try:
                code = compile(rest, "<print>", "eval")
            except SyntaxError as err:
                raise CommandError(f"print: {rest!r} is neither a buffer (L0A, L0B, L0C, gm NAME) nor a Python "
                                   f"expression ({err.msg})")
            value = eval(code, {"np": np, "__builtins__": __builtins__},
                         {"rec": self.dbg.record, "dbg": self.dbg})
            self.say(format_array(value) if isinstance(value, np.ndarray) else repr(value))

    def _print_l1(self, tail: str) -> None:
        options, words = _options(tail, {"core", "addr", "rows", "cols", "fmap", "dtype"})
        if set(words) - {"full"}:
            raise CommandError(f"print L1: unexpected {' '.join(w for w in words if w != 'full')!r}; give core= "
                               "addr= and rows= cols= (an NZ matrix) or fmap=C1,H,W (a feature map), dtype=")
        core = self._core(f"core={options['core']}" if "core" in options else "", "L1")
        if "addr" not in options:
            raise CommandError("print L1 needs addr= (the byte address of the tensor in L1)")
        address = integer(options["addr"], "addr")
        dtype = _dtype(options["dtype"]) if "dtype" in options else self._dtype()
        if "fmap" in options:
            dims = [integer(d, "fmap") for d in options["fmap"].split(",")]
            if len(dims) != 3 or min(dims) < 1:
                raise CommandError(f"print L1: fmap={options['fmap']} must be C1,H,W, three positive integers")
            value, what = self.dbg.l1_fmap(core, address, *dims, dtype), "feature map (C, H, W)"
        elif "rows" in options and "cols" in options:
            rows, cols = integer(options["rows"], "rows"), integer(options["cols"], "cols")
            if rows < 1 or cols < 1:
                raise CommandError(f"print L1: rows={rows} cols={cols} must be positive")
            value, what = self.dbg.l1_nz(core, address, rows, cols, dtype), "NZ matrix (rows, cols)"
        else:
            raise CommandError("print L1 needs rows= cols= (an NZ matrix) or fmap=C1,H,W (a feature map)")
        self.say(f"L1 core {core} addr {address}: {what} {value.shape} {value.dtype}")
        self.say(format_array(value, "full" in words))

    def _print_l0(self, which: str, tail: str) -> None:
        options, words = _options(tail, {"core", "addr", "m", "k", "n", "dtype"})
        full = "full" in words
        if set(words) - {"full"}:
            raise CommandError(f"print {which}: unexpected {' '.join(w for w in words if w != 'full')!r}; "
                               "give core= addr= m= k= n= dtype= full")
        rec = self.dbg.record
        mmad = rec if rec is not None and rec.name == "Mmad" and rec.args is not None else None
        dims = {"L0A": ("m", "k"), "L0B": ("k", "n"), "L0C": ("m", "n")}[which]
        defaults = {}
        if mmad is not None:
            # the Mmad's operands: reads are (L0A, L0B[, L0C]) and writes (L0C,), as (buffer, start, end)
            operand = {"L0A": mmad.reads[0], "L0B": mmad.reads[1], "L0C": mmad.writes[0]}[which]
            defaults = {"core": mmad.core, "addr": operand[1], "m": mmad.params.m, "n": mmad.params.n,
                        "k": mmad.params.k, "dtype": mmad.args.dtype}  # MmadOperands.dtype (isa/cube.py)
        values = {}
        for key in ("core", "addr", *dims):
            if key in options:
                values[key] = integer(options[key], key)
            elif key in defaults:
                values[key] = defaults[key]
            else:
                raise CommandError(f"print {which} needs core= addr= {'= '.join(dims)}= (or the current record "
                                   "an Mmad, whose operands are the defaults)")
        if values["core"] not in range(len(self.dbg.chip.cores)):
            raise CommandError(f"print {which}: no core {values['core']}")
        if which == "L0C":
            matrix = self.dbg.l0c(values["core"], values["addr"], values["m"], values["n"])
        else:
            dtype = _dtype(options["dtype"]) if "dtype" in options else defaults.get("dtype", self._dtype())
            view = self.dbg.l0a if which == "L0A" else self.dbg.l0b
            matrix = view(values["core"], values["addr"], values[dims[0]], values[dims[1]], dtype)
        self.say(f"{which} core {values['core']} addr {values['addr']}: {matrix.shape} {matrix.dtype}")
        self.say(format_array(matrix, full))

    def _print_gm(self, tail: str) -> None:
        match = re.fullmatch(r"\s*(\w+)\s*(\[[^\]]*\])?\s*(.*)", tail)
        if not match or not match.group(1):
            raise CommandError("print gm needs an allocation name: print gm NAME[SLICE] [dtype=D shape=S]")
        name, index, more = match.groups()
        allocations = self.dbg.chip.gm.allocations
        if name not in allocations:
            raise CommandError(f"print gm: no allocation {name!r}; GM holds {', '.join(allocations)}")
        options, words = _options(more, {"dtype", "shape"})
        if words and index is None and words[0].startswith("["):
            index, words = words[0], words[1:]
        if words:
            raise CommandError(f"print gm: unexpected {' '.join(words)!r}")
        dtype = _dtype(options["dtype"]) if "dtype" in options else self._dtype()
        data = self.dbg.gm(name)
        data = data[:data.size - data.size % dtype.itemsize].view(dtype)
        if "shape" in options:
            shape = tuple(integer(s, "shape") for s in options["shape"].replace("x", ",").split(","))
            if int(np.prod(shape)) != data.size:
                raise CommandError(f"print gm: shape {shape} does not hold the {data.size} {dtype} elements of {name}")
            data = data.reshape(shape)
        if index is not None:
            data = data[parse_index(index[1:-1])]
        self.say(f"gm {name}{index or ''}: {np.shape(data)} {data.dtype}")
        self.say(format_array(np.asarray(data)))

    def _dtype(self) -> np.dtype:
        return _dtype(self.dtype_name)

    def do_info(self, rest: str) -> None:
        what, _, tail = rest.partition(" ")
        if what in ("breakpoints", "break", "b", "watchpoints", "watch"):
            _no_arguments(f"info {what}", tail)
            kinds = ("watchpoint",) if what.startswith("watch") else ("breakpoint", "watchpoint")
            shown = [bp for bp in self.breakpoints.values() if bp.kind in kinds]
            if not shown:
                self.say("No watchpoints." if kinds == ("watchpoint",) else "No breakpoints or watchpoints.")
            for bp in shown:
                self.say(f"{bp.number:<4d}{bp.kind:<12s}{bp.text}")
        elif what in ("registers", "flags"):
            core = self._core(tail, what)
            values = self.dbg.registers(core) if what == "registers" else self.dbg.flags(core)
            self.say(f"core {core} {what}:" if values else f"core {core}: no flags set")
            for key, value in values.items():
                label = f"{key[0]} {key[1]}" if isinstance(key, tuple) else key
                self.say(f"  {label} = {value}")
        elif what == "queues":
            self.info_queues(tail)
        elif what == "pipes":
            cores = None if tail.strip() == "all" else [self._core(tail, what)]
            last, busy, following = {}, {}, {}
            for i, rec in enumerate(self.dbg.records):
                if cores is not None and rec.core not in cores:
                    continue
                key = (rec.core, rec.pipe.name)
                if i < self.dbg.seq:
                    last[key] = (i, rec)
                    busy[key] = busy.get(key, 0.0) + rec.end - rec.start
                elif key not in following:
                    following[key] = (i, rec)
            if not last:
                self.say("no record applied on these pipes yet")
            for key, (i, rec) in sorted(last.items(), key=lambda item: (item[0][0], Pipe[item[0][1]])):
                core, pipe = key
                nxt = f"; next #{following[key][0]} {following[key][1].name}" if key in following else ""
                self.say(f"  core {core} {pipe:<5s} clock {rec.end:>10.0f}  busy {busy[key]:>10.0f}  last #{i} "
                         f"{rec.name} at {rec.source}{nxt}")
        else:
            raise CommandError("info needs breakpoints, watchpoints, registers, flags, pipes or queues")

    def _core(self, tail: str, what: str) -> int:
        options, words = _options(tail, {"core"})
        if len(words) > 1 or (words and "core" in options):
            raise CommandError(f"info {what}: give one core (core=C)")
        if words:
            options["core"] = words[0]
        if "core" in options:
            core = integer(options["core"], "core")
            if core not in range(len(self.dbg.chip.cores)):
                raise CommandError(f"info {what}: no core {core}")
            return core
        rec = self.dbg.record
        return rec.core if rec is not None else 0

    def do_who_wrote(self, rest: str) -> None:
        every = rest.startswith("--all")
        if every:
            rest = rest[len("--all"):].strip()
        tensor = self.parse_tensor(rest)
        if tensor is not None:
            self.who_wrote_element(tensor, every)
            return
        options, words = _options(rest, {"core"})
        if len(words) != 2:
            raise CommandError("who-wrote needs GM_NAME BYTE (or BUFFER BYTE core=C)")
        name, byte = words[0], integer(words[1], "byte")
        chip = self.dbg.chip
        if name in chip.gm.allocations:
            size = chip.gm.allocations[name].capacity
            if not 0 <= byte < size:
                raise CommandError(f"who-wrote: byte {byte} outside {name}'s {size} bytes")
            writers = self.dbg.who_wrote(name, byte)
            where = f"byte {byte} of gm {name}"
        else:
            core = self._core(f"core={options['core']}" if "core" in options else "", "who-wrote")
            if name not in chip.cores[core].buffers:
                raise CommandError(f"who-wrote: {name!r} is neither a GM allocation ({', '.join(chip.gm.allocations)})"
                                   f" nor a buffer of core {core} ({', '.join(chip.cores[core].buffers)})")
            size = chip.cores[core].buffers[name].capacity
            if not 0 <= byte < size:
                raise CommandError(f"who-wrote: byte {byte} outside {name}'s {size} bytes")
            writers = self.dbg.who_wrote_buffer(core, name, byte)
            where = f"byte {byte} of core {core} {name}"
        if not writers:
            self.say(f"No applied record wrote {where}.")
            return
        self.say(f"{where} was written by:")
        for i, w in enumerate(writers):
            role = "wrote it" if i == 0 else "accumulated"
            self.say(f"  #{w.seq} core {w.core} {w.pipe} {w.name} [{w.start:.0f}, {w.end:.0f}) at {w.source}  "
                     f"({role})")

    def do_echo(self, rest: str) -> None:
        self.say(rest)

    def do_help(self, rest: str) -> None:
        if rest:
            name = ALIASES.get(rest, rest)
            if name not in HELP:
                raise CommandError(f"help: no command {rest!r}")
            self.say(HELP[name])
            return
        for text in HELP.values():
            self.say(text)
        self.say("An empty line repeats the last command (step, continue, list, ...).")

    def do_quit(self, rest: str) -> None:
        self.done = True


# ---------------------------------------------------------------------------------------------- parsing helpers
def _split_condition(text: str) -> tuple[str, str | None]:
    match = re.match(r"^(.*?)(?:^|\s)if\s+(.*)$", text)
    if not match:
        if text.strip() == "if" or text.rstrip().endswith(" if"):
            raise CommandError("break: `if` needs an expression over rec")
        return text, None
    return match.group(1), match.group(2).strip()


def _count(text: str, what: str) -> int:
    if not text:
        return 1
    count = integer(text, what)
    if count < 1:
        raise CommandError(f"{what}: the count must be at least 1, got {count}")
    return count


def _no_arguments(what: str, text: str) -> None:
    if text.strip():
        raise CommandError(f"{what} takes no arguments, got {text.strip()!r}")


def _options(text: str, allowed: set) -> tuple[dict, list]:
    """key=value tokens (keys from `allowed`) and the other words."""
    options, words = {}, []
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep and not token.startswith("["):
            if key not in allowed:
                raise CommandError(f"unknown option {key!r}; options: {', '.join(sorted(allowed))}")
            options[key] = value
        else:
            words.append(token)
    return options, words


def _dtype(name: str) -> np.dtype:
    if name in DTYPES:
        return np.dtype(DTYPES[name])
    try:
        return np.dtype(name)
    except TypeError:
        raise CommandError(f"{name!r} is not a dtype; e.g. {', '.join(sorted(DTYPES))}") from None


def _params(params) -> str:
    if params is None:
        return "(no parameters)"
    return one_line(repr(params))
