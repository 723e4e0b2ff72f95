"""Shared helpers of the instruction modules: parameter range checks and tensor position checks."""
from __future__ import annotations

from ascend_sim.engine.chip import current_core
from ascend_sim.machine.faults import Misaligned, ParameterOutOfRange
from ascend_sim.machine.tensor import GlobalTensor, LocalTensor

FRACTAL = 512  # bytes in one cube fractal
BLOCK = 32  # bytes in one DataBlock


def check_range(core, name, pipe, field: str, value, lo: int, hi: int) -> None:
    """Fault (as the hardware would reject or corrupt) when a parameter field is outside [lo, hi]."""
    if not isinstance(value, (int, bool)) and not hasattr(value, "__index__"):
        raise core.fault(ParameterOutOfRange(f"{field}={value!r} must be an integer in [{lo}, {hi}]"), name, pipe)
    if not lo <= value <= hi:
        raise core.fault(ParameterOutOfRange(f"{field}={value} outside [{lo}, {hi}]"), name, pipe)


def check_fields(core, name, pipe, params, ranges: dict) -> None:
    for field, (lo, hi) in ranges.items():
        value = getattr(params, field)
        if value.__class__ is not int or not lo <= value <= hi:  # slow path only for odd types or faults
            check_range(core, name, pipe, field, value, lo, hi)


def fields_checker(ranges: dict):
    """A fast equivalent of `check_fields(core, name, pipe, params, ranges)` for a fixed `ranges`.

    The returned `check(core, name, pipe, params)` tests every field inline (plain ints in range pass at once)
    and falls back to `check_fields` on the first odd type or out-of-range value, so faults and their order are
    exactly those of `check_fields`. Build it once per ranges table (module level), not per instruction.
    """
    lines = ["def check(core, name, pipe, p):"]
    for field, (lo, hi) in ranges.items():
        if not field.isidentifier():
            raise ValueError(f"bad field name {field!r}")
        lines += [f"    v = p.{field}",
                  f"    if v.__class__ is not int or not {int(lo)} <= v <= {int(hi)}:",
                  "        return check_fields(core, name, pipe, p, ranges)"]
    namespace = {"check_fields": check_fields, "ranges": dict(ranges)}
    # compiled under this file's name: a fault raised through it still names the kernel line, not "<string>"
    exec(compile("\n".join(lines), __file__, "exec"), namespace)  # noqa: S102 - from the field names above
    return namespace["check"]


def check_aligned(core, name, pipe, tensor, alignment: int, role: str) -> None:
    if tensor.address % alignment:
        raise core.fault(Misaligned(
            f"{role} address {tensor.address} in {tensor.buffer.name} is not a multiple of {alignment} bytes",
            buffer=tensor.buffer.name, addr_range=(tensor.address, tensor.address + 1)), name, pipe)


def expect_position(core, name, pipe, tensor, positions: tuple[str, ...], role: str) -> None:
    """The tensor must be a LocalTensor in one of the physical buffers `positions` (or GM)."""
    where = "GM" if isinstance(tensor, GlobalTensor) else (
        tensor.buffer.name if isinstance(tensor, LocalTensor) else type(tensor).__name__)
    if where not in positions:
        raise core.fault(ParameterOutOfRange(f"{role} is in {where}; {name} here takes {role} in "
                                             f"{' or '.join(positions)}"), name, pipe)


__all__ = ["current_core", "check_range", "check_fields", "fields_checker", "check_aligned", "expect_position", "FRACTAL", "BLOCK"]
