"""The CLI's reference checks run numpy's OpenBLAS on one thread, as the simulation does (frontends/cli/report.py
timed_check): its spinning threads tripled the default conv3d-dx check's CPU time."""
import numpy as np
import pytest

from ascend_sim.machine.blas import blas_thread_count, blas_threads
from frontends.cli.report import timed_check


def test_the_reference_runs_on_one_blas_thread_and_the_count_is_restored():
    if blas_thread_count() is None:
        pytest.skip("numpy's OpenBLAS cannot be queried here")
    seen = []

    def reference():
        seen.append(blas_thread_count())
        return np.ones(4)

    with blas_threads(2):
        check = timed_check(reference, np.ones(4, np.float16), "float16", False)
        assert blas_thread_count() == 2
    assert seen == [1] and check.passed and check.seconds >= 0
