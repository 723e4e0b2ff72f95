"""Tiling overrides on the Ascend 950: a legal override of the arch35 tiling runs on the arch35 kernel and still
matches PyTorch; block_dim follows coreNum; an override the kernel never reads is flagged."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.machine.dtypes import float16
from kernels.common.tiling_reads import IgnoredOverrideWarning
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from tests.kernels.conv3d_backprop_input.arch35_oracle import assert_close_16_32, dx_reference

PLATFORM = "Ascend950PR_9589"
SIZE = (1, 16, 3, 8, 8)


def _operands(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((16, 16, 3, 3, 3)).astype(float16),
            rng.standard_normal((1, 16, 3, 8, 8)).astype(float16))


def _run(overrides):
    w, dy = _operands()
    return conv3d_backprop_input_v2_run(SIZE, w, dy, strides=(1,) * 5, pads=(1,) * 6, platform=PLATFORM,
                                        data_format="NCDHW", tiling_overrides=overrides)


@pytest.mark.parametrize("overrides", [
    {"baseM": 16, "singleCoreM": 16},  # four M blocks per plane
    {"baseM": 32, "coreNum": 3},  # fewer cores than blocks: round-robin rounds
    {"al1Pbuffer": 1, "bl1Pbuffer": 1, "al0Pbuffer": 1, "bl0Pbuffer": 1, "cl0Pbuffer": 1},
    {"stepKa": 1, "stepKb": 1, "baseK": 144},
])
def test_legal_override_runs_and_matches_pytorch(overrides):
    run = _run(overrides)
    assert all(run.tiling.fields()[name] == value for name, value in overrides.items())
    w, dy = _operands()
    ref, bound = dx_reference(SIZE, w, dy, (1, 1, 1), (1,) * 6, (1, 1, 1), 1)
    assert_close_16_32(run.result, ref, bound, float16)


def test_block_dim_follows_core_num():
    run = _run({"coreNum": 3})
    assert run.tiling.block_dim == 3
    assert [core.kind for core in run.report.cores].count("AIC") == 3


def test_override_the_kernel_never_reads_is_flagged():
    # the arch35 block driver picks its loop order itself (InitBasicBlockLoopDirect), never from iterateOrder
    with pytest.warns(IgnoredOverrideWarning, match="iterateOrder"):
        run = _run({"iterateOrder": 0})
    assert any("iterateOrder=0 changed nothing" in note for note in run.notes)


# The random-override fuzz's finds: (problem, overrides) accepted on main and failing after launch
FOUND = {
    "split-K without its segments (kSegment 0: 'range() arg 3 must not be zero' inside the kernel)":
        (np.float16, 2, 19, 21, (3, 9, 4), (2, 2, 1), (2, 1, 1), (1, 1, 1, 0, 0, 0), {"enableSplitK": 1}),
    "the weight pre-transpose turned on alone (540 of 540 dx elements wrong)":
        (np.float16, 2, 9, 3, (5, 3, 2), (3, 1, 2), (1, 1, 1), (2, 0, 0, 0, 0, 0), {"enableVecTrans": 1}),
    "a cout per core below coutG (Load3D past the img2col matrix)":
        (np.float32, 1, 17, 10, (2, 3, 7), (1, 3, 2), (1, 2, 1), (0, 0, 1, 1, 1, 1), {"singleCoreCout": 5}),
}


def _found_operands(dtype, n, cin, cout, dhw, k, s, p):
    rng = np.random.default_rng(0)
    dout = tuple((dhw[i] + p[2 * i] + p[2 * i + 1] - k[i]) // s[i] + 1 for i in range(3))
    return rng.uniform(-1, 1, (n, cout) + dout).astype(dtype), rng.uniform(-1, 1, (cout, cin) + k).astype(dtype)


@pytest.mark.parametrize("name", list(FOUND))
def test_a_derived_field_override_is_refused_before_launch(name, monkeypatch):
    from ascend_sim import Chip
    from tiling import TilingValidationError
    dtype, n, cin, cout, dhw, k, s, p, overrides = FOUND[name]
    dy, w = _found_operands(dtype, n, cin, cout, dhw, k, s, p)
    monkeypatch.setattr(Chip, "launch", lambda *a, **kw: pytest.fail("launched"))
    field = next(iter(overrides))
    with pytest.raises(TilingValidationError, match=rf"{field}={overrides[field]}: derived by the arch35 tiling"):
        conv3d_backprop_input_v2_run((n, cin) + dhw, w, dy, strides=(1, 1) + s, pads=p, platform=PLATFORM,
                                     data_format="NCDHW", route="v2", tiling_overrides=overrides)


@pytest.mark.parametrize("flag", [0, 2])  # NO_INIT, L1_INIT (the source runs no init pass for either)
def test_an_init_output_override_is_undone_where_dx_needs_it(flag):
    """The fuzz's find: stride 2 > kernel 1 in D leaves dx depth 1 without contribution; initOutputFlag=0 or 2 by
    override was kept and those elements stayed unwritten (NaN). Undone with a note, as on the A2."""
    dy, w = _found_operands(float16, 2, 8, 10, (3, 6, 8), (1, 2, 2), (2, 1, 2), (0, 0, 1, 1, 1, 1))
    run = conv3d_backprop_input_v2_run((2, 8, 3, 6, 8), w, dy, strides=(1, 1, 2, 1, 2), pads=(0, 0, 1, 1, 1, 1),
                                       platform=PLATFORM, data_format="NCDHW", route="v2",
                                       tiling_overrides={"initOutputFlag": flag})
    assert run.tiling.initOutputFlag == 1
    assert any(f"the override of {flag} is undone" in note for note in run.notes)
    ref, bound = dx_reference((2, 8, 3, 6, 8), w, dy, (2, 1, 2), (0, 0, 1, 1, 1, 1), (1, 1, 1), 1)
    assert_close_16_32(run.result, ref, bound, float16)


def test_a_cin_share_that_splits_an_enlarged_group_block_is_refused():
    """The fuzz's find: groups 3 merged (enlarge 3, cinG 48, bf16) with singleCoreCin=8 ran and gave wrong dx (3231
    elements off); shares of 16 and 32 ran right."""
    from ascend_sim.machine.dtypes import bfloat16
    from tiling import TilingValidationError
    rng = np.random.default_rng(0)
    dy = rng.uniform(-1, 1, (1, 18, 7, 9, 2)).astype(bfloat16)
    w = rng.uniform(-1, 1, (18, 16, 3, 3, 3)).astype(bfloat16)
    with pytest.raises(TilingValidationError, match=r"singleCoreCin=8: with enlarge=3 .* a multiple of 16 or all of "
                                                    r"cinG=48"):
        conv3d_backprop_input_v2_run((1, 48, 5, 9, 3), w, dy, strides=(1,) * 5, pads=(2, 2, 2, 0, 1, 0), groups=3,
                                     platform=PLATFORM, data_format="NCDHW", route="v2",
                                     tiling_overrides={"singleCoreCin": 8})
