"""Command line: the Conv3DBackpropInputV2 tiling of a problem, as a table or as JSON.

    python -m tiling.cli --cin 17 --cout 15 --dhw 20,60,60 --kernel 2,2,2 --stride 2,2,2 --pad 0,0,0,0,0,0 \
        --dtype bfloat16 --platform Ascend910B3
    python -m tiling.cli ... --set baseM=512 --set stepKa=8     # experiment: override fields, then validate

The same command as `ascend-sim tiling conv3d-dx` (kernels/cli/tiling_command.py), which takes the problem flags of
`ascend-sim conv3d-dx` and plans the tiling the way the dx operator does; this module keeps the table format.
"""
from __future__ import annotations

import sys

from tiling.model import PARAMS_FIELDS, Conv3DBackpropInputV2TilingData


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


def main(argv: list[str] | None = None) -> int:
    from kernels.cli import main as ascend_sim  # the operator plans the tiling, so the command lives beside it

    return ascend_sim(["tiling", "conv3d-dx", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
