"""Chrome / Perfetto trace export: pid = core, tid = pipe, one span per instruction, flows from SetFlag to WaitFlag."""
from __future__ import annotations

import dataclasses
import json
from enum import Enum

import numpy as np

from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.record import Kind

_TID = {Pipe.MTE2: 1, Pipe.MTE1: 2, Pipe.M: 3, Pipe.FIX: 4, Pipe.MTE3: 5, Pipe.V: 6, Pipe.S: 7}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if hasattr(value, "_asdict"):  # a parameter snapshot (named tuple)
        return {k: _jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    if isinstance(value, Enum):
        return value.name
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    if dataclasses.is_dataclass(value):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)


def chrome_trace_events(report, *, pid_base: int = 0, start_us: float = 0.0, label: str | None = None) -> list[dict]:
    """The report's events; pid_base, start_us and label place it among other launches in one trace (the core's
    process is pid_base + core, its name prefixed with the label, its time shifted by start_us)."""
    us = 1.0 / report.platform.clock_mhz
    events: list[dict] = []
    for core_index, log in enumerate(report.logs):
        pid = pid_base + core_index
        name = report.cores[core_index].name if core_index < len(report.cores) else f"core {core_index}"
        events.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": f"{label}: {name}" if label else name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
        for pipe in QUEUES:
            if pipe in _TID:
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": _TID[pipe],
                               "args": {"name": pipe.name}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": _TID[pipe],
                               "args": {"sort_index": _TID[pipe]}})
        for instr in log:
            tid = _TID.get(instr.pipe, 7)
            args = {"source": instr.source, "seq": instr.seq}
            if instr.params is not None:
                args["params"] = _jsonable(instr.params)
            if instr.path:
                args["path"], args["bytes"] = instr.path, instr.nbytes
            events.append({"ph": "X", "name": instr.name, "pid": pid, "tid": tid, "ts": start_us + instr.start * us,
                           "dur": max(instr.end - instr.start, 0.0) * us, "args": args})
            kind = instr.spec.kind
            if kind is Kind.SET_FLAG:
                events.append({"ph": "s", "name": "flag", "cat": "sync", "id": f"{pid}.{instr.seq}",
                               "pid": pid, "tid": tid, "ts": start_us + instr.end * us})
            elif kind is Kind.WAIT_FLAG:
                events.append({"ph": "f", "bp": "e", "name": "flag", "cat": "sync",
                               "id": f"{pid}.{instr.released_by.seq}", "pid": pid,
                               "tid": tid, "ts": start_us + instr.start * us})
            elif kind is Kind.CROSS_CORE_WAIT:  # one arrow from each core whose set released it
                for setter in instr.released_by:
                    flow = f"x{pid_base + setter.core}.{setter.seq}-{pid}.{instr.seq}"
                    events.append({"ph": "s", "name": "cross-core flag", "cat": "sync", "id": flow,
                                   "pid": pid_base + setter.core, "tid": _TID.get(setter.pipe, 7),
                                   "ts": start_us + setter.end * us})
                    events.append({"ph": "f", "bp": "e", "name": "cross-core flag", "cat": "sync", "id": flow,
                                   "pid": pid, "tid": tid, "ts": start_us + instr.end * us})
    return events


def write_chrome_trace(report, path: str) -> None:
    with open(path, "w") as f:
        json.dump({"traceEvents": chrome_trace_events(report), "displayTimeUnit": "ns",
                   "otherData": {"platform": report.platform.name, "cycles": report.cycles}}, f)


LAUNCH_PIDS = 1000  # launch i's cores are processes i * LAUNCH_PIDS + core


def write_chrome_trace_of_launches(launches: list[tuple[str, object]], path: str) -> None:
    """Several launches (label, report) in one trace, one after the other as a stream runs them: launch i's cores
    are processes i * LAUNCH_PIDS + core named '<label>: <core>', and its time starts where launch i - 1 ended."""
    events, start_us = [], 0.0
    for i, (label, report) in enumerate(launches):
        events += chrome_trace_events(report, pid_base=i * LAUNCH_PIDS, start_us=start_us, label=label)
        start_us += report.cycles / report.platform.clock_mhz
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"launches": [label for label, _ in launches],
                                 "cycles": sum(report.cycles for _, report in launches)}}, f)
