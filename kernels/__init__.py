"""Device kernels written against ascend_sim's Ascend C API, plus their host operators.

Each name is imported on first use (ascend_sim/machine/lazy_exports.py): `from kernels import conv3d_v2` imports the
forward operator alone."""
from ascend_sim.machine.lazy_exports import lazy_exports

_EXPORTS = {
    "Run": "kernels.common.run",
    "MemoryLimitError": "kernels.common.size_guard",
    "conv3d_backprop_filter_v2": "kernels.conv3d_backprop_filter.operator",
    "conv3d_backprop_filter_v2_run": "kernels.conv3d_backprop_filter.operator",
    "conv3d_backprop_input_v2": "kernels.conv3d_backprop_input.operator",
    "conv3d_backprop_input_v2_run": "kernels.conv3d_backprop_input.operator",
    "conv3d_v2": "kernels.conv3d_v2.operator",
    "conv3d_v2_run": "kernels.conv3d_v2.operator",
    "convolution_backward": "kernels.convolution_backward.operator",
    "convolution_backward_run": "kernels.convolution_backward.operator",
}
lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
