"""The kernel entry `conv3d_backprop_filter_v2` (op_kernel/conv3d_backprop_filter_v2.cpp, arch22), run on
every core.

The tiling key is the template id (conv3DDWTemplateId): 0 the base template Conv3dDw, 1 SPLIT_M_K, 2 SPLIT_K_N,
3 SPLIT_M_N, 4 SPLIT_M_N_STREAMK. Every template first runs the init-output pass (zero dw, then the cube cores
meet), since the main pass adds into dw. The deterministic build (DETERMINISTIC_MODE) is ported for stream-K
(its tail blocks summed by the vector cores in a fixed order); its base template (ProcessWithDeterministic) is
not.
"""
from __future__ import annotations

from kernels.conv3d_backprop_filter.kernel.drivers import (Conv3dDw, Conv3dDwBasicBlockSplitKN,
                                                           Conv3dDwBasicBlockSplitMK, Conv3dDwBasicBlockSplitMN,
                                                           Conv3dDwBasicBlockSplitMNStreamK)
from kernels.conv3d_backprop_filter.kernel.init_output import Conv3dDwInitOutput

TPL_SPLIT_DFL, TPL_SPLIT_M_K, TPL_SPLIT_K_N, TPL_SPLIT_M_N, TPL_SPLIT_M_N_STREAMK = 0, 1, 2, 3, 4
DRIVERS = {TPL_SPLIT_DFL: Conv3dDw, TPL_SPLIT_M_K: Conv3dDwBasicBlockSplitMK, TPL_SPLIT_K_N: Conv3dDwBasicBlockSplitKN,
           TPL_SPLIT_M_N: Conv3dDwBasicBlockSplitMN, TPL_SPLIT_M_N_STREAMK: Conv3dDwBasicBlockSplitMNStreamK}


def conv3d_backprop_filter_v2(x, filter_size, out_backprop, y, workSpace, tilingData, *, tiling_key: int,
                              dtype, deterministic: bool = False) -> None:
    """One core's work. `x`, `out_backprop` are GmAddr of NDC1HWC0 data of `dtype` (DTYPE_X = DTYPE_OUT_BACKPROP),
    `y` a GmAddr of the fp32 FRACTAL_Z_3D dw; filter_size is not read; workSpace holds the stream-K partial sums
    of the deterministic build (DETERMINISTIC_MODE = 1: `deterministic`, a MIX_AIC_1_2 launch)."""
    driver_cls = DRIVERS.get(tiling_key)
    if driver_cls is None:
        raise ValueError(f"tiling_key={tiling_key} is not a Conv3DBackpropFilterV2 template id (0..4)")
    if deterministic and tiling_key == TPL_SPLIT_DFL:
        raise ValueError("the deterministic base template (Conv3dDw::ProcessWithDeterministic) is not ported; the "
                         "A2 host gives deterministic problems the stream-K template (tiling key 4)")
    init = Conv3dDwInitOutput()
    init.Init(y, tilingData)
    init.Process()
    init.Destroy()
    op = driver_cls(dtype, dtype, deterministic=deterministic)
    op.Init(x, out_backprop, y, workSpace, tilingData)
    op.Process()
