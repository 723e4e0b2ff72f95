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

Each name is imported on first use (ascend_sim/machine/lazy_exports.py): a dx run imports no dw or forward tiling.
"""
from ascend_sim.machine.lazy_exports import lazy_exports

_EXPORTS = {
    "ConvProblem": "tiling.common.problem",
    "check_conv3d_dx_args": "tiling.conv3d_backprop_input.arch22.checks",
    "Problem": "tiling.common.validation",
    "TilingInfeasible": "tiling.common.validation",
    "TilingValidationError": "tiling.common.validation",
    "ValidationReport": "tiling.common.validation",
    "Conv3DBackpropFilterV2Params": "tiling.conv3d_backprop_filter",
    "Conv3DBackpropFilterV2TilingData": "tiling.conv3d_backprop_filter",
    "TConv3DDwBasicBlockTiling": "tiling.conv3d_backprop_filter",
    "TConv3DDwTiling": "tiling.conv3d_backprop_filter",
    "check_conv3d_dw_args": "tiling.conv3d_backprop_filter",
    "conv3d_backprop_filter_tiling": "tiling.conv3d_backprop_filter",
    "validate_dw": "tiling.conv3d_backprop_filter",
    "tiling_for_args": "tiling.conv3d_backprop_input.arch22.generator",
    "BLOB_SIZE": "tiling.conv3d_backprop_input.arch22.model",
    "Conv3DBackpropInputV2Params": "tiling.conv3d_backprop_input.arch22.model",
    "Conv3DBackpropInputV2TilingData": "tiling.conv3d_backprop_input.arch22.model",
    "TConv3DInputV2Tiling": "tiling.conv3d_backprop_input.arch22.model",
    "validate": "tiling.conv3d_backprop_input.arch22.validate",
    "conv3d_backprop_input_tiling": "tiling.conv3d_backprop_input.dispatch",
    "Conv3DV2TilingData": "tiling.conv3d_v2",
    "conv3d_v2_tiling": "tiling.conv3d_v2",
}
lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
