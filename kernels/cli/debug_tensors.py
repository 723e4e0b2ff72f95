"""What `ascend-sim debug` knows about an operator run: its GM tensors by argument name (device format, logical
format, the element mapping) and its reference result, for `print y[...]`, `who-wrote y[...]` and `check`.

Each mapping is traced from the conversion the operator itself applies (ascend_sim.gm_tensors), so the formats'
index arithmetic lives only in ascend_sim/formats.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascend_sim.dtypes import DTYPES
from ascend_sim.formats import (
    filter_to_fractal_z_3d,
    ncdhw_to_ndc1hwc0,
    ndc1hwc0_to_ncdhw,
)
from ascend_sim.gm_tensors import GmTensor, from_device, to_device

from ..conv3d_backprop_input.matmul_route import (
    FM_EQ_KERNEL,
    STRIDE_EQ_KERNEL,
    W1B1_1X1X1,
)
from ..reference import conv3d_dx_reference
from .report import TOLERANCE


@dataclass
class OperatorTensors:
    """tensors: {argument name: GmTensor}; output: the name of the result; expected(): the reference result as
    float64 in the output's logical format; tolerance: of |got - ref| / (|ref| + rms(ref)) (report.check_against)."""

    tensors: dict
    output: str
    expected: object
    tolerance: float


def matmul_tensors(ran) -> OperatorTensors:
    """`ascend-sim matmul`: a (batch, M, K), b (batch, K, N) and c (batch, M, N), all ND in GM."""
    t = ran.tiling
    tensors = {}
    for name, allocation, array, dtype in (("a", "A", ran.a, t.dtype), ("b", "B", ran.b, t.dtype),
                                           ("c", "C", ran.c, t.out)):
        tensors[name] = to_device(name, allocation, DTYPES[dtype], "ND", array.shape, "ND", lambda x: x)
    expected = lambda: np.matmul(ran.a.astype(np.float64), ran.b.astype(np.float64))
    return OperatorTensors(tensors, "c", expected, _tolerance(t.dtype, t.hf32))


def conv3d_dx_tensors(ran) -> OperatorTensors:
    """`ascend-sim conv3d-dx` (NCDHW data and filter): out_backprop (dy), filter and y (dx)."""
    p, run = ran.problem, ran.result
    dtype = DTYPES[p.dtype]
    if run.route == "matmul":
        tensors = _matmul_route_tensors(p, run.matmul_mode, dtype)
    else:
        rewrite = run.rewrite
        kernel_dhw = tuple(s + b + a for s, b, a in zip(p.dhw, rewrite.extra_before, rewrite.extra_after))
        c0 = 32 // dtype.itemsize
        y_device = (p.batch, kernel_dhw[0], -(-p.cin // c0), kernel_dhw[1], kernel_dhw[2], c0)
        tensors = {
            "out_backprop": to_device("out_backprop", "out_backprop", dtype, "NCDHW", p.dy_shape, "NDC1HWC0",
                                      ncdhw_to_ndc1hwc0),
            "filter": to_device("filter", "filter", dtype, "NCDHW", p.filter_shape, "FRACTAL_Z_3D",
                                lambda w: filter_to_fractal_z_3d(rewrite.filter(w), p.groups, "NCDHW")),
            "y": from_device("y", "y", dtype, "NDC1HWC0", y_device, "NCDHW",
                             lambda y5: ndc1hwc0_to_ncdhw(rewrite.crop(y5, p.dx_shape), p.cin)),
        }

    def expected():
        return conv3d_dx_reference(ran.dy.astype(np.float64), ran.weight.astype(np.float64), p.dx_shape, p.stride,
                                   p.pad, p.dilation, p.groups)
    return OperatorTensors(tensors, "y", expected, _tolerance(p.dtype, p.hf32))


def _matmul_route_tensors(p, mode: str, dtype) -> dict:
    """The matmul aclnn runs for this dx (matmul_route.dx_by_matmul): which of A, B, C hold dy, the filter and dx,
    and how (the host-side views and transposes of each mode)."""
    n, cin, di, hi, wi = p.dx_shape
    cout, _, kd, kh, kw = p.filter_shape
    do, ho, wo = p.dy_shape[2:]
    if mode == STRIDE_EQ_KERNEL:
        dy = ("A", "ND (N, DoHoWo, Cout)", lambda x: x.reshape(n, cout, do * ho * wo).transpose(0, 2, 1))
        w = ("B", "ND (Cout, Cin*kD*kH*kW)", lambda x: x.reshape(cout, -1))
        y = ("C", "ND (N, DoHoWo, Cin*kD*kH*kW)", (n, do * ho * wo, cin * kd * kh * kw),
             lambda c: c.reshape(n, do, ho, wo, cin, kd, kh, kw).transpose(0, 4, 1, 5, 2, 6, 3, 7)
             .reshape(p.dx_shape))
    elif mode == FM_EQ_KERNEL:
        dy = ("A", "ND (N, Cout)", lambda x: x.reshape(n, cout))
        w = ("B", "ND (Cout, Cin*D*H*W)", lambda x: x.reshape(cout, -1))
        y = ("C", "ND (N, Cin*D*H*W)", (n, cin * di * hi * wi), lambda c: c.reshape(p.dx_shape))
    elif mode == W1B1_1X1X1:
        w = ("A", "ND (Cin, Cout)", lambda x: x.reshape(cout, cin).T)
        dy = ("B", "ND (Cout, D*H*W)", lambda x: x.reshape(cout, di * hi * wi))
        y = ("C", "ND (Cin, D*H*W)", (cin, di * hi * wi), lambda c: c.reshape(p.dx_shape))
    else:
        raise ValueError(f"matmul_mode={mode!r} is not a matmul route")
    return {
        "out_backprop": to_device("out_backprop", dy[0], dtype, "NCDHW", p.dy_shape, dy[1], dy[2]),
        "filter": to_device("filter", w[0], dtype, "NCDHW", p.filter_shape, w[1], w[2]),
        "y": from_device("y", y[0], dtype, y[1], y[2], "NCDHW", y[3]),
    }


def _tolerance(dtype: str, hf32: bool) -> float:
    return TOLERANCE["hf32" if hf32 and dtype == "float32" else dtype]


def operator_tensors(ran) -> OperatorTensors:
    """The tensors of a run `simulate` returned (a conv3d-dx or a matmul run)."""
    return conv3d_dx_tensors(ran) if hasattr(ran, "problem") else matmul_tensors(ran)


__all__ = ["GmTensor", "OperatorTensors", "conv3d_dx_tensors", "matmul_tensors", "operator_tensors"]
