"""The sweep's plots (matplotlib, Agg backend, PNG): cycles per candidate, the Pareto front of cycles against L1
usage, and the per-pipe utilisation of the best few."""
from __future__ import annotations

from pathlib import Path

PIPES = ("MTE2", "MTE1", "M", "FIX")


def write_plots(result, out: Path, best: int = 5) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result.rows if r.get("cycles") is not None]
    default = result.default
    paths = []

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.scatter([r["index"] for r in rows], [r["cycles"] for r in rows], s=10, label="simulated")
    estimated = [r for r in rows if r.get("est_cycles")]
    ax.scatter([r["index"] for r in estimated], [r["est_cycles"] for r in estimated], s=6, marker="x",
               alpha=0.5, label="analytical estimate")
    bounded = [r for r in result.rows if r.get("pruned_by_bound")]
    if bounded:
        ax.scatter([r["index"] for r in bounded], [r["est_roofline"] for r in bounded], s=6, marker="^",
                   color="grey", alpha=0.5, label="not simulated: lower bound above the best")
    if default.get("cycles") is not None:
        ax.scatter([default["index"]], [default["cycles"]], s=80, marker="*", color="red", label="default")
    ax.set(xlabel="candidate", ylabel="cycles", title=f"{result.target}: cycles per candidate")
    ax.legend()
    paths.append(_save(fig, out / "cycles.png", plt))

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter([r["l1_bytes"] / 1024 for r in rows], [r["cycles"] for r in rows], s=10, alpha=0.6,
               label="candidates")
    front = pareto_front(rows, "l1_bytes", "cycles")
    ax.plot([r["l1_bytes"] / 1024 for r in front], [r["cycles"] for r in front], "-o", color="green", ms=4,
            label="Pareto front")
    if default.get("cycles") is not None:
        ax.scatter([default["l1_bytes"] / 1024], [default["cycles"]], s=80, marker="*", color="red",
                   label="default")
    ax.set(xlabel="L1 used (KiB)", ylabel="cycles", title="cycles against L1 usage")
    ax.legend()
    paths.append(_save(fig, out / "pareto_l1.png", plt))

    top = result.simulated[:best]
    if default.get("cycles") is not None and default not in top:
        top = top + [default]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(PIPES)
    for i, pipe in enumerate(PIPES):
        ax.bar([j + i * width for j in range(len(top))], [r.get(f"util_{pipe}", 0.0) for r in top], width,
               label=pipe)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(top))],
                  [("default" if r["default"] else f"#{r['index']}") for r in top])
    ax.set(ylabel="utilisation", ylim=(0, 1), title="per-pipe utilisation of the best candidates")
    ax.legend()
    paths.append(_save(fig, out / "utilisation.png", plt))
    return paths


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
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)
