"""What a run measured: cycles, per-pipe busy time and utilisation, bytes per path, instruction counts."""
from __future__ import annotations

from dataclasses import dataclass, field

from ascend_sim.machine.pipes import QUEUES, Pipe
from ascend_sim.machine.platform import get_platform
from ascend_sim.passes.schedule import retime as schedule_retime
from ascend_sim.passes.trace import write_chrome_trace

_DATA_PIPES = (Pipe.MTE2, Pipe.MTE1, Pipe.M, Pipe.FIX, Pipe.MTE3, Pipe.V)
_BUSY_PIPES = tuple((Pipe(q).name, int(q)) for q in QUEUES if Pipe(q) in _DATA_PIPES)  # a report's busy columns


@dataclass
class CoreReport:
    core: int
    cycles: float
    busy: dict[str, float]
    bytes_by_path: dict[str, int]
    counts: dict[str, int]
    name: str = ""  # "AIC 3", "AIV 7"
    kind: str = "AIC"  # the core type
    group: int = 0  # the AI core it belongs to (an AIC and its AIVs)

    @property
    def utilisation(self) -> dict[str, float]:
        return {pipe: (busy / self.cycles if self.cycles else 0.0) for pipe, busy in self.busy.items()}

    @property
    def bound(self) -> str:
        """The pipe with the most busy cycles: the one that bounds this core."""
        return max(self.busy, key=self.busy.get) if self.busy else "none"

    @property
    def instructions(self) -> int:
        return sum(self.counts.values())


@dataclass
class RunReport:
    platform: object
    cores: list[CoreReport] = field(default_factory=list)
    logs: list = field(default_factory=list, repr=False)  # per core: list of Instruction

    @classmethod
    def from_cores(cls, platform, cores) -> "RunReport":
        reports = []
        for core in cores:
            busy = {name: core.busy[q] for name, q in _BUSY_PIPES}
            reports.append(CoreReport(core.index, core.cycles, busy, dict(core.bytes_by_path), dict(core.counts),
                                      core.name, core.core_type.name, core.group))
        return cls(platform, reports, [core.log for core in cores])

    @property
    def cycles(self) -> float:
        """Chip cycles: the last core to finish."""
        return max((c.cycles for c in self.cores), default=0.0)

    @property
    def microseconds(self) -> float:
        return self.platform.cycles_to_us(self.cycles)

    @property
    def busy(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for c in self.cores:
            for pipe, busy in c.busy.items():
                total[pipe] = total.get(pipe, 0.0) + busy
        return total

    @property
    def utilisation(self) -> dict[str, float]:
        """Mean over cores of busy / chip cycles."""
        span = self.cycles * len(self.cores)
        return {pipe: (busy / span if span else 0.0) for pipe, busy in self.busy.items()}

    @property
    def kinds(self) -> list[str]:
        """The core types launched (AIC, AIV), in core order."""
        return list(dict.fromkeys(c.kind for c in self.cores))

    def utilisation_of(self, kind: str) -> dict[str, float]:
        """Mean over the cores of one type (AIC or AIV) of busy / chip cycles, for the pipes they used."""
        cores = [c for c in self.cores if c.kind == kind]
        span = self.cycles * len(cores)
        busy: dict[str, float] = {}
        for c in cores:
            for pipe, b in c.busy.items():
                busy[pipe] = busy.get(pipe, 0.0) + b
        return {pipe: b / span for pipe, b in busy.items() if b > 0 and span}

    @property
    def bound(self) -> str:
        busy = self.busy
        return max(busy, key=busy.get) if busy else "none"

    @property
    def bytes_by_path(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for c in self.cores:
            for path, n in c.bytes_by_path.items():
                total[path] = total.get(path, 0) + n
        return total

    @property
    def counts(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for c in self.cores:
            for name, n in c.counts.items():
                total[name] = total.get(name, 0) + n
        return total

    @property
    def instructions(self) -> int:
        return sum(self.counts.values())

    def summary(self) -> str:
        """A few readable lines: cycles, time, utilisation per pipe, the bound, bytes per path."""
        # each core type over its own cores (an AIV has no MTE1, an AIC no V): the figures of to_dict's
        # <kind>_utilisation and of the lab's rows
        kinds = self.kinds
        util = "  |  ".join(kind + "  " + "  ".join(f"{pipe} {u:6.1%}" for pipe, u in self.utilisation_of(
            kind).items()) for kind in kinds)
        cores = " + ".join(f"{sum(c.kind == kind for c in self.cores)} {kind}" for kind in kinds) \
            if len(kinds) > 1 else str(len(self.cores))
        paths = "  ".join(f"{path} {n / 1e6:.3f} MB" for path, n in sorted(self.bytes_by_path.items()))
        return (f"{self.platform.name}: {cores} cores, {self.cycles:,.0f} cycles = "
                f"{self.microseconds:,.2f} us at {self.platform.clock_mhz:g} MHz\n"
                f"pipe utilisation: {util}\n"
                f"bound by: {self.bound}\n"
                f"bytes moved: {paths}\n"
                f"instructions: {self.instructions:,}")

    def to_dict(self) -> dict:
        return {
            "platform": self.platform.name, "cores": len(self.cores), "cycles": self.cycles,
            "microseconds": self.microseconds,
            # per core type, busy / chip cycles averaged over the cores of that type (as summary() prints it)
            **{f"{kind.lower()}_utilisation": self.utilisation_of(kind) for kind in self.kinds},
            "bound": self.bound,
            "bytes_by_path": self.bytes_by_path, "instruction_counts": self.counts,
            "per_core": [{"core": c.core, "name": c.name, "kind": c.kind, "cycles": c.cycles, "busy": c.busy,
                          "bound": c.bound,
                          "bytes_by_path": c.bytes_by_path, "instructions": c.instructions} for c in self.cores],
        }

    def retime(self, platform, engine: str = "exact") -> "RunReport":
        """The report of this run's recorded streams scheduled on another platform (other rates, overheads,
        clock, queue depth), without running the kernel again. Equal to a timing-only run on that platform
        whenever the kernel would issue the same stream there (the same tiling).

        engine="exact" (default) times the streams with the exact engine's scheduler (schedule.py), "fast" with
        its numba-compiled transcription (fast_schedule.py): the same report, record for record (issue, start,
        end, releases, busy, cycles, faults). "fast" pays off when warm and on long streams (1.5 to 2 times as
        fast on the C3D conv3a dx layer, benchmarks/bench_retime.py); its first call in a process imports numba and
        loads (or compiles) its functions, about a second (or ten)."""
        if engine not in ("fast", "exact"):
            raise ValueError(f"engine={engine!r} must be 'fast' or 'exact'")
        platform = get_platform(platform)
        recorded = len(self.logs) == len(self.cores) and all(
            len(log) == c.instructions for log, c in zip(self.logs, self.cores))
        if not recorded:
            raise ValueError("retime needs the recorded streams: run with Chip(record=True) (the default)")
        kinds, groups = [c.kind for c in self.cores], [c.group for c in self.cores]
        if engine == "fast":
            from ascend_sim.passes.fast_schedule import retime
            logs, cycles, busy_rows = retime(self.logs, kinds, groups, platform)
        else:
            schedules = schedule_retime(self.logs, kinds, groups, platform)
            logs, cycles, busy_rows = [s.records for s in schedules], [s.cycles for s in schedules], \
                [s.busy for s in schedules]
        cores = []
        for c, core_cycles, row in zip(self.cores, cycles, busy_rows):
            busy = {pipe: row[int(Pipe[pipe])] for pipe in c.busy}
            cores.append(CoreReport(c.core, core_cycles, busy, dict(c.bytes_by_path), dict(c.counts), c.name,
                                    c.kind, c.group))
        return RunReport(platform, cores, logs)

    def write_trace(self, path: str) -> None:
        write_chrome_trace(self, path)
