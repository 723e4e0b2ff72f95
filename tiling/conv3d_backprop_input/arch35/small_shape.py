"""Conv3DDXV2SmallShapeTiling (priority 99): a problem of a few rounds per core; base M/N chosen for balance.

Port of `op_host/op_tiling/arch35/conv3d_backprop_input_v2_small_shape_tiling.cpp` (hicann/ops-nn @ e5c3fa93):
taken when the expected L0C-sized blocks number fewer than 2.5 per core and do not divide the cores evenly; it
then searches every (M count, N count) for the fewest rounds, then the most blocks, then the smallest L1 load.
8-bit only with an NDHWC filter, which 8-bit cannot have.
"""
from __future__ import annotations

from tiling.conv3d_backprop_input.arch35.common import (BASIC_BLOCK_SIZE_64, BASIC_BLOCK_SIZE_512, MAX_BASE_MN,
                                                        CoreTilingParams, L0TilingParams, L1TilingParams, align_up,
                                                        ceil_div)
from tiling.conv3d_backprop_input.arch35.inner_product import MAX_K_VALUE_SPLIT_K, InnerProductTiling, TilingInfeasible


class SmallShapeTiling(InnerProductTiling):
    """Conv3DDXV2SmallShapeTiling."""

    PRIORITY = 99
    NAME = "Conv3DDXV2SmallShapeTiling"

    def is_capable(self) -> bool:
        """IsCapable."""
        run, t = self.run, self.tilingRunInfo
        if t.tilingHkWkMode != 0:
            return False
        if run.dedy_cout1_g * run.kernel_h * run.kernel_w * self.blockSize > MAX_K_VALUE_SPLIT_K:
            return False
        if self.dtypeByteL0b == 1 and run.filterFormat != "NDHWC":
            return False
        expected_max_cnt = (ceil_div(t.nValue * t.mValue * 4, self.platformInfo.l0_c_size) * run.batch_n
                            * run.dedx_d * run.real_g)
        # empirical: under 2.5 rounds per core that do not divide evenly, load balance dominates
        return expected_max_cnt < self.coreNum * 5 // 2 and expected_max_cnt % self.coreNum != 0

    def do_lib_api_tiling(self) -> None:
        """DoLibApiTiling: the inner product's flow with AdjustSingleCoreAndL0Info for the core split."""
        l0 = L0TilingParams()
        self.init_base_mnk(l0)
        l1 = L1TilingParams()
        self.init_l1_params(l1, l0)
        core = CoreTilingParams()
        self.adjust_single_core_and_l0_info(core, l0)
        self.cal_step_k(l1, l0)
        if not self.is_l1_params_valid(l1, l0):
            self.legal_protection(l1, l0)
            if self.is_l1_params_valid(l1, l0):
                self.set_single_core_info(core, l0)  # re-split the cores; base M/N only shrink
            else:
                raise TilingInfeasible(f"{self.NAME}: params exceed max L1 limit size ({self.platformInfo.l1_size})")
        self.set_tiling_condition(core, l1, l0)
        self.set_tiling_data(core, l1, l0)

    def l1_load_size(self, base_n: int, single_core_m: int, kernel_hw: int) -> int:
        """The B1 + A1 bytes one block loads over all of Cout (the tie-breaker of EvalBaseMNCandidate)."""
        run = self.run
        return (self.dtypeByteL0b * base_n * kernel_hw * run.dedy_cout
                + self.dtypeByteL0a * self.cal_fmap_h(single_core_m) * run.dedy_w * run.stride_w * run.dedy_cout)

    def adjust_single_core_and_l0_info(self, core: CoreTilingParams, l0: L0TilingParams) -> None:
        """AdjustSingleCoreAndL0Info + EvalBaseMNCandidate."""
        run, t = self.run, self.tilingRunInfo
        core.singleCoreCout = run.dedy_cout_g
        core.singleCoreM = l0.baseM
        batch_depth = run.batch_n * run.dedx_d
        hw_i = run.dedx_h * run.dedx_w
        kernel_hw = run.kernel_h * run.kernel_w
        min_total = batch_depth * ceil_div(hw_i, l0.baseM) * ceil_div(t.nValue, l0.baseN) * run.real_g
        max_total = align_up(min_total, self.coreNum)
        min_l1_load = self.l1_load_size(l0.baseN, l0.baseM, kernel_hw)
        max_base_m = BASIC_BLOCK_SIZE_512 if t.nValue <= t.n0 else MAX_BASE_MN
        max_base_n = BASIC_BLOCK_SIZE_512 if t.mValue <= t.m0 else MAX_BASE_MN
        for i in range(ceil_div(hw_i, max_base_m), ceil_div(hw_i, BASIC_BLOCK_SIZE_64) + 1):
            for j in range(ceil_div(t.nValue, max_base_n), ceil_div(t.nValue, BASIC_BLOCK_SIZE_64) + 1):
                base_m = align_up(ceil_div(hw_i, i), t.m0)
                single_core_m = base_m
                aligned_wi_al1 = max(base_m // run.dedx_w, 1) * run.dedx_w
                if ceil_div(hw_i, aligned_wi_al1) == ceil_div(hw_i, base_m):
                    single_core_m = aligned_wi_al1
                    base_m = align_up(aligned_wi_al1, t.m0)
                base_n = align_up(ceil_div(t.nValue, j), t.n0)
                if base_m * base_n * 4 > self.platformInfo.l0_c_size:
                    continue
                total = batch_depth * ceil_div(hw_i, single_core_m) * ceil_div(t.nValue, base_n) * run.real_g
                rounds = align_up(total, self.coreNum)
                if rounds > max_total:
                    continue
                load = self.l1_load_size(base_n, single_core_m, kernel_hw)
                if rounds < max_total or (total >= min_total and load <= min_l1_load):
                    max_total, min_total, min_l1_load = rounds, total, load
                    l0.baseM, l0.baseN = base_m, base_n
                    core.singleCoreM = single_core_m
        self.adjust_base_mnk(l0, t)
        core.singleCoreCin = l0.baseN
        core.singleCoreDin = 1
