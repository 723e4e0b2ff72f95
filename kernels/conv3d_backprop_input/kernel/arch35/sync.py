"""The cross-core flags between the AIC and its AIVs (impl/conv_bp_input_sub_func_sync.h): CvCrossCoreSet /
CvCrossCoreWait (CrossCoreSetFlag<SYNC_MODE 4, pipe> / CrossCoreWaitFlag<4>), and the head / tail pair that keeps
the FLAG_FIXP_ID handshake balanced (the AIV sets one ahead in Init, the AIC waits for the last in End)."""
from __future__ import annotations

from ascend_sim.ascendc import ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag
from kernels.conv3d_backprop_input.kernel.arch35.util import FLAG_FIXP_ID, SYNC_MODE


def CvCrossCoreSet(srcPipe, flagId: int) -> None:
    CrossCoreSetFlag(SYNC_MODE, srcPipe, flagId)


def CvCrossCoreWait(flagId: int) -> None:
    CrossCoreWaitFlag(flagId, SYNC_MODE)


def uses_fixp_handshake(api) -> bool:
    """split-Dk (the source) and split-K through UB (the port's addition: docs/conv3d_backprop_input_arch35.md,
    "the workspace slice between blocks") pace the AIC's workspace Fixpipes by the AIV's FLAG_FIXP_ID."""
    return api.enableSplitDk_ or api.useUbAccumForSplitK_


def CrossCoreSetHeadForMix(api) -> None:
    if ASCEND_IS_AIV() and uses_fixp_handshake(api):
        CvCrossCoreSet(PIPE_MTE3, FLAG_FIXP_ID)


def CrossCoreWaitTailForMix(api) -> None:
    if ASCEND_IS_AIC() and uses_fixp_handshake(api):
        CvCrossCoreWait(FLAG_FIXP_ID)
