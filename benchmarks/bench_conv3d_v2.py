"""Benchmark: Conv3DV2 (the forward 3D convolution) on the simulated Ascend910B2 against PyTorch CPU conv3d, on the
layers of bench_conv3d_dx.py (3D CNN layers).

    python benchmarks/bench_conv3d_v2.py [--repeat 2] [--dtype float16] [--only NAME ...]

For each layer: the wall time of the full instruction-level simulation (data moved, races checked), of the
timing-only mode, and of `torch.nn.functional.conv3d` in float32 on the CPU (the same shape, with a bias), measured
in the same process, best of --repeat; the ratio sim / torch and the geometric mean of the ratios. The simulated chip
time and the bounding pipe are printed too. Layers whose kernel variant is not ported (groups) are listed as
skipped, with the reason.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from bench_conv3d_dx import LAYERS
from timing import best_of, layer_benchmark_args, selected_layers

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_v2_run


def torch_forward(layer, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """conv3d with the asymmetric pads applied to x first."""
    pf, pb, pt, pbm, pl, pr = layer.pads
    padded = torch.nn.functional.pad(x, (pl, pr, pt, pbm, pf, pb))
    return torch.nn.functional.conv3d(padded, w, b, stride=layer.stride, groups=layer.groups)


def main(argv=None) -> None:
    args = layer_benchmark_args(__doc__, argv, repeat=2)
    dtype = DTYPES[args.dtype]
    print(f"{'layer':<24} {'sim full s':>10} {'sim timing s':>12} {'torch s':>9} {'ratio':>7} {'instr':>9} "
          f"{'chip us':>9} {'bound':>5}")
    ratios = []
    for layer in selected_layers(LAYERS, args.only):
        rng = np.random.default_rng(0)
        x = rng.standard_normal(layer.x).astype(dtype)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(dtype)
        b = rng.standard_normal(layer.cout).astype(dtype)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups)
        try:
            sim, run = best_of(args.repeat, lambda: conv3d_v2_run(x, w, b, **common))
        except ValueError as err:
            print(f"{layer.name:<24} skipped: {err}")
            continue
        timing, _ = best_of(args.repeat, lambda: conv3d_v2_run(x, w, b, execute=False, check_races=False, **common))
        xt, wt, bt = (torch.from_numpy(a.astype(np.float32)) for a in (x, w, b))
        ref_time, ref = best_of(args.repeat, lambda: torch_forward(layer, xt, wt, bt))
        err = np.abs(run.result.astype(np.float64) - ref.numpy()).max() / (np.abs(ref.numpy()).max() or 1.0)
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
