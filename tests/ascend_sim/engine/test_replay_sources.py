"""Replay units are declared against the kernel sources they were verified with: an edited kernel is not replayed.

A unit's keys repeat some of its kernel's logic (dx's valid kernel planes, the anchors' offsets), so a kernel edit
the keys do not mirror could make a hit replay the wrong template (the mutation hunt, docs/testing.md). Each
operator's replay_keys.py holds VERIFIED_SOURCES, the digest of its kernel folder when its units were last checked
in verify mode; another digest leaves the units undeclared, with a warning.
"""
from __future__ import annotations

import importlib
import importlib.util
import warnings
from pathlib import Path

import pytest

from ascend_sim.engine.replay import EditedKernelWarning, kernel_sources_digest, replay_unit

KERNEL_KEYS = ("kernels.conv3d_backprop_input.kernel.arch22.replay_keys",
               "kernels.conv3d_backprop_filter.kernel.replay_keys",
               "kernels.conv3d_v2.kernel.replay_keys",
               "kernels.matmul.kernel.replay_keys")


@pytest.mark.parametrize("name", KERNEL_KEYS)
def test_each_operators_units_were_verified_against_its_kernel_sources(name):
    module = importlib.import_module(name)
    folder = Path(module.__file__).parent
    digest = kernel_sources_digest(folder)
    assert module.VERIFIED_SOURCES == digest, (
        f"{folder} changed since its replay units were verified: check the keys in replay_keys.py against the "
        f"edit, run the operator's tests with ASCEND_REPLAY=verify, then set VERIFIED_SOURCES = {digest!r}")
    declared = module.__loader__.get_source(module.__name__)
    assert declared.count("replay_unit(") == declared.count("verified=VERIFIED_SOURCES"), \
        f"{name}: a unit declared without verified=VERIFIED_SOURCES"


def _kernel(folder: Path, body: str):
    """A one-module kernel folder; its function `step`."""
    folder.mkdir()
    (folder / "kernel.py").write_text(f"def step(api):\n    {body}\n")
    spec = importlib.util.spec_from_file_location(f"kernel_{folder.name}", folder / "kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.step


def test_a_unit_of_the_verified_sources_is_declared(tmp_path):
    step = _kernel(tmp_path / "verified", "return api")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unit = replay_unit("Kernel.step", verified=kernel_sources_digest(tmp_path / "verified"))(step)
    assert unit is not step and unit.unit.method is step


def test_a_unit_of_an_edited_kernel_runs_as_it_is_with_a_warning(tmp_path):
    step = _kernel(tmp_path / "edited", "return api")
    before = kernel_sources_digest(tmp_path / "edited")
    (tmp_path / "edited" / "kernel.py").write_text("def step(api):\n    return api + 1\n")  # the user's edit
    with pytest.warns(EditedKernelWarning, match="edited: the kernel's sources differ .* set VERIFIED_SOURCES"):
        unit = replay_unit("Kernel.step", verified=before)(step)
    assert unit is step


def test_the_digest_follows_every_kernel_file_but_the_keys_and_not_line_ends(tmp_path):
    folder = tmp_path / "kernel"
    folder.mkdir()
    (folder / "api.py").write_bytes(b"x = 1\n")
    (folder / "replay_keys.py").write_text("VERIFIED_SOURCES = 'a'\n")
    digest = kernel_sources_digest(folder)
    (folder / "replay_keys.py").write_text("VERIFIED_SOURCES = 'b'\n")
    assert kernel_sources_digest(folder) == digest
    (folder / "api.py").write_bytes(b"x = 1\r\n")
    assert kernel_sources_digest(folder) == digest
    (folder / "load_a.py").write_text("")
    assert kernel_sources_digest(folder) != digest
