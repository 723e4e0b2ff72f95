"""The Ascend 950's ND-DMA copy GM -> UB (DataCopy with NdDmaParams, up to 5 loops with strides and pads) against
the loop reference of tests/isa_reference_arch35.py, the doc's examples, the dx kernel's block-diagonal weight
pattern, and its refusals by name (another arch, 8-bit floats, ranges)."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from vector_reference import run_aiv

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, NdDmaConfig, NdDmaLoopInfo,
                                NdDmaParams, PIPE_MTE2, PipeBarrier, SetFlag, TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.machine.dtypes import bfloat16, float16, float32, hifloat8

A5 = "Ascend950PR_9589"
UB_BYTES = 8192


def run_nddma(src, ub_init, loops, constant=0, config=NdDmaConfig(), src_offset=0, dst_offset=0, platform=A5):
    """UB = ub_init; ND-DMA src[src_offset:] into UB[dst_offset:]; UB back to GM. loops: (srcStride, dstStride,
    size, lp, rp) per loop, lowest first."""
    dtype = src.dtype

    def kernel(ub_in, x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECIN)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(dtype)
        raw = GlobalTensor(dtype).SetGlobalBuffer(ub_in)
        DataCopy(ub, raw, DataCopyParams(1, UB_BYTES // 32, 0, 0))
        PipeBarrier(PIPE_MTE2)  # the ND-DMA overwrites part of it
        info = NdDmaLoopInfo(dim=len(loops))
        for d, (ss, ds, n, lp, rp) in enumerate(loops):
            info.loopSrcStride[d], info.loopDstStride[d], info.loopSize[d] = ss, ds, n
            info.loopLpSize[d], info.loopRpSize[d] = lp, rp
        DataCopy(ub[dst_offset], GlobalTensor(dtype).SetGlobalBuffer(x)[src_offset], NdDmaParams(info, constant),
                 config)
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        DataCopy(GlobalTensor(dtype).SetGlobalBuffer(out), ub, DataCopyParams(1, UB_BYTES // 32, 0, 0))

    chip, report = run_aiv(kernel, ub_init, src, out_bytes=UB_BYTES, platform=platform)
    return chip.gm["out"].data.view(dtype).copy(), report


def reference(src, ub_init, loops, constant=0, nearest=False, src_offset=0, dst_offset=0):
    ss, ds, n, lp, rp = (list(x) for x in zip(*loops))
    return ref35.ref_nddma(ub_init, src, dst_offset, src_offset, ss, ds, n, lp, rp, constant, nearest)


@st.composite
def nddma_case(draw):
    dim = draw(st.integers(1, 4))
    loops, dense = [], 1
    for _ in range(dim):
        n, lp, rp = draw(st.integers(1, 4)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
        gap = draw(st.integers(0, 2))
        loops.append([draw(st.integers(0, 9)), dense, n, lp, rp])
        dense *= lp + n + rp + gap  # the destination loops do not interleave
    return loops


@settings(max_examples=25, deadline=None)
@given(loops=nddma_case(), dtype=st.sampled_from([float16, bfloat16, float32, np.int8, np.int32]),
       nearest=st.booleans(), constant=st.integers(-3, 3), dst_offset=st.sampled_from([0, 16, 48]),
       src_offset=st.integers(0, 5), seed=st.integers(0, 2**16))
def test_nddma_matches_the_loop_reference(loops, dtype, nearest, constant, dst_offset, src_offset, seed):
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    elems = UB_BYTES // dtype.itemsize
    # the destination, pads included, within the UB buffer (the reference's; 4-byte types hold 2048 elements)
    assume(dst_offset + sum((lp + n + rp - 1) * ds for _, ds, n, lp, rp in loops) < elems)
    src = rng.integers(-100, 100, 4096).astype(dtype)
    ub_init = rng.integers(-100, 100, elems).astype(dtype)
    got, _ = run_nddma(src, ub_init, loops, constant, NdDmaConfig(isNearestValueMode=nearest), src_offset,
                       dst_offset)
    want = reference(src, ub_init, loops, constant, nearest, src_offset, dst_offset)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_the_doc_transpose_example():
    # scenario 3: a [16, 64] GM matrix, 8 columns of 4 rows... read as loopInfo{{1, 64}, {16, 1}, {64, 16}}
    src = np.arange(16 * 64, dtype=np.float32)
    loops = [(1, 16, 64, 0, 0), (64, 1, 16, 0, 0)]
    got, _ = run_nddma(src, np.zeros(UB_BYTES // 4, np.float32), loops)
    np.testing.assert_array_equal(got[:1024].reshape(64, 16), src.reshape(16, 64).T)


def test_the_doc_padding_example_with_a_constant():
    # scenario 1: xGm [16, 32], 8 columns x 2 rows with pads 15 / 13 left and 17 / 3 right into a [32, 64] local
    src = np.arange(16 * 32, dtype=np.float16)
    loops = [(1, 1, 8, 15, 17), (32, 64, 2, 13, 3)]
    ub = np.full(UB_BYTES // 2, 7, np.float16)
    got, _ = run_nddma(src, ub, loops, constant=0)
    tile = got[:18 * 64].reshape(18, 64)[:, :40]
    want = np.zeros((18, 40), np.float16)
    want[13:15, 15:23] = src.reshape(16, 32)[:2, :8]
    np.testing.assert_array_equal(tile, want)


def test_the_dx_kernel_block_diagonal_pattern():
    # LoadUbDiag4GroupNCDHW: weight (enlarge * coutPerGroup, cinPerGroup, hkwk) into a zeroed (coutG, cinG, hkwk)
    # with each group's block on the diagonal; loop 3 steps one group (dst: coutPerGroup rows and cinPerGroup on)
    enlarge, coutPG, cinPG, hkwk = 3, 2, 2, 4
    cinG1x16 = 16  # curEnlargeCin1_ << 4
    w = np.arange(enlarge * coutPG * cinPG * hkwk, dtype=np.float32) + 1
    loops = [(1, 1, hkwk, 0, 0), (hkwk, hkwk, cinPG, 0, 0), (cinPG * hkwk, cinG1x16 * hkwk, coutPG, 0, 0),
             (coutPG * cinPG * hkwk, coutPG * cinG1x16 * hkwk + cinPG * hkwk, enlarge, 0, 0)]
    got, _ = run_nddma(w, np.zeros(UB_BYTES // 4, np.float32), loops)
    dense = got[:enlarge * coutPG * cinG1x16 * hkwk].reshape(enlarge * coutPG, cinG1x16, hkwk)
    want = np.zeros_like(dense)
    blocks = w.reshape(enlarge, coutPG, cinPG, hkwk)
    for g in range(enlarge):
        want[g * coutPG:(g + 1) * coutPG, g * cinPG:(g + 1) * cinPG] = blocks[g]
    np.testing.assert_array_equal(dense, want)


def test_nddma_records_its_bytes_and_costs_time():
    src = np.arange(256, dtype=np.float16)
    _, report = run_nddma(src, np.zeros(UB_BYTES // 2, np.float16), [(1, 1, 64, 0, 0), (64, 64, 2, 1, 0)])
    assert report.bytes_by_path["GM->UB"] >= (128 + 64) * 2  # the ND-DMA's moved elements and pads


@pytest.mark.parametrize("case, match", [
    (dict(platform="Ascend910B2"), "does not exist on arch 2201"),
    (dict(dtype=hifloat8), "does not take hifloat8"),
    (dict(loops=[(1, 1, 0, 0, 0)]), r"loopInfo.loopSize\[0\]=0 outside \[1, 1048575\]"),
    (dict(loops=[(1, 2**20, 4, 0, 0)]), r"loopInfo.loopDstStride\[0\]=1048576 outside"),
    (dict(loops=[(1, 1, 4, 256, 0)]), r"loopInfo.loopLpSize\[0\]=256 outside \[0, 255\]"),
    (dict(loops=[(1, 1, 1, 0, 0)] * 6), "dim=6 outside"),
])
def test_nddma_refusals_name_the_parameter(case, match):
    dtype = np.dtype(case.get("dtype", np.float16))
    src = np.zeros(64, dtype)
    with pytest.raises(ParameterOutOfRange, match=match):
        run_nddma(src, np.zeros(UB_BYTES // dtype.itemsize, dtype), case.get("loops", [(1, 1, 4, 0, 0)]),
                  platform=case.get("platform", A5))
