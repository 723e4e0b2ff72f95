"""The run commands' reference check is computed by a child Python process alongside the simulation
(frontends/cli/reference_alongside.py): concurrently, with numpy's OpenBLAS on one thread, with the bits of a
serial reference; it still fails a wrong result, raises the reference's own errors, reports a child that died,
and is stopped (its task file removed) when the launch fails. The tasks are module-level functions: the child
imports this module to run them."""
import os
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from ascend_sim.machine.blas import blas_thread_count, blas_threads
from frontends.cli import main
from frontends.cli.reference_alongside import reference_alongside
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference

# a small dx problem: dy (N, Cout, D, H, W), w (Cout, Cin, kD, kH, kW), dx (N, Cin, D, H, W), stride 1, pad 1
DX_SHAPE = (1, 16, 4, 12, 12)


def _dx_operands(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((1, 24, 4, 12, 12)).astype(np.float16),
            rng.standard_normal((24, 16, 3, 3, 3)).astype(np.float16))


def _dx(dy, w):
    return conv3d_dx_reference(dy, w, DX_SHAPE, (1, 1, 1), (1, 1, 1, 1, 1, 1), precision=np.float32)


def _pid_once_the_flag_is_there(flag):
    deadline = time.monotonic() + 60
    while not Path(flag).exists():  # a reference computed before or after the body would wait in vain
        if time.monotonic() > deadline:
            raise TimeoutError("the body never ran while the reference waited for it")
        time.sleep(0.01)
    return np.array([os.getpid()], np.float64)


def _blas_threads_seen():
    return np.array([blas_thread_count()], np.float64)


def _raise(error):
    raise error


class _Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("not this one")


def _raise_unpicklable():
    raise _Unpicklable("odd")


def _sleep_after_writing_the_pid(path):
    Path(path).write_text(str(os.getpid()))
    time.sleep(120)


@pytest.fixture
def task_dir(tmp_path, monkeypatch):
    """Where the task files go: empty again once each reference is collected or stopped."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tasks"))
    (tmp_path / "tasks").mkdir()
    return tmp_path / "tasks"


def test_the_reference_is_computed_in_another_process_while_the_body_runs(tmp_path, task_dir):
    flag = tmp_path / "body started"
    with reference_alongside(partial(_pid_once_the_flag_is_there, str(flag)), alongside=True) as pending:
        assert len(list(task_dir.iterdir())) == 2  # the task's file and the result's
        flag.touch()
    check = pending.check(np.array([os.getpid()], np.float16), "float16", False)
    assert pending.expected()[0] != os.getpid()  # computed in the child
    assert check.alongside and check.seconds >= 0 and list(task_dir.iterdir()) == []


def _large():
    return np.arange(2_000_000, dtype=np.float64)  # 16 MB: many times a pipe's buffer


def test_the_child_ends_without_waiting_for_its_result_to_be_read():
    """The result goes through a file: the child is done while the body (the launch) still runs, so neither the
    transfer nor the child's exit waits for the body's end (through a pipe, the child stopped at its first 64 KiB)."""
    with reference_alongside(_large, alongside=True) as pending:
        deadline = time.monotonic() + 60
        while pending._child.poll() is None:
            assert time.monotonic() < deadline, "the child did not end while the body ran"
            time.sleep(0.01)
        assert pending._child.returncode == 0
    assert np.array_equal(pending.expected(), _large())


def _pid():
    return np.array([os.getpid()], np.float64)


def test_without_a_core_to_spare_the_reference_is_computed_after_the_body(task_dir):
    order = []

    def reference():  # in this process: no pickling needed
        order.append("reference")
        return _pid()

    with reference_alongside(reference, alongside=False) as pending:
        order.append("body")
        assert list(task_dir.iterdir()) == []  # no task written, no child
    check = pending.check(np.array([os.getpid()], np.float16), "float16", False)
    assert order == ["body", "reference"] and pending.expected()[0] == os.getpid()
    assert not check.alongside and check.passed


def _ones_after(seconds):
    time.sleep(seconds)
    return np.ones(4)


@pytest.mark.parametrize("alongside", [True, False], ids=["alongside", "after"])
def test_the_check_time_is_the_references_and_the_comparisons(alongside):
    """Counted once: the reference's own 0.5 s (not again the wait for it) and the comparison's few microseconds."""
    with reference_alongside(partial(_ones_after, 0.5), alongside=alongside) as pending:
        pass
    check = pending.check(np.ones(4, np.float16), "float16", False)
    assert 0.5 <= check.seconds < 0.9 and check.alongside is alongside


@pytest.mark.parametrize("load, cores, spare", [(0.4, 2, True), (1.9, 2, True), (2.0, 2, False), (8.5, 2, False),
                                                (3.0, 4, True)])
def test_a_core_is_spare_below_the_load_average(load, cores, spare, monkeypatch):
    from frontends.cli import reference_alongside as module
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert module.spare_core() is spare


def test_without_a_load_average_a_second_core_is_enough(monkeypatch):
    from frontends.cli import reference_alongside as module
    monkeypatch.delattr(os, "getloadavg")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert module.spare_core()


def test_none_starts_nothing():
    with reference_alongside(None) as pending:
        assert pending is None


def test_the_reference_runs_on_one_blas_thread_and_the_parents_count_is_untouched():
    if blas_thread_count() is None:
        pytest.skip("numpy's OpenBLAS cannot be queried here")
    with blas_threads(2):
        with reference_alongside(_blas_threads_seen, alongside=True) as pending:
            assert blas_thread_count() == 2
        assert pending.expected().tolist() == [1.0] and blas_thread_count() == 2


def test_the_reference_has_the_bits_of_a_serial_one_while_the_body_multiplies():
    dy, w = _dx_operands()
    with blas_threads(1):
        serial = _dx(dy, w)
    with reference_alongside(partial(_dx, dy, w), alongside=True) as pending:
        a = np.random.default_rng(1).standard_normal((256, 256), dtype=np.float32)
        for _ in range(200):  # the simulation's Mmads are float32 GEMMs on the same OpenBLAS
            a = (a @ a) / 256
    alongside = pending.expected()
    assert alongside.dtype == serial.dtype and np.array_equal(alongside.view(np.uint32), serial.view(np.uint32))


def test_a_corrupted_result_fails_the_check_and_the_true_one_passes():
    dy, w = _dx_operands()
    with blas_threads(1):
        right = _dx(dy, w).astype(np.float16)
    wrong = right.copy()
    wrong[0, 3, 2, 5, 7] += 0.25  # one element of 9,216 off by 0.25 (rms of dx is about 10)
    with reference_alongside(partial(_dx, dy, w), alongside=True) as pending:
        pass
    assert pending.check(right, "float16", False).passed
    failed = pending.check(wrong, "float16", False)
    assert not failed.passed and failed.error > failed.tolerance


@pytest.mark.parametrize("task, raised, text", [
    (partial(_raise, MemoryError("the reference ran out")), MemoryError, "the reference ran out"),
    (_raise_unpicklable, RuntimeError, "_Unpicklable: odd"),
    (partial(os._exit, 3), RuntimeError, "the reference check's process failed: exit status 3"),
], ids=["its error", "an error that does not pickle", "a child that died"])
def test_a_failed_reference_is_raised_by_the_check(task, raised, text, task_dir):
    with reference_alongside(task, alongside=True) as pending:
        pass
    with pytest.raises(raised, match=text):
        pending.check(np.ones(4, np.float16), "float16", False)
    assert list(task_dir.iterdir()) == []


def test_a_failed_launch_stops_the_reference(tmp_path, task_dir):
    pid_file = tmp_path / "pid"
    with pytest.raises(ValueError, match="the launch failed"):
        with reference_alongside(partial(_sleep_after_writing_the_pid, str(pid_file)), alongside=True):
            deadline = time.monotonic() + 60
            while not pid_file.exists() or not pid_file.read_text():
                assert time.monotonic() < deadline
                time.sleep(0.01)
            raise ValueError("the launch failed")
    with pytest.raises(ProcessLookupError):  # stopped and reaped
        os.kill(int(pid_file.read_text()), 0)
    assert list(task_dir.iterdir()) == []


RUNS = {  # a command, a small problem of it, and the operator function its simulate() calls
    "conv3d-dx": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"],
                  "kernels.conv3d_backprop_input.operator.conv3d_backprop_input_v2_run"),
    "conv3d-dw": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"],
                  "kernels.conv3d_backprop_filter.operator.conv3d_backprop_filter_v2_run"),
    "conv3d": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"], "kernels.conv3d_v2.operator.conv3d_v2_run"),
    "matmul": (["--m", "40", "--n", "24", "--k", "48"], "kernels.matmul.run_matmul"),
}


@pytest.mark.parametrize("spare", [True, False], ids=["alongside", "after"])
@pytest.mark.parametrize("command", RUNS)
def test_the_command_fails_a_corrupted_result(command, spare, monkeypatch, capsys):
    """The operator's result with one element changed after the launch: the command's check, whose reference
    ran during that launch (or after it, without a core to spare), reports FAILED and exits 1; the same run
    unchanged passes."""
    import importlib

    from frontends.cli import reference_alongside as module
    monkeypatch.setattr(module, "spare_core", lambda: spare)
    flags, target = RUNS[command]
    module_name, name = target.rsplit(".", 1)
    module = importlib.import_module(module_name)
    real = getattr(module, name)

    def corrupted(*args, **kwargs):
        run = real(*args, **kwargs)
        run.result.reshape(-1)[:1] += 64  # the output is contiguous: reshape is a view of it
        return run

    assert main([command, *flags]) == 0
    assert "PASSED" in capsys.readouterr().out
    monkeypatch.setattr(module, name, corrupted)
    assert main([command, *flags]) == 1
    out = capsys.readouterr().out
    assert "check against the numpy reference: FAILED" in out and "reference check" in out
    assert ("alongside it" in out) is spare
