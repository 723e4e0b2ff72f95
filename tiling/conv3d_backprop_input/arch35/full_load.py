"""Conv3DDXV2FullLoadTiling (priority 100): all of K (the whole weight slice) stays in B1.

Port of `op_host/op_tiling/arch35/conv3d_backprop_input_v2_fullLoad_tiling.cpp` (hicann/ops-nn @ e5c3fa93). Taken
for a 1-deep kernel without tap splitting when M > N and the problem is MTE2- or Fixpipe-bound, and K x baseN fits
half of L1; 8-bit only with an NDHWC filter, which 8-bit cannot have.
"""
from __future__ import annotations

import math

from tiling.conv3d_backprop_input.arch35.common import (BASIC_BLOCK_SIZE_64, BASIC_BLOCK_SIZE_128, BASIC_BLOCK_SIZE_256,
                                                        BASIC_BLOCK_SIZE_512, C04_COUT_SIZE, MAX_BASE_MN,
                                                        CoreTilingParams, L0TilingParams, L1TilingParams, align_up,
                                                        ceil_div)
from tiling.conv3d_backprop_input.arch35.inner_product import DB_OFF, DB_ON, InnerProductTiling, TilingInfeasible


class FullLoadTiling(InnerProductTiling):
    """Conv3DDXV2FullLoadTiling."""

    PRIORITY = 100
    NAME = "Conv3DDXV2FullLoadTiling"

    def is_capable(self) -> bool:
        """IsCapable."""
        run, t = self.run, self.tilingRunInfo
        if t.tilingHkWkMode != 0:
            return False
        if self.dtypeByteL0b == 1 and run.filterFormat != "NDHWC":
            return False
        if run.kernel_d > 1 or t.mValue <= t.nValue or run.dedx_w > BASIC_BLOCK_SIZE_512:
            return False
        mte2_bound = t.mValue * t.nValue < (t.mValue + t.nValue) * BASIC_BLOCK_SIZE_512
        fixp_bound = t.kValue <= BASIC_BLOCK_SIZE_128
        if not mte2_bound and not fixp_bound:
            return False
        best_base_n = BASIC_BLOCK_SIZE_128 if run.kernel_d * run.kernel_h * run.kernel_w > 1 else BASIC_BLOCK_SIZE_256
        best_base_n = min(best_base_n, t.nValue)
        if t.kValue * best_base_n * self.dtypeByteL0b * 2 <= self.platformInfo.l1_size:
            t.enableFullLoadTiling = True
            return True
        return False

    def do_lib_api_tiling(self) -> None:
        """DoLibApiTiling: as the inner product's, without split-K."""
        l0 = L0TilingParams()
        self.init_base_mnk(l0)
        l1 = L1TilingParams()
        InnerProductTiling.init_l1_params(self, l1, l0)
        core = CoreTilingParams()
        self.set_single_core_info(core, l0)
        self.cal_step_k(l1, l0)
        if not InnerProductTiling.is_l1_params_valid(self, l1, l0):
            InnerProductTiling.legal_protection(self, l1, l0)
            if InnerProductTiling.is_l1_params_valid(self, l1, l0):
                self.set_single_core_info(core, l0)
            else:
                raise TilingInfeasible(f"{self.NAME}: params exceed max L1 limit size ({self.platformInfo.l1_size})")
        InnerProductTiling.set_tiling_condition(self, core, l1, l0)
        InnerProductTiling.set_tiling_data(self, core, l1, l0)

    def init_base_mnk(self, l0: L0TilingParams) -> None:
        """InitBaseMNK: baseN from the K length, baseM from what L0C and L0A leave, baseK from L0B."""
        t = self.tilingRunInfo
        l0.al0Pbuffer, l0.bl0Pbuffer, l0.cl0Pbuffer = DB_ON, DB_ON, DB_OFF
        if t.kValue > MAX_BASE_MN:
            best_n = BASIC_BLOCK_SIZE_64 * 2 // self.dtypeByteL0b
        elif t.kValue > BASIC_BLOCK_SIZE_512:
            best_n = BASIC_BLOCK_SIZE_128 * 2 // self.dtypeByteL0b
        elif t.kValue > BASIC_BLOCK_SIZE_256:
            best_n = BASIC_BLOCK_SIZE_256 * 2 // self.dtypeByteL0b
        elif t.kValue > BASIC_BLOCK_SIZE_128:
            best_n = BASIC_BLOCK_SIZE_512 * 2 // self.dtypeByteL0b
        else:
            if t.nValue >= t.kValue * 2 or t.nValue >= BASIC_BLOCK_SIZE_128:
                l0.cl0Pbuffer = DB_ON
            best_n = BASIC_BLOCK_SIZE_512 * 2 // self.dtypeByteL0b
        best_m = self.platformInfo.l0_c_size // (best_n * 4 * l0.cl0Pbuffer)
        best_m = min(best_m, self.platformInfo.l0_ab_size // (t.k0 * l0.al0Pbuffer * self.dtypeByteL0a))
        l0.baseM, l0.baseN = best_m, best_n
        l0.baseK = self.platformInfo.l0_ab_size // (best_n * self.dtypeByteL0b * l0.bl0Pbuffer)
        InnerProductTiling.adjust_base_mnk(self, l0, t)

    def cal_step_k(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """CalStepK: B1 single-buffered with all of K."""
        l1.al1Pbuffer, l1.bl1Pbuffer, l1.stepKa, l1.stepKb = DB_ON, DB_OFF, 1, 1
        self.ladder_match_step_k_with_full_load(l1, l0)

    def adjust_single_core_info(self, core: CoreTilingParams, batch_depth_cnt: int, n_cnt: int) -> None:
        """AdjustSingleCoreInfo: split dx rows so the block count fills the cores at least 80 %."""
        run = self.run
        core.singleCoreDin = 1
        hw_i = run.dedx_h * run.dedx_w
        max_m_cnt = ceil_div(hw_i, core.singleCoreM)
        best_total = align_up(batch_depth_cnt * max_m_cnt * n_cnt, self.coreNum)
        for i in range(1, max_m_cnt + 1):
            single_hw = ceil_div(run.dedx_h, i) * run.dedx_w
            total = batch_depth_cnt * ceil_div(hw_i, single_hw) * n_cnt
            real_total = align_up(total, self.coreNum)
            if total * 5 < real_total * 4:
                continue
            if real_total <= best_total:
                best_total = real_total
                core.singleCoreM = single_hw
            else:
                break

    def set_single_core_info(self, core: CoreTilingParams, l0: L0TilingParams) -> None:
        """SetSingleCoreInfo: whole-row M blocks, and depth blocks when the rows divide the cores evenly."""
        run, t = self.run, self.tilingRunInfo
        core.singleCoreCout = C04_COUT_SIZE if t.enableC04Flag else run.dedy_cout_g
        n_cnt = ceil_div(t.nValue, l0.baseN)
        l0.baseN = align_up(t.nValue // n_cnt, t.n0)
        core.singleCoreCin = l0.baseN
        batch_depth_cnt = run.batch_n * run.dedx_d
        core.singleCoreM = l0.baseM
        if batch_depth_cnt * n_cnt * run.dedx_h % self.coreNum == 0:
            remain_factor = self.coreNum // math.gcd(n_cnt * run.batch_n, self.coreNum)
            depth_factor = math.gcd(run.dedx_d, remain_factor)
            core.singleCoreDin = run.dedx_d // depth_factor
            core.singleCoreM = run.dedx_h * depth_factor // remain_factor * run.dedx_w
        else:
            self.adjust_single_core_info(core, batch_depth_cnt, n_cnt)
        if core.singleCoreM < l0.baseM:
            l0.baseM = align_up(core.singleCoreM, t.m0)
