"""`ascend-sim debug conv-backward --launch G`: the debugger replays that gradient's launch (its kernel's API calls
are breakpoints), as a real process; a launch the mask does not compute is refused by name."""
import subprocess
import sys

import pytest
from paths import ROOT

PROMPT = "(ascend-sim) "
PROBLEM = ["--cin", "8", "--cout", "16", "--dhw", "2,6,6"]


def debug(argv: list[str], script: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "frontends.cli", "debug", "conv-backward", *PROBLEM, *argv], cwd=ROOT,
                          input=script, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("launch, kernel", [("grad_input", "Conv3DBackpropInputV2"),
                                            ("grad_weight", "Conv3DBackpropFilterV2")])
def test_debug_one_launch_stops_at_its_iterate(launch, kernel):
    done = debug(["--launch", launch], "break Iterate\ncontinue\nfinish\ngoto end\nprint gm y [0:2] dtype=float32\n")
    assert done.returncode == 0, done.stderr
    head, *replies = done.stdout.split(PROMPT)
    assert f"the {launch} launch: {kernel}" in head.splitlines()[0]
    replies = [reply.splitlines()[1:] for reply in replies]
    assert replies[0][0].startswith("Breakpoint 1: api=Iterate (") and "0 matching" not in replies[0][0]
    assert replies[1][0].startswith("Breakpoint 1, #") and replies[1][-1].strip().endswith("Iterate")
    assert replies[2][0] == "Run till exit from Iterate"
    assert replies[4][0].startswith("gm y[0:2]: (2,)")


def test_a_launch_the_mask_skips_is_refused():
    done = debug(["--mask", "0,1,0", "--launch", "grad_input"], "")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("ascend-sim debug conv-backward: error: argument --launch: grad_input is not computed "
                           "with --mask 0,1,0; choose from grad_weight\n")
