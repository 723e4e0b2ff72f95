"""The garbage collector paused while a command imports its modules and prepares its run.

Those imports (numpy, pydantic, the simulator, the operator and its tiling) make objects that live as long as the
process, and the young collections they set off find nothing: about 100 of them, 20-30 ms of CPU, in a default
`ascend-sim conv3d-dx`. They go straight to the oldest generation instead (resume), and the collector is on again
before the launch.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


def resume() -> None:
    """Collect again, what was made while paused moved to the oldest generation (it is not garbage)."""
    gc.freeze()
    gc.unfreeze()
    gc.enable()


@contextmanager
def paused() -> Iterator[None]:
    """No collection during the body; the collector, if it was on, is on again after it (resume)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        resume()
