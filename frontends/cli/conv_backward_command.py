"""`ascend-sim conv-backward`: aclnnConvolutionBackward (dx, dw, db of a 1D / 2D / 3D convolution, transposed or
not) on the simulated chip, each gradient checked against a numpy reference, with each kernel's report.

The problem flags are every conv command's (--batch --cin --cout --dhw --kernel --stride --pad --dilation --groups
--dtype --platform). The number of values of --dhw (L, H,W or D,H,W) says the dimensionality; --kernel, --stride,
--pad, --dilation and --output-padding take one value (every axis) or one per axis (--pad also four in 2D:
up,down,left,right). The old spellings --size and --padding answer with the new one. --trace writes one trace of
every launch, one after the other.
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

from frontends.cli.flags import (FlagError, Renamed, add_run_arguments, dtype_value, int_in_range, platform_value,
                                 read_integer, refuse_no_records)
from frontends.cli.report import (check_against, check_cli_run, launch_entry, print_json, random_operands,
                                  reference_precision, run_document, seconds_since_start, text_stream,
                                  tiling_fields)

GRADIENTS = ("grad_input", "grad_weight", "grad_bias")
FP16_CUBE_TOLERANCE = 4e-3  # USE_FP16 rounds float32 / bfloat16 operands to float16 and the results too


def _ints(text: str) -> tuple[int, ...]:
    """type= for 1 to 4 comma-separated integers (their count is checked against --dhw in run())."""
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
    add_problem_arguments(parser)
    add_run_arguments(parser, "grad_output, input and weight")
    parser.set_defaults(run=run)
    return parser


def add_problem_arguments(parser) -> None:
    """The problem flags (`ascend-sim tiling conv-backward` takes them too)."""
    p = parser.add_argument_group("problem (NCL / NCHW / NCDHW; weight (Cout, Cin/groups, k...), transposed "
                                  "(Cin, Cout/groups, k...))")
    p.add_argument("--batch", type=int_in_range(1), default=1, help="N (default 1)")
    p.add_argument("--cin", type=int_in_range(1), default=16, help="channels of input (default 16)")
    p.add_argument("--cout", type=int_in_range(1), default=16, help="channels of grad_output (default 16)")
    p.add_argument("--dhw", type=_ints, default=(4, 8, 8), metavar="[D,][H,]W",
                   help="spatial size of input: 1 (L), 2 (H,W) or 3 (D,H,W) values (default 4,8,8)")
    p.add_argument("--kernel", type=_ints, metavar="K,...", help="one value or one per axis (default 3)")
    p.add_argument("--stride", type=_ints, metavar="S,...", help="one value or one per axis (default 1)")
    p.add_argument("--pad", type=_ints, metavar="P,...",
                   help="one value or one per axis, 2D also up,down,left,right (default 1)")
    p.add_argument("--dilation", type=_ints, metavar="D,...", help="one value or one per axis (default 1)")
    p.add_argument("--output-padding", type=_ints, metavar="O,...",
                   help="transposed only: one value or one per axis (default 0)")
    p.add_argument("--size", action=Renamed, new="--dhw", help=argparse.SUPPRESS)
    p.add_argument("--padding", action=Renamed, new="--pad", help=argparse.SUPPRESS)
    p.add_argument("--groups", type=int_in_range(1, _groups_max), default=1, help="default 1")
    p.add_argument("--transposed", action="store_true", help="the gradients of a transposed convolution")
    p.add_argument("--mask", type=_mask, default=(True, True, True), metavar="I,W,B",
                   help="output_mask: grad_input,grad_weight,grad_bias as 0/1 (default 1,1,1)")
    p.add_argument("--cube-math-type", type=_cube_math_type, default=0, metavar="{0,1,2,3}",
                   help="0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32 (default 0)")
    p.add_argument("--dtype", default="float16", type=dtype_value, help=dtype_value.help)
    p.add_argument("--platform", type=platform_value, default="Ascend910B2", help="an A2/A3 preset or JSON file")


def _cube_math_type(text: str) -> int:
    """type= for --cube-math-type: a key of CUBE_MATH_TYPES."""
    from kernels.convolution_backward.arguments import CUBE_MATH_TYPES
    value = read_integer(text, text)
    if value not in CUBE_MATH_TYPES:
        raise argparse.ArgumentTypeError(f"{value} is not a cube math type; choose from "
                                         f"{', '.join(f'{k} {v}' for k, v in CUBE_MATH_TYPES.items())}")
    return value


def _groups_max() -> int:
    from kernels.convolution_backward.arguments import GROUPS_MAX
    return GROUPS_MAX


def _per_axis(args, name: str, default: int, spatial: int, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """The flag's values per axis: the default, one value for every axis, or as many as `lengths` allows."""
    value = getattr(args, name)
    if value is None:
        return (default,) * spatial
    if len(value) == 1:
        return value * spatial
    if len(value) not in lengths:
        expected = " or ".join(map(str, (1, *lengths)))
        raise FlagError(f"argument --{name.replace('_', '-')}: {','.join(map(str, value))} has {len(value)} values; "
                        f"--dhw has {spatial}, so {expected} are expected")
    return value


def _shapes(args, kernel, stride, pairs, dilation, output_padding):
    """(grad_output, input, weight) shapes of the problem the flags describe."""
    x = (args.batch, args.cin, *args.dhw)
    if args.transposed:
        weight = (args.cin, args.cout // args.groups, *kernel)
        out = tuple((s - 1) * st - b - a + (k - 1) * d + 1 + o for s, st, (b, a), k, d, o in
                    zip(args.dhw, stride, pairs, kernel, dilation, output_padding))
    else:
        weight = (args.cout, args.cin // args.groups, *kernel)
        out = tuple((s + b + a - (k - 1) * d - 1) // st + 1 for s, st, (b, a), k, d in
                    zip(args.dhw, stride, pairs, kernel, dilation))
    if min(out) < 1:
        raise FlagError(f"argument --dhw: {','.join(map(str, args.dhw))} gives an output size {out} with these "
                        "kernel, stride, padding and dilation flags")
    return (args.batch, args.cout, *out), x, weight


def _problem(args: argparse.Namespace):
    """(kernel, stride, padding, dilation, output_padding, pad pairs) per axis and the (grad_output, input, weight)
    shapes the flags describe."""
    spatial = len(args.dhw)
    if spatial > 3:
        raise FlagError(f"argument --dhw: {','.join(map(str, args.dhw))} has 4 values; 1 (L), 2 (H,W) or 3 (D,H,W)")
    kernel = _per_axis(args, "kernel", 3, spatial, (spatial,))
    stride = _per_axis(args, "stride", 1, spatial, (spatial,))
    padding = _per_axis(args, "pad", 1, spatial, (spatial, 4) if spatial == 2 else (spatial,))
    dilation = _per_axis(args, "dilation", 1, spatial, (spatial,))
    output_padding = _per_axis(args, "output_padding", 0, spatial, (spatial,))
    if args.cin % args.groups or args.cout % args.groups:
        raise FlagError(f"argument --groups: {args.groups} must divide both --cin {args.cin} and --cout {args.cout}")
    pairs = (((padding[0], padding[1]), (padding[2], padding[3])) if len(padding) == 4
             else tuple((v, v) for v in padding))
    return (kernel, stride, padding, dilation, output_padding, pairs), _shapes(args, kernel, stride, pairs, dilation,
                                                                                output_padding)


def _simulate(args: argparse.Namespace, *, seed: int, execute: bool, trace=None, check_races: bool = True,
              engine: str = "auto", hooks: dict | None = None, max_memory: int | None = None):
    """The operands (random, from the seed; size-only stand-ins when not executing) and the operator's run of the
    flags' problem, with the progress bar of a long run."""
    from ascend_sim.machine.dtypes import DTYPES
    from frontends.cli.progress import LaunchProgress
    from kernels.convolution_backward.operator import (CONV_BACKWARD_REMEDIES, estimate_convolution_backward,
                                                       plan_convolution_backward, run_plan)
    (kernel, stride, padding, dilation, output_padding, pairs), shapes = _problem(args)
    bias = [shapes[2][1] * args.groups if args.transposed else shapes[2][0]]
    # planned on size-only stand-ins, then the size guard with the CLI's own operands and check, before they are drawn
    plan = plan_convolution_backward(*random_operands(seed, DTYPES[args.dtype], True, *shapes), bias, stride, padding,
                                     dilation, args.transposed, output_padding, args.groups, args.mask,
                                     args.cube_math_type, platform=args.platform)
    outputs = sum(math.prod(shape) for shape, on in zip(shapes[1:], args.mask) if on) + args.mask[2] * bias[0]
    check_cli_run(estimate_convolution_backward(plan, execute=execute, check_races=check_races),
                  sum(math.prod(shape) for shape in shapes), outputs, args.dtype, timing_only=not execute,
                  max_memory=max_memory, remedies=CONV_BACKWARD_REMEDIES)
    go, x, w = random_operands(seed, DTYPES[args.dtype], not execute, *shapes)
    with LaunchProgress():
        result = run_plan(plan, go, x, w, execute=execute, trace=trace, check_races=check_races, engine=engine,
                          hooks=hooks, max_memory=max_memory)
    return (go, x, w), result


def add_debug_arguments(parser) -> None:
    """`ascend-sim debug conv-backward`: which launch the debugger replays."""
    parser.add_argument("--launch", choices=GRADIENTS, metavar="{" + ",".join(GRADIENTS) + "}",
                        help="the launch to debug (default: the first gradient --mask computes, in this order)")


@dataclass
class ConvBackwardDebugRun:
    """What `simulate` ran for the debugger: its headline."""

    headline: str


def simulate(args: argparse.Namespace, hooks: list | None = None) -> ConvBackwardDebugRun:
    """Run the flags' problem with `hooks` on one launch (--launch; `ascend-sim debug conv-backward` passes a
    Capture): the debugger replays that kernel."""
    refuse_no_records(args)
    computed = [name for name, on in zip(GRADIENTS, args.mask) if on]
    launch = args.launch or computed[0]
    if launch not in computed:
        raise FlagError(f"argument --launch: {launch} is not computed with --mask "
                        f"{','.join(str(int(m)) for m in args.mask)}; choose from {', '.join(computed)}")
    _, result = _simulate(args, seed=args.seed, execute=not args.timing_only, trace=args.trace,
                          check_races=not args.no_race_check, engine=args.engine, hooks={launch: list(hooks or [])},
                          max_memory=args.max_memory)
    kernel = next(item.kernel for item in result.launches if item.gradient == launch)
    (_, stride, padding, dilation, _, _), (go_shape, x_shape, w_shape) = _problem(args)
    return ConvBackwardDebugRun(
        f"aclnnConvolutionBackward {args.dtype}: grad_output {go_shape}, input {x_shape}, weight {w_shape}, stride "
        f"{stride}, padding {padding}, dilation {dilation}, groups {args.groups}; the {launch} launch: {kernel} "
        f"(its GM allocations by their kernel names: `print gm NAME`, `who-wrote NAME BYTE`)")


def tilings(args: argparse.Namespace) -> tuple[list, list, list]:
    """`ascend-sim tiling conv-backward`: [(gradient, kernel, tiling)] of each launch, the routing notes, broken
    rules (none). The tilings are those a timing-only run launches (the aggregate plans each kernel as it goes)."""
    _, result = _simulate(args, seed=0, execute=False, check_races=False, engine="fast")
    return [(launch.gradient, launch.kernel, launch.tiling) for launch in result.launches], list(result.route.notes), []


def run(args: argparse.Namespace) -> int:
    from ascend_sim.machine.blas import blas_threads
    from kernels.convolution_backward.arguments import CUBE_MATH_TYPES
    from kernels.convolution_backward.reference import convolution_backward_reference
    refuse_no_records(args)
    say = text_stream(args.json)
    (kernel, stride, padding, dilation, output_padding, pairs), (go_shape, x_shape, w_shape) = _problem(args)
    wall = time.perf_counter()
    (go, x, w), result = _simulate(args, seed=args.seed, execute=not args.timing_only, trace=args.trace,
                                   check_races=not args.no_race_check, engine=args.engine,
                                   max_memory=args.max_memory)
    wall = time.perf_counter() - wall
    layout = {1: "NCL", 2: "NCHW", 3: "NCDHW"}[len(args.dhw)]
    print(f"aclnnConvolutionBackward {args.dtype} ({layout}{', transposed' if args.transposed else ''}): "
          f"grad_output {go_shape}, input {x_shape}, weight {w_shape}, stride {stride}, padding {padding}, dilation "
          f"{dilation}, groups {args.groups}, output_mask {tuple(int(m) for m in args.mask)}, cube_math_type "
          f"{args.cube_math_type} ({CUBE_MATH_TYPES[args.cube_math_type]})", file=say)
    for note in result.route.notes:
        print(f"  {note}", file=say)
    checks, check_seconds = {}, 0.0
    if not args.timing_only:
        check_seconds = time.perf_counter()
        with blas_threads(1):  # as the other checks (reference_alongside.py): OpenBLAS's threads only cost CPU here
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
    if args.trace:
        print(f"trace of the {len(result.launches)} launches written to {args.trace} (open in https://ui.perfetto.dev)",
              file=say)
    platform_name = result.args.platform.name
    print(f"total: {len(result.launches)} kernels, {result.cycles:,.0f} cycles = {result.microseconds:.2f} us on "
          f"{platform_name}; simulated in {wall:.2f} s; reference check {check_seconds:.2f} s; "
          f"{seconds_since_start():.2f} s since start", file=say)
    if args.json:
        print_json(run_document("conv-backward", checks, [
            launch_entry(launch.gradient, launch.kernel, launch.tiling, launch.report, launch.trace_path)
            for launch in result.launches], result.notes, wall))
    return 0 if all(c.passed for c in checks.values()) else 1


def _tiling_line(tiling) -> str:
    """The tiling's scalar fields on one line (nested groups shown by their scalar fields too)."""
    def scalars(d: dict):
        for key, value in d.items():
            if isinstance(value, dict):
                yield from scalars(value)
            elif not isinstance(value, (list, tuple)):
                yield f"{key} {value}"
    fields = list(scalars(tiling_fields(tiling)))
    return ", ".join(fields[:14]) + (", ..." if len(fields) > 14 else "")
