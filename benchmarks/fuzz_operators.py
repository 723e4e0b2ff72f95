"""The differential fuzzer, longer than the suite's run: random small problems for dx, dw, forward Conv3DV2 and
convolution_backward against PyTorch in float64 (the problems and oracles of tests/differential.py).

    python benchmarks/fuzz_operators.py --problems 2000 --seed 5 [--operators dx dw] [--show-refusals]

Prints, per operator, how many problems matched, were refused by a rule (a ValueError naming a parameter), gave a
wrong result and crashed, with the description of every wrong or crashed problem (rerun one with the same seed).
Exit status 1 when any problem was wrong or crashed.
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(_ROOT), str(_ROOT / "tests")]  # this checkout's packages, and the oracles that live with the tests

from tests.kernels.differential import CRASHED, MATCHED, OPERATORS, REFUSED, WRONG, run_problem  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=200, help="problems per operator (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--operators", nargs="+", choices=OPERATORS, default=list(OPERATORS))
    parser.add_argument("--show-refusals", action="store_true", help="print every refusal's message")
    args = parser.parse_args(argv)
    failed = False
    print(f"{'operator':22} {'matched':>8} {'refused':>8} {'wrong':>6} {'crashed':>8} {'seconds':>8}")
    for op in args.operators:
        rng = np.random.default_rng([args.seed, OPERATORS.index(op)])
        counts, details, start = collections.Counter(), [], time.perf_counter()
        for _ in range(args.problems):
            outcome, detail = run_problem(op, rng)
            counts[outcome] += 1
            if outcome in (WRONG, CRASHED) or (outcome == REFUSED and args.show_refusals):
                details.append(f"  {outcome}: {detail}")
        print(f"{op:22} {counts[MATCHED]:8} {counts[REFUSED]:8} {counts[WRONG]:6} {counts[CRASHED]:8} "
              f"{time.perf_counter() - start:8.1f}")
        for line in details:
            print(line)
        failed |= bool(counts[WRONG] or counts[CRASHED])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
