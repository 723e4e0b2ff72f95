"""Host-side tiling generators: shapes + platform -> validated tiling data.

Conv3DBackpropInputV2: `conv3d_backprop_input_tiling(...)` picks the generator by the platform's npu_arch (3510, the
Ascend 950: `Conv3DBackpropInputArch35TilingData`, docs/conv3d_backprop_input_arch35_tiling.md). On Atlas A2 (arch22)
it returns a
`Conv3DBackpropInputV2TilingData` (params + conv3DDxTiling by their real field names, the tiling key, the
312-byte blob); `validate(tiling, platform)` explains what does not fit. See docs/tiling.md.

Conv3DBackpropFilterV2 (dw): `conv3d_backprop_filter_tiling(...)` returns a `Conv3DBackpropFilterV2TilingData`
(280-byte blob); `validate_dw(tiling)` checks it. See docs/conv3d_backprop_filter_tiling.md.

Conv3DV2 (forward convolution): `conv3d_v2_tiling(...)` returns a `Conv3DV2TilingData` (608-byte blob).
See docs/conv3d_v2_tiling.md.
"""
from tiling.common.problem import ConvProblem
from tiling.common.validation import Problem, TilingInfeasible, TilingValidationError, ValidationReport
from tiling.conv3d_backprop_filter import (Conv3DBackpropFilterV2Params, Conv3DBackpropFilterV2TilingData,
                                           TConv3DDwBasicBlockTiling, TConv3DDwTiling, check_conv3d_dw_args,
                                           conv3d_backprop_filter_tiling, validate_dw)
from tiling.conv3d_backprop_input.arch22.checks import check_conv3d_dx_args
from tiling.conv3d_backprop_input.arch22.generator import tiling_for_args
from tiling.conv3d_backprop_input.arch22.model import (BLOB_SIZE, Conv3DBackpropInputV2Params,
                                                       Conv3DBackpropInputV2TilingData, TConv3DInputV2Tiling)
from tiling.conv3d_backprop_input.arch22.validate import validate
from tiling.conv3d_backprop_input.dispatch import conv3d_backprop_input_tiling
from tiling.conv3d_v2 import Conv3DV2TilingData, conv3d_v2_tiling

__all__ = [
    "BLOB_SIZE", "Conv3DBackpropFilterV2Params", "ConvProblem", "Conv3DBackpropFilterV2TilingData",
    "Conv3DBackpropInputV2Params", "Conv3DBackpropInputV2TilingData", "Conv3DV2TilingData", "Problem",
    "TConv3DDwBasicBlockTiling", "TConv3DDwTiling", "TConv3DInputV2Tiling", "TilingInfeasible",
    "TilingValidationError", "ValidationReport",
    "check_conv3d_dw_args", "check_conv3d_dx_args", "conv3d_backprop_filter_tiling", "conv3d_backprop_input_tiling",
    "conv3d_v2_tiling", "tiling_for_args", "validate", "validate_dw",
]
