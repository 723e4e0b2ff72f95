"""Conv3DDXV2SmallKernelTiling (priority 96): registered for arch35 but only ever capable on fused SoCs.

`op_host/op_tiling/arch35/conv3d_backprop_input_v2_small_kernel_tiling.cpp` (hicann/ops-nn @ e5c3fa93) starts
CheckSmallKernelEnable with `if (!IsSocVersionFuse(context_)) return false;`. IsSocVersionFuse reads the SoC's
`cube_vector_combine`, which every 3510 INI sets to `split` (the 950 runs its cube and vector cores apart, MIX
1:2), so on the Ascend 950 the registry always passes this template on to the next. Its tiling body (the
loadB1Condition 4 small-kernel path: whole-Cin baseN, score-based M split) therefore has no 950 input and is not
ported; none of the real arch35 UT vectors uses loadB1Condition 4 either.
"""
from __future__ import annotations

from tiling.conv3d_backprop_input.arch35.inner_product import InnerProductTiling


class SmallKernelTiling(InnerProductTiling):
    """Conv3DDXV2SmallKernelTiling."""

    PRIORITY = 96
    NAME = "Conv3DDXV2SmallKernelTiling"

    def is_capable(self) -> bool:
        """IsCapable -> CheckSmallKernelEnable: IsSocVersionFuse is false on 3510 (cube_vector_combine=split)."""
        return False
