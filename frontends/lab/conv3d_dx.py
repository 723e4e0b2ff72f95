"""The conv3d-dx operator as a sweep target: its default tiling, its knobs, one candidate checked, one run.

A target is what the lab needs of an operator (the protocol: frontends/lab/target.py):
`name`, `default_point(space)` (the generator's own values of the varied fields), `fields` (every field a space
may vary, with its allowed range), `legal_space()` (the tilings a sweep draws from, frontends/lab/legal.py),
`prepare(point)` (the candidate's tiling, validated, with its buffer usage and the analytical estimate, whose
`est_roofline` must be a lower bound of the simulated cycles for the sweep's pruning; no simulation) and
`simulate(point)` (a timing-only run on the `auto` engine, the replay engine here; called in the worker processes).
"""
from __future__ import annotations

from operator import attrgetter

import numpy as np

from ascend_sim.engine.replay_engine import log_timing
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.platform import get_platform
from ascend_sim.record import Kind
from frontends.lab.conv3d_dx_space import conv3d_dx_space
from frontends.lab.estimate import estimate_conv3d_dx
from frontends.lab.target import SIMULATION_ENGINE, Prepared, report_columns
from kernels.common.operands import stand_in
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from tiling import validate
from tiling.conv3d_backprop_input.arch22.model import Conv3DBackpropInputV2TilingData
from tiling.conv3d_backprop_input.arch22.validate import l1_bytes

FIELDS = Conv3DBackpropInputV2TilingData.field_ranges()
# The template flags of the tiling key: the basic-block driver or the general one, and the L0B load variant.
FIELDS.update(useBasicBlock=(0, 1), loadB2Condition=(0, 2))
# The generator's knobs (docs/tiling.md): blocks, K steps, buffers, order, core split.
KNOBS = ("baseM", "baseN", "baseK", "stepM", "stepN", "stepKa", "stepKb", "al0Pbuffer", "bl0Pbuffer", "cl0Pbuffer",
         "al1Pbuffer", "bl1Pbuffer", "iterateOrder", "coreNum", "singleCoreM", "singleCoreCin1", "singleCoreDin")


class Conv3dDxTarget:
    """Conv3DBackpropInputV2 on the conv kernel (route v2) for one problem (frontends.cli.conv_problem.CliProblem,
    or anything with its `plan(route, overrides, validate_overrides=)`, shapes, dtype and operator_arguments()),
    simulated on `engine` (ascend_sim.Chip's; every engine gives the same cycles)."""

    name = "conv3d-dx"
    fields = FIELDS

    def __init__(self, problem, engine: str = SIMULATION_ENGINE):
        if get_platform(problem.platform).npu_arch != 2201:
            raise ValueError(f"platform={get_platform(problem.platform).name}: this is the A2/A3 (arch22) dx target; "
                             "an Ascend 950 runs the arch35 tiling (Conv3dDxArch35Target)")
        self.problem = problem
        self.plan = problem.plan("v2")
        self.tiling = self.plan.tiling
        self.platform = get_platform(problem.platform)
        self.engine = engine
        self._operands = None

    def describe(self) -> str:
        p = self.problem
        t = self.tiling
        return (f"conv3d-dx {p.dtype}: dx {p.dx_shape}, filter {p.filter_shape}, stride {p.stride}, pad {p.pad}, "
                f"groups {p.groups} on {self.platform.name}; generator tiling: {t.template}, key {t.tiling_key}")

    def default_point(self, names) -> dict[str, int]:
        fields = self.tiling.fields()
        return {name: int(fields[name]) for name in names}

    def legal_space(self):
        """The tilings around the generator's that satisfy the tiling rules by construction."""
        return conv3d_dx_space(self.tiling, self.platform)

    def candidate(self, point: dict[str, int]):
        """The tiling of a point: the generator's, with the point's fields overridden (not validated)."""
        overrides = self.overrides(point)
        return self.problem.plan("v2", overrides, validate_overrides=False).tiling if overrides else self.tiling

    def overrides(self, point: dict[str, int]) -> dict[str, int]:
        """The point as tiling overrides, with the L0B load variant re-derived from a varied baseK as the
        generator derives it (1 when a K step spans a whole kernel window), unless the point sets it."""
        point = dict(point)
        if "baseK" in point and "loadB2Condition" not in point and self.tiling.loadB2Condition != 2:
            f = self.tiling.fields()
            point["loadB2Condition"] = int(point["baseK"] // f["c0"] >= f["hk"] * f["wk"])
        return point

    def prepare(self, point: dict[str, int]) -> Prepared:
        tiling = self.candidate(point)
        report = validate(tiling)
        reason = "; ".join(str(p) for p in report.problems)
        usage = buffer_usage(tiling, self.platform)
        estimate = {}
        if report.ok:
            e = estimate_conv3d_dx(tiling, self.platform)
            estimate = {"est_cycles": e.cycles, "est_roofline": e.roofline, "est_bound": e.bound,
                        **{f"est_busy_{pipe}": busy for pipe, busy in e.busy.items()},
                        **{f"est_bytes_{path}": n for path, n in e.bytes_by_path.items()},
                        "est_fractals": e.fractals}
        return Prepared(report.ok, reason, usage, estimate)

    def operands(self) -> tuple:
        """(filter, out_backprop) as size-only stand-ins, made once per target (so once per worker)."""
        if self._operands is None:
            dtype = DTYPES[self.problem.dtype]
            self._operands = (stand_in(self.problem.filter_shape, dtype), stand_in(self.problem.dy_shape, dtype))
        return self._operands

    def simulate(self, point: dict[str, int]) -> dict:
        """Timing-only run of the candidate: cycles, per-pipe utilisation, bound, bytes."""
        p = self.problem
        weight, dy = self.operands()
        run = conv3d_backprop_input_v2_run(p.dx_shape, weight, dy, execute=False, check_races=False,
                                           engine=self.engine, route="v2",
                                           tiling_overrides=self.overrides(point) or None, **p.operator_arguments())
        report = run.report
        # the slowest cube core's busiest pipe: where it idles (a MIX launch's vector cores are left out)
        index, slowest = max(((i, core) for i, core in enumerate(report.cores) if core.kind == "AIC"),
                             key=lambda item: item[1].cycles)
        return {**report_columns(report), **_bound_pipe_idle(report.logs[index], slowest)}


def _bound_pipe_idle(log, core) -> dict:
    """Where the slowest cube core's busiest pipe is not busy: before its first instruction starts (`head`),
    between its instructions (`gaps`) and after its last one ends (`tail`); with its busy cycles they add up
    to the core's cycles. This is where a roofline falls short of the simulated cycles. The gaps are also split
    by what the pipe waited for (`wait_<event>`: the idle cycles before a WaitFlag of that event; `wait_<name>`
    before another instruction, e.g. a PipeBarrier)."""
    pipe = Pipe[core.bound]
    # the log's timing only: a replayed run's records are not made for it (log_timing)
    records, starts, ends = log_timing(log)
    # on arrays: a candidate's slowest core has tens of thousands of records, a few hundred of them after a gap
    on_pipe = np.flatnonzero(np.fromiter(map(attrgetter("pipe"), records), np.int64, len(records)) == pipe)
    start, end = np.array(starts)[on_pipe], np.array(ends)[on_pipe]
    busy = end > start
    if not busy.any():
        return {}
    first, last = float(start[busy][0]), float(end[busy].max())
    idle = {"bound_pipe_head": first, "bound_pipe_gaps": last - first - core.busy[core.bound],
            "bound_pipe_tail": core.cycles - last}
    # the pipe is free from the latest end before each instruction (from its first busy start on)
    free = np.maximum.accumulate(np.concatenate(([first], end[:-1])))
    for i in np.flatnonzero((free < start) & (start <= last)).tolist():
        r = records[on_pipe[i]]
        cause = f"bound_pipe_wait_{r.event[0] if r.spec.kind is Kind.WAIT_FLAG else r.name}"
        idle[cause] = idle.get(cause, 0.0) + float(start[i]) - float(free[i])
    return idle


def buffer_usage(tiling, platform) -> dict:
    """Bytes of L1, L0A, L0B and L0C the tiling asks for, as the validator counts them, and L1 as a fraction."""
    f = tiling.fields()
    db = 4 if tiling.dtype == "float32" else 2
    ping_pong = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1
    l1 = 0
    if min(f["hk"], f["wk"], f["wi"], f["baseM"], f["baseK"], f["stepKa"], f["stepKb"], f["baseN"]) >= 1:
        a1, b1 = l1_bytes(f, db)
        l1 = a1 * f["al1Pbuffer"] + b1 * f["bl1Pbuffer"]
    extra_k = f["c0"] if db == 4 and f["hk"] * f["wk"] > 1 else 0
    return {"l1_bytes": l1, "l1_fraction": l1 / platform.L1,
            "l0a_bytes": f["baseM"] * f["baseK"] * db * ping_pong,
            "l0b_bytes": f["baseN"] * (f["baseK"] + extra_k) * db * ping_pong,
            "l0c_bytes": f["baseM"] * f["baseN"] * 4 * f["cl0Pbuffer"]}
