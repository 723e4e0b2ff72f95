"""Random tiling overrides on small dx problems: refused by the validator before launch, or a clean, right run.

For each example: a small Conv3DBackpropInputV2 problem, its generated tiling, and a random subset of the tiling
knobs set to values drawn from plausible and edge ranges (illegal ones included). The operator must either
refuse the overrides with TilingValidationError before issuing a single instruction, or run without a
simulator fault and match the independent numpy reference (kernels/conv3d_backprop_input/reference.py).

CI runs OVERRIDE_EXAMPLES (default 200, about 10 s) examples; set it higher locally, e.g. OVERRIDE_EXAMPLES=2000.
"""
from __future__ import annotations

import math
import os

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import tiling
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.reference import conv3d_dx_reference
from tiling import TilingValidationError

DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}
RTOL = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-5}
EXAMPLES = int(os.environ.get("OVERRIDE_EXAMPLES", "200"))


def _out(size: int, k: int, s: int, d: int, before: int, after: int) -> int:
    return (size + before + after - (k - 1) * d - 1) // s + 1


@st.composite
def small_problems(draw):
    """A small problem the V2 kernel takes as it is (pads within the kernel reach, strideD <= kD)."""
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    groups = draw(st.sampled_from([1, 1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 40 // groups))
    cout = groups * draw(st.integers(1, 40 // groups))
    kernel, strides, dil, pads, sizes = [], [], [], [], []
    for axis in range(3):
        k = draw(st.integers(1, 3))
        s = draw(st.integers(1, k if axis == 0 else 3))
        d = draw(st.integers(1, 2))
        reach = (k - 1) * d
        before, after = draw(st.integers(0, reach)), draw(st.integers(0, reach))
        low = max(1, reach + 1 - before - after)
        size = draw(st.integers(low, low + (3 if axis == 0 else 14)))
        kernel.append(k), strides.append(s), dil.append(d), pads.extend([before, after]), sizes.append(size)
    n = draw(st.integers(1, 2))
    platform = draw(st.sampled_from(["Ascend910B2", "Ascend910B3"]))
    return dict(dtype=dtype, dx_shape=(n, cin, *sizes), filter_shape=(cout, cin // groups, *kernel),
                strides=tuple(strides), pads=tuple(pads), dilations=tuple(dil), groups=groups, platform=platform)


def dy_shape_of(problem: dict) -> tuple[int, ...]:
    n, _, *sizes = problem["dx_shape"]
    cout, _, *kernel = problem["filter_shape"]
    pads = problem["pads"]
    return (n, cout, *(_out(size, k, s, d, pads[2 * i], pads[2 * i + 1]) for i, (size, k, s, d) in
                       enumerate(zip(sizes, kernel, problem["strides"], problem["dilations"]))))


SPLIT_DIMS = ("batchDim", "groupDim", "mDim", "nDim", "dDim")


def _knob_values(t, p) -> dict[str, st.SearchStrategy]:
    """Per knob: plausible values (three draws in four) or edge / illegal ones."""
    c0, wi, hi = t.c0, t.wi, t.hi
    window = t.hk * t.wk * c0

    def mix(good, bad):
        return st.one_of(good, good, good, bad)

    blocks = mix(st.integers(1, 32).map(lambda i: 16 * i), st.sampled_from([0, 8, 24, 1024, 2048, 4096, 4112]))
    pbuffer = st.sampled_from([1, 2, 2, 0, 3])
    return {
        "baseM": blocks,
        "baseN": blocks,
        "baseK": mix(st.one_of(st.integers(1, 8).map(lambda i: i * window), st.integers(1, 32).map(lambda i: i * c0)),
                     st.sampled_from([0, c0 // 2, 3 * c0 // 2, 4096, 4096 + c0])),
        "stepKa": mix(st.integers(1, 12), st.sampled_from([0, 64, 1000])),
        "stepKb": mix(st.integers(1, 12), st.sampled_from([0, 64, 1000])),
        "stepM": st.sampled_from([1, 1, 1, 2]),
        "stepN": st.sampled_from([1, 1, 1, 2]),
        "al0Pbuffer": pbuffer, "bl0Pbuffer": pbuffer, "cl0Pbuffer": pbuffer,
        "al1Pbuffer": pbuffer, "bl1Pbuffer": pbuffer,
        "iterateOrder": st.sampled_from([0, 1, 1, 2]),
        "singleCoreM": mix(st.integers(1, hi + 1).map(lambda r: r * wi), st.sampled_from([0, wi + 1, 2 * hi * wi + 3])),
        "singleCoreDin": mix(st.integers(1, t.di + 1), st.just(0)),
        "singleCoreBatch": mix(st.integers(1, t.batch + 1), st.just(0)),
        "singleCoreCin1": mix(st.integers(1, t.cin1G + 1), st.just(0)),
        "singleCoreGroup": mix(st.integers(1, t.group + 1), st.just(0)),
        "coreNum": mix(st.integers(1, p.aic_cores), st.sampled_from([0, p.aic_cores + 1])),
        "batchDim": st.integers(1, t.batch + 1),
        "groupDim": st.integers(1, t.group + 1),
        "mDim": st.integers(1, hi + 1),
        "nDim": st.integers(1, t.cin1G + 1),
        "dDim": st.integers(1, t.di + 1),
        "initOutputFlag": st.sampled_from([0, 1]),
        "loadB2Condition": st.sampled_from([0, 1, 2]),  # the tiling key's B-load template
    }


@st.composite
def overrides_for(draw, generated):
    """1 to 4 knobs; pairs the kernel reads together are kept consistent in most draws."""
    t = generated.conv3DDxTiling
    knobs = _knob_values(t, generated.platform)
    names = draw(st.lists(st.sampled_from(sorted(knobs)), min_size=1, max_size=4, unique=True))
    changes = {name: draw(knobs[name], label=name) for name in names}
    if "singleCoreCin1" in changes and draw(st.integers(0, 3)):
        changes["singleCoreCin"] = changes["singleCoreCin1"] * t.c0
    if any(name in changes for name in SPLIT_DIMS) and draw(st.integers(0, 3)):
        dims = {**generated.params.model_dump(), **changes}
        changes["coreNum"] = math.prod(dims[name] for name in (*SPLIT_DIMS, "kDim"))
    return changes


def _close(got: np.ndarray, ref: np.ndarray, weight: np.ndarray, dy: np.ndarray, groups: int, rtol: float) -> None:
    """|got - ref| <= rtol * (|ref| + sqrt(K) * rms(w) * rms(dy)), K the length of each dot product."""
    got = got.astype(np.float64)
    assert not np.isnan(got).any(), "dx elements left unwritten (NaN poison visible)"
    k = weight.shape[0] // groups * math.prod(weight.shape[2:])
    scale = math.sqrt(k) * np.sqrt(np.mean(weight.astype(np.float64) ** 2) * np.mean(dy.astype(np.float64) ** 2))
    err = np.abs(got - ref) - rtol * (np.abs(ref) + scale)
    assert (err <= 0).all(), f"{int((err > 0).sum())} of {err.size} elements differ; max |got - ref| " \
                             f"{np.abs(got - ref).max():.3g}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_problems(), st.data())
def test_random_overrides_are_refused_or_run_right(problem, data):
    dtype = DTYPES[problem["dtype"]]
    dy_shape = dy_shape_of(problem)
    generated = tiling.conv3d_backprop_input_tiling(dy_shape, **problem)
    changes = data.draw(overrides_for(generated), label="overrides")
    rng = np.random.default_rng(0)
    weight = rng.standard_normal(problem["filter_shape"]).astype(dtype)
    dy = rng.standard_normal(dy_shape).astype(dtype)
    issued = []
    try:
        run = conv3d_backprop_input_v2_run(
            problem["dx_shape"], weight, dy, strides=(1, 1, *problem["strides"]), pads=problem["pads"],
            dilations=(1, 1, *problem["dilations"]), groups=problem["groups"], data_format="NCDHW",
            platform=problem["platform"], tiling_overrides=changes, route="v2",
            hooks=[lambda core, instr: issued.append(1) if not issued else None])
    except TilingValidationError as refused:
        assert not issued, "refused after instructions had been issued"
        event("refused: " + ", ".join(sorted({p.field for p in refused.report.problems})))
        return
    event("ran")
    expect = conv3d_dx_reference(dy, weight, problem["dx_shape"], problem["strides"], problem["pads"],
                                 problem["dilations"], problem["groups"])
    _close(run.result, expect, weight, dy, problem["groups"], RTOL[problem["dtype"]])
