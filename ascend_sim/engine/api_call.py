"""`api_call`: marks the public methods of a kernel's high-level API (Conv3DBackpropInput.Iterate, GetTensorC, ...)
so that every record issued while one runs carries the call: `Record.api`, ((name, call id), ...) outermost first.

The debugger uses it to break on an API call (`break Iterate`), and to step over (`next`) or out of (`finish`) one.
A call id is unique in the process, so two calls of one method are told apart.
"""
from __future__ import annotations

import functools
import itertools

from ascend_sim.engine.chip import current_core

__all__ = ["api_call"]

_call_ids = itertools.count(1)


def api_call(method):
    """Decorate an API method: while it runs, the records its core issues carry (method name, a new call id)."""
    name = method.__name__

    @functools.wraps(method)
    def call(*args, **kwargs):
        core = current_core()
        outer = core.api
        core.api = (*outer, (name, next(_call_ids)))
        try:
            return method(*args, **kwargs)
        finally:
            core.api = outer
    return call
