"""Progress of long runs (frontends/cli/progress.py): on a terminal, the estimate and a tqdm bar of the instructions
issued; nothing when the output is not a terminal (as in these tests' captured output)."""
from __future__ import annotations

import numpy as np

from ascend_sim.engine import chip
from frontends.cli import progress
from frontends.cli.app import main
from kernels import conv3d_backprop_input_v2_run
from kernels.common.operands import stand_in
from kernels.common.size_guard import ESTIMATE_OBSERVERS

SMALL = ["conv3d-dx", "--cin", "16", "--cout", "16", "--dhw", "2,8,8", "--timing-only"]


def test_a_long_run_on_a_terminal_shows_the_estimate_and_a_bar(monkeypatch, capsys):
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    monkeypatch.setattr(progress, "LONG_RUN", 10)
    assert main(SMALL) == 0
    err = capsys.readouterr().err
    assert "estimated ~" in err and "instructions: a long run" in err
    assert "instr/s" in err or " instr" in err  # tqdm's count and rate
    assert not ESTIMATE_OBSERVERS and not chip.LAUNCH_OBSERVERS  # removed after the run


def test_the_bar_counts_the_instructions_issued(monkeypatch):
    monkeypatch.setattr(progress, "on_terminal", lambda: True)
    monkeypatch.setattr(progress, "LONG_RUN", 10)
    with progress.LaunchProgress() as shown:
        run = conv3d_backprop_input_v2_run((1, 16, 2, 8, 8), stand_in((16, 16, 3, 3, 3), np.float16),
                                           stand_in((1, 16, 2, 8, 8), np.float16), strides=(1,) * 5,
                                           pads=(1,) * 6, data_format="NCDHW", execute=False)
    assert shown.bar is not None and shown.bar.n == run.report.instructions


def test_no_progress_when_not_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LONG_RUN", 10)
    assert main(SMALL) == 0
    assert "estimated" not in capsys.readouterr().err
