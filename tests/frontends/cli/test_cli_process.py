"""The command line as a user meets it: real processes, their exit codes and what lands on stdout and stderr.

Every process is started at once by one fixture (each start imports numpy and numba, about a second), and the
tests read their results. The bad inputs are the ones issue 7 found; tests/frontends/cli/test_cli.py covers every flag in-process.
"""
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from paths import ROOT

import ascend_sim
from ascend_sim import PRESETS

CLI = [sys.executable, "-m", "frontends.cli"]
SMALL_CONV = ["--cin", "16", "--cout", "16", "--dhw", "2,8,8"]
SMALL_MATMUL = ["--m", "40", "--n", "24", "--k", "48"]

# name: (command line, the flag the one-line error names, the bad value it shows)
BAD_INPUT = {
    "stride 0": (["conv3d-dx", "--stride", "0,1,1"], "--stride", "D=0"),
    "groups 0": (["conv3d-dx", "--groups", "0"], "--groups", "0"),
    "dhw short": (["conv3d-dx", "--dhw", "8,56"], "--dhw", "8,56"),
    "cin negative": (["conv3d-dx", "--cin", "-5"], "--cin", "-5"),
    "set not an integer": (["conv3d-dx", "--set", "baseM=abc"], "--set", "abc"),
    "stride negative": (["conv3d-dx", "--stride=-1,1,1"], "--stride", "D=-1"),
    "set baseK": (["conv3d-dx", "--set", "baseK=32"], "--set", "baseK=32"),
    "set baseM baseN": (["conv3d-dx", "--set", "baseM=1024", "--set", "baseN=256"], "--set", "baseM=1024"),
}


def _small_l0_platform(folder: Path) -> str:
    """A chip whose L0A is half the A2's: the example matmul kernel hard-codes 64 KiB of L0A, so it faults."""
    path = folder / "small_l0.json"
    PRESETS["Ascend910B2"].with_overrides(name="small_l0", L0A=32 * 1024).to_json(path)
    return str(path)


def _console_script() -> str | None:
    script = Path(sysconfig.get_path("scripts")) / "ascend-sim"
    return str(script) if script.exists() else shutil.which("ascend-sim")


def _commands(folder: Path) -> dict[str, list[str]]:
    small_l0 = _small_l0_platform(folder)
    commands = {name: [*CLI, *argv] for name, (argv, _, _) in BAD_INPUT.items()}
    commands.update({
        "conv3d-dx json": [*CLI, "conv3d-dx", *SMALL_CONV, "--json"],
        "tiling json": [*CLI, "tiling", "conv3d-dx", *SMALL_CONV, "--json"],
        "matmul json": [*CLI, "matmul", *SMALL_MATMUL, "--json"],
        "version": [*CLI, "--version"],
        "fault": [*CLI, "matmul", *SMALL_MATMUL, "--platform", small_l0],
        "fault debug": [*CLI, "matmul", *SMALL_MATMUL, "--platform", small_l0, "--debug"],
    })
    script = _console_script()
    if script:
        commands["console script"] = [script, "tiling", "conv3d-dx", "--groups", "0"]
    return commands


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    commands = _commands(tmp_path_factory.mktemp("cli"))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        started = {name: pool.submit(subprocess.run, argv, cwd=ROOT, capture_output=True, text=True, timeout=300)
                   for name, argv in commands.items()}
    return {name: future.result() for name, future in started.items()}


def _one_line_error(run: subprocess.CompletedProcess, prog: str) -> str:
    assert run.stdout == "" and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith(f"{prog}: error: "), run.stderr
    return run.stderr


@pytest.mark.parametrize("name", list(BAD_INPUT))
def test_bad_input_exits_2_with_one_line(runs, name):
    argv, flag, value = BAD_INPUT[name]
    run = runs[name]
    assert run.returncode == 2, run.stderr
    err = _one_line_error(run, f"ascend-sim {argv[0]}")
    assert flag in err and value in err


@pytest.mark.parametrize("name", ["conv3d-dx json", "tiling json", "matmul json"])
def test_json_output_is_only_json(runs, name):
    run = runs[name]
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["check_passed"] is True if name != "tiling json" else document["validation"] == []


def test_version(runs):
    assert runs["version"].returncode == 0 and runs["version"].stdout == f"ascend-sim {ascend_sim.__version__}\n"


def test_a_kernel_fault_exits_1_with_one_paragraph(runs):
    run = runs["fault"]
    assert run.returncode == 1 and run.stdout == "" and run.stderr.count("\n") == 1
    assert "simulated kernel fault" in run.stderr and "buffer overflow" in run.stderr
    assert "Traceback" not in run.stderr


def test_debug_shows_the_traceback(runs):
    run = runs["fault debug"]
    assert run.returncode == 1 and "Traceback (most recent call last)" in run.stderr
    assert "ascend_sim.machine.faults.CapacityExceeded" in run.stderr


def test_console_script(runs):
    if "console script" not in runs:
        pytest.skip("no ascend-sim console script installed beside this Python or on PATH")
    run = runs["console script"]
    assert run.returncode == 2 and "argument --groups: 0" in _one_line_error(run, "ascend-sim tiling conv3d-dx")
