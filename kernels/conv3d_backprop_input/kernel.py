"""The kernel entry `conv3d_backprop_input_v2` (op_kernel/conv3d_backprop_input_v2.cpp), run on every core.

Template flags come from the tiling key: loadB2Condition = key & 0xFF, enableKernelSplit = bit 8,
useBasicBlock = bit 9. Order: optional init-output pass (initOutputFlag == 1: zero y, then SyncAll), then the
general driver Conv3dDx (useBasicBlock 0) or the basic-block driver Conv3dDxBasicBlockSplitMN (1).
"""
from __future__ import annotations

from .drivers import Conv3dDx, Conv3dDxBasicBlockSplitMN
from .init_output import L0_INIT, Conv3dDxInitOutput


def decode_tiling_key(key: int) -> tuple[int, bool, bool]:
    """(loadB2Condition, enableKernelSplit, useBasicBlock) of GET_TPL_TILING_KEY."""
    return key & 0xFF, bool((key >> 8) & 1), bool((key >> 9) & 1)


def conv3d_backprop_input_v2(input_size, filter, out_backprop, y, workspace, tilingData, *, tiling_key: int,
                             dtype) -> None:
    """One core's work. `filter`, `out_backprop`, `y` are GmAddr (FRACTAL_Z_3D, NDC1HWC0, NDC1HWC0);
    `dtype` is DTYPE_FILTER = DTYPE_OUT_BACKPROP = DTYPE_Y (the kernel's compile-time types)."""
    loadB2Condition, enableKernelSplit, useBasicBlock = decode_tiling_key(tiling_key)
    if tilingData.conv3DDxTiling.initOutputFlag == L0_INIT:
        init = Conv3dDxInitOutput(dtype)
        init.Init(y, tilingData)
        init.Process()
        init.Destroy()
    if enableKernelSplit:
        # As in the real entry: the kernel-split path is never dispatched on A2 (reference §4.4).
        return
    driver_cls = Conv3dDxBasicBlockSplitMN if useBasicBlock else Conv3dDx
    op = driver_cls(dtype, dtype, dtype, loadB2Condition)
    op.Init(filter, out_backprop, y, workspace, tilingData)
    op.Process()
