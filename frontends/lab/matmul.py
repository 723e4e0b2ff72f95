"""The matmul kernel (kernels/matmul/) as a sweep target: its knobs, the rules that shape them, one timing-only run.

Knobs: the MatmulTiling fields baseM/baseN/baseK (multiples of 16), stepK (baseK slices per L1 load) and
l1_buffers. Rules: MatmulTiling.check's (L0A/L0B halves, two fp32 L0C tiles, A1 + B1 in L1), stated per knob;
MatmulTiling.check judges every candidate.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.platform import get_platform
from frontends.lab.conv3d_dx_space import around
from frontends.lab.legal import Knob, LegalSpace, Rule, fixed
from frontends.lab.target import SIMULATION_ENGINE, OperatorTarget
from kernels.common.operands import stand_in
from kernels.matmul import run_matmul
from tiling.matmul import L0_HALF, L0C_SIZE, MatmulTiling

KNOBS = ("baseM", "baseN", "baseK", "stepK", "l1_buffers")
FIELDS = {"baseM": (16, 4096), "baseN": (16, 4096), "baseK": (16, 4096), "stepK": (1, 4096), "l1_buffers": (1, 2)}


@dataclass(frozen=True)
class MatmulProblem:
    m: int
    n: int
    k: int
    batch: int = 1
    dtype: str = "float16"
    platform: str = "Ascend910B2"
    hf32: bool = False


class MatmulTarget(OperatorTarget):
    """The matmul kernel for one MatmulProblem."""

    name = "matmul"
    fields = FIELDS

    def __init__(self, problem: MatmulProblem):
        self.problem = p = problem
        self.platform = get_platform(p.platform)
        self.tiling = MatmulTiling.for_shape(p.m, p.n, p.k, p.dtype, batch=p.batch, hf32=p.hf32)
        self._operands = None

    def describe(self) -> str:
        p, t = self.problem, self.tiling
        return (f"matmul {p.dtype}: batch {p.batch} of ({p.m} x {p.k}) . ({p.k} x {p.n}) on {self.platform.name}; "
                f"default tiling baseM/N/K {t.baseM}/{t.baseN}/{t.baseK}, stepK {t.stepK}")

    def default_fields(self) -> dict:
        return {name: getattr(self.tiling, name) for name in KNOBS}

    def tiling_for(self, point: dict[str, int]) -> MatmulTiling:
        return replace(self.tiling, **point)

    def check(self, tiling: MatmulTiling) -> list[str]:
        try:
            tiling.check(self.platform.L1)
        except ValueError as err:
            return [str(err)]
        return []

    def usage(self, tiling: MatmulTiling) -> dict:
        l1 = tiling.l1_buffers * (tiling.baseM + tiling.baseN) * tiling.baseK * tiling.stepK * \
            DTYPES[tiling.dtype].itemsize
        return {"l1_bytes": l1, "l1_fraction": l1 / self.platform.L1}

    def run(self, point: dict[str, int]):
        p = self.problem
        if self._operands is None:
            dtype = DTYPES[p.dtype]
            self._operands = (stand_in((p.batch, p.m, p.k), dtype), stand_in((p.batch, p.k, p.n), dtype))
        a, b = self._operands
        return run_matmul(a, b, platform=p.platform, tiling=self.tiling_for(point), execute=False,
                          check_races=False, engine=SIMULATION_ENGINE, hf32=p.hf32).report

    def legal_space(self) -> LegalSpace:
        t = self.tiling
        size = DTYPES[t.dtype].itemsize
        l1 = self.platform.L1

        def steps(p: dict) -> tuple[int, ...]:
            most = max(1, math.ceil(t.K / p["baseK"]))  # a longer L1 load than all of K loads nothing more
            return tuple(sorted({s for s in (1, 2, 3, 4, 6, 8, 12, 16, t.stepK) if s <= most} or {1}))

        def fits_l1(p: dict, buffers: int) -> bool:
            return buffers * (p["baseM"] + p["baseN"]) * p["baseK"] * p["stepK"] * size <= l1

        knobs = [
            fixed("baseM", around(t.baseM, 16)),
            Knob("baseN", lambda p: around(t.baseN, 16), (
                Rule("two fp32 L0C tiles (baseM*baseN*4*2)", lambda p: p["baseM"] * p["baseN"] * 8 <= L0C_SIZE),)),
            Knob("baseK", lambda p: around(t.baseK, 16), (
                Rule("L0A half (baseM*baseK)", lambda p: p["baseM"] * p["baseK"] * size <= L0_HALF),
                Rule("L0B half (baseK*baseN)", lambda p: p["baseK"] * p["baseN"] * size <= L0_HALF))),
            Knob("stepK", steps, (Rule("L1 capacity", lambda p: fits_l1(p, 1)),)),
            Knob("l1_buffers", lambda p: (1, 2), (Rule("L1 capacity", lambda p: fits_l1(p, p["l1_buffers"])),)),
        ]
        return LegalSpace(knobs, {name: getattr(t, name) for name in KNOBS})
