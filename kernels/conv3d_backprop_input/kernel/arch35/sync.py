"""The cross-core flags between the AIC and its AIVs (impl/conv_bp_input_sub_func_sync.h): CvCrossCoreSet /
CvCrossCoreWait (CrossCoreSetFlag<SYNC_MODE 4, pipe> / CrossCoreWaitFlag<4>), the head / tail pair that keeps
the FLAG_FIXP_ID handshake balanced (the AIV sets one ahead in Init, the AIC waits for the last in End), and the
B1 handshake of the weight the AIV builds in L1 (group ENLARGE, C04): the AIV fills b1UbPing_ / b1UbPong_ and
sets FLAG_MTE1_ID_1, the AIC loads L0B from it and gives it back with FLAG_MTE1_ID_2 (C04's second AIV: the same
IDs + CROSS_CORE_FLAG_ID_MAX on the AIC). CrossCoreSetHead / CrossCoreWaitTail (ENLARGE) keep that pair balanced
per tile: the AIC sets FLAG_MTE1_ID_2 once ahead, the AIV waits for the last."""
from __future__ import annotations

from ascend_sim.ascendc import (ASCEND_IS_AIC, ASCEND_IS_AIV, PIPE_MTE1, PIPE_MTE3, CrossCoreSetFlag, CrossCoreWaitFlag,
                                GetSubBlockIdx)
from kernels.conv3d_backprop_input.kernel.arch35.util import (CROSS_CORE_FLAG_ID_MAX, FLAG_FIXP_ID, FLAG_MTE1_ID_1,
                                                              FLAG_MTE1_ID_2, SYNC_MODE, TPL_GROUP_MODE_ENLARGE,
                                                              TPL_SPLIT_KERNEL_HW)


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
    """Init's one-ahead sets: the AIV's FLAG_FIXP_ID; under C04 the AIC's FLAG_MTE1_ID_2 to each AIV (the B1
    buffer is free), which CrossCoreWaitTailForMix takes back in End."""
    if ASCEND_IS_AIC() and api.enableC04Flag:
        CvCrossCoreSet(PIPE_MTE1, FLAG_MTE1_ID_2)
        CvCrossCoreSet(PIPE_MTE1, FLAG_MTE1_ID_2 + CROSS_CORE_FLAG_ID_MAX)
    if ASCEND_IS_AIV() and uses_fixp_handshake(api):
        if api.kernelSplitMode == TPL_SPLIT_KERNEL_HW and GetSubBlockIdx() != 0:
            # [port] the source sets it on both AIVs; sub-block 1's lands on the AIC's flag 24, which nothing waits
            # for (only sub-block 0 re-interleaves), and the simulator faults on a flag left set at the end
            return
        CvCrossCoreSet(PIPE_MTE3, FLAG_FIXP_ID)


def CrossCoreWaitTailForMix(api) -> None:
    if ASCEND_IS_AIC() and uses_fixp_handshake(api):
        CvCrossCoreWait(FLAG_FIXP_ID)
    if ASCEND_IS_AIV() and api.enableC04Flag:
        CvCrossCoreWait(FLAG_MTE1_ID_2)


def WaitForVecBeforeLoadToB2(api) -> None:
    CvCrossCoreWait(FLAG_MTE1_ID_1)
    if api.enableC04Flag:
        CvCrossCoreWait(FLAG_MTE1_ID_1 + CROSS_CORE_FLAG_ID_MAX)


def NotifyVecAfterLoadToB2(api) -> None:
    CvCrossCoreSet(PIPE_MTE1, FLAG_MTE1_ID_2)
    if api.enableC04Flag:
        CvCrossCoreSet(PIPE_MTE1, FLAG_MTE1_ID_2 + CROSS_CORE_FLAG_ID_MAX)


def WaitForCubeBeforeLoadToB1(api) -> None:
    CvCrossCoreWait(FLAG_MTE1_ID_2)


def NotifyCubeAfterLoadToB1(api) -> None:
    CvCrossCoreSet(PIPE_MTE3, FLAG_MTE1_ID_1)


def CrossCoreSetHead(api) -> None:
    """Before a tile's K loop: the AIC tells AIV 0 that the B1 buffer is free (ENLARGE)."""
    if ASCEND_IS_AIC() and api.groupMode == TPL_GROUP_MODE_ENLARGE:
        CvCrossCoreSet(PIPE_MTE1, FLAG_MTE1_ID_2)


def CrossCoreWaitTail(api) -> None:
    """After a tile's K loop: AIV 0 takes the AIC's last release, so the next tile starts balanced (ENLARGE)."""
    if ASCEND_IS_AIV() and api.groupMode == TPL_GROUP_MODE_ENLARGE and GetSubBlockIdx() == 0:
        CvCrossCoreWait(FLAG_MTE1_ID_2)
