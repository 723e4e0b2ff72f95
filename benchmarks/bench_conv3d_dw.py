"""Benchmark: Conv3DBackpropFilterV2 (dw) on the simulated Ascend910B2 against PyTorch CPU dw, on the layers of
bench_conv3d_dx.py (3D CNN layers).

    python benchmarks/bench_conv3d_dw.py [--repeat 2] [--dtype float16] [--only NAME ...]

For each layer: the wall time of the full instruction-level simulation (data moved, races checked), of the
timing-only mode, and of `torch.nn.grad.conv3d_weight` in float32 on the CPU (the same shape), measured in the
same process, best of --repeat; the ratio sim / torch and the geometric mean of the ratios. The simulated chip
time and the bounding pipe are printed too.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from bench_conv3d_dx import LAYERS, dy_shape
from timing import best_of, layer_benchmark_args, selected_layers

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_filter_v2_run


def torch_dw(layer, x: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """dw by conv3d_weight; asymmetric pads are applied to x first."""
    pf, pb, pt, pbm, pl, pr = layer.pads
    padded = torch.nn.functional.pad(x, (pl, pr, pt, pbm, pf, pb))
    w_shape = (layer.cout, layer.x[1] // layer.groups, *layer.kernel)
    return torch.nn.grad.conv3d_weight(padded, w_shape, dy, stride=layer.stride, groups=layer.groups)


def main(argv=None) -> None:
    args = layer_benchmark_args(__doc__, argv, repeat=2)
    dtype = DTYPES[args.dtype]
    print(f"{'layer':<24} {'sim full s':>10} {'sim timing s':>12} {'torch s':>9} {'ratio':>7} {'instr':>9} "
          f"{'chip us':>9} {'bound':>5}")
    ratios = []
    for layer in selected_layers(LAYERS, args.only):
        rng = np.random.default_rng(0)
        x = rng.standard_normal(layer.x).astype(dtype)
        dy = rng.standard_normal(dy_shape(layer)).astype(dtype)
        w_shape = (layer.cout, layer.x[1] // layer.groups, *layer.kernel)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW")
        sim, run = best_of(args.repeat, lambda: conv3d_backprop_filter_v2_run(x, w_shape, dy, **common))
        timing, _ = best_of(args.repeat, lambda: conv3d_backprop_filter_v2_run(
            x, w_shape, dy, execute=False, check_races=False, **common))
        xt, dyt = torch.from_numpy(x.astype(np.float32)), torch.from_numpy(dy.astype(np.float32))
        ref_time, ref = best_of(args.repeat, lambda: torch_dw(layer, xt, dyt))
        err = np.abs(run.result - ref.numpy()).max() / (np.abs(ref.numpy()).max() or 1.0)
        assert err < 2e-2, f"{layer.name}: simulator result differs from torch (max rel err {err:.2e})"
        ratio = sim / ref_time
        ratios.append(ratio)
        report = run.report
        print(f"{layer.name:<24} {sim:>10.3f} {timing:>12.3f} {ref_time:>9.4f} {ratio:>6.1f}x "
              f"{report.instructions:>9,} {report.microseconds:>9.1f} {report.bound:>5}")
    if ratios:
        print(f"geometric mean of sim / torch: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
