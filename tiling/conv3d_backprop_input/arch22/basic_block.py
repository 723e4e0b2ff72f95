"""The basic-block template (Conv3DDXV2BasicBlockTiling, priority 0): fp16/bf16, real_g == 1.

A port of the open arch22 algorithm: pick a 256x128 (or 128x256) L0 block with K adjusted to whole kernel
windows, choose how many K steps of A and B stay in L1 (B fully resident if it fits, else an even L1 split or a
ladder), shrink until L1 fits, then split (M block, batch*depth, N block) tasks over the cores, merging M
blocks while L2 stays under 144 MiB. Buffer sizes come from the platform (the source hard-codes A2's).
"""
from __future__ import annotations

from dataclasses import dataclass

from ascend_sim.machine.platform import Platform
from tiling.common.integers import ceil_div
from tiling.conv3d_backprop_input.arch22.common import RunInfo, TilingValue, align_cout1

DB_ON, DB_OFF = 2, 1
BASIC_BLOCK_256, BASIC_BLOCK_128 = 256, 128
W_MERGE_THRESHOLD = 64  # with a 256 block, rows narrower than this lose at most 1/8 to the M tail
L2_CACHE_LIMIT = 144 * 1024 * 1024  # A2 (910B2) measurement: L2 efficiency drops past 144 MiB
UINT16_MAX = 65535
U32 = 0xFFFFFFFF


class BasicBlockInfeasible(ValueError):
    """No L1-legal basic-block tiling exists (the real generator fails the op with 'exceed max L1')."""


@dataclass(frozen=True)
class _Gemm:
    m: int  # Hi*Wi aligned to C0
    n: int  # cin1G * C0
    k: int  # hk*wk*cout1G*C0 (kd is an outer loop)
    len_hkwk_c0: int


class BasicBlockTiling:
    """One run of the basic-block algorithm for a problem on a platform."""

    def __init__(self, run: RunInfo, platform: Platform, l1_size: int | None = None):
        self.run = run
        self.cores = platform.aic_cores
        self.l0ab_size = min(platform.L0A, platform.L0B)
        self.l0c_size = platform.L0C
        # The source checks against the full 512 KiB (not TPipe's 512 KiB - 128); see docs/tiling.md.
        self.l1_size = platform.L1 if l1_size is None else l1_size
        self.c0 = run.c0
        self.dtype = run.dtype_bytes
        self.notes: list[str] = []
        self.gemm = _Gemm(
            m=ceil_div(run.dedx_h * run.dedx_w, self.c0) * self.c0,
            n=run.dedx_cin1_g * self.c0,
            k=run.kernel_h * run.kernel_w * run.dedy_cout1_g * self.c0,
            len_hkwk_c0=run.len_hkwk_c0,
        )

    # --- L1 feasibility ---------------------------------------------------------------------------------------
    def step_l1_valid(self, step_ka: int, step_kb: int, t: TilingValue) -> bool:
        """IsStepL1Valid: K steps cover whole kernel windows and A1 + B1 fit L1."""
        length = self.gemm.len_hkwk_c0
        if (step_ka * t.baseK) % length or (step_kb * t.baseK) % length:
            return False
        k_bl1 = step_kb * t.baseK
        if k_bl1 % length == 0 or length % k_bl1 == 0:
            copy_lines = ceil_div(k_bl1, length)
        elif k_bl1 > length:
            copy_lines = k_bl1 // length + 2
        else:
            copy_lines = 2
        b_l1 = t.bl1Pbuffer * self.dtype * t.stepN * t.baseN * copy_lines * length
        cout_num = max(step_ka * t.baseK // (self.run.kernel_h * self.run.kernel_w), 1)
        a_pixels = self.run.cal_fmap_h(t.stepM * t.baseM) * self.run.dedy_w * self.run.stride_w * cout_num
        return a_pixels * self.dtype * t.al1Pbuffer + b_l1 <= self.l1_size

    # --- L0 block ---------------------------------------------------------------------------------------------
    def _k_fits_window(self, base_k: int) -> bool:
        length = self.gemm.len_hkwk_c0
        return base_k % length == 0 or length % base_k == 0

    def init_base_mnk(self, t: TilingValue) -> None:
        """InitBaseMNK + AdjustBaseMNK."""
        t.al0Pbuffer, t.bl0Pbuffer, t.cl0Pbuffer = DB_ON, DB_ON, DB_OFF
        # Highest compute/load ratio is 256x64x128; L0A loads twice as fast as L0B, so M takes the 256.
        m_major = self.gemm.m >= self.gemm.n
        base_m = BASIC_BLOCK_256 if m_major else BASIC_BLOCK_128
        base_n = BASIC_BLOCK_128 if m_major else BASIC_BLOCK_256
        base_k = BASIC_BLOCK_128 // self.dtype
        c0, g = self.c0, self.gemm
        l0ab_max = self.l0ab_size // t.al0Pbuffer // self.dtype
        l0c_max = self.l0c_size // t.cl0Pbuffer // 4
        aligned_m = ceil_div(g.m, c0) * c0

        # K has the strictest alignment: step down from the best K until a load covers whole kernel windows.
        base_k = min(base_k, g.k)
        while base_k > c0 and not self._k_fits_window(base_k):
            base_k = max(base_k - c0, c0)
        base_n = min(base_n, g.n)
        base_m = min(base_m, aligned_m)
        mn_l0_max = max(l0ab_max // base_k // c0, 1) * c0
        # Small N and K: let M grow into the L0 space they leave.
        if base_n < BASIC_BLOCK_256 and base_k < BASIC_BLOCK_128 // self.dtype:
            m_l0c_max = max(l0c_max // base_n // c0, 1) * c0
            base_m = min(mn_l0_max, m_l0c_max, aligned_m)
        # Small M and K: let N grow the same way.
        if base_m < BASIC_BLOCK_256 and base_k < BASIC_BLOCK_128 // self.dtype:
            n_l0c_max = max(l0c_max // base_m // c0, 1) * c0
            base_n = min(mn_l0_max, n_l0c_max, g.n)
        max_base_k = min(max(l0ab_max // max(base_m, base_n) // c0, 1) * c0, g.k)
        while max_base_k > c0:
            if self._k_fits_window(max_base_k):
                base_k = max_base_k
                break
            max_base_k = max(max_base_k - c0, c0)
        t.baseM, t.baseK, t.baseN = base_m, base_k, base_n
        self._fit_l0(t)

    def _fit_l0(self, t: TilingValue) -> None:
        """Platform generalisation (never active with A2's 64 KiB L0A/L0B and 128 KiB L0C, which the source
        assumes): shrink K to C0, then the larger of M/N, until the block fits this platform's L0."""
        c0 = self.c0

        def over() -> tuple[bool, bool]:
            ab = max(t.baseM, t.baseN) * t.baseK * self.dtype * t.al0Pbuffer > self.l0ab_size
            return ab, t.baseM * t.baseN * 4 * t.cl0Pbuffer > self.l0c_size

        start = (t.baseM, t.baseN, t.baseK)
        ab, c = over()
        while (ab or c) and (t.baseK > c0 or max(t.baseM, t.baseN) > c0):
            if ab and t.baseK > c0:
                t.baseK = c0  # C0 always covers whole kernel windows
            elif t.baseM >= t.baseN and t.baseM > c0:
                t.baseM -= c0
            else:
                t.baseN -= c0
            ab, c = over()
        if (t.baseM, t.baseN, t.baseK) != start:
            self.notes.append(f"basic block: {start[0]}x{start[1]}x{start[2]} (baseM x baseN x baseK) does not fit "
                              f"this platform's L0; shrunk to {t.baseM}x{t.baseN}x{t.baseK}")

    # --- L1 steps ---------------------------------------------------------------------------------------------
    def k_iter(self, t: TilingValue) -> int:
        return ceil_div(self.gemm.k, t.baseK)

    def ladder_full_load(self, step_kb: int, t: TilingValue) -> int:
        """LadderMatchStepKWithFullLoad: the largest stepKa dividing stepKb that fits."""
        step_ka = min(self.k_iter(t), step_kb)
        while step_ka > 1:
            if self.step_l1_valid(step_ka, step_kb, t) and step_kb % step_ka == 0:
                break
            step_ka -= 1
        return step_ka

    def ladder(self, t: TilingValue) -> tuple[int, int]:
        """LadderMatchStepMNK: equal steps, at most one kernel window, decreasing until L1 fits."""
        step = min(self.k_iter(t), self.run.kernel_h * self.run.kernel_w)
        while step > 1:
            if self.step_l1_valid(step, step, t):
                break
            step -= 1
        return step, step

    def equal_l1(self, t: TilingValue) -> tuple[int, int]:
        """EqualL1MatchStepMNK: give A and B half of L1 each, then align their channel counts."""
        run = self.run
        ho_cal = run.cal_fmap_h(t.baseM)
        b_bytes_per_cout1 = self.gemm.len_hkwk_c0 * t.baseN * self.dtype
        l1_b = self.l1_size // 2 // t.bl1Pbuffer
        l1_a = self.l1_size // 2 // t.al1Pbuffer
        cout1_b = max(1, l1_b // b_bytes_per_cout1) & U32
        a_bytes_per_cout1 = self.dtype * ho_cal * run.dedy_w * run.stride_w * self.c0
        cout1_a = max(1, l1_a // a_bytes_per_cout1) & U32
        cout1_a = min(cout1_a, run.dedy_cout1_g)
        cout1_b = min(cout1_b, run.dedy_cout1_g)
        cout1_a, cout1_b = align_cout1(cout1_a, cout1_b, False, self.c0)
        step_ka = max(1, ceil_div(cout1_a * self.gemm.len_hkwk_c0, t.baseK))
        step_ka = min(step_ka, UINT16_MAX // t.baseK)
        step_kb = max(1, ceil_div(cout1_b * self.gemm.len_hkwk_c0, t.baseK))
        if step_ka > step_kb:
            step_ka = step_ka // step_kb * step_kb
        else:
            step_kb = step_kb // step_ka * step_ka
        return step_ka, step_kb

    def cal_step_mnk(self, t: TilingValue) -> None:
        """CalStepMNK: prefer B (the weight, small) fully resident in L1; else the better of EqualL1 / ladder."""
        t.stepM = t.stepN = 1
        t.al1Pbuffer, t.bl1Pbuffer = DB_ON, DB_OFF
        k_iter = self.k_iter(t)
        if self.step_l1_valid(1, k_iter, t) and self.run.kernel_d == 1:
            step_ka = self.ladder_full_load(k_iter, t)
            if self.step_l1_valid(step_ka, k_iter, t):
                t.stepKa, t.stepKb = step_ka, k_iter
                return
        t.bl1Pbuffer = DB_ON
        equal = self.equal_l1(t)
        ladder = self.ladder(t)
        # More K steps per load means more compute per load.
        if self.step_l1_valid(*equal, t) and sum(equal) > sum(ladder):
            t.stepKa, t.stepKb = equal
        else:
            t.stepKa, t.stepKb = ladder

    def _try_steps(self, t: TilingValue) -> bool:
        t.stepKa, t.stepKb = self.ladder(t)
        if self.step_l1_valid(t.stepKa, t.stepKb, t):
            return True
        t.stepKa, t.stepKb = self.equal_l1(t)
        return self.step_l1_valid(t.stepKa, t.stepKb, t)

    def shrink_basic_block(self, t: TilingValue) -> None:
        """ShrinkBasicBlock: steps are already 1, so shrink M/N by C0 (M not below one dx row), then K."""
        c0 = self.c0
        orig = (t.baseM, t.baseN, t.baseK)
        base_m, base_n, base_k = orig
        min_base_m = max(self.run.dedx_w, c0)
        while base_m > min_base_m or base_n > c0:
            if base_m > min_base_m and base_m > base_n:
                base_m = max(base_m - c0, c0)
            else:
                base_n = max(base_n - c0, c0)
            t.baseM, t.baseN, t.baseK = base_m, base_n, base_k
            if self._try_steps(t):
                break
        l0_max_k = self.l0ab_size // t.al0Pbuffer // self.dtype // max(base_m, base_n)
        base_k = min(max(l0_max_k // c0, 1) * c0, self.gemm.k)
        while base_k > c0:
            base_k = max(base_k - c0, c0)
            t.baseK = base_k
            if not self._k_fits_window(base_k):
                continue
            if self._try_steps(t):
                return
        # K could not shrink (or nothing fitted): the source restores the original block even when the M/N
        # shrink above had found a fitting one; the steps keep their last values.
        t.baseM, t.baseN, t.baseK = orig

    def legal_protection(self, t: TilingValue) -> None:
        """LegalProtection: shrink the block, then switch L1 double buffers off right to left.

        The three buffer tests run one after another even after a recursive call succeeded, exactly as the
        source does; this matters only when the first shrink fails.
        """
        if self.step_l1_valid(t.stepKa, t.stepKb, t):
            return
        self.shrink_basic_block(t)
        if self.step_l1_valid(t.stepKa, t.stepKb, t):
            return
        if t.al1Pbuffer == DB_ON and t.bl1Pbuffer == DB_ON:
            t.bl1Pbuffer = DB_OFF
            self.legal_protection(t)
        if t.al1Pbuffer == DB_ON and t.bl1Pbuffer == DB_OFF:
            t.al1Pbuffer, t.bl1Pbuffer = DB_OFF, DB_ON
            self.legal_protection(t)
        if t.al1Pbuffer == DB_OFF and t.bl1Pbuffer == DB_ON:
            t.bl1Pbuffer = DB_OFF
            self.legal_protection(t)

    # --- multi-core split -------------------------------------------------------------------------------------
    def l2_efficient(self, single_m: int, single_n: int, single_k: int, transdata: int) -> bool:
        """IsL2Efficient: the data all cores touch at once (with Load3D's row halo) stays under 144 MiB."""
        run = self.run
        dout_lines = max(run.kernel_d // run.stride_d, 1)
        hout_lines = max(run.cal_fmap_h(single_m) // run.stride_h, 1)
        dy_bytes = hout_lines * run.dedy_w * dout_lines * run.dedy_cout1_g * self.c0
        total = (dy_bytes + single_n * single_k * dout_lines + single_m * single_n + transdata) * self.dtype * self.cores
        return total <= L2_CACHE_LIMIT

    def set_single_core_info(self, t: TilingValue) -> None:
        """SetSingleCoreInfo: whole-row M tasks, merged when that keeps cores balanced and L2 small."""
        run, cores = self.run, self.cores
        t.iterateOrder = 1
        t.singleCoreCout = run.dedy_cout1_g * self.c0
        t.singleCoreCout1 = run.dedy_cout1_g
        t.singleCoreCin = t.stepN * t.baseN
        t.singleCoreCin1 = ceil_div(t.singleCoreCin, self.c0)
        batch_depth = run.batch_n * run.dedx_d
        hi, wi = run.dedx_h, run.dedx_w
        hw = hi * wi
        m_al1 = t.stepM * t.baseM
        n_cnt = ceil_div(run.dedx_cin, t.singleCoreCin)
        single_k = run.kernel_h * run.kernel_w * run.dedy_cout1_g * self.c0
        transdata = t.baseM * t.baseN
        t.singleCoreM = max(m_al1 // wi, 1) * wi

        if wi > W_MERGE_THRESHOLD and m_al1 % wi and wi % m_al1:
            # Rows do not line up with the block: take i row groups of ceil(Hi/i) rows, the first i that
            # balances the cores (or leaves a tail under 1/cores) within L2. Only distinct row counts matter.
            max_m_cnt = ceil_div(hw, m_al1)
            i = 1
            while i <= max_m_cnt:
                rows = ceil_div(hi, i)
                cand = rows * wi
                count = ceil_div(hw, cand) * batch_depth * n_cnt
                if (count % cores == 0 or count >= cores * cores) and self.l2_efficient(cand, t.singleCoreCin,
                                                                                        single_k, transdata):
                    t.singleCoreM = cand
                    break
                if rows == 1:
                    break  # every larger i gives the same single row
                i = ceil_div(hi, rows - 1)  # next i with fewer rows
        elif t.singleCoreM < hw and batch_depth % cores == 0:
            # Batch*depth already balances the cores: grow M tasks by whole blocks; the last candidate that
            # divides Hi*Wi and fits L2 wins. L2 use grows with the rows, so scan divisors from the top.
            t.singleCoreM = self._largest_merged_m(hi, wi, m_al1, t, single_k, transdata)
        total = ceil_div(hw, t.singleCoreM) * batch_depth * n_cnt
        t.coreNum = min(total, cores)

    def _largest_merged_m(self, hi: int, wi: int, m_al1: int, t: TilingValue, single_k: int,
                          transdata: int) -> int:
        """The source's merge loop (tmpM += mAl1 until the whole plane) in closed form.

        Candidates are rows(j) = max(floor(j*mAl1/Wi), 1) for j >= 2 (capped at Hi); a candidate is kept when Hi is
        a multiple of it and L2 allows it, and the last kept one (the largest) wins.
        """
        def reachable(rows: int) -> bool:
            if rows >= hi:
                return True  # the loop always ends on the whole plane
            # floor(j*mAl1/Wi) == 0 also counts as one row (the max(..., 1) in the source).
            j_low = 2 if rows == 1 else max(2, ceil_div(rows * wi, m_al1))
            j_high = ceil_div((rows + 1) * wi, m_al1) - 1
            return j_low <= j_high

        divisors = _divisors(hi)
        for rows in reversed(divisors):
            if reachable(rows) and self.l2_efficient(rows * wi, t.singleCoreCin, single_k, transdata):
                return rows * wi
        return t.singleCoreM

    # --- driver -----------------------------------------------------------------------------------------------
    def run_tiling(self) -> TilingValue:
        """MultiCoreSplitMN + SetTilingData."""
        t = TilingValue()
        self.init_base_mnk(t)
        self.cal_step_mnk(t)
        self.legal_protection(t)
        if not self.step_l1_valid(t.stepKa, t.stepKb, t):
            # The real template fails the same way ("params exceed max L1 limit size"); ShrinkBasicBlock keeps
            # a smaller M/N block only if it can also lower baseK, so near-full-L1 shapes can end here.
            raise BasicBlockInfeasible(
                f"no basic-block tiling fits L1 ({self.l1_size} bytes): LegalProtection ends at baseM={t.baseM}, "
                f"baseN={t.baseN}, baseK={t.baseK}, stepKa={t.stepKa}, stepKb={t.stepKb} with single L1 buffers "
                "(the real A2 generator rejects this shape too: 'params exceed max L1 limit size')")
        self.set_single_core_info(t)
        return t


def _divisors(value: int) -> list[int]:
    small, large = [], []
    i = 1
    while i * i <= value:
        if value % i == 0:
            small.append(i)
            if i * i != value:
                large.append(value // i)
        i += 1
    return small + large[::-1]
