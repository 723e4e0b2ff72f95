"""The README's Python snippets run as written (in a temporary directory, so their files land there)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```$", README.read_text(), flags=re.S | re.M)


def test_the_readme_has_python_snippets():
    assert BLOCKS, "README.md has no ```python block"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_snippet_runs(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(BLOCKS[index], f"README.md python block {index + 1}", "exec"), namespace)
    if "trace=" in BLOCKS[index]:  # the dx snippet writes its trace where it runs
        assert (tmp_path / "dx.trace.json").stat().st_size > 0
