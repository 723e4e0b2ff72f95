"""Kernel split along H (kernelSplitMode TPL_SPLIT_KERNEL_H, Conv3dDxKsBlock) on the arch35 kernel, against PyTorch
float64 autograd (arch35_oracle): every dtype, both data formats, both filter formats the split takes, the vecTrans
weight, uneven sub-kernels (hk not a multiple of strideH), a sub-kernel with fewer output rows (hi not a multiple of
strideH) and several M blocks. Each case checks first that the tiling really chose the H split, so that a change
of the tiling cannot send it to another template unnoticed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.kernel.arch35.util import (TPL_REVERSE_ONLY, TPL_SPLIT_KERNEL_H, DivCeil,
                                                              decode_tiling_key)
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import check, run_case

# (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads, data_format, filter_format)
BASE = (1, 32, 32, (1, 9, 35), (1, 3, 3), (1, 2, 1), (0, 0, 0, 0, 1, 1), "NCDHW", "NCDHW")
CASES = {
    "uneven_subkernels_stride3": (1, 16, 16, (2, 9, 32), (1, 5, 3), (1, 3, 1), (0, 0, 1, 1, 1, 1), "NCDHW", "NCDHW"),
    "strideW2_dk2_batch2": (2, 20, 24, (2, 11, 33), (2, 4, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW", "NCDHW"),
    "vec_trans_strideD2": (1, 32, 16, (2, 21, 64), (2, 5, 5), (2, 2, 2), (0, 0, 2, 2, 1, 1), "NCDHW", "NCDHW"),
    "several_m_blocks": (1, 64, 48, (1, 40, 64), (1, 4, 3), (1, 2, 1), (0, 0, 1, 1, 1, 1), "NCDHW", "NCDHW"),
    "short_subkernel_m_tail": (1, 16, 16, (1, 33, 32), (1, 4, 3), (1, 2, 1), (0, 0, 1, 1, 1, 1), "NCDHW", "NCDHW"),
    "ndhwc_data": (1, 16, 16, (1, 10, 40), (1, 5, 5), (1, 3, 1), (0, 0, 2, 2, 2, 2), "NDHWC", "NCDHW"),
    "ndhwc_data_and_filter": (1, 16, 16, (1, 10, 40), (1, 5, 5), (1, 3, 1), (0, 0, 2, 2, 2, 2), "NDHWC", "NDHWC"),
}
DTYPES = (float16, bfloat16, float32, hifloat8, float8_e4m3fn)


def _run(dtype, case, hf32=False):
    n, cin, cout, dhw, ks, s, p, data_format, filter_format = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, (1, 1, 1), data_format=data_format,
                                  filter_format=filter_format, hf32=hf32)
    _, kernelSplitMode, _, _, _ = decode_tiling_key(run.tiling.tiling_key)
    assert kernelSplitMode == TPL_SPLIT_KERNEL_H, f"the tiling chose {run.tiling.template}, not the H split"
    return run, y, ref, bound


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype):
    _, y, ref, bound = _run(dtype, BASE)
    check(dtype, y, ref, bound)


def test_hf32():
    _, y, ref, bound = _run(float32, BASE, hf32=True)
    check(float32, y, ref, bound, hf32=True)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", (float16, float32), ids=lambda d: np.dtype(d).name)
def test_shapes(dtype, name):
    _, y, ref, bound = _run(dtype, CASES[name])
    check(dtype, y, ref, bound)


def test_the_cases_reach_the_split_paths():
    """The grid above covers: the vecTrans weight, REVERSE_ONLY, several M blocks, a sub-kernel with fewer rows
    (its own M tail), hk not a multiple of strideH. (No small shape found has a sub-kernel with fewer M blocks, the
    `continue` of CalBasicBlockCoreForSplitH.)"""
    from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
    from tests.kernels.conv3d_backprop_input.test_arch35_kernel import PLATFORM, out_size

    def tiling(case):
        n, cin, cout, dhw, ks, s, p, data_format, filter_format = case
        do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], 1) for i in range(3))
        fshape = (cout, cin) + ks if filter_format == "NCDHW" else (cout,) + ks + (cin,)
        return plan_arch35((n, cin) + dhw, fshape, (n, cout) + do, "float16", strides=s, pads=p, dilations=(1, 1, 1),
                           groups=1, data_format="NCDHW", filter_format=filter_format, platform=PLATFORM,
                           enable_hf32=False)

    ts = {name: tiling(case) for name, case in CASES.items()}
    assert all(decode_tiling_key(t.tiling_key)[:2] == (TPL_REVERSE_ONLY, TPL_SPLIT_KERNEL_H) for t in ts.values())
    assert ts["vec_trans_strideD2"].enableVecTrans
    m_blocks = {name: DivCeil(DivCeil(t.hi, t.strideH) * t.wi, t.singleCoreM) for name, t in ts.items()}
    assert m_blocks["several_m_blocks"] > 1
    short = ts["short_subkernel_m_tail"]  # its last sub-kernel has one row fewer: another M tail (ReCalcMInfo)
    assert short.hi % short.strideH and m_blocks["short_subkernel_m_tail"] > 1
    assert ts["uneven_subkernels_stride3"].hk % ts["uneven_subkernels_stride3"].strideH


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 2), cin=st.integers(16, 40), cout=st.integers(16, 40),
       dhw=st.tuples(st.integers(1, 3), st.integers(4, 20), st.integers(32, 48)),
       kh=st.integers(2, 7), sh=st.integers(2, 4), kw=st.integers(1, 3), sw=st.integers(1, 2),
       kd=st.integers(1, 2), ph=st.integers(0, 3), pw=st.integers(0, 1),
       data_format=st.sampled_from(("NCDHW", "NDHWC")), seed=st.integers(0, 99))
def test_hypothesis(dtype, n, cin, cout, dhw, kh, sh, kw, sw, kd, ph, pw, data_format, seed):
    """Random problems the tiling sends to the H split (others are discarded)."""
    from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
    from tests.kernels.conv3d_backprop_input.test_arch35_kernel import NAMES, PLATFORM, out_size
    assume(sh <= kh and ph < kh and pw < kw)
    assume(np.dtype(dtype).itemsize > 1 or data_format == "NCDHW")
    ks, s, p = (kd, kh, kw), (1, sh, sw), (0, 0, ph, ph, pw, pw)
    do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], 1) for i in range(3))
    assume(min(do) >= 1)
    try:
        t = plan_arch35((n, cin) + dhw, (cout, cin) + ks, (n, cout) + do, NAMES[np.dtype(dtype)], strides=s, pads=p,
                        dilations=(1, 1, 1), groups=1, data_format="NCDHW", filter_format="NCDHW", platform=PLATFORM,
                        enable_hf32=False)
    except ValueError:
        assume(False)
    assume(decode_tiling_key(t.tiling_key)[1] == TPL_SPLIT_KERNEL_H)
    _, y, ref, bound = _run(dtype, (n, cin, cout, dhw, ks, s, p, data_format, "NCDHW"))
    check(dtype, y, ref, bound)
