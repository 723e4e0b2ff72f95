"""Gathers by an element index that move whole C0 blocks: an img2col of an NC1HWC0 feature map reads 32 bytes of
one pixel at a time, so its index map (isa/mte1.py's LoadData 3Dv2) is, pads aside, runs of C0 consecutive
elements each starting on a block. Taken as rows of C0 elements, such a gather moves the same bytes with C0
times fewer indices (numpy's element take with mode="clip" costs about 20 times more at dx's sizes)."""
from __future__ import annotations

import numpy as np

_BLOCKS: dict = {}  # (id(index), id(pad_positions), c0) -> (index, pad_positions, block numbers or None)
_KEPT = 4096  # maps remembered; the cache starts again past it (the maps of one launch are far fewer)


def block_rows(index: np.ndarray, pad: np.ndarray, c0: int) -> np.ndarray | None:
    """The source block numbers (C0 elements each) of a gather `index` whose every run of C0 elements is one
    whole block, the positions `pad` marks (a bool mask: overwritten afterwards) aside; None when it is not."""
    if len(index) % c0:
        return None
    runs = index.reshape(-1, c0)
    starts = runs[:, 0]
    if (starts % c0).any() or not ((runs == starts[:, None] + np.arange(c0)) | pad.reshape(-1, c0)).all():
        return None
    return starts // c0


def block_rows_of_map(index: np.ndarray, pad_positions: np.ndarray, c0: int) -> np.ndarray | None:
    """block_rows of a gather map kept for reuse (LoadData 3Dv2's maps are shared by the calls that decode
    alike), worked out once per map: the entry holds the map, so its id is not reused while it is kept."""
    key = (id(index), id(pad_positions), c0)
    known = _BLOCKS.get(key)
    if known is None:
        if len(_BLOCKS) >= _KEPT:
            _BLOCKS.clear()
        pad = np.zeros(len(index), bool)
        pad[pad_positions] = True
        known = _BLOCKS[key] = (index, pad_positions, block_rows(index, pad, c0))
    return known[2]
