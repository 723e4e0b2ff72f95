"""A plain numpy reference for Conv3DBackpropFilter: dw as the correlation of dy with the padded x, in float64.

Independent of the kernel (no img2col, no fractal layouts): for every kernel tap, the x positions that tap read
in the forward pass, contracted with dy over batch and output positions. Used by the CLI's check, which must
work without PyTorch (the tests compare with torch).
"""
from __future__ import annotations

import numpy as np


def conv3d_dw_reference(x: np.ndarray, dy: np.ndarray, filter_shape, strides=(1, 1, 1), pads=(0, 0, 0, 0, 0, 0),
                        dilations=(1, 1, 1), groups: int = 1) -> np.ndarray:
    """dw (Cout, Cin/groups, kD, kH, kW), float64, for x (N, Cin, D, H, W) and dy (N, Cout, Do, Ho, Wo);
    pads (front, back, top, bottom, left, right)."""
    x = np.asarray(x, dtype=np.float64)
    dy = np.asarray(dy, dtype=np.float64)
    cout, cin_g, kd, kh, kw = filter_shape
    _, _, do, ho, wo = dy.shape
    (sd, sh, sw), (dd, dh, dw) = strides, dilations
    pf, pb, pt, pbm, pl, pr = pads
    xp = np.pad(x, ((0, 0), (0, 0), (pf, pb), (pt, pbm), (pl, pr)))
    cout_g = cout // groups
    out = np.zeros((cout, cin_g, kd, kh, kw))
    for g in range(groups):
        dy_g = dy[:, g * cout_g:(g + 1) * cout_g]
        x_g = xp[:, g * cin_g:(g + 1) * cin_g]
        for a in range(kd):
            for b in range(kh):
                for c in range(kw):
                    window = x_g[:, :, a * dd:a * dd + (do - 1) * sd + 1:sd, b * dh:b * dh + (ho - 1) * sh + 1:sh,
                                 c * dw:c * dw + (wo - 1) * sw + 1:sw]
                    out[g * cout_g:(g + 1) * cout_g, :, a, b, c] = np.einsum("nodhw,nidhw->oi", dy_g, window)
    return out
