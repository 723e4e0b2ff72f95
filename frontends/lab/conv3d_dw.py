"""Conv3DBackpropFilterV2 (dw) as a sweep target: its knobs, the rules that shape them, one timing-only run.

Knobs (the dwTiling fields the generator chooses): baseM/baseN/baseK (cout, cin*hk*wk and dy-pixel blocks),
stepKa/stepKb (baseK blocks per L1 load), the L1 and L0C double buffers and the order. A candidate's bl1Bound
(B1 buffer elements) is re-derived as the validator counts the largest B1 load (b1_elements), since a new baseN,
baseK or stepKb changes it. Rules: those of tiling/conv3d_backprop_filter/validate.py, and one of our own: stepKa
and stepKb nested (one a multiple of the other), as the generator's UpdateBaseStep always makes them (the
kernel's K loop was only checked against such steps). The validator judges every candidate.
"""
from __future__ import annotations

import math

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.platform import get_platform
from frontends.lab.conv3d_dx_space import around
from frontends.lab.legal import Knob, LegalSpace, Rule, fixed, l1_buffer_knobs
from frontends.lab.target import SIMULATION_ENGINE, OperatorTarget
from kernels.common.operands import stand_in
from kernels.conv3d_backprop_filter.operator import conv3d_backprop_filter_v2_run, rows_beyond_reach
from tiling.common.integers import align_up
from tiling.conv3d_backprop_filter.generator import conv3d_backprop_filter_tiling
from tiling.conv3d_backprop_filter.model import Conv3DBackpropFilterV2TilingData
from tiling.conv3d_backprop_filter.validate import (BLOCK_COUNT_MAX, BLOCK_CUBE, L1W_MAX, MMAD_MAX, TPIPE_ALIGN,
                                                    U16_MAX, b1_elements, rows_to_copy, validate)

FIELDS = Conv3DBackpropFilterV2TilingData.field_ranges()
STEP_FACTORS = (0.25, 0.5, 1, 2, 4)
B1_FIELDS = ("baseN", "baseK", "stepKb", "stepN")  # the fields bl1Bound depends on


class Conv3dDwTarget(OperatorTarget):
    """Conv3DBackpropFilterV2 for one problem (frontends.cli.conv_problem.CliProblem: x is its dx shape)."""

    name = "conv3d-dw"
    fields = FIELDS

    def __init__(self, problem):
        self.problem = p = problem
        self.platform = get_platform(p.platform)
        args = p.operator_arguments()
        # the shapes and pads the operator tiles (pad rows beyond the kernel's reach written out as zero rows)
        self.x_shape, self.pads = rows_beyond_reach(p.dx_shape, p.pad, p.kernel[1],
                                                    p.dilation[1] if p.kernel[1] > 1 else 1)
        self.tiling = conv3d_backprop_filter_tiling(self.x_shape, p.filter_shape, p.dy_shape, p.stride, self.pads,
                                                    p.dilation, p.groups, dtype=p.dtype, platform=self.platform,
                                                    enable_hf32=args["enable_hf32"])
        self._operands = None

    def describe(self) -> str:
        p, t = self.problem, self.tiling
        return (f"conv3d-dw {p.dtype}: x {p.dx_shape}, dy {p.dy_shape} -> dw {p.filter_shape}, stride {p.stride}, "
                f"pad {p.pad}, groups {p.groups} on {self.platform.name}; generator tiling: {t.template}, key "
                f"{t.tiling_key}")

    def default_fields(self) -> dict:
        return self.tiling.fields()

    def overrides(self, point: dict[str, int]) -> dict[str, int]:
        """The point as tiling overrides, with bl1Bound re-derived when a field it depends on changes."""
        out = dict(point)
        if any(name in point for name in B1_FIELDS) and "bl1Bound" not in point:
            out["bl1Bound"] = b1_elements({**self.tiling.fields(), **point})
        return out

    def tiling_for(self, point: dict[str, int]):
        overrides = self.overrides(point)
        return self.tiling.with_overrides(validate=False, **overrides) if overrides else self.tiling

    def check(self, tiling) -> list[str]:
        return [str(problem) for problem in validate(tiling).problems]

    def usage(self, tiling) -> dict:
        f = tiling.fields()
        db = 4 if tiling.dtype == "float32" else 2
        a1 = align_up(f["stepM"] * f["baseM"] * f["stepKa"] * f["baseK"] * db, TPIPE_ALIGN)
        b1 = align_up(f["bl1Bound"] * db, TPIPE_ALIGN)
        l1 = a1 * f["al1Pbuffer"] + b1 * f["bl1Pbuffer"]
        return {"l1_bytes": l1, "l1_fraction": l1 / self.platform.L1}

    def run(self, point: dict[str, int]):
        p = self.problem
        if self._operands is None:
            dtype = DTYPES[p.dtype]
            self._operands = (stand_in(p.dx_shape, dtype), stand_in(p.dy_shape, dtype))
        x, dy = self._operands
        return conv3d_backprop_filter_v2_run(x, p.filter_shape, dy, execute=False, check_races=False,
                                             engine=SIMULATION_ENGINE, tiling_overrides=self.overrides(point) or None,
                                             **p.operator_arguments()).report

    def legal_space(self) -> LegalSpace:
        f = self.tiling.fields()
        db = 4 if self.tiling.dtype == "float32" else 2
        platform = self.platform
        ping_pong = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1
        k_core = f["singleCoreHo"] * f["wo"]  # dy pixels of one core's K

        def steps(own: int):
            def values(p: dict) -> tuple[int, ...]:
                most = max(1, math.ceil(k_core / p["baseK"]))
                near = {max(1, round(own * factor)) for factor in STEP_FACTORS} | {1}
                return tuple(sorted(v for v in near if v <= most)) or (1,)
            return values

        def l1(p: dict, al1: int, bl1: int) -> int:
            g = {**f, **p}
            a1 = align_up(g["stepM"] * g["baseM"] * g["stepKa"] * g["baseK"] * db, TPIPE_ALIGN)
            b1 = align_up(b1_elements(g) * db, TPIPE_ALIGN)
            return a1 * al1 + b1 * bl1

        def b_rows_ok(p: dict) -> bool:
            g = {**f, **p}
            rows = rows_to_copy(min(g["stepKb"] * g["baseK"], k_core), g["wo"])
            hi_rows = min(rows * g["strideH"] + (g["hk"] - 1) * g["dilationH"] + 1 - g["strideH"], g["hi"])
            return hi_rows <= L1W_MAX and g["wo"] + g["stepKb"] * g["baseK"] <= U16_MAX

        knobs = [
            Knob("baseM", lambda p: around(f["baseM"], BLOCK_CUBE), (
                Rule("A1 DataCopy blockCount baseM/C0 <= 4095",
                     lambda p: f["stepM"] * p["baseM"] // f["channelSize"] <= BLOCK_COUNT_MAX),)),
            fixed("baseN", around(f["baseN"], BLOCK_CUBE)),
            Knob("baseK", lambda p: tuple(v for v in around(f["baseK"], BLOCK_CUBE) if v <= MMAD_MAX), (
                Rule("L0A capacity (baseM*baseK)", lambda p: p["baseM"] * p["baseK"] * db * ping_pong <= platform.L0A),
                Rule("L0B capacity (baseN*baseK)", lambda p: p["baseN"] * p["baseK"] * db * ping_pong
                     <= platform.L0B))),
            Knob("cl0Pbuffer", lambda p: (1, 2), (
                Rule("L0C capacity (baseM*baseN*4*cl0Pbuffer)",
                     lambda p: p["baseM"] * p["baseN"] * 4 * p["cl0Pbuffer"] <= platform.L0C),)),
            Knob("stepKa", steps(f["stepKa"]), (
                Rule("A1 DataCopy blockLen stepKa*baseK <= 65535 (32767 float32)",
                     lambda p: p["stepKa"] * p["baseK"] <= (L1W_MAX if db == 4 else U16_MAX)),)),
            Knob("stepKb", steps(f["stepKb"]), (
                Rule("stepKa and stepKb nested (own rule: as the generator makes them)",
                     lambda p: p["stepKa"] % p["stepKb"] == 0 or p["stepKb"] % p["stepKa"] == 0),
                Rule("B Load3Dv2 l1H <= 32767 rows and mStartPt <= 65535", b_rows_ok),
                Rule("L1 capacity", lambda p: l1(p, 1, 1) <= platform.L1))),
            *l1_buffer_knobs(l1, lambda size: size <= platform.L1),
            fixed("iterateOrder", (0, 1)),
        ]
        return LegalSpace(knobs, {k.name: int(f[k.name]) for k in knobs})
