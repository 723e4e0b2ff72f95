"""The dw kernel's replayable unit (ascend_sim/engine/replay.py): one tile's K loop on the AIC
(`Conv3DBackpropFilter._compute`), applied at the end of api.py so that no kernel line moves.

The key is the API object's state (tile indices, L1/L0 ping-pong, queues) and the tile's Out2L1ScalarParams,
without the two GlobalTensors: the GM addresses of a tile are relative to them (LoadToA1 reads
outBackPropGlobal[out2A1SrcAddr + ...], LoadToB1 fmapGlobal[out2B1SrcAddr + ...], both computed inside the unit
from the tile indices in the key), so a tile at the same place of another core's (or batch's) block replays with
the GM shifts of the two bases.
"""
from __future__ import annotations

from operator import attrgetter

from ascend_sim.ascendc import protocol_state, replay_unit

# The API object's attributes in the short key (what Init sets from the tiling alone, the c0, the L0 halves'
# addresses and the sizes, is the same for every call of a launch and left out; verify mode checks that these
# decide the whole state):
_COMPUTE_ATTRIBUTES = attrgetter(
    # the tile's place: the M/N blocks, their steps
    "curML0Idx", "curML1Idx", "curNL0Idx", "curNL1Idx", "curStepM", "curStepN",
    # the tile's shape: the Mmad's m/n/k, the B1 rows and top pad of each L1 half, the A1 K size
    "baseUseM", "baseUseN", "baseUseK", "bL1HiCopyLenPing", "bL1HiCopyLenPong", "bL1PadUpPing", "bL1PadUpPong",
    "curLoadKal1", "srcL12L0aOffset",
    # the core's block (SetSingleShape): the loop counts and tails, the first ho/hi row
    "singleShapeCout", "singleShapeCin", "singleShapeHo", "hoStartIdx", "hiStartIdx", "mIter", "nIter", "kIter",
    "tailM", "tailN", "tailK", "stepKaRound", "stepKbRound",
    # what the call does: the first tile, the workspace layout, the L0 and L0C ping-pong
    "isFirstIter", "isDeterministic", "l0aPingPongFlag", "l0cPingPongFlag",
    # the A1/B1 tensors the previous tile left dequeued, and the instruction parameters it left
    "cacheA1BufPing", "cacheA1BufPong", "cacheB1BufPing", "cacheB1BufPong", "load3dA", "load3dB", "mmad")


def _roots(api, p):
    """The API object, and the tile's load/free flags (the unit sets its source addresses)."""
    return api, p


def _anchors(api, p):
    """- dy (outBackPropGlobal) moves with its base (this core's batch, cout and ho block);
    - the feature map (fmapGlobal) moves with its base (this core's batch, cin and hi block)."""
    dy, fmap = api.outBackPropGlobal, api.fmapGlobal
    return {dy.buffer: dy.address, fmap.buffer: fmap.address}


def _compute_key(api, p) -> tuple:
    """The attributes above, the tile's Out2L1ScalarParams (by value) and the queue protocol's state (which slots
    wait on a FreeTensor or EnQue flag, with which event IDs): the tile's records and the state it leaves."""
    return (*_COMPUTE_ATTRIBUTES(api), p,
            protocol_state(api.pipe, api.a1Ping, api.a1Pong, api.b1Ping, api.b1Pong, api.l0cPing, api.l0cPong))


def compute_unit(method):
    """Conv3DBackpropFilter._compute (one tile's K loop on the AIC) as a replayable unit."""
    return replay_unit("Conv3DBackpropFilter._compute", roots=_roots, fixed=("tiling",), anchors=_anchors,
                       key=_compute_key, exclude=("outBackPropGlobal", "fmapGlobal"))(method)
