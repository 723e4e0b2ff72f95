"""Study: could a unit's templates be derived from earlier ones instead of running the kernel's Python? (issue 23)

    python benchmarks/study_template_derivation.py [--op dx] [--unit NAME] [--only C3D causal ...] [--lab N]
                                                   [--analogy] [--verbose]

Runs each layer of bench_replay.py (timing-only, replay engine), or with --lab N the tiling lab's first N C3D
conv3a candidates (`bench_lab_throughput.py --parts N`'s draw, seed 0), catching every template the unit makes
(`replay._template`) with its records (every field but the core, sequence number and API calls; on-chip buffers
by name, GM addresses relative to the template's anchors) and the state it leaves (the walk's frozen values).
For each template it finds the nearest earlier template of the same core type (fewest records that differ,
aligned by instruction and source line, among those with at most 8 records more or fewer) and sorts it into:
- "first Mmad only": only its first Mmad differs (cmatrixInitVal: a tile's first kernel plane initialises L0C)
  and the state left is the same: derivable if the unit declared that a parameter (isFirstDk) decides that Mmad;
- "same records": no record differs (the keys differ in state that decided nothing here);
- "flags only": only SetFlag / WaitFlag records differ or are added (the queue protocol on a core's first tile);
- "other": records of other instructions differ (tile shapes, pads, the GM rows read);
- "first": no earlier template on its core type.
and prints, for the first two, the parts of the full key in which the two templates differ (attributes of the
API object by name, of the other objects reached as `object number.name`, extra's items as `extra.i`).
--analogy also counts the templates D equal (records and state left) to an earlier template C with the difference
between two earlier templates A -> B applied, where A -> B and A -> C change different records and attributes:
what a derivation that learns a parameter's effect from one pair of templates and applies it to another could
reach (a search over every triple: slow on the lab's candidates).
"""
from __future__ import annotations

import argparse
import collections
import difflib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ascend_sim.engine import replay  # noqa: E402
from ascend_sim.engine.replay_engine import expand  # noqa: E402
from bench_replay import _operator_run, select_layers  # noqa: E402

_FIELDS = ("name", "pipe", "params", "args", "reads", "writes", "registers", "src", "path", "nbytes", "event",
           "footprint")
_FLAGS = {"SetFlag", "WaitFlag"}


def _relative(buf, address, anchors):
    return buf.name, address - anchors.get(buf, 0) if buf.name.startswith("GM:") else address


def _record_values(r, anchors) -> tuple:
    """A record's fields as comparable values: buffers by name, GM addresses relative to the anchors."""
    args = r.args
    if args is not None and hasattr(args, "_fields"):
        values = dict(zip(args._fields, args))
        for name, value in list(values.items()):
            if value.__class__.__name__ == "Buffer":
                values[name] = value.name
                if name.endswith("buf") and value.name.startswith("GM:"):
                    values[name[:-3] + "0"] -= anchors.get(value, 0)
        args = tuple(values.items())
    fields = {"args": args,
              "reads": tuple(_relative(b, lo, anchors) + (hi - lo,) for b, lo, hi in r.reads),
              "writes": tuple(_relative(b, lo, anchors) + (hi - lo,) for b, lo, hi in r.writes),
              "footprint": None if r.footprint is None else tuple(
                  _relative(b, off, anchors) + tuple(map(repr, rest)) for b, off, *rest in r.footprint)}
    return (r.name, *[repr(fields[f]) if f in fields else repr(getattr(r, f)) for f in _FIELDS[1:]])


class Made:
    """The templates of one unit a launch makes: (core type, records' values, state left)."""

    def __init__(self, unit: str):
        self.unit, self.made, self.original = unit, [], replay._template

    def __enter__(self):
        def spy(u, core, roots, before, records, anchors, counts, nbytes, result, fixed_ids, key, size):
            template = self.original(u, core, roots, before, records, anchors, counts, nbytes, result, fixed_ids,
                                     key, size)
            if u.name == self.unit:
                after = replay._State(core, roots, fixed_ids)
                state = {("root" if i == 0 else i, name): v for i, values in enumerate(after.values)
                         for name, v in values if not (i == 0 and name in u.exclude)}
                state["flag balance"], state["registers"] = after.flag_balance, after.registers
                self.made.append((core.core_type.name, [_record_values(r, anchors)
                                                        for r in expand(records, core.chip, {})], state,
                                  _key_parts(key)))
            return template
        replay._template = spy
        return self

    def __exit__(self, *exc):
        replay._template = self.original

    def take(self) -> list:
        made, self.made = self.made, []
        return made


def _key_parts(key) -> dict:
    """A full key (replay._full_key) as {part: value}: the first root's attributes by name, the other objects'
    by (object, name), the flag balance, the registers and extra's items."""
    state, extra = key[2], key[3]
    parts = {name: v for name, v in state[0]}
    parts.update({(i, name): v for i, values in enumerate(state[1], start=1) for name, v in values})
    parts.update({"flag balance": state[2], "registers": state[3]})
    parts.update({("extra", i): v for i, v in enumerate(extra)})
    return parts


def _names(part) -> str:
    return part if isinstance(part, str) else f"{part[0]}.{part[1]}"


def _opcodes(a, b):
    """Alignment of two templates' records by (instruction, source line)."""
    names = [(r[0], r[7]) for r in a], [(r[0], r[7]) for r in b]
    return difflib.SequenceMatcher(None, *names, autojunk=False).get_opcodes()


def _differing(a, b) -> list:
    """(position in a or None, instruction) of a's records that differ from b's, or that only one of them has."""
    out = []
    for tag, i1, i2, j1, j2 in _opcodes(a, b):
        if tag == "equal":
            out += [(i, a[i][0]) for i, j in zip(range(i1, i2), range(j1, j2)) if a[i] != b[j]]
        else:
            out += [(i, a[i][0]) for i in range(i1, i2)] + [(None, b[j][0]) for j in range(j1, j2)]
    return out


def _category(records, differing: list, same_state: bool) -> str:
    names = {name for _, name in differing}
    if not differing:
        return "same records"
    if names <= _FLAGS:
        return "flags only"
    first_mmad = next((i for i, r in enumerate(records) if r[0] == "Mmad"), None)
    if differing == [(first_mmad, "Mmad")] and same_state:
        return "first Mmad only"
    return "other"


def _applied(a, b, c, opcodes):
    """c with the change a -> b (aligned by `opcodes`) applied to its records, or None when a -> b and a -> c
    change the same record."""
    if len(a) != len(c):
        return None
    out = list(b)
    for tag, i1, i2, j1, j2 in opcodes:
        for i in range(i1, i2):
            if c[i] != a[i]:
                if tag != "equal" or b[j1 + i - i1] != a[i]:
                    return None
                out[j1 + i - i1] = c[i]
    return out


def _applied_state(a, b, c):
    out = dict(c)
    for name in a.keys() | b.keys():
        if a.get(name) != b.get(name):
            if c.get(name) not in (a.get(name), b.get(name)):
                return None
            out[name] = b.get(name)
    return out


def _by_analogy(made, d, opcodes: dict) -> tuple | None:
    """(A, B, C) of the earlier templates such that template d is C with A -> B applied, or None. opcodes: the
    alignments of pairs so far."""
    kind, records, state = made[d][:3]
    earlier = [i for i in range(d) if made[i][0] == kind]
    for c in earlier:
        for a in earlier:
            if len(made[a][1]) != len(made[c][1]):
                continue
            for b in earlier:
                if len({a, b, c}) == 3 and len(made[b][1]) == len(records):
                    if (a, b) not in opcodes:
                        opcodes[a, b] = _opcodes(made[a][1], made[b][1])
                    applied = _applied(made[a][1], made[b][1], made[c][1], opcodes[a, b])
                    if applied == records and _applied_state(made[a][2], made[b][2], made[c][2]) == state:
                        return a, b, c
    return None


KEY_PARTS: collections.Counter = collections.Counter()  # (category, the key parts that differ) -> templates


def study(name: str, made: list, analogy: bool, verbose: bool, total: collections.Counter) -> None:
    counts, opcodes = collections.Counter(), {}
    for d, (kind, records, state, key) in enumerate(made):
        nearest = None
        for j in range(d):
            if made[j][0] == kind and abs(len(made[j][1]) - len(records)) <= 8:  # a few flags more or fewer
                differing = _differing(records, made[j][1])
                if nearest is None or len(differing) < len(nearest[1]):
                    nearest = (j, differing, made[j][2] == state)
        category = "first" if nearest is None else _category(records, nearest[1], nearest[2])
        counts[category] += 1
        if category in ("first Mmad only", "same records"):  # the key parts that told it from the nearest
            old = made[nearest[0]][3]
            parts = sorted(_names(p) for p in key.keys() | old.keys() if key.get(p) != old.get(p))
            KEY_PARTS[category, tuple(parts)] += 1
        counts[category + ": records"] += len(records)
        found = _by_analogy(made, d, opcodes) if analogy else None
        if found:
            counts["by analogy"] += 1
            counts["by analogy: records"] += len(records)
        if verbose:
            names = sorted({name for _, name in nearest[1]}) if nearest else ()
            detail = "" if nearest is None else (f" nearest {nearest[0]}: {len(nearest[1])} records differ "
                                                 f"{names}, state left the same: {nearest[2]}")
            print(f"  {d} {kind} {len(records)} records: {category}{detail}"
                  + (f"; = {found[2]} + ({found[1]} - {found[0]})" if found else ""))
    counts["templates"], counts["records"] = len(made), sum(len(r) for _, r, *_ in made)
    total.update(counts)
    print(f"{name}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items())), flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", default="dx", choices=("dx", "dw", "conv3d"))
    parser.add_argument("--unit", default="Conv3DBackpropInput._compute_kernel_plane")
    parser.add_argument("--only", nargs="*", default=None, help="layers (bench_replay.py's names)")
    parser.add_argument("--lab", type=int, default=0, metavar="N", help="the lab's first N C3D candidates instead")
    parser.add_argument("--analogy", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)

    total = collections.Counter()
    with Made(args.unit) as made:
        if args.lab:
            from bench_lab_throughput import C3D_CONV3A
            from frontends.lab.conv3d_dx import Conv3dDxTarget
            target = Conv3dDxTarget(C3D_CONV3A, engine="auto")
            for i, point in enumerate([{}] + target.legal_space().sample(args.lab - 1, 0)):
                target.simulate(point)
                study(f"lab candidate {i}", made.take(), args.analogy, args.verbose, total)
        else:
            for layer in select_layers(args.only):
                _operator_run(args.op, layer)(engine="replay", execute=False, check_races=False)
                study(layer.name, made.take(), args.analogy, args.verbose, total)
    print("total: " + ", ".join(f"{k} {v:,}" for k, v in sorted(total.items())))
    print("the key parts in which a template differs from its nearest earlier one (first Mmad only, same records):")
    for (category, parts), n in KEY_PARTS.most_common():
        print(f"  {category}: {n} templates: {', '.join(parts)}")


if __name__ == "__main__":
    main()
