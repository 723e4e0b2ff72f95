"""Arrays of one pass allocated without Linux's transparent huge pages.

numpy asks the kernel for huge pages (madvise MADV_HUGEPAGE) on every array of 4 MiB or more. Where the
kernel's THP setting is "madvise" with defrag "madvise" (this project's machines), each first touch of a 2 MiB
page may then compact memory synchronously. The lazy schedule of a timing-only launch (engine/replay_engine.py
`run_lazy`) makes a dozen arrays of one entry per record (the R3D stem: 938k records, 8-30 MB each) that live
for one launch: in a repeated R3D launch those faults cost up to about 200 ms of system CPU, more than the
compiled pass itself. When free huge pages are at hand the advice is cheaper (set-up 68-74 ms against 103-114 ms
with it off); when the kernel must compact first, it costs 104-314 ms. Off, a launch is as fast as the best case
(510.6 against 513.0 ms over nine rounds) without the slow tail (up to 810 ms): docs/performance.md, issue 23,
branch h26walk. A full run's passes (the race checks' access arrays, the data pass's images and gather buffers)
run inside it too: the R3D stem's full run 2.36-2.42 -> 2.31 s, the short layers' repeated runs steadier
(docs/performance.md, the same section, "At the merge").

`small_pages()` turns the advice off for the arrays made inside it and restores the process's setting after
(numpy's `_set_madvise_hugepage`, the switch its env NUMPY_MADVISE_HUGEPAGE sets at start; numpy's docs,
"Global state"). It changes where the pages come from, not a single value in them.
"""
from __future__ import annotations

from contextlib import contextmanager

try:
    from numpy._core.multiarray import _set_madvise_hugepage
except ImportError:  # numpy 1.x
    try:
        from numpy.core.multiarray import _set_madvise_hugepage
    except ImportError:  # no such switch: nothing to turn off
        _set_madvise_hugepage = None


@contextmanager
def small_pages():
    """Inside: numpy allocates without asking for huge pages."""
    if _set_madvise_hugepage is None:
        yield
        return
    was = _set_madvise_hugepage(False)
    try:
        yield
    finally:
        _set_madvise_hugepage(was)
