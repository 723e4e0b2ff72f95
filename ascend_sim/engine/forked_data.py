"""The data pass of a replay run on forked processes (issue 23, step 3): opt-in, env ASCEND_DATA_PROCESSES.

When no AI core's records can depend on another's (replay_passes.independent_groups), each AI core's records can
run in the schedule's order apart from the others' with the same bytes. A chip made with ASCEND_DATA_PROCESSES > 1
holds a full run's memories (GM and every core's buffers) in anonymous shared mappings (machine/memory.py), so after
scheduling, `os.fork()` children each run a
share of the AI cores' data work and write straight into the memory the parent sees; the parent runs the first
share itself, waits for the children and takes their faults over a pipe. Threads in one process do not pay
(the data work's Python per Mmad holds the GIL: docs/performance.md).

What the data work changes outside those mappings would be lost in a child, so the pass stays in one process when:
- a record's semantics write state held in Python objects (the Ascend 950's regbase vector registers,
  `Kind.VECTOR_REGISTER`: RegTensor values), or a memory's bytes are not in a shared mapping (the debugger swaps
  buffers' arrays);
- OpenBLAS is not held to one thread for the launch (`Chip(blas_threads=1)`, the default: its thread pool across
  a fork, and bits that would depend on the thread count), the platform has no fork, or another Python thread is
  alive (a lock it holds would stay held in the child);
- the run has fewer than FORK_FROM records with data work (a fork and its copy-on-write faults cost more).
The caches the data work fills (run plans, operands made) are per launch and are refilled in each process;
replay_data.FALLBACKS' counts are sent back (a run refused in two processes is counted in each). A fault comes
out as in one process: the children's and the parent's faults are compared by the schedule position of the
record that raised them (replay_data.run_in_order's `data_pass_record`) and the first is raised, the same
exception (pickled). As in one process, a fault stops the pass; unlike one process, the other AI cores' shares
may have run past its position by then (their bytes are then further on: a fault's memory state is not the
one-process run's).
"""
from __future__ import annotations

import os
import pickle
import threading
from collections import Counter

from ascend_sim.record import Kind

ENV = "ASCEND_DATA_PROCESSES"
FORK_FROM = 20_000  # records with data work; measured break-even: docs/performance.md (issue 23, branch h24fork)
STATE_OUTSIDE_MEMORY = frozenset((Kind.VECTOR_REGISTER,))  # kinds whose semantics write Python-held state


def data_processes() -> int:
    """Processes for the data work of a race-checked replay run: env ASCEND_DATA_PROCESSES, default 1."""
    value = os.environ.get(ENV, "1")
    if not value.isdigit() or not 1 <= int(value) <= 64:
        raise ValueError(f"{ENV}={value!r} is not a number of processes in [1, 64]")
    return int(value)


def can_fork(chip, cores, records) -> bool:
    """Whether the data pass may run on forked processes (the module's docstring). `records`: every record
    whose semantics run (template records once per template), for their kinds."""
    if not hasattr(os, "fork") or chip.blas_threads != 1 or threading.active_count() > 1:
        return False
    if not all(buf.shared for core in cores for buf in core.buffers.values()):
        return False
    if not all(buf.shared for buf in chip.gm.allocations.values()):
        return False
    return not any(r.spec.kind in STATE_OUTSIDE_MEMORY for r in records)


def run_shares(works: list, rank) -> None:
    """Run each of `works` (callables; the first here, the others each in a forked child) and wait for all;
    raise the fault whose record comes first by `rank(record)` (its schedule position), as one process would."""
    from ascend_sim.engine import replay_data

    children = []  # (pid, read end of its pipe)
    try:
        for work in works[1:]:
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: run its share, send (fault or None, its fallback counts), never return
                os.close(read)
                _child(work, write, replay_data.FALLBACKS)
            os.close(write)
            children.append((pid, read))
        faults = []
        try:
            works[0]()
        except BaseException as fault:
            faults.append(fault)
    finally:
        outcomes = [_collect(pid, read) for pid, read in children]
    for fault, fallbacks in outcomes:
        replay_data.FALLBACKS.update(fallbacks)
        if fault is not None:
            faults.append(fault)
    if faults:
        raise min(faults, key=lambda f: rank(getattr(f, "data_pass_record", None)))


def _child(work, write: int, fallbacks: Counter) -> None:
    """A forked child's whole life: its work, its outcome on the pipe, then _exit (no atexit, no buffers
    flushed twice, no finally of the parent's stack run)."""
    code = 0
    try:
        before = Counter(fallbacks)
        fault = None
        try:
            work()
        except BaseException as error:
            fault = error
        try:
            payload = pickle.dumps((fault, fallbacks - before))
        except Exception as error:  # an exception that does not pickle: its type and message
            payload = pickle.dumps((RuntimeError(f"{type(fault).__name__}: {fault} (in a data pass process; "
                                                 f"not picklable: {error})"), fallbacks - before))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _collect(pid: int, read: int):
    """A child's (fault or None, fallback counts), once it has ended."""
    with os.fdopen(read, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not payload or os.waitstatus_to_exitcode(status) != 0:
        return RuntimeError(f"a data pass process (pid {pid}) ended with status "
                            f"{os.waitstatus_to_exitcode(status)} without its outcome"), Counter()
    return pickle.loads(payload)
