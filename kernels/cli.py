"""`ascend-sim`: the command line.

    ascend-sim conv3d-dx [shape/dtype/platform flags] [--trace PATH]   run Conv3DBackpropInputV2 and check it
    ascend-sim tiling --dy ... --filter ... --dx ...                    print a tiling
    ascend-sim matmul [--m --n --k]                                     the example tiled matmul
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from ascend_sim.dtypes import DTYPES

# Tolerance of |dx - ref| / (|ref| + rms(ref)): one rounding to the output dtype after fp32 accumulation
# (half an ulp: 2^-11 fp16, 2^-8 bf16), with margin; HF32 rounds the fp32 operands to 11 mantissa bits.
_RTOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5, "hf32": 2e-3}


def _ints(text: str, count: int, name: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.replace("x", ",").split(","))
    if len(values) != count:
        raise argparse.ArgumentTypeError(f"--{name} takes {count} comma-separated integers, got {text!r}")
    return values


def _conv_parser(sub) -> None:
    p = sub.add_parser("conv3d-dx", help="run Conv3DBackpropInputV2 on the simulated chip and check it",
                       description="Run Conv3DBackpropInputV2 (dx of a 3D convolution) instruction by instruction "
                                   "on the simulated chip, check it against a numpy reference, and report cycles.")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--cin", type=int, default=64, help="channels of x (and dx)")
    p.add_argument("--cout", type=int, default=64, help="channels of y (and dy)")
    p.add_argument("--dhw", default="8,56,56", help="D,H,W of x (default 8,56,56)")
    p.add_argument("--kernel", default="3,3,3", help="kD,kH,kW (default 3,3,3)")
    p.add_argument("--stride", default="1,1,1", help="D,H,W")
    p.add_argument("--pad", default="1,1,1,1,1,1", help="front,back,top,bottom,left,right")
    p.add_argument("--dilation", default="1,1,1", help="D,H,W")
    p.add_argument("--groups", type=int, default=1)
    p.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    p.add_argument("--hf32", action="store_true", help="round fp32 operands to HF32 (float32 only)")
    p.add_argument("--platform", default="Ascend910B2", help="preset name or a platform JSON file")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override a tiling field (e.g. --set baseM=128 --set al1Pbuffer=1)")
    p.add_argument("--route", default="aclnn", choices=["aclnn", "v2"],
                   help="aclnn (default): the shapes aclnn computes with a matmul run the matmul kernel; "
                        "v2: always the Conv3DBackpropInputV2 kernel")
    p.add_argument("--timing-only", action="store_true", help="no data: same cycles, faster, no check")
    p.add_argument("--trace", help="write a Chrome/Perfetto trace (open in https://ui.perfetto.dev)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_run_conv)


def _platform(text: str):
    from ascend_sim import Platform
    return Platform.from_json(text) if text.endswith(".json") else text


class _Progress:
    """Prints which core is running, for long runs (stderr, only when it is a terminal or asked)."""

    def __init__(self, cores: int, stream):
        self.cores, self.stream, self.current, self.start = cores, stream, -1, time.perf_counter()

    def __call__(self, core, instr) -> None:
        if core.index != self.current:
            self.current = core.index
            self.stream.write(f"\r  simulating core {core.index + 1} of at most {self.cores} "
                              f"({time.perf_counter() - self.start:.1f} s)")
            self.stream.flush()

    def done(self) -> None:
        if self.current >= 0:
            self.stream.write("\r" + " " * 60 + "\r")


def _run_conv(args) -> int:
    from kernels import conv3d_backprop_input_v2_run
    from kernels.reference import conv3d_dx_reference
    from ascend_sim import get_platform

    d, h, w = _ints(args.dhw, 3, "dhw")
    kd, kh, kw = _ints(args.kernel, 3, "kernel")
    strides, dilations = _ints(args.stride, 3, "stride"), _ints(args.dilation, 3, "dilation")
    pads = _ints(args.pad, 6, "pad")
    dx_shape = (args.batch, args.cin, d, h, w)
    out = [(size + pads[2 * i] + pads[2 * i + 1] - dil * (k - 1) - 1) // s + 1
           for i, (size, k, s, dil) in enumerate(zip((d, h, w), (kd, kh, kw), strides, dilations))]
    if min(out) < 1:
        print(f"error: the kernel does not fit the padded input: dy would be {out}", file=sys.stderr)
        return 2
    dtype = DTYPES[args.dtype]
    rng = np.random.default_rng(args.seed)
    if args.cin % args.groups or args.cout % args.groups:
        print(f"error: groups={args.groups} must divide cin={args.cin} and cout={args.cout}", file=sys.stderr)
        return 2
    dy = rng.standard_normal((args.batch, args.cout, *out)).astype(dtype)
    weight = rng.standard_normal((args.cout, args.cin // args.groups, kd, kh, kw)).astype(dtype)
    overrides = {}
    for item in args.set:
        field, _, value = item.partition("=")
        overrides[field.strip()] = int(value)
    platform = _platform(args.platform)
    progress = _Progress(0, sys.stderr) if sys.stderr.isatty() else None
    if progress is not None:
        progress.cores = get_platform(platform).aic_cores
    wall = time.perf_counter()
    run = conv3d_backprop_input_v2_run(
        dx_shape, weight, dy, strides=(1, 1, *strides), pads=pads, dilations=(1, 1, *dilations),
        groups=args.groups, data_format="NCDHW", filter_format="NCDHW", platform=platform,
        enable_hf32=args.hf32, execute=not args.timing_only, trace=args.trace, tiling_overrides=overrides or None,
        hooks=[progress] if progress else None, route=args.route)
    wall = time.perf_counter() - wall
    if progress:
        progress.done()
    report = run.report
    ok = True
    print(f"Conv3DBackpropInputV2 {args.dtype}: dy {tuple(dy.shape)} * w {tuple(weight.shape)} -> dx {dx_shape} "
          f"(NCDHW), stride {strides}, pad {pads}, dilation {dilations}, groups {args.groups}")
    if run.route == "v2":
        t = run.tiling.conv3DDxTiling
        print(f"tiling key {run.tiling.tiling_key} ({run.tiling.template}): coreNum {run.tiling.params.coreNum}, "
              f"baseM/K/N {t.baseM}/{t.baseK}/{t.baseN}, stepKa/Kb {t.stepKa}/{t.stepKb}, al1/bl1 "
              f"{t.al1Pbuffer}/{t.bl1Pbuffer}, singleCoreM {t.singleCoreM}, initOutputFlag {t.initOutputFlag}")
    else:
        t = run.tiling
        print(f"routed like aclnn to the matmul kernel ({run.matmul_mode}): M/N/K {t.M}/{t.N}/{t.K}, batch "
              f"{t.batch}, baseM/N/K {t.baseM}/{t.baseN}/{t.baseK}, stepK {t.stepK}")
    for note in run.notes:
        print(f"note: {note}")
    if not args.timing_only:
        expect = conv3d_dx_reference(dy.astype(np.float64), weight.astype(np.float64), dx_shape, strides, pads,
                                     dilations, args.groups)
        got = run.result.astype(np.float64)
        rms = np.sqrt(np.mean(expect ** 2)) or 1.0
        err = float((np.abs(got - expect) / (np.abs(expect) + rms)).max())
        tol = _RTOL["hf32" if args.hf32 and args.dtype == "float32" else args.dtype]
        ok = bool(np.isfinite(got).all() and err <= tol)
        print(f"check against the numpy reference: {'PASSED' if ok else 'FAILED'} "
              f"(max |dx - ref| / (|ref| + rms) = {err:.2e}, tolerance {tol:.0e})")
    print(report.summary())
    print(f"simulated in {wall:.2f} s ({report.instructions / wall:,.0f} instructions/s)")
    if args.trace:
        print(f"trace written to {args.trace} (open in https://ui.perfetto.dev)")
    if args.json:
        tiling = json.loads(run.tiling.model_dump_json()) if run.route == "v2" else vars(run.tiling)
        print(json.dumps({"check_passed": ok, "route": run.route, "tiling": tiling, "report": report.to_dict()},
                         indent=1, default=str))
    return 0 if ok else 1


def _run_matmul(args) -> int:
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "01_matmul_cube.py"
    if not script.exists():
        print("the matmul example ships with the source tree (examples/01_matmul_cube.py)", file=sys.stderr)
        return 2
    sys.argv = [str(script), *args.rest]  # the example parses its own flags
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ascend-sim", description="A simulated Ascend AI Core (cube side).")
    sub = parser.add_subparsers(dest="command", required=True)
    _conv_parser(sub)
    from tiling.cli import add_subcommand
    add_subcommand(sub)
    mm = sub.add_parser("matmul", help="the example multi-core tiled fp16 matmul (examples/01_matmul_cube.py)")
    mm.set_defaults(func=_run_matmul)
    args, rest = parser.parse_known_args(argv)
    if args.command != "matmul" and rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return args.func(args)
    except (ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
