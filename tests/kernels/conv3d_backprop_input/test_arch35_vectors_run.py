"""The real arch35 UT tilings (tests/data/conv3d_dx_tiling_vectors_arch35.json) forced field by field onto the
arch35 kernel: every vector whose template is ported runs without a fault (timing-only: the shapes are large), on
the UT's platform (Ascend950PR_9589 with UB 245760), with the MIX 1:2 streams in the report; the others are
refused by name before any instruction. One small vector also runs with data against PyTorch."""
from __future__ import annotations

import json

import numpy as np
import pytest
from paths import DATA_DIR

from ascend_sim.machine.platform import get_platform
from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import (
    conv3d_backprop_input_v2_arch35, unported_features)
from kernels.conv3d_backprop_input.operator_arch35 import DTYPES_950, launch_arch35
from tests.kernels.conv3d_backprop_input.arch35_oracle import assert_close_16_32, dx_reference
from tiling.conv3d_backprop_input.arch35 import Conv3DBackpropInputArch35TilingData, conv3d_backprop_input_tiling_arch35

VECTORS = json.loads((DATA_DIR / "conv3d_dx_tiling_vectors_arch35.json").read_text())["vectors"]
UT_PLATFORM = get_platform("Ascend950PR_9589").with_overrides(UB=245760)
SLOW = {"conv3d_dx_2", "conv3d_dx_8_small_m", "conv3d_dx_10",  # 20 s to 10 min
        "conv3d_dx_20_f16_h256_weight_ncdhw",  # the HW kernel split, 10 x 122 x 122 x 256 of dx
        "conv3d_dx_33_kernel_16_stride_2", "conv3d_dx_34_kernel_16_stride_2_ncdhw", "conv3d_dx_kernel_split_h_NDHWC_1",
        "conv3d_dx_split_k_NCDHW_2",  # 2,142 blocks of 415 K steps: over 20 min of CPU timing-only
        "conv3d_dx_16"}  # C04, 16 x 22 x 130 x 130 x 64 of dx: every AIC waits for its AIVs' weight each B1 load
# Run with the batch cut to 2 (with data, test_arch35_splitk.py) instead of whole: its vecTrans pre-pass ends in a
# barrier of all 64 AIVs (flag 2, mode 0), so every AIC's stream stays pending, records and all, until the last
# AIV's Python has run (the engine runs the cores one after the other): the vector issues about 36 million
# instructions (470,450 with batch 2, times 76.5), hence the 20 GB and more a `-m slow` run reached, whether or not
# the chip keeps records afterwards.
CUT_TO_TWO_BATCHES = {"conv3d_dx_split_k_NCDHW_3"}


def workspace_size(vector) -> int:
    """GetWorkspaceSize of the vector's tiling: the port's generator gives it (its fields equal the vector's,
    test_tiling_arch35_vectors.py)."""
    fmt = vector["formats"]
    return conv3d_backprop_input_tiling_arch35(
        vector["dy_shape"]["ori"], vector["filter_shape"]["ori"], vector["dx_shape"]["ori"], vector["strides"],
        vector["pads"], vector["dilations"], vector["groups"], vector["dtype"], UT_PLATFORM, vector["enable_hf32"],
        data_format=fmt["dy_ori"], filter_format=fmt["filter_ori"]).workspace_size


def forced_tiling(vector) -> Conv3DBackpropInputArch35TilingData:
    """The UT's expected tiling, field by field (not the port's answer)."""
    return Conv3DBackpropInputArch35TilingData(**vector["tiling"], tiling_key=vector["tiling_key"],
                                               block_dim=vector["block_dim"], workspace_size=workspace_size(vector),
                                               template="UT vector")


def with_batch(vector, batch: int):
    """The vector with its batch cut to `batch`: every other tiling field as the UT's."""
    small = {**vector, "tiling": {**vector["tiling"], "batch": batch}}
    for key in ("dy_shape", "dx_shape"):
        small[key] = {**vector[key], "ori": [batch] + vector[key]["ori"][1:]}
    return small


def _launch(vector, execute, filter=None, dy=None):
    dt = DTYPES_950[vector["dtype"]]
    fmt = vector["formats"]
    w = np.zeros(vector["filter_shape"]["ori"], dt) if filter is None else filter
    dy = np.zeros(vector["dy_shape"]["ori"], dt) if dy is None else dy
    # no instruction records: the large vectors issue millions of instructions, and keeping their records made a
    # `-m slow` process grow past 20 GB (conv3d_dx_split_k_NCDHW_3); the report's cycles and counts are the same
    return launch_arch35(forced_tiling(vector), w, dy, vector["dx_shape"]["ori"], platform=UT_PLATFORM,
                         data_format=fmt["dy_ori"], filter_format=fmt["filter_ori"], execute=execute, record=False)


PORTED = [v for v in VECTORS if not unported_features(v["tiling_key"], forced_tiling(v))]
REFUSED = [v for v in VECTORS if unported_features(v["tiling_key"], forced_tiling(v))]


@pytest.mark.parametrize("vector", [pytest.param(v, marks=pytest.mark.slow) if v["name"] in SLOW else v
                                    for v in PORTED if v["name"] not in CUT_TO_TWO_BATCHES],
                         ids=lambda v: v["name"])
def test_ported_vector_runs_without_fault(vector):
    _, report = _launch(vector, execute=False)
    kinds = [c.kind for c in report.cores]
    assert kinds.count("AIC") == vector["block_dim"] and kinds.count("AIV") == 2 * vector["block_dim"]
    aic = [c for c in report.cores if c.kind == "AIC"]
    assert all(c.counts.get("Mmad", 0) > 0 for c in aic[:1])
    assert report.cycles > 0


def test_the_ported_vectors():
    """Which shared vectors the port runs (keep in step with docs/conv3d_backprop_input_arch35.md): all 32."""
    assert len(PORTED) == len(VECTORS) == 32 and not REFUSED


def test_an_unported_template_is_refused_by_name():
    # every shared vector runs; loadB1Condition SMALL_KERNEL (Conv3dDxSmallKernel, which the 950's tiling never
    # picks) is still refused, before the first instruction (no chip needed)
    vector = next(v for v in VECTORS if v["name"] == "conv3d_dx_17")
    small_kernel_key = (vector["tiling_key"] & ~(0xFF << 25)) | (4 << 25)
    with pytest.raises(NotImplementedError, match=r"not ported to the arch35 kernel yet: loadB1Condition=4 "
                                                  r"\(SMALL_KERNEL\)"):
        conv3d_backprop_input_v2_arch35(None, None, None, None, None, forced_tiling(vector),
                                        tiling_key=small_kernel_key, dtype=DTYPES_950[vector["dtype"]])


def _to_ncdhw(array, fmt):
    return {"NCDHW": array, "NDHWC": array.transpose(0, 4, 1, 2, 3), "DHWCN": array.transpose(4, 3, 0, 1, 2)}[fmt]


@pytest.mark.parametrize("name", ["conv3d_dx_3_bf16", "conv3d_dx_NCDHW_full_load_is_not_divisib",
                                  "conv3d_dx_NDHWC_full_load_is_not_divisib", "conv3d_dx_tiling_hk_wi_1",
                                  "conv3d_dx_36_kernel_10_stride_5_pad_3", "conv3d_dx_30_NCDHW_NCDHW_bf16",
                                  "conv3d_dx_17",
                                  pytest.param("conv3d_dx_33_kernel_16_stride_2", marks=pytest.mark.slow)])
def test_small_vector_with_data(name):
    """Small UT vectors with data against PyTorch; the two full-load ones keep the weight in L1 across blocks;
    hk_wi_1 (hk 768, backprop pads 512) loads the weight one kernel row at a time (NO_HK); 36 (vecTrans weight) and 33
    (NDHWC weight, slow) split the kernel along H; 30 splits it along H and W (Cout held whole, through the
    workspace); 17 is C04 (Cout 4: the AIVs build the weight, the AIC loads a 4-channel dy)."""
    vector = next(v for v in VECTORS if v["name"].startswith(name))
    dt = DTYPES_950[vector["dtype"]]
    fmt = vector["formats"]
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, vector["filter_shape"]["ori"]).astype(dt)
    dy = rng.uniform(-1, 1, vector["dy_shape"]["ori"]).astype(dt)
    y, _ = _launch(vector, execute=True, filter=w, dy=dy)
    t = vector["tiling"]
    ref, bound = dx_reference((t["batch"], t["cin"], t["di"], t["hi"], t["wi"]),
                              _to_ncdhw(w, fmt["filter_ori"]), _to_ncdhw(dy, fmt["dy_ori"]),
                              (t["strideD"], t["strideH"], t["strideW"]),
                              (t["padFront"], t["padBack"], t["padUp"], t["padDown"], t["padLeft"], t["padRight"]),
                              (t["dilationD"], t["dilationH"], t["dilationW"]), vector["groups"])
    assert_close_16_32(_to_ncdhw(y, fmt["dy_ori"]), ref, bound, dt, hf32=bool(t["hf32Flag"]))


def test_c04_vector_16_on_one_batch_with_data():
    """conv3d_dx_16 (C04: bf16, Cout 3, 3x3x3 kernel, 64 x 22 x 130 x 130 of dx per batch) forced field by field with
    its batch cut from 16 to 1, against PyTorch: the AIVs build the weight per kernel plane in the two B1 buffers
    (bl1Pbuffer 2), three K steps of 16 with a tail of 4. About 20 s of CPU (simulation and reference); the whole
    vector is `slow`."""
    vector = with_batch(next(v for v in VECTORS if v["name"] == "conv3d_dx_16"), 1)
    dt = DTYPES_950[vector["dtype"]]
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, vector["filter_shape"]["ori"]).astype(dt)
    dy = rng.uniform(-1, 1, vector["dy_shape"]["ori"]).astype(dt)
    y, report = _launch(vector, execute=True, filter=w, dy=dy)
    kinds = [c.kind for c in report.cores]
    assert kinds.count("AIC") == vector["block_dim"] and kinds.count("AIV") == 2 * vector["block_dim"]
    ref, bound = dx_reference(vector["dx_shape"]["ori"], w, dy, tuple(vector["strides"][2:]), vector["pads"],
                              tuple(vector["dilations"][2:]), vector["groups"])
    assert_close_16_32(y, ref, bound, dt)


@pytest.mark.slow
def test_fp32_split_k_vector_with_data():
    """conv3d_dx_ascend950_kb_case1_9589 (fp32 HF32, cout 256 in kSegments of 80 + a tail of 16, added atomically
    into GM) against PyTorch; 25 s of simulation."""
    vector = next(v for v in VECTORS if v["name"].startswith("conv3d_dx_ascend950_kb_case1_9589"))
    assert vector["tiling"]["enableSplitK"] and not vector["tiling"]["useUbAccumForSplitK"]
    dt = DTYPES_950[vector["dtype"]]
    rng = np.random.default_rng(5)
    w = rng.uniform(-1, 1, vector["filter_shape"]["ori"]).astype(dt)
    dy = rng.uniform(-1, 1, vector["dy_shape"]["ori"]).astype(dt)
    y, _ = _launch(vector, execute=True, filter=w, dy=dy)
    ref, bound = dx_reference(vector["dx_shape"]["ori"], w, dy, tuple(vector["strides"][2:]), vector["pads"],
                              tuple(vector["dilations"][2:]), vector["groups"])
    assert_close_16_32(y, ref, bound, dt, hf32=bool(vector["tiling"]["hf32Flag"]))
