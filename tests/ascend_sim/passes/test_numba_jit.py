"""The compiled passes' numba load skips scipy.linalg (numba_jit.py), and leaves numba's and scipy's own use of it
whole: in a fresh process, a compiled pass runs without scipy.linalg imported, then scipy.linalg imports and
numba still compiles np.dot with its BLAS."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import sys
import numpy as np
from kernels import conv3d_backprop_input_v2_run
dy, w = np.ones((1, 16, 2, 4, 4), np.float16), np.ones((16, 16, 1, 1, 1), np.float16)
conv3d_backprop_input_v2_run((1, 16, 2, 4, 4), w, dy, strides=(1,) * 5, pads=(0,) * 6, data_format="NCDHW",
                              engine="fast")
assert "ascend_sim.passes.fast_races" in sys.modules  # the compiled scheduler and race checks ran
assert "numba.np.arraymath" in sys.modules and "scipy.linalg" not in sys.modules, "scipy.linalg was loaded"
import scipy.linalg.cython_blas
from numba import njit
a = np.arange(6.0).reshape(2, 3)
assert (njit(lambda x, y: np.dot(x, y))(a, a.T) == a @ a.T).all()
print("ok")
"""


def test_the_compiled_passes_load_without_scipy_linalg_and_leave_it_importable():
    pytest.importorskip("scipy")  # without scipy numba's BLAS check fails anyway: nothing to skip
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]
