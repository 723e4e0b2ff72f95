"""The input window a kernel tap reads: shared by the dx, dw and forward references (one GEMM per tap)."""
from __future__ import annotations


def tap_window(start: tuple, dilations, out, strides) -> tuple:
    """The slices (D, H, W) of the padded input that kernel tap `start` (kd, kh, kw) reads for the `out` output
    positions: from tap * dilation, every stride-th, out of them."""
    return tuple(slice(k * d, k * d + (o - 1) * s + 1, s) for k, d, o, s in zip(start, dilations, out, strides))
