"""Stress sweep: random realistic dx problems through the conv kernel, checked against the numpy reference.

    python benchmarks/sweep_conv3d_dx.py [--seconds 300] [--seed 0] [--timing-only]

Draws problems with channels up to 160 (groups 1, 2, 4), kernels up to 3x5x5, strides up to 2x3x3, dilation up to
2 in H/W, pads up to the kernel size, batch 1-2, all three dtypes, and runs each through Conv3DBackpropInputV2
(route="v2", races checked). With --timing-only no data moves and only faults are looked for. Prints every
failure and a final count.
"""
import argparse
import time

import numpy as np

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference

# |dx - ref| / (|ref| + rms(ref)): one rounding to the output dtype after fp32 accumulation, with margin
TOLERANCE = {"float16": 1.5e-3, "bfloat16": 1e-2, "float32": 2e-5}


def draw(rng):
    """One legal problem: (dtype, groups, x shape, weight shape, strides, pads, dilations)."""
    while True:
        dtype = str(rng.choice(sorted(DTYPES)))
        groups = int(rng.choice([1, 1, 1, 2, 4]))
        cin, cout = (groups * int(rng.integers(1, 160 // groups + 1)) for _ in range(2))
        kernel = [int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 6))]
        strides = [int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        dilations = [1, int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        pads = [int(rng.integers(0, k + 1)) for k in kernel for _ in range(2)]
        sizes = [int(rng.integers(1, 6)), int(rng.integers(4, 40)), int(rng.integers(4, 40))]
        if all(sizes[i] + pads[2 * i] + pads[2 * i + 1] >= (kernel[i] - 1) * dilations[i] + 1 for i in range(3)):
            x = (int(rng.integers(1, 3)), cin, *sizes)
            return dtype, groups, x, (cout, cin // groups, *kernel), strides, pads, dilations


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timing-only", action="store_true")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    cases = failures = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        dtype, groups, x, w_shape, strides, pads, dilations = problem = draw(rng)
        dout = [(x[2 + i] + pads[2 * i] + pads[2 * i + 1] - (w_shape[2 + i] - 1) * dilations[i] - 1) // strides[i] + 1
                for i in range(3)]
        dy = rng.standard_normal((x[0], w_shape[0], *dout)).astype(DTYPES[dtype])
        w = rng.standard_normal(w_shape).astype(DTYPES[dtype])
        cases += 1
        try:
            run = conv3d_backprop_input_v2_run(x, w, dy, strides=(1, 1, *strides), pads=tuple(pads),
                                               dilations=(1, 1, *dilations), groups=groups, data_format="NCDHW",
                                               route="v2", execute=not args.timing_only)
            if not args.timing_only:
                ref = conv3d_dx_reference(dy, w, x, strides, pads, dilations, groups)
                rms = np.sqrt(np.mean(ref ** 2)) or 1.0
                err = float((np.abs(run.result.astype(np.float64) - ref) / (np.abs(ref) + rms)).max())
                if not err <= TOLERANCE[dtype]:
                    failures += 1
                    print(f"WRONG {problem}: error {err:.2e}")
        except Exception as exc:  # a fault or a crash is a failure of the sweep, printed with the problem
            failures += 1
            print(f"FAULT {problem}: {type(exc).__name__}: {exc}")
    print(f"{cases} cases, {failures} failures in {time.perf_counter() - start:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
