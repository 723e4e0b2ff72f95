"""The host operator: Conv3DBackpropFilterV2 (dw) on the simulated A2 chip.

conv3d_backprop_filter_v2(x, filter_size, out_backprop, strides=..., pads=...) checks the arguments (errors name
the parameter, its value and what is allowed), asks the host tiling (tiling.conv3d_backprop_filter_tiling) for
the tiling, converts x and dy to the device formats, launches the kernel on tiling.block_dim cube cores and
converts dw back to filter_format.

Host-side layouts (numpy, documented in docs/conv3d_backprop_filter.md):
- x and dy become NDC1HWC0 ([N][D][C1][H][W][C0], C0 = 32 B / element). With groups, group g of the tiling
  (the real host may enlarge groups: E user groups per tiling group) owns channels [g*cinG, (g+1)*cinG) with
  cinG = cin1G*C0, user group j of it starting at j*(Cin/groups) inside; channels past the real ones are zero.
- dw comes back as the kernel writes it: fp32 [group][dk][cin1G][hk][wk][cout1G*C0][C0] (FRACTAL_Z_3D, the
  couts of a row padded to cout1G*C0), read out to (Cout, Cin/groups, kD, kH, kW) and then filter_format.
"""
from __future__ import annotations

import math

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import DATA_FORMATS, FILTER_FORMATS, filter_from_ncdhw, filter_shape_to_ncdhw
from ascend_sim.machine.platform import get_platform
from ascend_sim.machine.tensor import GmAddr
from kernels.common.operands import (check_array, check_at_least, check_spatial_fit, default_data_format, dhw_attribute,
                                     require_arch22_kernel, warn_data_format_assumed)
from kernels.common.run import Run, output_buffer, read_output, write_trace
from kernels.common.run_options import check_run_options
from kernels.common.size_guard import RunEstimate, check_fits, conv_estimate, gemm_tiles, tensor_bytes
from kernels.common.tiling_reads import ReadRecorder, flag_unread_overrides
from kernels.conv3d_backprop_filter.kernel.conv3d_backprop_filter_v2 import conv3d_backprop_filter_v2 as _kernel_entry
from tiling import check_conv3d_dw_args, conv3d_backprop_filter_tiling
from tiling.common.problem import check_format, check_ints
from tiling.conv3d_backprop_filter.model import Conv3DBackpropFilterV2TilingData

_FILTER_AXES = {"N": "Cout", "C": "Cin/groups", "D": "kD", "H": "kH", "W": "kW"}  # a filter_format letter's meaning


def _to_ncdhw_shape(shape, data_format: str) -> tuple:
    n, *rest = shape
    return (n, rest[3], *rest[:3]) if data_format == "NDHWC" else tuple(shape)


def _check_relations(x_shape, weight_shape, dy_shape, strides, pads, dilations, data_format: str) -> None:
    """The convolution's shape relations, worded with the user's argument names and data_format axes."""
    def axis(letter):
        return f"axis {data_format.index(letter)} in data_format={data_format!r}"
    if dy_shape[0] != x_shape[0]:
        raise ValueError(f"out_backprop batch N={dy_shape[0]} (axis 0) must equal x batch N={x_shape[0]}")
    if dy_shape[1] != weight_shape[0]:
        raise ValueError(f"out_backprop channels={dy_shape[1]} ({axis('C')}) must equal filter_size Cout="
                         f"{weight_shape[0]}")
    if x_shape[1] % weight_shape[1]:
        raise ValueError(f"filter_size Cin/groups={weight_shape[1]} must divide x channels={x_shape[1]} ({axis('C')})")
    check_spatial_fit("x", x_shape[2:], dy_shape[2:], "filter_size", weight_shape[2:], strides, dilations, pads, axis)


def _fits_ncdhw(x_shape, weight_shape, dy_shape, strides, pads, dilations) -> bool:
    """Whether the arrays, read as NCDHW, also describe this convolution (the default NDHWC reading did)."""
    try:
        st, dl = dhw_attribute("strides", strides, "NCDHW"), dhw_attribute("dilations", dilations, "NCDHW")
        _check_relations(x_shape, weight_shape, dy_shape, st, pads, dl, "NCDHW")
    except ValueError:
        return False
    return True


def rows_beyond_reach(x_shape: tuple, pads: tuple, kh: int, dilation_h: int) -> tuple[tuple, tuple]:
    """(x shape, pads) as the dw kernel runs them: the top / bottom padding written out as zero rows of x when a
    pad reaches past the kernel.

    With padUp or padDown >= the dilated kernel height some output rows read padding only; the kernel's B1 load
    then computes a row count of zero or less for them (hiCopyLen, unsigned on the device) and loads no row or
    a row outside the map, so those rows would add garbage to dw. Such rows contribute nothing to dw, and with
    the pads written into x (pads 0) every output row reads real rows: the same dw."""
    span = (kh - 1) * dilation_h + 1
    top, bottom = pads[2], pads[3]
    if top < span and bottom < span:
        return tuple(x_shape), pads
    n, c, d, h, w = x_shape
    return (n, c, d, h + top + bottom, w), (pads[0], pads[1], 0, 0, pads[4], pads[5])


def _pad_rows_beyond_reach(x_ncdhw: np.ndarray, pads: tuple, kh: int, dilation_h: int) -> tuple:
    """x and pads after rows_beyond_reach, with the zero rows written."""
    _, new_pads = rows_beyond_reach(x_ncdhw.shape, pads, kh, dilation_h)
    if new_pads == pads:
        return x_ncdhw, pads
    padded = np.pad(x_ncdhw, ((0, 0), (0, 0), (0, 0), (pads[2], pads[3]), (0, 0)))
    return padded, new_pads


def _to_device(a_ncdhw: np.ndarray, dtype, per_tiling_group: int, c_per_group: int, cg_aligned: int,
               total: int) -> np.ndarray:
    """NCDHW -> NDC1HWC0 with the tiling's group layout: user group j of tiling group g at g*cg_aligned +
    (j % E)*c_per_group; `total` channels (a multiple of C0) in all."""
    n, c, d, h, w = a_ncdhw.shape
    c0 = 32 // np.dtype(dtype).itemsize
    padded = np.zeros((n, total, d, h, w), dtype)
    for j in range(c // c_per_group):
        g, local = divmod(j, per_tiling_group)
        start = g * cg_aligned + local * c_per_group
        padded[:, start:start + c_per_group] = a_ncdhw[:, j * c_per_group:(j + 1) * c_per_group]
    return np.ascontiguousarray(padded.reshape(n, total // c0, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))


def groups_per_tiling_group(groups: int, cin: int, cout: int, t) -> int:
    """How many user groups one group of the tiling holds: the host's group enlargement (CalculateMagFactor:
    merged groups fill whole C0 blocks of cin and 16-blocks of cout), checked against the tiling's group."""
    if t.group == groups:
        return 1
    cin_g, cout_g = cin // groups, cout // groups
    mag = min(math.lcm(math.lcm(cin_g, t.k0) // cin_g, math.lcm(cout_g, 16) // cout_g), groups)
    if -(-groups // mag) != t.group:
        raise ValueError(f"the tiling's group={t.group} is neither groups={groups} nor the enlarged count "
                         f"ceil(groups / {mag})")
    return mag


def _from_device(dw_flat: np.ndarray, t, groups: int, weight_shape: tuple) -> np.ndarray:
    """The kernel's fp32 FRACTAL_Z_3D dw -> (Cout, Cin/groups, kD, kH, kW)."""
    cout, cin_g, kd, kh, kw = weight_shape
    c0 = t.k0
    cin_rows, cout_cols = t.cin1G * c0, t.cout1G * c0
    blocks = dw_flat.reshape(t.group, t.dk, t.cin1G, t.hk, t.wk, cout_cols, c0)
    # -> [group][cout_cols][cin1G*c0][dk][hk][wk]
    dense = blocks.transpose(0, 5, 2, 6, 1, 3, 4).reshape(t.group, cout_cols, cin_rows, t.dk, t.hk, t.wk)
    per = groups_per_tiling_group(groups, cin_g * groups, cout, t)
    cout_g = cout // groups
    w = np.empty((cout, cin_g, kd, kh, kw), np.float32)
    for j in range(groups):
        g, local = divmod(j, per)
        w[j * cout_g:(j + 1) * cout_g] = dense[g, local * cout_g:(local + 1) * cout_g,
                                               local * cin_g:(local + 1) * cin_g]
    return w


def _launch(x_ncdhw, dy_ncdhw, x_shape: tuple, dy_shape: tuple, dtype, tiling_data, groups: int, weight_shape: tuple,
            *, platform, execute: bool, check_races: bool, hooks, deterministic: bool = False, engine: str = "auto",
            record: bool = True):
    """dw (None in timing-only mode, where x_ncdhw and dy_ncdhw are None: GM then holds size-only allocations of
    the device shapes and nothing is converted) and the report; x_shape, dy_shape NCDHW."""
    t = tiling_data.dwTiling
    dtype = np.dtype(dtype)
    c0 = t.k0
    if c0 != 32 // dtype.itemsize:
        raise ValueError(f"the tiling's k0={c0} does not match {dtype} data (C0={32 // dtype.itemsize})")
    per = groups_per_tiling_group(groups, x_shape[1], dy_shape[1], t)
    cin_g, cout_g = x_shape[1] // groups, dy_shape[1] // groups
    cinG, coutG = t.cin1G * c0, t.cout1G * c0
    # the channel count the kernel's offsets assume: (group - 1) whole groups plus the tail group
    cin_total, cout_total = -(-t.cin // c0) * c0, -(-t.cout // c0) * c0
    for name, c_g, cg_aligned, total in (("Cin", cin_g, cinG, cin_total), ("Cout", cout_g, coutG, cout_total)):
        last = groups - 1
        if (last // per) * cg_aligned + (last % per + 1) * c_g > total or per * c_g > cg_aligned:
            raise ValueError(f"the tiling's group layout (group={t.group}, {name} per group {cg_aligned}) does not "
                             f"hold {groups} groups of {c_g} {name} channels")
    chip = Chip(platform, execute=execute, check_races=check_races, hooks=hooks, engine=engine, record=record)
    workspace = None
    if deterministic:  # the stream-K partial sums: singleCoreM x singleCoreN fp32 per core
        bb = tiling_data.basicBlockTiling
        partial_sums = tiling_data.block_dim * bb.singleCoreM * bb.singleCoreN * 4
        workspace = GmAddr(chip.gm.alloc("workspace", max(1, partial_sums)))
    n, _, d, h, w = x_shape
    x_gm = chip.gm.place("x", (n, d, cin_total // c0, h, w, c0), dtype,
                         lambda: _to_device(x_ncdhw, dtype, per, cin_g, cinG, cin_total))
    # Zero slack after dy: the basic-block drivers with separate (group, kd) GEMMs read M blocks of
    # cout1G*C0 couts even where dy holds fewer (fp32: cout1G*8 can pass ceil(Cout/8)*8); on the device that
    # reads past the tensor, here it reads zeros, and the rows land in dw rows past Cout, which are dropped.
    n, _, do, ho, wo = dy_shape
    slack = coutG * ho * wo  # cout1G planes of one (batch, depth)
    dy_elements = n * do * cout_total * ho * wo + slack
    dy_gm = chip.gm.place("out_backprop", (dy_elements,), dtype, lambda: np.concatenate(
        [_to_device(dy_ncdhw, dtype, per, cout_g, coutG, cout_total).reshape(-1), np.zeros(slack, dtype)]))
    y_elems = t.group * t.dk * t.cin1G * t.hk * t.wk * coutG * c0
    y_gm = output_buffer(chip, "y", (y_elems,), np.float32, True)  # the init pass must zero every element it adds into
    # KERNEL_TYPE_MIX_AIC_1_0 (cube cores with cross-core flags); the deterministic build adds the vector cores
    report = chip.launch(_kernel_entry, tiling_data.block_dim, GmAddr(x_gm), None, GmAddr(dy_gm), GmAddr(y_gm),
                         workspace, tiling_data, tiling_key=tiling_data.tiling_key, dtype=dtype,
                         deterministic=deterministic,
                         kernel_type="MIX_AIC_1_2" if deterministic else "MIX_AIC_1_0")
    dw_flat = read_output(chip, y_gm, (y_elems,), np.float32)
    dw = _from_device(dw_flat, t, groups, weight_shape) if dw_flat is not None else None
    return dw, report


# what makes a dw run need less (size_guard.REMEDIES): record=False does not, its records wait behind the init
# pass's barrier (estimate_conv3d_dw counts them all)
DW_REMEDIES = ("execute", "check_races")


def estimate_conv3d_dw(tiling_data, x_shape: tuple, dy_shape: tuple, weight_shape: tuple, groups: int, itemsize: int,
                       *, execute: bool = True, check_races: bool = True) -> RunEstimate:
    """What a run will take (kernels/common/size_guard.py); shapes NCDHW, dw accumulated in float32."""
    t = tiling_data.dwTiling
    cout, cin_g, *kernel = weight_shape
    n, _, *out = dy_shape
    tiles = gemm_tiles(cout // groups, cin_g * math.prod(kernel), n * math.prod(out), t.baseM, t.baseN, t.baseK,
                       groups)
    c0 = 32 // itemsize
    inputs = (tensor_bytes(x_shape, itemsize, c0), tensor_bytes(dy_shape, itemsize, c0))
    return conv_estimate(inputs, tensor_bytes(weight_shape, 4, c0), tiles=tiles, cores=tiling_data.block_dim,
                         execute=execute, check_races=check_races)


def conv3d_backprop_filter_v2_run(x, filter_size, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1),
                                  groups=1, data_format=None, filter_format="NCDHW", platform="Ascend910B2",
                                  enable_hf32=False, deterministic=False, execute=True, trace=None, tiling=None,
                                  tiling_overrides=None, check_races=True, hooks=None, engine="auto",
                                  max_memory=None, record=True) -> Run:
    """Run Conv3DBackpropFilterV2 on the simulator and return the whole record (see conv3d_backprop_filter_v2).

    deterministic=True: the deterministic build (the host tiles for it; stream-K tail blocks are summed by the
    vector cores in a fixed order instead of atomic adds). execute=False is the timing-only mode (result None).
    trace: a path for the Chrome/Perfetto trace.
    tiling: a Conv3DBackpropFilterV2TilingData to launch instead of the generator's (it must describe this
    problem); tiling_overrides: {field: value} applied to the generated tiling by real field name.
    hooks: callables hook(core, instruction) run after every instruction. engine: "auto" | "exact" | "fast"
    (ascend_sim.Chip): the same results, cycles and faults; "auto" is fast unless hooks are given.
    max_memory: the bytes the run may take (default: a fraction of the machine's available memory); a run
    estimated to need more is refused before anything is allocated (kernels/common/size_guard.py, MemoryLimitError).
    record=False keeps no instruction records once scheduled (see conv3d_backprop_input_v2_run); dw's init pass
    barrier still holds every core's records until the last core reaches it.
    """
    check_run_options(trace=trace, execute=execute, check_races=check_races, record=record)
    platform = get_platform(platform)  # normalised once, here: everything below gets the Platform
    require_arch22_kernel("Conv3DBackpropFilterV2", platform)
    data_format, assumed = default_data_format(data_format)
    data_format = check_format("data_format", data_format, DATA_FORMATS)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS)
    x = check_array("x", x, 5)
    dy = check_array("out_backprop", out_backprop, 5)
    if x.dtype != dy.dtype:
        raise TypeError(f"x.dtype={x.dtype} and out_backprop.dtype={dy.dtype} differ; both must be the same one of "
                        f"{sorted(DTYPES)}")
    filter_labels = tuple(_FILTER_AXES[axis] for axis in filter_format)
    filter_size = check_ints("filter_size", filter_size, 5, filter_labels)
    check_at_least("filter_size", filter_size, 1, filter_labels)
    weight_shape = filter_shape_to_ncdhw(filter_size, filter_format)
    st = dhw_attribute("strides", strides, data_format)
    dl = dhw_attribute("dilations", dilations, data_format)
    x_shape = _to_ncdhw_shape(x.shape, data_format)
    dy_shape = _to_ncdhw_shape(dy.shape, data_format)
    pad_names = ("front", "back", "top", "bottom", "left", "right")
    pd = check_ints("pads", pads, 6, pad_names)
    check_at_least("pads", pd, 0, pad_names)
    check_at_least("x.shape", x.shape, 1, tuple(data_format))
    check_at_least("out_backprop.shape", dy.shape, 1, tuple(data_format))
    _check_relations(x_shape, weight_shape, dy_shape, st, pd, dl, data_format)
    if assumed and _fits_ncdhw(x.shape, weight_shape, dy.shape, strides, pd, dilations):
        warn_data_format_assumed("conv3d_backprop_filter_v2")
    x_ncdhw = dy_ncdhw = None  # timing-only: no host conversion, the operands' bytes are never read
    kh_dilation = dl[1] if weight_shape[3] > 1 else 1
    if execute:
        x_ncdhw = np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3)) if data_format == "NDHWC" else x
        dy_ncdhw = np.ascontiguousarray(dy.transpose(0, 4, 1, 2, 3)) if data_format == "NDHWC" else dy
        x_ncdhw, _ = _pad_rows_beyond_reach(x_ncdhw, pd, weight_shape[3], kh_dilation)
    x_shape, pd = rows_beyond_reach(x_shape, pd, weight_shape[3], kh_dilation)
    if tiling is not None and not isinstance(tiling, Conv3DBackpropFilterV2TilingData):
        raise TypeError(f"tiling={tiling!r} must be a Conv3DBackpropFilterV2TilingData (from "
                        f"tiling.conv3d_backprop_filter_tiling) or None, got {type(tiling).__name__}")
    if tiling is None:
        tiling = conv3d_backprop_filter_tiling(x_shape, weight_shape, dy_shape, st, pd, dl, groups,
                                               dtype=x.dtype.name, platform=platform, enable_hf32=enable_hf32,
                                               deterministic=deterministic, tiling_overrides=tiling_overrides)
    else:  # still refuse a bad problem before launch
        check_conv3d_dw_args(x_shape, weight_shape, dy_shape, st, pd, dl, groups, x.dtype.name, platform,
                             enable_hf32, deterministic)
    groups = x_shape[1] // weight_shape[1]
    # records counted even with record=False: behind the init pass's cross-core barrier they stay pending until
    # every core has issued up to it (docs/performance.md, "Big problems")
    check_fits(estimate_conv3d_dw(tiling, x_shape, dy_shape, weight_shape, groups, x.dtype.itemsize, execute=execute,
                                  check_races=check_races), max_memory, DW_REMEDIES)
    reads: set[str] = set()
    launched = ReadRecorder(tiling, reads) if tiling_overrides else tiling
    dw, report = _launch(x_ncdhw, dy_ncdhw, x_shape, dy_shape, x.dtype, launched, groups, weight_shape,
                         platform=platform, execute=execute, check_races=check_races, hooks=hooks,
                         deterministic=deterministic, engine=engine, record=record)
    notes = flag_unread_overrides(tiling_overrides, tiling.fields(), reads,
                                  f"the Conv3DBackpropFilterV2 kernel of tiling key {tiling.tiling_key}"
                                  ) if tiling_overrides else []
    result = filter_from_ncdhw(dw, filter_format) if dw is not None else None
    return Run(result, tiling, report, notes, write_trace(report, trace))


def conv3d_backprop_filter_v2(x, filter_size, out_backprop, *, strides, pads, dilations=(1, 1, 1, 1, 1), groups=1,
                              data_format=None, filter_format="NCDHW", platform="Ascend910B2",
                              enable_hf32=False) -> np.ndarray:
    """dw of a 3D convolution, computed by the simulated A2 Conv3DBackpropFilterV2 kernel.

    x: the feature map and out_backprop: dy, both in data_format (NDHWC or NCDHW), one dtype of float16,
    bfloat16 (ml_dtypes) or float32. filter_size: the 5 filter dims in filter_format (NCDHW = (Cout, Cin/groups,
    kD, kH, kW), NDHWC or DHWCN). strides and dilations: 5 ints in data_format order (N and C must be 1); pads:
    (front, back, top, bottom, left, right). fp32 uses HF32 only if enable_hf32. Returns dw as float32 in
    filter_format. data_format not given is NDHWC, as the real operator; when the shapes also fit NCDHW a
    DataFormatAssumedWarning says so.
    """
    return conv3d_backprop_filter_v2_run(
        x, filter_size, out_backprop, strides=strides, pads=pads, dilations=dilations, groups=groups,
        data_format=data_format, filter_format=filter_format, platform=platform, enable_hf32=enable_hf32).result
