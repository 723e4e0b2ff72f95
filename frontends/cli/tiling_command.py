"""`ascend-sim tiling <operator>`: the tiling each kernel of an
operator's run launches with, for the problem flags of `ascend-sim <operator>`, as a table or JSON.

Each operator's command module plans them (`tilings(args)`: [(launch name, kernel, tiling)], notes, broken rules).
conv3d-dx: the tiling `conv3d-dx --route v2` runs, in the host code's table (on an Ascend 950 the arch35 struct's
88 fields with the tiling key decoded and block_dim); --set overrides fields without re-deriving anything and the
result is validated field by field (A2: tiling.validate; the 950: the arch35 rules): exit 1 when an override breaks
a rule (the report says which). The other operators refuse such an override (exit 2, like their run commands). `tiling` without an
operator answers with the new spelling.
"""
from __future__ import annotations

import argparse
from importlib import import_module

from frontends.cli.report import print_json, tiling_fields

# operator: its command module (the same problem flags as `ascend-sim <operator>`)
OPERATORS = {"conv3d-dx": "conv3d_dx_command", "conv3d-dw": "conv3d_dw_command", "conv3d": "conv3d_command",
             "conv-backward": "conv_backward_command", "matmul": "matmul_command"}
SUMMARIES = {"conv3d-dx": "Conv3DBackpropInputV2 (the A2/A3 host tiling, or the arch35 one on an Ascend 950)", "conv3d-dw": "Conv3DBackpropFilterV2",
             "conv3d": "Conv3DV2", "conv-backward": "aclnnConvolutionBackward: each launch's kernel and tiling",
             "matmul": "the example matmul's tiling"}
HINT = (f"name the operator first: ascend-sim tiling {{{','.join(OPERATORS)}}} [its problem flags] "
        "(e.g. ascend-sim tiling conv3d-dx --cin 16)")


def add_command(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "tiling", help="the host tiling an operator's kernels run for a problem",
        description="Print the tiling each kernel of an operator launches for the problem flags of `ascend-sim "
                    "<operator>`, without running it (conv-backward: a timing-only run plans them).")
    parser.missing_command_hint = HINT
    operators = parser.add_subparsers(dest="operator", required=True, metavar="{" + ",".join(OPERATORS) + "}")
    for name, module in OPERATORS.items():
        sub = operators.add_parser(name, help=SUMMARIES[name], conflict_handler="resolve",
                                   description=f"The tiling of `ascend-sim {name}` for the same problem flags.")
        import_module(f".{module}", __package__).add_problem_arguments(sub)
        sub.add_argument("--json", action="store_true", help="print JSON instead of a table")
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help="show the full traceback of an error")
        sub.set_defaults(run=run, prog=sub.prog, parser=sub, module=module)
    return parser


def run(args: argparse.Namespace) -> int:
    launches, notes, broken = import_module(f".{args.module}", __package__).tilings(args)
    if args.json:
        print_json({"operator": args.operator, "launches": [
            {"name": name, "kernel": kernel, "tiling": tiling_fields(tiling)} for name, kernel, tiling in launches],
            "notes": notes, "validation": broken})
    else:
        for name, kernel, tiling in launches:
            print(table(name, kernel, tiling))
        for note in notes:
            print(f"note: {note}")
        if args.operator == "conv3d-dx":
            print("\n".join(["the tiling does not fit:", *(f"  {problem}" for problem in broken)]) if broken else
                  "the tiling fits (validated field by field)")
    return 1 if broken else 0


def format_table(result) -> str:
    """A Conv3DBackpropInputV2TilingData: params, then the tiling fields in blob order, four columns wide."""
    from tiling.conv3d_backprop_input.arch22.model import PARAMS_FIELDS  # here: `--help` imports no tiling
    lines = [f"Conv3DBackpropInputV2 tiling  template={result.template}  tiling_key={result.tiling_key} "
             f"(loadB2Condition={result.loadB2Condition}, enableKernelSplit={int(result.enableKernelSplit)}, "
             f"useBasicBlock={int(result.useBasicBlock)})  dtype={result.dtype}  "
             f"platform={result.platform.name if result.platform else '?'}"]
    fields = result.fields()
    params = [name for name, _ in PARAMS_FIELDS]
    for title, names in (("params", params), ("conv3DDxTiling", [n for n in fields if n not in params])):
        lines.append(f"[{title}]")
        cells = [f"{name:>17s} = {fields[name]:<10d}" for name in names]
        lines += ["".join(cells[i:i + 4]).rstrip() for i in range(0, len(cells), 4)]
    for note in result.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def format_table_arch35(result) -> str:
    """A Conv3DBackpropInputArch35TilingData: the tiling key decoded, block_dim, then the 88 struct fields in blob
    order, four columns wide."""
    key = ", ".join(f"{name}={value}" for name, value in result.key_fields.items())
    lines = [f"Conv3DBackpropInputV2 arch35 tiling  template={result.template}  tiling_key={result.tiling_key} "
             f"({key})  block_dim={result.block_dim}  workspace_size={result.workspace_size}  dtype={result.dtype}  "
             f"platform={result.platform.name if result.platform else '?'}",
             "[Conv3DBackpropInputArch35TilingData]"]
    cells = [f"{name:>19s} = {value:<10d}" for name, value in result.fields().items()]
    lines += ["".join(cells[i:i + 4]).rstrip() for i in range(0, len(cells), 4)]
    for note in result.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def table(name: str, kernel: str, tiling) -> str:
    """The dx tiling as a table (A2: params, then the tiling fields in blob order; the 950: the arch35 struct with
    its key decoded); any other as `group.field = value` lines."""
    if kernel == "Conv3DBackpropInputV2" and hasattr(tiling, "conv3DDxTiling"):
        return format_table(tiling)
    if kernel == "Conv3DBackpropInputV2" and hasattr(tiling, "key_fields"):
        return format_table_arch35(tiling)
    lines = [f"{name}: {kernel}"]

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else key, item)
        elif not isinstance(value, list) or len(value) <= 16:
            lines.append(f"  {prefix} = {value}")
    fields = tiling_fields(tiling)
    fields.pop("blob_int32", None)
    walk("", fields)
    return "\n".join(lines)
