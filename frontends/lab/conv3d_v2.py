"""Conv3DV2 (the forward 3D convolution) as a sweep target: its knobs, the rules that shape them, one timing-only run.

Knobs (convApiTiling fields): the L0 blocks mL0/nL0/kL0, the L0C ping-pong bit of pBufferFlag and the order
iterateMNOrder. The L1 blocks (mAL1, kAL1, nBL1, kBL1) stay the generator's: each drags tails and quotients
(kAL1Tail, cin1InAL1, KBL1Divk0, ...) the kernel reads. A candidate's derived fields are re-derived as
tiling/conv3d_v2/validate.py requires them: nL0xk0 = nL0*k0, mAL1DivmL0 = ceil(mAL1/mL0), nBL1DivnL0 =
ceil(nBL1/nL0), and the tiling key from the fields (SetTilingKey). Rules: the validator's (cube fractals, Mmad
ranges, kL0 dividing kAL1 and kBL1, L0A/L0B room with or without ping-pong, L1/L0C/BT capacity), and our own:
mL0 <= mAL1 and nL0 <= nBL1 (an L0 block inside its L1 block, as the generator chooses them). The validator and
the kernel selection judge every candidate.
"""
from __future__ import annotations

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.platform import get_platform
from frontends.lab.conv3d_dx_space import around
from frontends.lab.legal import Knob, LegalSpace, Rule, fixed
from frontends.lab.target import SIMULATION_ENGINE, OperatorTarget
from kernels.common.operands import stand_in
from kernels.conv3d_v2.arguments import check_conv3d_v2_operands
from kernels.conv3d_v2.kernel.conv3d_v2 import kernel_class
from kernels.conv3d_v2.kernel.util import NCDHW, NDC1HWC0
from kernels.conv3d_v2.operator import conv3d_v2_run, plan_conv3d_v2_tiling
from kernels.conv3d_v2.routing import use_point_wise_kernel
from tiling.conv3d_v2.model import Conv3DV2TilingData
from tiling.conv3d_v2.validate import C0_BYTES, CUBE, MMAD_MAX, PB_CL0, PB_L0A, PB_L0B, buffer_bytes, validate

FIELDS = Conv3DV2TilingData.field_ranges()


class Conv3dV2Target(OperatorTarget):
    """Conv3DV2 for one problem (frontends.cli.conv_problem.CliProblem: x is its dx shape, y its dy shape)."""

    name = "conv3d"
    fields = FIELDS

    def __init__(self, problem):
        self.problem = p = problem
        self.platform = get_platform(p.platform)
        dtype = DTYPES[p.dtype]
        self._operands = (stand_in(p.dx_shape, dtype), stand_in(p.filter_shape, dtype))
        kwargs = p.operator_arguments()
        self.args = check_conv3d_v2_operands(*self._operands, None, kwargs["strides"], kwargs["pads"],
                                             kwargs["dilations"], kwargs["groups"], kwargs["data_format"],
                                             kwargs["filter_format"], kwargs["platform"], kwargs["enable_hf32"])
        self.fmap_format = NCDHW if use_point_wise_kernel(self.args, kwargs["data_format"]) else NDC1HWC0
        self.tiling = plan_conv3d_v2_tiling(self.args, None, self.fmap_format)

    def describe(self) -> str:
        p, t = self.problem, self.tiling
        return (f"conv3d {p.dtype}: x {p.dx_shape} * w {p.filter_shape} -> y {p.dy_shape}, stride {p.stride}, pad "
                f"{p.pad}, groups {p.groups} on {self.platform.name}; generator tiling: key {t.tiling_key}"
                f"{' (pointwise)' if t.pointwise else ''}")

    def default_fields(self) -> dict:
        return {**self.tiling.convRunInfo.model_dump(), **self.tiling.convApiTiling.model_dump()}

    def overrides(self, point: dict[str, int]) -> dict[str, int]:
        """The point with the fields it derives: nL0xk0, mAL1DivmL0, nBL1DivnL0."""
        if not point:
            return {}
        api = {**self.tiling.convApiTiling.model_dump(), **point}
        k0 = C0_BYTES // (4 if self.tiling.dtype == "float32" else 2)
        derived = {"nL0xk0": api["nL0"] * k0, "mAL1DivmL0": -(-api["mAL1"] // api["mL0"])}
        if not api["bl1BypassFlag"]:
            derived["nBL1DivnL0"] = -(-api["nBL1"] // api["nL0"])
        return {**derived, **point}

    def tiling_for(self, point: dict[str, int]):
        overrides = self.overrides(point)
        if not overrides:
            return self.tiling
        tiling = self.tiling.with_overrides(validate=False, **overrides)  # check() reports the problems
        tiling.tiling_key = tiling.key_from_fields()
        return tiling

    def check(self, tiling) -> list[str]:
        problems = [str(problem) for problem in validate(tiling).problems]
        try:
            kernel_class(tiling.tiling_key, self.fmap_format)
        except ValueError as err:
            problems.append(f"tiling_key={tiling.tiling_key}: {err}")
        return problems

    def usage(self, tiling) -> dict:
        used = self._bytes(tiling)
        return {"l1_bytes": used["L1"], "l1_fraction": used["L1"] / self.platform.L1, "l0c_bytes": used["L0C"]}

    def _bytes(self, tiling) -> dict:
        db = 4 if tiling.dtype == "float32" else 2
        bias = 2 if tiling.dtype == "float16" and tiling.convRunInfo.hasBias and not tiling.pointwise else 4
        return buffer_bytes(tiling.convApiTiling, tiling.convRunInfo, db, bias, tiling.pointwise)

    def run(self, point: dict[str, int]):
        x, w = self._operands
        return conv3d_v2_run(x, w, None, execute=False, check_races=False, engine=SIMULATION_ENGINE,
                             tiling_overrides=self.overrides(point) or None,
                             **self.problem.operator_arguments()).report

    def legal_space(self) -> LegalSpace:
        api = self.tiling.convApiTiling
        db = 4 if self.tiling.dtype == "float32" else 2
        k0 = C0_BYTES // db
        platform = self.platform
        k_l1 = [api.kAL1] + ([] if api.bl1BypassFlag else [api.kBL1])
        k_values = tuple(sorted({k for k in range(k0, min(k_l1) + 1, k0) if all(kl % k == 0 for kl in k_l1)}
                                & set(around(api.kL0, k0, (0.25, 0.5, 1, 2, 4, 8)))))
        n_top = api.nL0 if api.bl1BypassFlag else api.nBL1

        def room(name: str, p: dict) -> bool:
            bit = PB_L0A if name == "L0A" else PB_L0B
            space = platform.capacity(name) // (2 if api.pBufferFlag & bit else 1)
            return (p["mL0"] if name == "L0A" else p["nL0"]) * p["kL0"] * db <= space

        def buffers_fit(p: dict) -> bool:
            used = self._bytes(self.tiling_for({n: v for n, v in p.items() if v != getattr(api, n)}))
            return all(used[name] <= platform.capacity(name) for name in ("L1", "L0C", "BT"))

        knobs = [
            Knob("mL0", lambda p: around(api.mL0, CUBE), (
                Rule("mL0 <= mAL1 (own rule: an L0 block inside its L1 block)", lambda p: p["mL0"] <= api.mAL1),)),
            Knob("nL0", lambda p: around(api.nL0, CUBE), (
                Rule("nL0 <= nBL1 (own rule: an L0 block inside its L1 block)", lambda p: p["nL0"] <= n_top),)),
            Knob("kL0", lambda p: k_values, (
                Rule("Mmad k <= 4095", lambda p: p["kL0"] <= MMAD_MAX),
                Rule("L0A room (mL0*kL0)", lambda p: room("L0A", p)),
                Rule("L0B room (nL0*kL0)", lambda p: room("L0B", p)))),
            Knob("pBufferFlag", lambda p: tuple(sorted({api.pBufferFlag, api.pBufferFlag ^ PB_CL0})), (
                Rule("L1/L0C/BT capacity", buffers_fit),)),
            fixed("iterateMNOrder", (0, 1)),
        ]
        return LegalSpace(knobs, {k.name: int(getattr(api, k.name)) for k in knobs})
