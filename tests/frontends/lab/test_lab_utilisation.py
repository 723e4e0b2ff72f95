"""The same run gives the same utilisation figures in the text report, in `--json` and in a sweep's JSON and CSV,
per core type, under names that say what they average (`aic_utilisation.MTE1`: AIC cores only)."""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

PROBLEM = ["--cin", "32", "--cout", "32", "--dhw", "4,16,16"]  # fp16 NCDHW: a MIX launch (AIC, then AIV)


def cli(*args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "frontends.cli", *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_text_json_and_sweep_agree_per_core_type(tmp_path):
    text = cli("conv3d-dx", *PROBLEM, "--timing-only").stdout
    report = json.loads(cli("conv3d-dx", *PROBLEM, "--timing-only", "--json").stdout)["launches"][0]["report"]
    swept = json.loads(cli("sweep", "conv3d-dx", *PROBLEM, "--budget", "1", "--workers", "1", "--json",
                           "--out", str(tmp_path), "--no-plots").stdout)["rows"][0]
    with open(tmp_path / "results.csv") as handle:
        row = next(csv.DictReader(handle))
    assert swept["default"] and swept["cycles"] == report["cycles"]
    line = next(ln for ln in text.splitlines() if ln.startswith("pipe utilisation:"))
    # "pipe utilisation: AIC  M  21.4%  MTE1  48.8% ... |  AIV  V   0.5% ..."
    printed = {}
    for part in line.split(":", 1)[1].split("|"):
        kind, *rest = part.split()
        for pipe, percent in zip(rest[::2], rest[1::2]):
            printed[f"{kind.lower()}_utilisation.{pipe}"] = percent
    assert {"aic_utilisation.MTE1", "aiv_utilisation.V"} <= set(printed)
    for key, percent in printed.items():
        kind, pipe = key.split(".")
        assert f"{report[kind][pipe]:.1%}" == re.sub(r"\s", "", percent), key
        assert swept[key] == report[kind][pipe] and float(row[key]) == report[kind][pipe], key
    # an AIC figure averages the AIC cores only: MTE1 runs on them alone, so it is MTE1 busy over AIC core-cycles
    aic = [core for core in report["per_core"] if core["kind"] == "AIC"]
    busy = sum(core["busy"].get("MTE1", 0.0) for core in aic)
    assert 0 < len(aic) < len(report["per_core"])
    assert abs(report["aic_utilisation"]["MTE1"] - busy / (len(aic) * report["cycles"])) < 1e-12
