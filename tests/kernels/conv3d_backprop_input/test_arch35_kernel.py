"""The arch35 (Ascend 950) Conv3DBackpropInputV2 kernel through the operator, against PyTorch float64 autograd.

conv3d_backprop_input_v2(..., platform="Ascend950PR_9589") runs the arch35 host tiling and the arch35 kernel
(MIX AIC:AIV 1:2). Every case below is one the tiling sends to a ported template (the test fails if the operator
refuses it); test_arch35_refusals.py covers what is refused.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35
from tests.kernels.conv3d_backprop_input.arch35_oracle import (EIGHT_BIT, assert_close_16_32,
                                                               assert_within_one_step_8bit, dx_reference)

PLATFORM = "Ascend950PR_9589"
NAMES = {np.dtype(float16): "float16", np.dtype(bfloat16): "bfloat16", np.dtype(float32): "float32",
         np.dtype(hifloat8): "hifloat8", np.dtype(float8_e4m3fn): "float8_e4m3fn"}


def out_size(i, k, s, p0, p1, d):
    return (i + p0 + p1 - d * (k - 1) - 1) // s + 1


def run_case(dtype, n, cin, cout, dhw, ks, strides, pads, dils, groups=1, data_format="NCDHW",
             filter_format="NCDHW", hf32=False, seed=0):
    """Run one problem on the arch35 conv kernel; return (run, dx NCDHW float64, reference, bound)."""
    rng = np.random.default_rng(seed)
    do = tuple(out_size(dhw[i], ks[i], strides[i], pads[2 * i], pads[2 * i + 1], dils[i]) for i in range(3))
    # 8-bit inputs: small values keep the 8-bit outputs inside the range (the goldens do not saturate)
    scale = 0.25 if np.dtype(dtype).itemsize == 1 else 1.0
    dy = (rng.uniform(-1, 1, (n, cout) + do) * scale).astype(dtype)
    w = (rng.uniform(-1, 1, (cout, cin // groups) + tuple(ks)) * scale).astype(dtype)
    dyx = dy.transpose(0, 2, 3, 4, 1) if data_format == "NDHWC" else dy
    wx = {"NCDHW": w, "NDHWC": w.transpose(0, 2, 3, 4, 1), "DHWCN": w.transpose(2, 3, 4, 1, 0)}[filter_format]
    size = (n,) + tuple(dhw) + (cin,) if data_format == "NDHWC" else (n, cin) + tuple(dhw)
    st5 = (1,) + tuple(strides) + (1,) if data_format == "NDHWC" else (1, 1) + tuple(strides)
    dl5 = (1,) + tuple(dils) + (1,) if data_format == "NDHWC" else (1, 1) + tuple(dils)
    run = conv3d_backprop_input_v2_run(size, np.ascontiguousarray(wx), np.ascontiguousarray(dyx), strides=st5,
                                       pads=pads, dilations=dl5, groups=groups, data_format=data_format,
                                       filter_format=filter_format, platform=PLATFORM, enable_hf32=hf32,
                                       route="v2")  # the conv kernel, also where aclnn would take a matmul
    y = run.result.transpose(0, 4, 1, 2, 3) if data_format == "NDHWC" else run.result
    ref, bound = dx_reference((n, cin) + tuple(dhw), w, dy, tuple(strides), pads, tuple(dils), groups)
    return run, y, ref, bound


def check(dtype, y, ref, bound, hf32=False):
    if np.dtype(dtype) in EIGHT_BIT:
        assert_within_one_step_8bit(y, ref, dtype)
    else:
        assert_close_16_32(y, ref, bound, dtype, hf32)


# (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads, dilations, groups)
GRID = {
    "stride2": (2, 20, 12, (3, 8, 7), (3, 3, 3), (2, 2, 2), (1,) * 6, (1, 1, 1), 1),
    "stride1_pad1": (1, 16, 16, (3, 6, 10), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1),
    "stride_gt_kernel": (1, 16, 8, (5, 12, 10), (2, 2, 2), (3, 3, 3), (0,) * 6, (1, 1, 1), 1),
    "asym_pads": (1, 24, 16, (4, 9, 8), (3, 2, 3), (1, 2, 1), (1, 0, 2, 1, 0, 1), (1, 1, 1), 1),
    "dilation": (1, 16, 16, (5, 10, 10), (2, 3, 3), (1, 1, 1), (0, 1, 2, 2, 2, 2), (2, 2, 2), 1),
    "groups2": (1, 32, 32, (3, 8, 8), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 2),
    "odd_channels": (2, 19, 13, (3, 7, 9), (3, 3, 3), (2, 1, 2), (1,) * 6, (1, 1, 1), 1),
    "one_by_one": (1, 32, 32, (2, 16, 16), (1, 1, 1), (1, 1, 1), (0,) * 6, (1, 1, 1), 1),
    "wide": (1, 64, 64, (4, 16, 16), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1),
}
DTYPES_16_32 = (float16, bfloat16, float32)


def _ported(dtype, case, data_format="NCDHW", filter_format="NCDHW") -> bool:
    n, cin, cout, dhw, ks, s, p, dl, g = GRID[case]
    do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], dl[i]) for i in range(3))
    fshape = {"NCDHW": (cout, cin // g) + ks, "NDHWC": (cout,) + ks + (cin // g,),
              "DHWCN": ks + (cin // g, cout)}[filter_format]
    try:
        plan_arch35((n, cin) + dhw, fshape, (n, cout) + do, NAMES[np.dtype(dtype)], strides=s, pads=p,
                    dilations=dl, groups=g, data_format="NCDHW", filter_format=filter_format, platform=PLATFORM,
                    enable_hf32=False)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("case", list(GRID))
@pytest.mark.parametrize("dtype", DTYPES_16_32, ids=lambda d: NAMES[np.dtype(d)])
def test_grid_16_32_ncdhw(dtype, case):
    n, cin, cout, dhw, ks, s, p, dl, g = GRID[case]
    if not _ported(dtype, case):
        pytest.fail("the tiling picks a template feature not ported yet")
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, dl, g)
    kinds = [c.kind for c in run.report.cores]
    assert kinds.count("AIV") == 2 * kinds.count("AIC") == 2 * run.tiling.block_dim  # MIX AIC:AIV 1:2
    check(dtype, y, ref, bound)


EIGHT_BIT_CASES = ("stride2", "stride_gt_kernel", "asym_pads", "groups2", "one_by_one", "odd_channels", "dilation")


@pytest.mark.parametrize("case", EIGHT_BIT_CASES)
@pytest.mark.parametrize("dtype", (hifloat8, float8_e4m3fn), ids=lambda d: NAMES[np.dtype(d)])
def test_grid_8bit(dtype, case):
    n, cin, cout, dhw, ks, s, p, dl, g = GRID[case]
    if not _ported(dtype, case):
        pytest.fail("the tiling picks a template feature not ported yet")
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, dl, g)
    assert y.dtype == np.dtype(dtype)
    check(dtype, y, ref, bound)


@pytest.mark.parametrize("data_format,filter_format", [("NDHWC", "NDHWC"), ("NDHWC", "NCDHW"), ("NDHWC", "DHWCN"),
                                                       ("NCDHW", "NDHWC"), ("NCDHW", "DHWCN")])
@pytest.mark.parametrize("dtype", DTYPES_16_32, ids=lambda d: NAMES[np.dtype(d)])
def test_formats(dtype, data_format, filter_format):
    n, cin, cout, dhw, ks, s, p, dl, g = GRID["stride2"]
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, dl, g, data_format, filter_format)
    check(dtype, y, ref, bound)


def test_kernel_split_with_stride_d_above_kernel_d_clears_the_skipped_planes():
    """Hypothesis found it: the real kernel-split tiling leaves initOutputFlag 0 with stride_d 2 > kernel_d 1, so
    dx depth 1 (no kernel plane reaches it) stayed unwritten (NaN). The plan forces the flag, with a note."""
    shapes = dict(n=1, cin=1, cout=9, dhw=(3, 3, 3), ks=(1, 3, 3), strides=(2, 2, 2), pads=(0, 0, 1, 1, 1, 1),
                  dils=(1, 1, 1))
    real = conv3d_backprop_input_tiling_arch35((1, 9, 2, 2, 2), (9, 1, 1, 3, 3), (1, 1, 3, 3, 3), (2, 2, 2),
                                               shapes["pads"], (1, 1, 1), 1, "float32", PLATFORM)
    assert real.template.startswith("Conv3DDXV2KernelSplit") and real.initOutputFlag == 0  # the real answer
    run, y, ref, bound = run_case(float32, **shapes)
    check(float32, y, ref, bound)
    assert run.tiling.initOutputFlag == 1
    assert any(note.startswith("initOutputFlag forced to 1") for note in run.notes)
    assert (y[:, :, 1] == 0).all()


def test_record_false_keeps_no_records_and_changes_nothing_else():
    """record=False reaches the arch35 launch (it was dropped on the way: every record was kept): the same result
    bytes and cycles, no instruction log."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((24, 16, 3, 3, 3)).astype(float16)
    dy = rng.standard_normal((1, 24, 4, 6, 6)).astype(float16)
    args = dict(strides=(1, 1, 1, 1, 1), pads=(1,) * 6, platform=PLATFORM, data_format="NCDHW", route="v2")
    kept = conv3d_backprop_input_v2_run((1, 16, 4, 6, 6), w, dy, **args)
    dropped = conv3d_backprop_input_v2_run((1, 16, 4, 6, 6), w, dy, record=False, **args)
    assert sum(map(len, kept.report.logs)) == kept.report.instructions > 0
    assert sum(map(len, dropped.report.logs)) == 0
    assert dropped.report.cycles == kept.report.cycles and dropped.result.tobytes() == kept.result.tobytes()


def test_hf32():
    n, cin, cout, dhw, ks, s, p, dl, g = GRID["stride2"]
    run, y, ref, bound = run_case(float32, n, cin, cout, dhw, ks, s, p, dl, g, hf32=True)
    assert run.tiling.hf32Flag == 1
    check(float32, y, ref, bound, hf32=True)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from((float16, bfloat16, float32, hifloat8, float8_e4m3fn)),
       n=st.integers(1, 2), cin=st.integers(1, 24), cout=st.integers(1, 24),
       dhw=st.tuples(st.integers(1, 4), st.integers(2, 9), st.integers(2, 9)),
       k=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
       s=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
       pads=st.tuples(*[st.integers(0, 2)] * 6), dl=st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 2)),
       seed=st.integers(0, 99))
def test_hypothesis(dtype, n, cin, cout, dhw, k, s, pads, dl, seed):
    for i in range(3):  # a kernel that fits the padded input and pads below the kernel's reach
        assume(dl[i] * (k[i] - 1) + 1 <= dhw[i] + pads[2 * i] + pads[2 * i + 1])
        assume(max(pads[2 * i], pads[2 * i + 1]) < dl[i] * (k[i] - 1) + 1)
    do = tuple(out_size(dhw[i], k[i], s[i], pads[2 * i], pads[2 * i + 1], dl[i]) for i in range(3))
    try:
        plan_arch35((n, cin) + dhw, (cout, cin) + k, (n, cout) + do, NAMES[np.dtype(dtype)], strides=s, pads=pads,
                    dilations=dl, groups=1, data_format="NCDHW", filter_format="NCDHW", platform=PLATFORM,
                    enable_hf32=False)
    except ValueError:
        assume(False)  # refused before launch (an unported template feature or the tiling's own checks)
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, k, s, pads, dl, seed=seed)
    check(dtype, y, ref, bound)


def test_the_grid_covers_the_ported_template_paths():
    """The grid's tilings reach every ported loadB2Condition, the vector pre-transpose on and off, the init-output
    pass on and off and groups > 1 (a weight kept in L1: the full-load UT vectors with data,
    test_arch35_vectors_run.py)."""
    seen = set()
    for dtype in DTYPES_16_32 + (hifloat8,):
        for case, (n, cin, cout, dhw, ks, s, p, dl, g) in GRID.items():
            do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], dl[i]) for i in range(3))
            t = plan_arch35((n, cin) + dhw, (cout, cin // g) + ks, (n, cout) + do, NAMES[np.dtype(dtype)],
                            strides=s, pads=p, dilations=dl, groups=g, data_format="NCDHW", filter_format="NCDHW",
                            platform=PLATFORM, enable_hf32=False)
            seen.add(("loadB2", t.key_fields["loadB2Condition"]))
            seen.add(("vecTrans", t.enableVecTrans))
            seen.add(("init", t.initOutputFlag))
            seen.add(("groups>1", t.group > 1))
    expected = {("loadB2", 1), ("loadB2", 2), ("loadB2", 3), ("vecTrans", 0), ("vecTrans", 1), ("init", 0),
                ("init", 1), ("groups>1", True)}
    assert expected <= seen, expected - seen


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from((float16, bfloat16, float32)), n=st.integers(1, 2), groups=st.integers(1, 3),
       cg=st.tuples(st.integers(1, 12), st.integers(1, 12)),
       formats=st.sampled_from([("NCDHW", "NCDHW"), ("NCDHW", "NDHWC"), ("NCDHW", "DHWCN"), ("NDHWC", "NDHWC"),
                                ("NDHWC", "NCDHW"), ("NDHWC", "DHWCN")]),
       dhw=st.tuples(st.integers(1, 3), st.integers(3, 8), st.integers(3, 8)), s=st.integers(1, 2),
       seed=st.integers(0, 99))
def test_hypothesis_groups_and_formats(dtype, n, groups, cg, formats, dhw, s, seed):
    data_format, filter_format = formats
    assume(groups == 1 or data_format == "NCDHW")  # NDHWC with groups > 1 is refused on the 950
    cin, cout = cg[0] * groups, cg[1] * groups
    ks, pads = (1, 3, 3), (0, 0, 1, 1, 1, 1)
    do = tuple(out_size(dhw[i], ks[i], s, pads[2 * i], pads[2 * i + 1], 1) for i in range(3))
    fshape = {"NCDHW": (cout, cin // groups) + ks, "NDHWC": (cout,) + ks + (cin // groups,),
              "DHWCN": ks + (cin // groups, cout)}[filter_format]
    size = (n,) + dhw + (cin,) if data_format == "NDHWC" else (n, cin) + dhw
    dy_shape = (n,) + do + (cout,) if data_format == "NDHWC" else (n, cout) + do
    try:
        plan_arch35(size, fshape, dy_shape, NAMES[np.dtype(dtype)], strides=(s, s, s), pads=pads,
                    dilations=(1, 1, 1), groups=groups, data_format=data_format, filter_format=filter_format,
                    platform=PLATFORM, enable_hf32=False)
    except ValueError:
        assume(False)  # an unported template feature (e.g. ENLARGE groups), refused before launch
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, (s, s, s), pads, (1, 1, 1), groups, data_format,
                                  filter_format, seed=seed)
    check(dtype, y, ref, bound)
