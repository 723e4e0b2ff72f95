"""SetLoopModePara / ResetLoopModePara (Ascend 950 only): a UB -> GM DataCopyPad in loop mode against a plain
five-loop reference over the bytes (Normal and Compact), a GM -> UB one (Normal, padded: OUT_TO_UB) likewise, the
register's reset, and refusals by name (arch 2201,
ranges, the UB side's 32-byte alignment, copies whose loop mode is not modelled)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_aiv

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import (DataCopyExtParams, DataCopyMVType, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                                GlobalTensor,
                                HardEvent, LoopModeParams, PaddingMode, ResetLoopModePara, SetFlag,
                                SetLoopModePara, TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.isa.vector.datacopy import copy_ub

A5 = "Ascend950PR_9589"
UB_BYTES = 64 * 1024


def loop_reference(ub, out_bytes, count, blen, ub_pitch, gm_gap, loops):
    """The copy as SetLoopModePara.md describes it: for every outer and inner iteration, blockCount rows of blockLen
    bytes, the source and destination moved by the loop strides; a plain loop over the bytes, in issue order."""
    loop1Size, loop2Size, l1src, l1dst, l2src, l2dst = loops
    out = np.zeros(out_bytes, np.uint8)
    for outer in range(loop2Size):
        for inner in range(loop1Size):
            for row in range(count):
                for byte in range(blen):
                    src = outer * l2src + inner * l1src + row * ub_pitch + byte
                    dst = outer * l2dst + inner * l1dst + row * (blen + gm_gap) + byte
                    out[dst] = ub[src]
    return out


def run_loop_copy(ub_bytes, count, blen, src_stride, gm_gap, loops, out_bytes, mode=PaddingMode.Normal,
                  platform=A5, reset=True, second=None):
    """UB filled from GM byte for byte, then one loop-mode DataCopyPad UB -> GM (then `second`, if given)."""
    def kernel(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(np.uint8)
        DataCopyPad(ub, GlobalTensor(np.uint8).SetGlobalBuffer(x), DataCopyExtParams(1, len(ub_bytes), 0, 0))
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        SetLoopModePara(LoopModeParams(*loops), DataCopyMVType.UB_TO_OUT)
        DataCopyPad(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub, DataCopyExtParams(count, blen, src_stride, gm_gap),
                    mode=mode)
        if reset:
            ResetLoopModePara(DataCopyMVType.UB_TO_OUT)
        if second is not None:
            second(ub, out)
    chip, report = run_aiv(kernel, ub_bytes, out_bytes=out_bytes, platform=platform)
    return chip.gm["out"].data.copy(), report


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 70), st.integers(0, 2), st.integers(0, 9), st.integers(1, 4),
       st.integers(1, 3), st.integers(0, 4), st.integers(0, 4), st.booleans(), st.integers(0, 2**31))
def test_loop_mode_against_the_reference(count, blen, src_stride, gm_gap, loop1, loop2, l1blocks, l2extra, compact,
                                         seed):
    """Any rows, strides and loops (inner strides in whole UB rows, the outer ones past the inner extent, some
    iterations overlapping in GM): the bytes in GM are the reference's."""
    mode = PaddingMode.Compact if compact else PaddingMode.Normal
    if compact:
        src_stride = 0
    ub_pitch = blen if compact else -(-blen // 32) * 32 + src_stride * 32
    extent = count * ub_pitch
    l1src = -(-extent // 32) * 32 + 32 * l1blocks
    l2src = loop1 * l1src + 32 * l2extra
    l1dst = count * (blen + gm_gap) + l1blocks * 3  # GM strides need no alignment
    l2dst = loop1 * l1dst + l2extra * 5
    loops = (loop1, loop2, l1src, l1dst, l2src, l2dst)
    ub = np.random.default_rng(seed).integers(0, 256, loop2 * l2src + 64).astype(np.uint8)
    out_bytes = loop2 * l2dst + loop1 * l1dst + count * (blen + gm_gap) + 64
    got, _ = run_loop_copy(ub, count, blen, src_stride, gm_gap, loops, out_bytes, mode=mode)
    want = loop_reference(ub, out_bytes, count, blen, ub_pitch, gm_gap, loops)
    np.testing.assert_array_equal(got, want)


def test_the_kernel_split_write_out():
    """The dx kernel's use (LoadUbToGmForKernelSplit): loop1Size channels, each a UB plane of 2*hwSize elements
    read into a GM plane diHiWi apart, rows of wi bf16 written every other dx row (dstStride = wi elements)."""
    wi, rows, channels, plane = 24, 3, 2, 256  # plane: UB elements per channel
    ub = np.arange(1, channels * plane + 1, dtype=np.uint16).view(np.uint8)
    di_hi_wi = 2 * rows * wi + 8
    loops = (channels, 1, plane * 2, di_hi_wi * 2, 0, 0)
    got, report = run_loop_copy(ub, rows, wi * 2, 0, wi * 2, loops, channels * di_hi_wi * 2)
    out = got.view(np.uint16).reshape(channels, di_hi_wi)
    src = ub.view(np.uint16).reshape(channels, plane)
    for c in range(channels):
        for r in range(rows):
            np.testing.assert_array_equal(out[c, 2 * r * wi:(2 * r + 1) * wi], src[c, r * 32:r * 32 + wi])
            assert not out[c, (2 * r + 1) * wi:(2 * r + 2) * wi].any()  # the other phase's rows stay untouched
    aiv = report.cores[0]
    assert aiv.counts["DataCopyPad(UB->GM, loop mode)"] == 1
    assert aiv.counts["SetLoopModePara"] == 1 and aiv.counts["ResetLoopModePara"] == 1


def test_reset_puts_the_copy_back_to_one_pass():
    """After ResetLoopModePara the next DataCopyPad copies its rows once."""
    ub = np.arange(256, dtype=np.uint8)

    def second(ubt, out):
        DataCopyPad(GlobalTensor(np.uint8).SetGlobalBuffer(out)[200], ubt, DataCopyExtParams(1, 8, 0, 0))
    got, report = run_loop_copy(ub, 1, 8, 0, 0, (3, 1, 32, 16, 0, 0), 256, second=second)
    want = loop_reference(ub, 256, 1, 8, 32, 0, (3, 1, 32, 16, 0, 0))
    want[200:208] = ub[:8]
    np.testing.assert_array_equal(got, want)
    assert report.cores[0].counts["DataCopyPad(UB->GM)"] == 1


def _set_only(loops, type=DataCopyMVType.UB_TO_OUT, platform=A5):
    def kernel(x, out):
        SetLoopModePara(LoopModeParams(*loops), type)
    run_aiv(kernel, np.zeros(32, np.uint8), out_bytes=32, platform=platform)


@pytest.mark.parametrize("loops, type, platform, match", [
    ((1, 1, 0, 0, 0, 0), DataCopyMVType.UB_TO_OUT, "Ascend910B2", "SetLoopModePara does not exist on arch 2201"),
    ((2**21, 1, 0, 0, 0, 0), DataCopyMVType.UB_TO_OUT, A5, "loop1Size"),
    ((1, 2**21, 0, 0, 0, 0), DataCopyMVType.OUT_TO_UB, A5, "loop2Size"),
    ((2, 1, 2**21, 0, 0, 0), DataCopyMVType.UB_TO_OUT, A5, "loop1SrcStride"),
    ((2, 1, 0, 2**40, 0, 0), DataCopyMVType.UB_TO_OUT, A5, "loop1DstStride"),
    ((2, 1, 0, 2**21, 0, 0), DataCopyMVType.OUT_TO_UB, A5, "loop1DstStride"),
    ((2, 1, 48, 0, 0, 0), DataCopyMVType.UB_TO_OUT, A5, "loop1SrcStride=48 is not a multiple of 32 bytes"),
    ((2, 2, 0, 0, 0, 40), DataCopyMVType.OUT_TO_UB, A5, "loop2DstStride=40 is not a multiple of 32 bytes"),
    ((1, 1, 0, 0, 0, 0), "UB_TO_OUT", A5, "is not a DataCopyMVType"),
])
def test_set_refusals(loops, type, platform, match):
    with pytest.raises(ParameterOutOfRange, match=match):
        _set_only(loops, type, platform)


def test_reset_refused_on_arch_2201():
    def kernel(x, out):
        ResetLoopModePara(DataCopyMVType.UB_TO_OUT)
    with pytest.raises(ParameterOutOfRange, match="ResetLoopModePara does not exist on arch 2201"):
        run_aiv(kernel, np.zeros(32, np.uint8), out_bytes=32, platform="Ascend910B2")


@pytest.mark.parametrize("copy", ["pad GM->UB", "DataCopy UB->GM"])
def test_copies_without_a_loop_model_are_refused(copy):
    """GM -> UB in Compact mode in loop mode, and DataCopy (not Pad) in loop mode, are not modelled: they fault by
    name."""
    def kernel(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 1024)
        ub = buf.Get(np.uint8)
        if copy == "pad GM->UB":
            SetLoopModePara(LoopModeParams(2, 1, 64, 64, 0, 0), DataCopyMVType.OUT_TO_UB)
            DataCopyPad(ub, GlobalTensor(np.uint8).SetGlobalBuffer(x), DataCopyExtParams(1, 32, 0, 0),
                        mode=PaddingMode.Compact)
        else:
            SetLoopModePara(LoopModeParams(2, 1, 64, 64, 0, 0), DataCopyMVType.UB_TO_OUT)
            copy_ub(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub, DataCopyParams(1, 1, 0, 0))
    with pytest.raises(ParameterOutOfRange, match="while SetLoopModePara"):
        run_aiv(kernel, np.zeros(64, np.uint8), out_bytes=256, platform=A5)


def pad_loop_reference(gm, ub_bytes, count, blen, gm_gap, dst_stride, left, right, value, loops):
    """GM -> UB in loop mode (SetLoopModePara.md with DataCopyPad GMToUB): per outer and inner iteration, blockCount
    rows of blockLen bytes, each into a UB row of ceil((left + blockLen + right) / 32) 32-byte blocks (dstStride
    blocks apart) after `left` bytes of the padding value, the rest of the row padded too (with no padding asked,
    left = right = 0, the simulator's rule for the row's tail: its first element repeated)."""
    loop1Size, loop2Size, l1src, l1dst, l2src, l2dst = loops
    out = np.zeros(ub_bytes, np.uint8)
    row_bytes = -(-(left + blen + right) // 32) * 32
    for outer in range(loop2Size):
        for inner in range(loop1Size):
            for row in range(count):
                s0 = outer * l2src + inner * l1src + row * (blen + gm_gap)
                d0 = outer * l2dst + inner * l1dst + row * (row_bytes + 32 * dst_stride)
                for byte in range(row_bytes):
                    k = byte - left
                    fill = value if left or right else gm[s0]
                    out[d0 + byte] = gm[s0 + k] if 0 <= k < blen else fill
    return out


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 3), st.integers(1, 70), st.integers(0, 9), st.integers(0, 2), st.integers(0, 31),
       st.integers(0, 31), st.integers(1, 3), st.integers(1, 3), st.integers(0, 3), st.integers(0, 2**31))
def test_gm_to_ub_loop_mode_against_the_reference(count, blen, gm_gap, dst_stride, left, right, loop1, loop2,
                                                  extra, seed):
    """OUT_TO_UB: the padded GM -> UB copy repeated, its UB strides whole blocks past the rows they hold."""
    row_bytes = -(-(left + blen + right) // 32) * 32
    l1dst = count * (row_bytes + 32 * dst_stride) + 32 * extra
    l2dst = loop1 * l1dst + 32 * extra
    l1src = count * (blen + gm_gap) + extra
    l2src = loop1 * l1src + 3 * extra
    loops = (loop1, loop2, l1src, l1dst, l2src, l2dst)
    gm = np.random.default_rng(seed).integers(0, 256, loop2 * l2src + 64).astype(np.uint8)
    ub_bytes = loop2 * l2dst + 64

    def kernel(x, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(np.uint8)
        SetLoopModePara(LoopModeParams(*loops), DataCopyMVType.OUT_TO_UB)
        DataCopyPad(ub, GlobalTensor(np.uint8).SetGlobalBuffer(x), DataCopyExtParams(count, blen, gm_gap, dst_stride),
                    DataCopyPadExtParams(True, left, right, 7))
        ResetLoopModePara(DataCopyMVType.OUT_TO_UB)
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        DataCopyPad(GlobalTensor(np.uint8).SetGlobalBuffer(out), ub, DataCopyExtParams(1, ub_bytes, 0, 0))

    chip, report = run_aiv(kernel, gm, out_bytes=ub_bytes, platform=A5)
    want = pad_loop_reference(gm, ub_bytes, count, blen, gm_gap, dst_stride, left, right, 7, loops)
    np.testing.assert_array_equal(chip.gm["out"].data, want)
    loop_copies = report.cores[0].counts.get("DataCopyPad(GM->UB, loop mode)", 0)
    assert loop_copies == (0 if loop1 == loop2 == 1 else 1)  # one instruction, whatever the loops
