"""Reading the `ascend-sim debug` prompt's lines on a terminal: line editing, a history kept across sessions and tab
completion of commands, tensor names, GM allocations and API calls, with prompt_toolkit.

The history file is $ASCEND_SIM_HISTORY when set (the tests use it), else debug_history under $XDG_STATE_HOME/ascend-sim
(default ~/.local/state/ascend-sim). A history that cannot be written (a read-only home) is kept in memory only.
Piped stdin never comes here: DebugShell.interact reads it as a script.
"""
from __future__ import annotations

import os
from pathlib import Path

HISTORY_ENV = "ASCEND_SIM_HISTORY"


def history_path() -> Path:
    override = os.environ.get(HISTORY_ENV)
    if override:
        return Path(override)
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "ascend-sim" / "debug_history"


def _history():
    from prompt_toolkit.history import FileHistory, InMemoryHistory
    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        return InMemoryHistory()
    return FileHistory(str(path))


def _completer(commands: list[str], arguments: list[str]):
    """Commands for the first word, the run's names (tensors, GM allocations, API calls, ...) for the others."""
    from prompt_toolkit.completion import Completer, Completion

    class ShellCompleter(Completer):
        def get_completions(self, document, complete_event):
            before = document.text_before_cursor
            word = before.split(" ")[-1]
            choices = commands if " " not in before.lstrip() else arguments
            for choice in choices:
                if choice.startswith(word) and choice != word:
                    yield Completion(choice, start_position=-len(word))
    return ShellCompleter()


def terminal_reader(prompt: str, commands: list[str], arguments: list[str]):
    """A function returning the next line typed at `prompt` (EOFError at Ctrl-D, KeyboardInterrupt at Ctrl-C)."""
    from prompt_toolkit import PromptSession
    session = PromptSession(history=_history(), completer=_completer(sorted(commands), sorted(set(arguments))),
                            complete_while_typing=False)
    return lambda: session.prompt(prompt)
