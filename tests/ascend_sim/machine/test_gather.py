"""Gathers of whole C0 blocks (ascend_sim/machine/gather.py), as LoadData 3Dv2 takes them (isa/mte1.py): on real
img2col maps the block gather moves the same bytes as the element gather; maps that do not read whole blocks are
left to the element gather."""
import numpy as np
import pytest

from ascend_sim.isa.mte1 import _img2col_map
from ascend_sim.machine.gather import block_rows, block_rows_of_map

# (l1H, l1W, pads, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH): 3x3 with pads, a 7x7 stride-2 stem
# window, a dilated 3x3 starting inside the map
MAPS = [(6, 6, (1, 1, 1, 1), 2, 2 * 9 * 16, 32, 0, 0, 1, 1, 3, 3, 1, 1),
        (14, 14, (3, 3, 3, 3), 1, 49 * 16, 48, 16, 16, 2, 2, 7, 7, 1, 1),
        (9, 9, (0, 0, 2, 2), 3, 16 * 9, 64, 32, 16, 1, 1, 3, 3, 2, 2)]


def _element_gather(source, index, pad_positions, count):
    out = np.empty(count, source.dtype)
    source.take(index, out=out, mode="clip")
    out[pad_positions] = -1
    return out


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", MAPS)
def test_img2col_maps_gather_as_blocks_with_the_same_bytes(shape, dtype):
    size = np.dtype(dtype).itemsize
    c0 = 32 // size
    l1h, l1w, pads, c1, kext, mext, kstart, mstart, *rest = shape
    if size == 4:
        kext //= 2  # C0 8: the same channel blocks
    index, pad_positions, written, _, _ = _img2col_map(l1h, l1w, pads, c1, kext, mext, kstart, mstart, *rest, c0,
                                                       "L0A")
    assert written is None
    blocks = block_rows_of_map(index, pad_positions, c0)
    assert blocks is not None
    assert block_rows_of_map(index, pad_positions, c0) is blocks  # worked out once per map
    source = np.random.default_rng(0).standard_normal(c1 * l1h * l1w * c0).astype(dtype)
    got = np.empty(len(index), dtype)
    source.reshape(-1, c0).take(blocks, axis=0, out=got.reshape(-1, c0), mode="clip")
    got[pad_positions] = -1
    assert got.tobytes() == _element_gather(source, index, pad_positions, len(index)).tobytes()


def test_maps_that_do_not_read_whole_blocks_are_refused():
    c0 = 16
    index, pad_positions, *_ = _img2col_map(*MAPS[0][:14], c0, "L0B")  # ZN: a C0 run spans pixels
    assert block_rows_of_map(index, pad_positions, c0) is None
    none = np.zeros(64, bool)
    assert block_rows(np.arange(64), none, c0).tolist() == [0, 1, 2, 3]
    assert block_rows(np.arange(64) + 8, none, c0) is None  # runs start inside a block
    assert block_rows(np.arange(60), none[:60], c0) is None  # not whole runs
    swapped = np.arange(64)
    swapped[[3, 4]] = swapped[[4, 3]]
    assert block_rows(swapped, none, c0) is None
    pad = none.copy()
    pad[[3, 4]] = True  # the swapped elements are pads: overwritten, so the rest still reads whole blocks
    assert block_rows(swapped, pad, c0).tolist() == [0, 1, 2, 3]
