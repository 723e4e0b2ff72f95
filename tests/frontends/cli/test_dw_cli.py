"""`ascend-sim conv3d-dw`: runs, checks against the numpy reference, JSON / timing-only / --set, bad flags."""
import json

from frontends.cli.app import main

SMALL = ["--cin", "20", "--cout", "24", "--dhw", "3,9,8", "--kernel", "2,3,3", "--stride", "1,2,1",
         "--pad", "1,0,1,1,1,1", "--dtype", "bfloat16"]


def test_conv3d_dw_runs_checks_and_writes_a_trace(tmp_path, capsys):
    trace = tmp_path / "dw.trace.json"
    assert main(["conv3d-dw", *SMALL, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "Conv3DBackpropFilterV2 bfloat16" in out and "PASSED" in out and "cycles" in out
    assert json.loads(trace.read_text())


def test_conv3d_dw_deterministic(capsys):
    assert main(["conv3d-dw", "--cin", "16", "--cout", "16", "--dhw", "4,6,6", "--kernel", "3,3,3", "--pad",
                 "0,0,0,0,0,0", "--deterministic"]) == 0
    out = capsys.readouterr().out
    assert "tiling key 4" in out and "PASSED" in out


def test_conv3d_dw_json_timing_only_and_overrides(capsys):
    assert main(["conv3d-dw", *SMALL, "--timing-only", "--json", "--set", "baseN=64"]) == 0
    doc = json.loads(capsys.readouterr().out)
    launch, = doc["launches"]
    assert doc["check_passed"] is None and launch["tiling"]["dwTiling"]["baseN"] == 64
    assert launch["report"]["cycles"] > 0


def test_conv3d_dw_refuses_bad_flags_on_one_line(capsys):
    assert main(["conv3d-dw", *SMALL, "--set", "baseQ=3"]) == 2
    err = capsys.readouterr().err
    assert "baseQ is not a dw tiling field; did you mean" in err and err.count("\n") == 1
    assert main(["conv3d-dw", "--cin", "20", "--groups", "3"]) == 2
    assert "--groups" in capsys.readouterr().err
