"""The independent oracle of the arch35 dx tests: PyTorch float64 autograd of the dequantised inputs, and the
comparisons per output dtype (16/32-bit: an error bound from the dtypes' epsilons; 8-bit: at most one step of the
output type's grid from the float64 result rounded once)."""
from __future__ import annotations

import numpy as np
import torch

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8

EPS = {np.dtype(float16): 2.0 ** -10, np.dtype(bfloat16): 2.0 ** -7, np.dtype(float32): 2.0 ** -23}
# the spacing of each type's subnormals: one ulp where |ref| is below the smallest normal, and eps * |ref| less
SUBNORMAL_ULP = {np.dtype(float16): 2.0 ** -24, np.dtype(bfloat16): 2.0 ** -133, np.dtype(float32): 2.0 ** -149}


def dx_reference(input_size_ncdhw, weight_ncdhw, dy_ncdhw, strides, pads, dilations, groups):
    """(dx, |dx|-bound) in float64: torch.nn.grad.conv3d_input on the decoded arrays; pads (f, b, t, d, l, r) are
    applied by cropping a symmetric-pad result (PyTorch takes one pad per axis)."""
    pf, pb, pt, pd, pl, pr = pads
    lo = (pf, pt, pl)
    hi = (pb, pd, pr)
    n, c, d, h, w = input_size_ncdhw
    big = (n, c, d + lo[0] + hi[0], h + lo[1] + hi[1], w + lo[2] + hi[2])
    wt = torch.tensor(weight_ncdhw.astype(np.float64))
    dy = torch.tensor(dy_ncdhw.astype(np.float64))
    out = []
    for a, b in ((wt, dy), (wt.abs(), dy.abs())):
        full = torch.nn.grad.conv3d_input(big, a, b, stride=strides, padding=0, dilation=dilations, groups=groups)
        out.append(full[:, :, lo[0]:lo[0] + d, lo[1]:lo[1] + h, lo[2]:lo[2] + w].numpy())
    return out[0], out[1]


def assert_close_16_32(y, ref, bound, dtype, hf32=False):
    """Output rounding (one ulp of the output type at |ref|, a subnormal's too) plus fp32 accumulation (or HF32's
    input rounding)."""
    eps = EPS[np.dtype(dtype)]
    acc = 2.0 ** -10 if hf32 else 2.0 ** -20
    err = np.abs(y.astype(np.float64) - ref)
    tol = eps * np.abs(ref) + SUBNORMAL_ULP[np.dtype(dtype)] + acc * bound + 1e-30
    bad = err > tol
    assert not np.isnan(y.astype(np.float64)).any(), "unwritten (NaN) dx elements"
    assert not bad.any(), f"{bad.sum()} elements off; worst {err[bad].max()} at tol {tol[bad].min()}"


def _grid(dtype) -> np.ndarray:
    codes = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
    return np.unique(codes[np.isfinite(codes)])


def assert_within_one_step_8bit(y, ref, dtype):
    """y (8-bit) at most one grid step from ref rounded once to the type (round to nearest: the grid index of the
    nearest value, ties either way; so |index(y) - index(nearest)| <= 1 covers both rounding modes)."""
    grid = _grid(dtype)
    yv = y.astype(np.float64)
    assert np.isfinite(yv).all(), "non-finite 8-bit dx elements"
    iy = np.searchsorted(grid, yv)
    assert (grid[iy] == yv).all()
    pos = np.clip(np.searchsorted(grid, ref), 1, len(grid) - 1)
    nearest = np.where(np.abs(grid[pos - 1] - ref) <= np.abs(grid[pos] - ref), pos - 1, pos)
    off = np.abs(iy - nearest)
    assert off.max() <= 1, f"{(off > 1).sum()} elements more than one step off (max {off.max()} steps)"


EIGHT_BIT = (np.dtype(hifloat8), np.dtype(float8_e4m3fn))
