"""A scoped limit on the threads of numpy's OpenBLAS, for the simulator's many small matrix products.

Every Mmad is one small float32 GEMM (e.g. 256 x 48 x 128). OpenBLAS runs those on all cores, and its worker
threads keep spinning after each call; on a small or busy machine they compete with the single Python thread
that runs the simulation, and a full run can become several times slower (see docs/performance.md). Limiting
OpenBLAS to one thread for the duration of a run avoids that.

`Chip` does this by default (`Chip(blas_threads=None)` leaves OpenBLAS alone). OpenBLAS picks a different kernel
for one thread than for several, so the last bit of some fp32 sums depends on the thread count: with one thread
the result no longer depends on how many cores the machine has (both are valid fp32 accumulations; the
hardware's own order is a third one). The limit is process-wide while it is in force and the previous value is
restored afterwards. Without a recognisable OpenBLAS it does nothing.
"""
from __future__ import annotations

import ctypes
import glob
import os
from contextlib import contextmanager

_SET_NAMES = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
              "openblas_set_num_threads")
_api = None  # (set, get) once looked up; False when there is no OpenBLAS to control


def _openblas():
    """(set_num_threads, get_num_threads) of the OpenBLAS numpy is linked with, or None."""
    global _api
    if _api is None:
        _api = False
        import numpy as np

        here = os.path.dirname(np.__file__)
        candidates = sorted(glob.glob(os.path.join(here, "..", "numpy.libs", "*openblas*")))
        candidates += sorted(glob.glob(os.path.join(here, ".dylibs", "*openblas*")))
        for path in candidates:
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _SET_NAMES:
                setter = getattr(lib, name, None)
                getter = getattr(lib, name.replace("_set_", "_get_"), None)
                if setter is not None and getter is not None:
                    setter.argtypes, setter.restype = [ctypes.c_int], None
                    getter.argtypes, getter.restype = [], ctypes.c_int
                    _api = (setter, getter)
                    break
            if _api:
                break
    return _api or None


def blas_thread_count() -> int | None:
    """Threads numpy's OpenBLAS uses now, or None when it cannot be queried."""
    api = _openblas()
    return api[1]() if api else None


@contextmanager
def blas_threads(n: int | None):
    """Run the body with numpy's OpenBLAS limited to `n` threads (None: leave it alone)."""
    api = _openblas() if n is not None else None
    if api is None:
        yield
        return
    setter, getter = api
    before = getter()
    setter(int(n))
    try:
        yield
    finally:
        setter(before)


__all__ = ["blas_threads", "blas_thread_count"]
