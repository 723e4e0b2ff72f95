"""Rewriting a dx problem into the A2 V2 kernel's envelope, where the real stack would route it elsewhere.

normalise_problem works on shapes alone; the Rewrite it returns is what the operator then does to the data: the
zero kernel planes it appends to the filter, and the crop of the extra dx entries from the kernel's result.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tiling.common.problem import ConvProblem


@dataclass(frozen=True)
class Rewrite:
    """How the problem handed to the kernel differs from the user's: extra dx entries before/after (D, H, W)
    that are cropped from the result, and zero kernel planes appended in depth."""

    extra_before: tuple[int, int, int] = (0, 0, 0)
    extra_after: tuple[int, int, int] = (0, 0, 0)
    zero_kernel_planes: int = 0
    depth_dilation: int = 1

    @property
    def identity(self) -> bool:
        return self.extra_before == (0, 0, 0) and self.extra_after == (0, 0, 0) and not self.zero_kernel_planes

    def describe(self) -> list[str]:
        notes = []
        depth_zero = self.zero_kernel_planes * self.depth_dilation
        for i, axis in enumerate("DHW"):
            after = self.extra_after[i] - (depth_zero if i == 0 else 0)
            if self.extra_before[i] or after:
                notes.append(f"{axis}: pads beyond the kernel reach moved into dx ({self.extra_before[i]} entries "
                             f"before, {after} after; cropped from the result)")
        if self.zero_kernel_planes:
            notes.append(f"D: strideD > kD, {self.zero_kernel_planes} zero kernel planes appended (kD = strideD) "
                         f"and {depth_zero} dx planes added at the end; cropped from the result")
        return notes

    def filter(self, weight: np.ndarray) -> np.ndarray:
        """The NCDHW filter the kernel gets: the user's, with the zero kernel planes appended in depth."""
        if not self.zero_kernel_planes:
            return weight
        zeros = np.zeros(weight.shape[:2] + (self.zero_kernel_planes,) + weight.shape[3:], dtype=weight.dtype)
        return np.concatenate([weight, zeros], axis=2)

    def crop(self, y5: np.ndarray, dx_shape: tuple[int, ...]) -> np.ndarray:
        """The user's dx (dx_shape, NCDHW) out of the kernel's NDC1HWC0 result."""
        (bd, bh, bw), (_, _, di, hi, wi) = self.extra_before, dx_shape
        return y5[:, bd:bd + di, :, bh:bh + hi, bw:bw + wi]

    def crop_ncdhw(self, y: np.ndarray, dx_shape: tuple[int, ...]) -> np.ndarray:
        """The user's dx out of the kernel's NCDHW result (the MIX build's output)."""
        (bd, bh, bw), (_, _, di, hi, wi) = self.extra_before, dx_shape
        return y[:, :, bd:bd + di, bh:bh + hi, bw:bw + wi]


def normalise_problem(p: ConvProblem) -> tuple[ConvProblem, Rewrite]:
    """An equivalent problem inside the A2 V2 kernel's envelope.

    - pad > (k-1)*dilation on any side (aclnn sends these to the V1 operator): the rows/planes of the padded
      input that lie beyond the kernel's reach become extra zero dx entries, e = pad - (k-1)*dilation, and the
      pad shrinks to (k-1)*dilation; the gradient of the extra entries is cropped away.
    - strideD > kD (not supported by the V2 kernel): append z = strideD - kD zero planes to the kernel and z*dilD
      extra planes at the end of dx; dy and every real gradient are unchanged.
    """
    n, cin, *sizes = p.dx_shape
    pads = list(p.pads)
    kernel = list(p.filter_shape[2:])
    before, after = [0, 0, 0], [0, 0, 0]
    for i in range(3):
        reach = (kernel[i] - 1) * p.dilations[i]
        for j, extra in ((2 * i, before), (2 * i + 1, after)):
            if pads[j] > reach:
                extra[i] = pads[j] - reach
                pads[j] = reach
    zero_planes = 0
    if p.strides[0] > kernel[0]:
        zero_planes = p.strides[0] - kernel[0]
        after[0] += zero_planes * p.dilations[0]
    cout, cin_g = p.filter_shape[:2]
    filter_shape = (cout, cin_g, kernel[0] + zero_planes, *kernel[1:])
    new_sizes = tuple(s + b + a for s, b, a in zip(sizes, before, after))
    rewrite = Rewrite(tuple(before), tuple(after), zero_planes, p.dilations[0])
    return replace(p, x_shape=(n, cin, *new_sizes), filter_shape=filter_shape, pads=tuple(pads)), rewrite
