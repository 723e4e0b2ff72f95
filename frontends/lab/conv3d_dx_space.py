"""The legal space of a Conv3DBackpropInputV2 (arch22, route v2) tiling: its knobs and the rules that shape them.

The rules are those of tiling/conv3d_backprop_input/arch22/validate.py, stated per knob so that a candidate is legal by construction; the
size formulas are the validator's own (l1_bytes, kernel_fmap_rows and the fp32 B helpers), so the two cannot
drift apart. Knob order: blocks, then L0C buffers, K steps, L1 buffers, order, cores (each rule is tested when
its last knob is set).
"""
from __future__ import annotations

import math

from frontends.lab.legal import Knob, LegalSpace, Rule, fixed, l1_buffer_knobs
from tiling.conv3d_backprop_input.arch22.validate import (LOAD3D_L1_HW_MAX, MMAD_MAX, U16_MAX, cout1_per_k_loop,
                                                          fp32_last_b1_load_short, fp32_tail_misread, kernel_fmap_rows,
                                                          l1_bytes)

FACTORS = (0.25, 0.5, 1, 2, 4)  # block sizes tried around the generator's


def around(value: int, unit: int, factors=FACTORS, high: int = MMAD_MAX) -> tuple[int, ...]:
    """Multiples of `unit` near value * each factor, and the value itself, up to `high`."""
    scaled = {unit * max(1, round(value * factor / unit)) for factor in factors} | {value}
    return tuple(sorted(v for v in scaled if v <= high))


def conv3d_dx_space(tiling, platform) -> LegalSpace:
    """The legal space around a generated dx tiling on `platform`."""
    f = tiling.fields()
    db = 4 if tiling.dtype == "float32" else 2
    c0, hkwk = f["c0"], f["hk"] * f["wk"]
    window = hkwk * c0
    k_all = max(cout1_per_k_loop(f)) * window  # the longest K loop
    ping_pong = 2 if f["al0Pbuffer"] == 2 and f["bl0Pbuffer"] == 2 else 1
    extra_k = c0 if db == 4 and hkwk > 1 else 0

    def steps(p: dict) -> tuple[int, ...]:
        # a step longer than the whole K loop loads nothing more
        return tuple(range(1, math.ceil(k_all / p["baseK"]) + 1))

    def l1(p: dict, al1: int, bl1: int) -> int:
        a1, b1 = l1_bytes({**f, **p}, db)
        return a1 * al1 + b1 * bl1

    def fp32_b_ok(p: dict) -> bool:
        g = {**f, **p}
        for cout1 in cout1_per_k_loop(g):
            k = cout1 * window
            load = g["stepKb"] * g["baseK"]
            if fp32_tail_misread(g, k) or fp32_last_b1_load_short(g, cout1):
                return False
            if window == c0 and load % 16 and load < k:
                return False
        if hkwk > 1:
            windows = g["stepKb"] * g["baseK"] // window
            if math.ceil(windows / 2) * 16 * hkwk > LOAD3D_L1_HW_MAX:
                return False
        return True

    base_k_values = around(f["baseK"], c0) + tuple(c0 * d for d in range(1, hkwk + 1) if hkwk % d == 0) + \
        (window, 2 * window)
    knobs = [
        Knob("baseM", lambda p: around(f["baseM"], 16), (
            Rule("Load3D l1H <= 32767 dy rows", lambda p: kernel_fmap_rows({**f, **p}, p["baseM"] * f["stepM"])
                 <= LOAD3D_L1_HW_MAX),)),
        Knob("baseN", lambda p: around(f["baseN"], 16), (
            Rule("LoadData2D repeatTimes baseN/16 <= 255", lambda p: db == 4 or p["baseN"] // 16 <= 255),)),
        Knob("baseK", lambda p: tuple(sorted(v for v in set(base_k_values) if v <= MMAD_MAX)), (
            Rule("baseK whole kernel windows or dividing one", lambda p: p["baseK"] % window == 0
                 or window % p["baseK"] == 0),
            Rule("L0A capacity (baseM*baseK)", lambda p: p["baseM"] * p["baseK"] * db * ping_pong <= platform.L0A),
            Rule("L0B capacity (baseN*baseK)", lambda p: p["baseN"] * (p["baseK"] + extra_k) * db * ping_pong
                 <= platform.L0B))),
        Knob("cl0Pbuffer", lambda p: (1, 2), (
            Rule("L0C capacity (baseM*baseN*4*cl0Pbuffer)",
                 lambda p: p["baseM"] * p["baseN"] * 4 * p["cl0Pbuffer"] <= platform.L0C),)),
        Knob("stepKa", steps, (
            Rule("stepKa*baseK whole kernel windows", lambda p: p["stepKa"] * p["baseK"] % window == 0),
            Rule("Load3D channelSize/kStartPt <= 65535",
                 lambda p: p["stepKa"] * p["baseK"] // hkwk <= U16_MAX and (p["stepKa"] - 1) * p["baseK"] <= U16_MAX))),
        Knob("stepKb", steps, (
            Rule("stepKb*baseK whole kernel windows (or all of K)",
                 lambda p: p["stepKb"] * p["baseK"] % window == 0 or p["stepKb"] * p["baseK"] >= k_all),
            Rule("float32 B loads whole 16-cout groups", lambda p: db == 2 or fp32_b_ok(p)),
            Rule("L1 capacity", lambda p: l1(p, 1, 1) <= platform.L1))),
        *l1_buffer_knobs(l1, lambda size: size <= platform.L1),
        fixed("iterateOrder", (0, 1)),
    ]
    if tiling.useBasicBlock:
        # the basic-block driver splits its tasks over coreNum cores; the general driver's core split is the
        # product of its dims, not a free knob
        cores = platform.aic_cores
        knobs.append(fixed("coreNum", sorted({max(1, cores // 4), cores // 2, cores, f["coreNum"]})))
    return LegalSpace(knobs, {k.name: int(f[k.name]) for k in knobs})
