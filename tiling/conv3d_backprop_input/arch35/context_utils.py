"""The arch35 side of `conv_backprop_input_context_utils.cpp`: argument checks and SetRunInfoToV2.

Ports the branches behind `IsArchAfter35` (npuArch == DAV_3510) of the shared context utilities (hicann/ops-nn @
e5c3fa93, `op_host/op_tiling/common/conv_backprop_input_context_utils.cpp`) plus the dtype/format checks of the
inner-product template's GetShapeAttrsInfoBase (AnalyzeDtype, CheckDtypeFormatAttrs). The checks run in the real
order (GetAttrAndDtypeParams, GetShapeParams, ReCalDilation, CalGroups, CalPads, CalModify, CalRealG,
CheckParams, CheckAttrs, CheckPadRange, SetInitOutput); every refusal is a ValueError naming the parameter, its
value and the allowed range. The 950 widens most A2 limits to 2^31-1 (kDimUp): strides, pads, dilations, filter
H/W; groups stay within [1, 65535].
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
from ascend_sim.machine.formats import DATA_FORMATS, FILTER_FORMATS
from tiling.common.problem import (ConvProblem, check_flag, check_format, check_in_range, check_int, check_platform,
                                   effective_dilations)

NPU_ARCH = 3510  # DAV_3510: the only arch these branches (and the arch35 templates) serve
K_DIM_UP = 2**31 - 1  # kDimUp
K_DIM_BATCH_UP = 2**31 - 1  # kDimBatchUp
GROUPS_UP = 65535  # GROUPS_UP (CheckAttrs)
UINT32_MAX = 2**32 - 1
BLOCK_SIZE = 16  # kBlockSize
# kDtypeBlockReduceMap (bf16 is parsed as fp16 by UpdateDtypeParams): elements of a 32-byte block.
BLOCK_REDUCE = {"hifloat8": 32, "float8_e4m3fn": 32, "float16": 16, "bfloat16": 16, "float32": 8}
DTYPE_BYTES = {"hifloat8": 1, "float8_e4m3fn": 1, "float16": 2, "bfloat16": 2, "float32": 4}
EIGHT_BIT = tuple(EIGHT_BIT_DTYPES)
ENLARGE_BUFFER_NUM = 2
REG_SIZE = 256
PAD_DIM_UP = 255  # the Load3D pad fields are 8-bit
_in_range = partial(check_in_range, by_label=False)  # "name=value is outside the allowed range [low, high]"


@dataclass
class RunInfo:
    """Conv3dBpInputV2RunInfo (conv_backprop_input_context_utils.h), field for field; formats as strings."""

    batch_n: int = 0
    groups: int = 1
    real_g: int = 1
    enlarge: int = 1
    dedx_d: int = 0
    dedx_cin: int = 0
    dedx_cin_g: int = 0
    dedx_cin1: int = 0
    dedx_cin1_g: int = 0
    dedx_h: int = 0
    dedx_w: int = 0
    dedy_d: int = 0
    dedy_cout: int = 0
    dedy_cout_g: int = 0
    dedy_cout1: int = 0
    dedy_cout1_g: int = 0
    dedy_h: int = 0
    dedy_w: int = 0
    kernel_d: int = 0
    kernel_h: int = 0
    kernel_w: int = 0
    stride_d: int = 1
    stride_h: int = 1
    stride_w: int = 1
    pad_h: int = 0  # front (the real code calls the depth pads head/tail)
    pad_t: int = 0  # back
    pad_u: int = 0
    pad_d: int = 0
    pad_l: int = 0
    pad_r: int = 0
    dilation_d: int = 1
    dilation_h: int = 1
    dilation_w: int = 1
    backprop_pad_h: int = 0
    backprop_pad_t: int = 0
    backprop_pad_u: int = 0
    backprop_pad_d: int = 0
    backprop_pad_l: int = 0
    backprop_pad_r: int = 0
    hf32_flag: int = 0
    a_dtype_bytes: int = 2
    b_dtype_bytes: int = 2
    c_dtype_bytes: int = 2
    initOutputFlag: int = 0
    enRelu: int = 0
    quantMode: int = 0
    offsetX: int = 0
    fixedShiftVal: int = 0
    outBackpropFormat: str = "NCDHW"
    filterFormat: str = "NCDHW"
    yFormat: str = "NCDHW"
    dtype: str = "float16"
    notes: list[str] = field(default_factory=list)


def _shape(name: str, values, layout: str) -> tuple[int, ...]:
    """A 5-D shape in `layout`; the real parse refuses any other rank (ValidateOriginShapeDims)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name}={values!r} must be a sequence of 5 integers ({layout})")
    if len(values) != 5:
        raise ValueError(f"{name}={tuple(values)!r} has {len(values)} dims; allowed: 5 ({layout})")
    dims = tuple(check_int(f"{name}[{i}] ({axis})", v) for i, (v, axis) in enumerate(zip(values, layout)))
    for i, (dim, axis) in enumerate(zip(dims, layout)):
        # every dim is at least 1 (CalGroups refuses a zero filter C, the CheckParams ranges the rest; checking
        # them up front keeps a zero channel count from reaching a division)
        _in_range(f"{name}[{i}] ({axis})", dim, 1, K_DIM_UP)
    return dims


def to_ncdhw(shape: tuple[int, ...], layout: str) -> dict[str, int]:
    """GetNCDHWShape: the five dims by axis letter, whatever the layout."""
    return dict(zip(layout, shape))


def _dhw_attr(name: str, values, data_format: str, default: int) -> tuple[int, int, int]:
    """strides/dilations: (D, H, W), or the real 5-value attribute in data_format order with N and C equal to 1."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or len(values) not in (3, 5):
        raise ValueError(f"{name}={values!r} must have 3 values (D, H, W) or 5 ({data_format})")
    if len(values) == 3:
        return tuple(check_int(f"{name}[{i}]", v) for i, v in enumerate(values))
    full = to_ncdhw(tuple(check_int(f"{name}[{i}]", v) for i, v in enumerate(values)), data_format)
    for axis in "NC":  # CheckAttrRangeStrides / CheckAttrRangeDilations: N and C must be 1
        if full[axis] != default:
            raise ValueError(f"{name[:-1]}_{axis.lower()}={full[axis]} must be {default}")
    return full["D"], full["H"], full["W"]


class Problem:
    """The one problem type (tiling.common.problem.ConvProblem) as the context utilities read it: dy, filter and
    dx by axis letter (GetNCDHWShape's view); every other field is the problem's own."""

    def __init__(self, problem: ConvProblem):
        self.problem = problem
        self.dy, self.filt, self.dx = (to_ncdhw(shape, "NCDHW") for shape in
                                       (problem.y_shape, problem.filter_shape, problem.x_shape))

    def __getattr__(self, name: str):
        if name == "problem":  # not set yet (a copy being built)
            raise AttributeError(name)
        return getattr(self.problem, name)


def parse_problem(dy_shape, filter_shape, dx_shape, strides, pads, dilations, groups, dtype, platform,
                  enable_hf32=False, data_format="NCDHW", filter_format="NCDHW") -> Problem:
    """Types, platform arch, dtype, formats and ranks: what the real parse refuses before any arithmetic. The
    dilations stay as given (ReCalDilation is a step of SetRunInfoToV2)."""
    plat = check_platform(platform)
    if plat.npu_arch != NPU_ARCH:  # no arch35 template is registered for another NpuArch
        raise ValueError(f"platform {plat.name} has npu_arch={plat.npu_arch}; the arch35 tiling allows npu_arch "
                         f"{NPU_ARCH} only (Ascend 950)")
    allowed = (*DTYPES, *EIGHT_BIT)
    if not isinstance(dtype, str) or dtype not in allowed:
        raise ValueError(f"dtype={dtype!r} is not supported by the arch35 tiling; allowed: {list(allowed)} (the "
                         "same for out_backprop, filter and y)")
    enable_hf32 = check_flag("enable_hf32", enable_hf32)
    data_format = check_format("data_format", data_format, DATA_FORMATS)
    filter_format = check_format("filter_format", filter_format, FILTER_FORMATS)
    dy = to_ncdhw(_shape("dy_shape", dy_shape, data_format), data_format)
    filt = to_ncdhw(_shape("filter_shape", filter_shape, filter_format), filter_format)
    dx = to_ncdhw(_shape("dx_shape", dx_shape, data_format), data_format)
    if isinstance(pads, (str, bytes)) or not hasattr(pads, "__len__") or len(pads) != 6:
        raise ValueError(f"pads={pads!r} must have 6 values (front, back, top, bottom, left, right)")
    pd = tuple(check_int(f"pads[{i}]", v) for i, v in enumerate(pads))
    st = _dhw_attr("strides", strides, data_format, 1)
    dil = _dhw_attr("dilations", dilations, data_format, 1)
    ncdhw = tuple("NCDHW")
    return Problem(ConvProblem(
        x_shape=tuple(dx[a] for a in ncdhw), filter_shape=tuple(filt[a] for a in ncdhw),
        y_shape=tuple(dy[a] for a in ncdhw), strides=st, pads=pd, dilations=dil, groups=check_int("groups", groups),
        dtype=dtype, platform=plat, enable_hf32=enable_hf32, data_format=data_format, filter_format=filter_format))


def _check_attr_range(p: Problem) -> None:
    """CheckAttrRange with IsArchAfter35: dilations, strides and pads up to kDimUp, groups [1, kDimUp]."""
    for axis, value in zip("dhw", p.dilations):
        _in_range(f"dilation_{axis}", value, 1, K_DIM_UP)
    for axis, value in zip("dhw", p.strides):
        _in_range(f"stride_{axis}", value, 1, K_DIM_UP)
    for name, value in zip(("pad_h", "pad_t", "pad_u", "pad_d", "pad_l", "pad_r"), p.pads):
        _in_range(f"{name} (pads)", value, 0, K_DIM_UP)
    _in_range("groups", p.groups, 1, K_DIM_UP)


def _check_dtype_format(p: Problem) -> None:
    """CheckDtypeFormatAttrs: 8-bit (hifloat8, float8_e4m3fn) only when out_backprop, filter and y are NCDHW."""
    if p.dtype in EIGHT_BIT and (p.data_format != "NCDHW" or p.filter_format != "NCDHW"):
        raise ValueError(f"dtype={p.dtype!r} needs out_backprop, filter and y in NCDHW; got data_format="
                         f"{p.data_format!r}, filter_format={p.filter_format!r} (allowed: 'NCDHW' for both)")


def _cal_groups(p: Problem, run: RunInfo) -> None:
    """CalGroups: the filter's channel count must divide y's; groups are inferred from them when groups == 1
    (a zero filter C, refused here by the real code, is refused with the other dims in `_shape`)."""
    b_c, c_c, a_c = p.filt["C"], p.dx["C"], p.dy["C"]
    if c_c % b_c:
        raise ValueError(f"filter_shape C (Cin/groups)={b_c} must divide dx_shape C={c_c} (fmap_channel)")
    groups = c_c // b_c
    if run.groups == 1:
        run.groups = groups
    elif groups != run.groups:
        raise ValueError(f"groups={run.groups}: dx_shape C={c_c} must equal filter_shape C={b_c} times groups")
    if a_c % run.groups:
        raise ValueError(f"dy_shape C={a_c} must be divisible by groups={run.groups}")


def _check_cal_pads(p: Problem, dil: tuple[int, int, int]) -> None:
    """CheckCalPads: out_backprop's D/H/W must be the convolution output of y with these attributes."""
    for i, axis in enumerate("DHW"):
        k_dil = (p.filt[axis] - 1) * dil[i] + 1
        expect = (p.dx[axis] + p.pads[2 * i] + p.pads[2 * i + 1] - k_dil) // p.strides[i] + 1
        if expect != p.dy[axis]:
            raise ValueError(f"dy_shape {axis}={p.dy[axis]} must equal the inferred {axis} = (dx {axis} "
                             f"{p.dx[axis]} + pads {p.pads[2 * i]}+{p.pads[2 * i + 1]} - dilated kernel {k_dil}) "
                             f"// stride {p.strides[i]} + 1 = {expect}")


def _cal_modify(p: Problem, run: RunInfo) -> None:
    """CalModifyBackpropPadD / CalModifyBackpropPadHW (arch35 form of the bottom pad)."""
    run.backprop_pad_h = (p.filt["D"] - 1) * run.dilation_d - run.pad_h
    tail = p.dx["D"] - p.dy["D"] * run.stride_d + run.pad_h
    if not -K_DIM_UP <= tail <= K_DIM_UP:
        raise ValueError(f"pad_tail_after = dx D - dy D * stride_d + pad_front = {tail} is outside the allowed "
                         f"range [{-K_DIM_UP}, {K_DIM_UP}]")
    run.backprop_pad_t = max(tail, 0)
    run.backprop_pad_l = (p.filt["W"] - 1) * run.dilation_w - run.pad_l
    run.backprop_pad_u = (p.filt["H"] - 1) * run.dilation_h - run.pad_u
    run.backprop_pad_r = p.dx["W"] - p.dy["W"] * run.stride_w + run.pad_l
    run.backprop_pad_d = (p.dx["H"] - ((p.dy["H"] - 1) * run.stride_h + 1) + (p.filt["H"] - 1) * run.dilation_h
                          - run.backprop_pad_u)


def _fmap_h_min_load(p: Problem, run: RunInfo) -> int:
    """The context utils' CalFmapH with minBaseM 1024: dy rows the largest M block needs."""
    min_base_m, wi = 1024, p.dx["W"]
    if min_base_m % wi == 0 or wi % min_base_m == 0:
        hi_cal = -(-min_base_m // wi)
    elif min_base_m > wi:
        hi_cal = min_base_m // wi + 2
    else:
        hi_cal = 2
    kh_dilation = (p.filt["H"] - 1) * run.dilation_h + 1
    return min(hi_cal - 1 + kh_dilation, (p.dy["H"] - 1) * run.stride_h + 1)


def is_need_tiling_hk_wk(p: Problem, run: RunInfo) -> bool:
    """IsNeedTilingHkWk: the kernel taps must be split when the smallest A1 + B1 load misses L1 or a Load3D pad
    (or dilation) exceeds its 8-bit field."""
    block = 32 // run.b_dtype_bytes
    bp_pad_right = (p.dx["W"] - ((p.dy["W"] - 1) * run.stride_w + 1) + (p.filt["W"] - 1) * run.dilation_w
                    - run.backprop_pad_l)
    min_a1 = run.a_dtype_bytes * _fmap_h_min_load(p, run) * p.dy["W"] * run.stride_w * block
    min_b1 = run.b_dtype_bytes * p.filt["H"] * p.filt["W"] * block * 16
    fits = (min_a1 + min_b1 <= p.platform.L1 and run.backprop_pad_l <= PAD_DIM_UP and bp_pad_right <= PAD_DIM_UP
            and run.backprop_pad_u <= PAD_DIM_UP and run.backprop_pad_d <= PAD_DIM_UP
            and run.dilation_h <= PAD_DIM_UP and run.dilation_w <= PAD_DIM_UP)
    return not fits


def _cal_real_g(p: Problem, run: RunInfo) -> tuple[int, int, int]:
    """CalRealG (arch35): the group enlarge factor, real_g and the per-group channel blocks ci1g / co1g."""
    b_c, b_n, b_c0, c_c0 = p.filt["C"], p.filt["N"], BLOCK_REDUCE[p.dtype], BLOCK_REDUCE[p.dtype]
    dy_c_ori = p.dy["C"] // run.groups
    if dy_c_ori == 0:
        raise ValueError(f"dy_shape C={p.dy['C']} must be at least groups={run.groups}")
    dx_c_extend = math.lcm(b_c, c_c0) // b_c
    dy_c_extend = math.lcm(dy_c_ori, BLOCK_SIZE) // dy_c_ori
    multiple_extend = min(math.lcm(dx_c_extend, dy_c_extend), run.groups)
    run.real_g = -(-run.groups // multiple_extend)
    ci1g = -(-(multiple_extend * b_c) // BLOCK_SIZE)
    co1g = -(-(multiple_extend * b_n // run.groups) // b_c0)
    weight_bytes = (ENLARGE_BUFFER_NUM * (co1g * p.filt["H"] * p.filt["W"] * ci1g * BLOCK_SIZE * b_c0)
                    * run.b_dtype_bytes + REG_SIZE)
    disable_group_enlarge = weight_bytes > p.platform.UB
    non_extended_dtype = p.dtype in EIGHT_BIT  # nonExtendedDtype: HIF8 / FP8 (and INT8) never enlarge
    if disable_group_enlarge or non_extended_dtype or is_need_tiling_hk_wk(p, run):
        multiple_extend = 1
        run.real_g = run.groups
        ci1g = -(-b_c // BLOCK_SIZE)
        co1g = -(-(b_n // run.groups) // b_c0)
    return multiple_extend, ci1g, co1g


def _check_params(p: Problem, run: RunInfo) -> None:
    """CheckParams / CheckParamsWithLog / CheckShapeValidWithLog with the arch35 limits."""
    _in_range("groups", run.groups, 1, GROUPS_UP)
    _in_range("filter_shape H (filter_h)", p.filt["H"], 1, K_DIM_UP)
    _in_range("filter_shape W (filter_w)", p.filt["W"], 1, K_DIM_UP)
    _in_range("filter_shape D (filter_d)", p.filt["D"], 1, K_DIM_BATCH_UP)
    _in_range("dy_shape N (batch)", p.dy["N"], 1, K_DIM_BATCH_UP)
    for axis, label in (("D", "dout"), ("H", "hout"), ("W", "wout")):
        _in_range(f"dy_shape {axis} ({label})", p.dy[axis], 1, K_DIM_UP)
    _in_range("dy_shape C (cout)", p.dy["C"], 1, K_DIM_UP)
    _in_range("dx_shape C (cin)", p.dx["C"], 1, K_DIM_UP)
    _in_range("dx_shape D (din)", p.dx["D"], 1, K_DIM_UP)
    _in_range("dx_shape H (hin)", p.dx["H"], 1, K_DIM_UP)
    _in_range("dx_shape W (win)", p.dx["W"], 1, K_DIM_UP)
    for i, axis in enumerate("DHW"):
        expanded = p.dy[axis] * p.strides[i]
        _in_range(f"dy_shape {axis} * stride_{axis.lower()} (out_backprop's {axis} after expands)", expanded, 1,
                  K_DIM_UP)
    if p.dy["C"] != p.filt["N"]:
        raise ValueError(f"dy_shape C={p.dy['C']} must equal filter_shape N (Cout)={p.filt['N']}")
    if p.dy["N"] != p.dx["N"]:
        raise ValueError(f"dy_shape N={p.dy['N']} must equal dx_shape N={p.dx['N']}")
    for i, axis in enumerate("DHW"):
        k_dil = (p.filt[axis] - 1) * (run.dilation_d, run.dilation_h, run.dilation_w)[i] + 1
        padded = p.dx[axis] + p.pads[2 * i] + p.pads[2 * i + 1]
        if k_dil > padded:
            raise ValueError(f"filter_{axis.lower()}_dilation = (filter_{axis.lower()} - 1) * dilation + 1 = "
                             f"{k_dil} must be at most dx {axis} + pads = {padded}")
    # CheckBackpropPadRange with kPadUpTmp = kDimUp
    for name, value in (("backprop pad_u", run.backprop_pad_u), ("backprop pad_l", run.backprop_pad_l),
                        ("backprop pad_d", run.backprop_pad_d), ("backprop pad_r", run.backprop_pad_r)):
        if value > K_DIM_UP:
            raise ValueError(f"{name}={value} must be at most {K_DIM_UP}")
    if p.dx["H"] * p.dx["W"] > UINT32_MAX:  # CheckAttrs: curL0CDstStride
        raise ValueError(f"dx H * W = {p.dx['H'] * p.dx['W']} must be at most {UINT32_MAX}")


def _set_init_output(p: Problem, run: RunInfo) -> None:
    """SetInitOutput: clear y first when some rows/planes of it receive no contribution."""
    k_dil = [(p.filt[a] - 1) * d + 1 for a, d in zip("DH", (run.dilation_d, run.dilation_h))]
    do_mod = (p.dx["D"] + run.pad_h + run.pad_t - k_dil[0]) % run.stride_d
    ho_mod = (p.dx["H"] + run.pad_u + run.pad_d - k_dil[1]) % run.stride_h
    if do_mod > run.pad_t or ho_mod > run.pad_d or run.stride_h > p.filt["H"] or run.dilation_d > 1:
        run.initOutputFlag = 1


def set_run_info_to_v2(p: Problem) -> RunInfo:
    """SetRunInfoToV2 (IsArchAfter35): every check, then the run info the templates share."""
    _check_attr_range(p)
    _check_dtype_format(p)
    nbytes = DTYPE_BYTES[p.dtype]
    run = RunInfo(a_dtype_bytes=nbytes, b_dtype_bytes=nbytes, c_dtype_bytes=nbytes, dtype=p.dtype,
                  outBackpropFormat=p.data_format, filterFormat=p.filter_format, yFormat=p.data_format,
                  groups=p.groups)
    run.stride_d, run.stride_h, run.stride_w = p.strides
    run.pad_h, run.pad_t, run.pad_u, run.pad_d, run.pad_l, run.pad_r = p.pads
    run.dilation_d, run.dilation_h, run.dilation_w = effective_dilations(p.filter_shape[2:], p.dilations)
    if p.enable_hf32 and p.dtype == "float32":  # GetImplMode: enable_hf32 counts for float32 only
        run.hf32_flag = 1
    _cal_groups(p, run)
    _check_cal_pads(p, (run.dilation_d, run.dilation_h, run.dilation_w))
    _cal_modify(p, run)
    multiple_extend, ci1g, co1g = _cal_real_g(p, run)
    _check_params(p, run)
    _set_init_output(p, run)

    c0 = BLOCK_REDUCE[p.dtype]
    run.dedy_cout1_g, run.dedx_cin1_g = co1g, ci1g
    run.batch_n = p.dy["N"]
    run.dedx_d, run.dedx_cin, run.dedx_h, run.dedx_w = p.dx["D"], p.dx["C"], p.dx["H"], p.dx["W"]
    run.dedx_cin1 = -(-p.dx["C"] // c0)
    run.dedy_d, run.dedy_cout, run.dedy_h, run.dedy_w = p.dy["D"], p.dy["C"], p.dy["H"], p.dy["W"]
    run.dedy_cout1 = -(-p.dy["C"] // c0)
    run.kernel_d, run.kernel_h, run.kernel_w = p.filt["D"], p.filt["H"], p.filt["W"]
    run.enlarge = multiple_extend
    run.dedy_cout_g = p.filt["N"] // run.groups * multiple_extend
    run.dedx_cin_g = p.filt["C"] * multiple_extend
    return run
