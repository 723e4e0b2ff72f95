"""LoadData 3Dv2's gather map into L0A (mte1._img2col_map, whole C0 blocks: worked out per 32-byte block) against
the img2col matrix built element by element by the plain reference (tests/isa_reference.py)."""
import numpy as np
import pytest

import isa_reference as ref
from ascend_sim.isa.mte1 import _img2col_map

PAD = -1


def _cases(count: int, seed: int):
    rng = np.random.default_rng(seed)
    while count:
        c0 = int(rng.choice((8, 16, 32)))
        l1H, l1W, c1 = int(rng.integers(1, 12)), int(rng.integers(1, 12)), int(rng.integers(1, 4))
        fH, fW, sH, sW, dH, dW = (int(v) for v in rng.integers(1, 4, 6))
        pads = tuple(int(v) for v in rng.integers(0, 4, 4)) if rng.random() < 0.7 else (0, 0, 0, 0)
        hout, wout = ref.load3d_out_hw(l1H, l1W, pads, sW, sH, fW, fH, dW, dH)
        if hout <= 0 or wout <= 0:
            continue
        blocks = c1 * fH * fW  # C0 blocks of the K axis
        kStart = int(rng.integers(0, blocks)) * c0
        kExt = int(rng.integers(1, blocks - kStart // c0 + 1)) * c0
        mExt = 16 * int(rng.integers(1, 4))
        # mostly windows that exist; past the last one they read padding or rows further down
        mStart = int(rng.integers(0, max(hout * wout - mExt, 0) + 1 if rng.random() < 0.7 else hout * wout + 8))
        count -= 1
        yield (l1H, l1W, pads, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout)


def _reference(src, l1H, l1W, pads, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout):
    """The ZZ block of the img2col matrix, element by element: [a][b][r][e] = X[mStart + 16a + r, kStart + b*c0 + e]."""
    out = np.empty((mExt // 16, kExt // c0, 16, c0), src.dtype)
    for a, b, r, e in np.ndindex(out.shape):
        out[a, b, r, e] = ref.ref_img2col_value(src, 0, mStart + 16 * a + r, kStart + b * c0 + e, l1H, l1W, pads,
                                                c0, sW, sH, fW, fH, dW, dH, PAD, wout)
    return out.reshape(-1)


def _check(l1H, l1W, pads, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout) -> str:
    """The map against the reference; which case it was: no pad, some pad, all pad."""
    src = np.arange(c1 * l1H * l1W * c0, dtype=np.int64)  # each element holds its own index
    index, pad_positions, written, map_wout, read = _img2col_map(
        l1H, l1W, pads, c1, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, "L0A")
    expected = _reference(src, l1H, l1W, pads, kExt, mExt, kStart, mStart, sW, sH, fW, fH, dW, dH, c0, wout)
    gathered = src[index]
    gathered[pad_positions] = PAD
    assert np.array_equal(gathered, expected)
    assert np.array_equal(pad_positions, np.flatnonzero(expected == PAD))
    assert np.all(index[pad_positions] == 0)  # padding reads element 0
    assert index.dtype == pad_positions.dtype == np.int64
    assert written is None and map_wout == wout
    real = expected[expected != PAD]
    assert read == ((int(real.min()), int(real.max()) + 1) if real.size else (0, 0))
    return "no pad" if not pad_positions.size else "all pad" if not real.size else "some pad"


@pytest.mark.parametrize("seed", range(4))
def test_zz_block_map_gathers_the_reference_img2col_block(seed):
    seen = {_check(*case) for case in _cases(40, seed)}
    assert "some pad" in seen


@pytest.mark.parametrize("c0", (8, 16, 32))
@pytest.mark.parametrize("mStart, expected", ((0, "no pad"), (4, "no pad"), (20, "some pad"), (64, "all pad")))
def test_zz_block_map_with_no_some_or_all_padding(c0, mStart, expected):
    """An 8x8 fmap of 2 C1, a 3x3 kernel, no pad: 36 windows (6x6); 32 rows from mStart (from 64 on, every
    window row starts below the fmap), K blocks 3 to 11."""
    assert _check(8, 8, (0, 0, 0, 0), 2, 9 * c0, 32, 3 * c0, mStart, 1, 1, 3, 3, 1, 1, c0, 6) == expected
