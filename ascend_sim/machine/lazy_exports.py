"""A package's public names imported on first use, so that importing the package costs nothing until a name is read:
`from kernels import conv3d_v2` imports the forward operator alone, and a default `ascend-sim conv3d-dx` run
imports no other operator (issue 22: its wall time)."""
from __future__ import annotations

import sys
from importlib import import_module
from types import ModuleType


class LazyExports(ModuleType):
    """A package module (its class set by lazy_exports) whose exported names are imported when first read."""

    __lazy_exports__: dict[str, str]

    def __getattr__(self, name: str):
        exports = self.__dict__.get("__lazy_exports__", {})
        if name not in exports:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        module, _, defined_as = exports[name].partition(":")
        attribute = defined_as or name
        target = import_module(module)
        # a submodule may be exported under a name of its own (arch35's Reg, the regbase module reg)
        value = getattr(target, attribute) if hasattr(target, attribute) else import_module(f"{module}.{attribute}")
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value) -> None:
        # Importing a subpackage binds it to the attribute of its name in the parent (kernels.conv3d_v2 the package);
        # where the parent exports a function of that name (kernels.conv3d_v2 the operator), the export stays.
        if (name in self.__dict__.get("__lazy_exports__", {}) and isinstance(value, ModuleType)
                and value.__name__ == f"{self.__name__}.{name}"):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__) | set(self.__dict__.get("__lazy_exports__", {})))


def lazy_exports(package: str, exports: dict[str, str]) -> None:
    """Make the package `package` (its __name__) export the names `exports` maps to the module defining each
    ("module", or "module:name" where the package exports it under another name, or "package:submodule" for a
    submodule exported under another name), each imported when first read and then kept in the package's
    namespace."""
    module = sys.modules[package]
    module.__lazy_exports__ = dict(exports)
    module.__class__ = LazyExports
