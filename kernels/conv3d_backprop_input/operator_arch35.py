"""The dx operator on the Ascend 950 (npu_arch 3510): the arch35 tiling and kernel, no host-side layout change.

The arch35 kernel reads out_backprop (NCDHW or NDHWC) and the filter (NCDHW, NDHWC or DHWCN) straight from GM and
writes y in data_format, so the arrays go up as they are. Steps: the operand checks and the 950 refusals (below),
the arch35 host tiling (tiling.conv3d_backprop_input.arch35, which checks the shapes and attributes by name);
with route "aclnn", aclnn's matmul shortcuts on the 950 (matmul_route.aclnn_matmul_mode with its regbase rules,
`matmul_route_950`: none for 8-bit data or formats other than NCDHW) run the 950 example matmul kernel
instead; otherwise the refusal of what the kernel port does not run yet (kernel.arch35 `unported_features`), then
one MIX AIC:AIV 1:2 launch on block_dim AI cores with the tiling's workspace. y starts as NaN so that an
unwritten element shows up.

Refused before launch, by name: mixed dtypes; a dtype other than float16, bfloat16, float32, hifloat8,
float8_e4m3fn; 8-bit unless out_backprop, filter and y are all NCDHW (the tiling's CheckDtypeFormatAttrs);
data_format NDHWC with groups > 1 (the operator documentation at ops-nn 041754a4: "not supported on the 950");
a tiling override of a field the tiling copies from the problem (validate.PROBLEM_FIELDS) or derives with others
(validate.DERIVED_FIELDS: split-K's segments, the weight pre-transpose, the cout per core), or one that breaks an arch35 rule (TilingValidationError, tiling/conv3d_backprop_input/arch35/validate.py).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
from ascend_sim.machine.tensor import GmAddr
from kernels.common.run import output_buffer, read_output
from kernels.common.size_guard import RunEstimate, conv_estimate, gemm_tiles
from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import (
    conv3d_backprop_input_v2_arch35, unported_features)
from kernels.conv3d_backprop_input.matmul_route import aclnn_matmul_mode, matmul_gemm
from kernels.conv3d_backprop_input.plan import needs_output_init
from tiling.common.problem import ConvProblem, check_format, check_hf32
from tiling.common.validation import Problem, ValidationReport
from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35
from tiling.conv3d_backprop_input.arch35.context_utils import parse_problem
from tiling.conv3d_backprop_input.arch35.inner_product import WORKSIZE
from tiling.conv3d_backprop_input.arch35.validate import DERIVED_FIELDS, PROBLEM_FIELDS

DTYPES_950 = {**DTYPES, **EIGHT_BIT_DTYPES}
DATA_FORMATS_950 = ("NCDHW", "NDHWC")
FILTER_FORMATS_950 = ("NCDHW", "NDHWC", "DHWCN")


def check_operands_950(filter, out_backprop) -> str:
    """The dtype name shared by both arrays; TypeError naming the array otherwise."""
    for name, value in (("filter", filter), ("out_backprop", out_backprop)):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(value).__name__}")
        if value.dtype not in DTYPES_950.values():
            raise TypeError(f"{name}.dtype={value.dtype} is not supported on the 950; allowed: {sorted(DTYPES_950)}")
    if filter.dtype != out_backprop.dtype:
        raise TypeError(f"filter.dtype={filter.dtype} and out_backprop.dtype={out_backprop.dtype} differ: "
                        f"out_backprop, filter and y must have one dtype (AnalyzeDtype)")
    return next(name for name, dt in DTYPES_950.items() if dt == filter.dtype)


def plan_arch35(input_size, filter_shape, out_backprop_shape, dtype: str, *, strides, pads, dilations, groups,
                data_format, filter_format, platform, enable_hf32, tiling_overrides=None, validate_overrides=True,
                refuse_unported=True):
    """The arch35 tiling of this problem, after the 950 refusals, with tiling_overrides applied by real field name
    (checked by the arch35 rules unless validate_overrides is False); raises before any launch, also (unless
    refuse_unported is False: `ascend-sim tiling` prints such a tiling) when the kernel port does not run it."""
    data_format = check_format("data_format", data_format, DATA_FORMATS_950)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS_950)
    if dtype in EIGHT_BIT_DTYPES and (data_format, filter_format) != ("NCDHW", "NCDHW"):
        raise ValueError(f"dtype={dtype} with data_format={data_format!r}, filter_format={filter_format!r}: 8-bit "
                         "needs out_backprop, filter and y all NCDHW (CheckDtypeFormatAttrs)")
    if data_format == "NDHWC" and groups != 1:
        raise ValueError(f"groups={groups} with data_format='NDHWC': not supported on the 950 (the operator's "
                         "documentation); use data_format='NCDHW'")
    tiling = conv3d_backprop_input_tiling_arch35(
        tuple(out_backprop_shape), tuple(filter_shape), tuple(input_size), strides, pads, dilations, groups, dtype,
        platform, enable_hf32, data_format, filter_format)
    # The real GetImplMode ignores the flag for 16- and 8-bit data (so does the tiling port); the operator refuses
    # it, as on the A2 and in the matmul: a request silently dropped would read as an HF32 result.
    check_hf32("enable_hf32", enable_hf32, dtype)
    if tiling_overrides:
        tiling = override_arch35(tiling, tiling_overrides, validate=validate_overrides)
    if (tiling.initOutputFlag != 1  # 0 (NO_INIT) and 2 (L1_INIT: the source runs no init pass for it)
            and needs_output_init(ncdhw_problem(input_size, filter_shape, out_backprop_shape, dtype, strides=strides,
                                                pads=pads, dilations=dilations, groups=groups, data_format=data_format,
                                                filter_format=filter_format, platform=platform,
                                                enable_hf32=enable_hf32))):
        # The kernel writes nothing where no kernel plane reaches (needComputeFlag_ false) and relies on the
        # init-output pass; the real kernel-split templates leave the flag 0 with stride_d > kernel_d (only the
        # inner-product template's GetLargeHkWkTilingMode sets it), which would leave whole dx planes unwritten.
        # An override of 0 or 2 is undone too, as on the A2 (plan.py): it left those elements unwritten.
        forced = tiling.with_overrides(initOutputFlag=1)
        whose = (f"the override of {tiling.initOutputFlag} is undone" if "initOutputFlag" in (tiling_overrides or {})
                 else f"the real {tiling.template} leaves it 0")
        tiling = forced.model_copy(update={"notes": [
            *forced.notes, f"initOutputFlag forced to 1: some dx elements receive no contribution and {whose} (the "
            "simulator's rule, as on the A2)"]})
    if refuse_unported:
        refuse_unported_tiling(tiling, filter_format)
    return tiling


def plan_dx_arch35(input_size, filter_shape, out_backprop_shape, dtype: str, *, route: str, tiling_overrides=None,
                   **attributes):
    """(tiling, the problem as aclnn's matmul rules read it, the matmul shortcut or None) of a dx on the 950, with
    every check made before a launch: the arch35 tiling's (always: it checks the arguments), the matmul route's
    refusal of tiling overrides, and, for the conv kernel, what the port does not run yet."""
    tiling = plan_arch35(input_size, filter_shape, out_backprop_shape, dtype, refuse_unported=False,
                         tiling_overrides=tiling_overrides, **attributes)
    routed, mode = (matmul_route_950(input_size, filter_shape, out_backprop_shape, dtype, **attributes)
                    if route == "aclnn" else (None, None))
    if mode is None:
        refuse_unported_tiling(tiling, attributes["filter_format"])
    elif tiling_overrides:
        raise ValueError(f"tiling_overrides set fields of the conv kernel's tiling, but with route='aclnn' this "
                         f"case runs as a matmul ({mode}); pass route='v2' to run the conv kernel")
    return tiling, routed, mode


def refuse_unported_tiling(tiling, filter_format: str) -> None:
    """ValueError naming what the tiling asks of the kernel that the port does not run yet."""
    missing = unported_features(tiling.tiling_key, tiling, filter_format)
    if missing:
        raise ValueError(f"the arch35 tiling chose {tiling.template} (tiling key {tiling.tiling_key}) with "
                         f"{'; '.join(missing)}: not ported to the simulated arch35 kernel yet")


def matmul_route_950(input_size, filter_shape, out_backprop_shape, dtype: str, *, strides, pads, dilations,
                     groups, data_format, filter_format, platform,
                     enable_hf32) -> tuple[ConvProblem | None, str | None]:
    """(the problem as aclnn's matmul rules read it (a ConvProblem, NCDHW), the matmul shortcut aclnn takes for
    it on the 950 or None). No shortcut whatever the shapes for 8-bit data (GetConv3DBp2MmMode returns
    CONV3D_BP_NO_MM for HIFLOAT8 / FLOAT8_E4M3FN on regbase, "matmul暂时不支持8bit", and IsW1B1FmNDxTransToMm
    refuses them too) or data or filter not stored NCDHW; else matmul_route.aclnn_matmul_mode with its regbase
    rules. Call it after the arch35 tiling has checked the arguments."""
    if dtype in EIGHT_BIT_DTYPES or (data_format, filter_format) != ("NCDHW", "NCDHW"):
        return None, None
    routed = ncdhw_problem(input_size, filter_shape, out_backprop_shape, dtype, strides=strides, pads=pads,
                           dilations=dilations, groups=groups, data_format=data_format, filter_format=filter_format,
                           platform=platform, enable_hf32=enable_hf32)
    return routed, aclnn_matmul_mode(routed, data_format, filter_format, routed.dilations_given)


def ncdhw_problem(input_size, filter_shape, out_backprop_shape, dtype: str, *, strides, pads, dilations, groups,
                  data_format, filter_format, platform, enable_hf32) -> ConvProblem:
    """The problem with NCDHW shapes whatever the arrays' formats, dilation 1 along an axis whose kernel is 1 (as
    arguments.check_problem). Call it after the arch35 tiling has checked the arguments."""
    p = parse_problem(tuple(out_backprop_shape), tuple(filter_shape), tuple(input_size), strides, pads, dilations,
                      groups, dtype, platform, enable_hf32, data_format, filter_format)
    dy, weight, dx = (tuple(axes[a] for a in "NCDHW") for axes in (p.dy, p.filt, p.dx))
    effective = tuple(d if k > 1 else 1 for d, k in zip(p.dilations, weight[2:]))
    return ConvProblem(x_shape=dx, filter_shape=weight, y_shape=dy, strides=p.strides, pads=p.pads,
                       dilations=effective, groups=p.groups, dtype=dtype, platform=p.platform,
                       enable_hf32=enable_hf32, data_format=data_format, filter_format=filter_format,
                       dilations_given=p.dilations)


def override_arch35(tiling, overrides: dict, *, validate: bool = True):
    """The tiling with some fields changed by real name, nothing re-derived except block_dim, which follows coreNum
    as SetTilingData sets it. A field copied from the problem is refused (TilingValidationError); the result
    is checked by the arch35 rules (TilingValidationError naming each broken one) unless validate is False."""
    copied = [Problem(name, "copied by the arch35 tiling from the problem, not a knob: change the problem's "
                            "shapes or attributes instead", overrides[name])
              for name in overrides if name in PROBLEM_FIELDS]
    copied += [Problem(name, "derived by the arch35 tiling with the fields it goes with (split-K's segments and "
                             "workspace, the weight pre-transpose's, the cout per core), not a knob", overrides[name])
               for name in overrides if name in DERIVED_FIELDS]
    ValidationReport(tiling.platform.name, copied).raise_if_invalid(tiling, overrides)
    changes = dict(overrides)
    if "coreNum" in changes:
        changes["block_dim"] = changes["coreNum"]
    return tiling.with_overrides(validate=validate, **changes)


# what makes an arch35 run need less (size_guard.REMEDIES); not record=False, which estimate_arch35 does not count
ARCH35_REMEDIES = ("execute", "check_races")


def estimate_arch35(tiling, itemsize: int, *, execute: bool = True, check_races: bool = True) -> RunEstimate:
    """What launch_arch35 of this tiling takes (kernels/common/size_guard.py), nothing allocated: out_backprop,
    filter and y in GM as given (no C0 padding) and the tiling's workspace; the records of dx's GEMM per group
    (M = batch*di*hi*wi, N = cinG, K = coutG*dk*hk*wk) in the tiling's baseM/baseN/baseK tiles on block_dim AIC
    (each with its two AIVs). Every record is counted, also with record=False (an upper bound: that launch
    drops each record once scheduled, but how many wait for another core at once is not modelled here)."""
    t = tiling
    taps = t.dk * t.hk * t.wk
    tiles = gemm_tiles(t.batch * t.di * t.hi * t.wi, t.cinG, t.coutG * taps, t.baseM, t.baseN, t.baseK, t.group)
    inputs = (t.batch * t.cout * t.dout * t.ho * t.wo * itemsize, t.cout * t.cinG * taps * itemsize)
    y = t.batch * t.cin * t.di * t.hi * t.wi * itemsize
    # the race checker shadows what the kernel writes: y, and the workspace where the kernel has a part of it (beyond
    # the system's WORKSIZE); 1-byte granules on the 950, a write and a read shadow, a third for split-K's atomic adds
    written = y + (t.workspace_size if t.workspace_size > WORKSIZE else 0)
    estimate = conv_estimate(inputs, y, workspace=t.workspace_size, tiles=tiles, cores=t.block_dim, execute=execute,
                             check_races=check_races, shadow_per_byte=12 if t.enableSplitK else 8, shadowed=written)
    if not check_races:
        return estimate
    # and per AI core the shadows of the on-chip buffers the AIC shares with its AIVs (passes/races.py): an int32
    # write and read shadow per byte of the AIC's L1 (kept by the AIC) and of AIV 0's UB (kept by AIV 0)
    shared = t.block_dim * 8 * (t.platform.L1 + t.platform.UB)
    return dataclasses.replace(estimate, race_bytes=estimate.race_bytes + shared)


def estimate_dx_arch35(tiling, routed, mode, itemsize: int, *, execute: bool = True,
                       check_races: bool = True) -> RunEstimate:
    """What the 950 dx run plan_dx_arch35 planned takes: the arch35 kernel's launch (estimate_arch35), or on a
    matmul shortcut the GEMM aclnn runs, as run_matmul guards it (estimate_matmul)."""
    if mode is None:
        return estimate_arch35(tiling, itemsize, execute=execute, check_races=check_races)
    from kernels.matmul import MatmulTiling
    from kernels.matmul.operator import default_block_dim, estimate_matmul
    batch, m, n_cols, k = matmul_gemm(routed, mode)
    mm = MatmulTiling.for_shape(m, n_cols, k, routed.dtype, batch=batch, shared_b=batch > 1,
                                hf32=routed.enable_hf32 and routed.dtype == "float32")
    return estimate_matmul(mm, default_block_dim(mm, routed.platform.aic_cores), execute=execute,
                           check_races=check_races)


def launch_arch35(tiling, filter: np.ndarray, out_backprop: np.ndarray, input_size, *, platform, data_format,
                  filter_format, execute=True, check_races=True, poison_output=True, hooks=None, engine="auto",
                  record=True):
    """(y in data_format or None, report): one MIX AIC:AIV 1:2 launch of the arch35 kernel with `tiling`;
    record=False keeps no instruction records (the memory of a long run stays flat)."""
    dtype = filter.dtype
    chip = Chip(platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine, record=record)
    # a timing-only chip holds size-only allocations: the operands (stand-ins there) are never copied
    w_gm = chip.gm.place("filter", filter.shape, dtype, lambda: np.ascontiguousarray(filter))
    dy_gm = chip.gm.place("out_backprop", out_backprop.shape, dtype, lambda: np.ascontiguousarray(out_backprop))
    y_shape = tuple(input_size)
    y_gm = output_buffer(chip, "y", y_shape, dtype, poison_output)
    workspace = GmAddr(chip.gm.alloc("workspace", max(tiling.workspace_size, 32)))
    report = chip.launch(conv3d_backprop_input_v2_arch35, tiling.block_dim, None, GmAddr(w_gm), GmAddr(dy_gm),
                         GmAddr(y_gm), workspace, tiling, tiling_key=tiling.tiling_key, dtype=dtype,
                         filterFormat=filter_format, dedyFormat=data_format, yFormat=data_format,
                         kernel_type="MIX_AIC_1_2")
    return read_output(chip, y_gm, y_shape, dtype), report
