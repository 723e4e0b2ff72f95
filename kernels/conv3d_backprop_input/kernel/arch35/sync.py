"""The cross-core flags between the AIC and its AIVs (impl/conv_bp_input_sub_func_sync.h): CvCrossCoreSet /
CvCrossCoreWait (CrossCoreSetFlag<SYNC_MODE 4, pipe> / CrossCoreWaitFlag<4>), and the head / tail pair that keeps
the FLAG_FIXP_ID handshake balanced (the AIV sets one ahead in Init, the AIC waits for the last in End)."""
from __future__ import annotations

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag,
                                GetSubBlockIdx)
from kernels.conv3d_backprop_input.kernel.arch35.util import FLAG_FIXP_ID, SYNC_MODE, TPL_SPLIT_KERNEL_HW


def CvCrossCoreSet(srcPipe, flagId: int) -> None:
    CrossCoreSetFlag(SYNC_MODE, srcPipe, flagId)


def CvCrossCoreWait(flagId: int) -> None:
    CrossCoreWaitFlag(flagId, SYNC_MODE)


def uses_fixp_handshake(api) -> bool:
    """The HW kernel split and split-Dk (the source) and split-K through UB (the port's addition:
    docs/conv3d_backprop_input_arch35.md, "the workspace slice between blocks") pace the AIC's workspace Fixpipes
    by the AIV's FLAG_FIXP_ID."""
    return api.kernelSplitMode == TPL_SPLIT_KERNEL_HW or api.enableSplitDk_ or api.useUbAccumForSplitK_


def CrossCoreSetHeadForMix(api) -> None:
    if ASCEND_IS_AIV() and uses_fixp_handshake(api):
        if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW and GetSubBlockIdx() != 0:
            # [port] the source sets it on both AIVs; sub-block 1's lands on the AIC's flag 24, which nothing waits
            # for (only sub-block 0 re-interleaves), and the simulator faults on a flag left set at the end
            return
        CvCrossCoreSet(PIPE_MTE3, FLAG_FIXP_ID)


def CrossCoreWaitTailForMix(api) -> None:
    if ASCEND_IS_AIC() and uses_fixp_handshake(api):
        CvCrossCoreWait(FLAG_FIXP_ID)
