"""Benchmark: the cached front end and the collector changes of issue 23, on the dx benchmark's layers.

    python benchmarks/bench_front_end.py cache [--repeat 3] [--only NAME ...] [--timing-only]
    python benchmarks/bench_front_end.py trees TREE_A TREE_B [--rounds 3] [--repeat 3] [--only NAME ...]
    python benchmarks/bench_front_end.py loop [--repeat 6]

`cache`: in one process, runs with `Chip(front_end_cache=True)` and `False` alternated; CPU seconds (best of
--repeat), the speed-up and the records per second. Both must agree on the cycles and the result bytes.
`trees`: two source trees (e.g. a checkout of main and this branch), each measured in its own processes
(PYTHONPATH=TREE), A B A B ... for --rounds rounds, best per layer and mode; the speed-up B / A. The processes
run this script's `one` command, which needs only the operator API both trees have.
`loop`: the cost of one call (cache off and on) in a kernel that is one loop of 20,000 calls at one line: a
LoadData 2D, a DataCopy whose GM address moves, a LoadData 3Dv2 (a 20-field struct with a pad list) and a
SetFlag / WaitFlag (each of the pair counted as a call).
All figures are CPU seconds of the operator call (time.process_time), with one BLAS and one torch thread.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

MODES = {"timing": dict(execute=False, check_races=False), "full": {}}


def _layer_runs(only, timing_only):
    """(layer name, mode, a function that runs it) for the selected layers."""
    from bench_conv3d_dx import LAYERS, dy_shape

    from kernels import conv3d_backprop_input_v2_run

    for layer in LAYERS:
        if only and not any(word.lower() in layer.name.lower() for word in only):
            continue
        rng = np.random.default_rng(0)
        dy = rng.standard_normal(dy_shape(layer)).astype(np.float16)
        w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(np.float16)
        common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups, data_format="NCDHW")
        for mode, options in MODES.items():
            if mode == "full" and timing_only:
                continue
            yield layer.name, mode, (lambda x=layer.x, w=w, dy=dy, c=common, o=options:
                                     conv3d_backprop_input_v2_run(x, w, dy, **c, **o))


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def cache(args) -> None:
    from ascend_sim import Chip

    defaults = Chip.__init__.__kwdefaults__
    print(f"{'layer':<24} {'mode':<7} {'instr':>8} {'off s':>8} {'on s':>8} {'speed-up':>8} {'on instr/s':>11}")
    for name, mode, run in _layer_runs(args.only, args.timing_only):
        best, runs = {False: float("inf"), True: float("inf")}, {}
        for _ in range(args.repeat):
            for on in best:  # alternated, so that a busy machine slows both alike
                defaults["front_end_cache"] = on
                seconds, runs[on] = _cpu(run)
                best[on] = min(best[on], seconds)
        defaults["front_end_cache"] = True
        off, on = runs[False], runs[True]
        assert off.report.cycles == on.report.cycles, f"{name}: the cycles differ"
        if off.result is not None:
            assert off.result.tobytes() == on.result.tobytes(), f"{name}: the results differ"
        n = on.report.instructions
        print(f"{name:<24} {mode:<7} {n:>8,} {best[False]:>8.3f} {best[True]:>8.3f} "
              f"{best[False] / best[True]:>7.2f}x {n / best[True]:>11,.0f}")


def one(args) -> None:
    """This process's best CPU seconds per (layer, mode), with the instructions and cycles, as JSON."""
    import torch

    torch.set_num_threads(1)
    out = {}
    for name, mode, run in _layer_runs(args.only, args.timing_only):
        best, result = float("inf"), None
        for _ in range(args.repeat):
            seconds, result = _cpu(run)
            best = min(best, seconds)
        out[f"{name}|{mode}"] = (best, result.report.instructions, result.report.cycles)
    print(json.dumps(out))


def trees(args) -> None:
    best: dict = {}
    command = [sys.executable, os.path.abspath(__file__), "one", "--repeat", str(args.repeat)]
    command += ["--only", *args.only] if args.only else []
    command += ["--timing-only"] if args.timing_only else []
    for _ in range(args.rounds):
        for tree in (args.tree_a, args.tree_b):
            env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
            got = json.loads(subprocess.run(command, env=env, check=True, capture_output=True,
                                            text=True).stdout.splitlines()[-1])
            for key, (seconds, instructions, cycles) in got.items():
                old = best.get((tree, key))
                best[(tree, key)] = (min(seconds, old[0]) if old else seconds, instructions, cycles)
    print(f"{'layer | mode':<30} {'instr':>8} {'A s':>8} {'B s':>8} {'B speed-up':>10} {'A instr/s':>10} "
          f"{'B instr/s':>10}")
    for (tree, key), (b_seconds, n, cycles) in best.items():
        if tree != args.tree_b:
            continue
        a_seconds, a_n, a_cycles = best[(args.tree_a, key)]
        assert (a_n, a_cycles) == (n, cycles), f"{key}: the trees' instructions or cycles differ"
        print(f"{key:<30} {n:>8,} {a_seconds:>8.3f} {b_seconds:>8.3f} {a_seconds / b_seconds:>9.2f}x "
              f"{n / a_seconds:>10,.0f} {n / b_seconds:>10,.0f}")


def loop(args) -> None:
    """One kernel line called 20,000 times: a LoadData 2D at fixed addresses, a DataCopy whose GM address moves on
    every call, a LoadData 3Dv2, or a SetFlag / WaitFlag pair; us per call (best of --repeat launches, scheduling
    included), the cache off and on alternated."""
    from ascend_sim import Chip
    from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData2DParams,
                                    LoadData3DParamsV2, SetFlag, TBuf, TPipe, TPosition, WaitFlag)
    from ascend_sim.machine.tensor import GmAddr

    calls = 20_000

    def kernel(src, case):
        pipe = TPipe()
        l1, l0a = TBuf(TPosition.A1), TBuf(TPosition.A2)
        pipe.InitBuffer(l1, 64 * 1024)
        pipe.InitBuffer(l0a, 16 * 1024)
        l1, l0a = l1.Get(np.float16), l0a.Get(np.float16)
        gm, load, block = GlobalTensor(np.float16).SetGlobalBuffer(src), LoadData2DParams(repeatTimes=2), \
            DataCopyParams(1, 2, 0, 0)
        img2col = LoadData3DParamsV2(padList=[0, 0, 0, 0], l1H=4, l1W=16, channelSize=16, kExtension=16,
                                     mExtension=16)
        for i in range(calls if case != "flag" else calls // 2):
            if case == "copy":
                DataCopy(l1, gm[(i % 64) * 32], block)
            elif case == "load3d":
                LoadData(l0a, l1, img2col)
            elif case == "flag":
                SetFlag(HardEvent.MTE1_M, 0)
                WaitFlag(HardEvent.MTE1_M, 0)
            else:
                LoadData(l0a, l1, load)

    for name, case in (("LoadData 2D", "load2d"), ("DataCopy, GM moving", "copy"), ("LoadData 3Dv2", "load3d"),
                       ("SetFlag / WaitFlag", "flag")):
        best = {False: float("inf"), True: float("inf")}
        for _ in range(args.repeat):
            for on in best:
                chip = Chip(execute=False, check_races=False, front_end_cache=on, engine="fast")
                src = GmAddr(chip.gm.alloc("src", 1 << 20))
                seconds, _ = _cpu(lambda: chip.launch(kernel, 1, src, case))
                best[on] = min(best[on], seconds / calls * 1e6)
        print(f"{name:<20} off {best[False]:.2f} us  on {best[True]:.2f} us per call")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("cache", "trees", "one", "loop"))
    parser.add_argument("trees", nargs="*", help="trees: TREE_A TREE_B")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="run only layers whose name contains one of these words")
    parser.add_argument("--timing-only", action="store_true", help="skip the full runs")
    args = parser.parse_args(argv)
    if args.command == "trees":
        if len(args.trees) != 2:
            parser.error("trees needs TREE_A TREE_B")
        args.tree_a, args.tree_b = args.trees
    {"cache": cache, "trees": trees, "one": one, "loop": loop}[args.command](args)


if __name__ == "__main__":
    main()
