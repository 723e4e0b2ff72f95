"""groupConvMode ENLARGE on the arch35 kernel (the AIV builds the block-diagonal weight of `enlarge` merged groups
in UB by ND-DMA and Reg::Gather and copies it into its AIC's L1): grouped and depthwise problems the real tiling
sends to ENLARGE, in every dtype it enlarges (fp16, bf16, fp32 with and without HF32; it never enlarges 8-bit),
against PyTorch float64 autograd (arch35_oracle). Each case checks first that the tiling chose ENLARGE."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.util import (TPL_GROUP_MODE_ENLARGE, TPL_GROUP_MODE_ORIGIN,
                                                              decode_tiling_key)
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from tests.kernels.conv3d_backprop_input.arch35_oracle import dx_reference
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import PLATFORM, check, run_case

# (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads, dilations, groups, filter_format)
GRID = {
    "depthwise": (1, 8, 8, (2, 6, 6), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 8, "NCDHW"),
    "grouped_2x2": (1, 16, 16, (2, 6, 6), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 8, "NCDHW"),
    "cout_multiplier": (1, 8, 16, (2, 5, 7), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 8, "NCDHW"),
    # 24 groups merged 16 at a time: two merged groups, the second holding 8 (curEnlarge < enlarge)
    "partial_last_group": (1, 24, 24, (3, 6, 6), (2, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 24, "NCDHW"),
    # 4 groups of 20 merged: cinG 80 in N blocks of 48 and 32 (the UB window moves along cin), K 720 in three
    # baseK steps, two to an L1 load (b1UbPing_ / b1UbPong_ and a tail)
    "two_n_blocks_k_steps": (1, 80, 80, (1, 6, 6), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 4,
                             "NCDHW"),
    # coutG 96 = 6 cout1 blocks, three K steps to an L1 load; several M blocks
    "cout_blocks": (1, 48, 96, (1, 20, 20), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 4, "NCDHW"),
    "stride2_dk2_batch2": (2, 16, 16, (4, 9, 8), (2, 3, 3), (2, 2, 2), (1, 0, 1, 1, 1, 0), (1, 1, 1), 16, "NCDHW"),
    "dilation": (1, 8, 8, (3, 10, 10), (2, 3, 3), (1, 1, 1), (0, 1, 2, 2, 2, 2), (2, 2, 2), 8, "NCDHW"),
    "ndhwc_filter": (1, 16, 16, (2, 6, 6), (2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 8, "NDHWC"),
    "dhwcn_filter": (1, 16, 16, (2, 6, 6), (2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 8, "DHWCN"),
    "many_m_blocks": (1, 8, 8, (1, 30, 33), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 8, "NCDHW"),
}
DTYPES = (float16, bfloat16, float32)


def _run(dtype, case, hf32=False, mode=TPL_GROUP_MODE_ENLARGE):
    n, cin, cout, dhw, ks, s, p, dl, groups, filter_format = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, dl, groups=groups,
                                  filter_format=filter_format, hf32=hf32)
    groupConvMode = decode_tiling_key(run.tiling.tiling_key)[2]
    assert groupConvMode == mode, f"the tiling chose groupConvMode {groupConvMode}"
    return run, y, ref, bound


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["depthwise", "grouped_2x2", "partial_last_group"])
def test_every_dtype(dtype, name):
    run, y, ref, bound = _run(dtype, GRID[name])
    check(dtype, y, ref, bound)


def test_hf32():
    _, y, ref, bound = _run(float32, GRID["grouped_2x2"], hf32=True)
    check(float32, y, ref, bound, hf32=True)


@pytest.mark.parametrize("name", sorted(set(GRID) - {"depthwise", "grouped_2x2", "partial_last_group"}))
def test_shapes(name):
    dtype = float32 if name in ("ndhwc_filter", "cout_blocks") else float16
    _, y, ref, bound = _run(dtype, GRID[name])
    check(dtype, y, ref, bound)


def test_the_aiv_fills_the_aic_l1_with_the_handshake():
    run, y, ref, bound = _run(bfloat16, GRID["grouped_2x2"])
    check(bfloat16, y, ref, bound)
    aic, aiv0, aiv1 = run.report.cores[:3]
    assert aiv0.counts["DataCopy(NdDma)"] == aiv0.counts["DataCopy(UB->L1)"] > 0
    assert aiv0.counts["Reg::Gather"] > 0 and "DataCopy(UB->L1)" not in aiv1.counts  # sub-block 1 only walks
    # one FLAG_MTE1_ID_1 per weight built, one FLAG_MTE1_ID_2 per weight consumed plus one ahead per tile
    assert aic.counts["CrossCoreWaitFlag"] == aiv0.counts["DataCopy(UB->L1)"]


@pytest.mark.parametrize("dtype", [hifloat8, float8_e4m3fn], ids=lambda d: np.dtype(d).name)
def test_the_tiling_never_enlarges_8bit(dtype):
    # nonExtendedDtype: the same depthwise problem stays in ORIGIN (the source compiles the AIV's build out)
    _, y, ref, bound = _run(dtype, GRID["depthwise"], mode=TPL_GROUP_MODE_ORIGIN)
    check(dtype, y, ref, bound)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from(DTYPES), groups=st.integers(2, 24), cin_g=st.integers(1, 3), cout_g=st.integers(1, 3),
       dhw=st.tuples(st.integers(1, 3), st.integers(3, 9), st.integers(3, 9)), k=st.tuples(st.integers(1, 2),
       st.integers(1, 3), st.integers(1, 3)), s=st.integers(1, 2), seed=st.integers(0, 99))
def test_hypothesis(dtype, groups, cin_g, cout_g, dhw, k, s, seed):
    """Random grouped problems with few channels per group: the tiling merges them (ENLARGE)."""
    pads = tuple(kk // 2 for kk in k for _ in range(2))
    case = (1, groups * cin_g, groups * cout_g, dhw, k, (1, s, s), pads, (1, 1, 1), groups, "NCDHW")
    run, y, ref, bound = run_case(dtype, *case[:8], groups=groups, seed=seed)
    # few channels per group always merge (lcm(cin_g, c0) / cin_g >= 2 and the weight fits UB twice)
    assert decode_tiling_key(run.tiling.tiling_key)[2] == TPL_GROUP_MODE_ENLARGE
    check(dtype, y, ref, bound)


def _run_raw(case, dtype=float16, **options):
    """The case on the conv kernel with run options (tiling overrides, engine); (run, reference, bound)."""
    n, cin, cout, dhw, ks, s, p, dl, groups, _ = case
    do = tuple((dhw[i] + p[2 * i] + p[2 * i + 1] - dl[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(3))
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, (cout, cin // groups) + ks).astype(dtype)
    dy = rng.uniform(-1, 1, (n, cout) + do).astype(dtype)
    run = conv3d_backprop_input_v2_run((n, cin) + dhw, w, dy, strides=(1, 1) + s, pads=p, dilations=(1, 1) + dl,
                                       groups=groups, data_format="NCDHW", platform=PLATFORM, route="v2", **options)
    ref, bound = dx_reference((n, cin) + dhw, w, dy, s, p, dl, groups)
    return run, ref, bound


@pytest.mark.parametrize("overrides", [
    {"al1Pbuffer": 1, "bl1Pbuffer": 1},  # one B1 TBuf (b1UbPing_ only), no preload: load, use, free, load
    {"coreNum": 1},  # every block on one core: the handshake carries on from block to block
])
def test_forced_buffers_and_cores(overrides):
    run, ref, bound = _run_raw(GRID["two_n_blocks_k_steps"], tiling_overrides=overrides)
    assert decode_tiling_key(run.tiling.tiling_key)[2] == TPL_GROUP_MODE_ENLARGE
    assert all(run.tiling.fields()[name] == value for name, value in overrides.items())
    check(float16, run.result, ref, bound)


def test_engines_agree():
    runs = [_run_raw(GRID["partial_last_group"], engine=engine)[0] for engine in ("exact", "fast")]
    assert runs[0].report.cycles == runs[1].report.cycles
    np.testing.assert_array_equal(runs[0].result.view(np.uint16), runs[1].result.view(np.uint16))
