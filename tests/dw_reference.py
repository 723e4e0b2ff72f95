"""The test oracle of dw: torch.ops.aten.convolution_backward in float64 (CPU), asymmetric pads by padding x."""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def dw_reference(x_ncdhw, filter_shape, dy_ncdhw, strides, pads, dilations, groups=1) -> np.ndarray:
    """dw (Cout, Cin/groups, kD, kH, kW) as float64; strides / dilations (D, H, W), pads (front, back, top,
    bottom, left, right)."""
    pf, pb, pt, pbm, pl, pr = pads
    x = F.pad(torch.from_numpy(np.asarray(x_ncdhw, np.float64)), (pl, pr, pt, pbm, pf, pb))
    dy = torch.from_numpy(np.asarray(dy_ncdhw, np.float64))
    w = torch.zeros(tuple(filter_shape), dtype=torch.float64)
    return torch.ops.aten.convolution_backward(dy, x, w, None, list(strides), [0, 0, 0], list(dilations), False,
                                               [0, 0, 0], groups, [False, True, False])[1].numpy()
