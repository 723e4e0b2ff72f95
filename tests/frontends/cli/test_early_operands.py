"""A run command's operands drawn on a thread while it imports and plans (frontends/cli/early_operands.py): the bits
of the draw on the caller's thread, drawn while the caller goes on, only for small operands with a core to spare,
its errors raised in the caller; conv3d-dx starts it before it imports its operator, and imports that with the
collector paused (frontends/cli/collector.py)."""
import gc
import json
import subprocess
import sys
import threading

import ml_dtypes
import numpy as np
import pytest
from paths import ROOT

from frontends.cli import collector, early_operands
from frontends.cli.early_operands import EARLY_DRAW_BYTES, EarlyOperands
from frontends.cli.report import random_operands

SHAPES = ((1, 24, 4, 12, 12), None, (24, 16, 3, 3, 3))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("seed", [0, 7])
def test_the_operands_drawn_on_a_thread_have_the_bits_of_the_draw_on_the_callers(dtype, seed):
    early = EarlyOperands(seed, dtype, False, *SHAPES, alongside=True).result()
    here = EarlyOperands(seed, dtype, False, *SHAPES, alongside=False).result()
    plain = random_operands(seed, dtype, False, *SHAPES)
    assert early[1] is None and here[1] is None
    for a, b, c in zip(early[::2], here[::2], plain[::2]):
        assert a.dtype == np.dtype(dtype) and a.shape == c.shape
        assert a.tobytes() == c.tobytes() and b.tobytes() == c.tobytes()


def test_the_draw_runs_on_another_thread_while_the_caller_goes_on(monkeypatch):
    go_on, seen = threading.Event(), {}

    def draw(*arguments):  # waits for the caller, which gets here only if the constructor did not draw
        seen.update(thread=threading.current_thread(), released=go_on.wait(timeout=60))
        return ["drawn"]

    monkeypatch.setattr(early_operands, "random_operands", draw)
    operands = EarlyOperands(0, np.float16, False, (2, 3), alongside=True)
    go_on.set()
    assert operands.result() == ["drawn"]
    assert seen["released"] and seen["thread"] is not threading.main_thread() and seen["thread"].daemon


def test_result_draws_them_itself_when_no_thread_did(monkeypatch):
    calls = []
    monkeypatch.setattr(early_operands, "random_operands", lambda *a: calls.append(threading.current_thread()) or [1])
    operands = EarlyOperands(0, np.float16, False, (2, 3), alongside=False)
    assert calls == []
    assert operands.result() == [1] and operands.result() == [1]
    assert calls == [threading.main_thread()]


def _started(monkeypatch, *arguments, spare=True, **keywords) -> bool:
    """Whether EarlyOperands started its thread, with spare_core() answering `spare`."""
    monkeypatch.setattr(early_operands, "spare_core", lambda: spare)
    started = []
    monkeypatch.setattr(early_operands.threading.Thread, "start", lambda self: started.append(self))
    EarlyOperands(*arguments, **keywords)
    return bool(started)


def test_a_thread_only_for_small_operands_with_a_core_to_spare_and_data(monkeypatch):
    small = (1, 64, 8, 56, 56)  # the default conv3d-dx dy: 12.8 MB drawn in float64
    assert _started(monkeypatch, 0, np.float16, False, small, None)
    assert not _started(monkeypatch, 0, np.float16, False, small, spare=False)
    assert not _started(monkeypatch, 0, np.float16, True, small)  # timing-only: no data
    elements = EARLY_DRAW_BYTES // 8
    assert _started(monkeypatch, 0, np.float16, False, (elements,))
    assert not _started(monkeypatch, 0, np.float16, False, (elements // 2,), (elements // 2 + 1,))
    assert not _started(monkeypatch, 0, np.float16, False, small, max_memory=8 * np.prod(small) - 1)
    assert _started(monkeypatch, 0, np.float16, False, small, max_memory=8 * np.prod(small))


def test_an_error_of_the_threads_draw_is_raised_by_result_and_printed_by_no_thread(monkeypatch):
    hooked = []
    monkeypatch.setattr(threading, "excepthook", hooked.append)
    operands = EarlyOperands(0, np.float16, False, (2, -3), alongside=True)
    with pytest.raises(ValueError, match="negative"):
        operands.result()
    assert hooked == []


def test_the_collector_is_paused_for_the_body_and_on_again_after_it():
    assert gc.isenabled()
    collections = []
    callback = lambda phase, info: phase == "start" and collections.append(info["generation"])  # noqa: E731
    gc.callbacks.append(callback)
    try:
        with collector.paused():
            assert not gc.isenabled()
            garbage = [[] for _ in range(50_000)]  # far past the youngest generation's threshold
        assert gc.isenabled() and collections == [] and len(garbage) == 50_000
    finally:
        gc.callbacks.remove(callback)
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


IMPORT_ORDER_PROBE = """
import gc, json, sys
import frontends.cli.early_operands as early_operands
events = []
early_operands.spare_core = lambda: True  # as on a machine with a core to spare
real_init = early_operands.EarlyOperands.__init__
def init(self, *args, **kwargs):
    events.append(["draw", gc.isenabled()])
    real_init(self, *args, **kwargs)
early_operands.EarlyOperands.__init__ = init
class Recorder:  # sees each module's first import, and whether the collector was on then
    def find_spec(self, name, path=None, target=None):
        events.append([name, gc.isenabled()])
        return None
sys.meta_path.insert(0, Recorder())
from frontends.cli.app import main
code = main(["conv3d-dx", "--cin", "16", "--cout", "16", "--dhw", "2,8,8"])
print(json.dumps({"code": code, "events": events}), file=sys.stderr)
"""


def test_conv3d_dx_starts_the_draw_before_it_imports_its_operator_and_imports_it_with_the_collector_paused():
    """The parse imports neither the planner nor the simulator (--route reads the routes' own module), so the draw
    overlaps their imports; those set off no collection."""
    run = subprocess.run([sys.executable, "-c", IMPORT_ORDER_PROBE], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    probe = json.loads(run.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0, run.stderr
    names = [name for name, _ in probe["events"]]
    draw = names.index("draw")
    for heavy in ("kernels.conv3d_backprop_input.plan", "kernels.conv3d_backprop_input.operator",
                  "ascend_sim.ascendc", "ascend_sim.engine.chip", "tiling.conv3d_backprop_input.arch22.model"):
        assert names.index(heavy) > draw, heavy
    check = ("kernels.conv3d_backprop_input.reference", "kernels.common.taps")  # the check's, once the data is there
    after = [(name, enabled) for name, enabled in probe["events"][draw + 1:]
             if name.startswith(("kernels.", "ascend_sim.", "tiling.")) and name not in check]
    assert after and all(not enabled for _, enabled in after), [name for name, enabled in after if enabled]
