"""conv3d-dx on an Ascend 950 in the tiling lab (frontends/lab/conv3d_dx_arch35.py): the arch35 tiling's legal
space is judged legal by the arch35 validator on several problems, `ascend-sim sweep conv3d-dx` on a 950 sweeps it
(a real process), and a swept row's cycles are those of the operator run with the row's fields as overrides."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from paths import ROOT

from frontends.cli.conv_problem import CliProblem
from frontends.lab import Conv3dDxArch35Target, Conv3dDxTarget
from kernels.common.operands import stand_in
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run

PLATFORM = "Ascend950PR_9589"


def problem(cin, cout, dhw, kernel, stride, pad, groups, dtype) -> CliProblem:
    return CliProblem(1, cin, cout, dhw, kernel, stride, pad, (1, 1, 1), groups, dtype, PLATFORM, False)


PROBLEMS = {
    "fp16 3x3x3": problem(16, 16, (4, 8, 8), (3, 3, 3), (1, 1, 1), (1,) * 6, 1, "float16"),
    "fp32 stride 2": problem(24, 40, (3, 10, 9), (3, 3, 3), (1, 2, 2), (1,) * 6, 1, "float32"),
    "bf16 groups 2": problem(32, 32, (4, 12, 12), (3, 3, 3), (1, 1, 1), (1,) * 6, 2, "bfloat16"),
    "hifloat8 1x3x3": problem(32, 48, (2, 16, 16), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), 1, "hifloat8"),
}


@pytest.mark.parametrize("name", PROBLEMS)
def test_every_legal_point_passes_the_arch35_validator(name):
    target = Conv3dDxArch35Target(PROBLEMS[name])
    space = target.legal_space()
    assert len(space.points()) > 10
    points = space.sample(150, seed=0)  # the larger spaces hold 10^4 points
    refused = [(point, target.prepare(point).reason) for point in points if not target.prepare(point).valid]
    assert refused == []


def test_the_a2_target_refuses_a_950_problem():
    with pytest.raises(ValueError, match="Conv3dDxArch35Target"):
        Conv3dDxTarget(PROBLEMS["fp16 3x3x3"])


def test_cli_sweep_on_the_950_runs_the_arch35_kernel():
    p = PROBLEMS["fp32 stride 2"]
    done = subprocess.run([sys.executable, "-m", "frontends.cli", "sweep", "conv3d-dx", "--platform", PLATFORM,
                           "--cin", "24", "--cout", "40", "--dhw", "3,10,9", "--stride", "1,2,2", "--dtype",
                           "float32", "--budget", "6", "--workers", "2", "--json"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "(arch35)" in result["description"]
    rows = result["rows"]
    assert len(rows) == 6 and rows[0]["default"]
    assert all(r["valid"] and not r.get("error") and r["cycles"] > 0 for r in rows)
    assert "iterateOrder" not in result["space"]["knobs"]  # the arch35 kernel never reads it
    # the last row, run by the operator with its fields as overrides: the same cycles, on the arch35 kernel
    row = rows[-1]
    point = {name: row[name] for name in result["space"]["knobs"]}
    run = conv3d_backprop_input_v2_run(p.dx_shape, stand_in(p.filter_shape, np.float32),
                                       stand_in(p.dy_shape, np.float32), execute=False, tiling_overrides=point,
                                       **p.operator_arguments())
    assert run.report.cycles == row["cycles"]
    assert any(note.startswith("arch35 kernel") for note in run.notes)
    assert [core.kind for core in run.report.cores].count("AIV") == 2 * point["coreNum"]
