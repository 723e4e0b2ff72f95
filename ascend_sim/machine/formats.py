"""Data layouts of the cube side: NDC1HWC0, FRACTAL_Z_3D (with groups), and the ND <-> NZ/ZZ/ZN fractal helpers.

Every conversion is a pure numpy function (pad / reshape / transpose, no Python loop over elements) that returns a
new C-contiguous array of the input's dtype. Padding is always zero. Bad input raises ``ValueError`` naming the
parameter, its value and what is allowed. See ``docs/formats.md`` for pictures and worked examples.

Glossary (C0 = 32 bytes / element size: 16 for fp16/bf16, 8 for fp32; N0 = 16 always):

- NDC1HWC0: ``(N, D, C1, H, W, C0)``; element ``(n, c, d, h, w)`` of NCDHW sits at ``[n, d, c // C0, h, w, c % C0]``.
- FRACTAL_Z_3D: ``(real_g * kD * cin1G * kH * kW, N1, N0, C0)``; logical axes ``(G, kD, C1, kH, kW, N1, N0, C0)``.
- NZ (L1 / L0C): ``(cols1, rows16, c0)``; ZZ (L0A): ``(rows1, cols1, 16, c0)``; ZN (L0B): ``(K1, N1, N0, K0)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ascend_sim.machine.dtypes import BLOCK_BYTES, c0_of

N0 = 16  # the cout (N) fractal edge of FRACTAL_Z_3D and the M/N edge of every cube fractal; C0 is the dtype's
DATA_FORMATS = ("NCDHW", "NDHWC")  # the 3D operators' x / dy / y (each operator has its own default)
FILTER_FORMATS = ("NCDHW", "NDHWC", "DHWCN")

__all__ = [
    "N0",
    "DATA_FORMATS",
    "FILTER_FORMATS",
    "GroupEnlarge",
    "group_enlarge",
    "ncdhw_to_ndc1hwc0",
    "ndc1hwc0_to_ncdhw",
    "ndhwc_to_ndc1hwc0",
    "ndc1hwc0_to_ndhwc",
    "filter_to_ncdhw",
    "filter_shape_to_ncdhw",
    "filter_from_ncdhw",
    "fractal_z_3d_shape",
    "filter_to_fractal_z_3d",
    "fractal_z_3d_to_filter",
    "nd_to_nz",
    "nz_to_nd",
    "nd_to_zz",
    "zz_to_nd",
    "nd_to_zn",
    "zn_to_nd",
]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ----------------------------------------------------------------------------------------------------------------------
# Input validation (the boundary of this module)
# ----------------------------------------------------------------------------------------------------------------------

def _as_array(x, name: str, ndim: int, layout: str) -> np.ndarray:
    """`x` as an ndarray of rank `ndim` with a numeric dtype whose size divides a 32-byte block."""
    if x is None:
        raise ValueError(f"{name}=None is not an array; expected a {ndim}-D {layout} array")
    arr = np.asarray(x)
    if arr.ndim != ndim:
        raise ValueError(
            f"{name} has rank {arr.ndim} (shape {arr.shape}); a {layout} array must have rank {ndim}")
    if arr.dtype.hasobject or arr.dtype.itemsize == 0 or BLOCK_BYTES % arr.dtype.itemsize != 0:
        raise ValueError(
            f"{name} has dtype {arr.dtype}; allowed: a numeric dtype whose size divides {BLOCK_BYTES} bytes "
            f"(float16, bfloat16, float32, ...)")
    return arr


def _check_int(value, name: str, low: int = 1) -> int:
    """A plain integer >= `low` (bools and floats are rejected)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}={value!r} is not an integer; allowed: an integer >= {low}")
    if value < low:
        raise ValueError(f"{name}={value} is out of range; allowed: an integer >= {low}")
    return int(value)


def _resolve_c0(c0, dtype) -> int:
    """The C0 to use: the dtype's (32 B / element size) when `c0` is None, else `c0` checked positive."""
    if c0 is None:
        return c0_of(dtype)
    return _check_int(c0, "c0")


def _check_c0_axis(arr: np.ndarray, name: str, expected: int | None = None) -> int:
    c0 = arr.shape[-1]
    if c0 < 1:
        raise ValueError(f"{name} has C0={c0} (shape {arr.shape}); allowed: C0 >= 1")
    if expected is not None and c0 != expected:
        raise ValueError(f"{name} has C0={c0} (shape {arr.shape}); allowed: C0={expected} for dtype {arr.dtype}")
    return c0


def _check_channels(channels, name: str, c1: int, c0: int, owner: str) -> int:
    channels = _check_int(channels, name)
    if _ceil_div(channels, c0) != c1:
        raise ValueError(
            f"{name}={channels} does not match {owner} with C1={c1}, C0={c0}; "
            f"allowed: {name} in [{(c1 - 1) * c0 + 1}, {c1 * c0}]")
    return channels


def _check_groups(groups, cin: int, cout: int, cin_name: str = "Cin", cout_name: str = "Cout") -> int:
    groups = _check_int(groups, "groups")
    if cin % groups != 0:
        raise ValueError(f"groups={groups} does not divide {cin_name}={cin}; allowed: a positive divisor of both "
                         f"{cin_name}={cin} and {cout_name}={cout}")
    if cout % groups != 0:
        raise ValueError(f"groups={groups} does not divide {cout_name}={cout}; allowed: a positive divisor of both "
                         f"{cin_name}={cin} and {cout_name}={cout}")
    return groups


def _check_filter_format(fmt) -> str:
    if not isinstance(fmt, str) or fmt.upper() not in FILTER_FORMATS:
        raise ValueError(f"filter_format={fmt!r} is not supported; allowed: {list(FILTER_FORMATS)}")
    return fmt.upper()


# ----------------------------------------------------------------------------------------------------------------------
# Groups: CalRealG ("enlarge" / multiple_extend)
# ----------------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GroupEnlarge:
    """How `groups` small groups are packed into block-diagonal super-groups (CalRealG).

    mag: original groups per super-group (``multiple_extend``); real_g: super-groups (tiling ``group``);
    cin1G: C1 of the dx channels of one super-group, in C0 units; cout1G: C1 of the dy channels of one
    super-group as the tiling carries it, in C0 units (so for fp32 it counts 8-channel blocks).

    For the FRACTAL_Z_3D storage shape use ``n1`` (16-channel blocks of cout per super-group), which is what the
    weight's second axis holds for every dtype; ``cin1G`` is its C1 (in C0 units).
    """

    groups: int
    cin_per_group: int
    cout_per_group: int
    mag: int
    real_g: int
    cin1G: int
    cout1G: int

    @property
    def cin_g(self) -> int:
        """Real (unpadded) input channels of one super-group: mag * Cin/groups."""
        return self.mag * self.cin_per_group

    @property
    def cout_g(self) -> int:
        """Real (unpadded) output channels of one super-group: mag * Cout/groups."""
        return self.mag * self.cout_per_group

    @property
    def n1(self) -> int:
        """N1 of FRACTAL_Z_3D: ceil(mag * Cout/groups / 16), for every dtype (the storage's second axis)."""
        return _ceil_div(self.cout_g, N0)


def group_enlarge(groups: int, cin: int, cout: int, dtype) -> GroupEnlarge:
    """CalRealG for a convolution with `cin` input (dx) and `cout` output (dy) channels in total.

    Rule (``conv_backprop_input_context_utils.cpp::CalRealG``, arch22), with cin_ori = cin/groups,
    cout_ori = cout/groups and C0 the dtype's:

    - ``mag = min(lcm(lcm(cin_ori, C0)/cin_ori, lcm(cout_ori, 16)/cout_ori), groups)``;
    - ``real_g = ceil(groups/mag)``; ``cin1G = ceil(mag*cin_ori/C0)``;
    - ``cout1G = ceil(mag*cout_ori/16)``, doubled for fp32 (C0 = 8) so that it counts C0 blocks;
    - but when ``real_g == 1`` the tiling uses the plain C1 values instead
      (``cout1G = ceil(cout/C0)``, ``cin1G = ceil(cin/C0)``; the "group expansion done in TransData" branch).

    The two cout1G rules differ only for fp32 with real_g == 1 and an odd ceil(cout/8); the weight's storage is
    the same either way (``n1`` blocks of 16 cout).
    """
    cin = _check_int(cin, "cin")
    cout = _check_int(cout, "cout")
    groups = _check_groups(groups, cin, cout, "cin", "cout")
    c0 = c0_of(dtype)
    cin_ori, cout_ori = cin // groups, cout // groups
    lcm = math.lcm
    mag = min(lcm(lcm(cin_ori, c0) // cin_ori, lcm(cout_ori, N0) // cout_ori), groups)
    real_g = _ceil_div(groups, mag)
    if real_g == 1:
        cin1G = _ceil_div(cin, c0)
        cout1G = _ceil_div(cout, c0)
    else:
        cin1G = _ceil_div(mag * cin_ori, c0)
        cout1G = _ceil_div(mag * cout_ori, N0) * max(1, N0 // c0)
    return GroupEnlarge(groups, cin_ori, cout_ori, mag, real_g, cin1G, cout1G)


# ----------------------------------------------------------------------------------------------------------------------
# Feature maps: NCDHW / NDHWC <-> NDC1HWC0
# ----------------------------------------------------------------------------------------------------------------------

def ncdhw_to_ndc1hwc0(x, c0: int | None = None) -> np.ndarray:
    """NCDHW ``(N, C, D, H, W)`` -> NDC1HWC0 ``(N, D, C1, H, W, C0)``, C1 = ceil(C/C0), padded channels zero.

    Element ``x[n, c, d, h, w]`` lands at ``y[n, d, c // C0, h, w, c % C0]``. C0 defaults to 32 B / element size.
    """
    x = _as_array(x, "x", 5, "NCDHW")
    c0 = _resolve_c0(c0, x.dtype)
    n, c, d, h, w = x.shape
    c1 = _ceil_div(c, c0)
    x = np.pad(x, ((0, 0), (0, c1 * c0 - c), (0, 0), (0, 0), (0, 0)))
    return np.ascontiguousarray(x.reshape(n, c1, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))


def ndc1hwc0_to_ncdhw(y, channels: int) -> np.ndarray:
    """NDC1HWC0 ``(N, D, C1, H, W, C0)`` -> NCDHW ``(N, channels, D, H, W)``; padding channels are dropped."""
    y = _as_array(y, "y", 6, "NDC1HWC0")
    n, d, c1, h, w, c0 = y.shape
    _check_c0_axis(y, "y")
    channels = _check_channels(channels, "channels", c1, c0, "y")
    x = y.transpose(0, 2, 5, 1, 3, 4).reshape(n, c1 * c0, d, h, w)
    return np.ascontiguousarray(x[:, :channels])


def ndhwc_to_ndc1hwc0(x, c0: int | None = None) -> np.ndarray:
    """NDHWC ``(N, D, H, W, C)`` -> NDC1HWC0 ``(N, D, C1, H, W, C0)``; ``x[n, d, h, w, c]`` -> ``[n, d, c//C0, h, w, c%C0]``."""
    x = _as_array(x, "x", 5, "NDHWC")
    c0 = _resolve_c0(c0, x.dtype)
    n, d, h, w, c = x.shape
    c1 = _ceil_div(c, c0)
    x = np.pad(x, ((0, 0), (0, 0), (0, 0), (0, 0), (0, c1 * c0 - c)))
    return np.ascontiguousarray(x.reshape(n, d, h, w, c1, c0).transpose(0, 1, 4, 2, 3, 5))


def ndc1hwc0_to_ndhwc(y, channels: int) -> np.ndarray:
    """NDC1HWC0 ``(N, D, C1, H, W, C0)`` -> NDHWC ``(N, D, H, W, channels)``; padding channels are dropped."""
    y = _as_array(y, "y", 6, "NDC1HWC0")
    n, d, c1, h, w, c0 = y.shape
    _check_c0_axis(y, "y")
    channels = _check_channels(channels, "channels", c1, c0, "y")
    x = y.transpose(0, 1, 3, 4, 2, 5).reshape(n, d, h, w, c1 * c0)
    return np.ascontiguousarray(x[..., :channels])


# ----------------------------------------------------------------------------------------------------------------------
# Filters: NCDHW / NDHWC / DHWCN and FRACTAL_Z_3D
# ----------------------------------------------------------------------------------------------------------------------

# Axis permutations from each filter format to NCDHW (Cout, Cin/g, kD, kH, kW) and back.
_TO_NCDHW = {"NCDHW": (0, 1, 2, 3, 4), "NDHWC": (0, 4, 1, 2, 3), "DHWCN": (4, 3, 0, 1, 2)}
_FROM_NCDHW = {"NCDHW": (0, 1, 2, 3, 4), "NDHWC": (0, 2, 3, 4, 1), "DHWCN": (2, 3, 4, 1, 0)}


def filter_to_ncdhw(w, fmt: str = "NCDHW") -> np.ndarray:
    """A filter in `fmt` -> NCDHW ``(Cout, Cin/groups, kD, kH, kW)``.

    NDHWC is ``(Cout, kD, kH, kW, Cin/groups)``; DHWCN is ``(kD, kH, kW, Cin/groups, Cout)``.
    """
    fmt = _check_filter_format(fmt)
    w = _as_array(w, "w", 5, f"{fmt} filter")
    return np.ascontiguousarray(w.transpose(_TO_NCDHW[fmt]))


def filter_shape_to_ncdhw(shape, fmt: str = "NCDHW") -> tuple[int, int, int, int, int]:
    """The NCDHW shape ``(Cout, Cin/groups, kD, kH, kW)`` of a 5-dimensional filter shape in `fmt`, without data."""
    fmt = _check_filter_format(fmt)
    return tuple(shape[axis] for axis in _TO_NCDHW[fmt])  # type: ignore[return-value]


def filter_from_ncdhw(w, fmt: str = "NCDHW") -> np.ndarray:
    """An NCDHW filter ``(Cout, Cin/groups, kD, kH, kW)`` -> `fmt` (NCDHW, NDHWC or DHWCN)."""
    fmt = _check_filter_format(fmt)
    w = _as_array(w, "w", 5, "NCDHW filter")
    return np.ascontiguousarray(w.transpose(_FROM_NCDHW[fmt]))


def _check_kernel(kernel) -> tuple[int, int, int]:
    try:
        items = tuple(kernel)
    except TypeError:
        items = None
    if items is None or len(items) != 3:
        raise ValueError(f"kernel={kernel!r} is not a (kD, kH, kW) triple; allowed: three integers >= 1")
    return tuple(_check_int(k, f"kernel[{i}]") for i, k in enumerate(items))  # type: ignore[return-value]


def fractal_z_3d_shape(cout: int, cin_per_group: int, kernel, groups: int, dtype) -> tuple[int, int, int, int]:
    """Storage shape ``(real_g*kD*cin1G*kH*kW, N1, 16, C0)`` of a filter with `cout` output channels in total."""
    cout = _check_int(cout, "cout")
    cin_per_group = _check_int(cin_per_group, "cin_per_group")
    kd, kh, kw = _check_kernel(kernel)
    groups = _check_int(groups, "groups")
    if cout % groups != 0:
        raise ValueError(f"groups={groups} does not divide cout={cout}; allowed: a positive divisor of cout")
    ge = group_enlarge(groups, cin_per_group * groups, cout, dtype)
    c0 = c0_of(dtype)
    cin1 = _ceil_div(ge.cin_g, c0)
    return (ge.real_g * kd * cin1 * kh * kw, ge.n1, N0, c0)


def filter_to_fractal_z_3d(w, groups: int = 1, filter_format: str = "NCDHW") -> np.ndarray:
    """A (grouped) filter -> FRACTAL_Z_3D ``(real_g * kD * cin1G * kH * kW, N1, 16, C0)``.

    Logical axes of the result: ``(G, kD, C1, kH, kW, N1, N0, C0)`` flattened over the first five. With the
    enlarge rule of :func:`group_enlarge` (mag, real_g; C0 = the dtype's, cin1G = ceil(mag*cin_ori/C0),
    N1 = ceil(mag*cout_ori/16)), weight element ``(co, ci, kd, kh, kw)`` of original group ``g = co // cout_ori``
    (``ci`` < cin_ori, ``co`` global) goes to super-group ``G = g // mag``, slot ``e = g % mag``, at

    - super-group channel ``cin' = e*cin_ori + ci`` (C1 index ``cin' // C0``, C0 index ``cin' % C0``),
    - super-group channel ``cout' = e*cout_ori + co % cout_ori`` (N1 index ``cout' // 16``, N0 ``cout' % 16``),
    - row ``((G*kD + kd)*cin1G + cin' // C0)*kH*kW + kh*kW + kw``.

    Every other entry (other groups' blocks, cin padding to cin1G*C0, cout padding to N1*16 -- for fp32 this is the
    padding of cout to a multiple of 16 -- and empty slots of a partial last super-group) is zero.
    """
    fmt = _check_filter_format(filter_format)
    w = filter_to_ncdhw(w, fmt)
    cout, cin_ori, kd, kh, kw = w.shape
    if min(w.shape) < 1:
        raise ValueError(f"w has an empty axis (NCDHW shape {w.shape}); allowed: every axis >= 1")
    groups = _check_int(groups, "groups")
    if cout % groups != 0:
        raise ValueError(f"groups={groups} does not divide Cout={cout} (filter shape {w.shape}, {fmt}); "
                         f"allowed: a positive divisor of Cout")
    ge = group_enlarge(groups, cin_ori * groups, cout, w.dtype)
    c0 = c0_of(w.dtype)
    mag, real_g, cout_ori = ge.mag, ge.real_g, ge.cout_per_group
    cin1, n1 = _ceil_div(ge.cin_g, c0), ge.n1

    # (groups, cout_ori, cin_ori, k...) padded with empty groups to real_g * mag.
    wg = w.reshape(groups, cout_ori, cin_ori, kd, kh, kw)
    wg = np.pad(wg, ((0, real_g * mag - groups),) + ((0, 0),) * 5).reshape(real_g, mag, cout_ori, cin_ori, kd, kh, kw)
    # Block-diagonal super-groups: dense[G, e, :, e, :] = group G*mag + e; zeros off the diagonal.
    dense = np.zeros((real_g, mag, cout_ori, mag, cin_ori, kd, kh, kw), dtype=w.dtype)
    slot = np.arange(mag)
    dense[:, slot, :, slot] = wg.transpose(1, 0, 2, 3, 4, 5, 6)  # advanced indices first: (mag, real_g, ...)
    dense = dense.reshape(real_g, mag * cout_ori, mag * cin_ori, kd, kh, kw)
    dense = np.pad(dense, ((0, 0), (0, n1 * N0 - mag * cout_ori), (0, cin1 * c0 - mag * cin_ori),
                           (0, 0), (0, 0), (0, 0)))
    # (G, N1, N0, C1, C0, kD, kH, kW) -> (G, kD, C1, kH, kW, N1, N0, C0)
    z = dense.reshape(real_g, n1, N0, cin1, c0, kd, kh, kw).transpose(0, 5, 3, 6, 7, 1, 2, 4)
    return np.ascontiguousarray(z.reshape(real_g * kd * cin1 * kh * kw, n1, N0, c0))


def fractal_z_3d_to_filter(wz, cout: int, cin_per_group: int, kernel, groups: int = 1,
                           filter_format: str = "NCDHW") -> np.ndarray:
    """FRACTAL_Z_3D -> the filter in `filter_format`; the inverse of :func:`filter_to_fractal_z_3d`.

    Only the diagonal (real) blocks are read; padding and off-diagonal entries are ignored. `cout` is the total
    output channel count, `cin_per_group` the filter's C axis, `kernel` = (kD, kH, kW).
    """
    fmt = _check_filter_format(filter_format)
    wz = _as_array(wz, "wz", 4, "FRACTAL_Z_3D")
    expected = fractal_z_3d_shape(cout, cin_per_group, kernel, groups, wz.dtype)
    if wz.shape != expected:
        raise ValueError(
            f"wz has shape {wz.shape}; allowed for cout={cout}, cin_per_group={cin_per_group}, kernel={tuple(kernel)}, "
            f"groups={groups}, dtype {wz.dtype}: {expected}")
    kd, kh, kw = _check_kernel(kernel)
    ge = group_enlarge(groups, cin_per_group * groups, cout, wz.dtype)
    c0 = c0_of(wz.dtype)
    mag, real_g, cout_ori, cin_ori = ge.mag, ge.real_g, ge.cout_per_group, ge.cin_per_group
    cin1, n1 = _ceil_div(ge.cin_g, c0), ge.n1

    z = wz.reshape(real_g, kd, cin1, kh, kw, n1, N0, c0)
    # -> (G, N1, N0, C1, C0, kD, kH, kW) -> (G, cout', cin', kD, kH, kW)
    dense = z.transpose(0, 5, 6, 2, 7, 1, 3, 4).reshape(real_g, n1 * N0, cin1 * c0, kd, kh, kw)
    dense = dense[:, :mag * cout_ori, :mag * cin_ori].reshape(real_g, mag, cout_ori, mag, cin_ori, kd, kh, kw)
    slot = np.arange(mag)
    diag = dense[:, slot, :, slot]  # (mag, real_g, cout_ori, cin_ori, kD, kH, kW)
    w = diag.transpose(1, 0, 2, 3, 4, 5, 6).reshape(real_g * mag * cout_ori, cin_ori, kd, kh, kw)[:cout]
    return filter_from_ncdhw(w, fmt)


# ----------------------------------------------------------------------------------------------------------------------
# Matrices: ND <-> NZ / ZZ / ZN (the cube's fractal layouts)
# ----------------------------------------------------------------------------------------------------------------------

def _pad2(a: np.ndarray, rows: int, cols: int) -> np.ndarray:
    return np.pad(a, ((0, rows - a.shape[0]), (0, cols - a.shape[1])))


def _check_rows_cols(z: np.ndarray, name: str, rows, cols, rows_cap: int, cols_cap: int,
                     rows_name: str = "rows", cols_name: str = "cols") -> tuple[int, int]:
    rows = _check_int(rows, rows_name)
    cols = _check_int(cols, cols_name)
    if rows > rows_cap:
        raise ValueError(f"{rows_name}={rows} exceeds what {name} (shape {z.shape}) holds; allowed: "
                         f"{rows_name} in [1, {rows_cap}]")
    if cols > cols_cap:
        raise ValueError(f"{cols_name}={cols} exceeds what {name} (shape {z.shape}) holds; allowed: "
                         f"{cols_name} in [1, {cols_cap}]")
    return rows, cols


def nd_to_nz(a, c0: int | None = None) -> np.ndarray:
    """ND matrix ``(rows, cols)`` -> NZ ``(cols1, rows16, c0)`` with ``cols1 = ceil(cols/c0)``, ``rows16 =
    ceil(rows/16)*16``; ``a[r, c]`` -> ``z[c // c0, r, c % c0]``, padding zero.

    This is the L1 layout DataCopy Nd2Nz produces (column blocks of c0 elements, each a stack of 16 x c0
    fractals, "N" between fractals, "Z" inside) and, with c0 = 16, the L0C layout of an fp32 result.
    """
    a = _as_array(a, "a", 2, "ND matrix")
    c0 = _resolve_c0(c0, a.dtype)
    rows, cols = a.shape
    r16, cols1 = _ceil_div(rows, N0) * N0, _ceil_div(cols, c0)
    a = _pad2(a, r16, cols1 * c0)
    return np.ascontiguousarray(a.reshape(r16, cols1, c0).transpose(1, 0, 2))


def nz_to_nd(z, rows: int, cols: int) -> np.ndarray:
    """NZ ``(cols1, rows16, c0)`` -> ND ``(rows, cols)``; the inverse of :func:`nd_to_nz`."""
    z = _as_array(z, "z", 3, "NZ")
    cols1, r16, c0 = z.shape
    rows, cols = _check_rows_cols(z, "z", rows, cols, r16, cols1 * c0)
    return np.ascontiguousarray(z.transpose(1, 0, 2).reshape(r16, cols1 * c0)[:rows, :cols])


def nd_to_zz(a, c0: int | None = None) -> np.ndarray:
    """ND matrix ``(rows, cols)`` (A: M x K) -> ZZ ``(rows1, cols1, 16, c0)``, the L0A layout on A2/A3.

    ``a[r, c]`` -> ``z[r // 16, c // c0, r % 16, c % c0]``: fractals row-major (Z) between, row-major (Z) inside;
    rows padded to 16, cols to c0, with zeros.
    """
    a = _as_array(a, "a", 2, "ND matrix")
    c0 = _resolve_c0(c0, a.dtype)
    rows, cols = a.shape
    rows1, cols1 = _ceil_div(rows, N0), _ceil_div(cols, c0)
    a = _pad2(a, rows1 * N0, cols1 * c0)
    return np.ascontiguousarray(a.reshape(rows1, N0, cols1, c0).transpose(0, 2, 1, 3))


def zz_to_nd(z, rows: int, cols: int) -> np.ndarray:
    """ZZ ``(rows1, cols1, 16, c0)`` -> ND ``(rows, cols)``; the inverse of :func:`nd_to_zz`."""
    z = _as_array(z, "z", 4, "ZZ")
    rows1, cols1, r0, c0 = z.shape
    rows, cols = _check_rows_cols(z, "z", rows, cols, rows1 * r0, cols1 * c0)
    return np.ascontiguousarray(z.transpose(0, 2, 1, 3).reshape(rows1 * r0, cols1 * c0)[:rows, :cols])


def nd_to_zn(b, c0: int | None = None) -> np.ndarray:
    """ND matrix ``(K, N)`` (B operand) -> ZN ``(K1, N1, N0, K0)``, the L0B layout on A2/A3.

    ``b[k, n]`` -> ``z[k // K0, n // 16, n % 16, k % K0]`` with K0 = c0 (16 for b16, 8 for fp32) and N0 = 16:
    fractals row-major (Z) over (K1, N1), each fractal stored column-major ("N": 16 columns n of K0 contiguous
    k values, 512 B). K padded to K0 and N to 16 with zeros.
    """
    b = _as_array(b, "b", 2, "ND matrix")
    k0 = _resolve_c0(c0, b.dtype)
    k, n = b.shape
    k1, n1 = _ceil_div(k, k0), _ceil_div(n, N0)
    b = _pad2(b, k1 * k0, n1 * N0)
    return np.ascontiguousarray(b.reshape(k1, k0, n1, N0).transpose(0, 2, 3, 1))


def zn_to_nd(z, k: int, n: int) -> np.ndarray:
    """ZN ``(K1, N1, N0, K0)`` -> ND ``(k, n)``; the inverse of :func:`nd_to_zn`."""
    z = _as_array(z, "z", 4, "ZN")
    k1, n1, n0, k0 = z.shape
    k, n = _check_rows_cols(z, "z", k, n, k1 * k0, n1 * n0, "k", "n")
    return np.ascontiguousarray(z.transpose(0, 3, 1, 2).reshape(k1 * k0, n1 * n0)[:k, :n])
