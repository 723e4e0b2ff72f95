"""conv3d_backprop_input_tiling: shapes + platform -> the arch22 Conv3DBackpropInputV2 tiling.

Template choice as in the real registry: the basic-block template (priority 0) takes fp16/bf16 problems with
real_g == 1 that are not one of the two kernel-split shapes; the base template (priority 1) takes the rest.
Every answer is checked with `validate`; where the faithful answer would not fit a (non-A2) platform, a marked
fallback is used and recorded in `notes`.
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform
from tiling.common.problem import ConvProblem
from tiling.common.validation import TilingInfeasible
from tiling.conv3d_backprop_input.arch22.base import BaseTiling, knowledge_lookup
from tiling.conv3d_backprop_input.arch22.basic_block import BasicBlockInfeasible, BasicBlockTiling
from tiling.conv3d_backprop_input.arch22.checks import check_conv3d_dx_args
from tiling.conv3d_backprop_input.arch22.common import RunInfo, TilingValue, build_run_info, shape_fields
from tiling.conv3d_backprop_input.arch22.model import (Conv3DBackpropInputV2Params, Conv3DBackpropInputV2TilingData,
                                                       TConv3DInputV2Tiling)
from tiling.conv3d_backprop_input.arch22.validate import ValidationReport, check_fields, validate

KERNEL_SPLIT_CORES = (20, 24)  # the base template only marks kernel split on 910B3 / 910B2 core counts
# (CheckKernelSplitEnable: two hard-wired video-GPT Conv3DTransposeV2 shapes; the flag is kept as the real host sets
# it, but validate() refuses it: the Conv3DBackpropInputV2 entry runs no driver with it, see validate.KERNEL_SPLIT_RULE)


def _assemble(run: RunInfo, value: TilingValue, args: ConvProblem, *, template: str, use_basic_block: bool,
              kernel_split: bool, notes: list[str]) -> Conv3DBackpropInputV2TilingData:
    return Conv3DBackpropInputV2TilingData(
        params=Conv3DBackpropInputV2Params(**value.params()),
        conv3DDxTiling=TConv3DInputV2Tiling(**shape_fields(run), **value.tiling_fields()),
        loadB2Condition=run.load_b2_condition(value.baseK),
        enableKernelSplit=kernel_split,
        useBasicBlock=use_basic_block,
        dtype=args.dtype,
        platform=args.platform,
        template=template,
        notes=notes,
    )


def _problems(run: RunInfo, value: TilingValue, platform: Platform, basic_block: bool) -> list:
    fields = {**shape_fields(run), **value.params(), **value.tiling_fields()}
    return check_fields(fields, run.dtype_bytes, platform, basic_block)


def tiling_for_args(args: ConvProblem) -> Conv3DBackpropInputV2TilingData:
    """The tiling of an already checked problem (see `checks.check_conv3d_dx_args`)."""
    run = build_run_info(args)
    platform = args.platform
    notes = list(run.notes)
    if run.real_g == 1 and run.dtype_bytes == 2 and not run.kernel_split_shape():
        try:
            block = BasicBlockTiling(run, platform)
            value = block.run_tiling()
            notes.extend(block.notes)
        except BasicBlockInfeasible as err:
            raise TilingInfeasible(str(err)) from None
        result = _assemble(run, value, args, template="basic_block", use_basic_block=True, kernel_split=False,
                           notes=notes)
    else:
        kernel_split = platform.aic_cores in KERNEL_SPLIT_CORES and run.kernel_split_shape()
        base = BaseTiling(run, platform)
        use_map = True
        hit = knowledge_lookup(run, platform.aic_cores)
        if hit is not None and _problems(run, hit[0], platform, basic_block=hit[2]):
            notes.append(f"knowledge map {hit[1]} entry does not fit {platform.name}; computed instead")
            use_map = False
        value, how = base.run_tiling(use_knowledge_map=use_map)
        notes.extend(base.notes)
        use_basic_block = how.startswith("knowledge_map") and hit is not None and hit[2]
        template = "knowledge_map" if how.startswith("knowledge_map") else how
        if kernel_split:
            notes.append(f"enableKernelSplit=1: the real host's flag for this hard-wired shape on {platform.aic_cores}"
                         "-core chips; the Conv3DBackpropInputV2 entry computes nothing with it (validate() refuses "
                         "it), so the dx operator runs this tiling with enableKernelSplit=0")
        result = _assemble(run, value, args, template=template, use_basic_block=use_basic_block,
                           kernel_split=kernel_split, notes=notes)
    report = validate(result)
    if result.enableKernelSplit:
        # The real host's answer, kept as it is; validate() refuses the flag for this op's kernel entry and the dx
        # operator's plan clears it. Every other rule must hold.
        report = ValidationReport(report.platform, [p for p in report.problems if p.field != "enableKernelSplit"])
    if not report.ok:
        raise TilingInfeasible(f"no legal tiling for this problem on {platform.name}:\n{report}")
    return result


def conv3d_backprop_input_tiling(dy_shape, filter_shape, dx_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                                 dilations=(1, 1, 1), groups=1, dtype="float16", platform="Ascend910B2",
                                 enable_hf32=False, overrides: dict | None = None) -> Conv3DBackpropInputV2TilingData:
    """The A2 host tiling of Conv3DBackpropInputV2, as the real generator computes it.

    dy_shape (N, Cout, Do, Ho, Wo), filter_shape (Cout, Cin/groups, kD, kH, kW), dx_shape (N, Cin, Di, Hi, Wi);
    strides and dilations (D, H, W); pads (front, back, top, bottom, left, right); dtype "float16", "bfloat16"
    or "float32"; platform a preset name or a Platform. `overrides` replaces fields of the answer (by real
    name) without re-deriving anything, for experiments; check such a tiling with `tiling.validate`.
    For the two hard-wired kernel-split shapes on 20/24-core chips the answer sets enableKernelSplit, as the
    real host's does; validate() refuses that flag (the Conv3DBackpropInputV2 entry runs no driver with it) and
    the dx operator runs the tiling with it cleared.
    Raises TypeError/ValueError for bad arguments and TilingInfeasible (a ValueError) when nothing fits.
    """
    args = check_conv3d_dx_args(dy_shape, filter_shape, dx_shape, strides, pads, dilations, groups, dtype, platform,
                                enable_hf32)
    result = tiling_for_args(args)
    if overrides:
        result = result.with_overrides(**overrides)
    return result
