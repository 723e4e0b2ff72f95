"""The dx operator on the Ascend 950 (npu_arch 3510): the arch35 tiling and kernel, no host-side layout change.

The arch35 kernel reads out_backprop (NCDHW or NDHWC) and the filter (NCDHW, NDHWC or DHWCN) straight from GM and
writes y in data_format, so the arrays go up as they are. Steps: the operand checks and the 950 refusals (below),
the arch35 host tiling (tiling.conv3d_backprop_input.arch35, which checks the shapes and attributes by name), the
refusal of what the kernel port does not run yet (kernel.arch35 `unported_features`), then one MIX AIC:AIV 1:2
launch on block_dim AI cores with the tiling's workspace. y starts as NaN so that an unwritten element shows up.

Refused before launch, by name: mixed dtypes; a dtype other than float16, bfloat16, float32, hifloat8,
float8_e4m3fn; 8-bit unless out_backprop, filter and y are all NCDHW (the tiling's CheckDtypeFormatAttrs);
data_format NDHWC with groups > 1 (the operator documentation at ops-nn 041754a4: "not supported on the 950");
tiling_overrides (not taken by the arch35 tiling yet).
"""
from __future__ import annotations

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
from ascend_sim.machine.tensor import GmAddr
from kernels.common.operands import check_format
from kernels.common.run import output_buffer, read_output
from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import (
    conv3d_backprop_input_v2_arch35, unported_features)
from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35

DTYPES_950 = {**DTYPES, **EIGHT_BIT_DTYPES}
DATA_FORMATS_950 = ("NCDHW", "NDHWC")
FILTER_FORMATS_950 = ("NCDHW", "NDHWC", "DHWCN")


def check_operands_950(filter, out_backprop) -> str:
    """The dtype name shared by both arrays; TypeError naming the array otherwise."""
    for name, value in (("filter", filter), ("out_backprop", out_backprop)):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(value).__name__}")
        if value.dtype not in DTYPES_950.values():
            raise TypeError(f"{name}.dtype={value.dtype} is not supported on the 950; allowed: {sorted(DTYPES_950)}")
    if filter.dtype != out_backprop.dtype:
        raise TypeError(f"filter.dtype={filter.dtype} and out_backprop.dtype={out_backprop.dtype} differ: "
                        f"out_backprop, filter and y must have one dtype (AnalyzeDtype)")
    return next(name for name, dt in DTYPES_950.items() if dt == filter.dtype)


def plan_arch35(input_size, filter_shape, out_backprop_shape, dtype: str, *, strides, pads, dilations, groups,
                data_format, filter_format, platform, enable_hf32, tiling_overrides=None):
    """The arch35 tiling of this problem, after the 950 refusals; raises before any launch."""
    data_format = check_format("data_format", data_format, DATA_FORMATS_950)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS_950)
    if dtype in EIGHT_BIT_DTYPES and (data_format, filter_format) != ("NCDHW", "NCDHW"):
        raise ValueError(f"dtype={dtype} with data_format={data_format!r}, filter_format={filter_format!r}: 8-bit "
                         "needs out_backprop, filter and y all NCDHW (CheckDtypeFormatAttrs)")
    if data_format == "NDHWC" and groups != 1:
        raise ValueError(f"groups={groups} with data_format='NDHWC': not supported on the 950 (the operator's "
                         "documentation); use data_format='NCDHW'")
    if tiling_overrides:
        raise ValueError(f"tiling_overrides={tiling_overrides!r}: not taken by the arch35 (Ascend 950) tiling yet")
    tiling = conv3d_backprop_input_tiling_arch35(
        tuple(out_backprop_shape), tuple(filter_shape), tuple(input_size), strides, pads, dilations, groups, dtype,
        platform, enable_hf32, data_format, filter_format)
    missing = unported_features(tiling.tiling_key, tiling)
    if missing:
        raise ValueError(f"the arch35 tiling chose {tiling.template} (tiling key {tiling.tiling_key}) with "
                         f"{'; '.join(missing)}: not ported to the simulated arch35 kernel yet")
    return tiling


def launch_arch35(tiling, filter: np.ndarray, out_backprop: np.ndarray, input_size, *, platform, data_format,
                  filter_format, execute=True, check_races=True, poison_output=True, hooks=None, engine="auto",
                  record=True):
    """(y in data_format or None, report): one MIX AIC:AIV 1:2 launch of the arch35 kernel with `tiling`;
    record=False keeps no instruction records (the memory of a long run stays flat)."""
    dtype = filter.dtype
    chip = Chip(platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine, record=record)
    w_gm = chip.gm.upload("filter", np.ascontiguousarray(filter))
    dy_gm = chip.gm.upload("out_backprop", np.ascontiguousarray(out_backprop))
    y_shape = tuple(input_size)
    y_gm = output_buffer(chip, "y", y_shape, dtype, poison_output)
    workspace = GmAddr(chip.gm.alloc("workspace", max(tiling.workspace_size, 32)))
    report = chip.launch(conv3d_backprop_input_v2_arch35, tiling.block_dim, None, GmAddr(w_gm), GmAddr(dy_gm),
                         GmAddr(y_gm), workspace, tiling, tiling_key=tiling.tiling_key, dtype=dtype,
                         filterFormat=filter_format, dedyFormat=data_format, yFormat=data_format,
                         kernel_type="MIX_AIC_1_2")
    return read_output(chip, y_gm, y_shape, dtype), report
