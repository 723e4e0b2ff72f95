"""The validation protocol every tiling family shares: a broken rule (Problem), the report of one tiling on one
platform (ValidationReport), the error that carries both (TilingValidationError), and the generator's refusal
when no tiling fits (TilingInfeasible)."""
from __future__ import annotations

from dataclasses import dataclass, field


class TilingValidationError(ValueError):
    """A tiling does not fit its platform or the kernel; the message lists every problem.

    `report` is the ValidationReport; `tiling` the refused tiling (to print or inspect it); `overrides` the
    fields a caller changed to get it, when that is how it was made."""

    def __init__(self, report: "ValidationReport", tiling=None, overrides: dict | None = None):
        self.report, self.tiling, self.overrides = report, tiling, dict(overrides or {})
        super().__init__(self._message())

    def _message(self) -> str:
        if not self.overrides:
            return str(self.report)
        changed = ", ".join(f"{name}={value!r}" for name, value in self.overrides.items())
        lines = [f"tiling overrides {changed} make the tiling illegal on {self.report.platform} "
                 f"({len(self.report.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.report.problems]
        return "\n".join(lines)


@dataclass(frozen=True)
class Problem:
    """One broken rule: the field it is reported on, that field's value, and the rule in words."""

    field: str
    message: str
    value: int | None = None

    def __str__(self) -> str:
        return f"{self.field}={self.value}: {self.message}" if self.value is not None else \
            f"{self.field}: {self.message}"


def field_problem(out: list[Problem], fields: dict, name: str, rule: str) -> None:
    """Append the broken `rule`, reported on field `name` with its value in `fields`, to `out`."""
    out.append(Problem(name, rule, fields.get(name)))


def check_l0_budgets(out: list[Problem], f: dict, dtype_bytes: int, platform, extra_k: int = 0,
                     extra_k_why: str = "") -> None:
    """The cube tiling's L0 budgets (InitBaseMNK's): baseM x baseK on L0A and baseN x baseK on L0B, each twice
    when al0Pbuffer and bl0Pbuffer are both 2 (the kernels' L0 ping-pong), and the fp32 baseM x baseN times
    cl0Pbuffer on L0C. extra_k: K elements L0B holds beyond baseK, for the reason extra_k_why."""
    halves = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1
    a = f["baseM"] * f["baseK"] * dtype_bytes
    if a * halves > platform.L0A:
        field_problem(out, f, "baseM", f"L0A needs {a * halves} bytes (baseM*baseK*{dtype_bytes}={a} x {halves} "
                                       f"ping-pong halves), L0A has {platform.L0A}")
    b = f["baseN"] * (f["baseK"] + extra_k) * dtype_bytes
    if b * halves > platform.L0B:
        k = f"(baseK + {extra_k} {extra_k_why})" if extra_k else "baseK"
        field_problem(out, f, "baseN", f"L0B needs {b * halves} bytes (baseN*{k}*{dtype_bytes}={b} x {halves} "
                                       f"ping-pong halves), L0B has {platform.L0B}")
    c = f["baseM"] * f["baseN"] * 4
    if c * f["cl0Pbuffer"] > platform.L0C:
        field_problem(out, f, "cl0Pbuffer", f"L0C needs {c * f['cl0Pbuffer']} bytes (baseM*baseN*4={c} x "
                                            f"cl0Pbuffer), L0C has {platform.L0C}")


@dataclass
class ValidationReport:
    platform: str
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        if self.ok:
            return f"tiling fits {self.platform}"
        lines = [f"tiling does not fit {self.platform} ({len(self.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)

    def raise_if_invalid(self, tiling=None, overrides: dict | None = None) -> None:
        if not self.ok:
            raise TilingValidationError(self, tiling, overrides)


class TilingInfeasible(ValueError):
    """No legal tiling exists for the problem on this platform."""
