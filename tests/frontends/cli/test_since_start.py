"""The run commands' "s since start" (frontends/cli/report.py, seconds_since_start): the process's own start, not
that of a shell which exec'd it."""
import shutil
import subprocess
import sys

import pytest

_PRINT = "from frontends.cli.report import seconds_since_start; print(seconds_since_start())"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_process_execd_by_a_shell_does_not_count_the_shells_time():
    # bash -c runs its last command by exec: the process keeps the shell's start time, 2 s before Python starts
    out = subprocess.run(["bash", "-c", f'sleep 2; exec "{sys.executable}" -c "{_PRINT}"'], capture_output=True,
                         text=True, check=True).stdout
    assert 0.0 <= float(out) < 1.5


def test_a_plain_process_counts_from_its_start():
    out = subprocess.run([sys.executable, "-c", f"import time; time.sleep(0.3); {_PRINT}"], capture_output=True,
                         text=True, check=True).stdout
    assert 0.3 <= float(out) < 1.5
