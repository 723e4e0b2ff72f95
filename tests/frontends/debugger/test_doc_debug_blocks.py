"""The `ascend-sim debug` sessions shown in README.md and docs/debugging.md run as written: each fenced block whose
first line is `$ ascend-sim debug ...` is run with its `(ascend-sim) ` lines as the script, and no command may answer
with an error (every reply of the prompt is checked)."""
import io
import shlex
import sys
from pathlib import Path

import pytest
from paths import ROOT

from frontends.cli import main

PROMPT = "(ascend-sim) "


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced (```) block, dedented by its fence's indent (blocks in list items are indented)."""
    blocks, current, indent = [], None, 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if current is None and stripped.startswith("```"):
            current, indent = [], len(line) - len(stripped)
        elif current is not None and stripped == "```":
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(line[indent:])
    return blocks


def debug_blocks(path: Path) -> list[tuple[str, list[str], list[str]]]:
    """(where, the command's argv, the prompt's commands) of each `$ ascend-sim debug` block."""
    blocks = []
    for lines in fenced_blocks(path.read_text()):
        if lines and lines[0].startswith("$ ascend-sim debug "):
            commands = [line[len(PROMPT):] for line in lines if line.startswith(PROMPT)]
            blocks.append((f"{path.name}: {lines[0]}", shlex.split(lines[0])[2:], commands))
    return blocks


BLOCKS = debug_blocks(ROOT / "README.md") + debug_blocks(ROOT / "docs" / "debugging.md")


def test_both_pages_show_debug_sessions():
    pages = {where.split(":")[0] for where, _, _ in BLOCKS}
    assert pages == {"README.md", "debugging.md"}
    operators = {argv[1] for _, argv, _ in BLOCKS}
    assert {"matmul", "conv3d-dx"} <= operators


@pytest.mark.parametrize("where, argv, commands", BLOCKS, ids=[where for where, _, _ in BLOCKS])
def test_a_documented_session_runs_without_an_error(where, argv, commands, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(commands) + "\n"))
    assert main(argv) == 0
    out = capsys.readouterr().out
    replies = out.split(PROMPT)[1:]
    assert [reply.splitlines()[0] for reply in replies] == commands  # each command ran, in order
    for command, reply in zip(commands, replies):
        assert not any(line.startswith("error:") for line in reply.splitlines()[1:]), (command, reply)
