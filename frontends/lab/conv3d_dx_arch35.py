"""conv3d-dx on an Ascend 950 as a sweep target: the arch35 tiling's knobs, the rules that shape them, one
timing-only run of the arch35 kernel.

Knobs (the arch35 fields the kernel reads that the generator chooses): baseM / baseN / baseK, cl0Pbuffer,
stepKa / stepKb, al1Pbuffer / bl1Pbuffer and coreNum (block_dim follows it). iterateOrder is not a knob here: the
arch35 block driver picks its loop order itself (InitBasicBlockLoopDirect) and never reads it. The L0 ping-pong
(al0Pbuffer / bl0Pbuffer) stays the generator's. Rules: the arch35 validator's (tiling/conv3d_backprop_input/
arch35/validate.py: the tiling's InitBaseMNK L0 budgets and IsL1ParamsValid, with the same formulas), and one of
our own: baseM and baseN no larger than one block (singleCoreM, singleCoreCin rounded up to 16), since a larger
tile only computes rows the block drops, as the generator's SetSingleCoreInfoCore shrinks baseM to the block.
The validator judges every candidate. There is no analytical estimate of the arch35 kernel: no pruning.
"""
from __future__ import annotations

import math

from ascend_sim.machine.platform import get_platform
from frontends.lab.conv3d_dx_space import around
from frontends.lab.legal import Knob, LegalSpace, Rule, fixed, l1_buffer_knobs
from frontends.lab.target import SIMULATION_ENGINE, OperatorTarget
from kernels.common.operands import stand_in
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.operator_arch35 import DTYPES_950, override_arch35
from tiling.common.integers import align_up
from tiling.conv3d_backprop_input.arch35.common import al1_bytes, bl1_bytes, fmap_h, hk_wk_aligned
from tiling.conv3d_backprop_input.arch35.model import Conv3DBackpropInputArch35TilingData
from tiling.conv3d_backprop_input.arch35.validate import l1_usage

FIELDS = Conv3DBackpropInputArch35TilingData.field_ranges()
BLOCK_CUBE = 16
MMAD_MAX = 4095  # Mmad m, n, k


class Conv3dDxArch35Target(OperatorTarget):
    """Conv3DBackpropInputV2 on an Ascend 950 (the arch35 tiling and kernel) for one problem
    (frontends.cli.conv_problem.CliProblem on a 950 platform)."""

    name = "conv3d-dx"
    fields = FIELDS

    def __init__(self, problem):
        self.problem = problem
        self.platform = get_platform(problem.platform)
        self.tiling = problem.tiling_arch35()  # refuses, by name, what the kernel port does not run
        self._operands = None

    def describe(self) -> str:
        p, t = self.problem, self.tiling
        return (f"conv3d-dx {p.dtype}: dx {p.dx_shape}, filter {p.filter_shape}, stride {p.stride}, pad {p.pad}, "
                f"groups {p.groups} on {self.platform.name} (arch35); generator tiling: {t.template}, key "
                f"{t.tiling_key}")

    def default_fields(self) -> dict:
        return self.tiling.fields()

    def tiling_for(self, point: dict[str, int]):
        return override_arch35(self.tiling, point, validate=False) if point else self.tiling

    def check(self, tiling) -> list[str]:
        return [str(problem) for problem in tiling.check().problems]

    def usage(self, tiling) -> dict:
        f = tiling.fields()
        dtype_bytes = DTYPES_950[tiling.dtype].itemsize
        ping_pong = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1
        l1 = sum(l1_usage(tiling).values())
        return {"l1_bytes": l1, "l1_fraction": l1 / self.platform.L1,
                "l0a_bytes": f["baseM"] * f["baseK"] * dtype_bytes * ping_pong,
                "l0b_bytes": f["baseN"] * f["baseK"] * dtype_bytes * ping_pong,
                "l0c_bytes": f["baseM"] * f["baseN"] * 4 * f["cl0Pbuffer"]}

    def run(self, point: dict[str, int]):
        p = self.problem
        if self._operands is None:
            dtype = DTYPES_950[p.dtype]
            self._operands = (stand_in(p.filter_shape, dtype), stand_in(p.in_format(p.dy_shape), dtype))
        weight, dy = self._operands
        return conv3d_backprop_input_v2_run(p.in_format(p.dx_shape), weight, dy, execute=False, check_races=False,
                                            engine=SIMULATION_ENGINE, tiling_overrides=point or None,
                                            **p.operator_arguments()).report

    def legal_space(self) -> LegalSpace:
        f = self.tiling.fields()
        platform = self.platform
        dtype_bytes = DTYPES_950[self.tiling.dtype].itemsize
        k0 = f["c0"]
        len_hk_wk_c0 = f["hk"] * f["wk"] * k0
        k_value = len_hk_wk_c0 * f["cout1G"]
        ping_pong = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1

        def steps(p: dict) -> tuple[int, ...]:
            return tuple(range(1, math.ceil(k_value / p["baseK"]) + 1))  # a longer step loads nothing more

        def aligned(k_load: int) -> bool:
            return hk_wk_aligned(k_load, k_load, k_value, len_hk_wk_c0)

        def l1(p: dict, al1: int, bl1: int) -> int:
            ho = fmap_h(p["baseM"], f["wi"], f["ho"], f["strideH"], f["hk"], f["dilationH"])
            a1 = al1_bytes(ho, f["wo"], f["strideW"], p["stepKa"] * p["baseK"], f["hk"] * f["wk"], dtype_bytes, al1)
            return a1 + bl1_bytes(p["stepKb"] * p["baseK"], len_hk_wk_c0, p["baseN"], bl1, dtype_bytes)

        base_k_values = set(around(f["baseK"], k0)) | {len_hk_wk_c0, 2 * len_hk_wk_c0} | \
            {k0 * d for d in range(1, f["hk"] * f["wk"] + 1) if f["hk"] * f["wk"] % d == 0}
        cores = platform.aic_cores
        knobs = [
            Knob("baseM", lambda p: around(f["baseM"], BLOCK_CUBE), (
                Rule("baseM within one block (own rule: singleCoreM rounded up to 16)",
                     lambda p: p["baseM"] <= align_up(f["singleCoreM"], BLOCK_CUBE)),)),
            Knob("baseN", lambda p: around(f["baseN"], BLOCK_CUBE), (
                Rule("baseN within one block (own rule: singleCoreCin rounded up to 16)",
                     lambda p: p["baseN"] <= align_up(f["singleCoreCin"], BLOCK_CUBE)),)),
            Knob("baseK", lambda p: tuple(sorted(v for v in base_k_values if v <= MMAD_MAX)), (
                Rule("L0A capacity (baseM*baseK)",
                     lambda p: p["baseM"] * p["baseK"] * dtype_bytes * ping_pong <= platform.L0A),
                Rule("L0B capacity (baseN*baseK)",
                     lambda p: p["baseN"] * p["baseK"] * dtype_bytes * ping_pong <= platform.L0B))),
            Knob("cl0Pbuffer", lambda p: (1, 2), (
                Rule("L0C capacity (baseM*baseN*4*cl0Pbuffer)",
                     lambda p: p["baseM"] * p["baseN"] * 4 * p["cl0Pbuffer"] <= platform.L0C),)),
            Knob("stepKa", steps, (
                Rule("stepKa*baseK all of K or whole hk*wk*C0 groups (IsHkWkAligned)",
                     lambda p: aligned(p["stepKa"] * p["baseK"])),)),
            Knob("stepKb", steps, (
                Rule("stepKb*baseK all of K or whole hk*wk*C0 groups (IsHkWkAligned)",
                     lambda p: aligned(p["stepKb"] * p["baseK"])),
                Rule("L1 below capacity (IsL1ParamsValid)", lambda p: l1(p, 1, 1) < platform.L1))),
            *l1_buffer_knobs(l1, lambda size: size < platform.L1, "L1 below capacity (IsL1ParamsValid)"),
            fixed("coreNum", sorted({max(1, cores // 4), cores // 2, cores, f["coreNum"]})),
        ]
        return LegalSpace(knobs, {k.name: int(f[k.name]) for k in knobs})
