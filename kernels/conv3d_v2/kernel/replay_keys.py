"""The forward conv kernel's replayable unit (ascend_sim/engine/replay.py): one L0C block's K loop on the AIC
(`Conv3D.IterateK`), applied at the end of api.py so that no kernel line moves.

The key is the API object's state (its iterators, flags, queues and the load/mmad/copy-out helpers' state)
without the GlobalTensors of the input, weight and bias: the block's GM addresses are computed inside the unit
from the iterators in the key, relative to those tensors, so a block at the same place of another core's (or
batch's, group's) share replays with the GM shifts of the three bases.
"""
from __future__ import annotations

from ascend_sim.ascendc import replay_unit


def _anchors(api):
    """- the input (agm) moves with its base (this core's batch, depth and rows);
    - the weight (bgm) and the bias (biasgm, when set) move with their bases (this core's Cout block, group)."""
    anchors = {api.agm.buffer: api.agm.address, api.bgm.buffer: api.bgm.address}
    bias = getattr(api, "biasgm", None)
    if api.enableBias and bias is not None:
        anchors[bias.buffer] = bias.address
    return anchors


def iterate_k_unit(method):
    """Conv3D.IterateK (one L0C block over all of K) as a replayable unit."""
    return replay_unit("Conv3D.IterateK", fixed=("conv3dTiling",), anchors=_anchors,
                       exclude=("agm", "bgm", "biasgm"))(method)
