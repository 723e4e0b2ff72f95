"""`conv3d_backprop_input_tiling`: the dx host tiling of the platform's architecture (npu_arch 2201 -> the A2 / A3
generator, 3510 -> the Ascend 950 arch35 generator)."""
from __future__ import annotations

from ascend_sim.machine.platform import Platform, get_platform
from tiling.conv3d_backprop_input.arch22.generator import conv3d_backprop_input_tiling as _arch22
from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35 as _arch35


def conv3d_backprop_input_tiling(dy_shape, filter_shape, dx_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                                 dilations=(1, 1, 1), groups=1, dtype="float16", platform="Ascend910B2",
                                 enable_hf32=False, overrides: dict | None = None, data_format="NCDHW",
                                 filter_format="NCDHW"):
    """The host tiling of Conv3DBackpropInputV2 for `platform`, picked by its npu_arch.

    2201: the A2 generator (shapes NCDHW, `overrides` as there); 3510: the arch35 generator (shapes in
    data_format / filter_format; overrides are not taken there). See the two generators for the arguments."""
    if isinstance(platform, (str, Platform)) and get_platform(platform).npu_arch == 3510:
        if overrides:
            raise ValueError(f"overrides={overrides!r}: the arch35 tiling takes no overrides")
        return _arch35(dy_shape, filter_shape, dx_shape, strides, pads, dilations, groups, dtype, platform,
                       enable_hf32, data_format, filter_format)
    if data_format != "NCDHW" or filter_format != "NCDHW":
        raise ValueError(f"data_format={data_format!r}, filter_format={filter_format!r}: the A2 tiling takes NCDHW "
                         "shapes")
    return _arch22(dy_shape, filter_shape, dx_shape, strides, pads, dilations, groups, dtype, platform, enable_hf32,
                   overrides)
