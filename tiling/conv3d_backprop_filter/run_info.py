"""What both dw templates derive from a checked problem: the real generator's `Conv3dBpFilterV2RunInfo`.

Covers the derived values of SetConv3dBpFilterV2RunInfo (C0, channel blocks, the group enlargement mag_factor and
real_g, hf32) and the shape/attribute fields every tiling carries (SetShapeTiling, SetAttrTiling).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tiling.common.integers import align_up as ceil_align
from tiling.common.integers import ceil_div
from tiling.common.problem import ConvProblem

BLOCK_CUBE = 16


@dataclass(frozen=True)
class RunInfo:
    """Conv3dBpFilterV2RunInfo under its real field names, plus the dtype, core count and deterministic flag."""

    batch: int
    co: int
    ci: int
    cout1_g: int
    cin1_g: int
    dout: int
    wo: int
    ho: int
    wi: int
    hi: int
    di: int
    kw: int
    kh: int
    kd: int
    real_g: int
    stride_w: int
    stride_h: int
    stride_d: int
    pad_l: int
    pad_r: int
    pad_u: int
    pad_d: int
    pad_f: int
    pad_b: int
    dilation_w: int
    dilation_h: int
    dilation_d: int
    ci1: int
    groups: int
    mag_factor: int
    k0: int
    hf32_flag: int
    dtype: str
    dtype_bytes: int
    core_num: int
    deterministic: bool

    @property
    def split_dk(self) -> bool:
        """Group > 1, depth dilation or deterministic mode: the kernel depth is its own core axis."""
        return self.real_g > 1 or self.dilation_d > 1 or self.deterministic


def _mag_factor(ci: int, co: int, groups: int, k0: int) -> int:
    """CalculateMagFactor: groups merged into one so that a merged group's cin and cout fill whole C0 blocks."""
    if groups == 1:
        return 1
    cin_g, cout_g = ci // groups, co // groups
    factor0 = math.lcm(cin_g, k0) // cin_g
    factor1 = math.lcm(cout_g, BLOCK_CUBE) // cout_g
    return min(math.lcm(factor0, factor1), groups)


def build_run_info(args: ConvProblem) -> RunInfo:
    n, ci, di, hi, wi = args.x_shape
    _, co, dout, ho, wo = args.dy_shape
    _, _, kd, kh, kw = args.filter_shape
    groups = args.groups
    k0 = 8 if args.dtype == "float32" else 16
    mag = _mag_factor(ci, co, groups, k0)
    real_g = ceil_div(groups, mag)
    if args.dtype == "float32":
        cin1_g = ceil_div(mag * ci // groups, k0)
        cout1_g = ceil_align(mag * co // groups, BLOCK_CUBE) // k0
    else:
        cin1_g = ceil_div(mag * ci // groups, k0)
        cout1_g = ceil_div(mag * co // groups, k0)
    pf, pb, pu, pdn, pl, pr = args.pads
    sd, sh, sw = args.strides
    dd, dh, dw = args.dilations
    return RunInfo(
        batch=n, co=co, ci=ci, cout1_g=cout1_g, cin1_g=cin1_g, dout=dout, wo=wo, ho=ho, wi=wi, hi=hi, di=di,
        kw=kw, kh=kh, kd=kd, real_g=real_g, stride_w=sw, stride_h=sh, stride_d=sd, pad_l=pl, pad_r=pr, pad_u=pu,
        pad_d=pdn, pad_f=pf, pad_b=pb, dilation_w=dw, dilation_h=dh, dilation_d=dd, ci1=ceil_div(ci, k0),
        groups=groups, mag_factor=mag, k0=k0, hf32_flag=int(args.enable_hf32), dtype=args.dtype,
        dtype_bytes=args.dtype_bytes, core_num=args.platform.aic_cores, deterministic=args.deterministic)


def shape_attr_fields(run: RunInfo, l1_size: int) -> tuple[dict, dict]:
    """SetShapeTiling + SetAttrTiling: (params fields, dwTiling fields) every template writes the same way."""
    params = {"totalL1Size": l1_size}
    dwt = {
        "batch": run.batch, "cout": run.co, "cin": run.ci, "cout1G": run.cout1_g, "cin1G": run.cin1_g,
        "dout": run.dout, "wo": run.wo, "ho": run.ho, "wi": run.wi, "hi": run.hi, "di": run.di, "wk": run.kw,
        "hk": run.kh, "dk": run.kd,
        "channelSize": run.k0, "m0": BLOCK_CUBE, "n0": BLOCK_CUBE, "k0": run.k0, "hf32Flag": run.hf32_flag,
        "group": run.real_g, "strideW": run.stride_w, "strideH": run.stride_h, "strideD": run.stride_d,
        "padLeft": run.pad_l, "padRight": run.pad_r, "padUp": run.pad_u, "padDown": run.pad_d,
        "padFront": run.pad_f, "padBack": run.pad_b, "dilationW": run.dilation_w, "dilationH": run.dilation_h,
        "dilationD": run.dilation_d,
    }
    return params, dwt
