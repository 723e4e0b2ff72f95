"""The CLI's fast numpy references (dx, dw, forward: one batched GEMM per kernel tap) against PyTorch's autograd
of the forward convolution, over a seeded grid of groups, dilations, strides larger than the kernel and
asymmetric pads, in float64 and float32."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from kernels.conv3d_v2.reference import conv3d_reference


def _case(seed: int):
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 4))
    cin, cout = groups * int(rng.integers(1, 5)), groups * int(rng.integers(1, 5))
    kernel = tuple(int(k) for k in rng.integers(1, 4, 3))
    strides = tuple(int(s) for s in rng.integers(1, 5, 3))  # often larger than the kernel
    dilations = tuple(int(d) for d in rng.integers(1, 4, 3))
    pads = tuple(int(p) for p in rng.integers(0, 4, 6))  # (front, back, top, bottom, left, right), asymmetric
    # an input at least as large as the dilated kernel, with a tail the last window may not reach
    dhw = tuple((k - 1) * d + 1 + int(rng.integers(0, 7)) for k, d in zip(kernel, dilations))
    n = int(rng.integers(1, 3))
    x = rng.standard_normal((n, cin, *dhw))
    w = rng.standard_normal((cout, cin // groups, *kernel))
    return x, w, groups, strides, dilations, pads, rng


def _torch(x, w, dy_seed_rng, groups, strides, dilations, pads):
    """(y, dy, dx, dw) by autograd: the forward on x padded asymmetrically (F.pad takes the last axis first)."""
    xt = torch.from_numpy(x).requires_grad_()
    wt = torch.from_numpy(w).requires_grad_()
    padded = F.pad(xt, (pads[4], pads[5], pads[2], pads[3], pads[0], pads[1]))
    y = F.conv3d(padded, wt, stride=strides, dilation=dilations, groups=groups)
    dy = torch.from_numpy(dy_seed_rng.standard_normal(tuple(y.shape)))
    y.backward(dy)
    return y.detach().numpy(), dy.numpy(), xt.grad.numpy(), wt.grad.numpy()


@pytest.mark.parametrize("precision, tolerance", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("seed", range(40))
def test_fast_references_match_torch(seed, precision, tolerance):
    x, w, groups, strides, dilations, pads, rng = _case(seed)
    y, dy, dx, dw = _torch(x, w, rng, groups, strides, dilations, pads)
    scale = lambda a: np.sqrt(np.mean(a ** 2)) + 1e-300  # noqa: E731
    got_y = conv3d_reference(x, w, None, strides, pads, dilations, groups, precision=precision)
    got_dx = conv3d_dx_reference(dy, w, x.shape, strides, pads, dilations, groups, precision=precision)
    got_dw = conv3d_dw_reference(x, dy, w.shape, strides, pads, dilations, groups, precision=precision)
    for name, got, expect in (("y", got_y, y), ("dx", got_dx, dx), ("dw", got_dw, dw)):
        assert got.shape == expect.shape, name
        assert got.dtype == precision, name
        assert np.abs(got - expect).max() <= tolerance * scale(expect), (name, seed)


def test_forward_bias_is_added_per_channel():
    x, w, groups, strides, dilations, pads, _ = _case(3)
    bias = np.arange(w.shape[0], dtype=np.float64)
    with_bias = conv3d_reference(x, w, bias, strides, pads, dilations, groups)
    without = conv3d_reference(x, w, None, strides, pads, dilations, groups)
    np.testing.assert_allclose(with_bias - without, np.broadcast_to(bias.reshape(1, -1, 1, 1, 1), without.shape))
