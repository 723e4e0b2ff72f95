"""conv3d_backprop_input_tiling_arch35: the registry walk over the six arch35 templates (TilingRegistry).

REGISTER_TILING_TEMPLATE priorities (lowest first; the first template whose IsCapable says yes answers, and a
failure after that fails the whole tiling, as `DoTilingImpl` does): SmallKernel 96, KernelSplitFullLoad 97,
KernelSplit 98, SmallShape 99, FullLoad 100, InnerProduct 101.
"""
from __future__ import annotations

from tiling.conv3d_backprop_input.arch35.context_utils import parse_problem
from tiling.conv3d_backprop_input.arch35.full_load import FullLoadTiling
from tiling.conv3d_backprop_input.arch35.inner_product import InnerProductTiling, TemplateNotCapable
from tiling.conv3d_backprop_input.arch35.kernel_split import KernelSplitTiling
from tiling.conv3d_backprop_input.arch35.kernel_split_full_load import KernelSplitFullLoadTiling
from tiling.conv3d_backprop_input.arch35.model import Conv3DBackpropInputArch35TilingData
from tiling.conv3d_backprop_input.arch35.small_kernel import SmallKernelTiling
from tiling.conv3d_backprop_input.arch35.small_shape import SmallShapeTiling

TEMPLATES = (SmallKernelTiling, KernelSplitFullLoadTiling, KernelSplitTiling, SmallShapeTiling, FullLoadTiling,
             InnerProductTiling)  # ascending REGISTER_TILING_TEMPLATE priority


def conv3d_backprop_input_tiling_arch35(dy_shape, filter_shape, dx_shape, strides=(1, 1, 1),
                                        pads=(0, 0, 0, 0, 0, 0), dilations=(1, 1, 1), groups=1, dtype="float16",
                                        platform="Ascend950PR_9599", enable_hf32=False, data_format="NCDHW",
                                        filter_format="NCDHW") -> Conv3DBackpropInputArch35TilingData:
    """The Ascend 950 (arch35) host tiling of Conv3DBackpropInputV2, as the real generator computes it.

    dy_shape and dx_shape are in data_format (NCDHW or NDHWC), filter_shape in filter_format (NCDHW, NDHWC or
    DHWCN); strides and dilations (D, H, W) or the 5-value attribute in data_format order; pads (front, back, top,
    bottom, left, right); dtype float16, bfloat16, float32, hifloat8 or float8_e4m3fn (out_backprop, filter and y
    alike). Core count and buffer sizes come from the platform (npu_arch must be 3510).
    Raises TypeError/ValueError naming the parameter for bad input, TilingInfeasible when nothing fits.
    """
    problem = parse_problem(dy_shape, filter_shape, dx_shape, strides, pads, dilations, groups, dtype, platform,
                            enable_hf32, data_format, filter_format)
    for template in TEMPLATES:
        tiling = template(problem)
        try:
            tiling.do_tiling()
        except TemplateNotCapable:
            continue
        return Conv3DBackpropInputArch35TilingData(**tiling.data, tiling_key=tiling.get_tiling_key(),
                                                   block_dim=tiling.data["coreNum"],
                                                   workspace_size=tiling.workspace_size, template=tiling.NAME,
                                                   dtype=problem.dtype, platform=problem.platform)
    raise AssertionError("the inner-product template is the catch-all")  # pragma: no cover
