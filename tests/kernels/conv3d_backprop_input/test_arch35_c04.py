"""loadB1Condition VEC_TO_L1_C04 on the arch35 kernel (Cout <= 4: the AIVs gather the weight into C04 K blocks of
4 taps x 4 couts in UB and copy it into their AIC's L1, the AIC loads a 4-channel dy by DN2NZ SmallC0 and
Load3D channelSize 4): problems the real tiling sends to C04, in every dtype it sends there (fp16 and bf16: its
CheckC04Enable takes 2-byte types only), against PyTorch float64 autograd (arch35_oracle). Each case checks first
that the tiling chose C04."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.util import TPL_VEC_TO_L1_C04, decode_tiling_key
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import PLATFORM, check, run_case
from tiling import conv3d_backprop_input_tiling

# (n, cin, cout, (Di, Hi, Wi), kernel, pads); strides and dilations 1 (C04 takes no other)
GRID = {
    # hk*wk 9: three K blocks, the last holding one tap (tail mask 0xff)
    "cout3_3x3": (1, 16, 3, (2, 8, 8), (1, 3, 3), (0, 0, 1, 1, 1, 1)),
    # hk*wk 25 with Cout 1: seven K blocks; the three missing couts zeroed by InitUbZero4C04
    "cout1_5x5": (1, 8, 1, (1, 9, 9), (1, 5, 5), (0, 0, 2, 2, 1, 3)),
    # dk 2 (the weight rebuilt per kernel plane: the two AIVs take turns), hk*wk 6 (tail mask 0xffff)
    "cout4_dk2_2x3": (1, 24, 4, (3, 7, 6), (2, 2, 3), (1, 0, 1, 0, 1, 1)),
    # hk*wk 3 (tail mask 0xffffff), batch 2, several M blocks
    "cout2_3x1_batch2": (2, 20, 2, (2, 24, 20), (1, 3, 1), (0, 0, 1, 1, 0, 0)),
    # hk*wk 4: one full K block, no tail
    "cout4_2x2": (1, 40, 4, (1, 10, 9), (1, 2, 2), (0, 0, 0, 1, 1, 0)),
    # dk*hk*wk 968: vecBlockN_ 16 < baseN, so a B1 load takes several UB rounds (each at its dstB1Offset)
    "ub_rounds": (1, 64, 2, (8, 12, 12), (8, 11, 11), (0, 0, 0, 0, 1, 1)),
}
DTYPES = (float16, bfloat16)


def _run(dtype, case, seed=0):
    n, cin, cout, dhw, ks, pads = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, (1, 1, 1), pads, (1, 1, 1), seed=seed)
    loadB1Condition = decode_tiling_key(run.tiling.tiling_key)[4]
    assert loadB1Condition == TPL_VEC_TO_L1_C04, f"the tiling chose loadB1Condition {loadB1Condition}"
    return run, y, ref, bound


# every case in fp16, the small ones in bf16 too
CASES = [(float16, name) for name in sorted(GRID)] + [(bfloat16, name) for name in sorted(GRID)
                                                        if name != "ub_rounds"]


@pytest.mark.parametrize("dtype,name", CASES, ids=lambda v: v if isinstance(v, str) else np.dtype(v).name)
def test_c04_matches_pytorch(dtype, name):
    _, y, ref, bound = _run(dtype, GRID[name])
    check(dtype, y, ref, bound)


def test_both_aivs_build_the_weight_with_the_handshake():
    run, y, ref, bound = _run(float16, GRID["cout4_dk2_2x3"])
    check(float16, y, ref, bound)
    aic, aiv0, aiv1 = run.report.cores[:3]
    loads = aiv0.counts.get("DataCopy(UB->L1)", 0) + aiv1.counts.get("DataCopy(UB->L1)", 0)
    assert aiv0.counts["DataCopy(UB->L1)"] > 0 and aiv1.counts["DataCopy(UB->L1)"] > 0  # they take turns
    assert aiv0.counts["Reg::LoadAlign(MaskReg)"] > 0 and aiv0.counts["DataCopyPad(GM->UB)"] > 0
    # per B1 load the AIC waits for 6 and 6 + 16 and sets 7 and 7 + 16; Init sets 7 and 7 + 16 once ahead, which
    # each AIV takes back in End
    assert aic.counts["CrossCoreWaitFlag"] == 2 * loads
    assert aic.counts["CrossCoreSetFlag"] == 2 * loads + 2
    assert aiv0.counts["CrossCoreWaitFlag"] == aiv1.counts["CrossCoreWaitFlag"] == loads + 1


@pytest.mark.parametrize("dtype,hf32", [(float32, False), (float32, True), (hifloat8, False),
                                        (float8_e4m3fn, False)], ids=["fp32", "hf32", "hifloat8", "fp8"])
def test_the_tiling_sends_only_2_byte_types_to_c04(dtype, hf32):
    t = conv3d_backprop_input_tiling((1, 3, 2, 8, 8), (3, 16, 1, 3, 3), (1, 16, 2, 8, 8), (1, 1, 1, 1, 1),
                                     (0, 0, 1, 1, 1, 1), (1, 1, 1, 1, 1), 1, np.dtype(dtype).name, PLATFORM,
                                     enable_hf32=hf32)
    assert decode_tiling_key(t.tiling_key)[4] != TPL_VEC_TO_L1_C04


@st.composite
def c04_problems(draw):
    cout = draw(st.integers(1, 4))
    cin = draw(st.integers(1, 40))
    kd, kh, kw = draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(1, 5))
    assume(kh * kw > 1)
    di = draw(st.integers(kd, 3))
    hi, wi = draw(st.integers(kh, 12)), draw(st.integers(kw, 12))
    pads = tuple(draw(st.integers(0, k - 1)) for k in (kd, kd, kh, kh, kw, kw))
    return draw(st.integers(1, 2)), cin, cout, (di, hi, wi), (kd, kh, kw), pads


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=c04_problems(), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**16))
def test_c04_hypothesis(case, dtype, seed):
    n, cin, cout, dhw, ks, pads = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, (1, 1, 1), pads, (1, 1, 1), seed=seed)
    assume(decode_tiling_key(run.tiling.tiling_key)[4] == TPL_VEC_TO_L1_C04)
    check(dtype, y, ref, bound)
