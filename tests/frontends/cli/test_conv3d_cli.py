"""`ascend-sim conv3d`: runs, checks against the numpy reference, JSON / timing-only / --set / --engine, bad flags;
and the numpy reference itself against torch."""
import json

import numpy as np
import torch
import torch.nn.functional as F

from frontends.cli.app import main
from kernels.conv3d_v2.reference import conv3d_reference

SMALL = ["--cin", "5", "--cout", "7", "--dhw", "4,6,7", "--kernel", "2,3,3", "--stride", "1,2,1",
         "--pad", "1,0,1,2,0,1", "--dtype", "bfloat16"]


def test_conv3d_runs_checks_and_writes_a_trace(tmp_path, capsys):
    trace = tmp_path / "conv3d.trace.json"
    assert main(["conv3d", *SMALL, "--bias", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "Conv3DV2 bfloat16" in out and "+ bias" in out and "PASSED" in out and "cycles" in out
    assert "TransData" in out  # the host-side layout conversions are said
    assert json.loads(trace.read_text())


def test_conv3d_json_timing_only_overrides_and_engine(capsys):
    assert main(["conv3d", *SMALL, "--timing-only", "--json", "--set", "iterateMNOrder=1", "--engine", "exact"]) == 0
    doc = json.loads(capsys.readouterr().out)
    launch, = doc["launches"]
    assert doc["check_passed"] is None and launch["tiling"]["convApiTiling"]["iterateMNOrder"] == 1
    assert launch["report"]["cycles"] > 0


def test_conv3d_refuses_bad_flags_on_one_line(capsys):
    assert main(["conv3d", *SMALL, "--set", "mLO=3"]) == 2
    err = capsys.readouterr().err
    assert "mLO is not a Conv3DV2 tiling field; did you mean mL0" in err and err.count("\n") == 1
    assert main(["conv3d", *SMALL, "--set", "mL0=8"]) == 2
    err = capsys.readouterr().err
    assert "mL0=8: must be a multiple of 16" in err and err.count("\n") == 1
    assert main(["conv3d", *SMALL, "--set", "outputOrder=1"]) == 2
    err = capsys.readouterr().err
    assert "outputOrder=1: HW mode needs" in err and err.count("\n") == 1
    assert main(["conv3d", "--stride", "1,64,1"]) == 2
    assert "--stride" in capsys.readouterr().err


def test_the_numpy_reference_matches_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 5, 7, 6))
    w = rng.standard_normal((4, 3, 2, 3, 2))
    b = rng.standard_normal(4)
    got = conv3d_reference(x, w, b, (2, 1, 3), (1, 0, 2, 1, 0, 1), (1, 2, 1), groups=2)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 0), (2, 1), (0, 1)))
    expect = F.conv3d(torch.tensor(xp), torch.tensor(w), torch.tensor(b), stride=(2, 1, 3), dilation=(1, 2, 1),
                      groups=2).numpy()
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)


def test_debug_conv3d_checks_and_traces_an_element_to_x_and_the_filter(monkeypatch, capsys):
    import io
    import sys

    script = "continue\ncheck\nprint bias[3]\nwho-wrote y[0,2,1,3,4]\nquit\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert main(["debug", "conv3d", *SMALL, "--bias"]) == 0
    out = capsys.readouterr().out
    assert "check y at the end of the run: PASSED" in out
    assert "bias[3] = " in out and "(GM bias, ND (7,)" in out
    assert "from filter:" in out and "from x:" in out and "Mmad" in out and "Fixpipe" in out
