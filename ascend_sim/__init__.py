"""ascend_sim: a simulated Ascend AI Core (cube and vector cores) running kernels written in the Ascend C style."""
from ascend_sim.engine.chip import Chip
from ascend_sim.engine.replay import ReplayMismatch
from ascend_sim.machine.coretypes import KernelType
from ascend_sim.machine.faults import (CapacityExceeded, CrossCoreRace, Misaligned, OutOfBounds, ParameterOutOfRange,
                                       RaceFault, SimFault, SyncFault)
from ascend_sim.machine.platform import PRESETS, Platform, get_platform
from ascend_sim.passes.report import RunReport


def _package_version() -> str:
    """The installed distribution's version; in a source tree that was never installed, pyproject.toml's."""
    import re  # here, as importlib.metadata: read only when __version__ is (a run does not pay for them)
    from importlib.metadata import PackageNotFoundError, version
    from pathlib import Path
    try:
        return version("ascend-sim")
    except PackageNotFoundError:
        pass
    try:
        pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    except OSError:
        return "0+unknown"
    found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.MULTILINE)
    return found.group(1) if found else "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        globals()[name] = _package_version()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__", "Chip", "ReplayMismatch", "KernelType", "Platform", "PRESETS", "get_platform", "RunReport", "SimFault",
           "OutOfBounds", "Misaligned", "CapacityExceeded", "ParameterOutOfRange", "SyncFault", "RaceFault",
           "CrossCoreRace"]
