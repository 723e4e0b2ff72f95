"""The CTRL special register: SetCtrlSpr / GetCtrlSpr / ResetCtrlSpr<startBit, endBit>, one register per core.

Sources (asc-devkit@82b89a15): docs/zh/api/SIMD-API/基础API/特殊寄存器访问/{Set,Get,Reset}CtrlSpr(ISASI).md and
impl/basic_api/dav_3510/kernel_operator_common_impl.h (SetCtrlSprImpl, ResetCtrlSprImpl), dav_c220/ (2201).

* arch 3510: bits [6, 10] (a range inside it) or one of the single bits 45, 48, 50, 53, 59, 60; reset value
  0x1000000000000008 (ResetCtrlSprImpl's defaultCtrl: CTRL[60] = 1 global saturation control, CTRL[48] = 0
  saturation on, CTRL[50] = 0 NaN -> 0, CTRL[45] = 0). [CONFLICT] ResetCtrlSpr.md omits bit 45; the code takes
  it: the code is followed.
* arch 2201: only CTRL[48] (CheckCtrlSprBitRange); no ResetCtrlSpr. Own rule: the 2201 reset value is 0
  (CTRL[48] = 0 is its documented default; the other bits are not reachable from Ascend C).
* Own rule: CTRL[8:6] / CTRL[10:9] (the atomic type and operation) are kept by atomic.py's SetAtomicAdd /
  SetAtomicNone, which is what Ascend C recommends for them; SetCtrlSpr on them is refused as not modelled.
* The register is read by the instructions whose result depends on it: Mmad (CTRL[45]) and, through
  `float_saturation`, every float conversion that saturates (convert.py).
"""
from __future__ import annotations

from ascend_sim.isa.common import current_core
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.record import Kind, define

S = Pipe.S
CTRL_RESET = {3510: 0x1000000000000008, 2201: 0}
_SINGLE_BITS = {3510: (45, 48, 50, 53, 59, 60), 2201: (48,)}
HIF8_MMAD_BIT = 45  # 1: fp8_e4m3fn x fp8_e4m3fn runs as hifloat8 x hifloat8 (asc_enable_hif8)
SATURATION_OFF_BIT = 48  # 0: inf -> +-max, NaN -> 0; 1: inf / NaN kept
FP8_NAN_KEEP_BIT = 50  # with saturation on, 0: fp8 NaN -> 0, 1: NaN kept
GLOBAL_SATURATION_BIT = 60  # 1: CTRL[48] / CTRL[59] decide for every instruction; 0: each instruction decides

SET_CTRL_SPR = define("SetCtrlSpr", S, kind=Kind.REGISTER_WRITE,
                      doc="Write bits [startBit, endBit] of the CTRL register.")
RESET_CTRL_SPR = define("ResetCtrlSpr", S, kind=Kind.REGISTER_WRITE,
                        doc="Reset bits [startBit, endBit] of the CTRL register.")


def ctrl_value(core) -> int:
    """The core's CTRL register: its reset value until a SetCtrlSpr / ResetCtrlSpr writes it."""
    return core.registers.get("ctrl", CTRL_RESET[core.platform.npu_arch])


def _bits(value: int, start: int, end: int) -> int:
    return (value >> start) & ((1 << (end - start + 1)) - 1)


def _check_range(core, name: str, startBit, endBit) -> None:
    for field, bit in (("startBit", startBit), ("endBit", endBit)):
        if bit.__class__ is not int or not 0 <= bit <= 63:
            raise core.fault(ParameterOutOfRange(f"{field}={bit!r} outside [0, 63]"), name, S)
    if startBit > endBit:
        raise core.fault(ParameterOutOfRange(f"startBit={startBit} > endBit={endBit}"), name, S)


def _check_bits(core, name: str, startBit, endBit, reset: bool = False) -> None:
    """The bits SetCtrlSpr / ResetCtrlSpr may write on this arch (the Impl's static_asserts)."""
    arch = core.platform.npu_arch
    _check_range(core, name, startBit, endBit)
    if reset and arch != 3510:
        raise core.fault(ParameterOutOfRange(f"{name} does not exist on arch {arch} (Ascend 950 only)"), name, S)
    if 6 <= startBit and endBit <= 10 and arch == 3510:
        raise core.fault(ParameterOutOfRange(
            f"CTRL[{endBit}:{startBit}] (atomic type / operation) through {name} is not modelled: use SetAtomicAdd "
            "/ SetAtomicNone"), name, S)
    singles = _SINGLE_BITS[arch]
    if startBit != endBit or startBit not in singles:
        allowed = ", ".join(f"CTRL[{b}]" for b in singles)
        raise core.fault(ParameterOutOfRange(f"bits [{startBit}, {endBit}] are not writable on arch {arch}; "
                                             f"allowed: {allowed}"
                                             + (", CTRL[10:6] (through SetAtomicAdd here)" if arch == 3510 else "")),
                         name, S)


def SetCtrlSpr(startBit: int, endBit: int, value: int) -> None:
    """SetCtrlSpr<startBit, endBit>(value): CTRL[endBit:startBit] = value (a value wider than the bits is a
    compile error on the real toolchain: refused here)."""
    core = current_core()
    name = "SetCtrlSpr"
    _check_bits(core, name, startBit, endBit)
    width = endBit - startBit + 1
    if value.__class__ is not int or not 0 <= value < 1 << width:
        raise core.fault(ParameterOutOfRange(f"value={value!r} does not fit CTRL[{endBit}:{startBit}] "
                                             f"(0 to {(1 << width) - 1})"), name, S)
    mask = ((1 << width) - 1) << startBit
    core.write_register(SET_CTRL_SPR, "ctrl", (ctrl_value(core) & ~mask) | (value << startBit))


def GetCtrlSpr(startBit: int, endBit: int) -> int:
    """GetCtrlSpr<startBit, endBit>(): the value of CTRL[endBit:startBit] (a scalar read, no instruction)."""
    core = current_core()
    _check_range(core, "GetCtrlSpr", startBit, endBit)
    if core.platform.npu_arch != 3510 and (startBit, endBit) != (48, 48):
        raise core.fault(ParameterOutOfRange(f"bits [{startBit}, {endBit}]: only CTRL[48] is readable on arch "
                                             f"{core.platform.npu_arch}"), "GetCtrlSpr", S)
    return _bits(ctrl_value(core), startBit, endBit)


def ResetCtrlSpr(startBit: int, endBit: int) -> None:
    """ResetCtrlSpr<startBit, endBit>(): CTRL[endBit:startBit] = the reset value's bits (Ascend 950 only)."""
    core = current_core()
    name = "ResetCtrlSpr"
    _check_bits(core, name, startBit, endBit, reset=True)
    mask = ((1 << (endBit - startBit + 1)) - 1) << startBit
    value = (ctrl_value(core) & ~mask) | (CTRL_RESET[3510] & mask)
    core.write_register(RESET_CTRL_SPR, "ctrl", value)


def float_saturation(core, name: str, pipe: Pipe) -> tuple[bool, bool]:
    """(saturate, nan_to_zero) for a float conversion that instruction `name` on `pipe` does on `core` now
    (convert.py's arguments): CTRL[48] = 0 saturates; with saturation on, CTRL[50] = 0 turns fp8 NaN into 0. On
    arch 3510, CTRL[60] = 0 hands the choice to each instruction's own saturation mode, which no instruction
    modelled here carries: a fault. The caller records ("ctrl", ctrl_value(core)) among its registers."""
    ctrl = ctrl_value(core)
    if core.platform.npu_arch == 3510 and not _bits(ctrl, GLOBAL_SATURATION_BIT, GLOBAL_SATURATION_BIT):
        raise core.fault(ParameterOutOfRange("CTRL[60]=0 (per-instruction saturation) is not modelled: the "
                                             "converting instruction carries no saturation mode here"), name, pipe)
    saturate = not _bits(ctrl, SATURATION_OFF_BIT, SATURATION_OFF_BIT)
    return saturate, saturate and not _bits(ctrl, FP8_NAN_KEEP_BIT, FP8_NAN_KEEP_BIT)
