"""The real A2 dx tiling UT's 27 cases (tests/data/conv3d_dx_ut_cases_a2.json): the data, our generator against each
real tiling, each real tiling forced on the operator, and the smallest ones run with data against PyTorch.

benchmarks/bench_a2_dx_tilings.py runs all 23 real tilings on the kernel (timing-only); here what is cheap."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from dx_ut_cases import CASES, TILED, case_id, operator_arguments, real_overrides, real_tiling
from paths import DATA_DIR

from ascend_sim.machine.dtypes import DTYPES
from kernels import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.plan import plan_conv3d_dx

# every field is forced on purpose, also those the case's driver never reads
pytestmark = pytest.mark.filterwarnings("ignore::kernels.common.tiling_reads.IgnoredOverrideWarning")
EARLIER = json.loads((DATA_DIR / "conv3d_dx_tiling_vectors_a2.json").read_text())["vectors"]
REFUSED_BY_THE_REAL_HOST = {"Conv3d_bp_input_not_fit_conv_formula", "Conv3d_bp_input_exceed_l1_size",
                            "Conv3d_bp_input_strides_batch_invalid", "Conv3d_bp_input_strides_c_invalid"}


def test_the_ut_has_23_real_tilings_and_4_refusals():
    assert len(CASES) == 27 and len(TILED) == 23
    assert {c["case_name"] for c in CASES if not c["tiling_result"]} == REFUSED_BY_THE_REAL_HOST
    assert len({case_id(c) for c in TILED}) == 23  # conv3d_dx_050_fp32 is in both arrays, told apart by the id


def test_the_extraction_agrees_with_the_earlier_vectors():
    """The 12 vectors extracted earlier (another extraction of the same UT) have the same blob, key and block_dim."""
    by_uid = {c["uid"]: c for c in CASES}
    for v in EARLIER:
        case = by_uid[v["uid"]]
        assert case["tiling_words_int32"] == v["tiling_words_int32"], v["uid"]
        assert (case["tiling_key"], case["block_dim"], case["dtype"]) == (v["tiling_key"], v["block_dim"], v["dtype"])


@pytest.mark.parametrize("case", TILED, ids=case_id)
def test_the_real_tiling_forced_is_launched_unchanged(case):
    """Every field forced on the case's problem: the plan's tiling is the UT's blob with its key, on the UT's
    core count (block_dim), and the plan keeps it (no field re-derived, no flag cleared)."""
    plan = plan_conv3d_dx(tuple(case["y_ori_shape"]), tuple(case["filter_ori_shape"]),
                          tuple(case["out_backprop_ori_shape"]), case["dtype"], route="v2",
                          tiling_overrides=real_overrides(case), **operator_arguments(case))
    assert plan.tiling.to_words() == case["tiling_words_int32"]
    assert plan.tiling.tiling_key == case["tiling_key"]
    assert real_tiling(case).params.coreNum == case["block_dim"]


def _generator_params():
    for case in TILED:
        grouped = real_tiling(case).conv3DDxTiling.group > 1  # the real host takes these from closed TBE code
        marks = [pytest.mark.xfail(strict=True, reason="real_g > 1: the core split and blocks come from the closed "
                                   "TBE cache tiling, replaced by this project's own rule (docs/tiling.md)")] \
            if grouped else []
        yield pytest.param(case, id=case_id(case), marks=marks)


@pytest.mark.parametrize("case", list(_generator_params()))
def test_the_generator_gives_the_real_tiling(case):
    """Our generator on the case's problem, nothing forced: the UT's blob byte for byte and its key."""
    plan = plan_conv3d_dx(tuple(case["y_ori_shape"]), tuple(case["filter_ori_shape"]),
                          tuple(case["out_backprop_ori_shape"]), case["dtype"], route="v2",
                          **operator_arguments(case))
    assert (plan.tiling.to_words(), plan.tiling.tiling_key) == (case["tiling_words_int32"], case["tiling_key"])


def _padded_dx(dy, weight, dx_shape, strides, pads, dilations, groups):
    """PyTorch float64 dx (NCDHW) through autograd of conv3d over the explicitly padded input (pads may differ
    per side)."""
    x = torch.zeros(dx_shape, dtype=torch.float64, requires_grad=True)
    front, back, top, bottom, left, right = pads
    y = torch.nn.functional.conv3d(torch.nn.functional.pad(x, (left, right, top, bottom, front, back)),
                                   torch.from_numpy(weight), stride=strides, dilation=dilations, groups=groups)
    y.backward(torch.from_numpy(dy))
    return x.grad.numpy()


@pytest.mark.parametrize("name", ["Conv3d_bp_input_dilation", "Conv3ddx_whitebox_3"])
def test_small_real_tilings_compute_dx(name):
    """The two smallest cases with their real tiling and random data (NCDHW and NDHWC / DHWCN) against PyTorch."""
    case = next(c for c in TILED if c["case_name"] == name)
    dtype = DTYPES[case["dtype"]]
    rng = np.random.default_rng(0)
    weight = rng.standard_normal(case["filter_ori_shape"]).astype(dtype)
    dy = rng.standard_normal(case["out_backprop_ori_shape"]).astype(dtype)
    run = conv3d_backprop_input_v2_run(tuple(case["y_ori_shape"]), weight, dy, route="v2",
                                       tiling_overrides=real_overrides(case), **operator_arguments(case))
    assert run.tiling.to_words() == case["tiling_words_int32"]
    ndhwc = case["data_format"] == "NDHWC"
    to_ncdhw = (lambda a: a.transpose(0, 4, 1, 2, 3)) if ndhwc else (lambda a: a)
    w = weight.transpose(4, 3, 0, 1, 2) if case["filter_ori_format"] == "DHWCN" else weight
    dims = slice(1, 4) if ndhwc else slice(2, 5)
    dx_shape = to_ncdhw(np.empty(case["y_ori_shape"], np.int8)).shape
    ref = _padded_dx(to_ncdhw(dy).astype(np.float64), w.astype(np.float64), dx_shape, case["strides"][dims],
                     case["pads"], case["dilations"][dims], case["groups"])
    got = to_ncdhw(run.result).astype(np.float64)
    # fp32 accumulation (its order: a little slack), one rounding to bfloat16 (8 significant bits) at the end
    assert np.all(np.abs(got - ref) <= 2 ** -8 * np.abs(ref) + 1e-5 * np.abs(ref).max())
