"""`ascend-sim tiling` (also `python -m tiling.cli`): the conv kernel's tiling for a problem, as a table or JSON.

The problem flags are conv3d-dx's, with the same defaults, and the tiling is the one `conv3d-dx --route v2` runs.
--set overrides fields without re-deriving anything and the result is validated field by field: exit code 0 when
it fits, 1 when an override made it illegal (the report says why), 2 for bad flags.
"""
from __future__ import annotations

import argparse
import json

from .conv_problem import add_conv_problem_arguments, conv_problem
from .report import print_json


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "tiling", help="the Conv3DBackpropInputV2 host tiling of a problem (Atlas A2)",
        description="Print the Conv3DBackpropInputV2 tiling that conv3d-dx --route v2 runs for the same flags.")
    add_conv_problem_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from tiling import validate
    from tiling.cli import format_table

    problem = conv_problem(args)
    # unvalidated overrides: the report below says what they break
    planned = problem.plan("v2", dict(args.set), validate_overrides=False)
    notes = list(planned.notes)
    default = problem.plan("aclnn")
    if default.route == "matmul":
        notes.append(f"conv3d-dx's default --route aclnn runs this problem as a matmul ({default.matmul_mode}); "
                     f"this is the tiling of --route v2")
    report = validate(planned.tiling)
    if args.json:
        document = json.loads(planned.tiling.model_dump_json())
        document.update(blob_int32=planned.tiling.to_words(), validation=[str(p) for p in report.problems],
                        run_notes=notes)
        print_json(document)
    else:
        print(format_table(planned.tiling))
        for note in notes:
            print(f"note: {note}")
        print(report)
    return 0 if report.ok else 1
