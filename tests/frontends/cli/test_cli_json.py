"""Every run command prints one JSON layout (docs/cli.md: the fields its table documents) and the same exit codes;
every operator's tiling prints with `ascend-sim tiling <op>`, the tiling its run launches."""
import json
import re

import pytest
from paths import ROOT

from frontends.cli import main

DOC = (ROOT / "docs" / "cli.md").read_text()
CONV = ["--cin", "16", "--cout", "16", "--dhw", "2,6,6"]
RUNS = {"conv3d-dx": (CONV, ["dx"]), "conv3d-dw": (CONV, ["dw"]), "conv3d": (CONV, ["y"]),
        "conv-backward": (["--cin", "8", "--cout", "16", "--dhw", "2,6,6"], ["grad_bias", "grad_input", "grad_weight"]),
        "matmul": (["--m", "64", "--n", "32", "--k", "48"], ["c"])}


def documented_fields() -> list[str]:
    table = DOC.split("| field | meaning |", 1)[1].split("\n\n", 1)[0]
    return [name for row in re.findall(r"^\| (`[^|]*`) \|", table, flags=re.M) for name in re.findall(r"`(\w+)`", row)]


@pytest.mark.parametrize("command", list(RUNS))
def test_every_run_command_prints_the_documented_document(command, capsys):
    flags, outputs = RUNS[command]
    assert main([command, *flags, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == documented_fields()
    assert doc["command"] == command and doc["check_passed"] is True and sorted(doc["checks"]) == outputs
    assert sorted(launch["name"] for launch in doc["launches"]) == outputs
    for launch in doc["launches"]:
        assert list(launch) == ["name", "kernel", "tiling", "report", "trace"] and launch["tiling"]
    assert doc["cycles"] == pytest.approx(sum(launch["report"]["cycles"] for launch in doc["launches"]))
    assert main([command, *flags, "--json", "--timing-only"]) == 0
    timing = json.loads(capsys.readouterr().out)
    assert timing["check_passed"] is None and timing["checks"] == {} and timing["cycles"] == doc["cycles"]


@pytest.mark.parametrize("command", list(RUNS))
def test_tiling_of_every_operator_is_the_tiling_its_run_launches(command, capsys):
    flags, _ = RUNS[command]
    route = ["--route", "v2"] if command == "conv3d-dx" else []
    assert main(["tiling", command, *flags, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main([command, *flags, *route, "--json", "--timing-only"]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert [(t["name"], t["kernel"]) for t in printed["launches"]] == [(r["name"], r["kernel"]) for r in
                                                                         ran["launches"]]
    for shown, launched in zip(printed["launches"], ran["launches"]):
        assert shown["tiling"] == launched["tiling"]
    assert main(["tiling", command, *flags]) == 0  # and as text
    assert printed["launches"][0]["kernel"].split()[0] in capsys.readouterr().out


@pytest.mark.parametrize("command", list(RUNS))
def test_bad_input_is_exit_2_on_one_line_for_every_command(command, capsys):
    bad = ["--m", "0"] if command == "matmul" else ["--cin", "0"]
    for argv in ([command, *bad], ["tiling", command, *bad]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"ascend-sim {' '.join(argv[:-2])}: error: argument {bad[0]}")
