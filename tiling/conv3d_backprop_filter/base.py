"""The open parts of the real dw base template (Conv3DBackpropFilterV2Tiling, priority 1) and of InitTilingValue,
which the basic-block template also runs (conv3d_backprop_filter_v2_base_tiling.cpp).

InitTilingValue has two sources for the core split and blocks: its own open rule (CalCoreDimTiling +
CalBaseBlockTiling, tried only for bf16 on 20-core chips with real_g == 1 and no depth dilation) and the closed TBE
cache tiling (`GetTbeTiling`), whose answer it converts (InitCalTilingValue). Both are ported here; the TBE answer
itself is an input (`TbeTiling`), which this project makes with its own rule (tbe_rule.py).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from ascend_sim.machine.platform import Platform
from tiling.common.integers import align_up as ceil_align
from tiling.common.integers import ceil_div
from tiling.common.tbe_rule import TbeTiling
from tiling.conv3d_backprop_filter.run_info import BLOCK_CUBE, RunInfo

DB_ON = 2
CORE_NUM_910B3 = 20
CORE_NUM_910B2 = 24
CORE_USED_THRESHOLD = np.float32(0.8)
MIN_BATCHDIM = 4
BEST_BASE_M, BEST_BASE_K, BEST_BASE_N = 128, 128, 256
SECOND_BASE_M, SECOND_BASE_K, SECOND_BASE_N = 64, 64, 512
MIN_STEPK = 2
ROW_NUM = 2
U32 = 2**32 - 1


@dataclass
class TilingValue:
    """TilingValueDw: what InitTilingValue decides (the split, the single-core shape, blocks, steps, buffers)."""

    batchDim: int = 0
    groupDim: int = 0
    dkDim: int = 0
    mDim: int = 0
    kDim: int = 0
    nDim: int = 0
    singleCoreBatch: int = 0
    singleCoreGroup: int = 0
    singleCoreDk: int = 0
    singleCoreCout: int = 0
    singleCoreCin: int = 0
    singleCoreHo: int = 0
    al0Pbuffer: int = 0
    bl0Pbuffer: int = 0
    cl0Pbuffer: int = 0
    al1Pbuffer: int = 0
    bl1Pbuffer: int = 0
    baseM: int = 0
    baseK: int = 0
    baseN: int = 0
    stepM: int = 0
    stepN: int = 0
    stepKa: int = 0
    stepKb: int = 0
    iterateOrder: int = 0
    bl1Bound: int = 0

    PARAMS = ("batchDim", "groupDim", "dkDim", "mDim", "kDim", "nDim")

    def params(self) -> dict:
        """SetTilingValue's params part."""
        return {name: getattr(self, name) for name in self.PARAMS}

    def tiling_fields(self) -> dict:
        """SetTilingValue's dwTiling part."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in self.PARAMS}


@dataclass
class CoreDim:
    """CoreDimDw."""

    batchDim: int = 1
    dDim: int = 1
    mDim: int = 1
    kDim: int = 1
    nDim: int = 1


# (N, Do, Co1, Ho, Wo, Ci1, Hi, Wi, Dk, Hk, Wk, strides, pads, dilations) -> TilingValueDw, copied as data from the
# real TILINGDATA_MAP_B3 / TILINGDATA_MAP_B2 (fp16/bf16 only; the lookup is skipped for fp32).
_MAP_KEY_B3_1 = "16_20_4_128_128_4_130_130_3_3_3_1_1_1_0_0_0_0_0_0_1_1_1"
_MAP_KEY_B3_2 = "16_20_8_64_64_8_66_66_3_3_3_1_1_1_0_0_0_0_0_0_1_1_1"
_MAP_KEY_B2_1 = "8_20_1_128_128_4_130_130_3_3_3_1_1_1_0_0_0_0_0_0_1_1_1"
_MAP_KEY_TMP = "1_1_1_27_4_1_1_1_336_135_26_53_4_52_151_151_253_253_140_140_1_3_3"
KNOWLEDGE_MAPS = {
    CORE_NUM_910B3: {
        _MAP_KEY_B3_1: (20, 1, 1, 1, 1, 1, 16, 1, 1, 64, 192, 128, 2, 2, 1, 2, 2, 64, 64, 256, 1, 1, 8, 8, 1, 98304),
        _MAP_KEY_B3_2: (20, 1, 1, 1, 1, 1, 16, 1, 1, 128, 384, 64, 2, 2, 1, 2, 2, 128, 64, 256, 1, 1, 4, 4, 1,
                        131072),
    },
    CORE_NUM_910B2: {
        _MAP_KEY_B2_1: (2, 1, 1, 1, 6, 2, 80, 1, 1, 16, 96, 22, 2, 2, 2, 2, 1, 16, 16, 864, 1, 1, 176, 44, 1, 112320),
    },
}


def gcd(a: int, b: int) -> int:
    """MathUtil::GetGcd: 0 when either is 0 (std::gcd would answer the other)."""
    return 0 if a == 0 or b == 0 else int(np.gcd(a, b))


def knowledge_key(run: RunInfo) -> str:
    values = (run.batch, run.dout, run.cout1_g, run.ho, run.wo, run.cin1_g, run.hi, run.wi, run.kd, run.kh, run.kw,
              run.stride_d, run.stride_h, run.stride_w, run.pad_f, run.pad_b, run.pad_u, run.pad_d, run.pad_l,
              run.pad_r, run.dilation_d, run.dilation_h, run.dilation_w)
    return "_".join(str(v) for v in values)


def calc_hi(ho: int, stride_h: int, kernel_h_dilation: int, ori_hi: int) -> int:
    return min((ho - 1) * stride_h + kernel_h_dilation, ori_hi)


def calc_ho(k: int, wo: int) -> int:
    """CalcHo: rows of dy that k consecutive dy pixels can touch (one more when k does not tile rows)."""
    ho = ceil_div(k, wo)
    return ho if k % wo == 0 or wo % k == 0 else ho + 1


class BaseTemplate:
    """InitTilingValue and the base template's SetDwTilingFromTbeTiling for one problem on one platform."""

    def __init__(self, run: RunInfo, platform: Platform, tbe: TbeTiling):
        self.run, self.platform, self.tbe = run, platform, tbe
        self.c0 = run.k0
        self.dtype_byte = run.dtype_bytes
        self.l1_size = platform.usable_L1  # L1_SIZE: 512 KiB less the 128-byte KFC reserve
        self.used_tbe = False  # whether the answer took the TBE dims / blocks
        self.source = ""

    # --- the open core split (CalCoreDimTiling) ----------------------------------------------------------------
    def get_core_dim(self, cores: int) -> CoreDim:
        run, core_dim = self.run, CoreDim()
        factors = sorted((f for f in range(1, cores + 1) if cores % f == 0), reverse=True)

        def dim_factor(value: int) -> int:
            return next((f for f in factors if value % f == 0), 1)

        d_max = dim_factor(run.dout)
        b_max = dim_factor(run.batch)
        bd_max = dim_factor(d_max * b_max)
        if bd_max < MIN_BATCHDIM:
            return core_dim
        if (d_max * b_max) % cores == 0:
            core_dim.dDim, core_dim.batchDim = d_max, cores // d_max
            return core_dim
        remain = cores // bd_max
        max_k = run.ho * run.wo
        max_n = run.ci1 * BLOCK_CUBE * run.kd * run.kh * run.kw
        best_k = BEST_BASE_K // self.dtype_byte
        iter_k, iter_n = ceil_div(max_k, best_k), ceil_div(max_n, BEST_BASE_N)
        single_ho = ceil_div(run.ho, remain)
        k_dim = ceil_div(run.ho, single_ho)
        single_cin = ceil_div(run.cin1_g, remain) * BLOCK_CUBE
        n_dim = ceil_div(run.cin1_g * BLOCK_CUBE, single_cin)
        k_split = max_k >= remain * best_k and run.ho >= remain and k_dim == remain
        n_split = max_n >= remain * BEST_BASE_N and run.ci1 >= remain and n_dim == remain
        order = (("k", k_split), ("n", n_split)) if iter_k >= iter_n else (("n", n_split), ("k", k_split))
        for axis, ok in order:
            if ok:
                core_dim.dDim = gcd(d_max, bd_max)  # GetBatchDim
                core_dim.batchDim = bd_max // core_dim.dDim
                setattr(core_dim, f"{axis}Dim", remain)
                break
        return core_dim

    def set_tiling_param_by_dim_info(self, t: TilingValue, cd: CoreDim) -> None:
        run = self.run
        t.singleCoreBatch = ceil_div(run.batch, cd.batchDim) * ceil_div(run.dout, cd.dDim)
        t.singleCoreGroup = 1
        t.singleCoreDk = 1
        t.singleCoreCout = ceil_div(run.cout1_g, cd.mDim) * BLOCK_CUBE
        t.singleCoreHo = ceil_div(run.ho, cd.kDim)
        single_cin = ceil_div(run.cin1_g, cd.nDim) * BLOCK_CUBE
        t.singleCoreCin = single_cin * run.kd
        t.batchDim = cd.batchDim * cd.dDim
        t.groupDim = 1
        t.dkDim = 1
        t.mDim = ceil_div(run.cout1_g * BLOCK_CUBE, t.singleCoreCout)
        t.kDim = ceil_div(run.ho, t.singleCoreHo)
        t.nDim = ceil_div(run.cin1_g * BLOCK_CUBE, single_cin)

    def cal_core_dim_tiling(self, t: TilingValue) -> bool:
        """CalCoreDimTiling; answers enableTbeBlock (use at least 80 % of the cores, else TBE decides)."""
        cores = self.run.core_num
        self.set_tiling_param_by_dim_info(t, self.get_core_dim(cores))
        used = t.batchDim * t.mDim * t.kDim * t.nDim
        return used < int(np.float32(cores) * CORE_USED_THRESHOLD) or used > cores

    # --- the open blocks (CalBaseBlockTiling) ------------------------------------------------------------------
    def check_l0_size(self, base_m: int, base_n: int, base_k: int) -> bool:
        return (base_m * base_k * self.dtype_byte * DB_ON <= self.platform.L0A
                and base_n * base_k * self.dtype_byte * DB_ON <= self.platform.L0B)

    def cal_cin(self, n_l1_size: int) -> int:
        """CalCin: channels of x one B1 load of n_l1_size columns needs, with the rows a tail can straddle."""
        kernel_hw = self.run.kh * self.run.kw
        bl1_n = ceil_div(n_l1_size, self.c0)
        ci = ceil_div(bl1_n, kernel_hw)
        if kernel_hw > bl1_n:
            extend = 1 if kernel_hw % bl1_n else 0
        elif bl1_n % kernel_hw == 0:
            extend = 0
        elif 2 * bl1_n % kernel_hw == 0:  # a tail of half a row
            extend = 1
        else:
            extend = ROW_NUM
        return (ci + extend) * self.c0

    def cal_bl1_bound(self, t: TilingValue) -> int:
        run = self.run
        ho_cal = calc_ho(t.baseK * t.stepKb, run.wo)
        hi_cal = calc_hi(ho_cal, run.stride_h, (run.kh - 1) * run.dilation_h + 1, run.hi)
        return hi_cal * run.wi * self.cal_cin(t.baseN * t.stepN)

    def update_base_step(self, t: TilingValue) -> tuple[int, int]:
        """UpdateBaseStep: split L1 between A and B in proportion to their whole single-core sizes (float32 as
        in the real code), then the K steps each side holds, nested (one a multiple of the other)."""
        run = self.run
        amat = t.singleCoreHo * run.wo * t.baseM * t.stepM
        ci = self.cal_cin(t.baseN * t.stepN)
        kernel_h_dilation = (run.kh - 1) * run.dilation_h + 1
        bmat = run.wi * ci * calc_hi(t.singleCoreHo, run.stride_h, kernel_h_dilation, run.hi)
        ab_ratio = np.float32(amat) / np.float32(amat + bmat)
        l1 = np.float32(self.l1_size)
        al1 = int(l1 * ab_ratio) // t.al1Pbuffer
        bl1 = int(l1 * (np.float32(1) - ab_ratio)) // t.bl1Pbuffer
        wo_m_bytes = run.wo * t.baseM * t.stepM * self.dtype_byte
        ho_a1 = max(1, al1 // max(wo_m_bytes, 1)) & U32
        step_ka = max(MIN_STEPK, ho_a1 * run.wo // t.baseK)
        hi = max(1, bl1 // (run.wi * ci * self.dtype_byte)) & U32
        # uint32 arithmetic as in C: a negative difference wraps around (and then selects the longest load)
        rows = ((hi - 1 - (run.kh - 1) * run.dilation_h) & U32) // run.stride_h
        ho_b1 = max(1, (rows + 1) & U32) & U32
        step_kb = max(MIN_STEPK, ho_b1 * run.wo // t.baseK)
        max_k_iter = ceil_div(t.singleCoreHo * run.wo, t.baseK)
        step_ka, step_kb = min(max_k_iter, step_ka), min(max_k_iter, step_kb)
        if step_ka > step_kb:
            step_ka = step_ka // step_kb * step_kb
        else:
            step_kb = step_kb // step_ka * step_ka
        return step_ka, step_kb

    def update_base_block(self, t: TilingValue) -> tuple[int, int, int]:
        """UpdateBaseBlock: the best block shrunk to the single-core shape, baseK grown while M and N are small."""
        run = self.run
        max_k = t.singleCoreHo * run.wo
        max_n = t.singleCoreCin * run.kh * run.kw
        base_k = BEST_BASE_K // self.dtype_byte
        base_m = BEST_BASE_M if t.singleCoreCout > BEST_BASE_M else t.singleCoreCout
        base_n = BEST_BASE_N if max_n > BEST_BASE_N else max_n
        for num in (2, 4, 8):
            if base_m * num <= BEST_BASE_N and base_n * num <= BEST_BASE_N:
                grown = BEST_BASE_K // self.dtype_byte * num
                base_k = grown if max_k > grown else ceil_align(max_k, BLOCK_CUBE)
        if base_m <= SECOND_BASE_M and max_k < max_n and SECOND_BASE_N <= max_n:
            second = SECOND_BASE_K // self.dtype_byte
            base_k = second if max_k > second else ceil_align(max_k, BLOCK_CUBE)
            base_n = SECOND_BASE_N if max_n > SECOND_BASE_N else max_n
        return base_m, base_k, base_n

    def cal_base_block_tiling(self, t: TilingValue) -> bool:
        t.al0Pbuffer = t.bl0Pbuffer = DB_ON
        t.cl0Pbuffer = 1
        t.al1Pbuffer = t.bl1Pbuffer = DB_ON
        t.iterateOrder = 1
        t.stepM = t.stepN = 1
        t.baseM, t.baseK, t.baseN = self.update_base_block(t)
        t.stepKa, t.stepKb = self.update_base_step(t)
        bl1_bound = self.cal_bl1_bound(t)
        t.bl1Bound = bl1_bound & U32  # the uint32 field keeps the low bits; the L1 check uses all of them
        l1_used = (bl1_bound * t.bl1Pbuffer * self.dtype_byte
                   + t.stepM * t.baseM * t.baseK * t.stepKa * t.al1Pbuffer * self.dtype_byte)
        return self.check_l0_size(t.baseM, t.baseN, t.baseK) and l1_used < self.l1_size

    # --- InitTilingValue ---------------------------------------------------------------------------------------
    def init_tiling_value(self) -> TilingValue:
        run = self.run
        t = TilingValue()
        enable_tbe_block = True
        if run.dtype == "bfloat16" and run.core_num == CORE_NUM_910B3 and run.real_g == 1 and run.dilation_d == 1:
            enable_tbe_block = self.cal_core_dim_tiling(t)
        if not enable_tbe_block and self.cal_base_block_tiling(t):
            self.source = "open CalCoreDimTiling + CalBaseBlockTiling"
            return t
        self.used_tbe = True
        self.source = "TBE dims and blocks (InitCalTilingValue)"
        self.split_from_tbe(t)
        self.init_cal_tiling_value(t)
        return t

    def split_from_tbe(self, t: TilingValue) -> TilingValue:
        """InitTilingValue's TBE branch up to InitCalTilingValue: the core split and single-core shape."""
        run, tbe, c0 = self.run, self.tbe, self.c0
        t.singleCoreBatch = ceil_div(run.batch, tbe.batch_dim) * ceil_div(run.dout, tbe.d_dim)
        t.singleCoreGroup = ceil_div(run.real_g, tbe.group_dim)
        if run.real_g > 1 or run.dilation_d > 1:  # group > 1: cin is per group and cannot merge with dk
            t.dkDim = gcd(tbe.n_dim, run.kd)
            t.singleCoreDk = ceil_div(run.kd, t.dkDim)
            n_dim = tbe.n_dim // t.dkDim
            t.singleCoreCin = ceil_div(run.cin1_g, n_dim) * c0
            t.nDim = ceil_div(run.cin1_g * c0, t.singleCoreCin)
        else:
            t.dkDim = 1
            t.singleCoreDk = 1
            t.singleCoreCin = ceil_div(run.cin1_g * run.kd, tbe.n_dim) * c0
            t.nDim = ceil_div(run.cin1_g * c0 * run.kd, t.singleCoreCin)
        t.singleCoreCout = ceil_align(ceil_div(run.cout1_g, tbe.m_dim) * c0, BLOCK_CUBE)
        t.mDim = ceil_div(run.cout1_g * c0, t.singleCoreCout)
        t.singleCoreHo = ceil_div(run.ho, tbe.k_dim)
        batch_dout_single_core = ceil_div(run.batch, tbe.batch_dim) * (run.dout // tbe.d_dim)
        t.batchDim = ceil_div(run.batch * run.dout, batch_dout_single_core)
        t.groupDim = tbe.group_dim
        t.kDim = ceil_div(run.ho, t.singleCoreHo)
        return t

    def init_cal_tiling_value(self, t: TilingValue) -> None:
        """InitCalTilingValue: the TBE blocks in elements, with the real fixes for loads that hold all of K."""
        tbe, run = self.tbe, self.run
        t.baseM = tbe.m_l0 * BLOCK_CUBE
        t.baseK = tbe.k_l0 * run.k0
        t.baseN = tbe.n_l0 * BLOCK_CUBE
        t.stepM = tbe.m_al1
        t.stepN = tbe.n_bl1
        t.stepKa = tbe.k_al1 // tbe.k_l0
        t.stepKb = tbe.k_bl1 // tbe.k_l0
        t.al0Pbuffer = t.bl0Pbuffer = DB_ON
        t.cl0Pbuffer, t.al1Pbuffer, t.bl1Pbuffer = tbe.db_l0c, tbe.db_al1, tbe.db_bl1
        k_iter = ceil_div(t.singleCoreHo * run.wo, t.baseK)
        if t.al1Pbuffer > 1 and t.stepKa >= k_iter:
            t.al1Pbuffer = 1
        if t.bl1Pbuffer > 1 and t.stepKb >= k_iter:
            t.bl1Pbuffer = 1
        # The real "temporary fix": when B1 cannot hold all of K, stepN > 1 would not be used; set it to 1.
        if t.stepN > 1 and ceil_div(k_iter, t.stepKb) > t.bl1Pbuffer:
            t.stepN = 1
        t.iterateOrder = 1
        t.bl1Bound = self.cal_bl1_bound(t) & U32

    # --- the base template's DoLibApiTiling --------------------------------------------------------------------
    def set_dw_tiling_from_tbe_tiling(self) -> TilingValue:
        run = self.run
        if run.k0 != BLOCK_CUBE:  # fp32: no hard-coded shapes
            return self.init_tiling_value()
        key = knowledge_key(run)
        entry = KNOWLEDGE_MAPS.get(run.core_num, {}).get(key)
        if entry is not None:
            self.source = f"knowledge map ({run.core_num} cores) {key}"
            return TilingValue(*entry)
        t = self.init_tiling_value()
        if key == _MAP_KEY_TMP:
            t = replace(t, stepN=390)  # TILINGDATA_MAP_TMP: the real code forces stepN=390 for this one shape
            self.source += "; stepN=390 from TILINGDATA_MAP_TMP"
        return t
