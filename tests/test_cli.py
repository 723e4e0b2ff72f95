"""The `ascend-sim` command line."""
import json

from kernels.cli import main


def test_conv3d_dx_runs_checks_and_writes_a_trace(tmp_path, capsys):
    trace = tmp_path / "dx.json"
    code = main(["conv3d-dx", "--cin", "20", "--cout", "12", "--dhw", "3,9,8", "--kernel", "2,3,3", "--stride",
                 "1,2,1", "--pad", "0,1,1,0,2,1", "--trace", str(trace)])
    out = capsys.readouterr().out
    assert code == 0
    assert "check against the numpy reference: PASSED" in out and "bound by:" in out and "us at 1800 MHz" in out
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == "Mmad" for e in events)


def test_conv3d_dx_json_timing_only_and_overrides(capsys):
    code = main(["conv3d-dx", "--dhw", "2,8,8", "--cin", "16", "--cout", "16", "--timing-only", "--json",
                 "--set", "al1Pbuffer=1"])
    out = capsys.readouterr().out
    data = json.loads(out[out.index("{"):])
    assert code == 0 and data["tiling"]["conv3DDxTiling"]["al1Pbuffer"] == 1 and data["report"]["cycles"] > 0


def test_conv3d_dx_bad_input_is_a_clear_error(capsys):
    assert main(["conv3d-dx", "--groups", "5"]) == 2
    assert "groups=5 must divide" in capsys.readouterr().err
    assert main(["conv3d-dx", "--dtype", "float32", "--stride", "1,64,1", "--dhw", "2,70,4"]) == 2
    assert "64" in capsys.readouterr().err


def test_tiling_subcommand(capsys):
    code = main(["tiling", "--dy", "1,15,10,30,30", "--filter", "15,17,2,2,2", "--dx", "1,17,20,60,60",
                 "--strides", "2,2,2", "--dtype", "bfloat16", "--platform", "Ascend910B3", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["params"]["coreNum"] == 20 and data["conv3DDxTiling"]["baseM"] == 256


def test_conv3d_dx_routed_like_aclnn_and_forced_onto_the_conv_kernel(capsys):
    shape = ["conv3d-dx", "--cin", "8", "--cout", "24", "--dhw", "4,8,8", "--kernel", "2,2,2", "--stride", "2,2,2",
             "--pad", "0,0,0,0,0,0"]
    assert main(shape) == 0
    out = capsys.readouterr().out
    assert "routed like aclnn to the matmul kernel (STRIDE_EQ_KERNEL)" in out and "PASSED" in out
    assert main([*shape, "--route", "v2"]) == 0
    out = capsys.readouterr().out
    assert "tiling key" in out and "PASSED" in out
