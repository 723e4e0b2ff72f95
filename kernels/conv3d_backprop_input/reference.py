"""A fast numpy reference for Conv3DBackpropInput: dx as the adjoint of the forward convolution.

Independent of the kernel (no img2col matrix, no zero insertion, no weight rotation, no fractal layouts): every
kernel tap scatters W_tap^T . dy into the input positions that tap read in the forward pass. Each tap is one
batched GEMM over the groups (BLAS), so the check costs a small fraction of a simulation and needs no more memory
than dx plus one tap's product. Used by the CLI's check, which must work without PyTorch (the tests compare it with
torch). `tap_window` (kernels/common/taps.py) is shared with the forward and dw references.
"""
from __future__ import annotations

import numpy as np

from kernels.common.taps import tap_window


def conv3d_dx_reference(dy: np.ndarray, weight: np.ndarray, dx_shape, strides=(1, 1, 1),
                        pads=(0, 0, 0, 0, 0, 0), dilations=(1, 1, 1), groups: int = 1,
                        precision=np.float64) -> np.ndarray:
    """dx (NCDHW, in `precision`: float64, or float32 where the data's dtype needs no more) for dy (N, Cout, Do,
    Ho, Wo) and weight (Cout, Cin/groups, kD, kH, kW).

    pads are (front, back, top, bottom, left, right); only the leading pads shift positions, the trailing ones
    just let the forward window run further (they are implied by the shapes).
    """
    dy = np.asarray(dy, dtype=precision)
    w = np.asarray(weight, dtype=precision)
    n, cin, *dx_dhw = dx_shape
    _, cout, *out = dy.shape
    kernel = w.shape[2:]
    lead = pads[0::2]
    cin_g, cout_g = cin // groups, cout // groups
    # dx padded by the leading pads (and as far as the last window reaches), channels first: each tap adds one
    # (groups, Cin/groups, N*Do*Ho*Wo) product into a strided window of it; cropped at the end
    span = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(out, strides, kernel, dilations)]
    size = [max(p + x, r) for p, x, r in zip(lead, dx_dhw, span)]
    full = np.zeros((groups, cin_g, n, *size), precision)
    dy_g = np.ascontiguousarray(dy.transpose(1, 0, 2, 3, 4)).reshape(groups, cout_g, -1)
    w_taps = w.reshape(groups, cout_g, cin_g, -1).transpose(3, 0, 2, 1)  # (taps, groups, Cin/g, Cout/g)
    for tap, start in enumerate(np.ndindex(*kernel)):
        window = full[(Ellipsis, *tap_window(start, dilations, out, strides))]
        window += np.matmul(w_taps[tap], dy_g).reshape(window.shape)
    crop = tuple(slice(p, p + x) for p, x in zip(lead, dx_dhw))
    return full.reshape(cin, n, *size)[(slice(None), slice(None), *crop)].transpose(1, 0, 2, 3, 4)
