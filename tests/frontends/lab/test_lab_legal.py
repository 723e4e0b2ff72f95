"""The lab's legal space (frontends/lab/legal.py, conv3d_dx_space.py): candidates legal by construction, judged by
the validator; the default search's known win on the default conv3d-dx problem."""
from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys

import pytest

from frontends.cli.conv_problem import CliProblem
from frontends.lab import Conv3dDwTarget, Conv3dDxTarget, Conv3dV2Target, MatmulProblem, MatmulTarget
from frontends.lab.legal import Knob, LegalSpace, Rule, fixed
from tiling import validate


def toy() -> LegalSpace:
    """a in 1..6, b in 1..a*2 with a*b a multiple of 4, c in {0, 1} with a+b+c <= 9."""
    return LegalSpace([fixed("a", range(1, 7)),
                       Knob("b", lambda p: tuple(range(1, 2 * p["a"] + 1)),
                            (Rule("a*b multiple of 4", lambda p: p["a"] * p["b"] % 4 == 0),)),
                       Knob("c", lambda p: (0, 1), (Rule("a+b+c <= 9", lambda p: p["a"] + p["b"] + p["c"] <= 9),))],
                      {"a": 2, "b": 2, "c": 0})


def test_toy_space_is_the_filtered_product():
    space = toy()
    expected = [{"a": a, "b": b, "c": c} for a, b, c in itertools.product(range(1, 7), range(1, 13), (0, 1))
                if b <= 2 * a and a * b % 4 == 0 and a + b + c <= 9]
    assert space.points() == expected
    # every b from 1 to 2a that is not a multiple-of-4 product was cut by its rule, counted once each
    assert space.cuts["a*b multiple of 4"] == sum(1 for a in range(1, 7) for b in range(1, 2 * a + 1) if a * b % 4)
    assert "legal space: " + str(len(expected)) in space.describe()
    assert space.repair({"a": 3, "b": 5, "c": 1}) == {"a": 3, "b": 4, "c": 1}  # b 4 (nearest legal: 4 or 8)
    # a=6 takes b in {2,4,...,12}, so b stays 12, and a+b > 9 leaves c no value
    assert space.repair({"a": 6, "b": 12, "c": 1}) is None


def test_toy_neighbours_change_one_knob_and_stay_legal():
    space = toy()
    points = [tuple(p.values()) for p in space.points()]
    neighbours = space.neighbours({"a": 2, "b": 2, "c": 0})
    assert neighbours and all(tuple(n.values()) in points for n in neighbours)
    # a changed (b kept when still legal, else repaired) or b changed or c changed
    assert {"a": 2, "b": 2, "c": 1} in neighbours and {"a": 2, "b": 4, "c": 0} in neighbours
    assert {"a": 4, "b": 2, "c": 0} in neighbours and {"a": 1, "b": 2, "c": 0} not in neighbours  # 1*2 not /4


def problem(cin, cout, dhw, kernel, stride, pad, groups, dtype) -> CliProblem:
    return CliProblem(1, cin, cout, dhw, kernel, stride, pad, (1, 1, 1), groups, dtype, "Ascend910B2", False)


PROBLEMS = {
    "fp16 3x3x3 basic block": problem(32, 32, (4, 16, 16), (3, 3, 3), (1, 1, 1), (1,) * 6, 1, "float16"),
    "fp32 3x3x3": problem(32, 48, (4, 16, 16), (3, 3, 3), (1, 1, 1), (1,) * 6, 1, "float32"),
    "fp16 groups 2 stride 2": problem(64, 64, (4, 16, 16), (3, 3, 3), (2, 2, 2), (1,) * 6, 2, "float16"),
    "bf16 1x1x1": problem(64, 128, (4, 16, 16), (1, 1, 1), (1, 1, 1), (0,) * 6, 1, "bfloat16"),
    "fp32 1x1x1 odd channels": problem(24, 40, (2, 8, 8), (1, 1, 1), (1, 1, 1), (0,) * 6, 1, "float32"),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_the_validator_refuses_no_constructed_candidate(name):
    """Up to 1500 points of each space (all of a smaller one), each as the target builds its tiling."""
    target = Conv3dDxTarget(PROBLEMS[name])
    points = target.legal_space().points()
    assert len(points) > 100
    drawn = points if len(points) <= 1500 else random.Random(0).sample(points, 1500)
    refused = [(p, str(report)) for p in drawn if not (report := validate(target.candidate(p))).ok]
    assert refused == []


def test_the_default_search_finds_the_step_ka_win_within_40():
    """`ascend-sim sweep conv3d-dx --budget 40` on the default problem: at least 10 % faster than the
    generator's tiling (123,968 cycles; stepKa 3 alone gives 104,347), every row legal."""
    done = subprocess.run([sys.executable, "-m", "frontends.cli", "sweep", "conv3d-dx", "--budget", "40",
                           "--workers", "2", "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rows = result["rows"]
    assert len(rows) <= 40 and all(r["valid"] for r in rows)
    default = rows[0]
    best = min(r["cycles"] for r in rows if r.get("cycles") is not None)
    assert default["default"] and best <= 0.9 * default["cycles"]


@pytest.mark.parametrize("make", [
    lambda: Conv3dDwTarget(PROBLEMS["fp16 3x3x3 basic block"]), lambda: Conv3dDwTarget(PROBLEMS["fp32 3x3x3"]),
    lambda: Conv3dDwTarget(PROBLEMS["fp16 groups 2 stride 2"]), lambda: Conv3dDwTarget(PROBLEMS["bf16 1x1x1"]),
    lambda: Conv3dV2Target(PROBLEMS["fp16 3x3x3 basic block"]), lambda: Conv3dV2Target(PROBLEMS["fp32 3x3x3"]),
    lambda: Conv3dV2Target(PROBLEMS["fp16 groups 2 stride 2"]), lambda: Conv3dV2Target(PROBLEMS["bf16 1x1x1"]),
    lambda: MatmulTarget(MatmulProblem(512, 256, 384)), lambda: MatmulTarget(MatmulProblem(96, 80, 200, 2, "float32")),
], ids=["dw fp16", "dw fp32", "dw groups", "dw 1x1", "conv3d fp16", "conv3d fp32", "conv3d groups", "conv3d 1x1",
        "matmul fp16", "matmul fp32 batch"])
def test_other_operators_validators_refuse_no_constructed_candidate(make):
    target = make()
    points = target.legal_space().points()
    assert len(points) > 1
    drawn = points if len(points) <= 800 else random.Random(0).sample(points, 800)
    refused = [(p, problems) for p in drawn if (problems := target.check(target.tiling_for(p)))]
    assert refused == []


def test_narrowing_holds_the_other_knobs_at_their_nearest_legal_value():
    space = toy().restricted({"a": (3, 4)})
    # b stays 2 where a*b is a multiple of 4 (a=4), else moves to the nearest legal b (a=3: 4); c stays 0
    assert space.points() == [{"a": 3, "b": 4, "c": 0}, {"a": 4, "b": 2, "c": 0}]


def test_sampling_a_truncated_space_reaches_all_of_it(monkeypatch):
    monkeypatch.setattr("frontends.lab.legal.MAX_POINTS", 5)
    space = toy()
    assert len(space.points()) == 5 and space.truncated
    drawn = space.sample(12, seed=1)
    legal = [(a, b, c) for a, b, c in itertools.product(range(1, 7), range(1, 13), (0, 1))
             if b <= 2 * a and a * b % 4 == 0 and a + b + c <= 9]  # 18 points
    assert len({tuple(p.values()) for p in drawn}) == len(drawn) == 12
    assert all(tuple(p.values()) in legal for p in drawn)
    assert max(p["a"] for p in drawn) > max(p["a"] for p in space.points())  # beyond the enumerated first 5
