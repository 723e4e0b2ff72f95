"""A plain numpy reference for Conv3DBackpropInput: dx as the adjoint of the forward convolution, in float64.

Independent of the kernel (no img2col, no zero insertion, no weight rotation): every kernel tap scatters
W^T . dy into the input positions that tap read in the forward pass. Used by the CLI's check, which must work
without PyTorch.
"""
from __future__ import annotations

import numpy as np


def conv3d_dx_reference(dy: np.ndarray, weight: np.ndarray, dx_shape, strides=(1, 1, 1),
                        pads=(0, 0, 0, 0, 0, 0), dilations=(1, 1, 1), groups: int = 1) -> np.ndarray:
    """dx (NCDHW, float64) for dy (N, Cout, Do, Ho, Wo) and weight (Cout, Cin/groups, kD, kH, kW).

    pads are (front, back, top, bottom, left, right); only the leading pads shift positions, the trailing ones
    just let the forward window run further (they are implied by the shapes).
    """
    dy = np.asarray(dy, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    n, cin, di, hi, wi = dx_shape
    _, cout, do, ho, wo = dy.shape
    kd, kh, kw = w.shape[2:]
    sd, sh, sw = strides
    pf, _, pt, _, pl, _ = pads
    dd, dh, dw = dilations
    cin_g, cout_g = cin // groups, cout // groups
    # Pad dx by the leading pads (and enough at the end for the last window), scatter, then crop.
    span = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in ((do, sd, kd, dd), (ho, sh, kh, dh), (wo, sw, kw, dw))]
    full = np.zeros((n, cin, max(pf + di, span[0]), max(pt + hi, span[1]), max(pl + wi, span[2])))
    for g in range(groups):
        dy_g = dy[:, g * cout_g:(g + 1) * cout_g]
        w_g = w[g * cout_g:(g + 1) * cout_g]  # (cout_g, cin_g, kD, kH, kW)
        out = full[:, g * cin_g:(g + 1) * cin_g]
        for a in range(kd):
            for b in range(kh):
                for c in range(kw):
                    contrib = np.einsum("nodhw,oi->nidhw", dy_g, w_g[:, :, a, b, c])
                    out[:, :, a * dd:a * dd + (do - 1) * sd + 1:sd, b * dh:b * dh + (ho - 1) * sh + 1:sh,
                        c * dw:c * dw + (wo - 1) * sw + 1:sw] += contrib
    return full[:, :, pf:pf + di, pt:pt + hi, pl:pl + wi]
