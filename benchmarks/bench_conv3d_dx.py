"""Benchmark: Conv3DBackpropInputV2 on the simulated Ascend910B2 against PyTorch CPU dx, layers from 3D networks.

    python benchmarks/bench_conv3d_dx.py [--repeat 3] [--dtype float16] [--only NAME ...] [--clock wall|cpu]

For each layer: the time (wall, or with --clock cpu the process's CPU seconds, every thread's) of the full
instruction-level simulation (data moved, races checked), of the timing-only mode, and of
`torch.nn.grad.conv3d_input` in float32 on the CPU (the same shape), measured in the same process, best of
--repeat; the ratio sim / torch, and the geometric mean of the ratios. The simulated chip time and the bounding
pipe are printed too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from timing import best_of, layer_benchmark_args, selected_layers

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run


@dataclass(frozen=True)
class Layer:
    name: str
    x: tuple  # N, C, D, H, W
    cout: int
    kernel: tuple
    stride: tuple = (1, 1, 1)
    pads: tuple = (0, 0, 0, 0, 0, 0)  # front, back, top, bottom, left, right
    groups: int = 1


LAYERS = [
    Layer("C3D conv3a", (1, 128, 8, 28, 28), 256, (3, 3, 3), pads=(1, 1, 1, 1, 1, 1)),
    Layer("R3D-18 stem", (1, 3, 16, 112, 112), 64, (3, 7, 7), (1, 2, 2), (1, 1, 3, 3, 3, 3)),
    Layer("3D U-Net down", (1, 32, 16, 64, 64), 64, (3, 3, 3), (2, 2, 2), (1, 1, 1, 1, 1, 1)),
    Layer("VideoMAE patch embed", (1, 3, 16, 224, 224), 768, (2, 16, 16), (2, 16, 16)),
    Layer("X3D depthwise", (1, 96, 16, 28, 28), 96, (3, 3, 3), pads=(1, 1, 1, 1, 1, 1), groups=96),
    Layer("video-VAE causal conv", (1, 128, 5, 32, 32), 128, (3, 3, 3), pads=(2, 0, 1, 1, 1, 1)),
]


def dy_shape(layer: Layer) -> tuple:
    n, _, *spatial = layer.x
    out = [(size + layer.pads[2 * i] + layer.pads[2 * i + 1] - k) // s + 1
           for i, (size, k, s) in enumerate(zip(spatial, layer.kernel, layer.stride))]
    return (n, layer.cout, *out)


def torch_dx(layer: Layer, weight: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """dx by autograd-free conv3d_input; asymmetric pads are applied to a larger input and cropped."""
    pf, pb, pt, pbm, pl, pr = layer.pads
    n, c, d, h, w = layer.x
    big = (n, c, d + pf + pb, h + pt + pbm, w + pl + pr)
    dx = torch.nn.grad.conv3d_input(big, weight, dy, stride=layer.stride, groups=layer.groups)
    return dx[:, :, pf:pf + d, pt:pt + h, pl:pl + w]


def main(argv=None) -> None:
    args = layer_benchmark_args(__doc__, argv, repeat=3)
    dtype = DTYPES[args.dtype]
    print(f"{'layer':<24} {'sim full s':>10} {'sim timing s':>12} {'torch s':>9} {'ratio':>7} {'instr':>8} "
          f"{'chip us':>9} {'bound':>5}")
    ratios = []
    for layer in selected_layers(LAYERS, args.only):
        rng = np.random.default_rng(0)
        dy = rng.standard_normal(dy_shape(layer)).astype(dtype)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(dtype)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW")
        sim, run = best_of(args.repeat, lambda: conv3d_backprop_input_v2_run(layer.x, w, dy, **common), args.clock)
        timing, _ = best_of(args.repeat, lambda: conv3d_backprop_input_v2_run(
            layer.x, w, dy, execute=False, check_races=False, **common), args.clock)
        wt, dyt = torch.from_numpy(w.astype(np.float32)), torch.from_numpy(dy.astype(np.float32))
        ref_time, ref = best_of(args.repeat, lambda: torch_dx(layer, wt, dyt), args.clock)
        got = run.result.astype(np.float32)
        err = np.abs(got - ref.numpy()).max() / (np.abs(ref.numpy()).max() or 1.0)
        assert err < 2e-2, f"{layer.name}: simulator result differs from torch (max rel err {err:.2e})"
        ratio = sim / ref_time
        ratios.append(ratio)
        report = run.report
        print(f"{layer.name:<24} {sim:>10.3f} {timing:>12.3f} {ref_time:>9.4f} {ratio:>6.1f}x "
              f"{report.instructions:>8,} {report.microseconds:>9.1f} {report.bound:>5}")
    if ratios:
        print(f"geometric mean of sim / torch: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}x")


if __name__ == "__main__":
    main()
