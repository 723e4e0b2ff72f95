"""Does a tiling the lab found compute the right answer? Run it with data and compare with PyTorch (float64).

    from sweep_check import check_tiling
    error = check_tiling(target, overrides)   # max |got - torch| / max |torch|

A sweep times candidates without data (timing-only), so a tiling that is fast because it skips work would not
show there; benchmarks/tiling_gap.py --check runs each best tiling found through this before it is reported.
"""
import numpy as np
import torch

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_filter.operator import conv3d_backprop_filter_v2_run
from kernels.conv3d_v2.operator import conv3d_v2_run
from kernels.matmul import run_matmul


def _f64(a: np.ndarray) -> torch.Tensor:
    return torch.tensor(a.astype(np.float64))


def check_tiling(target, point: dict, seed: int = 0) -> float:
    """The relative error of the operator's result with the target's tiling for `point` (overrides)."""
    rng = np.random.default_rng(seed)
    if target.name == "matmul":
        p = target.problem
        dtype = DTYPES[p.dtype]
        a = rng.standard_normal((p.batch, p.m, p.k)).astype(dtype)
        b = rng.standard_normal((p.batch, p.k, p.n)).astype(dtype)
        got = run_matmul(a, b, platform=p.platform, tiling=target.tiling_for(point), engine="fast").result
        return _error(got, (_f64(a) @ _f64(b)).numpy())
    p = target.problem
    dtype = DTYPES[p.dtype]
    args = p.operator_arguments()
    x = rng.standard_normal(p.dx_shape).astype(dtype)
    w = rng.standard_normal(p.filter_shape).astype(dtype)
    dy = rng.standard_normal(p.dy_shape).astype(dtype)
    xt, wt = _f64(x).requires_grad_(), _f64(w).requires_grad_()
    y = torch.nn.functional.conv3d(xt, wt, stride=p.stride, padding=0, dilation=p.dilation, groups=p.groups) \
        if not any(p.pad) else torch.nn.functional.conv3d(
            torch.nn.functional.pad(xt, (p.pad[4], p.pad[5], p.pad[2], p.pad[3], p.pad[0], p.pad[1])), wt,
            stride=p.stride, dilation=p.dilation, groups=p.groups)
    if target.name == "conv3d":
        got = conv3d_v2_run(x, w, None, tiling_overrides=target.overrides(point) or None, engine="fast", **args)
        return _error(got.result, y.detach().numpy())
    y.backward(_f64(dy))
    if target.name == "conv3d-dw":
        got = conv3d_backprop_filter_v2_run(x, p.filter_shape, dy, tiling_overrides=target.overrides(point) or None,
                                            engine="fast", **args)
        return _error(got.result, wt.grad.numpy())
    got = conv3d_backprop_input_v2_run(p.dx_shape, w, dy, route="v2", engine="fast",
                                       tiling_overrides=target.overrides(point) or None, **args)
    return _error(got.result, xt.grad.numpy())


def _error(got: np.ndarray, expect: np.ndarray) -> float:
    return float(np.max(np.abs(got.astype(np.float64) - expect)) / max(np.max(np.abs(expect)), 1e-30))
