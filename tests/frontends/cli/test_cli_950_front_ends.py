"""`ascend-sim tiling conv3d-dx` and `ascend-sim debug conv3d-dx` on an Ascend 950, as a user runs them (real
processes): the arch35 tiling with its 88 fields, key and block_dim, `--set` checked by the arch35 rules; the
debugger stepping the arch35 kernel and checking dx against the float64 reference."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import ROOT

from tiling.conv3d_backprop_input.arch35 import FIELDS

CLI = [sys.executable, "-m", "frontends.cli"]
ON_950 = ["--platform", "Ascend950PR_9589", "--cin", "16", "--cout", "16", "--dhw", "4,8,8"]
PROMPT = "(ascend-sim) "


def ascend_sim(*args, stdin=None):
    return subprocess.run([*CLI, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=300)


def test_tiling_prints_the_arch35_struct_by_real_name():
    done = ascend_sim("tiling", "conv3d-dx", *ON_950)
    assert done.returncode == 0, done.stderr
    head = done.stdout.splitlines()[0]
    # dy (1, 16, 4, 8, 8), w 3x3x3, fp16 on 32 AI cores: REVERSE_ONLY (2), no kernel split, ORIGIN, basic block
    assert "arch35 tiling" in head and "tiling_key=16777218 (loadB2Condition=2, kernelSplitMode=0, " \
        "groupConvMode=0, isBasicBlockTiling=1, loadB1Condition=0)" in head
    assert "block_dim=8" in head and "platform=Ascend950PR_9589" in head
    printed = {cell.split("=")[0].strip() for line in done.stdout.splitlines()[2:] if " = " in line
               for cell in line.split("  ") if " = " in cell}
    assert printed == {name for name, _ in FIELDS}
    assert done.stdout.rstrip().endswith("the tiling fits (validated field by field)")


def test_tiling_json_on_the_950():
    done = ascend_sim("tiling", "conv3d-dx", *ON_950, "--dtype", "hifloat8", "--json")
    assert done.returncode == 0, done.stderr
    launch = json.loads(done.stdout)["launches"][0]
    assert {name for name, _ in FIELDS} <= set(launch["tiling"])
    assert launch["tiling"]["c0"] == 32 and launch["tiling"]["block_dim"] == launch["tiling"]["coreNum"]
    assert len(launch["tiling"]["blob_int32"]) == 352 // 4


def test_tiling_set_breaking_an_arch35_rule_exits_1():
    done = ascend_sim("tiling", "conv3d-dx", *ON_950, "--set", "baseM=128")
    assert done.returncode == 1
    assert "baseM = 128" in done.stdout
    assert "baseM=128: L0A needs 73728 bytes" in done.stdout


def test_tiling_set_of_a_problem_field_is_bad_input():
    done = ascend_sim("tiling", "conv3d-dx", *ON_950, "--set", "cin=32")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("ascend-sim tiling conv3d-dx: error: argument --set:") and \
        "cin=32: copied by the arch35 tiling from the problem" in done.stderr


def test_run_takes_a_legal_set_on_the_950():
    done = ascend_sim("conv3d-dx", *ON_950, "--set", "baseM=32", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["check_passed"] and data["launches"][0]["tiling"]["baseM"] == 32


@pytest.mark.parametrize("dtype", ["float16", "hifloat8"])
def test_debug_steps_the_arch35_kernel(dtype):
    script = "break Iterate\ncontinue\nfinish\ngoto end\ncheck\nwho-wrote y[0, 1, 1, 1, 1]\n"
    done = ascend_sim("debug", "conv3d-dx", *ON_950, "--dtype", dtype, stdin=script)
    assert done.returncode == 0, done.stderr
    head, *replies = done.stdout.split(PROMPT)
    assert head.startswith(f"Conv3DBackpropInputV2 {dtype}")
    assert "y (dx) NCDHW (1, 16, 4, 8, 8)" in head and "on 24 cores" in head  # 8 AIC + 16 AIV
    replies = [reply.splitlines()[1:] for reply in replies]
    assert replies[0][0].startswith("Breakpoint 1: api=Iterate (") and "0 matching" not in replies[0][0]
    assert replies[1][0].startswith("Breakpoint 1, #") and replies[1][-1].strip().endswith("Iterate")
    assert replies[2][0] == "Run till exit from Iterate"
    assert replies[4][0].startswith("check y at the end of the run: PASSED")
    assert "Fixpipe(Arch3510)" in "\n".join(replies[5])


def test_run_and_tiling_follow_aclnns_950_matmul_route():
    one = [*ON_950, "--kernel", "1", "--pad", "0"]  # 1x1x1, stride 1, batch 1: IsW1B1FmNDxTransToMm
    run = ascend_sim("conv3d-dx", *one)
    assert run.returncode == 0, run.stderr
    assert "routed like aclnn to the matmul kernel (W1B1_1X1X1)" in run.stdout
    assert "check against the numpy reference: PASSED" in run.stdout
    tiling = ascend_sim("tiling", "conv3d-dx", *one)
    assert tiling.returncode == 0 and "arch35 tiling" in tiling.stdout
    assert "runs this problem as a matmul (W1B1_1X1X1); this is the tiling of --route v2" in tiling.stdout
    refused = ascend_sim("conv3d-dx", *one, "--set", "baseM=32")
    assert refused.returncode == 2 and "argument --set: this problem runs as a matmul" in refused.stderr


def test_conv_backward_on_the_950():
    small = ["--platform", "Ascend950PR_9589", "--cin", "16", "--cout", "16", "--dhw", "2,8,8"]
    done = ascend_sim("conv-backward", *small, "--mask", "1,0,1", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["check_passed"] and [launch["kernel"] for launch in data["launches"]] == [
        "ReduceSum (AIV)", "Conv3DBackpropInputV2"]
    assert data["launches"][1]["tiling"]["c0"] == 16 and "block_dim" in data["launches"][1]["tiling"]
    tiling = ascend_sim("tiling", "conv-backward", *small, "--mask", "1,0,1")
    assert tiling.returncode == 0 and "Conv3DBackpropInputV2 arch35 tiling" in tiling.stdout
    refused = ascend_sim("conv-backward", *small)  # grad_weight of a 3x3x3 kernel: the arch35 dw kernel
    assert refused.returncode == 2 and refused.stdout == ""
    assert "output_mask[1]=True (grad_weight) on Ascend950PR_9589" in refused.stderr
