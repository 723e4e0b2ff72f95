"""ascend_sim: a simulated Ascend AI Core (cube and vector cores) running kernels written in the Ascend C style.

The names below are imported when first read (PEP 562), so that importing a submodule (ascend_sim.machine.dtypes,
the lazy exports of kernels and tiling) does not load the whole simulator."""
from importlib import import_module

_EXPORTS = {
    "Chip": "ascend_sim.engine.chip",
    "ReplayMismatch": "ascend_sim.engine.replay",
    "KernelType": "ascend_sim.machine.coretypes",
    "CapacityExceeded": "ascend_sim.machine.faults",
    "CrossCoreRace": "ascend_sim.machine.faults",
    "Misaligned": "ascend_sim.machine.faults",
    "OutOfBounds": "ascend_sim.machine.faults",
    "ParameterOutOfRange": "ascend_sim.machine.faults",
    "RaceFault": "ascend_sim.machine.faults",
    "SimFault": "ascend_sim.machine.faults",
    "SyncFault": "ascend_sim.machine.faults",
    "UnwrittenRead": "ascend_sim.machine.faults",
    "PRESETS": "ascend_sim.machine.platform",
    "Platform": "ascend_sim.machine.platform",
    "get_platform": "ascend_sim.machine.platform",
    "RunReport": "ascend_sim.passes.report",
}


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


def __getattr__(name: str):
    if name == "__version__":
        globals()[name] = _package_version()
        return globals()[name]
    module = _EXPORTS.get(name)
    if module is not None:
        globals()[name] = value = getattr(import_module(module), name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["__version__", "Chip", "ReplayMismatch", "KernelType", "Platform", "PRESETS", "get_platform", "RunReport", "SimFault",
           "OutOfBounds", "Misaligned", "CapacityExceeded", "ParameterOutOfRange", "SyncFault", "UnwrittenRead",
           "RaceFault", "CrossCoreRace"]
