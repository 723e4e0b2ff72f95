"""The conv kernel's tiling for a problem given by flags, planned the way the dx operator plans it.

conv3d_backprop_input_v2_run with route="v2" checks its arguments (check_arguments), rewrites the problem into the
kernel's envelope (normalise_problem), tiles it (tiling_for_args), applies the overrides and forces
initOutputFlag where some dx element gets no contribution (needs_output_init). The same steps run here on the
shapes alone, with zero-stride arrays standing in for dy and the filter, so that `ascend-sim tiling` prints the
tiling `ascend-sim conv3d-dx --route v2` runs, and conv3d-dx can refuse a bad problem before it makes data.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.dtypes import DTYPES
from tiling import check_conv3d_dx_args, tiling_for_args
from tiling.model import Conv3DBackpropInputV2TilingData

from ..conv3d_backprop_input.matmul_route import aclnn_matmul_mode
from ..conv3d_backprop_input.operator import Problem, check_arguments, needs_output_init, normalise_problem
from .conv_problem import ConvProblem


@dataclass
class ConvKernelTiling:
    tiling: Conv3DBackpropInputV2TilingData
    notes: list[str] = field(default_factory=list)  # what the operator would say about the rewrite and the flag


def checked_problem(p: ConvProblem) -> Problem:
    """The operator's own argument check on the problem's shapes (no data made)."""
    zero = np.zeros((), DTYPES[p.dtype])
    return check_arguments(p.dx_shape, np.broadcast_to(zero, p.filter_shape), np.broadcast_to(zero, p.dy_shape),
                           (1, 1, *p.stride), p.pad, (1, 1, *p.dilation), p.groups, "NCDHW", "NCDHW", p.platform,
                           p.hf32)


def aclnn_route(p: ConvProblem) -> str | None:
    """The matmul shortcut route="aclnn" takes for this problem (None: it runs the conv kernel)."""
    user = checked_problem(p)
    return aclnn_matmul_mode(user, "NCDHW", "NCDHW", user.dilations_given)


def conv_kernel_tiling(p: ConvProblem, overrides: dict[str, int] | None = None) -> ConvKernelTiling:
    """The tiling route="v2" launches the conv kernel with. Overrides are applied without the validator, so that
    a caller can show what they break (tiling.validate); the operator itself refuses such a tiling."""
    problem, rewrite = normalise_problem(checked_problem(p))
    args = check_conv3d_dx_args(problem.dy.shape, problem.weight.shape, problem.dx_shape, problem.strides,
                                problem.pads, problem.dilations, problem.groups, problem.dtype, problem.platform,
                                problem.enable_hf32)
    tiling = tiling_for_args(args)
    notes = rewrite.describe()
    if overrides:
        tiling = tiling.with_overrides(validate=False, **overrides)
    if tiling.conv3DDxTiling.initOutputFlag != 1 and needs_output_init(problem):
        tiling = tiling.with_overrides(validate=False, initOutputFlag=1)
        notes.append("initOutputFlag forced to 1: some dx elements receive no contribution")
    return ConvKernelTiling(tiling, notes)
