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


def chrome_trace_events(report) -> list[dict]:
    us = 1.0 / report.platform.clock_mhz
    events: list[dict] = []
    for core_index, log in enumerate(report.logs):
        name = report.cores[core_index].name if core_index < len(report.cores) else f"core {core_index}"
        events.append({"ph": "M", "name": "process_name", "pid": core_index, "args": {"name": name}})
        for pipe in QUEUES:
            if pipe in _TID:
                events.append({"ph": "M", "name": "thread_name", "pid": core_index, "tid": _TID[pipe],
                               "args": {"name": pipe.name}})
                events.append({"ph": "M", "name": "thread_sort_index", "pid": core_index, "tid": _TID[pipe],
                               "args": {"sort_index": _TID[pipe]}})
        for instr in log:
            tid = _TID.get(instr.pipe, 7)
            args = {"source": instr.source, "seq": instr.seq}
            if instr.params is not None:
                args["params"] = _jsonable(instr.params)
            if instr.path:
                args["path"], args["bytes"] = instr.path, instr.nbytes
            events.append({"ph": "X", "name": instr.name, "pid": core_index, "tid": tid, "ts": instr.start * us,
                           "dur": max(instr.end - instr.start, 0.0) * us, "args": args})
            kind = instr.spec.kind
            if kind is Kind.SET_FLAG:
                events.append({"ph": "s", "name": "flag", "cat": "sync", "id": f"{core_index}.{instr.seq}",
                               "pid": core_index, "tid": tid, "ts": instr.end * us})
            elif kind is Kind.WAIT_FLAG:
                events.append({"ph": "f", "bp": "e", "name": "flag", "cat": "sync",
                               "id": f"{core_index}.{instr.released_by.seq}", "pid": core_index,
                               "tid": tid, "ts": instr.start * us})
            elif kind is Kind.CROSS_CORE_WAIT:  # one arrow from each core whose set released it
                for setter in instr.released_by:
                    flow = f"x{setter.core}.{setter.seq}-{core_index}.{instr.seq}"
                    events.append({"ph": "s", "name": "cross-core flag", "cat": "sync", "id": flow,
                                   "pid": setter.core, "tid": _TID.get(setter.pipe, 7), "ts": setter.end * us})
                    events.append({"ph": "f", "bp": "e", "name": "cross-core flag", "cat": "sync", "id": flow,
                                   "pid": core_index, "tid": tid, "ts": instr.end * us})
    return events


def write_chrome_trace(report, path: str) -> None:
    with open(path, "w") as f:
        json.dump({"traceEvents": chrome_trace_events(report), "displayTimeUnit": "ns",
                   "otherData": {"platform": report.platform.name, "cycles": report.cycles}}, f)
