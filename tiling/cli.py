"""Command line: print the Conv3DBackpropInputV2 tiling of a shape as a table or as JSON.

    python -m tiling.cli --dy 1,15,10,30,30 --filter 15,17,2,2,2 --dx 1,17,20,60,60 --strides 2,2,2 \
        --dtype bfloat16 --platform Ascend910B3
    python -m tiling.cli ... --set baseM=512 --set stepKa=8     # experiment: override fields, then validate

`add_subcommand(subparsers)` registers the same thing as a `tiling` subcommand of another CLI.
"""
from __future__ import annotations

import argparse
import json
import sys

from .generator import conv3d_backprop_input_tiling
from .model import PARAMS_FIELDS, Conv3DBackpropInputV2TilingData
from .validate import validate


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.replace(" ", "").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None


def _override(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r} must look like FIELD=VALUE, e.g. baseM=128")
    try:
        return name.strip(), int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: VALUE must be an integer") from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dy", type=_ints, required=True, metavar="N,C,D,H,W", help="dy (grad output) NCDHW")
    parser.add_argument("--filter", type=_ints, required=True, metavar="Cout,Cin_g,kD,kH,kW",
                        help="weight (Cout, Cin/groups, kD, kH, kW)")
    parser.add_argument("--dx", type=_ints, required=True, metavar="N,C,D,H,W", help="dx (grad input) NCDHW")
    parser.add_argument("--strides", type=_ints, default=(1, 1, 1), metavar="D,H,W")
    parser.add_argument("--pads", type=_ints, default=(0,) * 6, metavar="F,B,T,B,L,R",
                        help="front, back, top, bottom, left, right")
    parser.add_argument("--dilations", type=_ints, default=(1, 1, 1), metavar="D,H,W")
    parser.add_argument("--groups", type=int, default=1)
    parser.add_argument("--dtype", default="float16", choices=["float16", "bfloat16", "float32"])
    parser.add_argument("--platform", default="Ascend910B2", help="platform preset name")
    parser.add_argument("--hf32", action="store_true", help="enable HF32 (float32 only)")
    parser.add_argument("--set", type=_override, action="append", default=[], metavar="FIELD=VALUE",
                        help="override a tiling field (repeatable); the result is validated, not re-derived")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def format_table(result: Conv3DBackpropInputV2TilingData) -> str:
    """Params, then the tiling fields in blob order, four columns wide."""
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


def run(args: argparse.Namespace) -> int:
    try:
        result = conv3d_backprop_input_tiling(
            args.dy, args.filter, args.dx, args.strides, args.pads, args.dilations, args.groups, args.dtype,
            args.platform, args.hf32, overrides=dict(args.set) or None)
    except (ValueError, TypeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    report = validate(result)
    if args.json:
        doc = json.loads(result.model_dump_json())
        doc.update(blob_int32=result.to_words(),
                   validation=[str(p) for p in report.problems])
        print(json.dumps(doc, indent=2))
    else:
        print(format_table(result))
        print(report)
    return 0 if report.ok else 1


def add_subcommand(subparsers) -> argparse.ArgumentParser:
    """Register `tiling` on an argparse subparsers object; the handler is stored as `func`."""
    parser = subparsers.add_parser("tiling", help="Conv3DBackpropInputV2 host tiling (Atlas A2)",
                                   description=__doc__.splitlines()[0])
    add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tiling.cli", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
