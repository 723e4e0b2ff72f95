"""Benchmark: what a planned run's data work (engine/replay_data.py, RunPlan.run) costs above its GEMMs, piece by
piece.

    python benchmarks/bench_plan_pieces.py [--only R3D] [--calls 300] [--rounds 5]

A full dx run of a bench_conv3d_dx.py layer (its operands, engine "auto", numba loaded first) with its first
--calls RunPlan.run calls captured; they are then run again, in one process, by the same loop with one piece at
a time made a no-op (its result left stale: the bytes are wrong, the time is what is measured), the variants
alternated for --rounds rounds on one BLAS thread; per variant the best CPU seconds (time.process_time) per Mmad.
The pieces: the gathers of A and B (`_take`), the GEMMs (`multiply`: one stack's products reused), the adds into
the L0C sums (fast_sums.add_in_order) and the window's float32 image (`to_float32` with an `out`); "the GEMMs
alone" leaves out all the others. A piece costs about the difference from "all of it" (docs/performance.md,
"The R3D stem's full run against its GEMM floor, part by part").
"""
from __future__ import annotations

import argparse
import gc
import time
from contextlib import ExitStack
from unittest import mock

import numba  # noqa: F401 (loaded first: "auto" then takes the compiled passes, as in bench_conv3d_dx after C3D)
import numpy as np
from bench_conv3d_dx import LAYERS
from bench_replay import _operator_run

from ascend_sim.engine import replay_data
from ascend_sim.machine.blas import blas_threads
from ascend_sim.passes import fast_sums


def captured_runs(layer, calls: int) -> list:
    """The first `calls` RunPlan.run calls of a full run of `layer`: (plan, buffers, records, runs, operands)."""
    captured = []
    real = replay_data.RunPlan.run

    def capture(plan, *args):
        if len(captured) < calls:
            captured.append((plan, *args))
        return real(plan, *args)
    with mock.patch.object(replay_data.RunPlan, "run", capture):
        _operator_run("dx", layer)()
    return captured


def _stale_take(rows, source, index, by_rows, out):
    return out[:len(index) * rows.shape[1]] if by_rows else out[:len(index)]


def _stale_products():
    made: dict = {}

    def multiply(a, b, k, hf32_rounding):
        shape = (*a.shape[:-1], b.shape[-1])
        if shape not in made:
            made[shape] = np.zeros(shape, np.float32)
        return made[shape]
    return multiply


def _image_left_out(real):
    return lambda data, dtype, out=None: out if out is not None else real(data, dtype)


def variants() -> dict:
    """Per variant, the (object, attribute, stand-in) patches it runs under."""
    take = (replay_data, "_take", _stale_take)
    gemm = (replay_data, "multiply", None)  # a fresh _stale_products per use
    adds = (fast_sums, "add_in_order", lambda c, products, lo, hi: None)
    image = (replay_data, "to_float32", _image_left_out(replay_data.to_float32))
    return {"all of it": [], "without the gathers of A and B": [take], "without the GEMMs": [gemm],
            "without the adds": [adds], "without the window's image": [image],
            "the GEMMs alone": [take, adds, image]}


def seconds(captured: list, patches: list) -> float:
    """CPU seconds of the captured runs under `patches`."""
    with ExitStack() as stack, np.errstate(all="ignore"):  # stale operands may hold any bits
        for owner, name, stand_in in patches:
            stack.enter_context(mock.patch.object(owner, name, stand_in or _stale_products()))
        gc.collect()
        start = time.process_time()
        for plan, *args in captured:
            plan.run(*args)
        return time.process_time() - start


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="R3D")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    layer = next(layer for layer in LAYERS if args.only.lower() in layer.name.lower())
    captured = captured_runs(layer, args.calls)
    mmads = sum(batch[8][0] for plan, *_ in captured for batch in plan.batches)
    print(f"{layer.name}: {len(captured)} planned runs captured, {mmads:,} Mmads")
    if not mmads:
        return
    best = {name: float("inf") for name in variants()}
    with blas_threads(1):
        for _ in range(args.rounds):
            for name, patches in variants().items():
                best[name] = min(best[name], seconds(captured, patches))
    for name, spent in best.items():
        print(f"  {name:<34} {spent / mmads * 1e6:6.2f} us an Mmad (best of {args.rounds})")


if __name__ == "__main__":
    main()
