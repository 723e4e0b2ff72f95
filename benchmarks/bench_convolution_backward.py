"""Benchmark: convolution_backward (grad_input, grad_weight and grad_bias) on the simulated Ascend910B2 against
PyTorch CPU's torch.ops.aten.convolution_backward, on the layers of bench_conv3d_dx.py.

    python benchmarks/bench_convolution_backward.py [--repeat 2] [--dtype float16] [--only NAME ...]

For each layer: the wall time of the full instruction-level simulation of all three gradients (data moved, races
checked) and of torch in float32 on the CPU (the same shapes, all three gradients), measured in the same process,
best of --repeat; the ratio sim / torch and the geometric mean of the ratios; the kernels launched, their
instructions and the simulated chip time (the launches one after another). Layers with asymmetric pads are
left out: aclnnConvolutionBackward's 3D padding is one value per axis.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from bench_conv3d_dx import LAYERS, dy_shape
from timing import best_of, layer_benchmark_args, selected_layers

from ascend_sim.machine.dtypes import DTYPES
from kernels import convolution_backward_run


def main(argv=None) -> None:
    args = layer_benchmark_args(__doc__, argv, repeat=2)
    dtype = DTYPES[args.dtype]
    print(f"{'layer':<24} {'sim s':>8} {'torch s':>9} {'ratio':>7} {'instr':>9} {'chip us':>9}  kernels")
    ratios = []
    for layer in selected_layers(LAYERS, args.only):
        pads = layer.pads
        if pads[0::2] != pads[1::2]:
            print(f"{layer.name:<24} left out: asymmetric pads {pads}")
            continue
        rng = np.random.default_rng(0)
        x = rng.standard_normal(layer.x).astype(dtype)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(dtype)
        go = rng.standard_normal(dy_shape(layer)).astype(dtype)
        attrs = ([layer.cout], layer.stride, pads[0::2], (1, 1, 1), False, (0, 0, 0), layer.groups,
                 (True, True, True))
        sim, run = best_of(args.repeat, lambda: convolution_backward_run(go, x, w, *attrs))
        tensors = [torch.from_numpy(a.astype(np.float32)) for a in (go, x, w)]
        ref_time, ref = best_of(args.repeat, lambda: torch.ops.aten.convolution_backward(
            *tensors, [layer.cout], list(layer.stride), list(pads[0::2]), [1, 1, 1], False, [0, 0, 0], layer.groups,
            [True, True, True]))
        for got, want in zip((run.grad_input, run.grad_weight, run.grad_bias), ref):
            want = want.numpy()
            err = np.abs(got.astype(np.float64) - want).max() / (np.abs(want).max() or 1.0)
            assert err < 2e-2, f"{layer.name}: simulator result differs from torch (max rel err {err:.2e})"
        ratio = sim / ref_time
        ratios.append(ratio)
        instructions = sum(launch.report.instructions for launch in run.launches)
        kernels = ", ".join(launch.kernel for launch in run.launches)
        print(f"{layer.name:<24} {sim:>8.2f} {ref_time:>9.4f} {ratio:>6.1f}x {instructions:>9,} "
              f"{run.microseconds:>9.1f}  {kernels}")
    if ratios:
        print(f"geometric mean of sim / torch: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
