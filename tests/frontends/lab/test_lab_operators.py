"""Every operator through the one lab protocol: `ascend-sim sweep <op>` on small budgets (legal rows, the default
simulated), and the best tiling each sweep finds computes the right result (checked against PyTorch)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from frontends.cli.conv_problem import CliProblem
from frontends.lab import Conv3dDwTarget, Conv3dV2Target, MatmulProblem, MatmulTarget, sweep
from kernels.conv3d_backprop_filter.operator import conv3d_backprop_filter_v2_run
from kernels.conv3d_v2.operator import conv3d_v2_run
from kernels.matmul import run_matmul

CONV = ["--cin", "32", "--cout", "32", "--dhw", "4,12,12"]


@pytest.mark.parametrize("op, flags", [("conv3d-dx", CONV), ("conv3d-dw", CONV), ("conv3d", CONV),
                                       ("matmul", ["--m", "256", "--n", "128", "--k", "128"])])
def test_cli_sweep_rows_are_legal(op, flags):
    done = subprocess.run([sys.executable, "-m", "frontends.cli", "sweep", op, *flags, "--budget", "6", "--workers",
                           "2", "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rows = result["rows"]
    assert 2 <= len(rows) <= 6 and rows[0]["default"] and rows[0]["cycles"] > 0
    assert sum(r["valid"] for r in rows) >= len(rows) / 2
    assert all(r["valid"] and not r.get("error") for r in rows)  # legal by construction, and they run
    assert result["space"]["size"] == result["space_size"] >= len(rows)


def problem(dtype="float32") -> CliProblem:
    return CliProblem(1, 16, 32, (3, 8, 8), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1, dtype, "Ascend910B2",
                       False)


def best_overrides(target, budget=8) -> dict:
    """The overrides of the fastest tiling a small local search finds (not the generator's own)."""
    result = sweep(target, budget=budget, workers=1, progress=False, prune=False)
    best = min((r for r in result.rows if r.get("cycles") is not None and not r["default"]),
               key=lambda r: r["cycles"])
    return best["overrides"]


def test_best_dw_tiling_computes_dw():
    p = problem()
    target = Conv3dDwTarget(p)
    overrides = target.overrides(best_overrides(target))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(p.dx_shape).astype(np.float32)
    dy = rng.standard_normal(p.dy_shape).astype(np.float32)
    run = conv3d_backprop_filter_v2_run(x, p.filter_shape, dy, tiling_overrides=overrides, engine="fast",
                                        **p.operator_arguments())
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    w = torch.zeros(p.filter_shape, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.conv3d(xt, w, stride=p.stride, padding=p.pad[::2])
    y.backward(torch.tensor(dy, dtype=torch.float64))
    np.testing.assert_allclose(run.result, w.grad.numpy(), rtol=1e-3, atol=1e-3)


def test_best_conv3d_tiling_computes_y():
    p = problem()
    target = Conv3dV2Target(p)
    overrides = target.overrides(best_overrides(target))
    rng = np.random.default_rng(1)
    x = rng.standard_normal(p.dx_shape).astype(np.float32)
    w = rng.standard_normal(p.filter_shape).astype(np.float32)
    run = conv3d_v2_run(x, w, None, tiling_overrides=overrides, engine="fast", **p.operator_arguments())
    expect = torch.nn.functional.conv3d(torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                                        stride=p.stride, padding=p.pad[::2]).numpy()
    np.testing.assert_allclose(run.result, expect, rtol=1e-3, atol=1e-3)


def test_best_matmul_tiling_computes_c():
    target = MatmulTarget(MatmulProblem(96, 80, 200, dtype="float32"))
    tiling = target.tiling_for(best_overrides(target))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((96, 200)).astype(np.float32)
    b = rng.standard_normal((200, 80)).astype(np.float32)
    c = run_matmul(a, b, tiling=tiling, engine="fast").result
    expect = (torch.tensor(a, dtype=torch.float64) @ torch.tensor(b, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(c, expect, rtol=1e-3, atol=1e-3)
