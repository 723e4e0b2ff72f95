"""The lab's operator protocol and what every operator's target shares.

A target is one problem of one operator, as the sweep sees it (frontends/lab/sweep.py):

    name                   the operator's command name ("conv3d-dx", "conv3d-dw", "conv3d", "matmul")
    fields                 every field a --vary may name, with its allowed [low, high]
    describe()             one line: the problem and the generator's tiling
    default_point(names)   the generator's values of those fields
    legal_space()          the knobs and the rules that shape them (frontends/lab/legal.py)
    prepare(point)         the candidate's tiling checked by the operator's validator, its buffer usage and (where
                           the operator has one) the analytical estimate; no simulation
    simulate(point)        a timing-only run on SIMULATION_ENGINE; called in the worker processes

`OperatorTarget` implements prepare and simulate from four smaller members (tiling_for, check, usage, run);
conv3d-dw, conv3d and matmul plug in that way. conv3d-dx (frontends/lab/conv3d_dx.py) has its own, with the
analytical estimate and the bound pruning.
"""
from __future__ import annotations

from dataclasses import dataclass

PIPES = ("MTE2", "MTE1", "M", "FIX")  # the cube core's data pipes
# ascend_sim.Chip's "auto": the replay engine where the kernel declares replay units, else the fast engine (both give
# the exact engine's cycles)
SIMULATION_ENGINE = "auto"


@dataclass
class Prepared:
    """A candidate before simulation: its validity (and why not), buffer usage and the analytical estimate."""

    valid: bool
    reason: str
    usage: dict
    estimate: dict


def utilisation_columns(report) -> dict:
    """`aic_utilisation.MTE1`, `aiv_utilisation.V`, ...: per core type, busy / chip cycles averaged over the cores
    of that type, the figures the text report and `--json` give (RunReport.utilisation_of)."""
    return {f"{kind.lower()}_utilisation.{pipe}": u for kind in report.kinds
            for pipe, u in report.utilisation_of(kind).items()}


def report_columns(report) -> dict:
    """A run's row: cycles, time, bound, utilisation per core type, bytes per path, instructions, and the slowest
    cube core (`slowest_core`: its index among the cube cores, `cube_cycles`, `slowest_core_busy_<pipe>`)."""
    cube = [core for core in report.cores if core.kind == "AIC"]
    block, slowest = max(enumerate(cube), key=lambda item: item[1].cycles)
    return {"cycles": report.cycles, "microseconds": report.microseconds, "bound": report.bound,
            **utilisation_columns(report),
            **{f"bytes_{path}": n for path, n in report.bytes_by_path.items()},
            **{f"slowest_core_busy_{pipe}": slowest.busy.get(pipe, 0.0) for pipe in PIPES},
            "slowest_core": block, "cube_cycles": slowest.cycles, "instructions": report.instructions}


class OperatorTarget:
    """prepare() and simulate() from: tiling_for(point) (the generator's tiling with the point's fields, not
    checked), check(tiling) (the validator's problems as strings), usage(tiling) (at least l1_bytes) and
    run(point) (the timing-only RunReport)."""

    name = ""
    fields: dict = {}

    def describe(self) -> str:
        raise NotImplementedError

    def default_point(self, names) -> dict[str, int]:
        fields = self.default_fields()
        return {name: int(fields[name]) for name in names}

    def prepare(self, point: dict[str, int]) -> Prepared:
        tiling = self.tiling_for(point)
        problems = self.check(tiling)
        return Prepared(not problems, "; ".join(problems), self.usage(tiling), {})

    def simulate(self, point: dict[str, int]) -> dict:
        return report_columns(self.run(point))
