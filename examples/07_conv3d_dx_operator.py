"""The full Conv3DBackpropInputV2 operator: the host tiling, the multi-core kernel, and a tiling experiment.

What it teaches:
* the host side of an Ascend C operator: the tiling generator turns shapes into the tiling data the kernel reads
  (the real field names: baseM/baseN/baseK, stepKa/stepKb, the L1/L0 ping-pong flags, the core split), and picks
  the template (the tiling key);
* the device side: every core runs the same kernel function, finds its share of the work from GetBlockIdx(),
  and drives the Conv3DBackpropInput high-level API (Init, SetSingleShape, Iterate, GetTensorC, End);
* reading a run: cycles, the pipe that bounds the run, per-pipe utilisation and bytes moved;
* a tiling experiment: the same problem with one tiling field changed, checked before launch by the validator.

    python examples/07_conv3d_dx_operator.py [--dtype float16|bfloat16|float32] [--set stepKa=3] [--set baseN=16]
"""
import argparse

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.kernel.arch22.conv3d_backprop_input_v2 import decode_tiling_key
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference

# dx (N, Cin, D, H, W) of a 3x3x3 convolution with Cout = 64, stride 1, pads 1: a 3D CNN's middle layer, shrunk
DX, COUT, KERNEL = (1, 32, 4, 16, 16), 64, (3, 3, 3)


def run(dtype: str, overrides: dict | None = None):
    rng = np.random.default_rng(0)
    dt = DTYPES[dtype]
    dy = rng.standard_normal((DX[0], COUT, *DX[2:])).astype(dt)
    weight = rng.standard_normal((COUT, DX[1], *KERNEL)).astype(dt)
    result = conv3d_backprop_input_v2_run(DX, weight, dy, strides=(1, 1, 1, 1, 1), pads=(1, 1, 1, 1, 1, 1),
                                          data_format="NCDHW", tiling_overrides=overrides)
    reference = conv3d_dx_reference(dy, weight, DX, pads=(1, 1, 1, 1, 1, 1))
    error = np.abs(result.result.astype(np.float64) - reference).max() / np.abs(reference).max()
    return result, error


def describe(result) -> str:
    t, key = result.tiling.conv3DDxTiling, result.tiling.tiling_key
    template = "basic-block" if decode_tiling_key(key)[2] else "general"
    return (f"tiling key {key} ({template} template): {result.tiling.params.coreNum} cores, baseM/K/N "
            f"{t.baseM}/{t.baseK}/{t.baseN}, stepKa/Kb {t.stepKa}/{t.stepKb}, L1 ping-pong A/B "
            f"{t.al1Pbuffer}/{t.bl1Pbuffer}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="change a tiling field for the experiment (default: stepKa=3)")
    args = parser.parse_args(argv)
    try:
        changes = {field: int(value) for field, value in (item.split("=", 1) for item in args.set or ["stepKa=3"])}
    except ValueError:
        parser.error(f"--set takes FIELD=INTEGER, got {args.set}")

    base, error = run(args.dtype)
    ok = error < (1e-2 if args.dtype != "float32" else 1e-4)
    print(f"dx of a {KERNEL} convolution, dx {DX}, {args.dtype}: check against the numpy reference "
          f"{'PASSED' if ok else 'FAILED'} (max relative error {error:.2e})")
    print(describe(base))
    print(base.report.summary())

    try:
        tried, tried_error = run(args.dtype, changes)
    except ValueError as err:  # the validator names what does not fit, before any instruction runs
        print(f"\nthe tiling with {changes} is refused before launch: {err}")
        return 0 if ok else 1
    print(f"\nthe same with {changes}: {tried.report.cycles:,.0f} cycles against {base.report.cycles:,.0f} "
          f"({tried.report.cycles / base.report.cycles - 1:+.1%}), bound by {tried.report.bound}, result "
          f"{'unchanged within rounding' if tried_error < 1e-2 else 'WRONG'}")
    return 0 if ok and tried_error < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
