"""Shared test helpers: run a small kernel body on a simulated chip."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.machine.tensor import GmAddr


def run_kernel(body, *arrays, platform="Ascend910B2", block_dim=1, out_bytes=0, **chip_options):
    """Upload `arrays` to GM as in0, in1, ... plus an output `out` of `out_bytes`, run `body(gm_addrs...)`.

    Returns (chip, report); read results from chip.gm["out"].
    """
    chip = Chip(platform, **chip_options)
    addrs = [GmAddr(chip.gm.upload(f"in{i}", a)) for i, a in enumerate(arrays)]
    if out_bytes:
        addrs.append(GmAddr(chip.gm.alloc("out", out_bytes)))
    report = chip.launch(body, block_dim, *addrs)
    return chip, report


def own_records(log):
    """A core's records without those TPipe() and its Destroy issue (the AIC's SetFlag / WaitFlag<M_MTE1> 0-2 and
    the closing PipeBarrier<PIPE_ALL>)."""
    return [r for r in log if not (isinstance(r.params, dict) and str(r.params.get("api", "")).startswith("TPipe."))]


def l1_and_l0a():
    """Inside a kernel: a 64 KiB fp16 tensor in L1 and a 16 KiB one in L0A."""
    from ascend_sim.ascendc import TBuf, TPipe, TPosition
    pipe = TPipe()
    l1, l0a = TBuf(TPosition.A1), TBuf(TPosition.A2)
    pipe.InitBuffer(l1, 64 * 1024)
    pipe.InitBuffer(l0a, 16 * 1024)
    return l1.Get(np.float16), l0a.Get(np.float16)


def mte2_copy(src, nbytes=4096):
    """Inside a kernel: one GM -> L1 DataCopy of `nbytes` from `src` (a core's MTE2 work, to time flags against)."""
    from ascend_sim.ascendc import DataCopy, DataCopyParams, GlobalTensor, TBuf, TPipe, TPosition
    pipe = TPipe()
    l1 = TBuf(TPosition.A1)
    pipe.InitBuffer(l1, nbytes)
    DataCopy(l1.Get(np.float16), GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, nbytes // 32, 0, 0))


def pytest_generate_tests(metafunc):
    """Modules marked both_engines run every test on the exact, the fast and the replay engine (test_engines.py
    compares them record by record)."""
    if metafunc.definition.get_closest_marker("both_engines"):
        metafunc.parametrize("chip_engine", ["exact", "fast", "replay"], indirect=True)


@pytest.fixture(autouse=True)
def chip_engine(request, monkeypatch):
    """The engine a Chip built without one uses: the parameter in both_engines modules, else the default."""
    engine = getattr(request, "param", None)
    if engine is not None:
        monkeypatch.setitem(Chip.__init__.__kwdefaults__, "engine", engine)
    return engine


@pytest.fixture
def debug_shells(monkeypatch):
    """The DebugShell instances `ascend-sim debug` makes during the test, in order (for their debugger state)."""
    from frontends.debugger import shell as debug_shell
    shells = []

    class Keep(debug_shell.DebugShell):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            shells.append(self)
    monkeypatch.setattr(debug_shell, "DebugShell", Keep)
    return shells


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
