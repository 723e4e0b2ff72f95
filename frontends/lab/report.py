"""report.md: one page per sweep with the table, the plots and, in plain words, why the best beats the default.

The explanation compares the slowest cube core of the two runs pipe by pipe: which pipe got less busy (less work:
fewer or cheaper instructions) and which waited less (idle cycles: the pipe had its work but waited for another
pipe's data or buffer), names the pipe that bounds the default, and says what the changed knobs do.
"""
from __future__ import annotations

from pathlib import Path

from frontends.lab.plots import differs
from frontends.lab.target import PIPES

# What a knob's change does to the pipeline, in words (for the explanation; the figures come from the runs).
KNOB_EFFECTS = {
    "stepKa": "how many baseK blocks of A one GM->L1 load brings: smaller loads let MTE1 and the cube start sooner "
              "and keep MTE2 streaming in step; larger ones pay the per-copy overhead fewer times",
    "stepKb": "how many baseK blocks of B one GM->L1 load brings (as stepKa, for B)",
    "stepK": "how many baseK slices one GM->L1 load brings (smaller: the pipeline fills sooner; larger: fewer "
             "copies and their overhead)",
    "baseK": "the K depth of one L0 block: more, smaller L1->L0 loads and Mmads, or fewer, larger ones",
    "kL0": "the K depth of one L0 block: more, smaller L1->L0 loads and Mmads, or fewer, larger ones",
    "baseM": "the M size of the output block: more reuse of B per load when larger, more blocks to spread when "
             "smaller",
    "mL0": "the M size of the L0 block",
    "baseN": "the N size of the output block: more reuse of A per load when larger",
    "nL0": "the N size of the L0 block",
    "al1Pbuffer": "double buffering of A in L1: MTE2 loads the next A while MTE1 reads this one",
    "bl1Pbuffer": "double buffering of B in L1: MTE2 loads the next B while MTE1 reads this one",
    "l1_buffers": "double buffering of A and B in L1",
    "cl0Pbuffer": "double buffering of L0C: Fixpipe writes one block out while the cube fills the next",
    "pBufferFlag": "the ping-pong buffers (bit 4: L0C double buffering lets Fixpipe overlap the next Mmads)",
    "iterateOrder": "the order the M x N blocks are walked (which operand stays in L1)",
    "iterateMNOrder": "the order the M x N blocks are walked (which operand stays in L1)",
    "coreNum": "how many cube cores the blocks are spread over",
}


def explain(best: dict, default: dict, names: list[str]) -> list[str]:
    """Plain sentences: how much faster, which pipe did less work or waited less, and what the knobs do."""
    if best is default or best.get("cycles") is None or default.get("cycles") is None:
        return ["The generator's tiling is the fastest simulated: no tiling tried beats it."]
    gain = 1 - best["cycles"] / default["cycles"]
    lines = [f"The best tiling ({differs(best, default, names)}) takes {best['cycles']:,.0f} cycles against the "
             f"generator's {default['cycles']:,.0f}: {gain:.1%} fewer."]
    d_total, b_total = default.get("cube_cycles", default["cycles"]), best.get("cube_cycles", best["cycles"])
    bound = max(PIPES, key=lambda p: default.get(f"slowest_core_busy_{p}", 0.0))
    changes = []
    for pipe in PIPES:
        d_busy, b_busy = default.get(f"slowest_core_busy_{pipe}", 0.0), best.get(f"slowest_core_busy_{pipe}", 0.0)
        changes.append((pipe, b_busy - d_busy, (b_total - b_busy) - (d_total - d_busy)))
    d_bound = default.get(f"slowest_core_busy_{bound}", 0.0)
    lines.append(f"On the slowest cube core the generator's tiling is bound by {bound}: busy {d_bound:,.0f} of its "
                 f"{d_total:,.0f} cycles, idle {d_total - d_bound:,.0f}.")
    for pipe, busy, idle in sorted(changes, key=lambda c: c[1] + c[2]):
        if abs(busy) < 0.01 * d_total and abs(idle) < 0.01 * d_total:
            continue
        parts = []
        if abs(busy) >= 0.01 * d_total:
            parts.append(f"{'less' if busy < 0 else 'more'} busy by {abs(busy):,.0f} cycles "
                         f"({'less work' if busy < 0 else 'more work'})")
        if abs(idle) >= 0.01 * d_total:
            parts.append(f"{'waits less' if idle < 0 else 'waits more'} by {abs(idle):,.0f} cycles")
        lines.append(f"{pipe}: {', '.join(parts)}.")
    b_bound = best.get(f"slowest_core_busy_{bound}", 0.0)
    worked, waited = b_bound - d_bound, (b_total - b_bound) - (d_total - d_bound)
    lines.append(f"So the gain on {bound} is mostly {'less waiting' if abs(waited) > abs(worked) else 'less work'}: "
                 f"its busy cycles changed by {worked:+,.0f}, its idle cycles by {waited:+,.0f}.")
    waits = _main_wait(default), _main_wait(best)
    if waits[0]:
        cause, cycles = waits[0]
        after = best.get(cause, 0.0)
        event = cause.removeprefix("bound_pipe_wait_")
        setter, _, waiter = event.partition("_")
        what = f"the {event} flag ({waiter} waiting for {setter})" if waiter else event
        lines.append(f"The generator's bounding pipe waited longest on {what}: {cycles:,.0f} cycles; in the best "
                     f"tiling that wait is {after:,.0f} cycles.")
    for name in names:
        if best.get(name) != default.get(name) and name in KNOB_EFFECTS:
            lines.append(f"{name} {default[name]} -> {best[name]}: {KNOB_EFFECTS[name]}.")
    return lines


def _main_wait(row: dict):
    waits = {k: v for k, v in row.items() if k.startswith("bound_pipe_wait_")}
    return max(waits.items(), key=lambda item: item[1]) if waits else None


def write_report(result, out: Path, plots: list[str], top: int = 10) -> str:
    default, ranked = result.default, result.simulated
    names = result.varied
    lines = [f"# Tiling sweep: {result.target}", "", "```", result.summary(top=5), "```", "",
             f"## The {min(top, len(ranked))} fastest tilings and the generator's", "",
             "| rank | cycles | vs generator | bound | L1 KiB | changed from the generator's tiling |",
             "|---:|---:|---:|---|---:|---|"]
    shown = ranked[:top] + ([default] if default not in ranked[:top] and default.get("cycles") else [])
    for row in shown:
        rank = ranked.index(row) + 1 if row in ranked else "-"
        vs = f"{row['cycles'] / default['cycles'] - 1:+.1%}" if default.get("cycles") else ""
        lines.append(f"| {rank} | {row['cycles']:,.0f} | {vs} | {row['bound']} | {row['l1_bytes'] / 1024:,.1f} | "
                     f"{differs(row, default, names)} |")
    lines += ["", "## Why the best beats the generator's tiling", ""]
    lines += [f"- {line}" for line in explain(result.best or default, default, names)]
    if plots:
        lines += ["", "## Plots", ""]
        captions = {"heatmap.png": "Best cycles over the two most influential knobs",
                    "pipes.png": "Per-pipe busy (solid) and idle (light) cycles of the slowest cube core",
                    "pareto_l1.png": "Cycles against L1 bytes, with the Pareto front",
                    "utilisation.png": "Utilisation per pipe and core type (aic_utilisation.<pipe>, ...)"}
        for path in plots:
            name = Path(path).name
            lines += [f"![{captions.get(name, name)}]({name})", ""]
    lines += ["Figures: simulated cycles of the timing model (timing-only runs), not hardware "
              "measurements. Utilisation per core type: see results.csv (`aic_utilisation.<pipe>`).", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return str(path)
