"""`ascend-sim debug conv3d-dw`: the dw API's calls (kernels/conv3d_backprop_filter/kernel/api.py, @api_call) are
breakpoints, `next` / `finish` step over and out of them, and the tensors are x, out_backprop and y (dw), checked
against the float64 reference (a real process, as a user runs it)."""
import subprocess
import sys

from paths import ROOT

PROMPT = "(ascend-sim) "
SCRIPT = """break api=NoSuchCall
break Iterate
continue
finish
goto end
check
print y[3, 2, 1, 1, 1]
"""


def test_debug_conv3d_dw_stops_at_iterate_and_checks_dw():
    done = subprocess.run([sys.executable, "-m", "frontends.cli", "debug", "conv3d-dw", "--cin", "16", "--cout", "16",
                           "--dhw", "2,6,6"], cwd=ROOT, input=SCRIPT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    head, *replies = done.stdout.split(PROMPT)
    assert head.startswith("Conv3DBackpropFilterV2 float16")
    replies = [reply.splitlines()[1:] for reply in replies]
    calls = replies[0][0].split("calls: ")[1].split(", ")
    assert {"Iterate", "GetTensorC", "IterateAll"} <= set(calls)  # the calls that issue records
    assert replies[1][0].startswith("Breakpoint 1: api=Iterate (") and "0 matching" not in replies[1][0]
    assert replies[2][0].startswith("Breakpoint 1, #") and replies[2][-1].strip().endswith("Iterate")
    assert replies[3][0] == "Run till exit from Iterate"
    assert replies[5][0].startswith("check y at the end of the run: PASSED")
    assert replies[6][0].startswith("y[3, 2, 1, 1, 1] = ")
