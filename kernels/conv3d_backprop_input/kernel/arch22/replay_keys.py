"""The dx kernel's replayable units (ascend_sim/engine/replay.py): what decides the records of one call, and the
GM addresses they move with. Applied at the end of api.py and vec_post.py, so that no kernel line moves.

A tile's K loop on the AIC (`Conv3DBackpropInput._compute`) issues the same records, GM addresses shifted, for
every tile whose API state matches apart from where the tile is: its output depth (curDinIdx) and its first
window row (curHoIdx, relative to the core's first row curHoStartIdx). Those four attributes and the two
GlobalTensors are left out of the key; what they decide is in the extra key; the GM shifts come from anchors.
The AIV's post-process (`VecPostProcess`) depends on its queues, the tile's shape and the N block; it moves with
the core's workspace slot and the tile's place in y.
"""
from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from ascend_sim.ascendc import (GetBlockIdx, GetSubBlockIdx, LoadData2DParams, LoadData3DParamsV2, MmadParams,
                                protocol_state, replay_unit)
from kernels.conv3d_backprop_input.kernel.arch22.load_a import CalcHDstDataSkipLine

# The kernel sources (replay.kernel_sources_digest of this folder) the units below were last checked against in
# verify mode: an edited kernel has another digest, and its units then run for real (tests/ascend_sim/engine/
# test_replay_sources.py says when to update it).
VERIFIED_SOURCES = "691e86df684acf9f41a465fb9e3152c70e1326f6"

# The API object's attributes in the short key of `_compute` (what Init sets from the tiling alone is the same for
# every call of a launch and left out; verify mode checks that these decide the whole state):
_COMPUTE_ATTRIBUTES = attrgetter(
    # the tile's place: the M/N blocks loaded, the A1/B1 ping-pong parities, the cout ping-pong indices
    "curML0Idx", "curML1Idx", "curNL0Idx", "curNL1Idx", "curStepM", "curStepN", "curPingCoutIdx", "curPongCoutIdx",
    # the tile's shape: the Mmad's m/n, LoadToA1's rows, LoadToB2's blocks
    "baseUseM", "baseUseN", "baseUseAlignN", "curHoSize",
    # the core's block (SetSingleShape): the loop counts and tails
    "singleShapeM", "singleShapeHin", "singleShapeCin", "singleShapeCin1", "singleShapeCout1", "singleShapeDin",
    "mIter", "nIter", "kIter", "tailM", "tailN", "tailK", "stepKaRound", "stepKbRound", "kIterStepKaTail",
    "kIterStepKbTail", "stepKaTail", "stepKbTail",
    # what the call does: skip, first tile, the B1 full-load protocol, the L0 and L0C ping-pong
    "needComputeFlag", "needComputeKFlag", "isFirstIter", "isFreeB1", "isLoadB1", "l0aPingPongFlag",
    "usingCacheC1Ping",
    # the A1/B1 tensors the previous tile left dequeued, and the instruction parameters it left
    "cacheA1BufPing", "cacheA1BufPong", "cacheB1BufPing", "cacheB1BufPong")
# ... and those set by the first tile (the L1 K sizes, LoadToB2's blocks and offsets); the instruction parameters
# (mmad, and load3d, load2d from the first tile on) are keyed by their fields (_parameters)
_COMPUTE_ATTRIBUTES_SET_LATER = ("curLoadKal1", "curLoadKbl1", "blockBaseN", "idxC1in", "baseB1Offset")
# The parameter structs' fields (all plain values but padList, a list the kernel sets: by value as a tuple): the
# engine's _key_value would read each struct's fields and test their classes one struct at a time
_MMAD_FIELDS = attrgetter(*[f.name for f in fields(MmadParams)])
_LOAD2D_FIELDS = attrgetter(*[f.name for f in fields(LoadData2DParams)])
_LOAD3D_FIELDS = attrgetter(*[f.name for f in fields(LoadData3DParamsV2) if f.name != "padList"])


def _valid_planes(api) -> tuple:
    """(the first dy plane, ((kernel plane, its dy plane relative to the first) ...)) over the kernel planes kd
    that reach the tile's output depth: what _valid_dout gives from the tiling's depth fields and curDinIdx, kept
    per their values (the extra and the anchors of every hit ask for it, a launch has few output depths)."""
    t = api.tiling
    key = (t.dk, t.padFront, t.dilationD, t.strideD, t.dout, api.curDinIdx)
    found = _PLANES.get(key)
    if found is None:
        if len(_PLANES) >= 4096:  # many launches' tilings (the lab): start again
            _PLANES.clear()
        planes = []
        for kd in range(t.dk):
            dout = api._valid_dout(kd)
            if dout is not None:
                planes.append((kd, dout))
        first = planes[0][1] if planes else 0
        found = _PLANES[key] = (first, tuple((kd, dout - first) for kd, dout in planes))
    return found


_PLANES: dict = {}


def _compute_extra(api) -> tuple:
    """- the kernel planes with a dy plane, their dy planes relative to the first (curDinIdx picks them);
    - the top pad min(curHoIdx, 0) (CalcSetFmatrixParams' padList[2]);
    - the leading zero rows CalcHDstDataSkipLine (curHoIdx modulo strideH: the A1 DataCopy shape)."""
    return (_valid_planes(api)[1], min(api.curHoIdx, 0), CalcHDstDataSkipLine(api))


def _first_dy_row(api) -> int:
    """curOriHoIdx of LoadToA1: the tile's first dy row, relative to the core's first aligned row."""
    t = api.tiling
    curHoStartOffset = max(api.curHoStartIdx, 0)
    curHoIdx = 0 if api.curHoIdx < 0 else api.curHoIdx - curHoStartOffset
    if t.strideH > 1:
        skipHoSize = curHoStartOffset % t.strideH
        skipHoSize = t.strideH - skipHoSize if skipHoSize > 0 else 0
        return (curHoIdx - skipHoSize + t.strideH - 1) // t.strideH
    return curHoIdx


def _compute_anchors(api) -> dict:
    """- dy (outBackPropGlobal) moves with its element (first valid dy plane, cout1 0, first dy row): LoadToA1's
      srcBase at cout1 0;
    - the weight (weightGlobal) moves with its base (the kernel plane and N block are in the key)."""
    t = api.tiling
    dy, weight = api.outBackPropGlobal, api.weightGlobal
    first = _valid_planes(api)[0]
    hoStride = t.wo * t.c0
    element = first * t.cout1 * t.ho * hoStride + _first_dy_row(api) * hoStride
    anchors = {weight.buffer: weight.address}
    anchors[dy.buffer] = dy.address + element * dy.dtype.itemsize
    return anchors


def _parameters(api) -> tuple:
    """The instruction parameters the previous tile left, by value: the Mmad's, and LoadData3Dv2's and
    LoadData2D's (None before the first tile sets them)."""
    load3d, load2d = getattr(api, "load3d", None), getattr(api, "load2d", None)
    return (_MMAD_FIELDS(api.mmad), None if load3d is None else (_LOAD3D_FIELDS(load3d), tuple(load3d.padList)),
            None if load2d is None else _LOAD2D_FIELDS(load2d))


def _compute_key(api) -> tuple:
    """The attributes above, the instruction parameters and the queue protocol's state (which slots wait on a
    FreeTensor or EnQue flag, with which event IDs): the tile's records and the state it leaves."""
    return (*_COMPUTE_ATTRIBUTES(api), *[getattr(api, name, None) for name in _COMPUTE_ATTRIBUTES_SET_LATER],
            _parameters(api), protocol_state(api.pipe, api.a1Ping, api.a1Pong, api.b1Ping, api.b1Pong,
                                             api.c1Ping, api.c1Pong))


def compute_unit(method):
    """Conv3DBackpropInput._compute (one tile's K loop on the AIC) as a replayable unit. On the AIV the call only
    updates indices (no record): it runs for real there."""
    return replay_unit("Conv3DBackpropInput._compute", fixed=("tiling",), extra=_compute_extra,
                       anchors=_compute_anchors, key=_compute_key, core_types=("AIC",),
                       exclude=("curDinIdx", "curDinStartIdx", "curHoIdx", "curHoStartIdx", "outBackPropGlobal",
                                "weightGlobal"), verified=VERIFIED_SOURCES)(method)


def _plane_extra(api, curKdIdx, curDoutIdx, isFirstDk, a1PingPongFlag, b1PingPongFlag, l0aPingPongFlag, l0c, l0a_all,
                 l0b_all) -> tuple:
    """- the loop's locals: the first plane (its first Mmad initialises L0C), the A1/B1/L0 ping-pong flags;
    - the L0C, L0A and L0B tensors (where the K loop writes and reads);
    - the top pad min(curHoIdx, 0) and the leading zero rows CalcHDstDataSkipLine, as for the tile."""
    return (isFirstDk, a1PingPongFlag, b1PingPongFlag, l0aPingPongFlag, l0c.address, l0a_all.address,
            l0b_all.address, min(api.curHoIdx, 0), CalcHDstDataSkipLine(api))


def _plane_key(api, *args) -> tuple:
    """The tile's short key: the same attributes decide a plane's records and the state it leaves."""
    return _compute_key(api)


def _plane_anchors(api, curKdIdx, curDoutIdx, *args) -> dict:
    """- dy (outBackPropGlobal) moves with its element (dy plane curDoutIdx, cout1 0, the tile's first dy row):
      LoadToA1's srcBase at cout1 0;
    - the weight (weightGlobal) moves with kernel plane curKdIdx's first row (LoadToB1's src at cin1 and cout1 0:
      FRACTAL_Z_3D rows of cin1G x Hk x Wk x (cout1G x C0, or fp32's alignedCout) couts of C0)."""
    t = api.tiling
    dy, weight = api.outBackPropGlobal, api.weightGlobal
    hoStride = t.wo * t.c0
    element = curDoutIdx * t.cout1 * t.ho * hoStride + _first_dy_row(api) * hoStride
    couts = t.cout1G * t.c0 if api.isB16 else api.alignedCout
    return {dy.buffer: dy.address + element * dy.dtype.itemsize,
            weight.buffer: weight.address + curKdIdx * t.cin1G * api.HkWkC0 * couts * weight.dtype.itemsize}


def kernel_plane_unit(method):
    """Conv3DBackpropInput._compute_kernel_plane (one kernel plane's K loop of a tile) as a replayable unit: for
    layers with few long tiles, a tile that runs for real replays its repeated planes."""
    return replay_unit("Conv3DBackpropInput._compute_kernel_plane", fixed=("tiling",), extra=_plane_extra,
                       anchors=_plane_anchors, key=_plane_key,
                       exclude=("curDinIdx", "curDinStartIdx", "curHoIdx", "curHoStartIdx", "outBackPropGlobal",
                                "weightGlobal"), verified=VERIFIED_SOURCES)(method)


def vec_post_unit(function, JudgeComputeNecessary):
    """VecPostProcess(op, output) (one tile from the workspace into NCDHW on the AIV) as a replayable unit.
    JudgeComputeNecessary is vec_post's own (passed in: vec_post imports this module)."""

    def roots(op, output):
        """The AIV's two queues and the TPipe they are booked in (their slots, event IDs, queued tensors)."""
        return op.vecInQueue, op.vecOutQueue, op.dedx.pipe

    def extra(op, output):
        """Whether it computes (needComputeFlag, a kernel plane reaching curDinIdx), the sub-block, the tile's
        shape (baseUseM, baseUseN) and real channels (curNL0Idx, singleShapeCin), the tiling and dtype."""
        d = op.dedx
        return (d.needComputeFlag, JudgeComputeNecessary(op), GetSubBlockIdx(), d.baseUseM, d.baseUseN,
                d.curNL0Idx, d.singleShapeCin, id(d.tiling), op.yType)

    def key(op, output):
        """The queue protocol's state of the two queues and the pipe (with extra: everything the roots hold that a
        call changes or reads)."""
        return (protocol_state(op.vecInQueue, op.vecOutQueue, op.dedx.pipe),)

    def anchors(op, output):
        """- the workspace (l0cOutGm) moves with this core's slot (GetBlockIdx() * baseM * baseN elements);
        - y (output) moves with the tile's first pixel of channel 0 (curML0Idx * baseM + curDinIdx * Hi * Wi)."""
        d, t = op.dedx, op.dedx.tiling
        size = op.yType.itemsize
        return {op.l0cOutGm.buffer: op.l0cOutGm.address + GetBlockIdx() * t.baseM * t.baseN * size,
                output.buffer: output.address + (d.curML0Idx * t.baseM + d.curDinIdx * t.hi * t.wi) * size}

    return replay_unit("VecPostProcess", roots=roots, extra=extra, anchors=anchors, key=key,
                       verified=VERIFIED_SOURCES)(function)
