"""Benchmark: the memory of timing-only runs of large layers against the problem's tensor bytes.

    python benchmarks/bench_memory.py [--batch 4] [--dtype float16] [--only NAME ...] [--ops dx dw forward]
                                      [--no-records]

For each layer of bench_conv3d_dx.py (3D CNN layers, batch scaled by --batch) and each operator: a timing-only run
(execute=False, no race check, the fast engine) on size-only stand-in operands, with tracemalloc's peak of the
Python and numpy allocations during the run, against the bytes the problem's tensors (inputs and output in the
dtype) would take; also the instruction count and the wall
time (tracemalloc slows allocation-heavy code, so the wall times are not the simulator's speed). The process's
maximum resident set size (getrusage) is printed at the end. The peak is the records' (about 1-3 KB an
instruction), not the tensors'; with --no-records (record=False: each record scheduled as issued and dropped) it
stays near constant.
"""
from __future__ import annotations

import argparse
import math
import resource
import time
import tracemalloc

from bench_conv3d_dx import LAYERS, dy_shape
from timing import selected_layers

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run
from kernels.common.operands import stand_in
from kernels.common.size_guard import format_bytes

OPERATORS = ("dx", "dw", "forward")


def run_layer(op: str, layer, batch: int, dtype, record: bool = True):
    n, *rest = layer.x
    x_shape = (n * batch, *rest)
    dy = list(dy_shape(layer))
    dy[0] *= batch
    w_shape = (layer.cout, layer.x[1] // layer.groups, *layer.kernel)
    common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, execute=False,
                  check_races=False, engine="fast" if record else "auto", max_memory=1 << 50, record=record)
    tensors = (math.prod(x_shape) + math.prod(dy) + math.prod(w_shape)) * dtype.itemsize
    if op == "dx":
        run = lambda: conv3d_backprop_input_v2_run(x_shape, stand_in(w_shape, dtype), stand_in(dy, dtype),  # noqa
                                                   data_format="NCDHW", **common)
    elif op == "dw":
        run = lambda: conv3d_backprop_filter_v2_run(stand_in(x_shape, dtype), w_shape, stand_in(dy, dtype),  # noqa
                                                    data_format="NCDHW", **common)
    else:
        run = lambda: conv3d_v2_run(stand_in(x_shape, dtype), stand_in(w_shape, dtype), **common)  # noqa
    return tensors, run


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=4, help="multiply each layer's batch (default 4)")
    parser.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--ops", nargs="*", default=list(OPERATORS), choices=OPERATORS)
    parser.add_argument("--no-records", action="store_true", help="record=False: keep no instruction records")
    args = parser.parse_args(argv)
    dtype = DTYPES[args.dtype]
    print(f"{'layer':<24} {'op':<8} {'tensors':>10} {'peak':>10} {'peak/tensors':>12} {'instr':>10} "
          f"{'peak/instr':>10} {'wall s':>7}")
    for layer in selected_layers(LAYERS, args.only):
        for op in args.ops:
            tensors, run = run_layer(op, layer, args.batch, dtype, record=not args.no_records)
            start = time.perf_counter()
            tracemalloc.start()
            try:
                result = run()
            except ValueError as err:  # a layer this operator refuses (e.g. a route it does not take)
                tracemalloc.stop()
                print(f"{layer.name:<24} {op:<8} refused: {err}")
                continue
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            wall = time.perf_counter() - start
            instructions = result.report.instructions
            print(f"{layer.name:<24} {op:<8} {format_bytes(tensors):>10} {format_bytes(peak):>10} "
                  f"{peak / tensors:>12.3f} {instructions:>10,} {format_bytes(peak / instructions):>10} "
                  f"{wall:>7.1f}")
            del result
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    print(f"max resident set size of the process: {format_bytes(maxrss)}")


if __name__ == "__main__":
    main()
