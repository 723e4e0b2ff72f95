"""A fast numpy reference for the forward 3D convolution, for the CLI's check (which must work without PyTorch;
the tests compare it with torch). Independent of the kernel: no img2col matrix, no fractal layouts; one strided
window of the padded input per kernel tap, contracted with that tap's weights in one batched GEMM over the groups
(BLAS)."""
from __future__ import annotations

import numpy as np

from kernels.common.taps import tap_window


def conv3d_reference(x: np.ndarray, weight: np.ndarray, bias=None, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                     dilations=(1, 1, 1), groups: int = 1, precision=np.float64) -> np.ndarray:
    """y (NCDHW, in `precision`: float64, or float32 where the data needs no more) for x (N, Cin, D, H, W),
    weight (Cout, Cin/groups, kD, kH, kW), bias (Cout,) or None; pads are (front, back, top, bottom, left,
    right)."""
    # x channels first, padded: a tap's window reshapes to (groups, Cin/g, N*Do*Ho*Wo)
    xp = np.pad(np.asarray(x, precision).transpose(1, 0, 2, 3, 4), ((0, 0), (0, 0), *zip(pads[0::2], pads[1::2])))
    w = np.asarray(weight, precision)
    n = xp.shape[1]
    cout, cin_g, *kernel = w.shape
    cout_g = cout // groups
    out = [(xp.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(3)]
    w_taps = w.reshape(groups, cout_g, cin_g, -1).transpose(3, 0, 1, 2)  # (taps, groups, Cout/g, Cin/g)
    y = np.zeros((groups, cout_g, n * int(np.prod(out))), precision)
    for tap, start in enumerate(np.ndindex(*kernel)):
        cols = xp[(slice(None), slice(None), *tap_window(start, dilations, out, strides))].reshape(groups, cin_g, -1)
        y += np.matmul(w_taps[tap], cols)
    y = y.reshape(cout, n, *out).transpose(1, 0, 2, 3, 4)
    if bias is not None:
        y = y + np.asarray(bias, precision).reshape(1, -1, 1, 1, 1)
    return y
