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
