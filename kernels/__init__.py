"""Device kernels written against ascend_sim's Ascend C API, plus their host operators.

The operators are imported on first use (PEP 562 module __getattr__), so that `kernels.cli` (the `ascend-sim`
command line, a subpackage) starts without loading every kernel: `ascend-sim --help` stays fast.
"""
import sys
import types
from importlib import import_module

_OPERATORS = {
    "conv3d_backprop_filter_v2": ".conv3d_backprop_filter", "conv3d_backprop_filter_v2_run": ".conv3d_backprop_filter",
    "conv3d_backprop_input_v2": ".conv3d_backprop_input", "conv3d_backprop_input_v2_run": ".conv3d_backprop_input",
    "conv3d_v2": ".conv3d_v2", "conv3d_v2_run": ".conv3d_v2",
    "convolution_backward": ".convolution_backward", "convolution_backward_run": ".convolution_backward",
}

__all__ = sorted(_OPERATORS)


def __getattr__(name: str):
    if name not in _OPERATORS:
        raise AttributeError(f"module 'kernels' has no attribute {name!r}")
    value = getattr(import_module(_OPERATORS[name], __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted({*globals(), *_OPERATORS})


class _OperatorsModule(types.ModuleType):
    """Importing the subpackage kernels.conv3d_v2 (or convolution_backward) binds it to `kernels.<name>`, the name of
    its operator function: leave that name to the function, as the eager imports used to (sys.modules still holds
    the subpackage, so `import kernels.conv3d_v2.operator` is unaffected)."""

    def __setattr__(self, name, value):
        if name in _OPERATORS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _OperatorsModule
