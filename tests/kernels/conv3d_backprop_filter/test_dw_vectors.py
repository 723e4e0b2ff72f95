"""The dw kernel driven by the real tilings of tests/data/conv3d_dw_tiling_vectors_a2.json (every template:
base, SPLIT_M_K, SPLIT_K_N, SPLIT_M_N, stream-K), against torch.

Vectors small enough run at their real shape with the real blob unchanged; the others run with a smaller batch
and output (channels, kernel, strides, pads and dilations kept; tests/dw_vectors.py says which fields change).
Data are small integers, so every product and sum is exact and the comparison is exact."""
import ml_dtypes
import numpy as np
import pytest
from dw_reference import dw_reference
from dw_vectors import VECTORS, real_tiling, shrunk_case

from kernels.conv3d_backprop_filter import conv3d_backprop_filter_v2_run

REAL_SIZE = {"stdit_01_bf16_deterministic_streamk", "stdit_01_fp16", "stdit_01_fp32", "26_b16",
             "conv3d_dw_v2_dilation"}
SHRINK = (2, 3, 8, 16)  # at most: batch, output depth, height, width


def _dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("v", VECTORS, ids=[v["name"] for v in VECTORS])
def test_real_vector_against_torch(v):
    if v["name"] in REAL_SIZE:
        t = real_tiling(v)
        x_shape, dy_shape = tuple(v["fmap_shape"]["ori"]), tuple(v["dy_shape"]["ori"])
        assert t.to_words() == v["tiling_words_int32"]
    else:
        x_shape, dy_shape, t = shrunk_case(v, *SHRINK)
        real = real_tiling(v)
        for name in ("baseM", "baseK", "baseN", "stepKa", "stepKb", "iterateOrder", "bl1Bound", "cin1G", "cout1G"):
            assert getattr(t.dwTiling, name) == getattr(real.dwTiling, name)
    assert t.tiling_key == v["tiling_key"]
    rng = np.random.default_rng(len(v["name"]))
    dt = _dtype(v["dtype"])
    x = rng.integers(-3, 4, x_shape).astype(np.float32).astype(dt)
    dy = rng.integers(-3, 4, dy_shape).astype(np.float32).astype(dt)
    w_shape = tuple(v["filter_shape"]["ori"])
    run = conv3d_backprop_filter_v2_run(x, w_shape, dy, strides=(1, 1, *v["strides_DHW"]), pads=v["pads"],
                                        dilations=(1, 1, *v["dilations_DHW"]), data_format="NCDHW", tiling=t,
                                        platform=t.platform, deterministic=bool(v["deterministic"]))
    expect = dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), v["strides_DHW"], v["pads"],
                          v["dilations_DHW"])
    np.testing.assert_array_equal(run.result, expect.astype(np.float32))
    # every launched core that has work adds its tiles with the atomic add on (deterministic stream-K: the
    # first part of a tail block is written into the core's workspace, the others added)
    fixpipes = [r for log in run.report.logs for r in log if r.name == "Fixpipe"]
    assert fixpipes and all(r.registers == (("atomic", "float32"),) for r in fixpipes if r.writes[0][0].name == "GM:y")


def test_stream_k_vector_splits_the_tail_round_over_cores():
    """stdit_01 stream-K (non-deterministic path): 5 (m, n) blocks for 20 cores, so calRound = 0 and each block
    is split over coreStreamK = 4 cores along the output rows: 20 cores each add a quarter of K into one tile."""
    v = next(v for v in VECTORS if v["name"] == "stdit_01_bf16_deterministic_streamk")
    t = real_tiling(v)
    assert (t.basicBlockTiling.streamKType, t.basicBlockTiling.coreStreamK, t.block_dim) == (2, 4, 20)
    x = np.ones(v["fmap_shape"]["ori"], ml_dtypes.bfloat16)
    dy = np.ones(v["dy_shape"]["ori"], ml_dtypes.bfloat16)
    run = conv3d_backprop_filter_v2_run(x, tuple(v["filter_shape"]["ori"]), dy, strides=(1, 1, 1, 2, 2),
                                        pads=(0,) * 6, data_format="NCDHW", tiling=t, platform=t.platform)
    mmad_k = [sum(r.params.k for r in log if r.name == "Mmad") for log in run.report.logs]
    assert len(mmad_k) == 20 and all(k == 64 for k in mmad_k)  # 256 pixels / 4 splits, on every core
    np.testing.assert_array_equal(run.result, np.full(run.result.shape, 256.0, np.float32))
