"""numba's `njit` for the compiled passes, with numba's first load made cheaper.

The first call of a cached numba function in a process loads numba's CPU target, whose `numba.np.arraymath`
checks at import whether a BLAS is there by importing `scipy.linalg.cython_blas`: that import saved 0.15-0.2 s
of CPU when hidden, about a third of what loading the compiled passes costs a process (docs/performance.md,
"auto's compiled rule"). The passes use no BLAS in compiled code (no np.dot, np.linalg), so arraymath is
imported here with that module hidden: its flag then says "no BLAS", which only makes numba's np.correlate and
np.convolve use their own inner product loop in this process; numba's np.dot and np.linalg still import scipy
when they are compiled (`ensure_blas` runs again then), and scipy stays importable. Nothing is hidden when
scipy.linalg or arraymath is already loaded (nothing to save then).
"""
from __future__ import annotations

import sys

from numba import njit

_BLAS_CHECK = "scipy.linalg.cython_blas"


def _load_arraymath_without_scipy() -> None:
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules or _BLAS_CHECK in sys.modules:
        return
    sys.modules[_BLAS_CHECK] = None  # an import of it raises ImportError while this is set
    try:
        import numba.np.arraymath  # noqa: F401  (its BLAS check runs at import)
    finally:
        del sys.modules[_BLAS_CHECK]


_load_arraymath_without_scipy()

__all__ = ["njit"]
