"""A plain numpy reference for the forward 3D convolution, in float64, for the CLI's check (which must work
without PyTorch). Independent of the kernel: no img2col, no fractal layouts; one strided view of the padded input
per kernel tap, contracted with that tap's weights."""
from __future__ import annotations

import numpy as np


def conv3d_reference(x: np.ndarray, weight: np.ndarray, bias=None, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                     dilations=(1, 1, 1), groups: int = 1) -> np.ndarray:
    """y (NCDHW, float64) for x (N, Cin, D, H, W), weight (Cout, Cin/groups, kD, kH, kW), bias (Cout,) or None;
    pads are (front, back, top, bottom, left, right)."""
    x = np.pad(np.asarray(x, np.float64), ((0, 0), (0, 0), pads[0:2], pads[2:4], pads[4:6]))
    w = np.asarray(weight, np.float64)
    n, cin = x.shape[:2]
    cout, cin_g, *kernel = w.shape
    out = [(x.shape[2 + i] - (kernel[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(3)]
    y = np.zeros((n, cout, *out))
    cout_g = cout // groups
    for g in range(groups):
        xg, wg = x[:, g * cin_g:(g + 1) * cin_g], w[g * cout_g:(g + 1) * cout_g]
        for kd in range(kernel[0]):
            for kh in range(kernel[1]):
                for kw in range(kernel[2]):
                    start = (kd * dilations[0], kh * dilations[1], kw * dilations[2])
                    tap = xg[:, :, start[0]:start[0] + (out[0] - 1) * strides[0] + 1:strides[0],
                             start[1]:start[1] + (out[1] - 1) * strides[1] + 1:strides[1],
                             start[2]:start[2] + (out[2] - 1) * strides[2] + 1:strides[2]]
                    y[:, g * cout_g:(g + 1) * cout_g] += np.einsum("ncdhw,oc->nodhw", tap, wg[:, :, kd, kh, kw])
    if bias is not None:
        y += np.asarray(bias, np.float64).reshape(1, -1, 1, 1, 1)
    return y
