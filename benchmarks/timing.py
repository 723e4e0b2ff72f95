"""What the layer benchmarks share: their command line, the layer filter and the wall-clock timer."""
import argparse
import gc
import time

import torch

from ascend_sim.machine.dtypes import DTYPES


def layer_benchmark_args(doc: str, argv=None, repeat: int = 2) -> argparse.Namespace:
    """--repeat, --dtype and --only, parsed; prints the torch and simulator settings the figures depend on."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--dtype", default="float16", choices=sorted(DTYPES))
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--clock", default="wall", choices=sorted(CLOCKS),
                        help="wall seconds, or the process's CPU seconds (all its threads: a loaded machine "
                             "inflates wall time, not CPU time)")
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; simulator dtype {args.dtype}, "
          f"torch float32; best of {args.repeat}, {args.clock} seconds")
    return args


def selected_layers(layers, only):
    """The layers whose name contains one of the words of --only (all of them without it)."""
    return [layer for layer in layers if not only or any(word.lower() in layer.name.lower() for word in only)]


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def best_of(repeat, fn, clock: str = "wall"):
    """(best time in seconds on `clock` (CLOCKS) over `repeat` calls of fn, the last result).

    The garbage collector runs before each call, outside the timing: a full collection owed to the objects of
    earlier runs (a recorded run keeps about ten per instruction) is not charged to this one."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        now = CLOCKS[clock]
        start = now()
        result = fn()
        best = min(best, now() - start)
    return best, result
