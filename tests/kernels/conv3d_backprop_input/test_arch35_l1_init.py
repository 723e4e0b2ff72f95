"""initOutputFlag L1_INIT (2) on the arch35 kernel: the source's entry runs the init-output pass only for L0_INIT
(1), so a tiling forced to L1_INIT runs none (the arch35 tiling itself sets only 0 or 1). Against PyTorch: every
element some kernel tap reaches is right; the others keep what y held before (NaN here, the poisoned buffer).
Split-Dk stays refused, by name and with the reason."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.machine.dtypes import float16
from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import unported_features
from kernels.conv3d_backprop_input.operator_arch35 import launch_arch35, plan_arch35
from tests.kernels.conv3d_backprop_input.arch35_oracle import assert_close_16_32, dx_reference
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import GRID, PLATFORM, out_size


def _forced_run(case, **overrides):
    n, cin, cout, dhw, ks, s, p, dl, g = GRID[case]
    do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], dl[i]) for i in range(3))
    rng = np.random.default_rng(4)
    w = rng.uniform(-1, 1, (cout, cin // g) + ks).astype(float16)
    dy = rng.uniform(-1, 1, (n, cout) + do).astype(float16)
    tiling = plan_arch35((n, cin) + dhw, w.shape, dy.shape, "float16", strides=s, pads=p, dilations=dl, groups=g,
                         data_format="NCDHW", filter_format="NCDHW", platform=PLATFORM, enable_hf32=False)
    planned = tiling.initOutputFlag
    tiling = tiling.with_overrides(**overrides, validate=False)  # the arch35 tiling has no validator yet
    y, report = launch_arch35(tiling, w, dy, (n, cin) + dhw, platform=PLATFORM, data_format="NCDHW",
                              filter_format="NCDHW")
    ref, bound = dx_reference((n, cin) + dhw, w, dy, s, p, dl, g)
    return planned, y, ref, bound, report


def _fills(report):
    """The init pass's Fill on the AIVs: a Duplicate of zeros in UB, copied out (the vecTrans pre-pass has none)."""
    return sum(c.counts.get("Duplicate", 0) for c in report.cores if c.kind == "AIV")


def test_l1_init_where_every_element_is_reached():
    planned, y, ref, bound, report = _forced_run("stride1_pad1", initOutputFlag=2)
    assert planned == 0 and (bound > 0).all()
    assert_close_16_32(y, ref, bound, float16)
    assert _fills(report) == 0


def test_l1_init_runs_no_init_pass():
    """stride > kernel: the tiling asks for L0_INIT (the AIVs zero y first); forced to L1_INIT, nothing does. The
    tiles the cube skips (no kernel plane reaches their output depth) stay NaN; the elements of computed tiles
    that no tap reaches come out as the Mmad's zeros; the rest match PyTorch."""
    planned, y, ref, bound, report = _forced_run("stride_gt_kernel", initOutputFlag=2)
    assert planned == 1
    unreached = bound == 0
    y64 = y.astype(np.float64)
    skipped = np.isnan(y64)
    assert skipped.any() and not (skipped & ~unreached).any()
    assert (y64[unreached & ~skipped] == 0).all()
    assert skipped.all(axis=(0, 1, 3, 4)).any()  # whole output depths
    y64 = np.where(unreached, 0.0, y64)
    assert_close_16_32(y64, np.where(unreached, 0.0, ref), bound, float16)
    assert _fills(report) == 0
    _, y0, ref0, bound0, report0 = _forced_run("stride_gt_kernel")  # the planned L0_INIT, for contrast
    assert_close_16_32(y0, ref0, bound0, float16)
    assert _fills(report0) > 0


def test_split_dk_is_refused_with_the_reason():
    n, cin, cout, dhw, ks, s, p, dl, g = GRID["stride2"]
    do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], dl[i]) for i in range(3))
    tiling = plan_arch35((n, cin) + dhw, (cout, cin) + ks, (n, cout) + do, "float16", strides=s, pads=p,
                         dilations=dl, groups=g, data_format="NCDHW", filter_format="NCDHW", platform=PLATFORM,
                         enable_hf32=False)
    assert tiling.dk == 3 and tiling.singleIterateDk == 3
    missing = unported_features(tiling.tiling_key, tiling.with_overrides(singleIterateDk=1, validate=False))
    assert len(missing) == 1 and "split-Dk: dead code in the source" in missing[0]
    with pytest.raises(NotImplementedError, match="singleIterateDk=1 < dk=3"):
        launch_arch35(tiling.with_overrides(singleIterateDk=1, validate=False), np.zeros((cout, cin) + ks, float16),
                      np.zeros((n, cout) + do, float16), (n, cin) + dhw, platform=PLATFORM, data_format="NCDHW",
                      filter_format="NCDHW")
