"""Kernel split along H and W (kernelSplitMode TPL_SPLIT_KERNEL_HW, Conv3dDxKsBlock) on the arch35 kernel, against
PyTorch float64 autograd (arch35_oracle; 8-bit outputs at most one step from the float64 result rounded once):
every dtype (fp16, bf16, fp32, HF32, hifloat8, float8_e4m3fn), every square kernel the split takes (1 to 4 taps at
stride 2), Cout held whole in L1 (kSCoutFullLoad) or not (the vecTrans weight, the NDHWC
weight), odd dx heights and widths, several M blocks and cores, dk > 1 with batch 2, backprop pads 0 to 3, through the
workspace (kSUseWorkSpace: wi not a multiple of 16) and through the AIV's UB (wi a multiple of 16). Each case checks
first that the real tiling chose the HW split and the way out the case is named for, so that a change of the tiling
cannot send it elsewhere unnoticed."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ascend_sim.machine.dtypes import bfloat16, float8_e4m3fn, float16, float32, hifloat8
from ascend_sim.machine.faults import OutOfBounds
from ascend_sim.machine.memory import GlobalMemory
from kernels.conv3d_backprop_input.kernel.arch35.util import TPL_SPLIT_KERNEL_HW, DivCeil, decode_tiling_key
from tests.kernels.conv3d_backprop_input.test_arch35_kernel import check, run_case

# (n, cin, cout, (Di, Hi, Wi), kernel, strides, pads, filter_format); the data is NCDHW (the split's rule)
BASE = (1, 16, 16, (1, 18, 26), (1, 4, 4), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW")
CASES = {
    "k3_pad1_odd_subkernels": (1, 16, 16, (1, 24, 24), (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "k3_pad0_backprop_pad2": (1, 20, 24, (1, 30, 22), (1, 3, 3), (1, 2, 2), (0, 0, 0, 0, 0, 0), "NCDHW"),
    "k2": (1, 8, 32, (1, 20, 20), (1, 2, 2), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "k4_odd_wi": (1, 20, 24, (1, 24, 13), (1, 4, 4), (1, 2, 2), (0, 0, 0, 0, 0, 0), "NCDHW"),
    "k4_odd_hi": (1, 16, 16, (1, 23, 26), (1, 4, 4), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "k4_pad2": (1, 16, 16, (1, 24, 24), (1, 4, 4), (1, 2, 2), (0, 0, 2, 2, 2, 2), "NCDHW"),
    "several_m_blocks": (1, 16, 16, (2, 64, 40), (1, 4, 4), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "batch2_dk3_vec_trans": (2, 16, 16, (3, 24, 24), (3, 4, 4), (2, 2, 2), (1, 1, 1, 1, 1, 1), "NCDHW"),
    "cout320_vec_trans": (1, 16, 320, (1, 24, 24), (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "cout320_ndhwc_filter": (1, 16, 320, (1, 24, 24), (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NDHWC"),
    "k1x1_dk2": (1, 48, 64, (3, 64, 64), (2, 1, 1), (1, 2, 2), (0,) * 6, "NCDHW"),
    "cin48": (1, 48, 16, (1, 24, 24), (1, 3, 3), (1, 2, 2), (0,) * 6, "NCDHW"),
}
# wi a multiple of 16: the tiling re-interleaves through the AIV's UB (kSUseWorkSpace 0), the AIC's Fixpipe into it
UB_CASES = {
    "ub_k4": (1, 16, 16, (1, 32, 32), (1, 4, 4), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "ub_k3": (1, 16, 16, (1, 16, 32), (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
    "ub_k2": (1, 16, 16, (1, 16, 32), (1, 2, 2), (1, 2, 2), (0,) * 6, "NCDHW"),
    "ub_cout320_vec_trans_batch2": (2, 16, 320, (2, 32, 32), (1, 3, 3), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW"),
}
DTYPES = (float16, bfloat16, float32, hifloat8, float8_e4m3fn)


def _run(dtype, case, hf32=False, workspace=True):
    n, cin, cout, dhw, ks, s, p, filter_format = case
    run, y, ref, bound = run_case(dtype, n, cin, cout, dhw, ks, s, p, (1, 1, 1), filter_format=filter_format,
                                  hf32=hf32)
    t = run.tiling
    assert decode_tiling_key(t.tiling_key)[1] == TPL_SPLIT_KERNEL_HW, f"the tiling chose {t.template}, not HW"
    assert t.kSUseWorkSpace == workspace, f"kSUseWorkSpace={t.kSUseWorkSpace}"
    return run, y, ref, bound


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype):
    _, y, ref, bound = _run(dtype, BASE)
    check(dtype, y, ref, bound)


def test_hf32():
    _, y, ref, bound = _run(float32, BASE, hf32=True)
    check(float32, y, ref, bound, hf32=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes(name):
    dtype = bfloat16 if name.startswith("k3") else float16
    _, y, ref, bound = _run(dtype, CASES[name])
    check(dtype, y, ref, bound)


@pytest.mark.parametrize("dtype", (float32, hifloat8), ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["k4_odd_wi", "batch2_dk3_vec_trans"])
def test_shapes_fp32_and_8bit(name, dtype):
    _, y, ref, bound = _run(dtype, CASES[name])
    check(dtype, y, ref, bound)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_through_ub_every_dtype(dtype):
    _, y, ref, bound = _run(dtype, UB_CASES["ub_k4"], workspace=False)
    check(dtype, y, ref, bound)


def test_through_ub_hf32():
    _, y, ref, bound = _run(float32, UB_CASES["ub_k3"], hf32=True, workspace=False)
    check(float32, y, ref, bound, hf32=True)


@pytest.mark.parametrize("name", sorted(UB_CASES))
def test_through_ub_shapes(name):
    _, y, ref, bound = _run(bfloat16, UB_CASES[name], workspace=False)
    check(bfloat16, y, ref, bound)


def test_the_cases_reach_the_hw_paths():
    """The grid covers: Cout held whole and not (with the vecTrans weight, with the NDHWC weight), every sub-kernel
    shape (1x1, 2x2, 3x3 into 2x2 / 2x1 / 1x2 / 1x1, 4x4), odd wi (the head pieces and the dropped column) and odd
    hi (RecalcBaseUseMForKernelSplit), backprop pads 0 to 3, several M blocks, several cores, A1 held across the
    sub-kernels (isA1FullLoadFlag_)."""
    from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
    from tests.kernels.conv3d_backprop_input.test_arch35_kernel import PLATFORM, out_size

    def tiling(case):
        n, cin, cout, dhw, ks, s, p, ff = case
        do = tuple(out_size(dhw[i], ks[i], s[i], p[2 * i], p[2 * i + 1], 1) for i in range(3))
        fshape = (cout, cin) + ks if ff == "NCDHW" else (cout,) + ks + (cin,)
        return plan_arch35((n, cin) + dhw, fshape, (n, cout) + do, "float16", strides=s, pads=p,
                           dilations=(1, 1, 1), groups=1, data_format="NCDHW", filter_format=ff, platform=PLATFORM,
                           enable_hf32=False)

    ts = {name: tiling(case) for name, case in {**CASES, "base": BASE}.items()}
    assert all(decode_tiling_key(t.tiling_key)[1] == TPL_SPLIT_KERNEL_HW and t.kSUseWorkSpace for t in ts.values())
    ub = {name: tiling(case) for name, case in UB_CASES.items()}
    assert all(decode_tiling_key(t.tiling_key)[1] == TPL_SPLIT_KERNEL_HW and not t.kSUseWorkSpace
               for t in ub.values())
    assert ub["ub_cout320_vec_trans_batch2"].enableVecTrans and ub["ub_cout320_vec_trans_batch2"].block_dim > 1
    assert ts["base"].kSCoutFullLoad and not ts["cout320_vec_trans"].kSCoutFullLoad
    assert ts["cout320_vec_trans"].enableVecTrans and ts["batch2_dk3_vec_trans"].enableVecTrans
    assert not ts["cout320_ndhwc_filter"].kSCoutFullLoad and not ts["cout320_ndhwc_filter"].enableVecTrans
    assert {t.hk for t in ts.values()} == {1, 2, 3, 4}
    assert ts["k4_odd_wi"].wi % 2 and ts["k4_odd_hi"].hi % 2
    assert {t.backpropPadUp for t in ts.values()} == {0, 1, 2, 3}
    m_blocks = DivCeil(DivCeil(ts["several_m_blocks"].hi, 2) * DivCeil(ts["several_m_blocks"].wi, 2),
                       ts["several_m_blocks"].singleCoreM)
    assert m_blocks > 1 and ts["cout320_vec_trans"].block_dim > 1
    # InitFullLoadFlag's HW rule: Cout whole, one A1 buffer, dk or dout 1 and no reload for the 4x4 kernel's pads
    assert any(t.kSCoutFullLoad and t.al1Pbuffer == 1 and t.wk == 4 and t.backpropPadLeft not in (0, 2)
               for t in ts.values())


# CalcCurHoSize4KernelSplit [SOURCE]: on the last dy plane of the last batch it trims curHoSize by extraHoWo / wo
# rounded down, so a sub-kernel whose rows start one dy row down (subPadUp < 0 with backpropPadUp 0) can read up
# to wo - 1 elements past the end of out_backprop. The simulator faults on it; the bytes never reach y (below).
OVER_READ = (1, 8, 8, (1, 23, 12), (1, 2, 2), (1, 2, 2), (0, 0, 1, 1, 1, 1), "NCDHW")
OVER_READ_MESSAGE = (r"DataCopy\(Dn2Nz\), at load_a.py:\d+\] out of bounds: read of bytes \[14, 1356\) outside "
                     r"GM:out_backprop of 1344")


def test_source_reads_past_the_end_of_dy():
    with pytest.raises(OutOfBounds, match=OVER_READ_MESSAGE):
        _run(float16, OVER_READ)


def test_the_bytes_read_past_dy_do_not_reach_y(monkeypatch):
    """The same run with NaN after out_backprop in GM: y is still the reference, so the over-read is harmless."""
    upload = GlobalMemory.upload

    def upload_with_nan_after_dy(self, name, array):
        if name == "out_backprop":
            array = np.concatenate([np.ascontiguousarray(array).reshape(-1), np.full(64, np.nan, array.dtype)])
        return upload(self, name, array)
    monkeypatch.setattr(GlobalMemory, "upload", upload_with_nan_after_dy)
    _, y, ref, bound = _run(float16, OVER_READ)
    check(float16, y, ref, bound)


def _over_read_past_dy(err: OutOfBounds, dy_bytes: int, wo: int, size: int) -> bool:
    """The fault is the documented over-read: the HW dy load, past out_backprop's end by less than one dy row."""
    import re
    found = re.search(r"DataCopy\(Dn2Nz\), at load_a.py:\d+\] out of bounds: read of bytes \[\d+, (\d+)\) outside "
                      r"GM:out_backprop", str(err))
    return bool(found) and int(found.group(1)) - dy_bytes < wo * size


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(dtype=st.sampled_from(DTYPES), n=st.integers(1, 2), cin=st.integers(8, 40), cout=st.integers(8, 40),
       hi=st.integers(12, 33), wi=st.sampled_from((12, 13, 16, 22, 25, 26, 30, 32)), k=st.integers(2, 4),
       pad=st.integers(0, 1),
       seed=st.integers(0, 99))
def test_hypothesis(dtype, n, cin, cout, hi, wi, k, pad, seed):
    """Random problems the tiling sends to the HW split (others are discarded)."""
    from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
    from tests.kernels.conv3d_backprop_input.test_arch35_kernel import NAMES, PLATFORM, out_size
    ks, s, p = (1, k, k), (1, 2, 2), (0, 0, pad, pad, pad, pad)
    do = tuple(out_size((1, hi, wi)[i], ks[i], s[i], p[2 * i], p[2 * i + 1], 1) for i in range(3))
    assume(min(do) >= 1)
    try:
        t = plan_arch35((n, cin, 1, hi, wi), (cout, cin) + ks, (n, cout) + do, NAMES[np.dtype(dtype)], strides=s,
                        pads=p, dilations=(1, 1, 1), groups=1, data_format="NCDHW", filter_format="NCDHW",
                        platform=PLATFORM, enable_hf32=False)
    except ValueError:
        assume(False)
    assume(decode_tiling_key(t.tiling_key)[1] == TPL_SPLIT_KERNEL_HW)
    try:
        _, y, ref, bound = run_case(dtype, n, cin, cout, (1, hi, wi), ks, s, p, (1, 1, 1), seed=seed)
    except OutOfBounds as err:  # the source's over-read (test_source_reads_past_the_end_of_dy): nothing else
        assert _over_read_past_dy(err, n * cout * do[1] * do[2] * np.dtype(dtype).itemsize, do[2],
                                  np.dtype(dtype).itemsize), err
        assume(False)
    check(dtype, y, ref, bound)
