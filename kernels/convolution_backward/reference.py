"""numpy references for the three gradients (float64 or float32), for the CLI's check (which must work without PyTorch).

grad_input: kernels/conv3d_backprop_input/reference.py's dx (a transposed convolution's grad_input is a forward convolution:
kernels/conv3d_v2/reference.py); grad_weight: kernels/conv3d_backprop_filter/reference.py's dw (input and
grad_output swapped when transposed); grad_bias: the sum over N and the spatial axes. 1D / 2D problems are
viewed as 3D by inserting unit axes in front of the spatial ones (independent of aclnn's own views).
"""
from __future__ import annotations

import numpy as np

from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from kernels.conv3d_v2.reference import conv3d_reference


def _as_3d(a: np.ndarray) -> np.ndarray:
    return a.reshape(*a.shape[:2], *(1,) * (5 - a.ndim), *a.shape[2:])


def convolution_backward_reference(grad_output, input, weight, stride, padding_pairs, dilation, transposed: bool,
                                   groups: int, output_mask, precision=np.float64) -> tuple:
    """(grad_input, grad_weight, grad_bias) in `precision` (float64, or float32 where the data needs no more; None
    where the mask is False); padding_pairs is (before, after) per spatial axis."""
    lead = 3 - len(stride)
    st, dl = (1,) * lead + tuple(stride), (1,) * lead + tuple(dilation)
    pads = (0, 0) * lead + tuple(v for pair in padding_pairs for v in pair)
    go, x, w = _as_3d(grad_output), _as_3d(input), _as_3d(weight)
    grads = [None, None, None]
    if output_mask[0]:
        dx = (conv3d_reference(go, w, None, st, pads, dl, groups, precision) if transposed
              else conv3d_dx_reference(go, w, x.shape, st, pads, dl, groups, precision))
        grads[0] = dx.reshape(input.shape)
    if output_mask[1]:
        fmap, dy = (go, x) if transposed else (x, go)
        grads[1] = conv3d_dw_reference(fmap, dy, w.shape, st, pads, dl, groups, precision).reshape(weight.shape)
    if output_mask[2]:
        grads[2] = grad_output.astype(np.float64).sum(axis=(0, *range(2, grad_output.ndim)))
    return tuple(grads)
