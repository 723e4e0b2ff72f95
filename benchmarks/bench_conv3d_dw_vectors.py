"""Benchmark: the dw kernel (Conv3DBackpropFilterV2) on real tiling vectors at their real shape.

    python benchmarks/bench_conv3d_dw_vectors.py [--vectors 26_b16 conv3d_dw_v2_dilation ...] [--repeat 1]
Each vector's 280-byte blob from tests/data/conv3d_dw_tiling_vectors_a2.json is decoded and launched unchanged
(on its SoC with the vector's core count), full data run and timing-only run, random data. Prints the
instructions simulated, the wall times (best of --repeat), instructions per second, the simulated cycles and
microseconds and the bounding pipe.
"""
import argparse
import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np
from timing import best_of

from ascend_sim.machine.platform import get_platform
from kernels.conv3d_backprop_filter import conv3d_backprop_filter_v2_run
from tiling.conv3d_backprop_filter import Conv3DBackpropFilterV2TilingData

VECTORS = Path(__file__).resolve().parent.parent / "tests" / "data" / "conv3d_dw_tiling_vectors_a2.json"
DEFAULT = ["26_b16", "conv3d_dw_v2_dilation", "stdit_01_bf16_deterministic_streamk", "stdit_01_fp32"]


def _tiling(v) -> Conv3DBackpropFilterV2TilingData:
    blob = struct.pack(f"<{len(v['tiling_words_int32'])}i", *v["tiling_words_int32"])
    platform = get_platform(v["soc"]).with_overrides(aic_cores=v["core_num"], aiv_cores=2 * v["core_num"])
    return Conv3DBackpropFilterV2TilingData.from_bytes(blob, tiling_key=v["tiling_key"], dtype=v["dtype"],
                                                       platform=platform)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", nargs="+", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    by_name = {v["name"]: v for v in json.loads(VECTORS.read_text())["vectors"]}
    print(f"{'vector':38s} {'key':>3} {'cores':>5} {'instr':>7} {'full s':>7} {'timing s':>8} {'instr/s full':>12} "
          f"{'cycles':>8} {'us':>7} bound")
    for name in args.vectors:
        v = by_name[name]
        t = _tiling(v)
        dtype = np.dtype(ml_dtypes.bfloat16) if v["dtype"] == "bfloat16" else np.dtype(v["dtype"])
        rng = np.random.default_rng(0)
        x = rng.standard_normal(v["fmap_shape"]["ori"]).astype(dtype)
        dy = rng.standard_normal(v["dy_shape"]["ori"]).astype(dtype)
        kwargs = {"strides": (1, 1, *v["strides_DHW"]), "pads": v["pads"], "dilations": (1, 1, *v["dilations_DHW"]),
                      "data_format": "NCDHW", "tiling": t, "platform": t.platform}
        shape = tuple(v["filter_shape"]["ori"])
        def once(execute, x=x, shape=shape, dy=dy, kwargs=kwargs):
            return conv3d_backprop_filter_v2_run(x, shape, dy, execute=execute, **kwargs)

        full, run = best_of(args.repeat, lambda: once(True))
        timing, _ = best_of(args.repeat, lambda: once(False))
        report = run.report
        print(f"{name:38s} {t.tiling_key:>3} {t.block_dim:>5} {report.instructions:>7} {full:>7.2f} {timing:>8.2f} "
              f"{report.instructions / full:>12,.0f} {report.cycles:>8.0f} {report.microseconds:>7.2f} {report.bound}")


if __name__ == "__main__":
    main()
