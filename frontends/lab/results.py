"""A sweep's result table: ranking, the printed summary, and the files (results.json, results.csv, plots,
report.md)."""
from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from frontends.lab.plots import write_plots
from frontends.lab.report import write_report


@dataclass
class SweepResult:
    target: str
    description: str
    varied: list[str]
    rows: list[dict]
    search: str
    budget: int
    workers: int
    seed: int
    space_size: int
    seconds: float
    files: list[str] = field(default_factory=list)
    prune: bool = False
    top: int = 1
    space: dict = field(default_factory=dict)  # the legal space: size, knobs, values cut per rule
    space_text: str = ""

    @property
    def simulated(self) -> list[dict]:
        """Rows with simulated cycles, fastest first (ties: in the order they were proposed)."""
        return sorted((r for r in self.rows if r.get("cycles") is not None), key=lambda r: (r["cycles"], r["index"]))

    @property
    def default(self) -> dict:
        return next(r for r in self.rows if r["default"])

    @property
    def best(self) -> dict | None:
        ranked = self.simulated
        return ranked[0] if ranked else None

    def default_rank(self) -> int | None:
        """1 for the fastest; None if the default was not simulated (it faulted)."""
        for rank, row in enumerate(self.simulated, 1):
            if row["default"]:
                return rank
        return None

    def default_gap(self) -> float | None:
        """How much slower the default is than the best, as a fraction of the best (0 when it is the best)."""
        best, default = self.best, self.default
        if best is None or default.get("cycles") is None:
            return None
        return default["cycles"] / best["cycles"] - 1

    @property
    def candidates_per_second(self) -> float:
        return len(self.rows) / self.seconds if self.seconds else 0.0

    def summary(self, top: int = 5) -> str:
        lines = [self.description, *([self.space_text] if self.space_text else []),
                 (f"{len(self.rows)} candidates ({self.search}, space of {self.space_size:,}"
                  f"{'+' if self.space.get('truncated') else ''}, seed {self.seed}) on "
                  f"{self.workers} worker(s) in {self.seconds:.1f} s = {self.candidates_per_second:.2f} candidates/s")]
        pruned = [r for r in self.rows if not r["valid"]]
        bounded = [r for r in self.rows if r.get("pruned_by_bound")]
        faulted = [r for r in self.rows if r["valid"] and r.get("cycles") is None and not r.get("pruned_by_bound")]
        estimated = any("est_roofline" in r for r in self.rows)  # operators without an estimate have no bound
        lines.append(f"simulated {len(self.simulated)}, refused by the validator {len(pruned)}, faulted {len(faulted)}"
                     + (f", pruned by the bound {len(bounded)} (legal, not simulated: their lower bound exceeds "
                        f"the {kth_best(self.top)} simulated cycles)"
                        if self.prune and estimated else ""))
        if pruned:
            rules = Counter(r["reason"].split("=")[0] for r in pruned)
            lines.append("refused on: " + ", ".join(f"{name} ({n})" for name, n in rules.most_common(5)))
        for row in faulted[:3]:
            lines.append(f"faulted: {_point(row, self.varied)}: {row.get('error', '')[:160]}")
        lines.append(f"best {min(top, len(self.simulated))}:")
        for rank, row in enumerate(self.simulated[:top], 1):
            est = f"  est {row['est_cycles']:>12,.0f}" if "est_cycles" in row else ""
            lines.append(f"  {rank}. {row['cycles']:>12,.0f} cycles  bound {row['bound']:<4}{est}  L1 "
                         f"{row['l1_bytes']:>7,}  "
                         f"{_point(row, self.varied)}{'  (default)' if row['default'] else ''}")
        rank, gap = self.default_rank(), self.default_gap()
        if rank is None:
            lines.append("the generator's tiling was not simulated: " + self.default.get("error", "pruned"))
        else:
            lines.append(f"the generator's tiling: {self.default['cycles']:,.0f} cycles, rank {rank} of "
                         f"{len(self.simulated)}, {gap:.1%} slower than the best")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"target": self.target, "description": self.description, "varied": self.varied,
                "search": self.search, "budget": self.budget, "workers": self.workers, "seed": self.seed,
                "space_size": self.space_size, "space": self.space, "seconds": self.seconds, "prune": self.prune,
                "top": self.top,
                "simulated": len(self.simulated),
                "candidates_per_second": self.candidates_per_second, "default_rank": self.default_rank(),
                "default_gap": self.default_gap(), "rows": self.rows}

    def write(self, out_dir: str | Path, plots: bool = True) -> list[str]:
        """results.json, results.csv, (plots=True) the PNG plots and report.md in out_dir; returns the paths
        written."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(self.to_dict(), indent=1, default=str))
        columns: list[str] = []
        for row in self.rows:
            columns += [key for key in row if key not in columns and key != "overrides"]
        with open(out / "results.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(self.rows)
        self.files = [str(out / "results.json"), str(out / "results.csv")]
        images = write_plots(self, out) if plots else []
        self.files += images + [write_report(self, out, images)]
        return self.files


def kth_best(k: int) -> str:
    """'best', '2nd best', '3rd best', '11th best', ..."""
    if k == 1:
        return "best"
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix} best"


def _point(row: dict, names: list[str]) -> str:
    return " ".join(f"{name}={row[name]}" for name in names)
