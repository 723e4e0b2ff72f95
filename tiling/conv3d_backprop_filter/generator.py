"""conv3d_backprop_filter_tiling: shapes + platform -> the arch22 Conv3DBackpropFilterV2 (dw) tiling.

Template choice as in the real registry: the basic-block template (priority 0) when its IsCapable holds, the base
template (priority 1) otherwise. Where the real code asks the closed TBE tiling, tbe_rule.py answers and the
tiling's notes say which fields that decided. Every answer is checked with `validate`.
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import overrides_mapping
from tiling.common.problem import ConvProblem
from tiling.common.tbe_rule import TbeTiling
from tiling.common.validation import TilingInfeasible
from tiling.conv3d_backprop_filter.base import BaseTemplate, TilingValue
from tiling.conv3d_backprop_filter.basic_block import BasicBlockTiling, is_capable
from tiling.conv3d_backprop_filter.checks import check_conv3d_dw_args
from tiling.conv3d_backprop_filter.keys import TPL_SPLIT_DFL
from tiling.conv3d_backprop_filter.model import (Conv3DBackpropFilterV2Params, Conv3DBackpropFilterV2TilingData,
                                                 TConv3DDwBasicBlockTiling, TConv3DDwTiling)
from tiling.conv3d_backprop_filter.run_info import RunInfo, build_run_info, shape_attr_fields
from tiling.conv3d_backprop_filter.tbe_rule import TbeDims, dims_only, own_block_candidates, own_core_dims
from tiling.conv3d_backprop_filter.validate import validate

# The fields the basic-block template keeps from InitTilingValue's TBE branch (the vectors' tbe_dependent_fields).
BASIC_BLOCK_TBE_FIELDS = ("batchDim", "groupDim", "mDim", "kDim", "nDim", "singleCoreBatch")
SEPARATE_DK_TBE_FIELDS = ("dkDim", "singleCoreDk", "singleCoreGroup")


def _assemble(run: RunInfo, args: ConvProblem, value: TilingValue, *, key: int, template: str, notes: list[str],
              dw_overrides: dict | None = None, basic_block: dict | None = None) -> Conv3DBackpropFilterV2TilingData:
    params, dwt = shape_attr_fields(run, args.platform.L1)
    return Conv3DBackpropFilterV2TilingData(
        params=Conv3DBackpropFilterV2Params(**params, **value.params()),
        dwTiling=TConv3DDwTiling(**dwt, **{**value.tiling_fields(), **(dw_overrides or {})}),
        basicBlockTiling=TConv3DDwBasicBlockTiling(**(basic_block or {})),
        tiling_key=key, dtype=args.dtype, platform=args.platform, template=template, notes=notes)


def _basic_block(run: RunInfo, args: ConvProblem, dims: TbeDims, tbe: TbeTiling | None) -> Conv3DBackpropFilterV2TilingData:
    base = BaseTemplate(run, args.platform, tbe or dims_only(dims))
    value = base.init_tiling_value()  # GetShapeAttrsInfo runs it before the template's own tiling
    notes = []
    if base.used_tbe and tbe is not None:
        notes.append("TBE answer given by the caller")
    elif base.used_tbe:
        kept = BASIC_BLOCK_TBE_FIELDS + (SEPARATE_DK_TBE_FIELDS if run.real_g > 1 or run.dilation_d > 1 else ())
        notes.append(f"own TBE rule (tbe_rule.py) for {', '.join(kept)}: the real basic-block template keeps these "
                     "from the closed TBE tiling; the basic-block kernels split work by basicBlockTiling")
    else:
        notes.append(f"params and singleCoreBatch from the real open rule ({base.source})")
    block = BasicBlockTiling(run, args.platform)
    dwt, bb = block.run_tiling()
    return _assemble(run, args, value, key=block.coreBindDirection, template="basic_block", notes=notes,
                     dw_overrides=dwt, basic_block=bb)


def _base(run: RunInfo, args: ConvProblem, dims: TbeDims, tbe: TbeTiling | None) -> Conv3DBackpropFilterV2TilingData:
    rejected = None
    proposals = [tbe] if tbe is not None else own_block_candidates(run, args.platform, dims)
    for proposal in proposals:
        base = BaseTemplate(run, args.platform, proposal)
        value = base.set_dw_tiling_from_tbe_tiling()
        origin = "given TBE answer" if tbe is not None else "own TBE rule (tbe_rule.py)"
        notes = [f"{origin} for the core split and blocks: {proposal}"] if base.used_tbe else \
            [f"values from the real open code ({base.source})"]
        result = _assemble(run, args, value, key=TPL_SPLIT_DFL, template="base", notes=notes)
        report = validate(result)
        if report.ok:
            return result
        if not base.used_tbe:  # the real open answer does not depend on the proposal
            raise TilingInfeasible(f"the real base template's answer ({base.source}) does not fit "
                                   f"{args.platform.name}:\n{report}")
        rejected = rejected or report
    raise TilingInfeasible(f"no legal base-template tiling for this problem on {args.platform.name}; the first "
                           f"proposal was refused:\n{rejected}")


def tiling_for_args(args: ConvProblem, tbe: TbeTiling | None = None) -> Conv3DBackpropFilterV2TilingData:
    """The tiling of an already checked problem (see `check_conv3d_dw_args`).

    `tbe` replaces this project's TBE rule with a given answer of the closed TBE tiling (for example one read back
    from a real tiling), which both templates then convert as the real code does.
    """
    run = build_run_info(args)
    dims = own_core_dims(run, args.platform.aic_cores)
    if tbe is not None:
        dims = TbeDims(tbe.batch_dim, tbe.d_dim, tbe.group_dim, tbe.m_dim, tbe.n_dim, tbe.k_dim)
    if is_capable(run):
        result = _basic_block(run, args, dims, tbe)
        report = validate(result)
        if report.ok:
            return result
        if run.deterministic:  # the base template has no deterministic mode to fall back on
            raise TilingInfeasible(f"the real basic-block template's answer does not fit {args.platform.name}:\n"
                                   f"{report}")
        fallback = _base(run, args, dims, tbe)
        fallback.notes.insert(0, "the real basic-block template's answer does not fit the kernel ("
                                 + "; ".join(str(p) for p in report.problems) + "): this project falls back to the "
                                 "base template (tiling key 0), which the real registry would not")
        return fallback
    return _base(run, args, dims, tbe)


def conv3d_backprop_filter_tiling(x_shape, filter_shape, dy_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                                  dilations=(1, 1, 1), groups=1, dtype="bfloat16",
                                  platform: str | Platform = "Ascend910B2", enable_hf32=False, deterministic=False,
                                  tiling_overrides: dict | None = None) -> Conv3DBackpropFilterV2TilingData:
    """The A2 host tiling of Conv3DBackpropFilterV2, as the real generator computes it.

    x_shape (N, Cin, Di, Hi, Wi), filter_shape (Cout, Cin/groups, kD, kH, kW), dy_shape (N, Cout, Do, Ho, Wo);
    strides and dilations (D, H, W); pads (front, back, top, bottom, left, right); dtype "float16", "bfloat16"
    or "float32"; platform a preset name or a Platform. `tiling_overrides` replaces fields of the answer (by
    real name) without re-deriving anything; the result is validated and refused if the kernel cannot run it.
    Raises TypeError/ValueError for bad arguments and TilingInfeasible (a ValueError) when nothing fits.
    """
    args = check_conv3d_dw_args(x_shape, filter_shape, dy_shape, strides, pads, dilations, groups, dtype, platform,
                                enable_hf32, deterministic)
    tiling_overrides = overrides_mapping(tiling_overrides)
    result = tiling_for_args(args)
    if tiling_overrides:
        result = result.with_overrides(**tiling_overrides)
    return result
