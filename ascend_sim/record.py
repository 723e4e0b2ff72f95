"""Instructions as specs, and the record every issued instruction becomes.

An instruction is defined once (`define`): its name, its pipe, its kind (what the passes do differently for it:
a flag, a barrier, a move ...), its operands (a named tuple type: what its front end decodes a call into), its cost
(a function of its operands and a `CostModel`, so a recorded stream can be timed again on another platform and a
tile's instructions can be costed without issuing them) and its semantics (a function of the record, so it can be
executed again). The Ascend C call that issues it (in `isa/`) checks its operands and parameters, decodes them
into the record's `args` (an instance of the spec's operands type: every reader uses its field names), and hands
the record to its core.

A record's content is fixed when it is issued: the parameter struct is a snapshot (a named tuple with the
struct's field names), the byte ranges, the register values it depends on and the kernel source line are its
own. The scheduler only adds when it ran (issue, start, end) and, for a WaitFlag, the SetFlag that released it.
"""
from __future__ import annotations

import dataclasses
import enum
import os
from collections import namedtuple
from operator import attrgetter
from typing import Callable

from ascend_sim.machine.pipes import Pipe


class Kind(enum.IntEnum):
    """What the passes (schedulers, race checkers, trace, debugger) do differently for an instruction. An IntEnum
    so that the schedulers' set lookups hash in C (an Enum member hashes through a Python method)."""

    COMPUTE = 0  # arithmetic into its destination (Mmad, Fixpipe's conversions, the vector unit)
    MOVE = 1  # copies (and zero-pads, or fills) bytes without arithmetic: its sources can be traced by tags
    REGISTER_WRITE = 2  # a scalar-pipe write of a control register (SetFmatrix, SetAtomicAdd ...)
    VECTOR_REGISTER = 3  # arch 3510 Reg:: instructions: UB <-> vector registers, or on registers
    SET_FLAG = 4  # SetFlag: sets (src, dst, id) once src's earlier instructions have completed
    WAIT_FLAG = 5  # WaitFlag: holds dst until the flag is set
    BARRIER = 6  # PipeBarrier
    SYNC_ALL = 7  # SyncAll: every core drained
    CROSS_CORE_SET = 8  # CrossCoreSetFlag
    CROSS_CORE_WAIT = 9  # CrossCoreWaitFlag


# the kinds that may wait for something other than their pipe and the scalar unit
SYNC_KINDS = frozenset((Kind.WAIT_FLAG, Kind.BARRIER, Kind.SYNC_ALL, Kind.CROSS_CORE_SET, Kind.CROSS_CORE_WAIT))
# the kinds that order GM accesses between cores
GM_ORDERING_KINDS = frozenset((Kind.SYNC_ALL, Kind.CROSS_CORE_SET, Kind.CROSS_CORE_WAIT))


class Spec:
    """One instruction: name, pipe (None when the destination decides it), kind, operands type, cost and
    semantics. cost(operands, model) -> cycles, for operands of the spec's type (never None: a NOP record, whose
    args are None, costs nothing and is not executed)."""

    __slots__ = ("name", "pipe", "kind", "operands", "cost", "execute", "params", "doc")

    def __init__(self, name: str, pipe: Pipe | None, kind: Kind, operands: type | None, cost: Callable,
                 execute: Callable | None, params, doc: str):
        self.name, self.pipe, self.kind, self.operands = name, pipe, kind, operands
        self.cost, self.execute, self.params, self.doc = cost, execute, params, doc

    def __repr__(self) -> str:
        return f"<instruction {self.name} on {self.pipe.name if self.pipe is not None else 'its destination pipe'}>"


SPECS: dict[str, Spec] = {}


def _no_cost(operands, model) -> float:
    return 0.0


def define(name: str, pipe: Pipe | None = None, *, kind: Kind, operands: type | None = None,
           cost: Callable = _no_cost, execute: Callable | None = None, params: type | None = None,
           doc: str = "") -> Spec:
    """Register instruction `name`. cost(operands, model) -> cycles; execute(record) moves the data."""
    if name in SPECS:
        raise ValueError(f"instruction {name!r} is defined twice")
    if kind is Kind.REGISTER_WRITE and operands is None:  # every register write is issued by AICore.write_register
        operands = RegisterWrite
    if cost is not _no_cost and operands is None:
        raise ValueError(f"instruction {name!r} has a cost but no operands type to compute it from")
    spec = SPECS[name] = Spec(name, pipe, kind, operands, cost, execute, params, doc)
    return spec


def operands_type(name: str, fields: str, doc: str) -> type:
    """The operands type of an instruction: a named tuple (cheap to make: records are made by the ten thousand),
    every field defaulting to None so that a cost can be asked of the few fields it reads."""
    names = fields.split()
    cls = namedtuple(name, names, defaults=(None,) * len(names))
    cls.__doc__ = doc
    return cls


RegisterWrite = operands_type("RegisterWrite", "register value",
                              "A register write: the register's name, its new value.")


# ------------------------------------------------------------------------------------------ parameter snapshots
_SNAPSHOT_TYPES: dict[type, Callable] = {}


def _snapshot_maker(cls: type) -> Callable:
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    frozen = namedtuple(cls.__name__, names)
    values = attrgetter(*names) if len(names) > 1 else (lambda p, g=attrgetter(names[0]): (g(p),))
    new = tuple.__new__
    # sequence fields (padList): copied as tuples, so that a list the kernel changes later stays as issued
    sequences = [i for i, f in enumerate(fields)
                 if isinstance(f.default, (tuple, list)) or f.default_factory is not dataclasses.MISSING]
    if not sequences:
        return lambda params: new(frozen, values(params))

    def make(params):
        copied = list(values(params))
        for i in sequences:
            copied[i] = tuple(copied[i])
        return new(frozen, copied)
    return make


def snapshot(params):
    """An immutable copy of a parameter struct (a named tuple with the same field names), so that a kernel
    reusing its struct cannot change what an issued instruction recorded. Dicts and tuples pass as they are."""
    if params is None or params.__class__ in (dict, tuple):
        return params
    make = _SNAPSHOT_TYPES.get(params.__class__)
    if make is None:
        if not dataclasses.is_dataclass(params):
            return params
        make = _SNAPSHOT_TYPES[params.__class__] = _snapshot_maker(params.__class__)
    return make(params)


# ------------------------------------------------------------------------------------------ source lines
_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def format_source(src: tuple) -> str:
    code, line = src
    return f"{os.path.basename(code.co_filename)}:{line}" if code is not None else "?"


def source_path(src: tuple) -> str | None:
    return src[0].co_filename if src[0] is not None else None


# ------------------------------------------------------------------------------------------ the record
class Record:
    """One issued instruction. `reads`/`writes` are (Buffer, start, end) byte ranges; `args` is what its spec's
    cost and semantics read (the decoded operands, of the spec's operands type; None for a NOP: a zero count that
    only takes its issue slot);
    `registers` the register values it depended on. The byte ranges are spans; `footprint` lists the exact
    GM bytes it touches."""

    __slots__ = ("core", "seq", "spec", "name", "pipe", "params", "args", "reads", "writes", "registers", "src",
                 "path", "nbytes", "event", "footprint", "issue", "start", "end", "released_by", "api")

    def __init__(self, core, seq, spec, pipe, params, args, reads, writes, source, path=None, nbytes=0,
                 event=None, registers=(), footprint=None, api=()):
        self.core = core
        self.seq = seq
        self.spec = spec
        self.name = spec.name
        self.pipe = pipe
        self.params = params
        self.args = args
        self.reads = reads
        self.writes = writes
        self.registers = registers
        self.src = source  # (code, line): see `source`
        self.path = path
        self.nbytes = nbytes
        self.event = event  # (event name, id) for SetFlag / WaitFlag
        # the exact GM bytes it reads or writes (every GM access has one; the race checker between cores
        # reads it): ((buffer, offset, shape, byte strides, is_write), ...)
        self.footprint = footprint
        self.api = api  # the high-level API calls it was issued in, outermost first: ((name, call id), ...)
        self.issue = self.start = self.end = None
        self.released_by = None  # WaitFlag: the SetFlag record that released it

    @property
    def cycles(self) -> float:
        return self.end - self.start

    @property
    def source(self) -> str:
        """The kernel source line that issued this instruction, as file:line."""
        return format_source(self.src)

    def execute(self) -> None:
        """Apply the instruction's effect on the buffers (again, e.g. after a rewind)."""
        run = self.spec.execute
        if run is not None and self.args is not None:
            run(self)

    def unscheduled(self) -> "Record":
        """A copy with the same content and no schedule, to be timed again (`retime`)."""
        copy = _new(Record)
        copy.core, copy.seq, copy.spec, copy.name, copy.pipe = self.core, self.seq, self.spec, self.name, self.pipe
        copy.params, copy.args, copy.reads, copy.writes = self.params, self.args, self.reads, self.writes
        copy.registers, copy.src, copy.path, copy.nbytes = self.registers, self.src, self.path, self.nbytes
        copy.event, copy.footprint, copy.api = self.event, self.footprint, self.api
        copy.issue = copy.start = copy.end = copy.released_by = None
        return copy

    def describe(self) -> str:
        return f"#{self.seq} {self.pipe.name} {self.name} at {self.source}"

    def __repr__(self) -> str:
        when = f" [{self.start:.0f}, {self.end:.0f})" if self.start is not None else " (not yet run)"
        return f"<{self.describe()}{when}>"


_new = object.__new__
Instruction = Record  # the name the hooks' and tests' documentation uses
