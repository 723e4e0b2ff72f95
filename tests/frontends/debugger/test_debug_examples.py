"""The two planted-bug examples (examples/debug_missing_waitflag.py, examples/debug_wrong_offset.py) and the
post-mortem of `ascend-sim debug`: what the debugger reports, checked against arithmetic done here."""
import importlib.util
import io
import sys

import numpy as np
import pytest
from paths import ROOT

from frontends.cli import main

EXAMPLES = ROOT / "examples"
PROMPT = "(ascend-sim) "


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def line_of(name: str, text: str) -> int:
    """The line number of the first line of examples/<name>.py containing `text`."""
    lines = (EXAMPLES / f"{name}.py").read_text().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if text in line)


def test_missing_waitflag_example(capsys):
    example = load("debug_missing_waitflag")
    assert example.main([]) == 1
    out = capsys.readouterr().out
    mmad_line = line_of("debug_missing_waitflag", "Mmad(co1.Get")
    assert f"faulting record (not applied): core 0 M Mmad at debug_missing_waitflag.py:{mmad_line}" in out
    assert "race between pipes: read of L0A" in out
    assert "flags set on core 0 and never waited (besides TPipe's M_MTE1 0-2): {'MTE1_M 0': 1}" in out
    assert "=> the Mmad does not wait for MTE1_M 0" in out
    assert example.main(["--fixed"]) == 0
    assert "no fault; C against numpy: PASSED" in capsys.readouterr().out


def test_wrong_offset_example(capsys):
    example = load("debug_wrong_offset")
    assert example.main([]) == 1
    out = capsys.readouterr().out
    n, k = 32, 48
    assert "the first: c[32, 0] = " in out
    # the bug as arithmetic: the tile of rows 32.. reads A's flat elements from 32 * N
    flat = 32 * n + np.arange(k)
    first, last = divmod(int(flat[0]), k), divmod(int(flat[-1]), k)
    assert f"the A elements it was computed from: a{list(first)} .. a{list(last)} ({k} elements)" in out
    load_line = line_of("debug_wrong_offset", "DataCopy(a1.Get")
    assert f"=> the load at debug_wrong_offset.py:{load_line} starts at element {32 * n} of A" in out
    dbg, a, b = example.run()
    rows = a.reshape(-1)[32 * n:32 * n + 32 * k].reshape(32, k)  # what the buggy tile multiplies
    wrong = (rows.astype(np.float32) @ b.astype(np.float32))
    assert np.allclose(dbg.tensor("c")[32:].astype(np.float32), wrong, rtol=2e-3, atol=2e-2)
    assert example.main(["--fixed"]) == 0
    assert "C against numpy: PASSED" in capsys.readouterr().out


@pytest.fixture
def buggy_matmul(monkeypatch):
    """`ascend-sim matmul` running the missing-WaitFlag kernel (one tile: M, N, K at most 128)."""
    example = load("debug_missing_waitflag")
    monkeypatch.setattr("kernels.matmul.operator.matmul_kernel", example.one_tile_matmul)
    return example


def test_the_prompt_opens_post_mortem_on_a_fault(buggy_matmul, monkeypatch, capsys, debug_shells):
    script = "where\ninfo flags\nprint c[0, 0, 0]\nreverse-step\nstep\nstep\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    shells = debug_shells
    assert main(["debug", "matmul", "--m", "32", "--n", "32", "--k", "64"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    head, *chunks = captured.out.split(PROMPT)
    dbg = shells[-1].dbg
    mmad_line = line_of("debug_missing_waitflag", "Mmad(co1.Get")
    head = head.splitlines()
    assert head[0].startswith("The run stopped in a simulated kernel fault: [core 0, M Mmad, at "
                              f"debug_missing_waitflag.py:{mmad_line}] race between pipes")
    assert head[1] == (f"Post-mortem: all {len(dbg)} records that ran are applied; the state is the one just "
                       "before the faulting instruction.")
    assert head[2] == f"The faulting record (not applied): core 0 pipe M Mmad  at debug_missing_waitflag.py:{mmad_line}"
    replies = [chunk.splitlines()[1:] for chunk in chunks]
    assert replies[0][0].startswith(f"#{len(dbg) - 1} core 0 pipe MTE1 SetFlag")
    assert replies[1] == ["core 0 flags:", "  M_MTE1 0 = 1", "  M_MTE1 1 = 1", "  M_MTE1 2 = 1", "  MTE1_M 0 = 1"]
    assert replies[2][0].startswith("c[0, 0, 0] = nan  (GM C")  # the tensors by name after a fault too
    assert replies[4][0].startswith(f"#{len(dbg) - 1} core 0")  # reverse-step then step: back at the end
    assert replies[5] == [f"The run ended: all {len(dbg)} records applied.",
                          f"It ended in a fault: {' '.join(str(dbg.fault).split())}"]
    # the state at the end of the replay is the live chip's at the fault (it ran every record before it)
    chip = dbg.chip
    for core in chip.cores:
        for name, buf in core.buffers.items():
            assert np.array_equal(dbg.buffer(core.index, name), buf.data), name
    for name, buf in chip.gm.allocations.items():
        assert np.array_equal(dbg.gm(name), buf.data, equal_nan=True) or np.array_equal(
            dbg.gm(name).view(np.uint8), buf.data.view(np.uint8)), name


def test_a_fault_before_any_launch_is_still_one_line(monkeypatch, capsys):
    assert main(["debug", "matmul", "--m", "32", "--timing-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error: argument --timing-only" in err


@pytest.mark.parametrize("section, example", [("## Finding a missing WaitFlag", "debug_missing_waitflag"),
                                              ("## Finding a wrong GM offset", "debug_wrong_offset")])
def test_the_walkthroughs_in_docs_debugging_are_what_the_prompt_prints(section, example, monkeypatch, capsys):
    text = (EXAMPLES.parent / "docs" / "debugging.md").read_text()
    lines = text.split(section, 1)[1].split("```\n", 2)[1].splitlines()
    assert lines[0] == f"$ python examples/{example}.py --prompt"
    commands = [line[len(PROMPT):] for line in lines if line.startswith(PROMPT)]
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(commands) + "\n"))
    assert load(example).main(["--prompt"]) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in lines[1:]:
        assert line in printed, line
