"""The host operator: conv3d_v2(x, filter, bias, ...) on the simulated chip, and its `_run` sibling.

Steps (what aclnnConvolution + the Conv3DV2 op do on A2; the layout conversions the real stack runs as separate
TransData kernels are done here on the host in numpy, and the run's notes say so):
1. check every argument against the real ranges (arguments.py, tiling.conv3d_v2.check_conv3d_v2_args);
2. aclnn's routing (routing.py): a 1x1x1, stride-1, unpadded, ungrouped problem on NCDHW data with Di*Hi*Wi < 65535
   takes the pointwise kernel on NCDHW tensors with a float32 bias; anything else the NDC1HWC0 path;
3. the tiling (tiling.conv3d_v2_tiling, pointwise= the routing), optional overrides by real field name, the
   validator (tiling/conv3d_v2/validate.py), and a refusal of the kernel variants that are not ported;
4. NDC1HWC0 path: x -> NDC1HWC0, filter -> FRACTAL_Z_3D; pointwise: x and the filter as they are (NCDHW); the bias
   -> the kernel's bias dtype (float32 for bf16 and for the pointwise kernel: lossless);
5. launch the entry on batchDim*doDim*mDim*nDim*groupDim cube cores; y starts as NaN so that an element the kernel
   never writes shows up;
6. y -> data_format (NDC1HWC0 path only).
"""
from __future__ import annotations

import math

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import (filter_to_fractal_z_3d, fractal_z_3d_shape, ncdhw_to_ndc1hwc0,
                                        ndc1hwc0_to_ncdhw, ndc1hwc0_to_ndhwc)
from ascend_sim.machine.tensor import GmAddr
from kernels.common.run import Run, output_buffer, read_output, write_trace
from kernels.common.run_options import check_run_options
from kernels.common.size_guard import RunEstimate, check_fits, conv_estimate, gemm_tiles, streams, tensor_bytes
from kernels.common.tiling_reads import ReadRecorder, flag_unread_overrides
from kernels.conv3d_v2.arguments import check_conv3d_v2_operands, operands_to_ncdhw
from kernels.conv3d_v2.kernel.conv3d_v2 import conv3dv2, kernel_class
from kernels.conv3d_v2.kernel.util import NCDHW, NDC1HWC0
from kernels.conv3d_v2.routing import use_point_wise_kernel
from tiling.common.cstruct import overrides_mapping
from tiling.conv3d_v2 import conv3d_v2_tiling

HOST_LAYOUT_NOTE = ("host: x -> NDC1HWC0, filter -> FRACTAL_Z_3D and y NDC1HWC0 -> data_format converted in numpy "
                    "(TransData kernels on the real stack)")
POINTWISE_NOTE = ("aclnn pointwise branch (NeedPointWiseKernel, Di*Hi*Wi < 65535): x, filter and y stay NCDHW (no "
                  "TransData), the bias is float32")
BIAS_PAD_NOTE = ("own rule: the pointwise bias load reads whole 16-channel blocks (Nd2Nz nValue = align(n, 16)), past "
                 "Cout into whatever follows the tensor in GM; the bias is allocated zero-padded to a multiple of 16")


def plan_conv3d_v2_tiling(args, tiling_overrides=None, fmap_format: str = NDC1HWC0):
    """The generated tiling (the pointwise algorithm for NCDHW data) with the overrides applied, validated, and
    checked to select a ported kernel."""
    tiling_overrides = overrides_mapping(tiling_overrides)
    t = conv3d_v2_tiling(args.x_shape, args.filter_shape, args.strides, args.pads, args.dilations, args.groups,
                         args.dtype, args.platform, args.bias, args.enable_hf32, pointwise=fmap_format == NCDHW)
    if tiling_overrides:
        t = t.with_overrides(**tiling_overrides)  # validated: refused naming the overrides
        t.tiling_key = t.key_from_fields()
    else:
        t.check(raise_error=True)
    try:
        kernel_class(t.tiling_key, fmap_format)
    except ValueError as e:
        raise ValueError(f"{e}; see docs/conv3d_v2.md") from None
    return t


def estimate_conv3d_v2(args, t, *, execute: bool = True, check_races: bool = True, record: bool = True,
                       engine: str = "auto", hooks=None) -> RunEstimate:
    """What a run will take (kernels/common/size_guard.py; `engine`, `hooks`: whether the replay streams)."""
    a = t.convApiTiling
    itemsize = DTYPES[args.dtype].itemsize
    c0 = 32 // itemsize
    n, cout, *out = args.y_shape
    _, cin_g, *kernel = args.filter_shape
    tiles = gemm_tiles(n * math.prod(out), cout // args.groups, cin_g * math.prod(kernel), a.mL0, a.nL0, a.kL0,
                       args.groups)
    inputs = (tensor_bytes(args.x_shape, itemsize, c0), tensor_bytes(args.filter_shape, itemsize, c0))
    return conv_estimate(inputs, tensor_bytes(args.y_shape, itemsize, c0), tiles=tiles, cores=t.block_dim,
                         execute=execute, check_races=check_races, record=record,
                         streamed=streams(engine, record=record, hooks=hooks, execute=execute,
                                          check_races=check_races))


def _bias_dtype(args, bias, fmap_format: str) -> np.dtype:
    """DTYPE_BIAS: aclnn's bias type (fp16 for fp16 data, else fp32; fp32 always in the pointwise branch); without a
    bias the entry's default, float."""
    if args.dtype == "float16" and bias is not None and fmap_format == NDC1HWC0:
        return np.dtype(np.float16)
    return np.dtype(np.float32)


def _launch(args, x, weight, bias, t, fmap_format, *, execute, check_races, poison_output, hooks, engine,
            record=True):
    dtype = DTYPES[args.dtype]
    bias_dtype = _bias_dtype(args, bias, fmap_format)
    n, cout, do, ho, wo = args.y_shape
    c0 = 32 // dtype.itemsize
    chip = Chip(args.platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine, record=record)
    # x and weight are None in timing-only mode: place() then makes size-only allocations and converts nothing
    if fmap_format == NCDHW:  # the pointwise kernel reads x [N][Cin][DHW] and the filter [Cout][Cin] as given
        x_gm = chip.gm.place("x", args.x_shape, dtype, lambda: np.ascontiguousarray(x, dtype))
        w_gm = chip.gm.place("filter", args.filter_shape, dtype, lambda: np.ascontiguousarray(weight, dtype))
        y_shape = (n, cout, do, ho, wo)
    else:
        xn, cin, xd, xh, xw = args.x_shape
        x_gm = chip.gm.place("x", (xn, xd, -(-cin // c0), xh, xw, c0), dtype,
                             lambda: ncdhw_to_ndc1hwc0(x.astype(dtype, copy=False)))
        wz_shape = fractal_z_3d_shape(cout, args.filter_shape[1], args.filter_shape[2:], args.groups, dtype)
        w_gm = chip.gm.place("filter", wz_shape, dtype, lambda: filter_to_fractal_z_3d(
            weight.astype(dtype, copy=False), args.groups, "NCDHW"))
        y_shape = (n, do, -(-cout // c0), ho, wo, c0)
    b_gm = None
    if bias is not None:
        b = bias.astype(bias_dtype)
        if fmap_format == NCDHW:
            b = np.concatenate([b, np.zeros(-len(b) % 16, bias_dtype)])
        b_gm = chip.gm.upload("bias", b)
    y_gm = output_buffer(chip, "y", y_shape, dtype, poison_output)
    report = chip.launch(conv3dv2, t.block_dim, GmAddr(x_gm), GmAddr(w_gm),
                         GmAddr(b_gm) if b_gm is not None else None, GmAddr(y_gm), None, t,
                         tiling_key=t.tiling_key, dtype=dtype, bias_dtype=bias_dtype, fmap_format=fmap_format)
    return read_output(chip, y_gm, y_shape, dtype), report


def plan_conv3d_v2_run(x, filter, bias=None, *, strides, pads, dilations=(1, 1, 1, 1, 1), groups=1,
                       data_format="NCDHW", filter_format="NCDHW", platform="Ascend910B2", enable_hf32=False,
                       tiling_overrides=None):
    """(checked arguments, fmap format, tiling) of a conv3d_v2_run with these arguments: all it decides before
    touching data (only the operands' shapes and dtypes are read: size-only stand-ins will do)."""
    args = check_conv3d_v2_operands(x, filter, bias, strides, pads, dilations, groups, data_format, filter_format,
                                    platform, enable_hf32)
    fmap_format = NCDHW if use_point_wise_kernel(args, data_format) else NDC1HWC0
    return args, fmap_format, plan_conv3d_v2_tiling(args, tiling_overrides, fmap_format)


def conv3d_v2_run(x, filter, bias=None, *, strides, pads, dilations=(1, 1, 1, 1, 1), groups=1, data_format="NCDHW",
                  filter_format="NCDHW", platform="Ascend910B2", enable_hf32=False, execute=True, trace=None,
                  tiling_overrides=None, check_races=True, poison_output=True, hooks=None,
                  engine="auto", max_memory=None, record=True) -> Run:
    """Run Conv3DV2 on the simulator and return the whole record (see conv3d_v2).

    execute=False runs the timing-only mode (no data moved, result None). trace: a path for the Chrome/Perfetto
    trace. tiling_overrides: {field: value} applied to the generated tiling by real field name, then validated
    (TilingValidationError, a ValueError, lists each broken rule). hooks: callables hook(core, instruction) after
    every instruction. engine: "auto" | "exact" | "fast" (the same results, cycles and faults). max_memory: the
    bytes the run may take (default: a fraction of the machine's available memory); a run estimated to need more
    is refused before anything is allocated (kernels/common/size_guard.py, MemoryLimitError). record=False keeps no
    instruction records once scheduled (see conv3d_backprop_input_v2_run).
    """
    check_run_options(trace=trace, execute=execute, check_races=check_races, poison_output=poison_output,
                      record=record)
    args, fmap_format, t = plan_conv3d_v2_run(x, filter, bias, strides=strides, pads=pads, dilations=dilations,
                                              groups=groups, data_format=data_format, filter_format=filter_format,
                                              platform=platform, enable_hf32=enable_hf32,
                                              tiling_overrides=tiling_overrides)
    check_fits(estimate_conv3d_v2(args, t, execute=execute, check_races=check_races, record=record, engine=engine,
                                  hooks=hooks), max_memory)
    x_ncdhw = weight = None  # timing-only: no host conversion, the operands' bytes are never read
    if execute:
        x_ncdhw, weight = operands_to_ncdhw(x, filter, data_format, filter_format)
    reads: set[str] = set()
    launched = ReadRecorder(t, reads) if tiling_overrides else t
    if tiling_overrides:
        launched.key_from_fields()  # the key (which kernel runs) was derived from these fields
    y, report = _launch(args, x_ncdhw, weight, bias, launched, fmap_format, execute=execute, check_races=check_races,
                        poison_output=poison_output, hooks=hooks, engine=engine, record=record)
    result = y
    if y is not None and fmap_format == NDC1HWC0:
        cout = args.y_shape[1]
        result = ndc1hwc0_to_ndhwc(y, cout) if data_format == "NDHWC" else ndc1hwc0_to_ncdhw(y, cout)
    kernel = kernel_class(t.tiling_key, fmap_format).__name__
    notes = [*t.notes, f"kernel: {kernel} (tiling key {t.tiling_key}, fmap {fmap_format})"]
    if tiling_overrides:
        fields = [*t.convApiTiling.model_dump(), *t.convRunInfo.model_dump()]
        notes += flag_unread_overrides(tiling_overrides, fields, reads, f"{kernel} (tiling key {t.tiling_key})")
    if fmap_format == NCDHW:
        notes.append(POINTWISE_NOTE)
        if bias is not None:
            notes.append(BIAS_PAD_NOTE)
        if filter_format != "NCDHW":
            notes.append(f"host: filter {filter_format} -> NCDHW converted in numpy")
    else:
        notes.append(HOST_LAYOUT_NOTE)
    return Run(result, t, report, notes, write_trace(report, trace))


def conv3d_v2(x, filter, bias=None, *, strides, pads, dilations=(1, 1, 1, 1, 1), groups=1, data_format="NCDHW",
              filter_format="NCDHW", platform="Ascend910B2", enable_hf32=False) -> np.ndarray:
    """The forward 3D convolution y = conv3d(x, filter) + bias, computed by the simulated A2 Conv3DV2 kernel.

    x: (N, Cin, D, H, W) in data_format ("NCDHW" or "NDHWC"); filter: (Cout, Cin/groups, kD, kH, kW) in
    filter_format (NCDHW, NDHWC = (Cout, kD, kH, kW, Cin/groups) or DHWCN); bias: (Cout,) or None, with x's dtype.
    strides and dilations: 5 ints in data_format order (N and C entries 1); pads: (front, back, top, bottom, left,
    right). dtype float16, bfloat16 (ml_dtypes) or float32 (HF32 only with enable_hf32). Returns y with x's dtype
    in data_format.
    """
    return conv3d_v2_run(x, filter, bias, strides=strides, pads=pads, dilations=dilations, groups=groups,
                         data_format=data_format, filter_format=filter_format, platform=platform,
                         enable_hf32=enable_hf32).result
