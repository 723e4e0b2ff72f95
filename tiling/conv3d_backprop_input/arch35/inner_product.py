"""Conv3DDXV2InnerProductTiling (priority 101, the catch-all): the arch35 basic-block tiling, branch by branch.

Port of `op_host/op_tiling/arch35/conv3d_backprop_input_v2_inner_product_tiling.cpp` (hicann/ops-nn @ e5c3fa93).
Method names are the C++ ones in snake_case; each docstring names the original. The other five templates derive
from this class and override a few steps, as in the real code. The knowledge-base lookup (GetTilingFromRepo) is
modelled as a miss: it only hits for a matching SoC version string, which the UT vectors never have.
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform
from tiling.conv3d_backprop_input.arch35.common import (B2_NO_TRANSPOSE_NO_REVERSE, B2_REVERSE_ONLY,
                                                        B2_TRANSPOSE_AND_REVERSE, B2_TRANSPOSE_ONLY,
                                                        BASIC_BLOCK_SIZE_16, BASIC_BLOCK_SIZE_64, BASIC_BLOCK_SIZE_128,
                                                        BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_512, BYTE_64, BYTE_BLOCK,
                                                        C04_COUT_SIZE, MAX_BASE_MN, ONE_BLOCK_SIZE,
                                                        TOTAL_CNT_LOWER_RATIO, TOTAL_CNT_UPPER_RATIO, UINT16_MAX,
                                                        VECTOR_REG_WIDTH, CoreTilingParams, L0TilingParams,
                                                        L1TilingParams, PlatformInfo, TilingInfeasible, TilingRunInfo,
                                                        al1_bytes, align_up, bl1_bytes, ceil_div, floor_align, fmap_h,
                                                        hk_wk_aligned, max_divisor_at_most)
from tiling.conv3d_backprop_input.arch35.context_utils import PAD_DIM_UP, Problem, RunInfo, set_run_info_to_v2
from tiling.conv3d_backprop_input.arch35.model import FIELDS, tiling_key

TILING_GROUP_MODE_ORIGIN = 0
TILING_GROUP_MODE_ENLARGE = 1
WORKSIZE = 16 * 1024 * 1024
DB_ON, DB_OFF = 2, 1
BLOCK_CUBE = 16
FP32_DATA_SIZE = 4
NUM_THREE = 3
NUM_FIVE = 5
MAX_K_VALUE_SPLIT_K = 32768
MAX_K_VALUE_TILING_KERNEL = 8192
MAX_K_VALUE_FP32_DN = 2048

NO_TILING_HWK, TILING_HK, TILING_HK_WK = 0, 1, 2
ENABLE_C04, ENABLE_TILING_HK, ENABLE_TILING_HK_WK, ENABLE_SMALL_KERNEL = 1, 2, 3, 4
F8_C0_BITS, F16_C0_BITS, F32_C0_BITS = 5, 4, 3
BIT8_DATA_SIZE = 1
MAX_UINT16 = 65535
SINGLE_CORE_DIN_SIZE = 1

# Reset(): the fields it sets to 1 (enableFullLoad and quantMode to 0); the rest of the zero-initialised struct
# stays 0 until a Set* call writes it.
_RESET_TO_ONE = set("""batchDim groupDim mDim kDim nDim dDim coreNum al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer
bl1Pbuffer iterateOrder c0 c0BitsA c0BitsB enlarge hf32Flag initOutputFlag isBiasFullLoad enableVecTrans batch cin
cout cinG coutG cout1 cin1 cout1G cin1G dout ho wo di hi wi dk hk wk group oriGroup strideD strideH strideW padFront
padBack padUp padDown padLeft padRight backpropPadTail backpropPadUp backpropPadDown backpropPadLeft backpropPadRight
dilationD dilationH dilationW singleCoreGroup singleCoreCout singleCoreCin singleCoreDin baseM baseK baseN stepKa
stepKb singleIterateDk singleCoreBatch singleCoreM""".split())


class TemplateNotCapable(Exception):
    """IsCapable() said no: GRAPH_PARAM_INVALID, the registry tries the next template."""


class InnerProductTiling:
    """Conv3DDXV2InnerProductTiling."""

    PRIORITY = 101
    NAME = "Conv3DDXV2InnerProductTiling"

    def __init__(self, problem: Problem):
        self.problem = problem
        self.platform: Platform = problem.platform
        self.data: dict[str, int] = {name: (1 if name in _RESET_TO_ONE else 0) for name, _ in FIELDS}
        self.loadB2Condition = 0
        self.loadB1Condition = 0
        self.kernelSplitMode = 0
        self.groupConvMode = TILING_GROUP_MODE_ORIGIN
        self.isBiasFullLoad = 0
        self.singleIterateDk = 1
        self.tilingRunInfo = TilingRunInfo()
        self.platformInfo = PlatformInfo(l0_ab_size=self.platform.L0A, l0_c_size=self.platform.L0C,
                                         l1_size=self.platform.L1, ub_size=self.platform.UB)
        self.coreNum = self.platform.aic_cores
        self.workspace_size = 0

    # ---------------------------------------------------------------- DoTiling
    def do_tiling(self) -> None:
        """TilingBaseClass::DoTiling: raises TemplateNotCapable (try the next template) or TilingInfeasible."""
        self.get_shape_attrs_info()
        if not self.is_capable():
            raise TemplateNotCapable(self.NAME)
        self.do_lib_api_tiling()
        self.get_workspace_size()
        self.post_tiling()

    def is_capable(self) -> bool:
        """IsCapable: the catch-all (GetTilingFromRepo modelled as a miss)."""
        return True

    # ------------------------------------------------------- GetShapeAttrsInfo
    def get_shape_attrs_info(self) -> None:
        """GetShapeAttrsInfo: the run info, the M/N/K extents, the kernel-split (HkWk) mode, group mode, C04."""
        self.get_public_shape_attrs_info()
        t, run = self.tilingRunInfo, self.run
        t.m0 = BLOCK_CUBE
        t.n0 = BLOCK_CUBE
        t.k0 = self.blockSize
        t.mValue = align_up(run.dedx_h * run.dedx_w, t.m0)
        t.nValue = align_up(run.dedx_cin_g, t.n0)
        t.kValue = run.kernel_h * run.kernel_w * run.dedy_cout1_g * t.k0  # kernel_d is its own loop
        t.lenHkWkC0 = run.kernel_h * run.kernel_w * t.k0
        self.get_large_hk_wk_tiling_mode()
        self.set_group_conv_mode()
        t.enableC04Flag = self.check_c04_enable()
        if t.enableC04Flag:
            t.kValue = align_up(run.kernel_h * run.kernel_w * C04_COUT_SIZE, t.k0)
            t.lenHkWkC0 = t.kValue

    def get_public_shape_attrs_info(self) -> None:
        """GetPublicShapeAttrsInfo: SetRunInfoToV2, block size and dtype bytes, SetRunInfoTiling."""
        self.run: RunInfo = set_run_info_to_v2(self.problem)
        self.blockSize = BYTE_BLOCK // self.run.b_dtype_bytes
        self.dtypeByteL0a = self.run.a_dtype_bytes
        self.dtypeByteL0b = self.run.b_dtype_bytes
        self.dtypeByteL0c = self.run.c_dtype_bytes
        self.set_run_info_tiling()

    def bp_pad_right(self) -> int:
        run = self.run
        return (run.dedx_w - ((run.dedy_w - 1) * run.stride_w + 1) + (run.kernel_w - 1) * run.dilation_w
                - run.backprop_pad_l)

    def cal_fmap_h(self, m_l1_size: int, is_l1_split_hk: bool = False) -> int:
        """CalFmapH (fmap_h below)."""
        run = self.run
        return fmap_h(m_l1_size, run.dedx_w, run.dedy_h, run.stride_h, run.kernel_h, run.dilation_h, is_l1_split_hk)

    def get_large_hk_wk_tiling_mode(self) -> None:
        """GetLargeHkWkTilingMode: split Hk (or Hk and Wk) when the smallest full-kernel L1 load does not fit."""
        run, t = self.run, self.tilingRunInfo
        bp_pad_right = self.bp_pad_right()
        min_base_n, min_base_m = BLOCK_CUBE, MAX_BASE_MN
        cur_ho = self.cal_fmap_h(min_base_m)
        min_a1 = self.dtypeByteL0a * cur_ho * run.dedy_w * run.stride_w * self.blockSize
        min_b1 = self.dtypeByteL0b * t.lenHkWkC0 * min_base_n
        if (min_a1 + min_b1 <= self.platformInfo.l1_size and run.backprop_pad_l <= PAD_DIM_UP
                and bp_pad_right <= PAD_DIM_UP and run.backprop_pad_u <= PAD_DIM_UP
                and run.backprop_pad_d <= PAD_DIM_UP and run.dilation_h <= PAD_DIM_UP
                and run.dilation_w <= PAD_DIM_UP):
            t.tilingHkWkMode = NO_TILING_HWK
            if run.stride_d > run.kernel_d:
                run.initOutputFlag = 1  # some dx planes are skipped: clear the output first
            return
        run.initOutputFlag = 1
        min_b1 //= run.kernel_h
        cur_ho = self.cal_fmap_h(min_base_m, True)
        min_a1 = self.dtypeByteL0a * cur_ho * run.dedy_w * run.stride_w * self.blockSize
        if (min_a1 + min_b1 <= self.platformInfo.l1_size and run.dilation_w <= PAD_DIM_UP
                and run.backprop_pad_l <= PAD_DIM_UP and bp_pad_right <= PAD_DIM_UP):
            t.tilingHkWkMode = TILING_HK
            t.lenHkWkC0 = run.kernel_w * t.k0
            t.kValue = run.kernel_w * run.dedy_cout1_g * t.k0
        else:
            t.tilingHkWkMode = TILING_HK_WK
            t.lenHkWkC0 = t.k0
            t.kValue = run.dedy_cout1_g * t.k0

    def set_group_conv_mode(self) -> None:
        """SetGroupConvMode: enlarge 1 is the ORIGIN group mode, any other factor ENLARGE."""
        self.groupConvMode = TILING_GROUP_MODE_ORIGIN if self.data["enlarge"] == 1 else TILING_GROUP_MODE_ENLARGE

    def get_cv_ration(self) -> int:
        """GetCVRation: vector cores per cube core (2 when the platform does not say)."""
        aiv, aic = self.platform.aiv_cores, self.coreNum
        return aiv // aic if aic and aiv >= aic else 2

    def check_c04_enable(self) -> bool:
        """CheckC04Enable: bf16/fp16 NCDHW with Cout <= 4, kernel > 1x1, stride and dilation 1 -> C04 weights."""
        run, t = self.run, self.tilingRunInfo
        if (run.outBackpropFormat != "NCDHW" or run.filterFormat != "NCDHW" or run.yFormat != "NCDHW"
                or t.tilingHkWkMode != NO_TILING_HWK or self.dtypeByteL0b != 2 or run.dedy_cout > C04_COUT_SIZE
                or (run.kernel_h == 1 and run.kernel_w == 1) or run.stride_h != 1 or run.stride_w != 1
                or run.dilation_h != 1 or run.dilation_w != 1 or (run.dedy_h == 1 and run.dedy_w == 1)
                or self.groupConvMode == TILING_GROUP_MODE_ENLARGE):
            return False
        half_ub = (self.platformInfo.ub_size - VECTOR_REG_WIDTH - (VECTOR_REG_WIDTH >> 3) - ONE_BLOCK_SIZE) >> 1
        min_nd_ub = C04_COUT_SIZE * BLOCK_CUBE * run.kernel_d * run.kernel_h * run.kernel_w * self.dtypeByteL0b
        min_nz_ub = align_up(run.kernel_h * run.kernel_w * C04_COUT_SIZE, self.blockSize) * BLOCK_CUBE \
            * self.dtypeByteL0b
        if min_nd_ub > half_ub or min_nz_ub > half_ub:
            return False
        return not (self.bp_pad_right() < 0 or run.backprop_pad_l < 0)

    # ------------------------------------------------------------ DoLibApiTiling
    def do_lib_api_tiling(self) -> None:
        """DoLibApiTiling: the inner-product flow (split-K, base block, L1 steps, core split, conditions)."""
        self.calc_k_segment()
        l0 = L0TilingParams()
        self.init_base_mnk(l0)
        l1 = L1TilingParams()
        self.init_l1_params(l1, l0)
        core = CoreTilingParams()
        self.set_single_core_info(core, l0)
        self.cal_step_k(l1, l0)
        if not self.is_l1_params_valid(l1, l0):
            self.legal_protection(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                self.set_single_core_info(core, l0)
            else:
                raise TilingInfeasible(f"{self.NAME}: params exceed max L1 limit size ({self.platformInfo.l1_size})")
        self.set_tiling_condition(core, l1, l0)
        self.set_tiling_data(core, l1, l0)

    def check_basic_split_k_condition(self) -> bool:
        """CheckBasicSplitKCondition: no split-K with C04 or groups > 1 (or int8 y)."""
        if self.tilingRunInfo.enableC04Flag or self.run.groups > 1:
            self.tilingRunInfo.enableSplitK = False
            return False
        return True

    def set_split_k_run_info(self, hk_wk: int, cout_threshold: int, cout_segment_count: int) -> None:
        """SetSplitKRunInfo."""
        t, run = self.tilingRunInfo, self.run
        t.kSegment = cout_threshold
        t.kSegmentTail = run.dedy_cout_g - (cout_segment_count - 1) * t.kSegment
        t.kValueSegment = align_up(t.kSegment * hk_wk, t.k0)
        t.enableSplitK = cout_segment_count > 1
        # fp16/bf16 and the 8-bit outputs accumulate the K segments in fp32 through UB; fp32 adds atomically in GM
        t.useUbAccumForSplitK = t.enableSplitK and run.c_dtype_bytes in (1, 2)

    def calc_k_segment(self) -> bool:
        """CalcKSegment: split K (Cout) in segments when it is very long."""
        if not self.check_basic_split_k_condition():
            return False
        t, run = self.tilingRunInfo, self.run
        k_value = run.dedy_cout1_g * t.lenHkWkC0
        threshold = MAX_K_VALUE_SPLIT_K if t.tilingHkWkMode == NO_TILING_HWK else MAX_K_VALUE_TILING_KERNEL
        if run.c_dtype_bytes == 4 and run.outBackpropFormat == "NCDHW" and run.yFormat == "NCDHW":
            threshold = MAX_K_VALUE_FP32_DN
        if k_value < threshold:
            return False
        if t.tilingHkWkMode == TILING_HK:
            hk_wk = run.kernel_w
        elif t.tilingHkWkMode == TILING_HK_WK:
            hk_wk = 1
        else:
            hk_wk = run.kernel_h * run.kernel_w
        cout_threshold = run.dedy_cout_g if hk_wk >= threshold else max(threshold // hk_wk, 1)
        cout_threshold = max(floor_align(cout_threshold, t.k0), 1)
        count = max(ceil_div(run.dedy_cout_g, cout_threshold), 1)
        self.set_split_k_run_info(hk_wk, cout_threshold, count)
        return True

    def close_l0_ping_pong(self, l0: L0TilingParams) -> None:
        """CloseL0PingPong."""
        l0.al0Pbuffer = l0.bl0Pbuffer = l0.cl0Pbuffer = DB_OFF

    def init_base_mnk(self, l0: L0TilingParams) -> None:
        """InitBaseMNK: 256x256 (512x128 for a kernel > 1), then fitted to the problem and to L0."""
        run, t = self.run, self.tilingRunInfo
        l0.al0Pbuffer, l0.bl0Pbuffer, l0.cl0Pbuffer = DB_ON, DB_ON, DB_OFF
        best_m, best_n, best_k = BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_128 // self.dtypeByteL0b
        if run.kernel_d * run.kernel_h * run.kernel_w > 1 and (
                t.tilingHkWkMode == NO_TILING_HWK or (t.tilingHkWkMode == TILING_HK and run.dedx_w > 1)):
            best_m, best_n = BASIC_BLOCK_SIZE_512, BASIC_BLOCK_SIZE_128
            best_k = BASIC_BLOCK_SIZE_64 // self.dtypeByteL0b
        l0.baseM, l0.baseN, l0.baseK = best_m, best_n, best_k
        hwi = run.dedx_h * run.dedx_w
        batch_depth = run.batch_n * run.dedx_d
        m_cnt = ceil_div(hwi, l0.baseM)
        n_cnt = ceil_div(t.nValue, l0.baseN)
        total_cnt = run.real_g * batch_depth * m_cnt * n_cnt
        aligned_wi_al1 = max(l0.baseM // run.dedx_w, 1) * run.dedx_w
        # the C++ compares kernel_h/kernel_w with ENABLE_TILING_HK_WK (3): a 3x3 kernel
        if (run.kernel_h == ENABLE_TILING_HK_WK and run.kernel_w == ENABLE_TILING_HK_WK
                and l0.baseM == BASIC_BLOCK_SIZE_512 and l0.baseK <= BASIC_BLOCK_SIZE_16
                and self.coreNum * TOTAL_CNT_LOWER_RATIO <= total_cnt <= self.coreNum * TOTAL_CNT_UPPER_RATIO
                and hwi >= BASIC_BLOCK_SIZE_512
                and (aligned_wi_al1 * m_cnt < t.mValue or aligned_wi_al1 >= BASIC_BLOCK_SIZE_512)):
            l0.baseM = BASIC_BLOCK_SIZE_256
        self.adjust_base_mnk(l0, t)
        self.adjust_base_k_for_split_k(l0, t)

    def calculate_max_base_m(self, base_n: int) -> int:
        """CalculateMaxBaseM."""
        return BASIC_BLOCK_SIZE_512 if base_n <= self.tilingRunInfo.n0 else MAX_BASE_MN

    def adjust_base_m_when_small_n(self, base_m: int, base_n: int, l0: L0TilingParams, t: TilingRunInfo) -> int:
        """AdjustBaseMWhenSmallN: grow baseM into the L0C room a small baseN leaves."""
        run = self.run
        l0c_max_num = self.platformInfo.l0_c_size // l0.cl0Pbuffer // 4
        aligned_m = align_up(t.mValue, self.tilingRunInfo.m0)
        max_base_m = self.calculate_max_base_m(base_n)
        bp_pad_down = (run.dedx_h - ((run.dedy_h - 1) * run.stride_h + 1) + (run.kernel_h - 1) * run.dilation_h
                       - run.backprop_pad_u)
        if ((run.backprop_pad_l > PAD_DIM_UP or run.backprop_pad_u > PAD_DIM_UP or self.bp_pad_right() > PAD_DIM_UP
             or bp_pad_down > PAD_DIM_UP) and max_base_m > BASIC_BLOCK_SIZE_512):
            max_base_m = BASIC_BLOCK_SIZE_512
        n0 = self.tilingRunInfo.n0
        m_l0c_max = max(l0c_max_num // base_n // n0, 1) * n0 if base_n > 0 else 1
        return min(max_base_m, m_l0c_max, aligned_m)

    def adjust_base_n_when_small_m(self, base_n: int, base_m: int, l0: L0TilingParams, t: TilingRunInfo) -> int:
        """AdjustBaseNWhenSmallM: grow baseN into the L0C room a small baseM leaves."""
        l0c_max_num = self.platformInfo.l0_c_size // l0.cl0Pbuffer // 4
        m0 = self.tilingRunInfo.m0
        n_l0c_max = max(l0c_max_num // base_m // m0, 1) * m0 if base_m > 0 else 1
        return min(MAX_BASE_MN, n_l0c_max, t.nValue)

    def calculate_optimal_base_k(self, base_m: int, base_n: int, l0: L0TilingParams, t: TilingRunInfo) -> int:
        """CalculateOptimalBaseK: the largest baseK L0A/L0B allow that lines up with the kernel taps."""
        run, k0 = self.run, self.tilingRunInfo.k0
        l0ab_max_num = self.platformInfo.l0_ab_size // l0.al0Pbuffer // self.dtypeByteL0a
        max_base_k = max(l0ab_max_num // max(base_m, base_n) // k0, 1) * k0
        max_base_k = min(max_base_k, t.kValue)
        base_k = max_base_k if max_base_k < l0.baseK else l0.baseK
        while max_base_k > k0:
            if run.kernel_w > 1 and max_base_k % (run.kernel_w * k0) == 0:
                return max_base_k
            if run.kernel_h > 1 and max_base_k % (run.kernel_h * k0) == 0:
                return max_base_k
            if t.lenHkWkC0 > 0 and max_base_k > 0 and (max_base_k % t.lenHkWkC0 == 0
                                                       or t.lenHkWkC0 % max_base_k == 0):
                return max_base_k
            max_base_k = max(max_base_k - k0, k0)
        return base_k

    def update_l0c_buffer_mode(self, l0: L0TilingParams) -> None:
        """UpdateL0CBufferMode: double-buffer L0C when two fp32 baseM x baseN tiles fit."""
        l0.cl0Pbuffer = DB_ON if l0.baseM * l0.baseN * 4 * DB_ON <= self.platformInfo.l0_c_size else DB_OFF

    def adjust_base_mn_common(self, l0: L0TilingParams, t: TilingRunInfo, base_m: int, base_n: int,
                              base_k: int) -> tuple[int, int, int]:
        """AdjustBaseMNCommon."""
        ti = self.tilingRunInfo
        max_l0a_base_m = self.platformInfo.l0_ab_size // (ti.k0 * l0.al0Pbuffer * self.dtypeByteL0a)
        base_m = min(base_m, max_l0a_base_m)
        base_n = min(base_n, t.nValue)
        base_m = min(base_m, align_up(t.mValue, ti.m0))
        base_k = min(base_k, t.kValue)
        if base_n < l0.baseN:
            base_m = self.adjust_base_m_when_small_n(base_m, base_n, l0, t)
        if base_m < l0.baseM:
            base_n = self.adjust_base_n_when_small_m(base_n, base_m, l0, t)
        return base_m, base_n, base_k

    def adjust_base_k_for_split_k(self, l0: L0TilingParams, t: TilingRunInfo) -> None:
        """AdjustBaseKForSplitK: baseK within one K segment."""
        ti = self.tilingRunInfo
        if not ti.enableSplitK:
            return
        base_k = l0.baseK
        if base_k > ti.kValueSegment:
            base_k = ti.kValueSegment
        elif l0.baseK > ti.lenHkWkC0 and l0.baseK % ti.lenHkWkC0 != 0:
            base_k = align_up(l0.baseK, ti.lenHkWkC0)
        base_k = max(base_k, ti.k0)
        l0.baseM, l0.baseN, l0.baseK = self.adjust_base_mn_common(l0, t, l0.baseM, l0.baseN, base_k)
        self.update_l0c_buffer_mode(l0)

    def adjust_base_mnk(self, l0: L0TilingParams, t: TilingRunInfo) -> None:
        """AdjustBaseMNK."""
        base_m, base_n, base_k = self.adjust_base_mn_common(l0, t, l0.baseM, l0.baseN, l0.baseK)
        base_k = self.calculate_optimal_base_k(base_m, base_n, l0, t)
        l0.baseM, l0.baseN, l0.baseK = base_m, base_n, base_k
        self.update_l0c_buffer_mode(l0)

    def update_is_bias_full_load(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """UpdateIsBiasFullLoad: the flag says whether an fp32 bias of one baseN would fit the bias table
        (BT_BUFFER_SIZE, 4 KiB; taken from the platform's BT here, equal on the 950). Conv3DBackpropInputV2 has
        no bias input, so the real refusal of a bias that does not fit never applies."""
        l1.isBiasFullLoad = 0 if l0.baseN * 4 > self.platform.BT else 1

    def init_l1_params(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """InitL1Params: iterate order N first (no A-matrix full load here)."""
        l1.iterateOrder = 1
        self.update_is_bias_full_load(l1, l0)

    def align_cout1(self, cout1_a: int, cout1_b: int, adapt_fp32: bool) -> tuple[int, int]:
        """AlignCout1: make the A1 and B1 Cout1 counts divide each other."""
        if cout1_a == cout1_b:
            return cout1_a, cout1_b
        if cout1_b > cout1_a:
            return max_divisor_at_most(cout1_b, cout1_a, 1), cout1_b
        if not adapt_fp32:
            return cout1_a, max_divisor_at_most(cout1_a, cout1_b, 1)
        temp_a = cout1_a
        while temp_a % cout1_b > 0:
            temp_a -= 1
        cout1_ab = temp_a * cout1_b
        temp_b = max_divisor_at_most(cout1_a, cout1_b, BLOCK_CUBE // self.tilingRunInfo.k0)
        if temp_b == 0:
            return temp_a, cout1_b
        if temp_b * cout1_a > cout1_ab:
            return cout1_a, temp_b
        return temp_a, cout1_b

    def equal_l1_match_step_mnk_core(self, l1: L1TilingParams, l0: L0TilingParams, cur_hi_wi_size: int,
                                     is_need_shrink_step_ka: bool = False) -> None:
        """EqualL1MatchStepMNKCore: split L1 half and half between A1 and B1 and derive stepKa/stepKb."""
        run, t = self.run, self.tilingRunInfo
        base_n_hkwkc0_size = t.lenHkWkC0 * l0.baseN * self.dtypeByteL0b
        l1_b_size = self.platformInfo.l1_size // 2 // l1.bl1Pbuffer
        l1_a_size = self.platformInfo.l1_size // 2 // l1.al1Pbuffer
        cout1_b1 = max(1, l1_b_size // base_n_hkwkc0_size)
        cout1_a1 = max(1, l1_a_size // cur_hi_wi_size)
        cout1_g = run.dedy_cout1_g
        if cout1_a1 >= cout1_g:
            cout1_a1 = cout1_g
        if cout1_a1 * l1.al1Pbuffer >= cout1_g:
            cout1_a1 = ceil_div(cout1_g, l1.al1Pbuffer)  # balance: the AL1 ping must not start too late
        if is_need_shrink_step_ka and cout1_a1 != 1:
            min_cout_a1 = l0.baseK // t.k0
            if cout1_a1 > min_cout_a1:
                cout1_a1 = cout1_a1 // min_cout_a1 * min_cout_a1
        if cout1_b1 >= cout1_g:
            cout1_b1 = cout1_g
        if cout1_b1 * l1.bl1Pbuffer >= cout1_g:
            cout1_b1 = ceil_div(cout1_g, l1.bl1Pbuffer)
        cout1_a1, cout1_b1 = self.align_cout1(cout1_a1, cout1_b1, False)
        step_ka = max(1, ceil_div(cout1_a1 * t.lenHkWkC0, l0.baseK))
        step_ka = min(step_ka, UINT16_MAX // l0.baseK)
        step_kb = max(1, ceil_div(cout1_b1 * t.lenHkWkC0, l0.baseK))
        if step_ka > step_kb:
            step_ka = floor_align(step_ka, step_kb)
        else:
            step_kb = floor_align(step_kb, step_ka)
        l1.stepKa, l1.stepKb = step_ka, step_kb

    def equal_l1_match_step_mnk(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """EqualL1MatchStepMNK."""
        run, t = self.run, self.tilingRunInfo
        ho_cal = self.cal_fmap_h(l0.baseM, t.tilingHkWkMode != NO_TILING_HWK)  # stepM = 1
        cur = self.dtypeByteL0a * ho_cal * run.dedy_w * run.stride_w * t.m0
        if t.tilingHkWkMode == TILING_HK_WK or (t.tilingHkWkMode == TILING_HK and run.dedx_w == 1):
            cur = self.dtypeByteL0a * BASIC_BLOCK_SIZE_256  # no full wo row when the taps are split
        self.equal_l1_match_step_mnk_core(l1, l0, cur)

    def cal_step_k(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """CalStepK: the better of the equal-split and the ladder match."""
        l1.al1Pbuffer = l1.bl1Pbuffer = DB_ON
        params1 = L1TilingParams(l1.al1Pbuffer, l1.bl1Pbuffer, 1, 1, l1.iterateOrder)
        self.equal_l1_match_step_mnk(params1, l0)
        params2 = L1TilingParams(l1.al1Pbuffer, l1.bl1Pbuffer, 1, 1, l1.iterateOrder)
        self.ladder_match_step_mnk(params2, l0)
        if (self.is_l1_params_valid(params1, l0)
                and params1.stepKa + params1.stepKb > params2.stepKa + params2.stepKb):
            l1.stepKa, l1.stepKb = params1.stepKa, params1.stepKb
        else:
            l1.stepKa, l1.stepKb = params2.stepKa, params2.stepKb

    def ladder_match_step_k_with_full_load(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """LadderMatchStepKWithFullLoad: all of K in B1, the largest stepKa dividing it that fits."""
        step_kb = ceil_div(self.tilingRunInfo.kValue, l0.baseK)
        step_ka = step_kb
        while step_ka > 1:
            params = L1TilingParams(l1.al1Pbuffer, l1.bl1Pbuffer, step_ka, step_kb, l1.iterateOrder)
            if self.is_l1_params_valid(params, l0) and step_kb % step_ka == 0:
                break
            step_ka -= 1
        l1.stepKa, l1.stepKb = step_ka, step_kb

    def ladder_match_step_mnk(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """LadderMatchStepMNK: equal stepKa = stepKb from the largest K, down until L1 fits."""
        run, t = self.run, self.tilingRunInfo
        max_k_l1 = ceil_div(run.dedy_cout1_g, l1.al1Pbuffer) * t.lenHkWkC0
        max_k_l1 = min(max_k_l1, ceil_div(self.platformInfo.l1_size // self.dtypeByteL0a,
                                          l0.baseN * l1.al1Pbuffer))
        step_ka = step_kb = ceil_div(max_k_l1, l0.baseK)
        while step_ka > 1 and step_kb > 1:
            params = L1TilingParams(l1.al1Pbuffer, l1.bl1Pbuffer, step_ka, step_kb, l1.iterateOrder)
            if self.is_l1_params_valid(params, l0):
                break
            step_ka -= 1
            step_kb -= 1
        l1.stepKa, l1.stepKb = step_ka, step_kb

    def is_hk_wk_aligned(self, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """IsHkWkAligned (hk_wk_aligned below)."""
        t = self.tilingRunInfo
        return hk_wk_aligned(l1.stepKa * l0.baseK, l1.stepKb * l0.baseK, t.kValue, t.lenHkWkC0)

    def calc_bl1_size(self, l1: L1TilingParams, l0: L0TilingParams) -> int:
        """CalcBL1Size (bl1_bytes below)."""
        return bl1_bytes(l1.stepKb * l0.baseK, self.tilingRunInfo.lenHkWkC0, l0.baseN, l1.bl1Pbuffer,
                         self.dtypeByteL0b)

    def a_l1_size(self, l1: L1TilingParams, l0: L0TilingParams) -> int:
        """The A1 bytes of IsL1ParamsValid."""
        run, t = self.run, self.tilingRunInfo
        kernel_hw = run.kernel_h * run.kernel_w
        if t.tilingHkWkMode == TILING_HK:
            kernel_hw = run.kernel_w
        elif t.tilingHkWkMode == TILING_HK_WK:
            kernel_hw = 1
        if t.tilingHkWkMode == TILING_HK_WK:
            cout_num = max(l1.stepKa * l0.baseK // kernel_hw, 1)
            return BASIC_BLOCK_SIZE_256 * cout_num * self.dtypeByteL0a * l1.al1Pbuffer  # no full wo row; baseM <= 256
        ho = self.cal_fmap_h(l0.baseM, t.tilingHkWkMode != NO_TILING_HWK)
        return al1_bytes(ho, run.dedy_w, run.stride_w, l1.stepKa * l0.baseK, kernel_hw, self.dtypeByteL0a,
                         l1.al1Pbuffer)

    def is_l1_params_valid(self, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """IsL1ParamsValid: aligned K loads and A1 + B1 strictly below L1 (no bias or scale table: this operator
        has neither input)."""
        if not self.is_hk_wk_aligned(l1, l0):
            return False
        return self.a_l1_size(l1, l0) + self.calc_bl1_size(l1, l0) < self.platformInfo.l1_size

    def shrink_base_k(self, l1: L1TilingParams, l0: L0TilingParams, max_base_k: int) -> bool:
        """ShrinkBaseK."""
        k0 = self.tilingRunInfo.k0
        base_k_ori, start = l0.baseK, max_base_k
        while start > k0:
            start = max(start - k0, k0)
            l0.baseK = start
            self.ladder_match_step_mnk(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                return True
            self.equal_l1_match_step_mnk(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                return True
        l0.baseK = base_k_ori
        return False

    def shrink_base_mn(self, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """ShrinkBaseMN: baseK at its minimum, shrink the larger of baseM / baseN until L1 fits."""
        t, run = self.tilingRunInfo, self.run
        base_m_ori, base_n_ori = l0.baseM, l0.baseN
        m_start, n_start = l0.baseM, l0.baseN
        l0.baseK = t.k0
        min_base_m = max(run.dedx_w, t.m0)
        while m_start > min_base_m or n_start > t.m0:
            if m_start > min_base_m and m_start > n_start:
                m_start = max(m_start - t.m0, t.m0)
            else:
                n_start = max(n_start - t.n0, t.n0)
            l0.baseM, l0.baseN = m_start, n_start
            self.ladder_match_step_mnk(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                return True
            self.equal_l1_match_step_mnk(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                return True
        l0.baseM, l0.baseN = base_m_ori, base_n_ori
        return False

    def shrink_basic_block(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """ShrinkBasicBlock."""
        t = self.tilingRunInfo
        ori = (l0.baseM, l0.baseN, l0.baseK)
        if self.shrink_base_k(l1, l0, l0.baseK):
            return
        if self.shrink_base_mn(l1, l0):
            l0_max_k = self.platformInfo.l0_ab_size // l0.al0Pbuffer // self.dtypeByteL0a // max(l0.baseM, l0.baseN)
            max_base_k = min(max(l0_max_k // t.k0, 1) * t.k0, t.kValue)
            if max_base_k == l0.baseK:
                return
            if self.shrink_base_k(l1, l0, max_base_k):
                return
        l0.baseM, l0.baseN, l0.baseK = ori

    def legal_protection(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """LegalProtection: shrink the block, then give up L1 double buffers (B first) until L1 fits."""
        if self.is_l1_params_valid(l1, l0):
            return
        self.shrink_basic_block(l1, l0)
        if self.is_l1_params_valid(l1, l0):
            return
        if l1.al1Pbuffer == DB_ON and l1.bl1Pbuffer == DB_ON:
            l1.bl1Pbuffer = DB_OFF
            self.legal_protection(l1, l0)
        if l1.al1Pbuffer == DB_ON and l1.bl1Pbuffer == DB_OFF:
            l1.al1Pbuffer, l1.bl1Pbuffer = DB_OFF, DB_ON
            self.legal_protection(l1, l0)
        if l1.al1Pbuffer == DB_OFF and l1.bl1Pbuffer == DB_ON:
            l1.bl1Pbuffer = DB_OFF
            self.legal_protection(l1, l0)

    def set_single_core_info_core(self, core: CoreTilingParams, l0: L0TilingParams, hw_i: int, kernel_dhw: int,
                                  ks_cnt: int) -> None:
        """SetSingleCoreInfoCore: one core's M and Cin, from the block counts."""
        run, t = self.run, self.tilingRunInfo
        m_cnt = ceil_div(hw_i, l0.baseM)
        n_cnt = ceil_div(t.nValue, l0.baseN)
        total_cnt = run.batch_n * run.dedx_d * run.real_g * m_cnt * n_cnt * ks_cnt
        if (total_cnt <= self.coreNum or n_cnt % self.coreNum == 0 or self.coreNum % n_cnt == 0
                or (kernel_dhw == 1 and l0.baseN > BASIC_BLOCK_SIZE_256)
                or (kernel_dhw > 1 and l0.baseN > BASIC_BLOCK_SIZE_128)):
            l0.baseN = align_up(t.nValue // n_cnt, t.n0)
        core.singleCoreCin = l0.baseN
        core.singleCoreM = l0.baseM
        if total_cnt <= self.coreNum:
            core.singleCoreM = align_up(hw_i // m_cnt, run.dedx_w)
        elif (kernel_dhw == 1 and l0.baseM >= BASIC_BLOCK_SIZE_256) or (kernel_dhw > 1
                                                                       and l0.baseM >= BASIC_BLOCK_SIZE_512):
            aligned_wi_al1 = max(core.singleCoreM // run.dedx_w, 1) * run.dedx_w
            if aligned_wi_al1 * m_cnt >= t.mValue:
                core.singleCoreM = aligned_wi_al1
        if t.tilingHkWkMode == TILING_HK_WK:  # beyond 256 the Load3D pad would pass 255
            core.singleCoreM = run.dedx_w
            l0.baseM = min(l0.baseM, BASIC_BLOCK_SIZE_256)
        if t.tilingHkWkMode == TILING_HK and run.dedx_w == 1:
            l0.baseM = min(l0.baseM, BASIC_BLOCK_SIZE_256)
        if core.singleCoreM < l0.baseM:
            l0.baseM = align_up(core.singleCoreM, t.m0)

    def set_single_core_info(self, core: CoreTilingParams, l0: L0TilingParams) -> None:
        """SetSingleCoreInfo."""
        run = self.run
        core.singleCoreDin = 1
        core.singleCoreCout = C04_COUT_SIZE if self.tilingRunInfo.enableC04Flag else run.dedy_cout_g
        self.set_single_core_info_core(core, l0, run.dedx_h * run.dedx_w,
                                       run.kernel_d * run.kernel_h * run.kernel_w, 1)

    # ---------------------------------------------------------- conditions
    def check_vec_trans_16bit_plus(self, core: CoreTilingParams, l0: L0TilingParams) -> bool:
        """CheckVecTrans16bitPlus: the 16-bit weight pre-transpose pays off only with enough B reloads."""
        run, t = self.run, self.tilingRunInfo
        if run.kernel_d <= 1 or run.dedx_d <= 1:
            return False
        hw_i = run.dedx_h * run.dedx_w
        repeats = run.batch_n * ceil_div(run.dedx_d, core.singleCoreDin) * ceil_div(hw_i, core.singleCoreM)
        cube_total = min(repeats * ceil_div(t.nValue, core.singleCoreCin), self.coreNum)
        if repeats < cube_total:
            return False
        cnt_cout_cin1 = run.dedy_cout * ceil_div(run.dedx_cin, t.n0)
        vec_loop_time = ceil_div(cnt_cout_cin1, self.coreNum * self.get_cv_ration())
        if vec_loop_time > 1 and not ceil_div(repeats, cube_total) > 1 and not l0.baseM * NUM_FIVE <= l0.baseN:
            return False
        return True

    def check_vec_trans_enable(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """CheckVecTransEnable: transpose the NCDHW weight on the vector cores before the cube reads it."""
        run, t = self.run, self.tilingRunInfo
        if run.groups > 1 or run.filterFormat != "NCDHW" or run.dedx_cin > MAX_UINT16:
            return False
        if t.enableC04Flag or t.tilingHkWkMode != NO_TILING_HWK:
            return False
        if self.dtypeByteL0b == 2 and not self.check_vec_trans_16bit_plus(core, l0):
            return False
        if run.kernel_d * run.kernel_h * run.kernel_w == 1:
            return False
        if not (run.dedx_cin == 16 or run.dedx_cin >= 32):
            return False
        if run.dedx_cin <= run.kernel_h * run.kernel_w:
            return False
        vec_use = t.n0 * run.kernel_d * run.kernel_h * run.kernel_w * self.dtypeByteL0b * 2
        if self.dtypeByteL0b == 1:
            return vec_use * 2 <= self.platformInfo.ub_size  # 8-bit: cin0 becomes 32
        if vec_use > self.platformInfo.ub_size:
            return False
        multi_load_b1 = (ceil_div(t.kValue, l1.stepKb * l0.baseK) > 1 or (run.kernel_d > 1 and run.dedx_d > 1))
        mmad_cover_mte2 = l0.baseM >= BASIC_BLOCK_SIZE_512
        if self.dtypeByteL0b == 2 and run.kernel_h <= NUM_THREE and run.kernel_w <= NUM_THREE:
            mmad_cover_mte2 = l0.baseM >= BASIC_BLOCK_SIZE_256 + BASIC_BLOCK_SIZE_128
        if self.dtypeByteL0a == 4 and not run.hf32_flag:
            mmad_cover_mte2 = l0.baseM >= BASIC_BLOCK_SIZE_256
        return not (multi_load_b1 and mmad_cover_mte2)

    def get_load_b1_condition(self) -> int:
        """GetLoadB1Condition."""
        t = self.tilingRunInfo
        if t.enableC04Flag:
            return ENABLE_C04
        if t.tilingHkWkMode == TILING_HK:
            return ENABLE_TILING_HK
        if t.tilingHkWkMode == TILING_HK_WK:
            return ENABLE_TILING_HK_WK
        if t.enableSmallKernel:
            return ENABLE_SMALL_KERNEL
        return 0

    def get_load_b2_condition(self, l1: L1TilingParams, l0: L0TilingParams) -> int:
        """GetLoadB2Condition: how LoadData2DV2 transposes / reverses the weight into L0B."""
        run, t = self.run, self.tilingRunInfo
        if t.enableC04Flag:
            return B2_NO_TRANSPOSE_NO_REVERSE
        if run.filterFormat == "DHWCN":
            return B2_REVERSE_ONLY
        if (self.groupConvMode == TILING_GROUP_MODE_ENLARGE or t.enableVecTransFlag or self.dtypeByteL0b == 4
                or self.dtypeByteL0b == 1):
            return B2_REVERSE_ONLY
        return self.get_load_b2_condition_by_format_and_kernel(l0)

    def get_load_b2_condition_by_format_and_kernel(self, l0: L0TilingParams) -> int:
        """GetLoadB2ConditionByFormatAndKernel."""
        run = self.run
        kernel_hw = run.kernel_h * run.kernel_w
        kernel_dhw = run.kernel_d * kernel_hw
        if (kernel_dhw == 1 and self.tilingRunInfo.tilingHkWkMode == NO_TILING_HWK
                and self.groupConvMode == TILING_GROUP_MODE_ORIGIN):
            return B2_TRANSPOSE_ONLY
        if run.filterFormat == "NDHWC" and l0.baseN >= kernel_hw:
            return B2_REVERSE_ONLY
        if run.filterFormat == "NCDHW" and kernel_dhw * run.dedx_cin * self.dtypeByteL0b <= BYTE_64:
            return B2_REVERSE_ONLY
        return B2_TRANSPOSE_AND_REVERSE

    def set_tiling_condition(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """SetTilingCondition."""
        self.tilingRunInfo.enableVecTransFlag = self.check_vec_trans_enable(core, l1, l0)
        self.loadB1Condition = self.get_load_b1_condition()
        self.loadB2Condition = self.get_load_b2_condition(l1, l0)

    # ------------------------------------------------------------ tiling data
    def set_run_info_tiling(self) -> None:
        """SetRunInfoTiling + SetRunBaseShapeInfoTiling + SetBackpropPadInfo."""
        run, d = self.run, self.data
        d.update(batch=run.batch_n, cin=run.dedx_cin, cout=run.dedy_cout, cinG=run.dedx_cin_g,
                 coutG=run.dedy_cout_g, cin1=run.dedx_cin1, cout1=run.dedy_cout1, cin1G=run.dedx_cin1_g,
                 cout1G=run.dedy_cout1_g, c0=self.blockSize)
        c0_bits = {BIT8_DATA_SIZE: F8_C0_BITS, FP32_DATA_SIZE: F32_C0_BITS}
        d["c0BitsA"] = c0_bits.get(self.dtypeByteL0a, F16_C0_BITS)
        d["c0BitsB"] = c0_bits.get(self.dtypeByteL0b, F16_C0_BITS)
        d.update(ho=run.dedy_h, wo=run.dedy_w, dout=run.dedy_d, di=run.dedx_d, hi=run.dedx_h, wi=run.dedx_w,
                 hk=run.kernel_h, wk=run.kernel_w, dk=run.kernel_d,
                 khDilation=(run.kernel_h - 1) * run.dilation_h + 1,
                 kwDilation=(run.kernel_w - 1) * run.dilation_w + 1,
                 hoExpand=(run.dedy_h - 1) * run.stride_h + 1, woExpand=(run.dedy_w - 1) * run.stride_w + 1,
                 dkHkWk=run.kernel_d * run.kernel_h * run.kernel_w, hkWk=run.kernel_h * run.kernel_w)
        d.update(enlarge=run.enlarge, group=run.real_g, oriGroup=run.groups, strideH=run.stride_h,
                 strideW=run.stride_w, strideD=run.stride_d, padFront=run.pad_h, padBack=run.pad_t,
                 padUp=run.pad_u, padDown=run.pad_d, padLeft=run.pad_l, padRight=run.pad_r)
        bp_pad_tail = (run.dedx_d - ((run.dedy_d - 1) * run.stride_d + 1) + (run.kernel_d - 1) * run.dilation_d
                       - run.backprop_pad_h)
        d["backpropPadTail"] = run.backprop_pad_t if not 0 <= bp_pad_tail <= PAD_DIM_UP else bp_pad_tail
        d["backpropPadUp"] = run.backprop_pad_u
        d["backpropPadDown"] = run.backprop_pad_d
        d["backpropPadLeft"] = run.backprop_pad_l
        bp_pad_right = self.bp_pad_right()
        d["backpropPadRight"] = run.backprop_pad_r if bp_pad_right > PAD_DIM_UP else bp_pad_right
        d.update(dilationH=run.dilation_h, dilationW=run.dilation_w, dilationD=run.dilation_d,
                 hf32Flag=run.hf32_flag, initOutputFlag=run.initOutputFlag, isBiasFullLoad=self.isBiasFullLoad,
                 singleIterateDk=self.singleIterateDk, enRelu=run.enRelu, quantMode=run.quantMode,
                 offsetX=run.offsetX, fixedShiftVal=run.fixedShiftVal)

    def set_common_tiling_data(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """SetCommonTilingData."""
        run, t, d = self.run, self.tilingRunInfo, self.data
        d.update(singleCoreBatch=1, singleCoreGroup=1, singleCoreDin=core.singleCoreDin,
                 singleCoreM=core.singleCoreM, singleCoreCout=core.singleCoreCout, singleCoreCin=core.singleCoreCin,
                 singleIterateDk=run.kernel_d, baseM=l0.baseM, baseK=l0.baseK, baseN=l0.baseN, stepKa=l1.stepKa,
                 stepKb=l1.stepKb, al0Pbuffer=l0.al0Pbuffer, bl0Pbuffer=l0.bl0Pbuffer, cl0Pbuffer=l0.cl0Pbuffer,
                 al1Pbuffer=l1.al1Pbuffer, bl1Pbuffer=l1.bl1Pbuffer, iterateOrder=l1.iterateOrder,
                 enableVecTrans=int(t.enableVecTransFlag), enableFullLoad=int(t.enableFullLoadTiling))
        if t.tilingHkWkMode != NO_TILING_HWK or run.stride_d > run.kernel_d:
            d["initOutputFlag"] = run.initOutputFlag
        d["isBiasFullLoad"] = l1.isBiasFullLoad

    def vec_trans_core_count(self) -> int:
        """The vector cores' share of the weight pre-transpose, in cube-core units (SetTilingData)."""
        run, t = self.run, self.tilingRunInfo
        return ceil_div(run.dedy_cout * ceil_div(run.dedx_cin, t.n0), self.get_cv_ration())

    def set_tiling_data(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """SetTilingData: the split-K fields and coreNum (cube blocks, or the vector transpose's share)."""
        run, t, d = self.run, self.tilingRunInfo, self.data
        self.set_common_tiling_data(core, l1, l0)
        d.update(kSCoutFullLoad=0, kSUseWorkSpace=0, enableSplitK=int(t.enableSplitK), kSegment=t.kSegment,
                 kSegmentTail=t.kSegmentTail, kValueSegment=t.kValueSegment,
                 useUbAccumForSplitK=int(t.useUbAccumForSplitK))
        total_cnt = (run.batch_n * run.real_g * ceil_div(run.dedx_d, core.singleCoreDin)
                     * ceil_div(run.dedx_h * run.dedx_w, core.singleCoreM) * ceil_div(t.nValue, core.singleCoreCin))
        if t.enableVecTransFlag:
            total_cnt = max(total_cnt, self.vec_trans_core_count())
        d["coreNum"] = min(total_cnt, self.coreNum)

    # --------------------------------------------------- workspace, post, key
    def get_workspace_size(self) -> None:
        """GetWorkspaceSize: 16 MiB, + the transposed weight (vecTrans), + fp32 partial sums (split-K in UB)."""
        run, t = self.run, self.tilingRunInfo
        size = WORKSIZE
        if t.enableVecTransFlag:
            size += (run.dedy_cout * run.kernel_d * run.kernel_h * run.kernel_w * align_up(run.dedx_cin, t.n0)
                     * self.dtypeByteL0b)
        if t.enableSplitK and t.useUbAccumForSplitK:
            per_core = (SINGLE_CORE_DIN_SIZE * align_up(run.dedx_cin, t.n0)
                        * align_up(run.dedx_h * run.dedx_w, t.m0) * 4)
            size += self.data["coreNum"] * per_core
        self.workspace_size = size

    def post_tiling(self) -> None:
        """PostTiling: the Load3D dstStride (baseM / c0) must fit 16 bits; blockDim = coreNum."""
        dst_stride = self.data["baseM"] // self.blockSize
        if dst_stride > MAX_UINT16:
            raise TilingInfeasible(f"baseM / c0 = {dst_stride} exceeds {MAX_UINT16} (Load3D dstStride)")

    def get_tiling_key(self) -> int:
        """GetTilingKey: GET_TPL_TILING_KEY(loadB2, kernelSplitMode 0, groupConvMode, basic block, loadB1)."""
        return tiling_key(self.loadB2Condition, 0, self.groupConvMode, True, self.loadB1Condition)
