"""`ascend-sim`: the command line (docs/cli.md). One front end per verb, for every operator:

    ascend-sim <op> [problem flags] [--timing-only --trace --json --seed ...]   run it and check it
    ascend-sim tiling <op> [problem flags] [--json]                             the tiling its kernels launch
    ascend-sim debug <op> [problem flags] [-x FILE]                             a gdb-like prompt over its run
    ascend-sim sweep conv3d-dx [problem flags] [sweep flags]                    the tiling lab
    ascend-sim --version

with <op> one of conv3d-dx, conv3d-dw, conv3d, conv-backward, matmul (debug: not conv-backward). One module per
command; conv_problem.py holds the problem flags every convolution command shares, flags.py the one-line error
parser and the checked value types, report.py the output every run command shares (the JSON document), app.py the
parser (each command imported when chosen) and the exit codes.
"""
from frontends.cli.app import main

__all__ = ["main"]
