"""The sweep's plots (matplotlib, Agg backend, PNG), each readable on its own:

- heatmap.png    the best simulated cycles over the two most influential knobs (a bar chart when one knob varies)
- pipes.png      the top candidates and the default as stacked per-pipe busy / idle bars of the slowest cube core,
                 labelled by the knobs that differ from the generator's tiling
- pareto_l1.png  cycles against L1 bytes, the Pareto front labelled the same way
- utilisation.png  the same tilings' utilisation per pipe and core type: the `aic_utilisation.<pipe>` /
                 `aiv_utilisation.<pipe>` columns, the figures the text report and --json give

Every axis gets a margin, so one simulated point still draws a sane plot.
"""
from __future__ import annotations

from pathlib import Path

from frontends.lab.target import PIPES

TOP = 5


def write_plots(result, out: Path) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result.simulated
    if not rows:
        return []
    return [_heatmap(result, rows, out / "heatmap.png", plt), _pipes(result, rows, out / "pipes.png", plt),
            _pareto(result, rows, out / "pareto_l1.png", plt), _utilisation(result, rows, out / "utilisation.png", plt)]


def differs(row: dict, default: dict, names: list[str]) -> str:
    """'stepKa 12->3, baseK 48->16': the knobs where a row differs from the default; 'generator' for the default."""
    changed = [f"{n} {default[n]}->{row[n]}" for n in names if row.get(n) != default.get(n)]
    return ", ".join(changed) if changed else "generator"


def influence(rows: list[dict], names: list[str]) -> list[tuple[str, float]]:
    """Knobs by how much changing that knob alone moves the cycles (the largest difference between two simulated
    tilings that differ in that knob only), largest first; knobs never changed alone are left out."""
    effect: dict[str, float] = {}
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            changed = [n for n in names if a[n] != b[n]]
            if len(changed) == 1:
                effect[changed[0]] = max(effect.get(changed[0], 0.0), abs(a["cycles"] - b["cycles"]))
    return sorted(effect.items(), key=lambda item: -item[1])


def heatmap_knobs(result, rows) -> list[str]:
    """The knobs the heat map shows: those where the best tiling differs from the default, most influential first,
    then the other influential ones."""
    ranked = [name for name, _ in influence(rows, result.varied)]
    best, default = result.best or result.default, result.default
    changed = [n for n in ranked if best.get(n) != default.get(n)]
    return changed + [n for n in ranked if n not in changed]


def _heatmap(result, rows, path: Path, plt) -> str:
    import numpy as np

    ranked = heatmap_knobs(result, rows)
    default = result.default
    fig, ax = plt.subplots(figsize=(7, 5))
    if len(ranked) >= 2:
        x_name, y_name = ranked[:2]
        xs = sorted({r[x_name] for r in rows})
        ys = sorted({r[y_name] for r in rows})
        grid = np.full((len(ys), len(xs)), np.nan)
        for r in rows:
            i, j = ys.index(r[y_name]), xs.index(r[x_name])
            grid[i, j] = r["cycles"] if np.isnan(grid[i, j]) else min(grid[i, j], r["cycles"])
        image = ax.imshow(grid, cmap="viridis_r", aspect="auto", origin="lower")
        fig.colorbar(image, ax=ax, label="best simulated cycles")
        for i in range(len(ys)):
            for j in range(len(xs)):
                text = "not tried" if np.isnan(grid[i, j]) else f"{grid[i, j] / 1000:,.1f}k"
                ax.text(j, i, text, ha="center", va="center", fontsize=8,
                        color="grey" if np.isnan(grid[i, j]) else "white")
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.set_yticks(range(len(ys)), [str(v) for v in ys])
        if default.get(x_name) in xs and default.get(y_name) in ys:
            ax.add_patch(plt.Rectangle((xs.index(default[x_name]) - 0.5, ys.index(default[y_name]) - 0.5), 1, 1,
                                       fill=False, edgecolor="red", linewidth=2, label="generator's values"))
            ax.legend(loc="upper right", fontsize=8)
        ax.set(xlabel=x_name, ylabel=y_name, title=f"{result.target}: best cycles by {x_name} and {y_name}\n"
                                                     f"(knobs that move the cycles most; the others free)")
    else:
        name = ranked[0] if ranked else None
        values = sorted({r[name] for r in rows}) if name else ["generator"]
        best = [min(r["cycles"] for r in rows if not name or r[name] == v) for v in values]
        ax.bar(range(len(values)), best, color="tab:blue")
        ax.set_xticks(range(len(values)), [str(v) for v in values])
        ax.set(xlabel=name or "tiling", ylabel="best simulated cycles", ylim=(0, max(best) * 1.15),
               title=f"{result.target}: best cycles by {name}" if name else f"{result.target}: one tiling simulated")
    return _save(fig, path, plt)


def _top_and_default(result, rows) -> list[dict]:
    top = rows[:TOP]
    default = result.default
    if default.get("cycles") is not None and all(r is not default for r in top):
        top = top + [default]
    return top


def _pipes(result, rows, path: Path, plt) -> str:
    top = _top_and_default(result, rows)
    default = result.default
    fig, ax = plt.subplots(figsize=(9, 0.9 * len(top) + 1.8))
    colours = {"MTE2": "tab:blue", "MTE1": "tab:orange", "M": "tab:green", "FIX": "tab:red"}
    height = 0.8 / len(PIPES)
    for i, row in enumerate(top):
        total = row.get("cube_cycles", row["cycles"])
        for k, pipe in enumerate(PIPES):
            y = i + k * height
            busy = row.get(f"slowest_core_busy_{pipe}", 0.0)
            ax.barh(y, busy, height, color=colours[pipe], label=f"{pipe} busy" if i == 0 else None)
            ax.barh(y, total - busy, height, left=busy, color=colours[pipe], alpha=0.25,
                    label=f"{pipe} idle / waiting" if i == 0 else None)
    labels = [f"#{rank} {differs(r, default, result.varied)}\n{r['cycles']:,.0f} cycles" if not r["default"] else
              f"generator's tiling\n{r['cycles']:,.0f} cycles" for rank, r in enumerate(top, 1)]
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(top))], labels, fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="cycles of the slowest cube core", xlim=(0, max(r.get("cube_cycles", r["cycles"]) for r in top)
                                                            * 1.02),
           title="per-pipe busy and idle cycles (slowest cube core)\nthe best tilings and the generator's")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(top) > 2 else -0.3))
    return _save(fig, path, plt)


def _pareto(result, rows, path: Path, plt) -> str:
    default = result.default
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.scatter([r["l1_bytes"] / 1024 for r in rows], [r["cycles"] for r in rows], s=14, alpha=0.5,
               label="simulated tilings")
    front = pareto_front(rows, "l1_bytes", "cycles")
    ax.plot([r["l1_bytes"] / 1024 for r in front], [r["cycles"] for r in front], "-o", color="green", ms=5,
            label="Pareto front (no tiling is faster with less L1)")
    for r in front[:8]:
        ax.annotate(differs(r, default, result.varied), (r["l1_bytes"] / 1024, r["cycles"]), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    if default.get("cycles") is not None:
        ax.scatter([default["l1_bytes"] / 1024], [default["cycles"]], s=120, marker="*", color="red", zorder=3,
                   label="generator's tiling")
    xs = [r["l1_bytes"] / 1024 for r in rows]
    ys = [r["cycles"] for r in rows]
    ax.set_xlim(*_padded(min(xs), max(xs)))
    ax.set_ylim(*_padded(min(ys), max(ys)))
    ax.set(xlabel="L1 used (KiB)", ylabel="simulated cycles", title=f"{result.target}: cycles against L1 usage")
    ax.legend(fontsize=8)
    return _save(fig, path, plt)


def _utilisation(result, rows, path: Path, plt) -> str:
    top = _top_and_default(result, rows)
    default = result.default
    keys = sorted({k for r in top for k in r if k.endswith(tuple(f"_utilisation.{p}" for p in ("MTE2", "MTE1", "M",
                                                                                                "FIX", "V", "MTE3")))})
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(keys) + 3), 4.5))
    width = 0.8 / len(top)
    for i, row in enumerate(top):
        label = "generator's tiling" if row["default"] else f"#{i + 1} {differs(row, default, result.varied)}"
        ax.bar([j + i * width for j in range(len(keys))], [row.get(k, 0.0) * 100 for k in keys], width, label=label)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))], keys, rotation=30, ha="right", fontsize=8)
    ax.set(ylabel="% of the chip's cycles (mean over the cores of that type)", ylim=(0, 105),
           title="utilisation per pipe and core type: the best tilings and the generator's")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return _save(fig, path, plt)


def _padded(low: float, high: float) -> tuple[float, float]:
    """An axis range around [low, high] with a 10 % margin, and a sane one around a single value."""
    span = high - low or max(abs(high), 1.0) * 0.2
    return max(0.0, low - 0.1 * span), high + 0.1 * span


def pareto_front(rows: list[dict], x: str, y: str) -> list[dict]:
    """The rows no other row beats on both x and y (smaller is better), by increasing x."""
    front, best_y = [], float("inf")
    for row in sorted(rows, key=lambda r: (r[x], r[y])):
        if row[y] < best_y:
            front.append(row)
            best_y = row[y]
    return front


def _save(fig, path: Path, plt) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")  # long knob labels stay inside the image
    plt.close(fig)
    return str(path)
