"""The calibration's effect on the dx / dw layers: simulated cycles on the pre-calibration constants and now.

    python benchmarks/calibration_effect.py [--operator dx|dw] [--only NAME ...]

Each layer of bench_conv3d_dx.py (and, for dx, the default problem of `ascend-sim conv3d-dx`) runs once as dx
(Conv3DBackpropInputV2) or dw (Conv3DBackpropFilterV2), fp16 NCDHW, timing-only, on the Ascend910B2 preset; the
same records are then retimed on the preset with the constants it had before the calibration (PRE_CALIBRATION),
so the two columns differ only by the constants. docs/timing.md has the figures.
"""
from __future__ import annotations

import argparse

import numpy as np
from bench_conv3d_dx import LAYERS, Layer, dy_shape

from ascend_sim.machine.platform import get_platform
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run

# The preset's values before the calibration (commits 9289b34 and 905b8c9): first guesses, the INI's GM read
# rate, GM writes (MTE3) at mte2_overhead, and the published vector table.
PRE_CALIBRATION = {"gm_to_l1": 110.0, "mte2_overhead": 40, "mte3_overhead": 40, "mmad_overhead": 8,
                   "fixpipe_overhead": 30}
PRE_CALIBRATION_VECTOR = "published"
DEFAULT_PROBLEM = Layer("conv3d-dx default", (1, 64, 8, 56, 56), 64, (3, 3, 3), pads=(1, 1, 1, 1, 1, 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operator", choices=("dx", "dw"), default="dx")
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    args = parser.parse_args(argv)
    preset = get_platform("Ascend910B2")
    before = preset.with_overrides(rates=PRE_CALIBRATION, vector_timing=PRE_CALIBRATION_VECTOR,
                                   name="Ascend910B2 pre-calibration")
    print(f"{'layer':<24} {'before':>10} {'after':>10} {'after/before':>12} {'bound before':>12} {'bound after':>11}")
    for layer in [DEFAULT_PROBLEM, *LAYERS] if args.operator == "dx" else LAYERS:
        if args.only and not any(word.lower() in layer.name.lower() for word in args.only):
            continue
        dy = np.zeros(dy_shape(layer), np.float16)  # timing-only: the values are never read
        w_shape = (layer.cout, layer.x[1] // layer.groups, *layer.kernel)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW",
                      execute=False, check_races=False, engine="fast")
        if args.operator == "dx":
            run = conv3d_backprop_input_v2_run(layer.x, np.zeros(w_shape, np.float16), dy, **common)
        else:
            run = conv3d_backprop_filter_v2_run(np.zeros(layer.x, np.float16), w_shape, dy, **common)
        after, old = run.report, run.report.retime(before, engine="fast")
        print(f"{layer.name:<24} {old.cycles:>10,.0f} {after.cycles:>10,.0f} {after.cycles / old.cycles:>12.2f} "
              f"{old.bound:>12} {after.bound:>11}")


if __name__ == "__main__":
    main()
