"""Study: would templates kept across a lab worker's candidates be hit? (issue 23, the lab's 1000 candidates)

    python benchmarks/study_lab_template_share.py [--budget 20] [--search random|local|optuna] [--seed 0]

Runs a sweep of C3D conv3a (bound pruning off, every candidate simulated in this one process, as one worker runs
its candidates) and, for each candidate, counts its first-call keys: the unit calls that missed the launch's
templates and became templates (`replay._template`). It then asks how many of them an earlier candidate of the
same process had made already, under two keys:
- "whole tiling": the template's full key (the unit, core type, the state of every object the unit reaches, on-chip
  tensors by buffer name and address, the flag balance, the registers, extra) with the tiling taken by its values
  (every field) instead of by identity: a key under which a template from another launch would be valid;
- "tiling left out": the same key without the tiling at all. Not a valid key (a unit reads tiling fields that its
  state does not hold), only an upper bound of what any key finer than the whole tiling could reach.
Prints, per candidate and in total, the first-call keys, those seen before under each key, and the records the
first calls issued (what running them for real costs).
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ascend_sim.engine import replay  # noqa: E402
from benchmarks.bench_lab_throughput import C3D_CONV3A  # noqa: E402
from frontends.lab.conv3d_dx import Conv3dDxTarget  # noqa: E402
from frontends.lab.sweep import sweep  # noqa: E402


def _tiling_values(tiling) -> tuple:
    """Every field of a tiling (or of the recorder that stands in for it: kernels/common/tiling_reads.py)."""
    if type(tiling).__name__ == "ReadRecorder":
        tiling = object.__getattribute__(tiling, "_target")

    def plain(value):
        if isinstance(value, dict):
            return tuple(sorted((k, plain(v)) for k, v in value.items()))
        return tuple(map(plain, value)) if isinstance(value, list) else value
    return plain(tiling.model_dump())


def _without(value, tiling_ids):
    """A key with the tiling, held by id (a `fixed` attribute, VecPostProcess's extra), taken out."""
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] == "id" and value[1] in tiling_ids:
            return ("tiling",)
        return tuple(_without(v, tiling_ids) for v in value)
    if isinstance(value, frozenset):
        return frozenset(_without(v, tiling_ids) for v in value)
    return ("tiling",) if isinstance(value, int) and value in tiling_ids else value


class FirstCalls:
    """The templates a launch makes, with their full keys (replay._template wrapped)."""

    def __init__(self):
        self.made: list = []  # (unit, key, records issued)
        self.tilings: dict = {}  # id -> the tiling, from the units that hold it as a fixed attribute
        self.original = replay._template

    def __enter__(self):
        def spy(u, core, roots, before, records, *rest):
            for name in u.fixed:
                tiling = getattr(roots[0], name)
                self.tilings[id(tiling)] = tiling
            issued = sum(len(r) if r.__class__ is replay.Block else 1 for r in records)
            self.made.append((u.name, rest[-1], issued))
            return self.original(u, core, roots, before, records, *rest)
        replay._template = spy
        return self

    def __exit__(self, *exc):
        replay._template = self.original

    def keys(self) -> list:
        """(unit, whole-tiling key, tiling-free key, records) of the launch's templates; cleared for the next."""
        values = tuple(sorted(map(_tiling_values, self.tilings.values())))
        out = []
        for unit, key, issued in self.made:
            free = _without(key, set(self.tilings))
            out.append((unit, (free, values), free, issued))
        self.made, self.tilings = [], {}
        return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--search", default="random", choices=("random", "local", "optuna"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    target = Conv3dDxTarget(C3D_CONV3A)
    seen_whole, seen_free = set(), set()
    total = collections.Counter()
    simulate = target.simulate

    with FirstCalls() as first_calls:
        def counted(point):
            row = simulate(point)
            keys = first_calls.keys()
            whole = [k for k in keys if k[1] in seen_whole]
            free = [k for k in keys if k[2] in seen_free]
            counts = {"candidates": 1, "instructions": row["instructions"], "first-call keys": len(keys),
                      "their records": sum(k[3] for k in keys), "seen, whole tiling": len(whole),
                      "their records, whole tiling": sum(k[3] for k in whole), "seen, tiling left out": len(free),
                      "their records, tiling left out": sum(k[3] for k in free)}
            print(f"candidate {total['candidates']} {point or 'the generator'}: " +
                  ", ".join(f"{name} {n:,}" for name, n in list(counts.items())[1:]), flush=True)
            total.update(counts)
            seen_whole.update(k[1] for k in keys)
            seen_free.update(k[2] for k in keys)
            return row
        target.simulate = counted
        sweep(target, search=args.search, budget=args.budget, workers=1, seed=args.seed, progress=False, prune=False)
    print(f"{args.search} search, seed {args.seed}: " + ", ".join(f"{name} {n:,}" for name, n in total.items()))
    keys = total["first-call keys"] or 1
    records = total["their records"] or 1
    print(f"seen in an earlier candidate: whole tiling {total['seen, whole tiling'] / keys:.1%} of the keys "
          f"({total['their records, whole tiling'] / records:.1%} of their records); tiling left out (an upper "
          f"bound) {total['seen, tiling left out'] / keys:.1%} "
          f"({total['their records, tiling left out'] / records:.1%})")


if __name__ == "__main__":
    main()
