"""Conv3DDXV2KernelSplitFullLoadTiling (priority 97): kernel split with all of Cout in L1 (kSCoutFullLoad).

Port of `op_host/op_tiling/arch35/conv3d_backprop_input_v2_kernel_split_fullLoad_tiling.cpp` (hicann/ops-nn @
e5c3fa93): taken when the kernel-split admission found that A1 and B1 can hold all of Cout (Cout per group at most
256); baseK starts at one sub-kernel's Cout block and B1 holds all of K.
"""
from __future__ import annotations

from tiling.conv3d_backprop_input.arch35.common import (BASIC_BLOCK_SIZE_128, BASIC_BLOCK_SIZE_256, CoreTilingParams,
                                                        L0TilingParams, L1TilingParams)
from tiling.conv3d_backprop_input.arch35.inner_product import (DB_OFF, DB_ON, InnerProductTiling, TilingInfeasible,
                                                               TilingRunInfo)
from tiling.conv3d_backprop_input.arch35.kernel_split import KernelSplitTiling


class KernelSplitFullLoadTiling(KernelSplitTiling):
    """Conv3DDXV2KernelSplitFullLoadTiling."""

    PRIORITY = 97
    NAME = "Conv3DDXV2KernelSplitFullLoadTiling"

    def is_capable(self) -> bool:
        """IsCapable: kernel split with Cout full load."""
        if not self.tilingRunInfo.enableSplitKernelFlag or not self.kSCoutFullLoad:
            return False
        if self.run.dedy_cout_g > BASIC_BLOCK_SIZE_256:
            self.kSCoutFullLoad = False
            return False
        return True

    def do_lib_api_tiling(self) -> None:
        """DoLibApiTiling."""
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
        self.update_work_space_size(l0)
        self.set_tiling_data(core, l1, l0)

    def init_base_mnk(self, l0: L0TilingParams) -> None:
        """InitBaseMNK: 256 x 256, baseK at least one sub-kernel's Cout block."""
        l0.al0Pbuffer, l0.bl0Pbuffer, l0.cl0Pbuffer = DB_ON, DB_ON, DB_OFF
        l0.baseM = l0.baseN = BASIC_BLOCK_SIZE_256
        l0.baseK = max(BASIC_BLOCK_SIZE_128 // self.dtypeByteL0b, self.kernelSplitPara.subSplitHkWkC0)
        self.adjust_base_mnk(l0, self.tilingRunInfo)

    def apply_l0_capacity_limit(self, base_m: int, base_n: int, base_k: int, l0ab_max_num: int,
                                l0c_max_num: int) -> tuple[int, int, int]:
        """ApplyL0CapacityLimit: baseK covers a sub-kernel block; baseM/baseN then fit L0A/L0B and L0C."""
        t = self.tilingRunInfo
        base_k = max(base_k, min(self.kernelSplitPara.subSplitHkWkC0, t.kValue))
        safe_k = max(base_k, t.k0, 1)
        base_m = min(base_m, max(l0ab_max_num // safe_k // t.m0, 1) * t.m0)
        base_n = min(base_n, max(l0ab_max_num // safe_k // t.n0, 1) * t.n0)
        if base_m * base_n > l0c_max_num:
            base_n = min(base_n, max(l0c_max_num // max(base_m, 1) // t.n0, 1) * t.n0)
        return base_m, base_n, base_k

    def adjust_base_mnk(self, l0: L0TilingParams, t: TilingRunInfo) -> None:
        """AdjustBaseMNK (its own: capped at 256, baseK a multiple of the sub-kernel taps)."""
        ti = self.tilingRunInfo
        base_m, base_n, base_k = l0.baseM, l0.baseN, l0.baseK
        l0ab_max_num = self.platformInfo.l0_ab_size // l0.al0Pbuffer // self.dtypeByteL0a
        l0c_max_num = self.platformInfo.l0_c_size // l0.cl0Pbuffer // 4
        aligned_m = -(-t.mValue // ti.m0) * ti.m0
        base_m = min(base_m, aligned_m)
        base_n = min(base_n, t.nValue)
        if base_n < l0.baseN:
            m_l0c_max = max(l0c_max_num // base_n // ti.n0, 1) * ti.n0
            base_m = min(BASIC_BLOCK_SIZE_256, m_l0c_max, aligned_m)
        if base_m < l0.baseM:
            n_l0c_max = max(l0c_max_num // base_m // ti.m0, 1) * ti.m0
            base_n = min(BASIC_BLOCK_SIZE_256, n_l0c_max, t.nValue)
        max_base_k = max(l0ab_max_num // max(base_m, base_n) // ti.k0, 1) * ti.k0
        max_base_k = min(max_base_k, t.kValue)
        base_k = min(max_base_k, base_k)
        while max_base_k > ti.lenHkWkC0:
            if max_base_k % t.lenHkWkC0 == 0:
                base_k = max_base_k
                break
            max_base_k = max(max_base_k - ti.k0, ti.k0)
        base_m, base_n, base_k = self.apply_l0_capacity_limit(base_m, base_n, base_k, l0ab_max_num, l0c_max_num)
        l0.baseK, l0.baseM, l0.baseN = base_k, base_m, base_n
        l0.cl0Pbuffer = DB_ON if base_m * base_n * 4 * DB_ON <= self.platformInfo.l0_c_size else DB_OFF

    def cal_step_k(self, l1: L1TilingParams, l0: L0TilingParams) -> None:
        """CalStepK: B1 single-buffered with all of K; A1 single-buffered too under Cout full load."""
        l1.al1Pbuffer = DB_OFF if self.kSCoutFullLoad else DB_ON
        l1.bl1Pbuffer, l1.stepKa, l1.stepKb = DB_OFF, 1, 1
        InnerProductTiling.ladder_match_step_k_with_full_load(self, l1, l0)
