"""loadB1Condition NO_HK and NO_HK_WK (the weight loaded to L1 one kernel row / one tap at a time, for dilations,
pads or kernels too large for one Load3D) on the arch35 kernel, against PyTorch float64 autograd (arch35_oracle).
Each case checks first that the tiling really chose the mode."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.util import (TPL_GM_TO_L1_NO_HK, TPL_GM_TO_L1_NO_HK_WK,
                                                              decode_tiling_key)
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import check, run_case

# (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads, dilations, data_format, filter_format)
NO_HK = {
    "dilationH_300": (1, 16, 16, (1, 310, 8), (1, 2, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 300, 1), "NCDHW", "NCDHW"),
    "kernelH_258": (1, 16, 16, (1, 280, 5), (1, 258, 3), (1, 1, 1), (0, 0, 0, 0, 1, 1), (1, 1, 1), "NCDHW", "NCDHW"),
    "strides2_dk2": (2, 20, 24, (3, 311, 9), (2, 2, 3), (2, 2, 2), (1, 0, 1, 1, 1, 0), (1, 300, 1), "NCDHW", "NCDHW"),
    "ndhwc": (1, 16, 24, (1, 310, 8), (1, 2, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 300, 1), "NDHWC", "NDHWC"),
    "dhwcn_filter": (1, 16, 24, (1, 310, 8), (1, 2, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 300, 1), "NCDHW", "DHWCN"),
}
NO_HK_WK = {
    "dilationW_300": (1, 16, 16, (1, 8, 310), (1, 3, 2), (1, 1, 1), (0, 0, 1, 1, 0, 0), (1, 1, 300), "NCDHW", "NCDHW"),
    "strideW2": (1, 20, 16, (1, 9, 311), (1, 3, 2), (1, 2, 2), (0, 0, 1, 1, 1, 0), (1, 1, 300), "NCDHW", "NCDHW"),
    "ndhwc": (1, 16, 24, (1, 8, 310), (1, 3, 2), (1, 1, 1), (0, 0, 1, 1, 0, 0), (1, 1, 300), "NDHWC", "NCDHW"),
}
MODE = {"NO_HK": (TPL_GM_TO_L1_NO_HK, NO_HK), "NO_HK_WK": (TPL_GM_TO_L1_NO_HK_WK, NO_HK_WK)}
DTYPES = (float16, bfloat16, float32, hifloat8, float8_e4m3fn)


def _run(dtype, mode, case, hf32=False):
    n, cin, cout, dhw, ks, s, p, dl, data_format, filter_format = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, dl, data_format=data_format,
                                  filter_format=filter_format, hf32=hf32)
    loadB1Condition = decode_tiling_key(run.tiling.tiling_key)[4]
    assert loadB1Condition == MODE[mode][0], f"the tiling chose loadB1Condition {loadB1Condition}, not {mode}"
    return y, ref, bound


@pytest.mark.parametrize("mode", sorted(MODE))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype, mode):
    base = next(iter(MODE[mode][1].values()))
    y, ref, bound = _run(dtype, mode, base)
    check(dtype, y, ref, bound)


@pytest.mark.parametrize("mode", sorted(MODE))
def test_hf32(mode):
    y, ref, bound = _run(float32, mode, next(iter(MODE[mode][1].values())), hf32=True)
    check(float32, y, ref, bound, hf32=True)


@pytest.mark.parametrize("mode,name", [(m, n) for m in sorted(MODE) for n in sorted(MODE[m][1])])
@pytest.mark.parametrize("dtype", (float16, float32), ids=lambda d: np.dtype(d).name)
def test_shapes(dtype, mode, name):
    y, ref, bound = _run(dtype, mode, MODE[mode][1][name])
    check(dtype, y, ref, bound)


@pytest.mark.parametrize("dtype,groups,cin,cout", [(float16, 2, 32, 32), (float32, 4, 32, 16), (bfloat16, 32, 32, 32)],
                         ids=["groups2", "groups4_fp32", "depthwise"])
def test_groups(dtype, groups, cin, cout):
    run, y, ref, bound = run_case(dtype, 1, cin, cout, (1, 310, 8), (1, 2, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1),
                                  (1, 300, 1), groups=groups)
    assert decode_tiling_key(run.tiling.tiling_key)[4] == TPL_GM_TO_L1_NO_HK
    check(dtype, y, ref, bound)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 2), cin=st.integers(1, 24), cout=st.integers(1, 24),
       axis=st.sampled_from((1, 2)), dil=st.integers(256, 300), extra=st.integers(1, 12), k=st.integers(2, 3),
       s=st.tuples(st.integers(1, 2), st.integers(1, 2)), pads=st.tuples(*[st.integers(0, 1)] * 4),
       seed=st.integers(0, 99))
def test_hypothesis(dtype, n, cin, cout, axis, dil, extra, k, s, pads, seed):
    """Random problems with a dilation above 255 along H (NO_HK) or W (NO_HK_WK)."""
    other = 2 if axis == 1 else 1
    dhw = [1, 0, 0]
    dhw[axis] = dil * (k - 1) + extra  # room for the dilated kernel
    dhw[other] = 4 + extra
    ks = [1, 0, 0]
    ks[axis], ks[other] = k, 2
    dl = [1, 1, 1]
    dl[axis] = dil
    p = (0, 0) + tuple(pads)
    strides = (1,) + tuple(s)
    run, y, ref, bound = run_case(dtype, n, cin, cout, tuple(dhw), tuple(ks), strides, p, tuple(dl), seed=seed)
    expected = TPL_GM_TO_L1_NO_HK if axis == 1 else TPL_GM_TO_L1_NO_HK_WK
    assert decode_tiling_key(run.tiling.tiling_key)[4] == expected
    check(dtype, y, ref, bound)
