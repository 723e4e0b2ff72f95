"""The size guard: before a launch, estimate what a run will take (memory and instructions) and refuse what does not
fit this machine, with one error naming the estimate and the limit.

Memory (bytes), each term from the problem's shapes and the tiling, nothing allocated:
- GM: the operands and the output in their device formats (channels rounded up to C0) and the workspace; in a
  timing-only run GM is size-only (ascend_sim/machine/memory.py) and costs nothing;
- host: a full run's copies (each operand converted to NCDHW and to its device format, the output read back and
  converted; the CLI adds its random operands and the reference check, `extra_bytes`);
- race shadows: the GM race checker's 4 bytes per byte of every written allocation (ascend_sim/passes/races.py;
  8-12 on the 950, whose race granule is one byte);
- records: BYTES_PER_RECORD per instruction, measured (tracemalloc peak of a timing-only dx run on the fast engine,
  28,040 records: 2,840 B each; the exact engine keeps about 1 KB); with record=False the chip schedules each
  record as it is issued and drops it, except those waiting for another core (conv_estimate's `pending`);
  a streamed replay run (record=False, timing-only, no race checks, engine auto or replay:
  ascend_sim/engine/streamed.py) holds one AI core's stream at STREAMED_BYTES_PER_RECORD (its blocks and the
  compiled scheduler's arrays), or the whole launch's behind an all-core barrier, plus the templates
  (TEMPLATE_BYTES).
Instructions: the GEMM's tiles (ceil(M/baseM) * ceil(N/baseN) * ceil(K/baseK) per group) times
RECORDS_PER_TILE, plus RECORDS_PER_CORE per core; our own rule, calibrated on dx, dw and forward runs of the
default layer and four others (1x1x1 to 3x3x3 kernels, strides 1-2): within a factor of 3 of the real count on
layers of more than 10,000 instructions, which is what a memory limit and a progress estimate need.

The limit: DEFAULT_FRACTION of the memory the machine has available now (MemAvailable in /proc/meminfo, else
os.sysconf's available pages), unless max_memory (bytes) is given.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

BYTES_PER_RECORD = 3000
# a streamed replay run, per record held: tracemalloc peak of timing-only C3D conv3a dx runs (51k and 310k
# records, 24 AI cores) grew by 164 B per record of one AI core's stream; and the launch's templates (the first
# calls' records, about 2.2k on those layers: 6.5 MiB; less since flags share their parameters and records their
# source tuple: peaks of 5.2 and 6.9 MiB for the 51k and 310k runs), taken as a fixed allowance
STREAMED_BYTES_PER_RECORD = 200
TEMPLATE_BYTES = 12 << 20
RECORDS_PER_TILE = 10
RECORDS_PER_CORE = 200
RACE_SHADOW_BYTES_PER_BYTE = 4
CORE_BUFFER_BYTES = 3 << 19  # a full run's on-chip buffers per AI core: L1, L0A/B/C, BT, FB and two AIVs' UB
DEFAULT_FRACTION = 0.8


# callables observer(estimate), called with every estimate check_fits accepts (a progress display's total)
ESTIMATE_OBSERVERS: list = []


class MemoryLimitError(ValueError):
    """A run refused before launch because its estimated memory exceeds the limit."""


@dataclass(frozen=True)
class RunEstimate:
    """What one launch will take; bytes by part and the estimated instruction count."""

    gm_bytes: int
    host_bytes: int
    race_bytes: int
    instructions: int
    extra_bytes: int = 0  # the caller's own (the CLI's operands and reference check)
    held: float = 1.0  # the share of the records alive at once: 1 when kept, less with record=False
    streamed: bool = False  # a streamed replay run: held records as blocks and scheduler arrays, plus templates

    @property
    def record_bytes(self) -> int:
        if self.streamed:
            return int(self.instructions * self.held) * STREAMED_BYTES_PER_RECORD + TEMPLATE_BYTES
        return int(self.instructions * self.held) * BYTES_PER_RECORD

    @property
    def total_bytes(self) -> int:
        return self.gm_bytes + self.host_bytes + self.race_bytes + self.record_bytes + self.extra_bytes

    def with_extra(self, extra_bytes: int) -> RunEstimate:
        return RunEstimate(self.gm_bytes, self.host_bytes, self.race_bytes, self.instructions,
                           self.extra_bytes + int(extra_bytes), self.held, self.streamed)

    def parts(self) -> str:
        named = (("GM tensors", self.gm_bytes), ("host copies", self.host_bytes), ("race shadows", self.race_bytes),
                 (f"records of ~{self.instructions:,} instructions", self.record_bytes),
                 ("operands and reference check", self.extra_bytes))
        return ", ".join(f"{name} {format_bytes(size)}" for name, size in named if size)


def format_bytes(size: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover (the loop returns)


def available_memory() -> int:
    """The bytes this machine can give a new allocation now."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def memory_limit(max_memory: int | None = None) -> tuple[int, str]:
    """(limit in bytes, where it comes from)."""
    if max_memory is not None:
        if isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1:
            raise ValueError(f"max_memory={max_memory!r} must be a positive number of bytes")
        return max_memory, "max_memory"
    available = available_memory()
    return int(available * DEFAULT_FRACTION), (f"{DEFAULT_FRACTION:.0%} of the {format_bytes(available)} this "
                                               "machine has available")


# What makes a run need less, by the operator's argument and the run command's flag; each operator names those it
# takes (matmul and convolution_backward keep every record: no `record`), so the error offers only real remedies.
REMEDIES = {"execute": "run timing-only (execute=False, --timing-only)",
            "check_races": "without the race check (check_races=False, --no-race-check)",
            "record": "keeping no records (record=False, --no-records)"}


def check_fits(estimate: RunEstimate, max_memory: int | None = None,
               remedies: tuple[str, ...] = ("execute", "check_races", "record")) -> None:
    """Raise MemoryLimitError if the estimate exceeds the limit; its message offers moving the limit and the
    caller's `remedies` (keys of REMEDIES)."""
    limit, source = memory_limit(max_memory)
    if estimate.total_bytes > limit:
        ways = [REMEDIES[name] for name in remedies]
        less = f", or {', '.join(ways[:-1])}{' and ' if len(ways) > 1 else ''}{ways[-1]} to need less" if ways else ""
        raise MemoryLimitError(
            f"this run needs an estimated {format_bytes(estimate.total_bytes)} ({estimate.parts()}), more than the "
            f"limit of {format_bytes(limit)} ({source}); pass max_memory= (--max-memory) to move the limit{less}")
    for observe in ESTIMATE_OBSERVERS:
        observe(estimate)


def combined(estimates: list[RunEstimate]) -> RunEstimate:
    """The estimate of launches run one after another whose memory is all held at the end (convolution_backward
    keeps every launch's result and report, and never streams)."""
    instructions = sum(e.instructions for e in estimates)
    held = sum(e.instructions * e.held for e in estimates) / instructions if instructions else 1.0
    return RunEstimate(sum(e.gm_bytes for e in estimates), sum(e.host_bytes for e in estimates),
                       sum(e.race_bytes for e in estimates), instructions, sum(e.extra_bytes for e in estimates),
                       held)


def gemm_tiles(m: int, n: int, k: int, base_m: int, base_n: int, base_k: int, groups: int = 1) -> int:
    return groups * math.ceil(m / base_m) * math.ceil(n / base_n) * math.ceil(k / base_k)


def conv_estimate(inputs: tuple, output: int, *, workspace: int = 0, tiles: int, cores: int, execute: bool,
                  check_races: bool, record: bool = True, pending: float = 0.0, streamed: bool = False,
                  shadow_per_byte: int = RACE_SHADOW_BYTES_PER_BYTE, shadowed: int | None = None) -> RunEstimate:
    """inputs: the operands' device bytes; output: the output's device bytes (both as in GM); tiles: gemm_tiles;
    pending: with record=False, the share of the records still alive at once because they wait for a core whose
    Python runs later (the cores run one after the other): 1 behind a barrier of all cores (an init pass), 1/cores
    for a MIX kernel whose AIC waits for its own AIVs, 0 without cross-core waits. streamed: the chip streams the
    replay (`streams`): one AI core's records held (1/cores), all of them behind an all-core barrier (pending 1).
    shadowed: the bytes the kernel
    writes allocations of (the race checker shadows an allocation once written; default output + workspace), at
    shadow_per_byte (the A2's 2-byte granules; the 950's are 1 byte)."""
    gm = sum(inputs) + output + workspace
    host = 0
    if execute:  # each operand converted twice (NCDHW, device format), the output read back twice, on-chip buffers
        host = 2 * sum(inputs) + 2 * output + cores * CORE_BUFFER_BYTES
    races = shadow_per_byte * (output + workspace if shadowed is None else shadowed) if check_races else 0
    instructions = tiles * RECORDS_PER_TILE + cores * RECORDS_PER_CORE
    if streamed:
        return RunEstimate(0, host, races, instructions, held=1.0 if pending >= 1 else 1 / cores, streamed=True)
    return RunEstimate(gm if execute else 0, host, races, instructions, held=1.0 if record else pending)


def streams(engine: str, *, record: bool, hooks, execute: bool, check_races: bool) -> bool:
    """Whether a run so configured streams the replay (the chip's own rule, env ASCEND_REPLAY included)."""
    from ascend_sim.engine.replay_engine import replay_mode
    from ascend_sim.engine.streamed import streams_by_ai_core

    return streams_by_ai_core(engine, record=record, hooks=hooks, execute=execute, check_races=check_races,
                              replay_mode=replay_mode())


def tensor_bytes(shape: tuple, itemsize: int, c0: int | None = None, channel_axis: int = 1) -> int:
    """Bytes of a tensor of `shape`; with c0, its channel axis rounded up to a multiple of c0 (NDC1HWC0)."""
    dims = list(shape)
    if c0:
        dims[channel_axis] = -(-dims[channel_axis] // c0) * c0
    return math.prod(dims) * itemsize
