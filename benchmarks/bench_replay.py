"""Benchmark: the replay engine (replayed API units, issue 23 step 2) against the fast engine on the dx layers.

    python benchmarks/bench_replay.py [--repeat 3] [--only NAME ...] [--op dx|dw|conv3d] [--full] [--check]

--only NAME picks layers of bench_conv3d_dx.LAYERS by name, the VideoMAE patch embedding included (left out by
default).

Per layer, in one process, engines alternated: CPU seconds (time.process_time, best of --repeat) of a timing-only
run (execute=False, check_races=False) on the fast and the replay engine, the instructions per second and the
ratio; with --full also a full run (data moved, races checked). --check compares the two engines' cycles, every
record field and (full) the result bytes once per layer, outside the timing. --op picks the operator on the same
layers and operands: dx (Conv3DBackpropInputV2, the default), dw (Conv3DBackpropFilterV2) or conv3d (Conv3DV2, with
a bias).
"""
from __future__ import annotations

import argparse
import gc
import time

import numpy as np
from bench_conv3d_dx import LAYERS, dy_shape
from timing import selected_layers

from ascend_sim.machine.memory import Buffer
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run

REPLAY_LAYERS = ("C3D conv3a", "3D U-Net down", "X3D depthwise", "R3D-18 stem", "video-VAE causal conv")


def select_layers(only):
    """The layers above, or those of bench_conv3d_dx's LAYERS named (in part) by --only (the VideoMAE patch
    embedding too)."""
    if not only:
        return [layer for layer in LAYERS if layer.name.startswith(REPLAY_LAYERS)]
    return selected_layers(LAYERS, only)


def cpu_best(repeat, fn):
    """(best CPU seconds over `repeat` calls, the last result); a full collection before each, untimed."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        gc.collect()
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def _plain(value):
    """A record field comparable across chips: buffers by name, arrays by their bytes."""
    if isinstance(value, Buffer):
        return value.name
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return type(value).__name__, tuple(map(_plain, value))
    return value


def _fields(report):
    """Every field of every record; API call ids (unique in the process) numbered in order of appearance."""
    ids: dict = {}

    def api(calls):
        return tuple((name, ids.setdefault(call, len(ids))) for name, call in calls)
    return [[(r.core, r.seq, r.name, r.pipe, r.params, _plain(r.args), _plain(r.reads), _plain(r.writes),
              _plain(r.registers), r.src, r.path, r.nbytes, r.event, _plain(r.footprint), api(r.api), r.issue, r.start,
              r.end,
              None if r.released_by is None else (
                  tuple((x.core, x.seq) for x in r.released_by) if isinstance(r.released_by, tuple)
                  else (r.released_by.core, r.released_by.seq))) for r in log] for log in report.logs]


def _operator_run(op, layer):
    """run(engine=, **options) of operator `op` on the layer, with bench_conv3d_dx's operands (seed 0, fp16)."""
    rng = np.random.default_rng(0)
    dy = rng.standard_normal(dy_shape(layer)).astype(np.float16)
    w = rng.standard_normal((layer.cout, layer.x[1] // layer.groups, *layer.kernel)).astype(np.float16)
    common = dict(strides=(1, 1, *layer.stride), pads=layer.pads, groups=layer.groups)
    if op == "dx":
        return lambda **options: conv3d_backprop_input_v2_run(layer.x, w, dy, data_format="NCDHW", **common, **options)
    x = rng.standard_normal(layer.x).astype(np.float16)
    if op == "dw":
        return lambda **options: conv3d_backprop_filter_v2_run(x, w.shape, dy, data_format="NCDHW", **common,
                                                               **options)
    b = rng.standard_normal(layer.cout).astype(np.float16)
    return lambda **options: conv3d_v2_run(x, w, b, **common, **options)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--full", action="store_true", help="also time full runs (data moved, races checked)")
    parser.add_argument("--check", action="store_true", help="compare the engines' records and results once")
    parser.add_argument("--op", choices=("dx", "dw", "conv3d"), default="dx", help="the operator (default dx)")
    args = parser.parse_args(argv)
    layers = select_layers(args.only)
    print(f"{args.op}: CPU seconds, best of {args.repeat}, engines alternated in one process")
    print(f"{'layer':<24} {'mode':<7} {'instr':>9} {'fast s':>8} {'replay s':>9} {'ratio':>6} "
          f"{'fast instr/s':>13} {'replay instr/s':>15}")
    for layer in layers:
        run_op = _operator_run(args.op, layer)
        modes = [("timing", dict(execute=False, check_races=False))] + ([("full", {})] if args.full else [])
        for mode, options in modes:
            def run(engine):
                return run_op(engine=engine, **options)
            best = {"fast": float("inf"), "replay": float("inf")}
            runs = {}
            for _ in range(args.repeat):  # fast, replay, fast, replay ...
                for engine in best:
                    seconds, runs[engine] = cpu_best(1, lambda: run(engine))
                    best[engine] = min(best[engine], seconds)
            n = runs["fast"].report.instructions
            if args.check:
                a, b = runs["fast"], runs["replay"]
                assert a.report.cycles == b.report.cycles and a.report.to_dict() == b.report.to_dict(), layer.name
                assert _fields(a.report) == _fields(b.report), f"{layer.name}: records differ"
                if mode == "full":
                    assert a.result.tobytes() == b.result.tobytes(), f"{layer.name}: results differ"
            print(f"{layer.name:<24} {mode:<7} {n:>9,} {best['fast']:>8.3f} {best['replay']:>9.3f} "
                  f"{best['fast'] / best['replay']:>5.2f}x {n / best['fast']:>13,.0f} {n / best['replay']:>15,.0f}",
                  flush=True)
            runs = None


if __name__ == "__main__":
    main()
