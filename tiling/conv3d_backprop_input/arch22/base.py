"""The base template (Conv3DBackpropInputV2Tiling, priority 1): fp32, real_g > 1 and the kernel-split shapes.

A port of the open arch22 algorithm: a knowledge-map lookup, GetCoreDim (batch/depth first, then M/N, down to
60 % of the cores), CalBaseBlockTiling (a 128 x (128 bytes of K) x 256 block, L1 split in quarters, the fp32 step rules) and,
where the source falls back to the closed TBE cache tiling (groups, poor core use, a failed block check),
this project's own rule from `tbe_rule.py`.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ascend_sim.machine.platform import Platform
from tiling.common.integers import ceil_div
from tiling.common.tbe_rule import TbeTiling
from tiling.common.validation import TilingInfeasible
from tiling.conv3d_backprop_input.arch22.common import BLOCK_CUBE, RunInfo, TilingValue, align_cout1, shape_fields
from tiling.conv3d_backprop_input.arch22.tbe_rule import own_block_candidates, own_core_dims
from tiling.conv3d_backprop_input.arch22.validate import check_fields

DB_ON = 2
BEST_BASE_M, BEST_BASE_K, BEST_BASE_N = 128, 128, 256  # the A2 optimum; BEST_BASE_K is in bytes of a row
BUFFER_NUM_L1 = 4  # A and B, each double-buffered: a quarter of L1 each
K_START_POSITION_MAX = 65535  # Load3D kStartPt is 16-bit
# CORE_USED_THRESHOLD is the float 0.6f = 10066330 / 2**24; integer arithmetic reproduces C++'s comparisons.
_SIXTY_NUM, _SIXTY_DEN = 10066330, 2**24
_KNOWLEDGE_FILE = Path(__file__).with_name("knowledge_maps.json")


@lru_cache(maxsize=1)
def knowledge_maps() -> dict:
    return json.loads(_KNOWLEDGE_FILE.read_text())


def knowledge_lookup(run: RunInfo, cores: int) -> tuple[TilingValue, str, bool] | None:
    """The hard-coded tilings: only for real_g == 1 and the exact core counts of 910B3 (20) / 910B2 (24)."""
    if run.real_g != 1:
        return None
    data = knowledge_maps()
    key = run.knowledge_key()
    for table in data["tables"]:
        if table["cores"] == cores and table["dtype_bytes"] == run.dtype_bytes and key in table["entries"]:
            values = dict(zip(data["fields"], table["entries"][key]))
            return TilingValue(**values), table["name"], table["use_basic_block"]
    return None


def _divisors_desc(value: int) -> list[int]:
    return [f for f in range(value, 0, -1) if value % f == 0]


def _largest_factor(value: int, factors: list[int]) -> int:
    """GetDimFactor: the largest core-count factor dividing `value` (1 if none)."""
    for factor in factors:
        if value % factor == 0:
            return factor
    return 1


class BaseTiling:
    """One run of the base template for a problem on a platform."""

    def __init__(self, run: RunInfo, platform: Platform):
        self.run = run
        self.platform = platform
        self.cores = platform.aic_cores
        self.c0 = run.c0
        self.dtype = run.dtype_bytes
        self.l1_size = platform.usable_L1  # the source's 512 KiB - 128 (KFC reserve)
        self.tbe: TbeTiling | None = None
        self.notes: list[str] = []

    @property
    def own_tbe(self) -> TbeTiling:
        """The own-rule stand-in for GetTbeTiling: the first proposal whose converted tiling is legal."""
        if self.tbe is None:
            dims = own_core_dims(self.run, self.cores)
            for proposal in own_block_candidates(self.run, self.platform, dims):
                if self._tbe_legal(proposal):
                    self.tbe = proposal
                    break
            else:
                run = self.run
                rows = run.cal_fmap_h(BLOCK_CUBE)
                a_min = rows * run.dedy_w * run.stride_w * self.c0 * self.dtype
                b_min = BLOCK_CUBE * run.kernel_h * run.kernel_w * BLOCK_CUBE * self.dtype
                raise TilingInfeasible(
                    f"no legal tiling on {self.platform.name}: the smallest loads (A1: {rows} dy rows x "
                    f"{run.dedy_w * run.stride_w} x C0 = {a_min} B; B1: 16 cin x hk*wk x 16 cout = {b_min} B) or the "
                    f"smallest L0 blocks do not fit (L1 {self.platform.L1} B, L0A {self.platform.L0A} B, "
                    f"L0B {self.platform.L0B} B, L0C {self.platform.L0C} B)")
        return self.tbe

    def _tbe_legal(self, tbe: TbeTiling) -> bool:
        t = TilingValue()
        m_dim = ceil_div(self.run.dedx_h, ceil_div(self.run.dedx_h, tbe.m_dim))
        self.set_dims(t, tbe.batch_dim, tbe.d_dim, m_dim, tbe.n_dim, tbe.group_dim, tbe.k_dim)
        self.cal_tbe_block_tiling(t, tbe)
        fields = {**shape_fields(self.run), **t.params(), **t.tiling_fields()}
        # The host code always nests the K steps (the kernel would not need it; the validator does not ask it).
        steps_nest = max(t.stepKa, t.stepKb) % max(min(t.stepKa, t.stepKb), 1) == 0
        return steps_nest and not check_fields(fields, self.dtype, self.platform, basic_block=False)

    # --- core split -------------------------------------------------------------------------------------------
    def get_core_dim(self, cur: int) -> tuple[int, int, int, int] | None:
        """GetCoreDim: (batchDim, dDim, mDim, nDim) using `cur` cores, recursing down to 60 % of the cores."""
        run = self.run
        while cur > 0 and cur >= self.cores * _SIXTY_NUM // _SIXTY_DEN:
            max_m = run.dedx_h * run.dedx_w
            max_n = run.dedx_cin1
            factors = _divisors_desc(cur)
            d_max = _largest_factor(run.dedx_d, factors)
            b_max = _largest_factor(run.batch_n, factors)
            if (d_max * b_max) % cur == 0:
                return cur // d_max, d_max, 1, 1
            bd = _largest_factor(d_max * b_max, factors)
            remain = cur // bd
            m_max = _largest_factor(max_m, factors)
            n_max = _largest_factor(max_n, factors)
            d_dim = _gcd(d_max, bd)
            if (m_max * n_max) % remain == 0:
                # M first, then N, each only if the split keeps at least a basic block per core.
                for m in (_gcd(m_max, remain), remain // _gcd(n_max, remain)):
                    n = remain // m
                    if (n == 1 or max_n * self.c0 >= n * BEST_BASE_N) and (m == 1 or max_m >= m * BEST_BASE_M):
                        return bd // d_dim, d_dim, m, n
            if max_m >= remain * BEST_BASE_M:
                return bd // d_dim, d_dim, remain, 1
            cur -= 1
        return None

    def cal_core_dim(self, t: TilingValue) -> bool:
        """CalCoreDimTiling; returns True when the TBE (here: own-rule) block tiling must be used."""
        run = self.run
        dims = self.get_core_dim(self.cores)
        batch_dim, d_dim, m_dim, n_dim = dims if dims else (1, 1, 1, 1)
        used = batch_dim * d_dim * m_dim * n_dim
        use_tbe = (used * _SIXTY_DEN < self.cores * _SIXTY_NUM or used > self.cores or run.real_g > 1)
        if use_tbe:
            tbe = self.own_tbe
            batch_dim, d_dim, m_dim, n_dim = tbe.batch_dim, tbe.d_dim, tbe.m_dim, tbe.n_dim
        # A non-factor M split can leave fewer row groups than mDim: count the groups that exist.
        m_dim = ceil_div(run.dedx_h, ceil_div(run.dedx_h, m_dim))
        self.set_dims(t, batch_dim, d_dim, m_dim, n_dim)
        return use_tbe

    def set_dims(self, t: TilingValue, batch_dim: int, d_dim: int, m_dim: int, n_dim: int,
                 group_dim: int | None = None, k_dim: int | None = None) -> None:
        """SetTilingParamByDimInfo (groupDim and kDim always come from the TBE answer)."""
        run = self.run
        if group_dim is None or k_dim is None:
            group_dim, k_dim = self._tbe_group_k_dims()
        t.coreNum = batch_dim * group_dim * m_dim * k_dim * n_dim * d_dim
        t.batchDim, t.groupDim, t.mDim, t.kDim, t.nDim, t.dDim = batch_dim, group_dim, m_dim, k_dim, n_dim, d_dim
        t.singleCoreBatch = ceil_div(run.batch_n, batch_dim)
        t.singleCoreGroup = ceil_div(run.real_g, group_dim)
        t.singleCoreM = ceil_div(run.dedx_h, m_dim) * run.dedx_w
        t.singleCoreCout = run.dedy_cout1_g * self.c0
        t.singleCoreCout1 = run.dedy_cout1_g
        t.singleCoreCin1 = ceil_div(run.dedx_cin1_g, n_dim)
        t.singleCoreCin = t.singleCoreCin1 * self.c0
        t.singleCoreDin = ceil_div(run.dedx_d, d_dim)
        t.singleCoreHo = 1

    def _tbe_group_k_dims(self) -> tuple[int, int]:
        # With one (super-)group the TBE tiling cannot split groups; skip computing it then.
        if self.run.real_g == 1:
            return 1, 1
        return self.own_tbe.group_dim, self.own_tbe.k_dim

    # --- L0/L1 blocks -----------------------------------------------------------------------------------------
    def check_l0_size(self, base_m: int, base_n: int, base_k: int) -> bool:
        """CheckL0Size: double-buffered A and B fit L0; fp32 B reserves one more C0 of K for its transpose."""
        l0a = base_m * base_k * self.dtype * DB_ON
        l0b = base_n * base_k * self.dtype * DB_ON
        if self.dtype == 4 and self.run.kernel_h * self.run.kernel_w > 1:
            l0b = base_n * (base_k + self.c0) * self.dtype * DB_ON
        return l0a <= self.platform.L0A and l0b <= self.platform.L0B

    def update_base_block(self, t: TilingValue) -> tuple[int, int, int]:
        """UpdateBaseBlock: K in whole kernel windows (or one kernel row), M/N swapped to the larger side."""
        run, c0 = self.run, self.c0
        base_m, base_k, base_n = BEST_BASE_M, BEST_BASE_K // self.dtype, BEST_BASE_N
        window = run.kernel_w * run.kernel_h * c0
        if base_k % window == 0:
            base_k = BEST_BASE_K // self.dtype
        elif window < base_k:
            base_k = window
        elif window > base_k:
            base_k = run.kernel_w * c0
        if t.singleCoreM > t.singleCoreCin:
            base_m, base_n = BEST_BASE_N, BEST_BASE_M
        if base_m > t.singleCoreM:
            base_m = ceil_div(t.singleCoreM, BLOCK_CUBE) * BLOCK_CUBE
        if base_n > t.singleCoreCin:
            base_n = ceil_div(t.singleCoreCin, BLOCK_CUBE) * BLOCK_CUBE
        depth_k = t.singleCoreCout1 * c0 * run.kernel_h * run.kernel_w
        if base_k > depth_k:
            base_k = depth_k
        elif depth_k % base_k:
            base_k = run.kernel_w * c0
        return base_m, base_k, base_n

    def update_step_fp32(self, step_ka: int, step_kb: int, t: TilingValue) -> tuple[int, int]:
        """UpdateStepFp32: keep B loads in whole 16-channel cout blocks where the kernel needs it, keep the
        steps multiples of each other and A in whole kernel windows."""
        run = self.run
        window_out = run.kernel_h * run.kernel_w * BLOCK_CUBE
        if (t.bl1Pbuffer == 1 or (run.dedy_cout1_g * self.c0) % BLOCK_CUBE
                or (run.kernel_h * run.kernel_w == 1 and t.baseK < BLOCK_CUBE)):
            step_kb = (step_kb * t.baseK + window_out - 1) // window_out * window_out // t.baseK
        window = window_out // 2
        if step_ka > step_kb:
            while step_ka % step_kb:
                step_ka -= 1
        else:
            while step_kb % step_ka:
                step_ka -= 1
        step_ka = step_ka * t.baseK // window * window // t.baseK
        return step_ka, step_kb

    def update_base_step(self, t: TilingValue) -> tuple[int, int]:
        """UpdateBaseStep: a quarter of L1 each for A and B; a side that holds all of cout drops its L1 ping-pong."""
        run, c0 = self.run, self.c0
        ho_cal = run.cal_fmap_h(t.baseM)
        hkwk = run.kernel_h * run.kernel_w
        b_bytes_per_cout1 = hkwk * c0 * t.baseN * self.dtype
        l1_b = self.l1_size // BUFFER_NUM_L1
        l1_a = l1_b
        adapt_fp32 = self.dtype == 4 and hkwk > 1
        cout1_b = max(1, l1_b // b_bytes_per_cout1) & 0xFFFFFFFF
        if adapt_fp32:
            # fp32: the weight's cout is padded to 16 = 2 x C0, so B loads an even number of C0 channel blocks.
            if cout1_b == 1:
                cout1_b = 2
                l1_a = (l1_a - (b_bytes_per_cout1 * cout1_b - l1_b)) % 2**64  # uint64 in the source
            else:
                cout1_b = cout1_b // 2 * 2
        a_bytes_per_cout1 = self.dtype * ho_cal * run.dedy_w * run.stride_w * c0
        cout1_a = max(1, l1_a // a_bytes_per_cout1) & 0xFFFFFFFF
        if cout1_a >= t.singleCoreCout1:
            cout1_a = t.singleCoreCout1
            t.al1Pbuffer = 1
        if cout1_b >= t.singleCoreCout1:
            cout1_b = t.singleCoreCout1
            t.bl1Pbuffer = 1
        cout1_a, cout1_b = align_cout1(cout1_a, cout1_b, adapt_fp32, c0)
        step_ka = max(1, ceil_div(cout1_a * hkwk * c0, t.baseK))
        step_ka = min(step_ka, K_START_POSITION_MAX // t.baseK)
        step_kb = max(1, ceil_div(cout1_b * hkwk * c0, t.baseK))
        if step_ka > step_kb:
            step_ka = step_ka // step_kb * step_kb
        else:
            step_kb = step_kb // step_ka * step_ka
        if self.dtype == 4:
            step_ka, step_kb = self.update_step_fp32(step_ka, step_kb, t)
        return step_ka, step_kb

    def cal_base_block_tiling(self, t: TilingValue) -> bool:
        """CalBaseBlockTiling: the open block algorithm; False sends the source to the TBE block tiling."""
        run = self.run
        t.al1Pbuffer = t.bl1Pbuffer = t.al0Pbuffer = t.bl0Pbuffer = DB_ON
        t.cl0Pbuffer = 1
        t.baseM, t.baseK, t.baseN = self.update_base_block(t)
        t.baseD = t.baseBatch = t.baseGroup = 1
        t.stepKa, t.stepKb = self.update_base_step(t)
        t.stepM = t.stepN = t.stepBatch = t.stepGroup = t.iterateOrder = 1

        window = run.kernel_h * run.kernel_w * self.c0
        if self.dtype == 4:
            windows = ceil_div(t.stepKb * t.baseK, window)
            b1 = t.bl1Pbuffer * self.dtype * t.baseN * ceil_div(windows, 2) * 2 * window
        else:
            b1 = t.bl1Pbuffer * self.dtype * t.stepKb * t.baseN * t.baseK
        cout_num = t.stepKa * t.baseK // (run.kernel_h * run.kernel_w)
        a1 = run.cal_fmap_h(t.baseM) * run.dedy_w * run.stride_w * cout_num * self.dtype * t.al1Pbuffer
        if t.stepKa * t.stepKb == 0:
            return False
        big, small = max(t.stepKa, t.stepKb), min(t.stepKa, t.stepKb)
        whole_windows = (t.stepKa * t.baseK) % window == 0 and (t.stepKb * t.baseK) % window == 0
        return (self.check_l0_size(t.baseM, t.baseN, t.baseK) and a1 + b1 <= self.l1_size and big % small == 0
                and whole_windows)

    def cal_tbe_block_tiling(self, t: TilingValue, tbe: TbeTiling) -> None:
        """CalTbeBlockTiling: the TBE L0 block, K as the largest of (whole window, kernel row, column, C0) that
        fits L0, and the TBE L1 loads converted to K steps."""
        run, c0 = self.run, self.c0
        t.al0Pbuffer = t.bl0Pbuffer = DB_ON
        t.cl0Pbuffer = tbe.db_l0c
        base_m, base_n = tbe.m_l0 * BLOCK_CUBE, tbe.n_l0 * BLOCK_CUBE
        k_max = max(run.kernel_h, run.kernel_w) * c0
        k_min = min(run.kernel_h, run.kernel_w) * c0
        for base_k in (run.kernel_h * run.kernel_w * c0, k_max, k_min):
            if self.check_l0_size(base_m, base_n, base_k):
                break
        else:
            base_k = c0
        t.baseM, t.baseK, t.baseN = base_m, base_k, base_n
        t.baseD = t.baseBatch = t.baseGroup = 1
        t.al1Pbuffer, t.bl1Pbuffer = tbe.db_al1, tbe.db_bl1
        hkwk = run.kernel_h * run.kernel_w
        t.stepKa = ceil_div(tbe.k_al1 * hkwk, base_k // c0)
        t.stepKb = ceil_div(tbe.k_bl1 * hkwk, base_k // c0)
        if self.dtype == 4:
            t.stepKa, t.stepKb = self.update_step_fp32(t.stepKa, t.stepKb, t)
        t.stepM = t.stepN = t.stepBatch = t.stepGroup = t.iterateOrder = 1

    # --- driver -----------------------------------------------------------------------------------------------
    def run_tiling(self, use_knowledge_map: bool = True) -> tuple[TilingValue, str]:
        """SetDxTilingFromTbeTiling: knowledge map, else core split + block tiling. Returns (value, how)."""
        if use_knowledge_map:
            hit = knowledge_lookup(self.run, self.cores)
            if hit is not None:
                value, table, _ = hit
                return value, f"knowledge_map:{table}"
        t = TilingValue()
        use_tbe = self.cal_core_dim(t)
        why = "core split" if use_tbe else "block check"
        if not use_tbe and self.cal_base_block_tiling(t):
            problems = self._problems(t)
            if not problems:
                return t, "base"
            # Platform generalisation: the source's checks assume A2's buffers; on another platform its block
            # can break a rule it never tests (e.g. L0C), which we treat like a failed block check.
            why = "open block illegal on this platform: " + "; ".join(str(p) for p in problems)
        tbe = self.own_tbe
        m_dim = ceil_div(self.run.dedx_h, ceil_div(self.run.dedx_h, tbe.m_dim))
        self.set_dims(t, tbe.batch_dim, tbe.d_dim, m_dim, tbe.n_dim, tbe.group_dim, tbe.k_dim)
        self.cal_tbe_block_tiling(t, tbe)
        self.notes.append(f"own rule replaces the closed TBE cache tiling ({why}): {tbe.reason}")
        return t, "base+own_rule"

    def _problems(self, t: TilingValue) -> list:
        fields = {**shape_fields(self.run), **t.params(), **t.tiling_fields()}
        return check_fields(fields, self.dtype, self.platform, basic_block=False)


def _gcd(a: int, b: int) -> int:
    while b:
        a, b = b, a % b
    return a
