"""The `ascend-sim debug` prompt on a terminal (prompt_toolkit, frontends/debugger/prompt.py), driven through a
pseudo-terminal: up-arrow recalls the last command, tab completes a command and a tensor name, and the history
outlives the session (in the file $ASCEND_SIM_HISTORY names)."""
import os
import sys
from pathlib import Path

import pexpect
import pytest
from paths import ROOT

UP, TAB = "\x1b[A", "\t"
PROMPT = "(ascend-sim)"  # prompt_toolkit draws the space after it as a cursor move
ARGV = ["-m", "frontends.cli", "debug", "matmul", "--m", "64", "--n", "32", "--k", "32"]


def spawn(history: Path) -> pexpect.spawn:
    env = {**os.environ, "ASCEND_SIM_HISTORY": str(history), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, ARGV, cwd=str(ROOT), env=env, encoding="utf-8", timeout=30,
                          dimensions=(40, 200))
    child.expect_exact("`help` lists the commands.")
    child.expect_exact(PROMPT)
    return child


@pytest.mark.skipif(sys.platform == "win32", reason="pexpect needs a POSIX pseudo-terminal")
def test_up_arrow_tab_completion_and_history_across_sessions(tmp_path):
    history = tmp_path / "history"
    child = spawn(history)
    child.send("print 6 * 7\r")
    child.expect_exact("42\r\n")
    child.expect_exact(PROMPT)
    child.send(UP + "\r")  # the last command again
    child.expect_exact("42\r\n")
    child.expect_exact(PROMPT)
    child.send("goto end\r")
    child.expect_exact(PROMPT)
    child.send("who-w" + TAB)  # completes the command ...
    child.send(" c[0, 1, 2]\r")
    child.expect_exact("c[0, 1, 2] = ")
    child.expect_exact("came from:")
    child.expect_exact(PROMPT)
    child.send("print c[0, 1, 2]\r")
    child.expect_exact(PROMPT)
    child.send("quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "who-wrote c[0, 1, 2]" in history.read_text()

    again = spawn(history)  # a new session: up-arrow reaches the last session's commands
    again.send(UP + UP + "\r")  # quit, then `print c[0, 1, 2]`
    again.expect_exact("c[0, 1, 2] = ")
    again.expect_exact(PROMPT)
    again.send("q" + TAB + "\r")  # `q` is itself a command (quit): tab offers quit; either way it ends
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0


def test_completion_offers_commands_first_then_the_runs_names():
    from prompt_toolkit.document import Document

    from frontends.debugger.prompt import _completer
    complete = _completer(["who-wrote", "watch", "where", "print"], ["out_backprop", "dy", "filter", "y"])

    def offered(text):
        return [c.text for c in complete.get_completions(Document(text), None)]
    assert offered("who-w") == ["who-wrote"]
    assert offered("w") == ["who-wrote", "watch", "where"]
    assert offered("print o") == ["out_backprop"] and offered("print d") == ["dy"]
    assert offered("print who") == []  # arguments are names of the run, not commands


def test_history_file_follows_the_environment(monkeypatch, tmp_path):
    from frontends.debugger.prompt import HISTORY_ENV, history_path
    monkeypatch.setenv(HISTORY_ENV, str(tmp_path / "h"))
    assert history_path() == tmp_path / "h"
    monkeypatch.delenv(HISTORY_ENV)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert history_path() == tmp_path / "ascend-sim" / "debug_history"
