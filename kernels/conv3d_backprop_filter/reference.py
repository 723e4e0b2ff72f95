"""A fast numpy reference for Conv3DBackpropFilter: dw as the correlation of dy with the padded x.

Independent of the kernel (no img2col matrix, no fractal layouts): for every kernel tap, the x positions that tap
read in the forward pass (a strided window), contracted with dy over batch and output positions in one batched
GEMM over the groups (BLAS). Used by the CLI's check, which must work without PyTorch (the tests compare it with
torch).
"""
from __future__ import annotations

import numpy as np

from kernels.common.taps import tap_window


def conv3d_dw_reference(x: np.ndarray, dy: np.ndarray, filter_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                        dilations=(1, 1, 1), groups: int = 1, precision=np.float64) -> np.ndarray:
    """dw (Cout, Cin/groups, kD, kH, kW) in `precision` (float64, or float32 where the data needs no more) for x
    (N, Cin, D, H, W) and dy (N, Cout, Do, Ho, Wo); pads (front, back, top, bottom, left, right)."""
    cout, cin_g, *kernel = filter_shape
    _, _, *out = dy.shape
    cout_g = cout // groups
    # x channels first, padded: a tap's window reshapes to (groups, Cin/g, N*Do*Ho*Wo)
    xp = np.pad(np.asarray(x, precision).transpose(1, 0, 2, 3, 4), ((0, 0), (0, 0), *zip(pads[0::2], pads[1::2])))
    dy_g = np.ascontiguousarray(np.asarray(dy, precision).transpose(1, 0, 2, 3, 4)).reshape(groups, cout_g, -1)
    dw = np.empty((*kernel, groups, cout_g, cin_g), precision)
    for start in np.ndindex(*kernel):
        cols = xp[(slice(None), slice(None), *tap_window(start, dilations, out, strides))].reshape(groups, cin_g, -1)
        dw[start] = np.matmul(dy_g, cols.transpose(0, 2, 1))
    return dw.reshape(*kernel, cout, cin_g).transpose(3, 4, 0, 1, 2)
