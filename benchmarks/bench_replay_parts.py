"""Benchmark: where a timing-only replay run of an operator spends its CPU, part by part, from the operator's call
to the report.

    python benchmarks/bench_replay_parts.py [--repeat 7] [--only NAME ...] [--op dx|dw|conv3d]

Per layer of benchmarks/bench_replay.py (its operands, `engine="replay", execute=False, check_races=False`), the
CPU seconds (time.process_time) of the run with the most time-consuming engine functions timed from outside,
each part's time without the timed parts inside it (a template's walk is "walks", not "templates"): the walks of
the units' state (`replay._State`), the templates made after a first call (`replay._template`) and their hit side
made at the first hit (`Template.ready`), the short and full keys, a hit's GM shifts, objects reached and state
change, the lazy schedule (`replay_engine.run_lazy`: the encoding of the streams, then the compiled pass
`fast_schedule._run`), the cores made, the report, and the host side of the operator (plan, tiling, GM set-up:
the call outside `Chip.launch`). "The rest" is the kernel's own Python with the records its calls make for real
(the first calls of each key, the flags, the calls between the units). Best of --repeat runs by total, after a
warm-up run; the timers add about 1 us a timed call.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

from bench_replay import _operator_run, select_layers

import ascend_sim.engine.chip as chip_module
from ascend_sim.engine import core as core_module
from ascend_sim.engine import replay, replay_engine
from ascend_sim.passes import fast_schedule

REST = "the rest: the kernel's Python and its real records"


class Parts:
    """Exclusive CPU time and calls per part (a part's time minus that of the timed parts it called)."""

    def __init__(self):
        self.seconds: dict = defaultdict(float)
        self.calls: dict = defaultdict(int)
        self._inner: list = []

    def timed(self, label: str, function):
        def call(*args, **kwargs):
            self._inner.append(0.0)
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent = time.process_time() - start
                self.seconds[label] += spent - self._inner.pop()
                self.calls[label] += 1
                if self._inner:
                    self._inner[-1] += spent
        return call

    def clear(self) -> None:
        self.seconds.clear()
        self.calls.clear()

    def best_of(self, repeat: int, run):
        """run() `repeat` times: (the best run's CPU seconds, its result, its seconds and calls per part)."""
        best = None
        for _ in range(repeat):
            self.clear()
            start = time.process_time()
            result = run()
            total = time.process_time() - start
            if best is None or total < best[0]:
                best = total, result, dict(self.seconds), dict(self.calls)
        return best


def instrument(parts: Parts) -> None:
    """Wrap the engine's functions (for this process: the benchmark only)."""
    timed = parts.timed
    replay._State = timed("walks of the units' state", replay._State)
    replay._template = timed("templates (after the walk)", replay._template)
    replay.Template.ready = timed("a template's hit side, made at its first hit", replay.Template.ready)
    replay._short_key = timed("short keys", replay._short_key)
    replay._full_key = timed("full keys (short-key misses)", replay._full_key)
    replay.Replayer._shifts = staticmethod(timed("hits: GM shifts", replay.Replayer._shifts))
    replay._reach = timed("hits: objects reached", replay._reach)
    replay.Replayer._replay = timed("hits: block and state change", replay.Replayer._replay)
    replay_engine.run_lazy = timed("lazy schedule: encoding and set-up", replay_engine.run_lazy)
    fast_schedule._run = timed("lazy schedule: the compiled pass", fast_schedule._run)
    core_module.AICore.__init__ = timed("cores made", core_module.AICore.__init__)
    report_class = chip_module.RunReport

    class Report:  # chip.launch calls RunReport.from_cores
        from_cores = staticmethod(timed("the report", report_class.from_cores))
    chip_module.RunReport = Report
    chip_module.Chip.launch = timed(REST, chip_module.Chip.launch)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--op", choices=("dx", "dw", "conv3d"), default="dx", help="the operator (default dx)")
    args = parser.parse_args(argv)
    parts = Parts()
    instrument(parts)
    layers = select_layers(args.only)
    for layer in layers:
        run = parts.timed("host side: plan, tiling, GM set-up", _operator_run(args.op, layer))
        run(engine="replay", execute=False, check_races=False)
        total, result, seconds, calls = parts.best_of(
            args.repeat, lambda: run(engine="replay", execute=False, check_races=False))
        print(f"{layer.name}: {result.report.instructions:,} instructions, {total * 1e3:.1f} ms of CPU "
              f"(best of {args.repeat}), {result.report.instructions / total:,.0f} instructions/s")
        for label, spent in sorted(seconds.items(), key=lambda item: -item[1]):
            print(f"  {label:<52} {spent * 1e3:7.2f} ms {100 * spent / total:5.1f} %  {calls[label]:>5} calls")


if __name__ == "__main__":
    main()
