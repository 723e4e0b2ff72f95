"""A port of the real dw basic-block template (Conv3DDWV2BasicBlockTiling, registered with priority 0;
conv3d_backprop_filter_v2_basic_block_tiling.cpp), branch for branch and with the same integer arithmetic.

The template treats dw as a GEMM: M = cout (cout1_g * C0), N = kernel * cin (kh*kw*cin1_g*C0, times kd unless
the kernel depth is split), K = ho*wo. It binds two of M, N, K to cores (the tiling key says which), picks the
L0 block and L1 depths from a ladder, shrinks the block when one feature-map load would not fit L1, and in
deterministic mode splits the tail cores' K (stream-K). The hard-coded A2 buffer sizes of the real code (L0A, L0B,
L0C, totalL1Size) are read from the platform here; on A2 they are the same numbers.
"""
from __future__ import annotations

import math

from ascend_sim.machine.platform import Platform
from tiling.common.integers import align_up as ceil_align
from tiling.common.integers import ceil_div
from tiling.conv3d_backprop_filter.run_info import BLOCK_CUBE, RunInfo

DB_ON, DB_OFF = 2, 1
ROW_FIRST = 1
KERNEL_HW_CAPABLE = (4, 9, 16)
NUM_HALF = 2
BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_128, BASIC_BLOCK_SIZE_64 = 256, 128, 64
STREAM_K_DIM_MIN = 1
STREAM_K_TAIL_TOLERANCE = 2
SPLIT_M_K, SPLIT_N_K, SPLIT_M_N, SPLIT_M_N_STREAMK = 1, 2, 3, 4
NO_STREAMK_CALC, STREAMK_BATCHDOUT, STREAMK_HWOUT = 0, 1, 2
L1_DEPTH_16, L1_DEPTH_8 = 16, 8
STEP_2 = 2
BF16_DTYPE_SIZE = 2
L0C_DTYPE_BYTE = 4
U32 = 2**32 - 1
U64 = 2**64 - 1


def is_capable(run: RunInfo) -> bool:
    """IsCapable: deterministic runs always take this template (NDC1HWC0 x; bf16/fp16/fp32); otherwise a 1x1
    kernel, or a 2x2/3x3/4x4 one with M and N of at least one 128 block, for a 2-byte dtype, real_g == 1 and
    no depth dilation."""
    if run.deterministic:
        return True
    m_value, n_value = gemm_shape(run)[:2]
    kernel_hw = run.kh * run.kw
    kernel_ok = kernel_hw == 1 or (kernel_hw in KERNEL_HW_CAPABLE and m_value >= BASIC_BLOCK_SIZE_128
                                   and n_value >= BASIC_BLOCK_SIZE_128)
    return kernel_ok and run.dtype_bytes == 2 and run.real_g == 1 and run.dilation_d == 1


def gemm_shape(run: RunInfo) -> tuple[int, int, int]:
    """SetBasicBlockAttrsTiling: (mValue, nValue, kValue)."""
    c0 = run.k0
    m_value = run.cout1_g * c0
    n_value = run.kh * run.kw * run.cin1_g * c0
    if not run.split_dk:
        n_value *= run.kd
    k_value = ceil_align(run.ho * run.wo, c0)
    return m_value, n_value, k_value


class BasicBlockTiling:
    """blockTiling_ (BasicBlockTilingParams) and the methods that fill it."""

    def __init__(self, run: RunInfo, platform: Platform):
        self.run = run
        self.c0 = run.k0  # tilingData_.dwTiling.channelSize
        self.dtype_byte = run.dtype_bytes
        self.core_num = run.core_num
        self.total_l1 = platform.L1  # params.totalL1Size
        self.l0a, self.l0b, self.l0c = platform.L0A, platform.L0B, platform.L0C
        self.m_value, self.n_value, self.k_value = gemm_shape(run)
        # BasicBlockTilingParams defaults
        self.usedCoreNum = self.core_num
        self.totalCnt = 0
        self.streamKType = 0
        self.coreStreamK = 0
        self.blockBaseM = self.blockBaseN = self.blockBaseK = 128
        self.singleCoreM = self.singleCoreN = self.singleCoreK = 128
        self.depthA1 = self.depthB1 = 1
        self.stepKa = self.stepKb = self.stepM = self.stepN = 1
        self.dbL1A = self.dbL1B = self.dbL0C = 1
        self.iterateOrder = 0
        self.coreBindDirection = 1
        self.coreBindOrder = 1

    # --- DoOpTiling ---------------------------------------------------------------------------------------------
    def do_op_tiling(self) -> None:
        run = self.run
        if run.deterministic:
            self.multi_core_split_mn()
            return
        stride_hw = run.stride_h * run.stride_w
        kernel_hw = run.kh * run.kw
        # MTE1-bound shapes whose N loads stay aligned: bind M and N to cores
        if stride_hw > 1 and (kernel_hw % BLOCK_CUBE == 0 or BLOCK_CUBE % kernel_hw == 0):
            self.multi_core_split_mn()
        else:
            self.multi_core_split_k()

    def multi_core_split_k(self) -> None:
        self.iterateOrder = 1 if self.m_value > self.n_value else 0
        self.coreBindDirection = SPLIT_N_K if self.m_value > self.n_value else SPLIT_M_K
        self.init_base_mnk()
        self.coreBindOrder = ROW_FIRST
        self.dbL1A = self.dbL1B = DB_ON
        # L1 share ladder 8+8, 8+4, 4+4, ... 1+1: the bigger side halves first, on ties the side that is not resident
        depth_a1 = depth_b1 = L1_DEPTH_8
        while depth_a1 >= 1 and depth_b1 >= 1:
            self.depthA1, self.depthB1 = depth_a1, depth_b1
            self.stepM = self.stepN = 1
            self.update_step_mnk()
            self.update_single_core_info()
            if self.totalCnt >= self.usedCoreNum and not self.is_cur_block_l1_invalid():
                break
            if depth_a1 == 1 and depth_b1 == 1:
                break
            if depth_a1 > depth_b1:
                depth_a1 //= NUM_HALF
            elif depth_b1 > depth_a1:
                depth_b1 //= NUM_HALF
            elif self.coreBindDirection == SPLIT_M_K:
                depth_b1 //= NUM_HALF
            else:
                depth_a1 //= NUM_HALF
        if self.is_cur_block_l1_invalid():  # a feature-map row too wide for the ladder
            self.shrink_base_block()
            self.update_step_mnk()
            self.update_single_core_info()
        if self.totalCnt < self.usedCoreNum:
            self.usedCoreNum = self.totalCnt
        self.update_stream_k()

    def multi_core_split_mn(self) -> None:
        self.iterateOrder = 1 if self.m_value > self.n_value else 0
        self.coreBindDirection = SPLIT_M_N_STREAMK if self.run.deterministic else SPLIT_M_N
        self.init_base_mnk()
        self.coreBindOrder = ROW_FIRST
        self.dbL1A = self.dbL1B = DB_ON
        depth_a1 = depth_b1 = L1_DEPTH_16  # symmetric ladder down from 16 blocks
        while depth_a1 >= 1 and depth_b1 >= 1:
            self.depthA1, self.depthB1 = depth_a1, depth_b1
            self.stepM = self.stepN = 1
            self.update_step_mnk()
            if not self.is_cur_block_l1_invalid():
                break
            depth_a1 = depth_a1 - STEP_2 if depth_a1 > STEP_2 else depth_a1 - 1
            depth_b1 = depth_b1 - STEP_2 if depth_b1 > STEP_2 else depth_b1 - 1
        if self.is_cur_block_l1_invalid():
            self.shrink_base_block()
            self.update_step_mnk()
        self.update_single_core_info()
        self.adjust_single_n_for_stream_k()
        self.adjust_base_n_for_stream_k()
        self.check_db_l0c()
        if self.totalCnt < self.usedCoreNum:
            if self.coreBindDirection == SPLIT_M_N_STREAMK:
                if self.totalCnt > self.usedCoreNum // NUM_HALF:
                    self.usedCoreNum = self.totalCnt
            else:
                self.multi_core_split_k()
                return
        self.update_stream_k()

    # --- blocks and steps ---------------------------------------------------------------------------------------
    def init_base_mnk(self) -> None:
        if self.coreBindDirection in (SPLIT_M_N, SPLIT_M_N_STREAMK):
            # no K split: MTE1-bound, and L0A loads twice as fast as L0B, so fill L0A first
            if self.m_value > BASIC_BLOCK_SIZE_128:
                self.blockBaseM, self.blockBaseN = BASIC_BLOCK_SIZE_256, BASIC_BLOCK_SIZE_128
            else:
                self.blockBaseM, self.blockBaseN = BASIC_BLOCK_SIZE_128, BASIC_BLOCK_SIZE_256
            self.blockBaseK = BASIC_BLOCK_SIZE_64 * BF16_DTYPE_SIZE // self.dtype_byte
            self.dbL0C = DB_OFF
        else:
            # K split: 128 blocks keep L0C ping-pong
            self.blockBaseM = self.blockBaseN = BASIC_BLOCK_SIZE_128
            self.blockBaseK = BASIC_BLOCK_SIZE_128 * BF16_DTYPE_SIZE // self.dtype_byte
            self.dbL0C = DB_ON
        a_l0_max = self.blockBaseK * self.blockBaseM
        b_l0_max = self.blockBaseK * self.blockBaseN
        self.blockBaseM = min(self.blockBaseM, ceil_align(self.m_value, BLOCK_CUBE))
        self.blockBaseN = min(self.blockBaseN, ceil_align(self.n_value, BLOCK_CUBE))
        aligned_k = ceil_align(self.k_value, BLOCK_CUBE)
        if aligned_k < self.blockBaseK:
            self.blockBaseK = aligned_k
        else:
            new_ka = max(a_l0_max // self.blockBaseM // BLOCK_CUBE, 1) * BLOCK_CUBE
            new_kb = max(b_l0_max // self.blockBaseN // BLOCK_CUBE, 1) * BLOCK_CUBE
            new_k = min(new_ka, new_kb, aligned_k)
            self.blockBaseK = new_k
            wo = self.run.wo
            if wo < new_k and wo % BLOCK_CUBE == 0:  # whole dy rows per K block when L0 allows
                self.blockBaseK = new_k // wo * wo

    def update_step_mnk(self) -> None:
        if self.depthA1 < 2:
            self.dbL1A = DB_OFF
        if self.depthB1 < 2:
            self.dbL1B = DB_OFF
        base_mk = self.blockBaseM * self.blockBaseK
        base_nk = self.blockBaseN * self.blockBaseK
        a_l1_max = base_mk * self.depthA1 // self.dbL1A
        b_l1_max = base_nk * self.depthB1 // self.dbL1B
        max_m_iter = ceil_div(self.m_value, self.blockBaseM)
        max_n_iter = ceil_div(self.n_value, self.blockBaseN)
        max_k_iter = ceil_div(self.k_value, self.blockBaseK)
        a_div = a_l1_max // max(base_mk, 1)
        b_div = b_l1_max // max(base_nk, 1)
        self.stepKa = max(min(a_div // self.stepM, max_k_iter), 1)
        self.stepKb = max(min(b_div // self.stepN, max_k_iter), 1)
        # the resident side may take more of its non-K direction
        if self.coreBindDirection == SPLIT_M_K:
            self.stepM = max(min(a_div // self.stepKa, max_m_iter), 1)
        elif self.coreBindDirection == SPLIT_N_K:
            self.stepN = max(min(b_div // self.stepKb, max_n_iter), 1)
        self.stepKa = max(min(a_div // self.stepM, max_k_iter), 1)
        self.stepKb = max(min(b_div // self.stepN, max_k_iter), 1)
        if self.coreBindDirection == SPLIT_M_K:
            self.stepKa = max(self.stepKa // self.stepKb, 1) * self.stepKb
        elif self.coreBindDirection == SPLIT_N_K:
            self.stepKb = max(self.stepKb // self.stepKa, 1) * self.stepKa
        else:
            if self.stepKa > self.stepKb:
                self.stepKa = max(self.stepKa // self.stepKb, 1) * self.stepKb
            if self.stepKb > self.stepKa:
                self.stepKb = max(self.stepKb // self.stepKa, 1) * self.stepKa

    def update_single_core_info(self) -> None:
        run = self.run
        # rounded down to whole dy rows so that a core never starts a new L1 load mid-block
        self.singleCoreM = self.stepM * self.blockBaseM
        max_step_k_l1 = max(self.stepKa, self.stepKb) * self.blockBaseK
        self.singleCoreK = max(max_step_k_l1 // run.wo, 1) * run.wo
        khw_c = run.kh * run.kw * self.c0
        l1_cin1 = max((self.stepN * self.blockBaseN // max(khw_c, 1)) & U32, 1)
        self.singleCoreN = l1_cin1 * run.kh * run.kw * self.c0
        if self.coreBindDirection == SPLIT_M_K:
            self.singleCoreN = self.n_value
        elif self.coreBindDirection == SPLIT_N_K:
            self.singleCoreM = self.m_value
        else:
            self.singleCoreK = self.k_value
        m_cnt = ceil_div(self.m_value, self.singleCoreM)
        k_cnt = ceil_div(self.k_value, self.singleCoreK)
        n_cnt = ceil_div(self.n_value, self.singleCoreN)
        group_cnt, dk_cnt = (run.real_g, run.kd) if run.split_dk else (1, 1)
        self.totalCnt = m_cnt * k_cnt * n_cnt * group_cnt * dk_cnt
        if not run.deterministic:
            self.totalCnt *= run.batch * run.dout

    # --- L1 fit -------------------------------------------------------------------------------------------------
    def _ho_cal(self, k_bl1: int) -> int:
        wo = self.run.wo
        if k_bl1 % wo == 0 or wo % k_bl1 == 0:
            return ceil_div(k_bl1, wo)
        if k_bl1 > wo:
            return k_bl1 // wo + NUM_HALF
        return NUM_HALF

    def calculate_bl1_cin1_copy_len(self, new_base_n: int) -> int:
        kernel_hw = self.run.kh * self.run.kw
        bl1_n = ceil_div(new_base_n, self.c0)
        copy_len = ceil_div(bl1_n, kernel_hw)  # rounded up: a tail takes one more row
        if kernel_hw > bl1_n and kernel_hw % bl1_n != 0:
            copy_len += 1  # less than one row per block: a tail can straddle two
        elif NUM_HALF * bl1_n % kernel_hw != 0:
            copy_len += 1  # two more rows unless the tail is exactly half a row
        return copy_len

    def cal_bl1_bound(self) -> int:
        """CalBL1Bound: x elements one B1 load needs (rows of x for stepKb*baseK dy pixels, x cin1 rows)."""
        run = self.run
        ho_cal = self._ho_cal(max(self.blockBaseK * self.stepKb, 1))
        hi_cal = (ho_cal - 1) * run.stride_h + (run.kh - 1) * run.dilation_h + 1
        kernel_hw = run.kh * run.kw
        bl1_n = ceil_div(self.stepN * self.blockBaseN, self.c0)
        copy_len = ceil_div(bl1_n, kernel_hw)
        if kernel_hw > bl1_n and kernel_hw % max(bl1_n, 1) != 0:
            copy_len += 1
        elif NUM_HALF * bl1_n % kernel_hw != 0:
            copy_len += 1
        return hi_cal * run.wi * copy_len * self.c0

    def is_cur_block_l1_invalid(self) -> bool:
        al1 = self.stepKa * self.blockBaseK * self.stepM * self.blockBaseM * self.dtype_byte * self.dbL1A
        bl1 = self.cal_bl1_bound() * self.dtype_byte * self.dbL1B
        return al1 + bl1 > self.total_l1

    def calculate_l1_size_gap(self) -> int:
        al1 = self.blockBaseK * self.blockBaseM * self.dtype_byte
        bl1 = self.cal_bl1_bound() * self.dtype_byte
        return al1 + bl1 - self.total_l1 if al1 + bl1 > self.total_l1 else 0

    def shrink_block_base_k(self) -> bool:
        run = self.run
        gap = self.calculate_l1_size_gap()
        delta_a_per_c0 = self.blockBaseM * BLOCK_CUBE * self.dtype_byte
        copy_len = self.calculate_bl1_cin1_copy_len(self.blockBaseN)
        # B1 shrinks in steps per C0 of K; taken linearly here, never less than the true step
        delta_b_per_c0 = ceil_div(copy_len * self.c0 * run.wi * run.stride_h * BLOCK_CUBE * self.dtype_byte, run.wo)
        shrink = ceil_div(gap, delta_a_per_c0 + delta_b_per_c0)
        new_k = self.blockBaseK - shrink * BLOCK_CUBE if self.blockBaseK > shrink * BLOCK_CUBE else 0
        if new_k >= BLOCK_CUBE:
            self.blockBaseK = new_k
            while self.blockBaseK > BLOCK_CUBE and self.is_cur_block_l1_invalid():
                self.blockBaseK -= BLOCK_CUBE
                wo_mod_k = run.wo % max(self.blockBaseK, 1)
                wo_mod_c0 = run.wo % BLOCK_CUBE
                if self.blockBaseK <= run.wo and (wo_mod_k == 0 or wo_mod_c0 != 0):
                    break
            if not self.is_cur_block_l1_invalid():
                return True
        else:
            self.blockBaseK = BLOCK_CUBE
        return False

    def shrink_block_base_mn(self) -> None:
        run = self.run
        kernel_hw = run.kh * run.kw
        # first bring M and N level
        while (self.blockBaseM > BLOCK_CUBE and self.blockBaseM > self.blockBaseN
               and self.is_cur_block_l1_invalid()):
            self.blockBaseM -= BLOCK_CUBE
        while (self.blockBaseN > BLOCK_CUBE and self.blockBaseN > self.blockBaseM
               and self.is_cur_block_l1_invalid()):
            self.blockBaseN -= BLOCK_CUBE
        if not self.is_cur_block_l1_invalid():
            return
        delta_a_per_c0 = self.blockBaseK * BLOCK_CUBE * self.dtype_byte
        ho_cal = self._ho_cal(self.blockBaseK * self.stepKb)
        hi_cal = (ho_cal - 1) * run.stride_h + (run.kh - 1) * run.dilation_h + 1
        delta_b_per_c0 = ceil_div(hi_cal * run.wi * BLOCK_CUBE * self.dtype_byte, kernel_hw)
        gap = self.calculate_l1_size_gap()
        shrink = ceil_div(gap, delta_a_per_c0 + delta_b_per_c0) & U32
        if self.blockBaseM < (shrink + 1) * BLOCK_CUBE:
            self.blockBaseM = self.blockBaseN = BLOCK_CUBE
            return
        self.blockBaseM -= shrink * BLOCK_CUBE
        self.blockBaseN = self.blockBaseM
        copy_len = self.calculate_bl1_cin1_copy_len(self.blockBaseN)
        while self.blockBaseM > BLOCK_CUBE and self.is_cur_block_l1_invalid():
            new_copy_len = self.calculate_bl1_cin1_copy_len(self.blockBaseM)
            if new_copy_len < copy_len:
                self.blockBaseN = self.blockBaseM
                copy_len = new_copy_len
            else:
                self.blockBaseM -= BLOCK_CUBE

    def shrink_base_block(self) -> None:
        if self.shrink_block_base_k():
            return
        self.shrink_block_base_mn()
        # grow M back into the L1 left over (uint64 arithmetic: a negative rest wraps and M grows to mValue)
        al1 = self.stepKa * self.blockBaseK * self.stepM * self.blockBaseM * self.dtype_byte * self.dbL1A
        bl1 = self.cal_bl1_bound() * self.dtype_byte * self.dbL1B
        rest = (self.total_l1 - al1 - bl1) & U64
        delta_a_per_c0_m = self.blockBaseK * BLOCK_CUBE * self.dtype_byte
        compensate = rest // max(delta_a_per_c0_m, 1)
        c_l0_max = self.l0c // self.dtype_byte // DB_ON
        new_base_mc = max(c_l0_max // self.blockBaseM // BLOCK_CUBE, 1) * BLOCK_CUBE
        grown = min((self.blockBaseM + compensate * BLOCK_CUBE) & U64, self.m_value) & U32
        self.blockBaseM = min(new_base_mc, grown)
        # then grow K back while L1 holds it
        valid_k = self.blockBaseK
        while not self.is_cur_block_l1_invalid():
            valid_k = self.blockBaseK
            self.blockBaseK += BLOCK_CUBE
        self.blockBaseK = valid_k
        a_l0_max = self.l0a // self.dtype_byte // DB_ON
        b_l0_max = self.l0b // self.dtype_byte // DB_ON
        aligned_k = ceil_align(self.k_value, BLOCK_CUBE)
        if aligned_k < self.blockBaseK:
            self.blockBaseK = aligned_k
        else:
            new_ka = max(a_l0_max // self.blockBaseM // BLOCK_CUBE, 1) * BLOCK_CUBE
            new_kb = max(b_l0_max // self.blockBaseN // BLOCK_CUBE, 1) * BLOCK_CUBE
            self.blockBaseK = min(min(new_ka, new_kb, aligned_k), self.blockBaseK)
            wo = self.run.wo
            if wo < self.blockBaseK and wo % BLOCK_CUBE == 0:
                self.blockBaseK = self.blockBaseK // wo * wo

    # --- stream-K (deterministic) -------------------------------------------------------------------------------
    def get_single_shape_k_by_stream_k(self) -> int:
        run = self.run
        hw = run.ho * run.wo
        min_single_k = max(run.wo, self.blockBaseK)
        max_dim = ceil_div(hw, min_single_k) & U32
        actual = max(min(self.coreStreamK, max_dim), 1)
        single_k = ceil_div(run.ho, actual) * run.wo
        return ceil_align(single_k, run.wo)

    def is_split_batch_dout_better(self) -> bool:
        run = self.run
        batch_dout = run.batch * run.dout
        single_bd = ceil_div(batch_dout, self.coreStreamK)
        bd_tail = batch_dout % single_bd
        bd_dim = ceil_div(batch_dout, single_bd)
        single_k = self.get_single_shape_k_by_stream_k()
        hw = run.ho * run.wo
        if bd_dim < ceil_div(hw, single_k):
            return False
        k_tail = hw % single_k
        if bd_tail > 0 and bd_tail / single_bd < k_tail / single_k:
            return False
        return True

    def do_stream_k_by_batch_dout(self) -> None:
        batch_dout = self.run.batch * self.run.dout
        single_bd = ceil_div(batch_dout, self.coreStreamK)
        bd_dim = ceil_div(batch_dout, single_bd)
        if bd_dim == 1:
            self.streamKType = NO_STREAMK_CALC
        else:
            self.streamKType = STREAMK_BATCHDOUT
            self.coreStreamK = bd_dim

    def do_stream_k_by_hw_out(self) -> None:
        dim = ceil_div(self.run.ho * self.run.wo, self.get_single_shape_k_by_stream_k())
        if dim == 1:
            self.streamKType, self.coreStreamK = NO_STREAMK_CALC, 0
        else:
            self.streamKType, self.coreStreamK = STREAMK_HWOUT, dim & U32

    def update_stream_k(self) -> None:
        self.streamKType = NO_STREAMK_CALC
        self.coreStreamK = 0
        if self.coreBindDirection != SPLIT_M_N_STREAMK:
            return
        tail = self.totalCnt % self.usedCoreNum
        if tail == 0 or tail > (self.usedCoreNum >> 1):
            return
        core_stream_k = (self.usedCoreNum // tail) & U32
        if core_stream_k <= 1:
            return
        self.coreStreamK = core_stream_k
        if self.is_split_batch_dout_better():
            self.do_stream_k_by_batch_dout()
        else:
            self.do_stream_k_by_hw_out()
        if self.streamKType == NO_STREAMK_CALC:
            self.coreStreamK = 0
        if tail == self.totalCnt:
            used = self.totalCnt if self.streamKType == NO_STREAMK_CALC else self.totalCnt * self.coreStreamK
            self.usedCoreNum = max(min(used & U32, self.core_num), 1)

    def cal_new_single_core_n(self, total_without_n: int, target: int) -> int:
        missing = target // math.gcd(total_without_n, target)
        khw_c = self.run.kh * self.run.kw * self.c0
        new_n = ceil_div(self.run.cin1_g, missing) * khw_c
        return max(min(new_n, self.n_value), self.singleCoreN)

    def adjust_single_n_for_stream_k(self) -> None:
        if self.coreBindDirection != SPLIT_M_N_STREAMK:
            return
        run = self.run
        target = self.usedCoreNum
        if self.totalCnt % target == 0 and self.n_value == self.singleCoreN:
            return
        m_cnt = ceil_div(self.m_value, self.singleCoreM)
        k_cnt = ceil_div(self.k_value, self.singleCoreK)
        group_cnt, dk_cnt = (run.real_g, run.kd) if run.split_dk else (1, 1)
        without_n = m_cnt * k_cnt * group_cnt * dk_cnt
        if not run.deterministic:
            without_n *= run.batch * run.dout
        if without_n == 0:
            return
        new_n = self.cal_new_single_core_n(without_n, target)
        new_n_cnt = ceil_div(self.n_value, new_n)
        if new_n_cnt * without_n % target == 0:
            self.singleCoreN, self.totalCnt = new_n, without_n * new_n_cnt
            return
        tail = self.totalCnt % target
        max_dim = self.k_value // self.blockBaseK
        batch_dout_dim = run.batch * run.dout if run.deterministic else 1
        max_dim = max(max_dim, batch_dout_dim)
        if max_dim <= STREAM_K_DIM_MIN or tail + STREAM_K_TAIL_TOLERANCE >= target:
            return
        max_dim = min(max_dim, target)
        for dim in range(2, max_dim + 1):
            new_n = self.cal_new_single_core_n(without_n, target // dim)
            new_n_cnt = ceil_div(self.n_value, new_n)
            tail = new_n_cnt * without_n % target
            if tail * dim == target or tail + STREAM_K_TAIL_TOLERANCE >= target:
                self.singleCoreN, self.totalCnt = new_n, without_n * new_n_cnt
                return

    def adjust_base_n_for_stream_k(self) -> None:
        if self.coreBindDirection != SPLIT_M_N_STREAMK:
            return
        aligned_n = ceil_align(self.singleCoreN, BLOCK_CUBE)
        self.blockBaseN = min(self.blockBaseN, aligned_n)
        valid_n, valid_m, valid_k = self.blockBaseN, self.blockBaseM, self.blockBaseK
        single_blocks = aligned_n // BLOCK_CUBE
        base_blocks = self.blockBaseN // BLOCK_CUBE
        tail_blocks = single_blocks % base_blocks
        if tail_blocks == 0 or tail_blocks > NUM_HALF or tail_blocks * NUM_HALF >= base_blocks:
            return
        kernel_hw = self.run.kh * self.run.kw
        kernel_num = ceil_div(base_blocks, kernel_hw)
        limit = max(base_blocks, 16)
        kernel_num = kernel_num if kernel_num * kernel_hw <= limit else max(kernel_num - 1, 1)
        if kernel_num * kernel_hw > limit:
            return
        b_l0_max = self.l0b // self.dtype_byte // DB_ON
        self.blockBaseN = kernel_num * kernel_hw * BLOCK_CUBE
        max_m = min(self.l0c // L0C_DTYPE_BYTE // self.blockBaseN, valid_m)
        base_m = valid_m // NUM_HALF if valid_m > BASIC_BLOCK_SIZE_128 and max_m < valid_m else max_m
        base_m = min(max_m, base_m)
        self.blockBaseM = max(base_m // BLOCK_CUBE, 1) * BLOCK_CUBE
        base_k = b_l0_max // max(self.blockBaseM, self.blockBaseN)
        self.blockBaseK = max(base_k // BLOCK_CUBE, 1) * BLOCK_CUBE
        while self.blockBaseK > BLOCK_CUBE and self.is_cur_block_l1_invalid():
            self.blockBaseK -= BLOCK_CUBE
        if self.is_cur_block_l1_invalid():
            self.blockBaseN, self.blockBaseM, self.blockBaseK = valid_n, valid_m, valid_k
        else:
            self.update_step_mnk()
            self.update_single_core_info()

    def check_db_l0c(self) -> None:
        if self.coreBindDirection != SPLIT_M_N_STREAMK:
            return
        fits = self.blockBaseM * self.blockBaseN * DB_ON * L0C_DTYPE_BYTE <= self.l0c
        self.dbL0C = DB_ON if fits else DB_OFF

    # --- DoLibApiTiling -----------------------------------------------------------------------------------------
    def lib_api_fields(self) -> tuple[dict, dict]:
        """(dwTiling fields, basicBlockTiling fields) that DoLibApiTiling writes over InitTilingValue's."""
        run = self.run
        khw_c = max(run.kh * run.kw * self.c0, 1)
        l1_cin1 = max(self.singleCoreN // khw_c, 1)
        dwt = {
            "singleCoreHo": (self.singleCoreK // run.wo) & U32, "baseM": self.blockBaseM, "baseN": self.blockBaseN,
            "baseK": self.blockBaseK, "stepM": self.stepM, "stepN": self.stepN, "stepKa": self.stepKa,
            "stepKb": self.stepKb, "iterateOrder": self.iterateOrder, "al1Pbuffer": self.dbL1A,
            "bl1Pbuffer": self.dbL1B, "cl0Pbuffer": self.dbL0C, "bl1Bound": self.cal_bl1_bound() & U32,
            "singleCoreCout": self.singleCoreM & U32, "singleCoreCin": l1_cin1 * self.c0,
        }
        block = {
            "usedCoreNum": self.usedCoreNum, "singleCoreM": self.singleCoreM & U32,
            "singleCoreN": self.singleCoreN & U32, "singleCoreK": self.singleCoreK, "coreBindOrder": self.coreBindOrder,
            "streamKType": self.streamKType, "coreStreamK": self.coreStreamK,
        }
        return dwt, block

    def run_tiling(self) -> tuple[dict, dict]:
        self.do_op_tiling()
        return self.lib_api_fields()
