"""`ascend-sim conv3d-dw`: run Conv3DBackpropFilterV2 (dw) on the simulated chip, check it, report cycles.

The problem flags are conv3d-dx's (x is the NCDHW input of the convolution); --set overrides fields of the dw
tiling (params, dwTiling, basicBlockTiling, tiling_key) by their real names.
"""
from __future__ import annotations

import argparse
import json
import time


from ascend_sim.dtypes import DTYPES
from tiling import TilingValidationError
from tiling.conv3d_backprop_filter.model import BASIC_BLOCK_FIELDS, PARAMS_FIELDS, TILING_FIELDS

from kernels.conv3d_backprop_filter.operator import conv3d_backprop_filter_v2_run
from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
from kernels.cli.conv_problem import add_conv_problem_arguments, conv_problem, field_override
from kernels.cli.flags import FlagError, add_run_arguments, check_run_flags
from kernels.cli.progress import LaunchProgress
from kernels.cli.report import (check_fields, print_json, print_summary, random_operands, reference_precision,
                     text_stream, timed_check)

_C_RANGES = {"u32": (0, 2**32 - 1), "u64": (0, 2**64 - 1)}
DW_FIELD_RANGES = {name: _C_RANGES[ctype] for name, ctype in (*PARAMS_FIELDS, *TILING_FIELDS, *BASIC_BLOCK_FIELDS)}
DW_FIELD_RANGES["tiling_key"] = (0, 4)


dw_tiling_override = field_override(DW_FIELD_RANGES, "dw tiling field", "docs/conv3d_backprop_filter_tiling.md")


def add_command(commands) -> argparse.ArgumentParser:
    # conflict_handler="resolve": the --set below (dw fields) replaces the conv problem flags' one (dx fields)
    parser = commands.add_parser(
        "conv3d-dw", help="run Conv3DBackpropFilterV2 on the simulated chip and check it", conflict_handler="resolve",
        description="Run Conv3DBackpropFilterV2 (dw of a 3D convolution) instruction by instruction on the "
                    "simulated chip, check it against a numpy reference, and report cycles.")
    add_conv_problem_arguments(parser)
    parser.add_argument("--set", type=dw_tiling_override, action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the dw tiling, repeatable (e.g. --set baseN=64)")
    parser.add_argument("--deterministic", action="store_true",
                        help="the deterministic build (stream-K tails summed by the vector cores in a fixed order)")
    add_run_arguments(parser, "x and dy")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    say = text_stream(args.json)
    check_run_flags(args)
    problem = conv_problem(args)
    dtype = DTYPES[args.dtype]
    x, dy = random_operands(args.seed, dtype, args.timing_only, problem.dx_shape, problem.dy_shape)
    wall = time.perf_counter()
    try:
        with LaunchProgress():
            result = conv3d_backprop_filter_v2_run(
                x, problem.filter_shape, dy, execute=not args.timing_only, trace=args.trace,
                tiling_overrides=dict(args.set) or None, check_races=not args.no_race_check, engine=args.engine,
                max_memory=args.max_memory, record=not args.no_records, deterministic=args.deterministic,
                **problem.operator_arguments())
    except TilingValidationError as err:
        raise FlagError(f"argument --set: {err}") from err
    wall = time.perf_counter() - wall
    print(f"Conv3DBackpropFilterV2 {problem.dtype}: x {problem.dx_shape} * dy {problem.dy_shape} -> dw "
          f"{problem.filter_shape} (NCDHW), stride {problem.stride}, pad {problem.pad}, dilation "
          f"{problem.dilation}, groups {problem.groups}", file=say)
    t, d = result.tiling, result.tiling.dwTiling
    print(f"tiling key {t.tiling_key} ({t.template}): {t.block_dim} cores, baseM/K/N {d.baseM}/{d.baseK}/{d.baseN}, "
          f"stepKa/Kb {d.stepKa}/{d.stepKb}, al1/bl1 {d.al1Pbuffer}/{d.bl1Pbuffer}, iterateOrder {d.iterateOrder}",
          file=say)
    check = None
    if not args.timing_only:
        check = timed_check(lambda: conv3d_dw_reference(x, dy, problem.filter_shape, problem.stride, problem.pad,
                                                        problem.dilation, problem.groups,
                                                        precision=reference_precision(args.dtype)),
                            result.result, args.dtype, args.hf32)
        print(check.line("dw"), file=say)
    report = result.report
    print_summary(report, wall, args.trace, say, check)
    if args.json:
        print_json({**check_fields(check), "tiling": json.loads(t.model_dump_json()), "report": report.to_dict()})
    return 0 if check is None or check.passed else 1
