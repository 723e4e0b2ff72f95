"""The `ascend-sim debug` commands over the operator's GM tensors by argument name: `print y[...]` (logical), `x y[...]`
(device format), `who-wrote y[...]` (provenance of one element) and `check` (against the operator's reference).

A mixin of DebugShell: it uses self.dbg, self.say and self.operator (frontends.debugger.tensors.OperatorTensors or None).
"""
from __future__ import annotations

import re

import numpy as np

from ascend_sim.machine.gm_tensors import compare
from frontends.debugger.parsing import CommandError, format_array, parse_index

_TENSOR = re.compile(r"\s*(\w+)\s*(\[[^\]]*\])?\s*(full)?\s*")


class TensorCommands:
    def tensor_names(self) -> list:
        return list(self.dbg.tensors)

    def tensor_aliases(self) -> dict:
        """{alias: tensor name}: the names the run command prints (dy, w, dx) for the operator's arguments."""
        return dict(getattr(self.operator, "aliases", None) or {})

    def parse_tensor(self, text: str):
        """NAME[INDEX] [full] -> (GmTensor, index tuple or (), the index text, full) or None when NAME is no tensor
        (nor an alias of one)."""
        match = _TENSOR.fullmatch(text)
        name = match and self.tensor_aliases().get(match.group(1), match.group(1))
        if not match or name not in self.dbg.tensors:
            return None
        _, index, full = match.groups()
        return self.dbg.tensors[name], (parse_index(index[1:-1]) if index else ()), index or "", bool(full)

    # ------------------------------------------------------------------ print / x
    def print_tensor(self, parsed, device: bool) -> None:
        t, index, text, full = parsed
        shape = t.device_shape if device else t.logical_shape
        fmt = t.device_format if device else t.logical_format
        _check_axes(t.name, index, shape, fmt)
        value = self.dbg.tensor(t.name, index, device=device)
        where = f"GM {t.allocation}, {t.device_format} {t.device_shape}"
        if value.ndim == 0:
            flat = int(np.ravel_multi_index(index, shape)) if device else t.flat_index(index)
            other = t.logical_index(flat) if device else t.device_index(index)
            at = f"{t.logical_format if device else t.device_format} {list(other) if other else 'padding'}"
            self.say(f"{t.name}{text} = {value[()]!s}  ({where}: byte {flat * t.dtype.itemsize}, {at})")
            return
        self.say(f"{t.name}{text}: {fmt} {value.shape} {value.dtype}  ({where})")
        self.say(format_array(value, full))

    def do_x(self, rest: str) -> None:
        parsed = self.parse_tensor(rest)
        if parsed is None:
            raise CommandError(f"x needs a tensor NAME[INDEX] in its device format; tensors: "
                               f"{', '.join(self.tensor_names()) or 'none'}")
        self.print_tensor(parsed, device=True)

    # ------------------------------------------------------------------ provenance
    def who_wrote_element(self, parsed, every: bool = False) -> None:
        t, index, text, _ = parsed
        if len(index) != len(t.logical_shape) or any(isinstance(i, slice) for i in index):
            raise CommandError(f"who-wrote {t.name} needs one element: {len(t.logical_shape)} integers "
                               f"({t.logical_format} {t.logical_shape})")
        self.show_provenance(t, tuple(index), every)

    def show_provenance(self, t, index: tuple, every: bool = False) -> None:
        """The element's path back to GM: one line per kind of step (the Mmads of one source line, the loads of one
        line into one buffer, ...: a range of records), or with `every` one line per record."""
        pv = self.dbg.trace(t.name, index)
        flat = t.flat_index(index)
        label = f"{t.name}[{', '.join(map(str, index))}]"
        head = (f"{label} = {self.dbg.tensor(t.name, index)[()]!s}  (GM {t.allocation} byte {flat * t.dtype.itemsize}, "
                f"{t.device_format} {list(t.device_index(index))})")
        if not pv.steps:
            self.say(f"{head}: no applied record wrote it.")
            return
        self.say(f"{head} came from:")
        if not every:
            groups = _similar(pv.steps)
            for group in groups:
                self.say(self._step_line(group[0]) if len(group) == 1 else self._group_line(group))
            if len(groups) < len(pv.steps):
                self.say("  (who-wrote --all lists every record)")
            return
        for group in _runs(pv.steps):
            self.say(self._step_line(*group))

    def _step_line(self, *group) -> str:
        """One step, or a run of adjacent loads (_runs), as one line."""
        step, w = group[0], group[0].writer
        role = step.role if step.role in ("stored", "accumulated") else f"{step.role} {step.into}"
        extra = step.detail
        if step.role == "loaded":
            extra = f"{sum(s.nbytes for s in group)} bytes for {' '.join(f'#{s}' for s in sorted(step.fed))}"
        for name, offsets in step.inputs.items():
            extra += "; from " + self._gm_elements(name, offsets)
        seqs = f"#{w.seq}" if len(group) == 1 else f"#{group[-1].writer.seq}-#{w.seq} ({len(group)} records)"
        start, end = min(s.writer.start for s in group), max(s.writer.end for s in group)
        return (f"  {role:<13s}{seqs} core {w.core} {w.pipe} {w.name} [{start:.0f}, {end:.0f}) at "
                f"{w.source}  {extra}".rstrip())

    def _group_line(self, group: list) -> str:
        """Steps of one kind (_similar) as one line: the records' range, the cores, the time span, and what they
        share (the Mmad cell when it is the same in all, the bytes each load gave, the GM elements read)."""
        step, w = group[0], group[0].writer
        role = step.role if step.role in ("stored", "accumulated") else f"{step.role} {step.into}"
        seqs = sorted(s.writer.seq for s in group)
        cores = sorted({s.writer.core for s in group})
        where = f"core {cores[0]}" if len(cores) == 1 else f"cores {_ranges(cores)}"
        start, end = min(s.writer.start for s in group), max(s.writer.end for s in group)
        if step.role == "loaded":
            sizes = {s.nbytes for s in group}
            fed = sorted(set().union(*(s.fed for s in group)))
            extra = (f"{sizes.pop()} bytes each" if len(sizes) == 1 else f"{sum(s.nbytes for s in group)} bytes in "
                     f"all") + (f" for #{fed[0]}" if len(fed) == 1 else f" for {len(fed)} records #{fed[0]}-#{fed[-1]}")
        else:
            details = {s.detail for s in group}
            extra = f"each: {details.pop()}" if len(details) == 1 else f"{len(details)} different cells"
        read: dict = {}
        for s in group:
            for name, offsets in s.inputs.items():
                read[name] = np.union1d(read.get(name, np.zeros(0, np.int64)), offsets)
        for name, offsets in read.items():
            extra += "; from " + self._gm_elements(name, offsets)
        return (f"  {role:<13s}{w.name} x{len(group)} (records #{seqs[0]}-#{seqs[-1]}) {where} {w.pipe} "
                f"[{start:.0f}, {end:.0f}) at {w.source}  {extra}")

    def _gm_elements(self, allocation: str, offsets: np.ndarray) -> str:
        """The GM bytes a load read, as elements of the operator's tensor in that allocation (first and last)."""
        for t in self.dbg.tensors.values():
            if t.allocation == allocation:
                flats = np.unique(offsets // t.dtype.itemsize)
                logical = [t.logical_index(int(f)) for f in flats]
                real = [i for i in logical if i is not None]
                if not real:
                    return f"{t.name}: {flats.size} padding elements"
                span = f"{t.name}[{', '.join(map(str, real[0]))}]"
                if len(real) > 1:
                    span += f" .. {t.name}[{', '.join(map(str, real[-1]))}]"
                return f"{t.name}: {len(real)} elements {span}"
        return f"gm {allocation}: {offsets.size} bytes"

    # ------------------------------------------------------------------ check
    def do_check(self, rest: str) -> None:
        if rest.strip():
            raise CommandError(f"check takes no arguments, got {rest.strip()!r}")
        op = self.operator
        if op is None:
            raise CommandError("check needs the operator's tensors and reference, which this run has not (debug "
                               "conv-backward replays one launch: debug that gradient's own operator to check it)")
        if self._expected is None:
            self._expected = np.asarray(op.expected(), np.float64)
        result = compare(self.dbg.tensor(op.output), self._expected, op.tolerance)
        position = ("at the end of the run" if self.dbg.at_end else f"at record #{self.dbg.seq - 1}" if self.dbg.seq
                    else "at the start of the run")
        if result.passed:
            self.say(f"check {op.output} {position}: PASSED (max |got - ref| / (|ref| + rms) = "
                     f"{result.max_error:.2e}, tolerance {op.tolerance:.0e})")
            return
        first = result.first
        label = f"{op.output}[{', '.join(map(str, first))}]"
        self.say(f"check {op.output} {position}: FAILED: {result.wrong} of {result.total} elements wrong "
                 f"(tolerance {op.tolerance:.0e}); the first: {label} = {result.got!s}, expected "
                 f"{result.expected:.6g}")
        self.show_provenance(self.dbg.tensors[op.output], first)


def _runs(steps: list) -> list:
    """Steps grouped into runs of adjacent loads of one source line that fed the same records and read no GM
    (nine LoadData 2D of one Mmad's B: one line)."""
    groups: list = []
    for step in steps:
        last = groups[-1][-1] if groups else None
        if (last is not None and step.role == last.role == "loaded" and step.into == last.into
                and step.writer.source == last.writer.source and step.fed == last.fed
                and not step.inputs and not last.inputs and step.writer.seq == last.writer.seq - 1):
            groups[-1].append(step)
        else:
            groups.append([step])
    return groups


def _similar(steps: list) -> list:
    """Steps grouped by kind: role, buffer written, pipe, instruction and source line (in order of first step)."""
    groups: dict = {}
    for step in steps:
        w = step.writer
        groups.setdefault((step.role, step.into, w.pipe, w.name, w.source), []).append(step)
    return list(groups.values())


def _ranges(values: list) -> str:
    """Sorted integers as ranges: 0-3,8,12-13."""
    runs: list = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _check_axes(name: str, index: tuple, shape: tuple, fmt: str) -> None:
    if len(index) > len(shape):
        raise CommandError(f"{name}: {len(index)} indices for {len(shape)} axes ({fmt} {shape})")
    for axis, (i, size) in enumerate(zip(index, shape)):
        if isinstance(i, int) and not -size <= i < size:
            label = fmt[axis] if len(fmt) == len(shape) else str(axis)
            raise CommandError(f"{name}: index {i} of axis {label} outside [0, {size - 1}]")
