"""Device kernels written against ascend_sim's Ascend C API, plus their host operators."""
from kernels.common.run import Run
from kernels.conv3d_backprop_filter import conv3d_backprop_filter_v2, conv3d_backprop_filter_v2_run
from kernels.conv3d_backprop_input import conv3d_backprop_input_v2, conv3d_backprop_input_v2_run
from kernels.conv3d_v2 import conv3d_v2, conv3d_v2_run
from kernels.convolution_backward import convolution_backward, convolution_backward_run

__all__ = ["Run", "conv3d_backprop_filter_v2", "conv3d_backprop_filter_v2_run", "conv3d_backprop_input_v2",
           "conv3d_backprop_input_v2_run", "conv3d_v2", "conv3d_v2_run", "convolution_backward",
           "convolution_backward_run"]
