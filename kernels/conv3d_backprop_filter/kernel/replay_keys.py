"""The dw kernel's replayable unit (ascend_sim/engine/replay.py): one tile's K loop on the AIC
(`Conv3DBackpropFilter._compute`), applied at the end of api.py so that no kernel line moves.

The key is the API object's state (L1/L0 ping-pong, queues, the tile's shape and what the previous tile left) and
the tile's load/free flags, without the two GlobalTensors and without the tile's and the core's indices: those
are keyed by what they decide in the tile (`_decided`), so that the tiles of every N block, M block and core (ho
block) with the same loads share a template (the video-VAE causal conv: 675 templates for 864 tiles before;
docs/performance.md, "dw's causal layer and the two operators' unit keys"). Where the loads read in GM moves with
the anchors: dy (outBackPropGlobal) from the tile's M block on, the feature map (fmapGlobal) from the tile's first
cin1 plane on, both computed inside the unit from the indices (`_cal_out2l1_scalar_params`).
"""
from __future__ import annotations

import functools
from dataclasses import fields
from operator import attrgetter

from ascend_sim.ascendc import LoadData3DParamsV2, protocol_state, replay_unit
from kernels.conv3d_backprop_filter.kernel.util import CalRows2Copy, DivHkWk, RemainderOfHkWk

# The kernel sources (replay.kernel_sources_digest of this folder) the units below were last checked against in
# verify mode: an edited kernel has another digest, and its units then run for real (tests/ascend_sim/engine/
# test_replay_sources.py says when to update it).
VERIFIED_SOURCES = "7a5ec92d14181e5169093a1af96db5228a60b277"

# The API object's attributes in the short key (what Init sets from the tiling alone, the c0, the L0 halves'
# addresses and the sizes, is the same for every call of a launch and left out; verify mode checks that these
# decide the whole state):
_COMPUTE_ATTRIBUTES = attrgetter(
    # the tile's steps
    "curStepM", "curStepN",
    # the tile's shape: the Mmad's m/n/k, the B1 rows and top pad of each L1 half, the A1 K size
    "baseUseM", "baseUseN", "baseUseK", "bL1HiCopyLenPing", "bL1HiCopyLenPong", "bL1PadUpPing", "bL1PadUpPong",
    "curLoadKal1", "srcL12L0aOffset",
    # the core's block (SetSingleShape): the loop counts and tails the tile reads
    "singleShapeHo", "mIter", "kIter", "tailM", "tailK", "stepKaRound", "stepKbRound",
    # what the call does: the first tile, the workspace layout, the L0 and L0C ping-pong
    "isFirstIter", "isDeterministic", "l0aPingPongFlag", "l0cPingPongFlag",
    # the A1/B1 tensors the previous tile left dequeued, and the Mmad parameters it left (the LoadData3Dv2 ones
    # by _load3d)
    "cacheA1BufPing", "cacheA1BufPong", "cacheB1BufPing", "cacheB1BufPong", "mmad")
# LoadData3DParamsV2's fields but padList (a list the kernel sets: by value as a tuple, beside them); the key's
# engine side would freeze the struct field by field because of that list (docs/performance.md, h28keys)
_LOAD3D_FIELDS = attrgetter(*[f.name for f in fields(LoadData3DParamsV2) if f.name != "padList"])
# The API object's attributes keyed by what they decide in the tile (`_decided`): the tile's and the core's
# indices; and, left out, those the tile does not read (the N loop's count and tail, the block's cin and cout:
# Iterate reads them, and baseUseN, mIter and tailM in the key are what they decide for the tile)
_BY_EXTRA = ("curML0Idx", "curML1Idx", "curNL0Idx", "curNL1Idx", "hoStartIdx", "hiStartIdx", "singleShapeCin",
             "singleShapeCout", "nIter", "tailN")


def _roots(api, p):
    """The API object only: the tile's Out2L1ScalarParams is Iterate's, dropped when the call returns (what the
    unit sets in it, the source addresses, is not replayed; its flags are in the extra)."""
    return (api,)


def _tile_loads(api, p):
    """A copy of the tile's Out2L1ScalarParams as the unit completes it (where the A and B loads start in GM, the
    cin1 planes B takes)."""
    q = object.__new__(p.__class__)  # copy.copy's dispatch costs more than the method
    q.__dict__.update(p.__dict__)
    api._cal_out2l1_scalar_params(q)
    return q


def _anchors(api, p):
    """- dy (outBackPropGlobal) moves with its base (this core's batch, cout and ho block) and the tile's M block;
    - the feature map (fmapGlobal) moves with its base (this core's batch, cin and hi block) and the tile's first
    cin1 plane.
    (The tile's out2A1SrcAddr and out2B1SrcAddr as _cal_out2l1_scalar_params computes them when the tile loads A
    or B; a tile that does not load one reads nothing of it in GM.)"""
    t = api.tiling
    dy, fmap = api.outBackPropGlobal, api.fmapGlobal
    out2A1SrcAddr = api.curML1Idx * t.baseM * api.hwO
    out2B1SrcAddr = DivHkWk(api.curNL1Idx * (t.baseN // api.c0), api.hwK) * api.hwI
    return {dy.buffer: dy.address + out2A1SrcAddr * dy.dtype.itemsize,
            fmap.buffer: fmap.address + out2B1SrcAddr * t.channelSize * fmap.dtype.itemsize}


def _b1_rows(api, q) -> tuple:
    """Per K step, the rows its B1 load takes (LoadToB1): the first relative to fmapGlobal, how many, the top pad.
    What the core's first ho and hi rows decide in the tile."""
    if not q.isLoad2L1B:
        return ()
    t = api.tiling
    return _rows(api.hoStartIdx, api.hiStartIdx, api.singleShapeHo, q.singleShapeHi, api.stepKbRound, api.kbl1,
                 api.strideKernelDilationH, t.wo, t.strideH, t.padUp, t.hi)


@functools.lru_cache(maxsize=4096)  # a core's tiles ask for the same rows: the loop is once per core and block
def _rows(hoStartIdx, hiStartIdx, singleShapeHo, singleShapeHi, stepKbRound, kbl1, strideKernelDilationH, wo,
          strideH, padUp, hi) -> tuple:
    rows = []
    for kbStepIdx in range(stepKbRound):
        b1SrcHiGm = (kbStepIdx * kbl1 // wo + hoStartIdx) * strideH - padUp
        if b1SrcHiGm > 0 and hiStartIdx > 0:
            b1SrcHi = b1SrcHiGm - hiStartIdx
        else:
            b1SrcHi = max(b1SrcHiGm, 0)
        rowsPixels = singleShapeHo * wo - kbStepIdx * kbl1 if stepKbRound == kbStepIdx + 1 else kbl1
        hiCopyLen = CalRows2Copy(rowsPixels, wo) * strideH + strideKernelDilationH + min(b1SrcHiGm, 0)
        hiCopyLen = min(hiCopyLen, hi - b1SrcHiGm, singleShapeHi - b1SrcHi)
        rows.append((b1SrcHi, hiCopyLen, max(-b1SrcHiGm, 0)))
    return tuple(rows)


def _decided(api, p) -> tuple:
    """The unit's extra: the tile's load/free flags and load sizes (Out2L1ScalarParams), the N tile's first
    (cin1, kh, kw) column inside its B1 planes (CalcParamsL12L0b), the M tile inside its A1 block, the L1 ping-pong
    parity of the tile's first K step for A and B, and the B1 rows of each K step."""
    t = api.tiling
    q = _tile_loads(api, p)
    localN = t.baseN // api.c0
    return (q.isLoad2L1A, q.isFreeAL1, q.isLastMAL1, q.isLoad2L1B, q.isFreeBL1, q.singleShapeHi, q.bL1cin1CopyLen,
            RemainderOfHkWk(api.curNL1Idx * localN, api.hwK) + api.curNL0Idx % t.stepN * localN,
            api.curML0Idx % t.stepM, api.stepKaRound * (api.curML1Idx // t.stepM) & 1,
            api.stepKbRound * (api.curNL1Idx // t.stepN) & 1, _b1_rows(api, q))


def _load3d(params) -> tuple:
    """A LoadData3DParamsV2 by value: its fields, padList as a tuple."""
    return _LOAD3D_FIELDS(params), tuple(params.padList)


def _compute_key(api, p) -> tuple:
    """The attributes above, the LoadData3Dv2 parameters the previous tile left and the queue protocol's state
    (which slots wait on a FreeTensor or EnQue flag, with which event IDs): with the extra, the tile's records and
    the state it leaves."""
    return (*_COMPUTE_ATTRIBUTES(api), _load3d(api.load3dA), _load3d(api.load3dB),
            protocol_state(api.pipe, api.a1Ping, api.a1Pong, api.b1Ping, api.b1Pong, api.l0cPing, api.l0cPong))


def compute_unit(method):
    """Conv3DBackpropFilter._compute (one tile's K loop on the AIC) as a replayable unit."""
    return replay_unit("Conv3DBackpropFilter._compute", roots=_roots, fixed=("tiling",), anchors=_anchors,
                       key=_compute_key, extra=_decided,
                       exclude=("outBackPropGlobal", "fmapGlobal", *_BY_EXTRA), verified=VERIFIED_SOURCES)(method)
