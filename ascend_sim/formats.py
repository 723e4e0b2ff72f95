"""Data layouts of the cube side: NDC1HWC0, FRACTAL_Z_3D (with groups), NZ/ND helpers."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .dtypes import c0_of

N0 = 16  # the cout (N) fractal edge of FRACTAL_Z_3D; C0 is the dtype's


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class GroupEnlarge:
    """How `groups` small groups are packed into block-diagonal super-groups (CalRealG).

    mag: original groups per super-group; real_g: super-groups; cin1G, cout1G: C1 per super-group
    (cout1G counted in C0 units, so it is doubled for fp32 where C0 = 8 but the cout fractal edge is 16).
    """

    groups: int
    cin_per_group: int
    cout_per_group: int
    mag: int
    real_g: int
    cin1G: int
    cout1G: int


def group_enlarge(groups: int, cin: int, cout: int, dtype) -> GroupEnlarge:
    """CalRealG for a convolution with `cin` input and `cout` output channels in total."""
    c0 = c0_of(dtype)
    cin_ori, cout_ori = cin // groups, cout // groups
    if groups == 1:
        return GroupEnlarge(1, cin, cout, 1, 1, _ceil_div(cin, c0), _ceil_div(cout, c0))
    lcm = math.lcm
    mag = min(lcm(lcm(cin_ori, c0) // cin_ori, lcm(cout_ori, N0) // cout_ori), groups)
    real_g = _ceil_div(groups, mag)
    cin1G = _ceil_div(mag * cin_ori, c0)
    cout1G = _ceil_div(mag * cout_ori, N0) * (N0 // c0)
    return GroupEnlarge(groups, cin_ori, cout_ori, mag, real_g, cin1G, cout1G)
