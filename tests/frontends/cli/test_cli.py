"""The `ascend-sim` command line, called in this process: runs, reports, JSON, and one-line errors for every flag.

tests/frontends/cli/test_cli_process.py drives the same entry points as real processes (exit codes, streams, the console script).
"""
import json
from importlib.metadata import version

import pytest

import ascend_sim
from ascend_sim import PRESETS
from frontends.cli import main

SMALL_CONV = ["--cin", "16", "--cout", "16", "--dhw", "2,8,8"]
SMALL_MATMUL = ["--m", "40", "--n", "24", "--k", "48"]


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
    code = main(["conv3d-dx", *SMALL_CONV, "--timing-only", "--json", "--set", "al1Pbuffer=1"])
    said = capsys.readouterr()
    data = json.loads(said.out)  # stdout is the JSON document alone; the text went to stderr
    launch, = data["launches"]
    assert code == 0 and launch["tiling"]["conv3DDxTiling"]["al1Pbuffer"] == 1 and launch["report"]["cycles"] > 0
    assert data["check_passed"] is None and "tiling key" in said.err


def test_conv3d_dx_routed_like_aclnn_and_forced_onto_the_conv_kernel(capsys):
    shape = ["conv3d-dx", "--cin", "8", "--cout", "24", "--dhw", "4,8,8", "--kernel", "2,2,2", "--stride", "2,2,2",
             "--pad", "0,0,0,0,0,0"]
    assert main(shape) == 0
    out = capsys.readouterr().out
    assert "routed like aclnn to the matmul kernel (STRIDE_EQ_KERNEL)" in out and "PASSED" in out
    assert main([*shape, "--route", "v2"]) == 0
    out = capsys.readouterr().out
    assert "tiling key" in out and "PASSED" in out


@pytest.mark.parametrize("problem", [
    [],  # the defaults
    # pads beyond the kernel's reach and strideD > kD: the operator rewrites the problem; an override of
    # initOutputFlag is undone because some dx elements get no contribution
    ["--cin", "16", "--cout", "32", "--dhw", "4,8,8", "--kernel", "1,3,3", "--stride", "3,2,2", "--pad",
     "1,0,3,1,0,0", "--dtype", "float32", "--set", "initOutputFlag=0"],
], ids=["defaults", "rewritten"])
def test_tiling_prints_the_tiling_conv3d_dx_runs(problem, capsys):
    assert main(["tiling", "conv3d-dx", *problem, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    printed = document["launches"][0]["tiling"]
    assert main(["conv3d-dx", *problem, "--json", "--route", "v2", "--timing-only"]) == 0
    ran = json.loads(capsys.readouterr().out)
    ran_tiling = ran["launches"][0]["tiling"]
    assert printed["conv3DDxTiling"] == ran_tiling["conv3DDxTiling"]
    assert printed["params"] == ran_tiling["params"] and printed["tiling_key"] == ran_tiling["tiling_key"]
    assert document["notes"] == ran["notes"]
    assert bool(problem) == any("initOutputFlag forced" in note for note in ran["notes"])


def test_tiling_table_overrides_and_the_aclnn_note(capsys):
    shape = ["--cin", "8", "--cout", "24", "--dhw", "4,8,8", "--kernel", "2,2,2", "--stride", "2,2,2", "--pad",
             "0,0,0,0,0,0"]
    assert main(["tiling", "conv3d-dx", *shape]) == 0
    out = capsys.readouterr().out
    assert "[conv3DDxTiling]" in out and "runs this problem as a matmul (STRIDE_EQ_KERNEL)" in out
    assert main(["tiling", "conv3d-dx", *shape, "--set", "baseM=4096"]) == 1  # printed with what the override broke
    assert "baseM=4096" in capsys.readouterr().out


@pytest.mark.parametrize("dtype,extra", [("float16", []), ("bfloat16", []), ("float32", []),
                                         ("float32", ["--hf32"])], ids=["fp16", "bf16", "fp32", "hf32"])
def test_matmul_checks_every_dtype(dtype, extra, capsys):
    assert main(["matmul", *SMALL_MATMUL, "--batch", "2", "--dtype", dtype, *extra, "--json"]) == 0
    said = capsys.readouterr()
    data = json.loads(said.out)
    check, (launch,) = data["checks"]["c"], data["launches"]
    assert data["check_passed"] is True and check["max_error"] <= check["tolerance"]
    assert launch["tiling"]["dtype"] == dtype and launch["tiling"]["hf32"] == bool(extra)
    assert "PASSED" in said.err and launch["report"]["instruction_counts"]["Mmad"] > 0


def test_matmul_text_report_timing_only_and_trace(tmp_path, capsys):
    trace = tmp_path / "mm.json"
    assert main(["matmul", *SMALL_MATMUL, "--timing-only", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "Matmul float16" in out and "bound by:" in out and "check against" not in out
    assert any(e.get("name") == "Mmad" for e in json.loads(trace.read_text())["traceEvents"])


def test_no_race_check_reaches_the_simulator(monkeypatch, capsys):
    import ascend_sim.engine.chip
    seen = []
    real_init = ascend_sim.engine.chip.Chip.__init__

    def spy(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        seen.append(self.check_races)
    monkeypatch.setattr(ascend_sim.engine.chip.Chip, "__init__", spy)
    assert main(["matmul", *SMALL_MATMUL, "--no-race-check"]) == 0
    assert main(["conv3d-dx", *SMALL_CONV, "--no-race-check", "--route", "v2"]) == 0
    assert main(["matmul", *SMALL_MATMUL]) == 0
    assert seen == [False, False, True] and capsys.readouterr().out.count("PASSED") == 3


def test_version(capsys):
    assert ascend_sim.__version__ == version("ascend-sim")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"ascend-sim {ascend_sim.__version__}\n"


def test_version_of_a_source_tree_that_was_never_installed(monkeypatch):
    import importlib.metadata
    import re
    from importlib.metadata import PackageNotFoundError
    from pathlib import Path

    def not_installed(name):
        raise PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)  # read by _package_version at its call
    pyproject = (Path(ascend_sim.__file__).parents[1] / "pyproject.toml").read_text()
    assert ascend_sim._package_version() == re.search(r'^version = "(.+)"', pyproject, re.MULTILINE).group(1)


def _small_l0_platform(folder):
    """A chip whose L0A is half the A2's: the example matmul kernel hard-codes 64 KiB of L0A, so it faults."""
    path = folder / "small_l0.json"
    PRESETS["Ascend910B2"].with_overrides(name="small_l0", L0A=32 * 1024).to_json(path)
    return str(path)


def test_a_kernel_fault_is_one_paragraph_and_exit_1(tmp_path, capsys):
    assert main(["matmul", *SMALL_MATMUL, "--platform", _small_l0_platform(tmp_path)]) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert said.err.startswith("ascend-sim matmul: simulated kernel fault: [core 0") and "L0A has 32768" in said.err


def test_debug_raises_instead_of_printing(tmp_path):
    with pytest.raises(ascend_sim.CapacityExceeded):
        main(["--debug", "matmul", *SMALL_MATMUL, "--platform", _small_l0_platform(tmp_path)])
    with pytest.raises(ValueError, match="baseK=32"):
        main(["conv3d-dx", "--set", "baseK=32", "--debug"])  # the operator refuses the tiling before launch


# (command line, the flag the error must name, the bad value it must show)
BAD_INPUT = [
    # conv3d-dx: the problem flags
    (["conv3d-dx", "--batch", "0"], "--batch", "0"),
    (["conv3d-dx", "--cin", "-5"], "--cin", "-5"),
    (["conv3d-dx", "--cout", "abc"], "--cout", "abc"),
    (["conv3d-dx", "--dhw", "8,56"], "--dhw", "8,56"),
    (["conv3d-dx", "--dhw", "8,0,56"], "--dhw", "H=0"),
    (["conv3d-dx", "--kernel", "3,600,3"], "--kernel", "H=600"),
    (["conv3d-dx", "--kernel", "9,3,3", "--pad", "0,0,0,0,0,0"], "--kernel", "D=9"),
    (["conv3d-dx", "--stride", "0,1,1"], "--stride", "D=0"),
    (["conv3d-dx", "--stride=-1,1,1"], "--stride", "D=-1"),
    (["conv3d-dx", "--stride", "-1,1,1"], "--stride", "write --stride=-1,1,1"),
    (["conv3d-dx", "--stride", "1,64,1"], "--stride", "H=64"),
    (["conv3d-dx", "--stride", "1,a,1"], "--stride", "H='a'"),
    (["conv3d-dx", "--pad", "1,1,1,1"], "--pad", "1,1,1,1"),  # 1, 3 (per axis) or 6 values
    (["conv3d-dx", "--pad=0,0,-2,0,0,0"], "--pad", "top=-2"),
    (["conv3d-dx", "--dilation", "1,0,1"], "--dilation", "H=0"),
    (["conv3d-dx", "--groups", "0"], "--groups", "0"),
    (["conv3d-dx", "--groups", "5"], "--groups", "5"),
    (["conv3d-dx", "--dtype", "float64"], "--dtype", "float64"),
    (["conv3d-dx", "--hf32"], "--hf32", "float16"),
    (["conv3d-dx", "--platform", "nope"], "--platform", "nope"),
    (["conv3d-dx", "--platform", "missing.json"], "--platform", "missing.json"),
    (["conv3d-dx", "--set", "baseM=abc"], "--set", "abc"),
    (["conv3d-dx", "--set", "baseM"], "--set", "baseM"),
    (["conv3d-dx", "--set", "baseMM=64"], "--set", "baseMM"),
    (["conv3d-dx", "--set", "baseM=-1"], "--set", "baseM=-1"),
    (["conv3d-dx", "--set", "baseK=32"], "--set", "baseK=32"),  # refused by the operator's tiling validator
    (["conv3d-dx", "--set", "baseM=1024", "--set", "baseN=256"], "--set", "baseM=1024"),
    (["conv3d-dx", "--cin", "8", "--cout", "24", "--dhw", "4,8,8", "--kernel", "2,2,2", "--stride", "2,2,2",
      "--pad", "0,0,0,0,0,0", "--set", "al1Pbuffer=1"], "--set", "--route v2"),
    (["conv3d-dx", "--route", "v3"], "--route", "v3"),
    (["conv3d-dx", "--trace", "/no/such/folder/t.json"], "--trace", "/no/such/folder"),
    (["conv3d-dx", "--seed", "-1"], "--seed", "-1"),
    (["conv3d-dx", "--strid", "1,1,1"], "--strid", "did you mean --stride?"),
    # tiling: the same problem flags
    (["tiling", "conv3d-dx", "--stride", "0,1,1"], "--stride", "D=0"),
    (["tiling", "conv3d-dx", "--groups", "3"], "--groups", "3"),
    (["tiling", "conv3d-dx", "--dhw", "8,56"], "--dhw", "8,56"),
    (["tiling", "conv3d-dx", "--dilation=-1,1,1"], "--dilation", "D=-1"),
    (["tiling", "conv3d-dx", "--dtype", "float32", "--set", "stepKa=x"], "--set", "stepKa=x"),
    (["tiling", "conv3d-dx", "--hf32", "--dtype", "bfloat16"], "--hf32", "bfloat16"),
    (["tiling", "conv3d-dx", "--platform", "Ascend910"], "--platform", "Ascend910"),
    (["tiling", "conv3d-dx", "--dy", "1,64,8,56,56"], "--dy", "1,64,8,56,56"),  # the old shape flags are gone
    (["tiling", "conv3d-dx", "--json=yes"], "--json", "yes"),
    # matmul
    (["matmul", "--m", "0"], "--m", "0"),
    (["matmul", "--n", "-3"], "--n", "-3"),
    (["matmul", "--k", "1.5"], "--k", "1.5"),
    (["matmul", "--batch", "0"], "--batch", "0"),
    (["matmul", "--dtype", "int8"], "--dtype", "int8"),
    (["matmul", "--hf32"], "--hf32", "float16"),
    (["matmul", "--platform", "A2"], "--platform", "A2"),
    (["matmul", "--trace", "/no/such/folder/t.json"], "--trace", "/no/such/folder"),
    (["matmul", "--seed", "x"], "--seed", "x"),
    (["matmul", "--base", "64"], "--base", "64"),
    # the command itself
    (["conv2d"], "conv3d-dx,tiling,matmul", "conv2d"),  # `conv3d` is a command (the forward convolution)
    ([], "conv3d-dx,tiling,matmul", "required"),
]


@pytest.mark.parametrize("argv,flag,value", BAD_INPUT, ids=[" ".join(case[0]) or "nothing" for case in BAD_INPUT])
def test_bad_input_is_one_line_naming_the_flag_and_the_value(argv, flag, value, capsys):
    assert main(argv) == 2
    said = capsys.readouterr()
    command = (" ".join(argv[:2]) if argv[:1] == ["tiling"] else argv[0]
               if argv and argv[0] in ("conv3d-dx", "matmul") else None)
    assert said.out == "" and said.err.count("\n") == 1 and "Traceback" not in said.err
    assert said.err.startswith(f"ascend-sim {command}: error: " if command else "ascend-sim: error: ")
    assert flag in said.err and value in said.err


def test_bad_platform_files_are_one_line(tmp_path, capsys):
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "L1": 100}')
    assert main(["tiling", "conv3d-dx", "--platform", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a valid platform file" in err and "aic_cores: Field required" in err
    assert main(["matmul", "--platform", str(tmp_path)]) == 2  # a folder
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Ascend910B2" in err  # the presets are listed


def test_help_exits_0(capsys):
    assert main(["tiling", "conv3d-dx", "--help"]) == 0
    assert "--dhw D,H,W" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["tiling"], ["tiling", "--cin", "16"], ["tiling", "--json"]])
def test_tiling_without_an_operator_answers_with_the_new_spelling(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ascend-sim tiling: error: name the operator first: ")
    assert "ascend-sim tiling {conv3d-dx,conv3d-dw,conv3d,conv-backward,matmul}" in err


def test_one_value_means_every_axis_and_three_pads_one_per_axis(capsys):
    """--kernel 3 --stride 2 --dilation 1 --dhw 6 --pad 1 is the problem of the spelled-out values; --pad D,H,W
    pads each axis on both sides."""
    short = ["--cin", "16", "--cout", "16", "--dhw", "6", "--kernel", "3", "--stride", "2", "--dilation", "1"]
    long = ["--cin", "16", "--cout", "16", "--dhw", "6,6,6", "--kernel", "3,3,3", "--stride", "2,2,2",
            "--dilation", "1,1,1"]
    documents = []
    for flags in ([*short, "--pad", "1"], [*long, "--pad", "1,1,1,1,1,1"], [*long, "--pad", "1,1,1"]):
        assert main(["tiling", "conv3d-dx", *flags, "--json"]) == 0
        documents.append(json.loads(capsys.readouterr().out))
    assert documents[0] == documents[1] == documents[2]
    assert documents[0]["launches"][0]["tiling"]["conv3DDxTiling"]["strideD"] == 2
