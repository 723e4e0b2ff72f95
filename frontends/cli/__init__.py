"""`ascend-sim`: the command line.

    ascend-sim conv3d-dx [problem flags] [--route --timing-only --trace --json --seed]   run dx and check it
    ascend-sim tiling [problem flags] [--json]                                         the conv kernel's tiling
    ascend-sim matmul [--m --n --k --batch --dtype --platform --hf32 ...]               the example tiled matmul
    ascend-sim debug {conv3d-dx,matmul} [-x FILE] [its flags]                           a gdb-like prompt over its run
    ascend-sim --version

One module per command; conv_problem.py holds the problem flags every convolution command shares, flags.py the
one-line error parser and the checked value types, app.py the parser and the exit codes.
"""
from frontends.cli.app import main

__all__ = ["main"]
