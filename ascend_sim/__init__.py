"""ascend_sim: a simulated Ascend AI Core (cube and vector cores) running kernels written in the Ascend C style."""
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ascend_sim.engine.chip import Chip
from ascend_sim.engine.replay import ReplayMismatch
from ascend_sim.machine.coretypes import KernelType
from ascend_sim.machine.faults import (CapacityExceeded, CrossCoreRace, Misaligned, OutOfBounds, ParameterOutOfRange,
                                       RaceFault, SimFault, SyncFault)
from ascend_sim.machine.platform import PRESETS, Platform, get_platform
from ascend_sim.passes.report import RunReport


def _package_version() -> str:
    """The installed distribution's version; in a source tree that was never installed, pyproject.toml's."""
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


__version__ = _package_version()

__all__ = ["__version__", "Chip", "ReplayMismatch", "KernelType", "Platform", "PRESETS", "get_platform", "RunReport", "SimFault",
           "OutOfBounds", "Misaligned", "CapacityExceeded", "ParameterOutOfRange", "SyncFault", "RaceFault",
           "CrossCoreRace"]
