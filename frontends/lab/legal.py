"""The legal space of a tiling: candidates that satisfy the tiling rules by construction.

An operator describes its knobs in order, each with the values to consider (which may depend on the knobs before
it: stepKa's range depends on baseK) and the rules that decide, once the knob is set, whether the point so far
can still be legal (stepKa*baseK whole kernel windows, L0A/L0B/L0C/L1 capacities, ...). The space is the tree of
knob values that pass every rule; a sweep draws its candidates from it, so its budget counts legal tilings. The
validator stays the judge: a point of this space that it refuses is a bug of the operator's rules
(tests/test_lab_legal.py checks that none is refused on several problems). `cuts` counts the values each rule
removed while the tree was walked: what shapes the space.
"""
from __future__ import annotations

import bisect
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

MAX_POINTS = 200_000  # points enumerated at most; a bigger space is sampled from its first MAX_POINTS


@dataclass(frozen=True)
class Rule:
    """One tiling rule, in the words the summary prints, as a test on the point so far."""

    name: str
    holds: Callable[[dict], bool]


@dataclass(frozen=True)
class Knob:
    """A tiling field the search sets: the values to consider given the earlier knobs, and its rules."""

    name: str
    candidates: Callable[[dict], tuple[int, ...]]
    rules: tuple[Rule, ...] = ()


def fixed(name: str, values) -> Knob:
    """A knob whose values do not depend on the others and that no rule restricts."""
    values = tuple(values)
    return Knob(name, lambda point: values)


def l1_buffer_knobs(l1, fits, rule: str = "L1 capacity") -> list[Knob]:
    """al1Pbuffer and bl1Pbuffer, one or two L1 buffers each, each cut by `rule`: fits(l1(point, al1, bl1)), the
    operator's L1 bytes of the point with those buffers (bl1Pbuffer 1 while al1Pbuffer is chosen)."""
    return [Knob("al1Pbuffer", lambda p: (1, 2), (Rule(rule, lambda p: fits(l1(p, p["al1Pbuffer"], 1))),)),
            Knob("bl1Pbuffer", lambda p: (1, 2),
                 (Rule(rule, lambda p: fits(l1(p, p["al1Pbuffer"], p["bl1Pbuffer"]))),))]


class LegalSpace:
    """The legal points of `knobs` (in order) over a base point of fixed fields (the generator's tiling)."""

    def __init__(self, knobs: list[Knob], base: Mapping[str, int]):
        self.knobs = list(knobs)
        self.names = [k.name for k in self.knobs]
        self.base = dict(base)
        self.cuts: Counter = Counter()
        self.truncated = False
        self._points: list[dict] | None = None

    def restricted(self, values: Mapping[str, tuple[int, ...]]) -> LegalSpace:
        """The same rules with the named knobs' candidates replaced by `values` (--vary) and every other knob
        held at its base value, or, where the varied ones make that illegal, at its nearest legal value (a
        varied baseK moves the K steps to whole kernel windows of it)."""
        knobs = []
        for knob in self.knobs:
            if knob.name in values:
                chosen = tuple(values[knob.name])
                knobs.append(Knob(knob.name, lambda point, chosen=chosen: chosen, knob.rules))
            else:
                knobs.append(Knob(knob.name, lambda point, knob=knob: self._nearest(knob, point), knob.rules))
        return LegalSpace(knobs, self.base)

    def _nearest(self, knob: Knob, point: dict) -> tuple[int, ...]:
        """The legal value of `knob` nearest its base value given `point` (none if it has none)."""
        base = self.base[knob.name]
        for value in sorted({base, *knob.candidates(point)}, key=lambda v: (abs(v - base), v)):
            if all(rule.holds({**point, knob.name: value}) for rule in knob.rules):
                return (value,)
        return ()

    def legal_values(self, index: int, point: dict, count: bool = False) -> list[int]:
        """The values of knob `index` that pass its rules, given `point` (which sets the earlier knobs)."""
        knob = self.knobs[index]
        out = []
        for value in knob.candidates(point):
            trial = {**point, knob.name: value}
            broken = next((rule for rule in knob.rules if not rule.holds(trial)), None)
            if broken is None:
                out.append(value)
            elif count:
                self.cuts[broken.name] += 1
        return out

    def points(self) -> list[dict]:
        """Every legal point (the first MAX_POINTS of them, in knob order, last knob fastest)."""
        if self._points is None:
            self.cuts.clear()
            self._points = []
            for point in self._walk(0, dict(self.base)):
                if len(self._points) >= MAX_POINTS:
                    self.truncated = True
                    break
                self._points.append(point)
        return self._points

    def _walk(self, index: int, point: dict) -> Iterator[dict]:
        if index == len(self.knobs):
            yield {name: point[name] for name in self.names}
            return
        name = self.knobs[index].name
        for value in self.legal_values(index, point, count=True):
            yield from self._walk(index + 1, {**point, name: value})

    def repair(self, point: Mapping[str, int]) -> dict | None:
        """The legal point nearest to `point`: knob by knob in order, its value if legal given the earlier ones,
        else the nearest legal one (the smaller on a tie); None if some knob has no legal value."""
        full = {**self.base, **point}
        out = dict(self.base)
        for index, knob in enumerate(self.knobs):
            legal = sorted(self.legal_values(index, out))
            if not legal:
                return None
            want = full[knob.name]
            if want not in legal:
                at = bisect.bisect_left(legal, want)
                near = legal[max(0, at - 1):at + 1]
                want = min(near, key=lambda v: (abs(v - want), v))
            out[knob.name] = want
        return {name: out[name] for name in self.names}

    def neighbours(self, point: Mapping[str, int]) -> list[dict]:
        """The legal points one knob away from `point`: each knob set to each of its other legal values, the
        later knobs kept where still legal and repaired otherwise (a new baseK may need new K steps)."""
        point = {**self.base, **point}
        out, seen = [], set()
        for index, knob in enumerate(self.knobs):
            for value in self.legal_values(index, point):
                if value == point[knob.name]:
                    continue
                moved = self.repair({**point, knob.name: value})
                key = moved and tuple(moved.values())
                if moved is not None and key not in seen:
                    seen.add(key)
                    out.append(moved)
        return out

    def stratified(self, count: int) -> list[dict]:
        """`count` points spread evenly over the legal space in knob order (all of them if it is smaller)."""
        points = self.points()
        if count >= len(points):
            return list(points)
        step = len(points) / count
        return [points[int(i * step)] for i in range(count)]

    def sample(self, count: int, seed: int) -> list[dict]:
        """`count` distinct legal points drawn with `seed`: uniformly from the whole space, or, when it is larger
        than MAX_POINTS (its enumeration stops there), by random descents (each knob a uniform choice among its
        legal values given the earlier ones), so that the draws reach the whole space."""
        points = self.points()
        rng = random.Random(seed)
        if not self.truncated:
            return rng.sample(points, min(count, len(points)))
        drawn: dict[tuple, dict] = {}
        for _ in range(20 * count):
            if len(drawn) >= count:
                break
            point = self._descend(rng)
            if point is not None:
                drawn.setdefault(tuple(point.values()), point)
        return list(drawn.values())

    def _descend(self, rng: random.Random) -> dict | None:
        point = dict(self.base)
        for index, knob in enumerate(self.knobs):
            legal = self.legal_values(index, point)
            if not legal:
                return None
            point[knob.name] = rng.choice(legal)
        return {name: point[name] for name in self.names}

    def describe(self) -> str:
        """What shapes the space: its size, each knob's legal values, and how many values each rule cut."""
        points = self.points()
        size = f"{len(points):,}{'+' if self.truncated else ''}"
        values = {name: sorted({p[name] for p in points}) for name in self.names}
        knobs = ", ".join(f"{name} {_values_text(v)}" for name, v in values.items())
        lines = [f"legal space: {size} tilings over {knobs}"]
        if self.cuts:
            lines.append("shaped by: " + "; ".join(f"{name} cut {n:,} choice(s)" for name, n in
                                                    self.cuts.most_common()))
        return "\n".join(lines)

    def to_dict(self) -> dict:
        self.points()
        return {"size": len(self._points), "truncated": self.truncated, "knobs": self.names,
                "cuts": dict(self.cuts.most_common())}


def _values_text(values: list[int]) -> str:
    if len(values) <= 6:
        return "{" + ",".join(map(str, values)) + "}"
    return f"{{{values[0]},{values[1]},...,{values[-1]}}} ({len(values)})"
