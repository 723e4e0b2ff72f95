"""The differential test (issue 22): a few hundred small seeded random problems across dx, dw, forward Conv3DV2 and
convolution_backward (1D/2D/3D, groups, depthwise, strides up to 3 incl. stride > kernel, dilation, asymmetric pads,
transposed with output padding, output masks, cube math types, fp16/bf16/fp32, both data formats), each compared
with PyTorch in float64 with the operator tests' tolerances (tests/differential.py).

A problem may be refused before launch, with a ValueError naming a parameter; more than REFUSED_MAX of them fails
the test, so that it cannot pass by refusing. The longer run is benchmarks/fuzz_operators.py."""
from __future__ import annotations

import collections

import numpy as np
import pytest

from tests.kernels.differential import CRASHED, MATCHED, OPERATORS, REFUSED, WRONG, run_problem

PROBLEMS = 100  # per operator: 400 in all, about 40 s on this machine (2 cores)
SEED = 22
REFUSED_MAX = 0.15


@pytest.mark.parametrize("op", OPERATORS)
def test_random_problems_match_torch(op):
    rng = np.random.default_rng([SEED, OPERATORS.index(op)])
    counts, bad = collections.Counter(), []
    for _ in range(PROBLEMS):
        outcome, detail = run_problem(op, rng)
        counts[outcome] += 1
        if outcome in (WRONG, CRASHED):
            bad.append(f"{outcome}: {detail}")
    assert not bad, "\n".join(bad)
    assert counts[MATCHED] + counts[REFUSED] == PROBLEMS
    assert counts[REFUSED] <= REFUSED_MAX * PROBLEMS, f"{counts[REFUSED]} of {PROBLEMS} refused: {dict(counts)}"
