"""The run commands' reference check runs on a second thread alongside the simulation
(frontends/cli/reference_thread.py): concurrently, with numpy's OpenBLAS on one thread, with the bits of a serial
reference, and it still fails a wrong result and raises the reference's own errors."""
import threading

import numpy as np
import pytest

from ascend_sim.machine.blas import blas_thread_count, blas_threads
from frontends.cli import main
from frontends.cli.reference_thread import reference_alongside
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference

# a small dx problem: dy (N, Cout, D, H, W), w (Cout, Cin, kD, kH, kW), dx (N, Cin, D, H, W), stride 1, pad 1
DX_SHAPE = (1, 16, 4, 12, 12)


def _dx_operands(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((1, 24, 4, 12, 12)).astype(np.float16),
            rng.standard_normal((24, 16, 3, 3, 3)).astype(np.float16))


def _dx(dy, w):
    return conv3d_dx_reference(dy, w, DX_SHAPE, (1, 1, 1), (1, 1, 1, 1, 1, 1), precision=np.float32)


def test_the_reference_runs_on_its_own_thread_while_the_body_runs():
    body_started, names = threading.Event(), []

    def reference():
        names.append(threading.current_thread().name)
        assert body_started.wait(timeout=60), "the body never ran while the reference waited for it"
        return np.ones(4)

    with reference_alongside(reference) as pending:
        body_started.set()  # a serial reference would have timed out before the body got here
    check = pending.check(np.ones(4, np.float16), "float16", False)
    assert names == ["reference check"] and check.passed and check.alongside and check.seconds >= 0


def test_none_starts_nothing():
    with reference_alongside(None) as pending:
        assert pending is None


def test_one_blas_thread_for_the_reference_and_the_body_and_the_count_restored():
    if blas_thread_count() is None:
        pytest.skip("numpy's OpenBLAS cannot be queried here")
    seen = []

    def reference():
        seen.append(blas_thread_count())
        return np.ones(4)

    with blas_threads(2):
        with reference_alongside(reference) as pending:
            seen.append(blas_thread_count())
        assert pending.check(np.ones(4, np.float16), "float16", False).passed
        assert blas_thread_count() == 2
    assert seen == [1, 1]


def test_the_reference_has_the_bits_of_a_serial_one_while_the_body_multiplies():
    dy, w = _dx_operands()
    with blas_threads(1):
        serial = _dx(dy, w)
    with reference_alongside(lambda: _dx(dy, w)) as pending:
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
    with reference_alongside(lambda: _dx(dy, w)) as pending:
        pass
    assert pending.check(right, "float16", False).passed
    failed = pending.check(wrong, "float16", False)
    assert not failed.passed and failed.error > failed.tolerance


def test_an_error_of_the_reference_is_raised_by_the_check():
    def reference():
        raise MemoryError("the reference ran out")

    with reference_alongside(reference) as pending:
        pass
    with pytest.raises(MemoryError, match="the reference ran out"):
        pending.check(np.ones(4, np.float16), "float16", False)


RUNS = {  # a command, a small problem of it, and the operator function its simulate() calls
    "conv3d-dx": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"],
                  "kernels.conv3d_backprop_input.operator.conv3d_backprop_input_v2_run"),
    "conv3d-dw": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"],
                  "kernels.conv3d_backprop_filter.operator.conv3d_backprop_filter_v2_run"),
    "conv3d": (["--cin", "16", "--cout", "16", "--dhw", "2,8,8"], "kernels.conv3d_v2.operator.conv3d_v2_run"),
    "matmul": (["--m", "40", "--n", "24", "--k", "48"], "kernels.matmul.run_matmul"),
}


@pytest.mark.parametrize("command", RUNS)
def test_the_command_fails_a_corrupted_result_checked_alongside(command, monkeypatch, capsys):
    """The operator's result with one element changed after the launch: the command's check, whose reference
    ran during that launch, reports FAILED and exits 1; the same run unchanged passes."""
    import importlib
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
    assert "check against the numpy reference: FAILED" in out and "reference check" in out and "alongside it" in out
