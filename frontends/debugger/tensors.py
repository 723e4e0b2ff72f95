"""What `ascend-sim debug` knows about an operator run: its GM tensors by argument name (device format, logical
format, the element mapping) and its reference result, for `print y[...]`, `who-wrote y[...]` and `check`.

Both come from the command's flags and GM as the launch found it (the Capture's copy), not from the run's result,
so that a run that faulted has them too. Each mapping is traced from the conversion the operator itself applies
(ascend_sim.machine.gm_tensors), so the formats' index arithmetic lives only in ascend_sim/machine/formats.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from ascend_sim.machine.formats import filter_to_fractal_z_3d, ncdhw_to_ndc1hwc0, ndc1hwc0_to_ncdhw
from ascend_sim.machine.gm_tensors import GmTensor, from_device, to_device
from frontends.cli import conv3d_dw_command
from frontends.cli.conv_problem import conv_problem
from frontends.cli.report import TOLERANCE
from kernels.conv3d_backprop_filter import operator as dw_operator
from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
from kernels.conv3d_backprop_input.matmul_route import FM_EQ_KERNEL, STRIDE_EQ_KERNEL, W1B1_1X1X1
from kernels.conv3d_backprop_input.operator_arch35 import DTYPES_950
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from kernels.conv3d_v2.reference import conv3d_reference
from kernels.conv3d_v2.routing import need_point_wise_kernel, point_wise_kernel_beyond_limits
from tiling.matmul import OPERAND_DTYPES


@dataclass
class OperatorTensors:
    """tensors: {argument name: GmTensor}; output: the name of the result; expected(): the reference result as
    float64 in the output's logical format; tolerance: of |got - ref| / (|ref| + rms(ref)) (report.check_against);
    aliases: {name the run command prints: argument name} (dy -> out_backprop), usable at the prompt too."""

    tensors: dict
    output: str
    expected: object
    tolerance: float
    aliases: dict = field(default_factory=dict)

    def banner(self) -> str:
        """The tensors line of the debugger's banner: each name, its alias, logical format and shape."""
        named = {tensor: alias for alias, tensor in self.aliases.items()}
        return "tensors: " + ", ".join(
            f"{name}{f' ({named[name]})' if name in named else ''} {t.logical_format} {t.logical_shape}"
            for name, t in self.tensors.items())


def matmul_tensors(args, initial_gm: dict) -> OperatorTensors:
    """`ascend-sim matmul`: a (batch, M, K), b (batch, K, N) and c (batch, M, N), all ND in GM."""
    dtype = OPERAND_DTYPES[args.dtype]
    tensors = {}
    for name, allocation, shape in (("a", "A", (args.batch, args.m, args.k)), ("b", "B", (args.batch, args.k, args.n)),
                                    ("c", "C", (args.batch, args.m, args.n))):
        tensors[name] = to_device(name, allocation, dtype, "ND", shape, "ND", lambda x: x)

    def expected():
        a, b = (tensors[name].logical(initial_gm[tensors[name].allocation]) for name in ("a", "b"))
        return np.matmul(a.astype(np.float64), b.astype(np.float64))
    return OperatorTensors(tensors, "c", expected, _tolerance(args.dtype, args.hf32))


def conv3d_dx_tensors(args, initial_gm: dict) -> OperatorTensors:
    """`ascend-sim conv3d-dx` (NCDHW data and filter): out_backprop (dy), filter and y (dx); on an Ascend 950 all
    three as the arch35 kernel finds them in GM, NCDHW, or as aclnn's 950 matmul shortcut places them."""
    p = conv_problem(args)
    mode = p.matmul_mode_arch35() if p.arch35 and args.route == "aclnn" else None
    if mode:  # the Ascend 950's matmul shortcut, on the 950 matmul kernel
        tensors = _matmul_route_tensors(p, mode, DTYPES_950[p.dtype])
    elif p.arch35:  # the Ascend 950: the arch35 kernel reads and writes the NCDHW arrays as given
        dtype = DTYPES_950[p.dtype]
        tensors = {name: to_device(name, name, dtype, "NCDHW", shape, "NCDHW", lambda x: x)
                   for name, shape in (("out_backprop", p.dy_shape), ("filter", p.filter_shape))}
        tensors["y"] = from_device("y", "y", dtype, "NCDHW", p.dx_shape, "NCDHW", lambda y: y)
    else:
        tensors = _arch22_dx_tensors(p, p.plan(args.route, dict(args.set) or None))

    def expected():
        dy, weight = (tensors[name].logical(initial_gm[tensors[name].allocation]).astype(np.float64)
                      for name in ("out_backprop", "filter"))
        return conv3d_dx_reference(dy, weight, p.dx_shape, p.stride, p.pad, p.dilation, p.groups)
    return OperatorTensors(tensors, "y", expected, _tolerance(p.dtype, p.hf32),
                           {"dy": "out_backprop", "w": "filter", "dx": "y"})


def _arch22_dx_tensors(p, plan) -> dict:
    """The A2 dx operator's GM tensors for its plan (the routing and rewrite, as the run made them)."""
    dtype = DTYPES[p.dtype]
    if plan.route == "matmul":
        return _matmul_route_tensors(p, plan.matmul_mode, dtype)
    rewrite = plan.rewrite
    kernel_dhw = tuple(s + b + a for s, b, a in zip(p.dhw, rewrite.extra_before, rewrite.extra_after))
    c0 = 32 // dtype.itemsize
    if plan.y_format == "NCDHW":  # the MIX build's vector cores write dx in NCDHW themselves
        y = from_device("y", "y", dtype, "NCDHW", (p.batch, p.cin, *kernel_dhw), "NCDHW",
                        lambda y: rewrite.crop_ncdhw(y, p.dx_shape))
    else:
        y_device = (p.batch, kernel_dhw[0], -(-p.cin // c0), kernel_dhw[1], kernel_dhw[2], c0)
        y = from_device("y", "y", dtype, "NDC1HWC0", y_device, "NCDHW",
                        lambda y5: ndc1hwc0_to_ncdhw(rewrite.crop(y5, p.dx_shape), p.cin))
    return {
        "out_backprop": to_device("out_backprop", "out_backprop", dtype, "NCDHW", p.dy_shape, "NDC1HWC0",
                                  ncdhw_to_ndc1hwc0),
        "filter": to_device("filter", "filter", dtype, "NCDHW", p.filter_shape, "FRACTAL_Z_3D",
                            lambda w: filter_to_fractal_z_3d(rewrite.filter(w), p.groups, "NCDHW")),
        "y": y,
    }


def conv3d_dw_tensors(args, initial_gm: dict) -> OperatorTensors:
    """`ascend-sim conv3d-dw` (Conv3DBackpropFilterV2, NCDHW data): x, out_backprop (dy) and y (dw, float32), as
    kernels/conv3d_backprop_filter/operator.py places them (NDC1HWC0 in the tiling's group layout, x with the rows
    beyond the kernel's reach written out; y FRACTAL_Z_3D). The tiling is generated again from the flags: the
    generator is deterministic, and a run that faulted has no result to take it from."""
    p = conv_problem(args)
    dtype = np.dtype(DTYPES[p.dtype])
    kh, dilation_h = p.kernel[1], p.dilation[1] if p.kernel[1] > 1 else 1
    t = conv3d_dw_command.plan_tiling(args).dwTiling
    c0 = t.k0
    per = dw_operator.groups_per_tiling_group(p.groups, p.cin, p.cout, t)

    def placed(channels_per_group: int, aligned: int, total: int):
        return lambda a: dw_operator._to_device(a, dtype, per, channels_per_group, aligned, total)
    x_place = placed(p.cin // p.groups, t.cin1G * c0, -(-t.cin // c0) * c0)
    y_elems = t.group * t.dk * t.cin1G * t.hk * t.wk * t.cout1G * c0 * c0
    tensors = {
        "x": to_device("x", "x", dtype, "NCDHW", p.dx_shape, "NDC1HWC0",
                       lambda x: x_place(dw_operator._pad_rows_beyond_reach(x, p.pad, kh, dilation_h)[0])),
        "out_backprop": to_device("out_backprop", "out_backprop", dtype, "NCDHW", p.dy_shape, "NDC1HWC0",
                                  placed(p.cout // p.groups, t.cout1G * c0, -(-t.cout // c0) * c0)),
        "y": from_device("y", "y", np.float32, "FRACTAL_Z_3D", (y_elems,), "NCDHW",
                         lambda flat: dw_operator._from_device(flat, t, p.groups, p.filter_shape)),
    }

    def expected():
        x, dy = (tensors[name].logical(initial_gm[tensors[name].allocation]).astype(np.float64)
                 for name in ("x", "out_backprop"))
        return conv3d_dw_reference(x, dy, p.filter_shape, p.stride, p.pad, p.dilation, p.groups)
    return OperatorTensors(tensors, "y", expected, _tolerance(p.dtype, p.hf32), {"dy": "out_backprop", "dw": "y"})


def conv3d_tensors(args, initial_gm: dict) -> OperatorTensors:
    """`ascend-sim conv3d` (Conv3DV2, NCDHW data and filter): x, filter, bias (when --bias) and y, as
    kernels/conv3d_v2/operator.py places them (NDC1HWC0, FRACTAL_Z_3D, the kernel's bias dtype, NDC1HWC0)."""
    p = conv_problem(args)
    dtype = DTYPES[p.dtype]
    c0 = 32 // dtype.itemsize
    n, cout, do, ho, wo = p.dy_shape
    pointwise = (need_point_wise_kernel(p.filter_shape, p.stride, p.pad, p.dilation, p.groups)
                 and not point_wise_kernel_beyond_limits(p.dx_shape))
    if pointwise:  # the pointwise kernel's NCDHW tensors, as given
        tensors = {"x": to_device("x", "x", dtype, "NCDHW", p.dx_shape, "NCDHW", lambda x: x),
                   "filter": to_device("filter", "filter", dtype, "NCDHW", p.filter_shape, "NCDHW", lambda w: w),
                   "y": from_device("y", "y", dtype, "NCDHW", p.dy_shape, "NCDHW", lambda y: y)}
    else:
        tensors = {
            "x": to_device("x", "x", dtype, "NCDHW", p.dx_shape, "NDC1HWC0", ncdhw_to_ndc1hwc0),
            "filter": to_device("filter", "filter", dtype, "NCDHW", p.filter_shape, "FRACTAL_Z_3D",
                                lambda w: filter_to_fractal_z_3d(w, p.groups, "NCDHW")),
            "y": from_device("y", "y", dtype, "NDC1HWC0", (n, do, -(-cout // c0), ho, wo, c0), "NCDHW",
                             lambda y5: ndc1hwc0_to_ncdhw(y5, cout)),
        }
    if args.bias:  # DTYPE_BIAS: fp16 for fp16 data on the NDC1HWC0 path, else fp32 (pointwise: padded to 16)
        bias_dtype = dtype if p.dtype == "float16" and not pointwise else np.dtype(np.float32)
        pad = -cout % 16 if pointwise else 0
        tensors["bias"] = to_device("bias", "bias", bias_dtype, "ND", (cout,), "ND",
                                    lambda b: np.concatenate([b, np.zeros(pad, b.dtype)]))

    def expected():
        x, w = (tensors[name].logical(initial_gm[tensors[name].allocation]).astype(np.float64)
                for name in ("x", "filter"))
        b = tensors["bias"].logical(initial_gm["bias"]).astype(np.float64) if args.bias else None
        return conv3d_reference(x, w, b, p.stride, p.pad, p.dilation, p.groups)
    return OperatorTensors(tensors, "y", expected, _tolerance(p.dtype, p.hf32), {"w": "filter"})


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


TENSORS = {"conv3d-dx": conv3d_dx_tensors, "conv3d-dw": conv3d_dw_tensors, "conv3d": conv3d_tensors,
           "matmul": matmul_tensors}


def operator_tensors(args, initial_gm: dict) -> OperatorTensors | None:
    """The tensors of the run the flags of `ascend-sim debug <operator>` describe; initial_gm: GM before the launch
    ({allocation: bytes}); args: of `debug <operator>` or of the operator's own command. None for conv-backward
    (its launches see reshaped views of the operands: the GM allocations go by their kernels' names)."""
    build = TENSORS.get(getattr(args, "operator", None) or args.command)
    return build(args, initial_gm) if build else None


__all__ = ["GmTensor", "OperatorTensors", "conv3d_dw_tensors", "conv3d_dx_tensors", "conv3d_tensors", "matmul_tensors",
           "operator_tensors"]
