"""The forward operator's argument checks: arrays, formats and the 5-value attributes in data_format order, then
the Conv3DV2 ranges (tiling.conv3d_v2.check_conv3d_v2_args) on the NCDHW problem. Every error names the parameter,
its value and what is allowed; nothing is launched before they pass."""
from __future__ import annotations

import numpy as np

from ascend_sim.machine.formats import DATA_FORMATS, FILTER_FORMATS, filter_shape_to_ncdhw, filter_to_ncdhw
from kernels.common.operands import check_array, dhw_attribute
from tiling.common.problem import ConvProblem, check_format
from tiling.conv3d_v2 import check_conv3d_v2_args


def check_conv3d_v2_operands(x, filter, bias, strides, pads, dilations, groups, data_format, filter_format,
                             platform, enable_hf32) -> ConvProblem:
    """Everything checked before launch; returns the NCDHW problem (with its output shape)."""
    data_format = check_format("data_format", data_format, DATA_FORMATS)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS)
    x = check_array("x", x, 5)
    w = check_array("filter", filter, 5)
    if w.dtype != x.dtype:
        raise TypeError(f"filter.dtype={w.dtype} must equal x.dtype={x.dtype}")
    if bias is not None:
        b = check_array("bias", bias, 1)
        if b.dtype != x.dtype:
            raise TypeError(f"bias.dtype={b.dtype} must equal x.dtype={x.dtype}")
    x_shape = x.shape if data_format == "NCDHW" else (x.shape[0], x.shape[4], *x.shape[1:4])
    w_shape = filter_shape_to_ncdhw(w.shape, filter_format)
    args = check_conv3d_v2_args(x_shape, w_shape, dhw_attribute("strides", strides, data_format), pads,
                                dhw_attribute("dilations", dilations, data_format), groups, x.dtype.name, platform,
                                bias is not None, enable_hf32)
    if args.platform.npu_arch != 2201:
        raise ValueError(f"platform={args.platform.name!r} has npu_arch {args.platform.npu_arch}: the Conv3DV2 port is "
                         "the arch22 kernel (npu_arch 2201, Atlas A2/A3); the arch35 kernel (op_kernel/arch35) is not "
                         "ported")
    if bias is not None and bias.shape[0] != w_shape[0]:
        raise ValueError(f"bias has {bias.shape[0]} values; it needs one per output channel (filter Cout="
                         f"{w_shape[0]})")
    return args


def operands_to_ncdhw(x, filter, data_format: str, filter_format: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3)) if data_format == "NDHWC" else x
    return x, filter_to_ncdhw(filter, filter_format)
