"""The numpy dx reference used by the CLI check, against PyTorch's conv3d_input."""
import numpy as np
import pytest
import torch

from kernels.conv3d_backprop_input.reference import conv3d_dx_reference


@pytest.mark.parametrize("n,cin,cout,dhw,k,s,p,d,g", [
    (1, 3, 5, (5, 6, 7), (2, 3, 3), (1, 2, 1), (0, 1, 1), (1, 1, 2), 1),
    (2, 4, 6, (6, 5, 5), (3, 1, 2), (2, 1, 3), (1, 0, 0), (2, 1, 1), 2),
    (1, 6, 6, (4, 7, 6), (1, 3, 3), (1, 3, 2), (0, 2, 1), (1, 1, 1), 6),
])
def test_reference_matches_torch(n, cin, cout, dhw, k, s, p, d, g):
    rng = np.random.default_rng(0)
    x_shape = (n, cin, *dhw)
    w = rng.standard_normal((cout, cin // g, *k))
    y = torch.nn.functional.conv3d(torch.zeros(x_shape, dtype=torch.float64), torch.from_numpy(w), stride=s,
                                   padding=p, dilation=d, groups=g)
    dy = rng.standard_normal(y.shape)
    expect = torch.nn.grad.conv3d_input(x_shape, torch.from_numpy(w), torch.from_numpy(dy), stride=s, padding=p,
                                        dilation=d, groups=g).numpy()
    pads = (p[0], p[0], p[1], p[1], p[2], p[2])
    got = conv3d_dx_reference(dy, w, x_shape, s, pads, d, g)
    assert np.allclose(got, expect, rtol=1e-12, atol=1e-12)
