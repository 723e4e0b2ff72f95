"""`ascend-sim conv-backward`: aclnnConvolutionBackward (dx, dw, db of a 1D / 2D / 3D convolution, transposed or
not) on the simulated chip, each gradient checked against a numpy reference, with each kernel's report.

The number of values of --size (L, H,W or D,H,W) says the dimensionality; --kernel, --stride, --dilation and
--output-padding take as many (--padding as many, or four in 2D: up,down,left,right).
"""
from __future__ import annotations

import argparse
import dataclasses
import time


from ascend_sim.dtypes import DTYPES

from kernels.convolution_backward.arguments import CUBE_MATH_TYPES, GROUPS_MAX
from kernels.convolution_backward.operator import convolution_backward_run
from kernels.convolution_backward.reference import convolution_backward_reference
from kernels.cli.flags import FlagError, add_run_arguments, int_in_range, platform_value, read_integer, refuse_no_records
from kernels.cli.progress import LaunchProgress
from kernels.cli.report import check_against, print_json, random_operands, reference_precision, text_stream

GRADIENTS = ("grad_input", "grad_weight", "grad_bias")
FP16_CUBE_TOLERANCE = 4e-3  # USE_FP16 rounds float32 / bfloat16 operands to float16 and the results too


def _ints(text: str) -> tuple[int, ...]:
    """type= for 1 to 4 comma-separated integers (their count is checked against --size in run())."""
    parts = text.replace("x", ",").split(",")
    if not 1 <= len(parts) <= 4:
        raise argparse.ArgumentTypeError(f"{text!r} has {len(parts)} values; expected 1 to 4 comma-separated "
                                         "integers")
    return tuple(read_integer(part, text) for part in parts)


def _mask(text: str) -> tuple[bool, bool, bool]:
    parts = text.split(",")
    if len(parts) != 3 or any(p.strip() not in ("0", "1") for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r} must be three 0/1 values: grad_input,grad_weight,grad_bias")
    return tuple(p.strip() == "1" for p in parts)


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "conv-backward", help="run aclnnConvolutionBackward (dx, dw, db; 1D/2D/3D) on the simulated chip",
        description="Run aclnnConvolutionBackward's kernels (grad_input, grad_weight, grad_bias of a 1D, 2D or "
                    "3D convolution, transposed or not) on the simulated A2 chip, check each gradient against a "
                    "numpy reference, and report each kernel.")
    p = parser.add_argument_group("problem (NCL / NCHW / NCDHW; weight (Cout, Cin/groups, k...), transposed "
                                  "(Cin, Cout/groups, k...))")
    p.add_argument("--batch", type=int_in_range(1), default=1, help="N (default 1)")
    p.add_argument("--cin", type=int_in_range(1), default=16, help="channels of input (default 16)")
    p.add_argument("--cout", type=int_in_range(1), default=16, help="channels of grad_output (default 16)")
    p.add_argument("--size", type=_ints, default=(4, 8, 8), metavar="[D,][H,]W",
                   help="spatial size of input: 1, 2 or 3 values (default 4,8,8)")
    p.add_argument("--kernel", type=_ints, metavar="K,...", help="default 3 per axis")
    p.add_argument("--stride", type=_ints, metavar="S,...", help="default 1 per axis")
    p.add_argument("--padding", type=_ints, metavar="P,...", help="default 1 per axis (2D: also up,down,left,right)")
    p.add_argument("--dilation", type=_ints, metavar="D,...", help="default 1 per axis")
    p.add_argument("--output-padding", type=_ints, metavar="O,...", help="transposed only (default 0 per axis)")
    p.add_argument("--groups", type=int_in_range(1, GROUPS_MAX), default=1, help="default 1")
    p.add_argument("--transposed", action="store_true", help="the gradients of a transposed convolution")
    p.add_argument("--mask", type=_mask, default=(True, True, True), metavar="I,W,B",
                   help="output_mask: grad_input,grad_weight,grad_bias as 0/1 (default 1,1,1)")
    p.add_argument("--cube-math-type", type=int, choices=sorted(CUBE_MATH_TYPES), default=0,
                   help="0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32 (default 0)")
    p.add_argument("--dtype", default="float16", choices=sorted(DTYPES), help="default float16")
    p.add_argument("--platform", type=platform_value, default="Ascend910B2", help="an A2/A3 preset or JSON file")
    add_run_arguments(parser, "grad_output, input and weight")
    parser.set_defaults(run=run)
    return parser


def _per_axis(args, name: str, default: int, spatial: int, lengths: tuple[int, ...]) -> tuple[int, ...]:
    value = getattr(args, name)
    if value is None:
        return (default,) * spatial
    if len(value) not in lengths:
        raise FlagError(f"argument --{name.replace('_', '-')}: {','.join(map(str, value))} has {len(value)} values; "
                        f"--size has {spatial}, so {' or '.join(map(str, lengths))} are expected")
    return value


def _shapes(args, kernel, stride, pairs, dilation, output_padding):
    """(grad_output, input, weight) shapes of the problem the flags describe."""
    x = (args.batch, args.cin, *args.size)
    if args.transposed:
        weight = (args.cin, args.cout // args.groups, *kernel)
        out = tuple((s - 1) * st - b - a + (k - 1) * d + 1 + o for s, st, (b, a), k, d, o in
                    zip(args.size, stride, pairs, kernel, dilation, output_padding))
    else:
        weight = (args.cout, args.cin // args.groups, *kernel)
        out = tuple((s + b + a - (k - 1) * d - 1) // st + 1 for s, st, (b, a), k, d in
                    zip(args.size, stride, pairs, kernel, dilation))
    if min(out) < 1:
        raise FlagError(f"argument --size: {','.join(map(str, args.size))} gives an output size {out} with these "
                        "kernel, stride, padding and dilation flags")
    return (args.batch, args.cout, *out), x, weight


def run(args: argparse.Namespace) -> int:
    refuse_no_records(args)
    say = text_stream(args.json)
    spatial = len(args.size)
    if spatial > 3:
        raise FlagError(f"argument --size: {','.join(map(str, args.size))} has 4 values; 1 (L), 2 (H,W) or 3 (D,H,W)")
    kernel = _per_axis(args, "kernel", 3, spatial, (spatial,))
    stride = _per_axis(args, "stride", 1, spatial, (spatial,))
    padding = _per_axis(args, "padding", 1, spatial, (spatial, 4) if spatial == 2 else (spatial,))
    dilation = _per_axis(args, "dilation", 1, spatial, (spatial,))
    output_padding = _per_axis(args, "output_padding", 0, spatial, (spatial,))
    if args.cin % args.groups or args.cout % args.groups:
        raise FlagError(f"argument --groups: {args.groups} must divide both --cin {args.cin} and --cout {args.cout}")
    pairs = (((padding[0], padding[1]), (padding[2], padding[3])) if len(padding) == 4
             else tuple((v, v) for v in padding))
    go_shape, x_shape, w_shape = _shapes(args, kernel, stride, pairs, dilation, output_padding)
    dtype = DTYPES[args.dtype]
    go, x, w = random_operands(args.seed, dtype, args.timing_only, go_shape, x_shape, w_shape)
    bias = [w_shape[1] * args.groups if args.transposed else w_shape[0]]
    wall = time.perf_counter()
    with LaunchProgress():
        result = convolution_backward_run(go, x, w, bias, stride, padding, dilation, args.transposed,
                                          output_padding, args.groups, args.mask, args.cube_math_type,
                                          platform=args.platform, execute=not args.timing_only, trace=args.trace,
                                          check_races=not args.no_race_check, engine=args.engine,
                                          max_memory=args.max_memory)
    wall = time.perf_counter() - wall
    layout = {1: "NCL", 2: "NCHW", 3: "NCDHW"}[spatial]
    print(f"aclnnConvolutionBackward {args.dtype} ({layout}{', transposed' if args.transposed else ''}): "
          f"grad_output {go_shape}, input {x_shape}, weight {w_shape}, stride {stride}, padding {padding}, dilation "
          f"{dilation}, groups {args.groups}, output_mask {tuple(int(m) for m in args.mask)}, cube_math_type "
          f"{args.cube_math_type} ({CUBE_MATH_TYPES[args.cube_math_type]})", file=say)
    for note in result.route.notes:
        print(f"  {note}", file=say)
    checks, check_seconds = {}, 0.0
    if not args.timing_only:
        check_seconds = time.perf_counter()
        refs = convolution_backward_reference(go, x, w, stride, pairs, dilation, args.transposed, args.groups,
                                              args.mask, precision=reference_precision(args.dtype))
        math = result.route.math
        tolerance = FP16_CUBE_TOLERANCE if math.dtype != args.dtype else None
        for name, got, ref in zip(GRADIENTS, (result.grad_input, result.grad_weight, result.grad_bias), refs):
            if ref is not None:
                # grad_bias is summed in grad_output's own dtype: cube_math_type does not touch it
                checks[name] = check_against(got, ref, args.dtype, math.hf32,
                                             None if name == "grad_bias" else tolerance)
        check_seconds = time.perf_counter() - check_seconds
    for launch in result.launches:
        print(f"{launch.gradient}: {launch.kernel}", file=say)
        print(f"  tiling: {_tiling_line(launch.tiling)}", file=say)
        if launch.gradient in checks:
            print("  " + checks[launch.gradient].line(launch.gradient), file=say)
        print("  " + launch.report.summary().replace("\n", "\n  "), file=say)
        if launch.trace_path:
            print(f"  trace written to {launch.trace_path} (open in https://ui.perfetto.dev)", file=say)
    platform_name = result.args.platform.name
    print(f"total: {len(result.launches)} kernels, {result.cycles:,.0f} cycles = {result.microseconds:.2f} us on "
          f"{platform_name}; simulated in {wall:.2f} s; reference check {check_seconds:.2f} s", file=say)
    if args.json:
        print_json({"check_passed": all(c.passed for c in checks.values()) if checks else None,
                    "checks": {name: c.to_dict() for name, c in checks.items()}, "notes": result.notes,
                    "launches": [{"gradient": launch.gradient, "kernel": launch.kernel,
                                  "tiling": _tiling_dict(launch.tiling), "report": launch.report.to_dict(),
                                  "trace": launch.trace_path} for launch in result.launches],
                    "cycles": result.cycles, "microseconds": result.microseconds})
    return 0 if all(c.passed for c in checks.values()) else 1


def _tiling_dict(tiling) -> dict:
    if hasattr(tiling, "model_dump"):
        return tiling.model_dump(mode="json")
    return dataclasses.asdict(tiling)


def _tiling_line(tiling) -> str:
    """The tiling's scalar fields on one line (nested groups shown by their scalar fields too)."""
    def scalars(d: dict):
        for key, value in d.items():
            if isinstance(value, dict):
                yield from scalars(value)
            elif not isinstance(value, (list, tuple)):
                yield f"{key} {value}"
    fields = list(scalars(_tiling_dict(tiling)))
    return ", ".join(fields[:14]) + (", ..." if len(fields) > 14 else "")
