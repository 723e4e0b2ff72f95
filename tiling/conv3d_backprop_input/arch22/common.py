"""What both A2 tiling templates derive from a checked problem: the real generator's `runInfo_`.

Covers SetRunInfoToV2 (channel blocks, real_g, backprop pads, initOutputFlag, hf32), SetBackpropPadInfo, the
shared CalFmapH and AlignCout1 helpers, and the shape fields of the tiling struct (SetRunInfoTiling).
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.machine.formats import group_enlarge
from tiling.common.integers import ceil_div, max_divisor_at_most
from tiling.common.problem import ConvProblem

BLOCK_CUBE = 16  # cube fractal edge, and the cout padding unit of FRACTAL_Z_3D
PAD_MAX = 255


@dataclass(frozen=True)
class RunInfo:
    """The real generator's Conv3dBpInputV2RunInfo, under its field names."""

    batch_n: int
    dedy_cout: int
    dedy_cout1: int
    dedy_cout1_g: int
    dedy_d: int
    dedy_h: int
    dedy_w: int
    dedx_cin: int
    dedx_cin1: int
    dedx_cin1_g: int
    dedx_d: int
    dedx_h: int
    dedx_w: int
    kernel_d: int
    kernel_h: int
    kernel_w: int
    stride_d: int
    stride_h: int
    stride_w: int
    pad_h: int  # front (the real code names depth pads head/tail)
    pad_t: int  # back
    pad_u: int
    pad_d: int  # bottom
    pad_l: int
    pad_r: int
    dilation_d: int
    dilation_h: int
    dilation_w: int
    backprop_pad_h: int
    backprop_pad_t: int
    backprop_pad_u: int
    backprop_pad_d: int
    backprop_pad_l: int
    backprop_pad_r: int
    groups: int
    real_g: int
    hf32_flag: int
    init_output_flag: int
    dtype_bytes: int
    c0: int
    notes: tuple[str, ...] = ()

    @property
    def len_hkwk_c0(self) -> int:
        return self.kernel_h * self.kernel_w * self.c0

    @property
    def ho_expand(self) -> int:
        return (self.dedy_h - 1) * self.stride_h + 1

    def cal_fmap_h(self, m_l1: int) -> int:
        """CalFmapH: dilated-dy rows one L1 load of `m_l1` output pixels touches (capped at the dilated height)."""
        wi = max(1, self.dedx_w)
        m = max(1, m_l1)
        if m_l1 % wi == 0 or self.dedx_w % m == 0:
            hi_cal = ceil_div(m_l1, wi)
        elif m_l1 > self.dedx_w:
            hi_cal = m_l1 // wi + 2
        else:
            hi_cal = 2
        kh_dilation = (self.kernel_h - 1) * self.dilation_h + 1
        return min(hi_cal - 1 + kh_dilation, self.ho_expand)

    def load_b2_condition(self, base_k: int) -> int:
        """0: baseK/C0 < hk*wk, 1: baseK/C0 >= hk*wk, 2: hk*wk == 1 (no 180-degree reversal needed)."""
        hkwk = self.kernel_h * self.kernel_w
        if hkwk == 1:
            return 2
        return 1 if base_k // self.c0 >= hkwk else 0

    def kernel_split_shape(self) -> bool:
        """CheckKernelSplitEnable: the two video-GPT shapes the real code hard-wires to the kernel-split variant."""
        common = (self.batch_n == 1 and self.dedy_cout1 == 16 and (self.kernel_d, self.kernel_h, self.kernel_w)
                  == (4, 4, 4) and (self.stride_d, self.stride_h, self.stride_w) == (2, 2, 2)
                  and (self.pad_h, self.pad_t, self.pad_u, self.pad_d, self.pad_l, self.pad_r) == (3,) * 6
                  and (self.dilation_d, self.dilation_h, self.dilation_w) == (1, 1, 1))
        first = (self.real_g == 1 and (self.dedy_d, self.dedy_h, self.dedy_w) == (62, 66, 66)
                 and (self.dedx_d, self.dedx_cin1, self.dedx_h, self.dedx_w) == (120, 16, 128, 128))
        second = ((self.dedy_d, self.dedy_h, self.dedy_w) == (122, 130, 130)
                  and (self.dedx_d, self.dedx_cin1, self.dedx_h, self.dedx_w) == (240, 1, 256, 256))
        return common and (first or second)

    def knowledge_key(self) -> str:
        """The shape key of the real generator's hard-coded tiling tables."""
        values = (self.batch_n, self.dedy_d, self.dedy_cout1, self.dedy_h, self.dedy_w, self.dedx_d, self.dedx_cin1,
                  self.dedx_h, self.dedx_w, self.kernel_d, self.kernel_h, self.kernel_w, self.stride_d,
                  self.stride_h, self.stride_w, self.pad_h, self.pad_t, self.pad_u, self.pad_d, self.pad_l,
                  self.pad_r, self.dilation_d, self.dilation_h, self.dilation_w)
        return "_".join(str(v) for v in values)


def _init_output_flag(args: ConvProblem) -> int:
    """SetInitOutput: 1 when some dx rows or planes receive no contribution and must be pre-zeroed."""
    (_, _, di, hi, _), (_, _, kd, kh, _) = args.dx_shape, args.filter_shape
    sd, sh, _ = args.strides
    pf, pb, pu, pdn, _, _ = args.pads
    dd, dh, _ = args.dilations
    d_rest = (di + pf + pb - ((kd - 1) * dd + 1)) % sd
    h_rest = (hi + pu + pdn - ((kh - 1) * dh + 1)) % sh
    return int(d_rest > pb or h_rest > pdn or sh > kh or dd > 1)


def build_run_info(args: ConvProblem) -> RunInfo:
    """SetRunInfoToV2 for Conv3DBackpropInputV2 on arch22."""
    n, cout, dout, ho, wo = args.dy_shape
    _, cin, di, hi, wi = args.dx_shape
    _, _, kd, kh, kw = args.filter_shape
    sd, sh, sw = args.strides
    pf, pb, pu, pdn, pl, pr = args.pads
    dd, dh, dw = args.dilations
    c0 = args.c0
    enlarge = group_enlarge(args.groups, cin, cout, args.dtype)
    cout1_g, cin1_g = enlarge.cout1G, enlarge.cin1G

    # CalModifyBackpropPadD/HW: the context values (after-pads are the generic formula, depth tail clamped).
    bp_head = (kd - 1) * dd - pf
    bp_tail_ctx = max(di - dout * sd + pf, 0)
    bp_up = (kh - 1) * dh - pu
    bp_left = (kw - 1) * dw - pl
    bp_down_ctx = hi - ho * sh + pu
    bp_right_ctx = wi - wo * sw + pl

    # SetBackpropPadInfo: the exact after-pad that makes a stride-1 img2col yield exactly dx, when it fits 8 bits.
    def exact_after(size_in: int, size_out: int, stride: int, k: int, dil: int, before: int, fallback: int) -> int:
        value = size_in - ((size_out - 1) * stride + 1) + (k - 1) * dil - before
        return value if 0 <= value <= PAD_MAX else fallback

    return RunInfo(
        batch_n=n, dedy_cout=cout, dedy_cout1=ceil_div(cout, c0), dedy_cout1_g=cout1_g, dedy_d=dout, dedy_h=ho,
        dedy_w=wo, dedx_cin=cin, dedx_cin1=ceil_div(cin, c0), dedx_cin1_g=cin1_g, dedx_d=di, dedx_h=hi, dedx_w=wi,
        kernel_d=kd, kernel_h=kh, kernel_w=kw, stride_d=sd, stride_h=sh, stride_w=sw,
        pad_h=pf, pad_t=pb, pad_u=pu, pad_d=pdn, pad_l=pl, pad_r=pr, dilation_d=dd, dilation_h=dh, dilation_w=dw,
        backprop_pad_h=bp_head,
        backprop_pad_t=exact_after(di, dout, sd, kd, dd, bp_head, bp_tail_ctx),
        backprop_pad_u=bp_up,
        backprop_pad_d=exact_after(hi, ho, sh, kh, dh, bp_up, bp_down_ctx),
        backprop_pad_l=bp_left,
        backprop_pad_r=exact_after(wi, wo, sw, kw, dw, bp_left, bp_right_ctx),
        groups=args.groups, real_g=enlarge.real_g,
        hf32_flag=int(args.enable_hf32 and args.dtype == "float32"),
        init_output_flag=_init_output_flag(args),
        dtype_bytes=args.dtype_bytes, c0=c0,
    )


def shape_fields(run: RunInfo) -> dict[str, int]:
    """SetRunInfoTiling: the problem-describing fields of TConv3DInputV2Tiling."""
    return dict(
        batch=run.batch_n, cin=run.dedx_cin, cout=run.dedy_cout, cout1=run.dedy_cout1, cin1=run.dedx_cin1,
        cout1G=run.dedy_cout1_g, cin1G=run.dedx_cin1_g, c0=run.c0, c0Bits=4 if run.dtype_bytes == 2 else 3,
        dout=run.dedy_d, ho=run.dedy_h, wo=run.dedy_w, di=run.dedx_d, hi=run.dedx_h, wi=run.dedx_w,
        dk=run.kernel_d, hk=run.kernel_h, wk=run.kernel_w, group=run.real_g,
        strideD=run.stride_d, strideH=run.stride_h, strideW=run.stride_w,
        padFront=run.pad_h, padBack=run.pad_t, padUp=run.pad_u, padDown=run.pad_d, padLeft=run.pad_l,
        padRight=run.pad_r, backpropPadTail=run.backprop_pad_t, backpropPadUp=run.backprop_pad_u,
        backpropPadDown=run.backprop_pad_d, backpropPadLeft=run.backprop_pad_l,
        backpropPadRight=run.backprop_pad_r, dilationD=run.dilation_d, dilationH=run.dilation_h,
        dilationW=run.dilation_w, hf32Flag=run.hf32_flag, initOutputFlag=run.init_output_flag,
    )


def align_cout1(cout1_a: int, cout1_b: int, adapt_fp32: bool, c0: int) -> tuple[int, int]:
    """AlignCout1: make the A and B channel counts divide one another (fp32 keeps B in 16-channel units)."""
    if cout1_a == cout1_b:
        return cout1_a, cout1_b
    if cout1_b > cout1_a:
        return max_divisor_at_most(cout1_b, cout1_a, 1), cout1_b
    if not adapt_fp32:
        return cout1_a, max_divisor_at_most(cout1_a, cout1_b, 1)
    temp_a = cout1_a
    while temp_a % cout1_b > 0:
        temp_a -= 1
    product_shrunk_a = temp_a * cout1_b
    temp_b = max_divisor_at_most(cout1_a, cout1_b, BLOCK_CUBE // c0)
    if temp_b == 0:
        return temp_a, cout1_b
    if temp_b * cout1_a > product_shrunk_a:
        return cout1_a, temp_b
    return temp_a, cout1_b


@dataclass
class TilingValue:
    """The real generator's TilingValue: the split and block part of the tiling (also the knowledge-map row)."""

    coreNum: int = 1
    batchDim: int = 1
    groupDim: int = 1
    mDim: int = 1
    kDim: int = 1
    nDim: int = 1
    dDim: int = 1
    singleCoreBatch: int = 1
    singleCoreGroup: int = 1
    singleCoreM: int = 1
    singleCoreCout: int = 1
    singleCoreCout1: int = 1
    singleCoreCin: int = 1
    singleCoreCin1: int = 1
    singleCoreDin: int = 1
    singleCoreHo: int = 1
    al0Pbuffer: int = 1
    bl0Pbuffer: int = 1
    cl0Pbuffer: int = 1
    al1Pbuffer: int = 1
    bl1Pbuffer: int = 1
    baseM: int = 1
    baseK: int = 1
    baseN: int = 1
    baseD: int = 1
    baseBatch: int = 1
    baseGroup: int = 1
    stepM: int = 1
    stepN: int = 1
    stepKa: int = 1
    stepKb: int = 1
    stepBatch: int = 1
    stepGroup: int = 1
    iterateOrder: int = 1

    PARAM_NAMES = ("batchDim", "groupDim", "mDim", "kDim", "nDim", "dDim", "coreNum")

    def params(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.PARAM_NAMES}

    def tiling_fields(self) -> dict[str, int]:
        return {name: value for name, value in vars(self).items() if name not in self.PARAM_NAMES}
