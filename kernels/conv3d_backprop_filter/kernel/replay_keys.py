"""The dw kernel's replayable unit (ascend_sim/engine/replay.py): one tile's K loop on the AIC
(`Conv3DBackpropFilter._compute`), applied at the end of api.py so that no kernel line moves.

The key is the API object's state (tile indices, L1/L0 ping-pong, queues) and the tile's Out2L1ScalarParams,
without the two GlobalTensors: the GM addresses of a tile are relative to them (LoadToA1 reads
outBackPropGlobal[out2A1SrcAddr + ...], LoadToB1 fmapGlobal[out2B1SrcAddr + ...], both computed inside the unit
from the tile indices in the key), so a tile at the same place of another core's (or batch's) block replays with
the GM shifts of the two bases.
"""
from __future__ import annotations

from ascend_sim.ascendc import replay_unit


def _roots(api, p):
    """The API object, and the tile's load/free flags (the unit sets its source addresses)."""
    return api, p


def _anchors(api, p):
    """- dy (outBackPropGlobal) moves with its base (this core's batch, cout and ho block);
    - the feature map (fmapGlobal) moves with its base (this core's batch, cin and hi block)."""
    dy, fmap = api.outBackPropGlobal, api.fmapGlobal
    return {dy.buffer: dy.address, fmap.buffer: fmap.address}


def compute_unit(method):
    """Conv3DBackpropFilter._compute (one tile's K loop on the AIC) as a replayable unit."""
    return replay_unit("Conv3DBackpropFilter._compute", roots=_roots, fixed=("tiling",), anchors=_anchors,
                       exclude=("outBackPropGlobal", "fmapGlobal"))(method)
