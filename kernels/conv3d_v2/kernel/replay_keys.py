"""The forward conv kernel's replayable unit (ascend_sim/engine/replay.py): one L0C block's K loop on the AIC
(`Conv3D.IterateK`), applied at the end of api.py so that no kernel line moves.

The key is the API object's state (its iterators, flags, queues and the load/mmad/copy-out helpers' state)
without the GlobalTensors of the input, weight and bias: the block's GM addresses are computed inside the unit
from the iterators in the key, relative to those tensors, so a block at the same place of another core's (or
batch's, group's) share replays with the GM shifts of the three bases. The core's first input depth (diStartPos)
is left out too and keyed by what it decides (`_depth_window`), so that the cores of a depth split share their
blocks' templates (VideoMAE's patch embedding: 448 templates -> 56; docs/performance.md, "Conv3DV2 and dw on the
VideoMAE patch embedding"), and so is its group-opt block count, which a tail core's SetSingleOutputShape sets.
"""
from __future__ import annotations

from operator import itemgetter

from ascend_sim.ascendc import GlobalTensor, TBuf, TPipe, TQue, protocol_state, replay_unit

# The kernel sources (replay.kernel_sources_digest of this folder) the units below were last checked against in
# verify mode: an edited kernel has another digest, and its units then run for real (tests/ascend_sim/engine/
# test_replay_sources.py says when to update it).
VERIFIED_SOURCES = "bd70359dc9c9f6895fa92ee57335401c5e7c4e38"

# The API object's queues (protocol_state holds their state); those a kernel variant never made are absent
_QUEUES = ("queueCL0", "queueAL1", "queueBL1", "queueBiasL1", "queueBiasBT")
# What the short key leaves out of an object's attributes: the queues, pipe and L0 buffers (by protocol_state, or
# the same for every call), the GlobalTensors (the anchors), the tiling (fixed) and the tools' references back to
# the API object and to the A1 tool (keyed on their own)
_NOT_VALUES = (TQue, TPipe, TBuf, GlobalTensor)
_REFERENCES = frozenset(("conv3dTiling", "self_", "aL1Tools_"))
# The API object's attributes keyed by what they decide in a block (the unit's extra, `_decided`) rather than by
# value: the core's first input depth, and its group-opt block count (a tail core's SetSingleOutputShape sets it)
_BY_EXTRA = frozenset(("diStartPos", "singleCoreGroupOpt", "maxGroupOptIter"))
_LEFT_OUT = _REFERENCES | _BY_EXTRA


def _anchors(api):
    """- the input (agm) moves with its base (this core's batch, depth and rows);
    - the weight (bgm) and the bias (biasgm, when set) move with their bases (this core's Cout block, group)."""
    anchors = {api.agm.buffer: api.agm.address, api.bgm.buffer: api.bgm.address}
    bias = getattr(api, "biasgm", None)
    if api.enableBias and bias is not None:
        anchors[bias.buffer] = bias.address
    return anchors


class _Layout:
    """Which attributes of an object with these attribute names (in this order) the key takes: the values, the
    tools (attributes named ...Ins) and, not taken, the stateful objects (_NOT_VALUES) met when the layout was
    made, which `fits` checks are still such (an attribute that became a plain value needs a layout of its own).
    The key holds the layout's number instead of the names: the same names in the same order, the same number."""

    __slots__ = ("number", "values", "tools", "skipped")

    def __init__(self, number, d, left_out):
        self.number = number
        names = [name for name, value in d.items() if name not in left_out and not isinstance(value, _NOT_VALUES)]
        self.tools = tuple(name for name in names if name.endswith("Ins")) if left_out is _LEFT_OUT else ()
        self.values = _getter([name for name in names if name not in self.tools])
        self.skipped = tuple(name for name, value in d.items() if isinstance(value, _NOT_VALUES)
                             and name not in left_out)

    def fits(self, d) -> bool:
        for name in self.skipped:
            if not isinstance(d[name], _NOT_VALUES):
                return False
        return True


def _getter(names):
    """names -> a function of a dict giving their values as a tuple (itemgetter gives a bare value for one)."""
    if len(names) == 1:
        name = names[0]
        return lambda d: (d[name],)
    return itemgetter(*names) if names else (lambda d: ())


_LAYOUTS: dict = {}  # (left out, attribute names) -> _Layout


def _layout(d, left_out) -> _Layout:
    names = (left_out, tuple(d))
    layout = _LAYOUTS.get(names)
    if layout is None or not layout.fits(d):
        layout = _Layout(len(_LAYOUTS) if layout is None else -1, d, left_out)  # -1: a one-off, not kept
        if layout.number >= 0:
            _LAYOUTS[names] = layout
    return layout


def _named_values(obj) -> tuple:
    """obj's attributes without the references and stateful objects above: its layout's number, then the
    values."""
    d = obj.__dict__
    layout = _layout(d, _REFERENCES)
    return (layout.number, *layout.values(d)) if layout.number >= 0 else (tuple(d), *layout.values(d))


def _iterate_k_key(api) -> tuple:
    """The API object's values (iterators, flags, loop counts and tails, the L0/L1 tensors it holds), each tool's
    (madIns, loadAl1Ins, ...: the load parameters it keeps between blocks) and the queue protocol's state: the
    block's records and the state it leaves. Every attribute but those left out above, so a tool or kernel variant
    with attributes of its own is keyed as well (verify mode checks the key against the walk of the state); by
    layout (the attribute names by number) and values, without a name per value: the key is built at every call."""
    d = api.__dict__
    layout = _layout(d, _LEFT_OUT)
    parts = [layout.number if layout.number >= 0 else tuple(d), *layout.values(d)]
    for name in layout.tools:
        parts += _named_values(d[name])
    queues = [api.pipe, *[d[name] for name in _QUEUES if name in d]]
    return (*parts, protocol_state(*queues))


def _depth_window(api) -> tuple:
    """What the core's first input depth (diStartPos, with pads) decides in a block (LoadAL1Tools.ProcessDoutPad
    and _di_idx; the block's output depth dOutIter, padHead, strideD and orgDi are in the key):
    - min(diStartPos - padHead, 0): the input depth the GM offsets count from. diIdx is relative to the core's first
      loaded plane (the base of agm, an anchor) when diStartPos is past the front pad, else to the input's first
      plane; the two differ by this. It also decides the front pad: below 0 it gives diStartPos itself, at 0 the
      block starts at or past padHead and no kernel depth falls into the front pad;
    - how far the input reaches into the block's kernel window past its start, orgDi + padHead - start, clipped to
      0 .. dilatedKernelD: the back pad's comparisons (kd * dilationD >= it, a slice's end > it, with kd * dilationD
      below dilatedKernelD and the ends up to it) all go the same way beyond those bounds, and inside them the
      sizes computed from it are exact."""
    start = api.diStartPos + api.dOutIter * api.strideD  # the block's first input depth, with pads
    return (min(api.diStartPos - api.padHead, 0),
            min(max(api.orgDi + api.padHead - start, 0), api.dilatedKernelD))


def _decided(api) -> tuple:
    """The unit's extra: the depth window, and whether this is the core's last group-opt block (the one use of
    maxGroupOptIter inside a block, load_b_groups._in_short_tail; singleCoreGroupOpt is read by none)."""
    return (*_depth_window(api), api.groupOptIter >= api.maxGroupOptIter - 1)


def iterate_k_unit(method):
    """Conv3D.IterateK (one L0C block over all of K) as a replayable unit."""
    return replay_unit("Conv3D.IterateK", fixed=("conv3dTiling",), anchors=_anchors, key=_iterate_k_key,
                       exclude=("agm", "bgm", "biasgm", *_BY_EXTRA), extra=_decided, verified=VERIFIED_SOURCES)(method)
