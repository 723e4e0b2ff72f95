"""A tiling override of a field the kernel that runs never uses is flagged by name (issue 22: `--set mDim=2` and
`--set baseD=2` on the basic-block dx kernel were accepted and changed nothing): an IgnoredOverrideWarning and a
note on the run. The flag comes from the fields the launch read (kernels/common/tiling_reads.py), less those a driver
copies without using; overrides the kernel does use are not flagged."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run
from kernels.common.tiling_reads import IgnoredOverrideWarning
from kernels.conv3d_backprop_input.kernel.arch22.drivers import Conv3dDxBasicBlockSplitMN
from tiling import TilingValidationError

RNG = np.random.default_rng(0)
X = RNG.standard_normal((1, 4, 6, 6, 3)).astype(np.float16)  # NDHWC
DY = RNG.standard_normal((1, 3, 5, 5, 5)).astype(np.float16)  # NDHWC
W = RNG.standard_normal((5, 3, 2, 2, 2)).astype(np.float16)
XF = RNG.standard_normal((1, 16, 4, 8, 8)).astype(np.float16)
WF = RNG.standard_normal((16, 16, 3, 3, 3)).astype(np.float16)


def dx(**kw):
    return conv3d_backprop_input_v2_run(X.shape, W, DY, strides=(1,) * 5, pads=(0,) * 6, data_format="NDHWC",
                                        route="v2", **kw)


def dw(**kw):
    return conv3d_backprop_filter_v2_run(X, (5, 3, 2, 2, 2), DY, strides=(1,) * 5, pads=(0,) * 6,
                                         data_format="NDHWC", **kw)


def forward(**kw):
    return conv3d_v2_run(XF, WF, strides=(1,) * 5, pads=(0,) * 6, **kw)


def _flags(call, overrides):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = call(tiling_overrides=overrides)
    return run, [str(w.message) for w in caught if issubclass(w.category, IgnoredOverrideWarning)]


@pytest.mark.parametrize("call, field, value, kernel", [
    (dx, "baseD", 2, "Conv3dDxBasicBlockSplitMN"),  # no dx driver reads baseD
    (dx, "mDim", 1, "Conv3dDxBasicBlockSplitMN"),  # copied by InitTilingData, never used by the basic-block driver
    (dw, "n0", 16, "Conv3DBackpropFilterV2 kernel of tiling key 0"),
    (forward, "woL0", 3, "KernelConv3DV2"),  # an HW-mode field, on an M-mode kernel
    (forward, "hoDim", 2, "KernelConv3DV2"),
])
def test_an_override_the_kernel_never_uses_is_flagged(call, field, value, kernel):
    base = call()
    assert base.tiling.tiling_key & (1 << 9) if call is dx else True  # dx: the basic-block key
    run, flags = _flags(call, {field: value})
    expected = f"tiling override {field}={value} changed nothing"
    assert len(flags) == 1 and flags[0].startswith(expected) and kernel in flags[0] and f"uses {field}" in flags[0]
    assert any(note.startswith(expected) for note in run.notes)
    # and it did change nothing
    assert run.report.cycles == base.report.cycles
    np.testing.assert_array_equal(run.result, base.result)


@pytest.mark.parametrize("call, overrides", [
    (dx, {"baseM": 16}), (dx, {"al1Pbuffer": 1}), (dx, {"coreNum": 2}),
    (dw, {"baseM": 16}),
    (forward, {"iterateMNOrder": 1}), (forward, {"mL0": 16}),
])
def test_an_override_the_kernel_uses_is_not_flagged(call, overrides):
    run, flags = _flags(call, overrides)
    assert flags == [] and not any("changed nothing" in note for note in run.notes)


def test_the_basic_block_driver_really_ignores_the_split_factors():
    # the claim behind COPIED_NOT_USED: every changed value the validator lets through gives the same instructions,
    # cycles and dx (the validator refuses some fields' changes outright, e.g. kDim; most get through)
    base = dx()
    exercised = set()
    for field in Conv3dDxBasicBlockSplitMN.COPIED_NOT_USED:
        for value in {1, 2, 3, 4} - {base.tiling.fields()[field]}:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", IgnoredOverrideWarning)
                    run = dx(tiling_overrides={field: value})
            except TilingValidationError:
                continue
            exercised.add(field)
            assert run.report.cycles == base.report.cycles, (field, value)
            assert [len(log) for log in run.report.logs] == [len(log) for log in base.report.logs], (field, value)
            np.testing.assert_array_equal(run.result, base.result)
    assert len(exercised) >= 3, exercised


def test_the_cli_says_which_set_changed_nothing(capsys):
    from frontends.cli.app import main
    small = ["--cin", "5", "--cout", "7", "--dhw", "4,6,7", "--kernel", "2,3,3", "--timing-only"]
    with pytest.warns(IgnoredOverrideWarning, match="woL0=3 changed nothing"):
        assert main(["conv3d", *small, "--set", "woL0=3"]) == 0
    with pytest.warns(IgnoredOverrideWarning, match="baseD=2 changed nothing"):
        assert main(["conv3d-dx", *small, "--set", "baseD=2"]) == 0
