"""Conv3DDXV2KernelSplitTiling (priority 98): split a strided kernel into stride_h (x stride_w) sub-kernels.

Port of `op_host/op_tiling/arch35/conv3d_backprop_input_v2_kernel_split_tiling.cpp` (hicann/ops-nn @ e5c3fa93).
With stride s, the dx rows (columns) of one phase r only meet the kernel taps r, r+s, ...: each phase is a dense
stride-1 convolution with a sub-kernel of ceil(k/s) taps, so the zero-inserted dy rows are never loaded.
KERNEL_SPLIT_HW (mode 1): stride 2x2, kernel 1..4 square, NCDHW dy/y; the kernel re-interleaves the four
phases through L0C -> UB. KERNEL_SPLIT_H (mode 2): stride_h >= 2 <= kernel_h <= 16, phases along H only.
groups must be 1, dilation 1, symmetric H/W pads, filter NCDHW or NDHWC.
"""
from __future__ import annotations

from dataclasses import dataclass

from tiling.conv3d_backprop_input.arch35.common import (B2_REVERSE_ONLY, BASIC_BLOCK_SIZE_32, BASIC_BLOCK_SIZE_64,
                                                        BASIC_BLOCK_SIZE_128, BASIC_BLOCK_SIZE_256,
                                                        BASIC_BLOCK_SIZE_512, FMAP_H_NUM, CoreTilingParams,
                                                        L0TilingParams, L1TilingParams, align_up, ceil_div)
from tiling.conv3d_backprop_input.arch35.inner_product import (BLOCK_CUBE, DB_OFF, DB_ON, WORKSIZE, InnerProductTiling,
                                                               TilingInfeasible)
from tiling.conv3d_backprop_input.arch35.model import tiling_key

KERNEL_SPLIT_HW = 1
KERNEL_SPLIT_H = 2
BUFFER_NUM_DB = 2
U64 = 2**64  # the C++ subtracts in uint64_t: a negative difference wraps


@dataclass
class KernelSplitPara:
    splitHkWkC0: int = 0
    subSplitHkWkC0: int = 0
    splitHiWi: int = 0
    strideHW: int = 0
    curStrideW: int = 0
    maxSplitKh: int = 0
    maxSplitKw: int = 0
    curWi: int = 0
    isKernelSplitOnlyH: bool = False


class KernelSplitTiling(InnerProductTiling):
    """Conv3DDXV2KernelSplitTiling."""

    PRIORITY = 98
    NAME = "Conv3DDXV2KernelSplitTiling"

    def __init__(self, problem):
        super().__init__(problem)
        self.kSCoutFullLoad = False
        self.kSUseWorkSpace = 0
        self.usrSpaceSizeForKernelSplit = 0
        self.kernelSplitPara = KernelSplitPara()

    def get_shape_attrs_info(self) -> None:
        """GetShapeAttrsInfo: M/N/K of one sub-kernel convolution (no HkWk mode, group mode or C04 here)."""
        self.get_public_shape_attrs_info()
        run, t, ks = self.run, self.tilingRunInfo, self.kernelSplitPara
        t.enableSplitKernelFlag = self.check_kernel_split_enable()
        if not t.enableSplitKernelFlag:
            return
        t.m0, t.n0, t.k0 = BLOCK_CUBE, BLOCK_CUBE, self.blockSize
        t.mValue = align_up(ks.splitHiWi, t.m0)
        t.nValue = align_up(run.dedx_cin_g, t.n0)
        t.kValue = ks.splitHkWkC0 * run.dedy_cout1_g  # kernel_d is its own loop
        t.lenHkWkC0 = ks.maxSplitKh * ks.maxSplitKw * t.k0
        vec_use = t.n0 * run.kernel_d * run.kernel_h * run.kernel_w * self.dtypeByteL0b * 2
        t.enableVecTransFlag = (run.filterFormat == "NCDHW" and not self.kSCoutFullLoad
                                and vec_use <= self.platformInfo.ub_size
                                and run.kernel_d * run.kernel_h * run.kernel_w != 1)

    def is_capable(self) -> bool:
        """IsCapable."""
        return self.tilingRunInfo.enableSplitKernelFlag

    def get_tiling_key(self) -> int:
        """GetTilingKey: GET_TPL_TILING_KEY(loadB2, kernelSplitMode, 0, basic block, 0)."""
        return tiling_key(self.loadB2Condition, self.kernelSplitMode, 0, True, 0)

    # ------------------------------------------------------------ admission
    def cal_fmap_h_for_kernel_split(self, m_l1_size: int, is_kernel_split_only_h: bool = False) -> int:
        """CalFmapHForKernelSplit: dy rows one M block of a sub-kernel reads (dy is not stride-expanded)."""
        run, ks = self.run, self.kernelSplitPara
        split_w = ks.curWi if is_kernel_split_only_h else ceil_div(ks.curWi, run.stride_w)
        if m_l1_size % split_w == 0:
            hi_cal = ceil_div(m_l1_size, split_w)
        elif m_l1_size > split_w:
            hi_cal = m_l1_size // split_w + FMAP_H_NUM
        else:
            hi_cal = FMAP_H_NUM
        kh_dilation = (ceil_div(run.kernel_h, run.stride_h) - 1) * run.dilation_h + 1
        return min(hi_cal - 1 + kh_dilation, run.dedy_h)

    def set_param_for_kernel_split(self, is_kernel_split_only_h: bool = True) -> None:
        """SetParamForKernelSplit."""
        run, ks = self.run, self.kernelSplitPara
        ks.curWi = run.dedx_w
        if is_kernel_split_only_h:
            ks.curStrideW = run.stride_w
            ks.strideHW = run.stride_h
            ks.maxSplitKw = run.kernel_w
            ks.splitHiWi = ceil_div(run.dedx_h, run.stride_h) * run.dedx_w
            ks.subSplitHkWkC0 = run.kernel_h // run.stride_h * run.kernel_w * self.blockSize
        else:
            ks.curStrideW = 1
            ks.strideHW = run.stride_h * run.stride_w
            ks.maxSplitKw = ceil_div(run.kernel_w, run.stride_w)
            if run.dedx_w % run.stride_w != 0:
                ks.curWi += 1  # align wi to stride_w so the re-interleave lands right
            ks.splitHiWi = ceil_div(run.dedx_h, run.stride_h) * ceil_div(run.dedx_w, run.stride_w)
            ks.subSplitHkWkC0 = run.kernel_h // run.stride_h * (run.kernel_w // run.stride_w) * self.blockSize
        ks.maxSplitKh = ceil_div(run.kernel_h, run.stride_h)
        ks.splitHkWkC0 = ks.maxSplitKh * ks.maxSplitKw * self.blockSize
        ks.isKernelSplitOnlyH = is_kernel_split_only_h

    def check_kernel_split_hw11_enable(self) -> bool:
        """CheckKernelSplitHW11Enable (no bias input here): a 1x1 kernel with stride 2 only when it gains blocks and
        is not full-load."""
        run = self.run
        m_value = run.dedx_h * run.dedx_w
        n_value = run.dedx_cin1_g * BLOCK_CUBE
        k_value = run.dedy_cout1_g * BASIC_BLOCK_SIZE_32 // self.dtypeByteL0b
        if m_value <= BASIC_BLOCK_SIZE_256:
            return False
        batch_depth = run.batch_n * run.dedx_d
        if batch_depth * ceil_div(m_value, BASIC_BLOCK_SIZE_256) * ceil_div(n_value, BASIC_BLOCK_SIZE_256) \
                <= self.coreNum:
            return False
        if run.dedx_cin_g <= BASIC_BLOCK_SIZE_32 or run.dedy_cout_g <= BASIC_BLOCK_SIZE_32:
            return False
        l0ab = self.platformInfo.l0_ab_size
        if m_value * k_value * self.dtypeByteL0a <= l0ab and n_value * k_value * self.dtypeByteL0b <= l0ab:
            return False
        if run.kernel_d <= 1 and m_value > n_value and run.dedx_w <= BASIC_BLOCK_SIZE_512:
            mte2_bound = m_value * n_value < (m_value + n_value) * BASIC_BLOCK_SIZE_512
            if mte2_bound or k_value <= BASIC_BLOCK_SIZE_128:
                best_base_n = min(BASIC_BLOCK_SIZE_256, n_value)
                if k_value * best_base_n * self.dtypeByteL0b * 2 <= self.platformInfo.l1_size:
                    return False  # the FullLoad template takes it
        return not (run.dedx_h > run.dedx_w or run.dedx_cin_g > run.dedy_cout_g)

    def check_best_block_enable(self, n_value: int, best_block_cnt: int) -> bool:
        """CheckBestBlockEnable."""
        return (best_block_cnt >= self.coreNum and n_value <= BASIC_BLOCK_SIZE_128
                and self.run.dedx_cin_g >= BLOCK_CUBE)

    def check_shape_conditions(self) -> bool:
        """CheckShapeConditions."""
        run, ks = self.run, self.kernelSplitPara
        if run.filterFormat == "NDHWC" and (self.kSCoutFullLoad or run.dedx_cin_g == 1):
            return False
        if run.kernel_h == 1 and run.kernel_w == 1:
            if not self.check_kernel_split_hw11_enable():
                return False
            self.kSCoutFullLoad = False
        if not self.kSCoutFullLoad and (run.dedx_w < 12 or (run.dedx_w <= BLOCK_CUBE
                                                            and ks.splitHiWi <= BASIC_BLOCK_SIZE_256)):
            return False
        return not (self.kSCoutFullLoad and run.dedx_w <= 2)

    def is_base_shape_fit_kernel_split_hw(self, best_base_mn: int) -> bool:
        """IsBaseShapeFitKernelSplitHW: decide Cout full load (A1 and B1 hold all of Cout) and admit the shape."""
        run, ks = self.run, self.kernelSplitPara
        l1 = self.platformInfo.l1_size
        cur_base_m = min(ks.splitHiWi, best_base_mn)
        a1_size = self.dtypeByteL0a * self.cal_fmap_h_for_kernel_split(cur_base_m) * run.dedy_w * self.blockSize
        cout1 = run.dedy_cout1_g
        cout1_a1 = min(max(1, l1 // BUFFER_NUM_DB // a1_size), cout1)
        self.kSCoutFullLoad = False
        n_value = run.dedx_cin1_g * BLOCK_CUBE
        cur_base_n = min(n_value, best_base_mn)
        b1_size = self.dtypeByteL0b * cur_base_n * ks.splitHkWkC0
        cout1_b1 = ((l1 - cout1_a1 * a1_size) % U64) // b1_size
        best_block_cnt = ks.splitHiWi // BASIC_BLOCK_SIZE_512 * run.dedx_d * run.batch_n
        best_block_enable = self.check_best_block_enable(n_value, best_block_cnt)
        ab_full_load = (cout1_b1 >= cout1 * ks.strideHW and cout1_a1 >= cout1 and cur_base_n >= run.dedx_cin_g
                        and (run.dedy_d == 1 or run.kernel_d == 1))
        if ab_full_load and not best_block_enable and run.groups == 1 and run.dedy_cout_g <= BASIC_BLOCK_SIZE_256:
            self.kSCoutFullLoad = True
        return self.check_shape_conditions()

    def check_kernel_split_hw_enable(self, flag2: bool, stride_val: int, best_base_mn: int) -> bool:
        """CheckKernelSplitHWEnable."""
        run = self.run
        if run.dedx_cin_g == 1 and run.dedy_cout_g == 1 and flag2:
            return False
        if (run.dedx_w % stride_val != 0 and run.dedx_w > 512) or not self.is_base_shape_fit_kernel_split_hw(
                best_base_mn):
            return False
        self.kernelSplitMode = KERNEL_SPLIT_HW
        return True

    def is_base_shape_fit_kernel_split_h(self, best_base_mn: int) -> bool:
        """IsBaseShapeFitKernelSplitH: one Cout1 block of A1 and B1 must fit L1."""
        run, ks = self.run, self.kernelSplitPara
        cur_base_m = min(ks.splitHiWi, best_base_mn)
        min_a1 = (self.dtypeByteL0a * self.cal_fmap_h_for_kernel_split(cur_base_m, True) * run.dedy_w
                  * ks.curStrideW * self.blockSize)
        min_b1 = self.dtypeByteL0b * ks.splitHkWkC0 * BLOCK_CUBE
        return min_a1 + min_b1 <= self.platformInfo.l1_size

    def check_kernel_split_h_enable(self, best_base_mn: int) -> bool:
        """CheckKernelSplitHEnable."""
        run = self.run
        if run.dedx_cin_g < BLOCK_CUBE or run.dedy_cout_g < BLOCK_CUBE or run.dedx_w < 32:
            return False
        if run.kernel_h < run.stride_h or run.kernel_h > BLOCK_CUBE:
            return False
        if not self.is_base_shape_fit_kernel_split_h(best_base_mn):
            return False
        self.kernelSplitMode = KERNEL_SPLIT_H
        return True

    def check_basic_constraints(self) -> bool:
        """CheckBasicConstraints: dilation 1, NCDHW/NDHWC filter, symmetric H and W pads."""
        run = self.run
        if run.dilation_h != 1 or run.dilation_w != 1:
            return False
        if run.filterFormat not in ("NCDHW", "NDHWC"):
            return False
        return run.pad_u == run.pad_d and run.pad_l == run.pad_r

    def check_shape_value(self) -> bool:
        """CheckShapeValue: not for a tiny M with a single Cout1 block."""
        run = self.run
        return not (run.dedx_w * run.dedx_h < 256 and run.dedy_cout1_g == 1)

    def try_kernel_split_hw(self, best_base_mn: int) -> bool:
        """TryKernelSplitHW: stride 2x2 with a square kernel of 1..4, NCDHW dy and y."""
        run = self.run
        if run.outBackpropFormat != "NCDHW" or run.yFormat != "NCDHW":
            return False
        if not (run.stride_w == 2 and run.stride_h == 2):
            return False
        if not (run.kernel_w == run.kernel_h and run.kernel_h in (1, 2, 3, 4)):
            return False
        self.set_param_for_kernel_split(False)
        return self.check_kernel_split_hw_enable(run.kernel_h == 2, 2, best_base_mn)

    def try_kernel_split_h(self, best_base_mn: int) -> bool:
        """TryKernelSplitH."""
        run = self.run
        if run.stride_h < 2 or run.kernel_h < 2:
            return False
        self.set_param_for_kernel_split()
        return self.check_kernel_split_h_enable(best_base_mn)

    def check_kernel_split_enable(self) -> bool:
        """CheckKernelSplitEnable (CheckDtypeCompatibility: groups == 1 off the fused SoCs)."""
        if self.run.groups != 1 or not self.check_basic_constraints() or not self.check_shape_value():
            return False
        if self.run.offsetX != 0:
            return False
        return self.try_kernel_split_hw(256) or self.try_kernel_split_h(256)

    # -------------------------------------------------------------- tiling
    def do_lib_api_tiling(self) -> None:
        """DoLibApiTiling."""
        t, ks = self.tilingRunInfo, self.kernelSplitPara
        l0 = L0TilingParams()
        self.init_base_mnk(l0)
        l1 = L1TilingParams()
        self.init_l1_params(l1, l0)
        core = CoreTilingParams()
        self.set_single_core_info(core, l0)
        InnerProductTiling.cal_step_k(self, l1, l0)
        if not self.is_l1_params_valid(l1, l0):
            self.legal_protection(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                self.set_single_core_info(core, l0)
            else:
                raise TilingInfeasible(f"{self.NAME}: params exceed max L1 limit size ({self.platformInfo.l1_size})")
        if t.lenHkWkC0 != ks.subSplitHkWkC0 and l0.baseK != t.k0:
            cout1_a1 = l1.stepKa * l0.baseK // t.lenHkWkC0
            cout1_b1 = l1.stepKb * l0.baseK // t.lenHkWkC0
            self.shrink_base_k_for_kernel_split(l1, l0, cout1_a1, cout1_b1)
        self.update_work_space_size(l0)
        self.set_tiling_data(core, l1, l0)

    def init_base_mnk(self, l0: L0TilingParams) -> None:
        """InitBaseMNK: 512x128 for a sub-kernel of more than one tap, else 256x256."""
        ks = self.kernelSplitPara
        l0.al0Pbuffer, l0.bl0Pbuffer, l0.cl0Pbuffer = DB_ON, DB_ON, DB_OFF
        l0.baseM, l0.baseN = BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_256
        l0.baseK = BASIC_BLOCK_SIZE_128 // self.dtypeByteL0b
        if self.run.kernel_d * ks.maxSplitKh * ks.maxSplitKw > 1:
            l0.baseM, l0.baseN, l0.baseK = (BASIC_BLOCK_SIZE_512, BASIC_BLOCK_SIZE_128,
                                            BASIC_BLOCK_SIZE_64 // self.dtypeByteL0b)
        self.adjust_base_mnk(l0, self.tilingRunInfo)

    def update_l0c_buffer_mode(self, l0: L0TilingParams) -> None:
        """UpdateL0CBufferMode: double-buffer L0C below its size (at it, too, for KERNEL_SPLIT_HW)."""
        used = l0.baseM * l0.baseN * 4 * DB_ON
        l0c = self.platformInfo.l0_c_size
        l0.cl0Pbuffer = DB_ON if used < l0c or (self.kernelSplitMode == KERNEL_SPLIT_HW and used == l0c) else DB_OFF

    def equal_l1_match_step_mnk(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """EqualL1MatchStepMNK."""
        run, ks = self.run, self.kernelSplitPara
        ho_cal = self.cal_fmap_h_for_kernel_split(l0.baseM, ks.isKernelSplitOnlyH)
        cur = self.dtypeByteL0a * ho_cal * run.dedy_w * ks.curStrideW * self.tilingRunInfo.m0
        shrink_ka = not ks.isKernelSplitOnlyH and run.kernel_h == 3  # the sub-kernels differ in size
        self.equal_l1_match_step_mnk_core(l1, l0, cur, shrink_ka)

    def ladder_match_step_mnk(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """LadderMatchStepMNK: the inner product's, then whole baseK multiples of Cout1 for a 3x3 split."""
        InnerProductTiling.ladder_match_step_mnk(self, l1, l0)
        t = self.tilingRunInfo
        if not self.kernelSplitPara.isKernelSplitOnlyH and self.run.kernel_h == 3:
            min_cout_a1 = l0.baseK // t.k0
            cout1_a1 = l1.stepKa * l0.baseK // t.lenHkWkC0
            if cout1_a1 > min_cout_a1:
                cout1_a1 = cout1_a1 // min_cout_a1 * min_cout_a1
                l1.stepKa = t.lenHkWkC0 * cout1_a1 // l0.baseK
                l1.stepKb = l1.stepKa

    def is_l1_params_valid(self, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """IsL1ParamsValid: A1 of the sub-kernel rows + B1, at most L1."""
        run, ks = self.run, self.kernelSplitPara
        if not self.is_hk_wk_aligned(l1, l0):
            return False
        b1 = self.calc_bl1_size(l1, l0)
        cout_num = max(l1.stepKa * l0.baseK // (ks.maxSplitKh * ks.maxSplitKw), 1)
        a1_pixels = (self.cal_fmap_h_for_kernel_split(l0.baseM, ks.isKernelSplitOnlyH) * run.dedy_w * ks.curStrideW
                     * cout_num)
        return a1_pixels * self.dtypeByteL0a * l1.al1Pbuffer + b1 <= self.platformInfo.l1_size

    def shrink_base_mn(self, l1: L1TilingParams, l0: L0TilingParams) -> bool:
        """ShrinkBaseMN: shrink baseM (or baseN first when B1 is the larger) until one Cout1 block fits L1."""
        run, t, ks = self.run, self.tilingRunInfo, self.kernelSplitPara
        ori = (l0.baseM, l0.baseN)
        m_start, n_start = l0.baseM, l0.baseN
        min_base_m = max(ks.curWi, t.m0)
        base_b1 = t.lenHkWkC0 * self.dtypeByteL0b
        base_a1 = run.dedy_w * ks.curStrideW * t.k0 * self.dtypeByteL0a
        n_step = base_b1 * l0.baseN >= self.platformInfo.l1_size or base_b1 > base_a1
        while m_start > min_base_m or n_start > t.m0:
            if m_start > min_base_m and m_start > n_start and not n_step:
                m_start = max(m_start - t.m0, t.m0)
            else:
                n_start = max(n_start - t.n0, t.n0)
            l0.baseM, l0.baseN = m_start, n_start
            ho = self.cal_fmap_h_for_kernel_split(l0.baseM, ks.isKernelSplitOnlyH)
            if base_a1 * ho + base_b1 * l0.baseN <= self.platformInfo.l1_size:
                return True
        l0.baseM, l0.baseN = ori
        return False

    def shrink_base_k_for_kernel_split(self, l1: L1TilingParams, l0: L0TilingParams, cout_a1: int,
                                       cout_b1: int) -> None:
        """ShrinkBaseKForKernelSplit: baseK dividing both the full and the smaller sub-kernel's K per Cout1."""
        t, ks = self.tilingRunInfo, self.kernelSplitPara
        base_k = l0.baseK
        min_cout1 = min(cout_a1, cout_b1)
        while base_k > t.k0 and ((min_cout1 * ks.splitHkWkC0) % base_k or (min_cout1 * ks.subSplitHkWkC0) % base_k):
            base_k = max(base_k - t.k0, t.k0)
        l0.baseK = base_k
        l1.stepKa = ceil_div(cout_a1 * ks.splitHkWkC0, base_k)
        l1.stepKb = ceil_div(cout_b1 * ks.splitHkWkC0, base_k)

    def update_base_k_params(self, l1: L1TilingParams, l0: L0TilingParams, cout_a1: int, cout_b1: int) -> None:
        """UpdateBaseKParams."""
        t, cout1_g = self.tilingRunInfo, self.run.dedy_cout1_g
        cout_a1 = min(cout_a1, cout1_g)
        if cout_a1 > 1:
            cout_a1 //= DB_ON
            l1.al1Pbuffer = DB_ON
        cout_b1 = min(cout_b1, cout1_g)
        if cout_b1 > 1:
            cout_b1 //= DB_ON
            l1.bl1Pbuffer = DB_ON
        cout_a1, cout_b1 = self.align_cout1(cout_a1, cout_b1, False)
        l0_max_k = self.platformInfo.l0_ab_size // l0.al0Pbuffer // self.dtypeByteL0a // max(l0.baseM, l0.baseN)
        l0.baseK = min(max(l0_max_k // t.k0, 1) * t.k0, t.kValue)
        self.shrink_base_k_for_kernel_split(l1, l0, cout_a1, cout_b1)

    def shrink_cout_a1_b1(self, l1: L1TilingParams, l0: L0TilingParams, min_al1: int, min_bl1: int) -> None:
        """ShrinkCoutA1B1: single buffers, then as many Cout1 blocks of A1 and B1 as L1 takes."""
        l1_size = self.platformInfo.l1_size
        if min_al1 + min_bl1 > l1_size:
            return
        kb_step = min_bl1 >= min_al1  # B1 needs more room: shrink it first
        if kb_step:
            cout_b1 = max(l1_size // 2 // min_bl1, 1)
            cout_a1 = max((l1_size - cout_b1 * min_bl1) // min_al1, 1)
        else:
            cout_a1 = max(l1_size // 2 // min_al1, 1)
            cout_b1 = max((l1_size - cout_a1 * min_al1) // min_bl1, 1)
        l1.al1Pbuffer = l1.bl1Pbuffer = DB_OFF
        while cout_a1 * min_al1 + cout_b1 * min_bl1 > l1_size:
            if kb_step and cout_b1 > 1:
                cout_b1 -= 1
            elif cout_a1 > 1:
                cout_a1 -= 1
        if cout_b1 == 1 and kb_step:
            cout_a1 = (l1_size - min_bl1) // min_al1
        elif cout_a1 == 1 and not kb_step:
            cout_b1 = (l1_size - min_al1) // min_bl1
        self.update_base_k_params(l1, l0, cout_a1, cout_b1)

    def legal_protection(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """LegalProtection: shrink baseM/baseN if one Cout1 block misses L1, then size the Cout1 counts."""
        run, t, ks = self.run, self.tilingRunInfo, self.kernelSplitPara
        base_al1 = run.dedy_w * ks.curStrideW * t.k0 * self.dtypeByteL0a
        min_al1 = base_al1 * self.cal_fmap_h_for_kernel_split(l0.baseM, ks.isKernelSplitOnlyH)
        base_bl1 = t.lenHkWkC0 * self.dtypeByteL0b
        min_bl1 = base_bl1 * l0.baseN
        if min_al1 + min_bl1 > self.platformInfo.l1_size:
            if self.shrink_base_mn(l1, l0):
                self.cal_step_k(l1, l0)
                l0.cl0Pbuffer = DB_ON if l0.baseM * l0.baseN * 4 * DB_ON <= self.platformInfo.l0_c_size else DB_OFF
                if self.is_l1_params_valid(l1, l0):
                    return
            min_al1 = base_al1 * self.cal_fmap_h_for_kernel_split(l0.baseM, ks.isKernelSplitOnlyH)
            min_bl1 = base_bl1 * l0.baseN
        self.shrink_cout_a1_b1(l1, l0, min_al1, min_bl1)

    def set_single_core_info(self, core: CoreTilingParams, l0: L0TilingParams) -> None:
        """SetSingleCoreInfo: M counts over the sub-kernel output (splitHiWi), whole split rows per core."""
        run, t, ks = self.run, self.tilingRunInfo, self.kernelSplitPara
        core.singleCoreDin = 1
        core.singleCoreCout = run.dedy_cout_g
        kernel_dhw = run.kernel_d * ks.maxSplitKh * ks.maxSplitKw
        if ks.isKernelSplitOnlyH:
            self.set_single_core_info_core(core, l0, ks.splitHiWi, kernel_dhw, run.stride_h)
            return
        batch_depth = run.batch_n * run.dedx_d
        m_cnt = ceil_div(ks.splitHiWi, l0.baseM)
        n_cnt = ceil_div(t.nValue, l0.baseN)
        total_cnt = batch_depth * run.real_g * m_cnt * n_cnt
        if (total_cnt <= self.coreNum or n_cnt % self.coreNum == 0 or self.coreNum % n_cnt == 0
                or (kernel_dhw == 1 and l0.baseN > BASIC_BLOCK_SIZE_256)
                or (kernel_dhw > 1 and l0.baseN > BASIC_BLOCK_SIZE_128)):
            l0.baseN = align_up(t.nValue // n_cnt, t.n0)
        core.singleCoreCin = l0.baseN
        split_wi = ceil_div(run.dedx_w, run.stride_w)
        if total_cnt <= self.coreNum:
            core.singleCoreM = align_up(ks.splitHiWi // m_cnt, split_wi)
        else:
            core.singleCoreM = max(l0.baseM // split_wi, 1) * split_wi
        if core.singleCoreM < l0.baseM:
            l0.baseM = align_up(core.singleCoreM, t.m0)

    def update_work_space_size(self, l0: L0TilingParams) -> None:
        """UpdateWorkSpaceSize: KERNEL_SPLIT_HW re-interleaves 4 phases of hi x alignWi x baseN through UB,
        or through a GM workspace when that exceeds UB or wi is not a multiple of 16."""
        if self.kernelSplitMode != KERNEL_SPLIT_HW:
            return
        run, ks = self.run, self.kernelSplitPara
        dtype_ratio = 2 if self.dtypeByteL0c == 1 else 1  # 8-bit Fixpipe to UB aligns to 32
        even_wi = ceil_div(ks.curWi, run.stride_w)
        align_wi = align_up(even_wi, BLOCK_CUBE * dtype_ratio)
        hi = ceil_div(l0.baseM, even_wi)
        if run.dedx_w % run.stride_w != 0:
            hi += 1  # odd widths add a row to every HW plane
        if hi * align_wi * l0.baseN * 4 * DB_ON > self.platformInfo.l0_c_size:
            l0.cl0Pbuffer = DB_OFF
        cur_l0c_size = hi * align_wi * self.dtypeByteL0c * dtype_ratio * l0.baseN * 4
        if cur_l0c_size > self.platformInfo.ub_size or ks.curWi % BLOCK_CUBE != 0:
            self.usrSpaceSizeForKernelSplit = cur_l0c_size * self.coreNum
            self.kSUseWorkSpace = 1

    def set_tiling_condition(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """SetTilingCondition: kernel split always loads B2 reverse-only."""
        self.loadB2Condition = B2_REVERSE_ONLY

    def set_tiling_data(self, core: CoreTilingParams, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """SetTilingData: coreNum over the sub-kernel blocks (x stride_h phases for KERNEL_SPLIT_H)."""
        run, t, ks, d = self.run, self.tilingRunInfo, self.kernelSplitPara, self.data
        self.set_common_tiling_data(core, l1, l0)
        d["kSCoutFullLoad"] = int(self.kSCoutFullLoad)
        d["kSUseWorkSpace"] = self.kSUseWorkSpace
        total_cnt = (run.batch_n * run.real_g * ceil_div(run.dedx_d, core.singleCoreDin)
                     * ceil_div(ks.splitHiWi, core.singleCoreM) * ceil_div(t.nValue, core.singleCoreCin))
        if ks.isKernelSplitOnlyH:
            total_cnt *= run.stride_h
        if t.enableVecTransFlag:
            total_cnt = max(total_cnt, ceil_div(run.dedy_cout_g * ceil_div(run.dedx_cin_g, t.n0),
                                                self.get_cv_ration()))
        d["coreNum"] = min(total_cnt, self.coreNum)
        self.set_tiling_condition(core, l1, l0)

    def get_workspace_size(self) -> None:
        """GetWorkspaceSize: 16 MiB + the transposed weight (vecTrans) + the re-interleave workspace."""
        run, t = self.run, self.tilingRunInfo
        size = WORKSIZE
        if t.enableVecTransFlag:
            size += (run.dedy_cout_g * run.kernel_d * run.kernel_h * run.kernel_w * align_up(run.dedx_cin_g, t.n0)
                     * self.dtypeByteL0b)
        self.workspace_size = size + self.usrSpaceSizeForKernelSplit
