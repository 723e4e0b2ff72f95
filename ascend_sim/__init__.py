"""ascend_sim: a simulated Ascend AI Core (cube side) running kernels written in the Ascend C style."""
from .chip import Chip
from .faults import (CapacityExceeded, Misaligned, OutOfBounds, ParameterOutOfRange, RaceFault, SimFault,
                     SyncFault)
from .platform import PRESETS, Platform, get_platform
from .report import RunReport

__all__ = ["Chip", "Platform", "PRESETS", "get_platform", "RunReport", "SimFault", "OutOfBounds", "Misaligned",
           "CapacityExceeded", "ParameterOutOfRange", "SyncFault", "RaceFault"]
