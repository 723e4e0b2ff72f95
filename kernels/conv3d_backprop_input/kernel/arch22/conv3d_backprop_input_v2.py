"""The kernel entry `conv3d_backprop_input_v2` (op_kernel/conv3d_backprop_input_v2.cpp), run on every core.

Template flags come from the tiling key: loadB2Condition = key & 0xFF, enableKernelSplit = bit 8,
useBasicBlock = bit 9; FORMAT_Y ("NDC1HWC0" or "NCDHW") is a compile-time parameter of the binary. On A2 the
entry is KERNEL_TYPE_MIX_AIC_1_1 for every build; the NDC1HWC0 build's vector cores return at once, so the
operator launches that build on the cube cores only (MIX_AIC_1_0), and the NCDHW build as MIX_AIC_1_1.
Order: optional init-output pass (initOutputFlag == 1: zero y, then the cube cores' barrier), then the general
driver Conv3dDx (useBasicBlock 0) or the basic-block driver Conv3dDxBasicBlockSplitMN (1).
enableKernelSplit = 1 raises ValueError before any instruction: the real entry then runs no driver and leaves dx
unwritten (the kernel-split variant belongs to Conv3DTransposeV2), which the simulator does not do silently.
"""
from __future__ import annotations

from kernels.conv3d_backprop_input.kernel.arch22.drivers import Conv3dDx, Conv3dDxBasicBlockSplitMN
from kernels.conv3d_backprop_input.kernel.arch22.init_output import L0_INIT, Conv3dDxInitOutput
from kernels.conv3d_backprop_input.kernel.arch22.util import FORMAT_NDC1HWC0


def decode_tiling_key(key: int) -> tuple[int, bool, bool]:
    """(loadB2Condition, enableKernelSplit, useBasicBlock) of GET_TPL_TILING_KEY."""
    return key & 0xFF, bool((key >> 8) & 1), bool((key >> 9) & 1)


def driver_class(tiling_key: int) -> type:
    """The driver the entry runs for this key: Conv3dDxBasicBlockSplitMN when useBasicBlock, else Conv3dDx."""
    return Conv3dDxBasicBlockSplitMN if decode_tiling_key(tiling_key)[2] else Conv3dDx


def conv3d_backprop_input_v2(input_size, filter, out_backprop, y, workspace, tilingData, *, tiling_key: int,
                             dtype, yFormat: str = FORMAT_NDC1HWC0) -> None:
    """One core's work. `filter`, `out_backprop`, `y` are GmAddr (FRACTAL_Z_3D, NDC1HWC0, yFormat); `workspace`
    the user workspace (the NCDHW build's per-core tile slots); `dtype` is DTYPE_FILTER = DTYPE_OUT_BACKPROP =
    DTYPE_Y and yFormat FORMAT_Y (the kernel's compile-time types)."""
    loadB2Condition, enableKernelSplit, useBasicBlock = decode_tiling_key(tiling_key)
    if enableKernelSplit:
        # The real entry runs the init-output pass and then no driver: dx is left unwritten (the kernel-split
        # Conv3dDx variant is instantiated only by Conv3DTransposeV2). Refused here, before any instruction,
        # rather than returning silently; the operator clears the flag (docs/conv3d_backprop_input.md).
        raise ValueError(f"tiling key {tiling_key} sets enableKernelSplit: the A2 Conv3DBackpropInputV2 entry runs "
                         "no driver with it and would leave dx unwritten; launch the same tiling with "
                         "enableKernelSplit=0 (tiling.with_overrides(enableKernelSplit=False))")
    if tilingData.conv3DDxTiling.initOutputFlag == L0_INIT:
        init = Conv3dDxInitOutput(dtype, yFormat)
        init.Init(y, tilingData)
        init.Process()
        init.Destroy()
    op = driver_class(tiling_key)(dtype, dtype, dtype, loadB2Condition, yFormat)
    op.Init(filter, out_backprop, y, workspace, tilingData)
    op.Process()
