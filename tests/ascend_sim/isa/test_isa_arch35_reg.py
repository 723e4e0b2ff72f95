"""The Ascend 950's regbase vector micro-API (Reg::LoadAlign, StoreAlign, Gather, Interleave, Duplicate, Adds,
CreateMask, UpdateMask) against the loop references of tests/isa_reference_arch35.py, in the patterns of the arch35
dx kernel's conv_bp_input_sub_func_vector_intrinsics.h."""
import isa_reference_arch35 as ref35
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_on_ub

from ascend_sim import ParameterOutOfRange
from ascend_sim.ascendc import Reg
from ascend_sim.machine.dtypes import bfloat16, float16, float32
from ascend_sim.machine.faults import Misaligned, OutOfBounds

A5 = "Ascend950PR_9599"
UB_BYTES = 32 * 1024


def test_interleave_doc_example_one_register():
    # Interleave.md's example shape on one register of 128 halves: src0 = 1..128, src1 = 129..256
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[:512] = np.arange(1, 257, dtype=np.float16).view(np.uint8)

    def vf(ub):
        s0, s1, d0, d1 = (Reg.RegTensor(np.float16) for _ in range(4))
        Reg.LoadAlign(s0, ub[0].ReinterpretCast(np.float16))
        Reg.LoadAlign(s1, ub[256].ReinterpretCast(np.float16))
        Reg.Interleave(d0, d1, s0, s1)
        mask = Reg.CreateMask(np.float16, Reg.MaskPattern.ALL)
        Reg.StoreAlign(ub[1024].ReinterpretCast(np.float16), d0, mask)
        Reg.StoreAlign(ub[1280].ReinterpretCast(np.float16), d1, mask)

    got, _ = run_on_ub(vf, ub0, platform=A5)
    out = got[1024:1536].view(np.float16)
    np.testing.assert_array_equal(out[:4], [1, 129, 2, 130])
    np.testing.assert_array_equal(out[128:132], [65, 193, 66, 194])
    np.testing.assert_array_equal(out[-2:], [128, 256])


@settings(max_examples=20, deadline=None)
@given(dtype=st.sampled_from([np.int8, np.uint8, float16, bfloat16, float32, np.int32]), repeats=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_kernel_split_interleave_matches_the_loop_reference(dtype, repeats, seed):
    # InterleaveKernelSplitNormal: per VL of each source, interleave and store both halves 2 * VL apart
    dtype = np.dtype(dtype)
    n = 256 // dtype.itemsize
    ub0 = np.random.default_rng(seed).integers(0, 256, UB_BYTES, dtype=np.uint8)
    src0, src1, dst = 0, 4096, 8192

    def vf(ub):
        s0, s1, d0, d1 = (Reg.RegTensor(dtype) for _ in range(4))
        mask = Reg.CreateMask(dtype, Reg.MaskPattern.ALL)
        for i in range(repeats):
            Reg.LoadAlign(s0, ub[src0 + 256 * i].ReinterpretCast(dtype))
            Reg.LoadAlign(s1, ub[src1 + 256 * i].ReinterpretCast(dtype))
            Reg.Interleave(d0, d1, s0, s1)
            Reg.StoreAlign(ub[dst + 512 * i].ReinterpretCast(dtype), d0, mask)
            Reg.StoreAlign(ub[dst + 512 * i + 256].ReinterpretCast(dtype), d1, mask)

    got, _ = run_on_ub(vf, ub0, platform=A5)
    for i in range(repeats):
        a = ub0[src0 + 256 * i:src0 + 256 * (i + 1)].view(dtype)
        b = ub0[src1 + 256 * i:src1 + 256 * (i + 1)].view(dtype)
        d0, d1 = ref35.ref_interleave(a, b)
        assert d0.size == n
        np.testing.assert_array_equal(got[dst + 512 * i:dst + 512 * i + 512].view(np.uint8),
                                      np.concatenate([d0, d1]).view(np.uint8))


@settings(max_examples=25, deadline=None)
@given(pair=st.sampled_from([(float16, float16, np.uint16), (np.int16, np.int8, np.uint16),
                             (float32, float32, np.uint32), (np.uint16, np.uint8, np.uint16)]),
       count=st.integers(0, 130), seed=st.integers(0, 2**16))
def test_gather_matches_the_loop_reference(pair, count, seed):
    dst_t, src_t, idx_t = (np.dtype(t) for t in pair)
    n = 256 // dst_t.itemsize
    rng = np.random.default_rng(seed)
    ub0 = rng.integers(0, 256, UB_BYTES, dtype=np.uint8)
    index = rng.integers(0, 2000, n).astype(idx_t)
    ub0[:index.nbytes] = index.view(np.uint8)
    base, out = 1024, 16384

    def vf(ub):
        idx, reg = Reg.RegTensor(idx_t), Reg.RegTensor(dst_t)
        Reg.LoadAlign(idx, ub[0].ReinterpretCast(idx_t))
        mask, left = Reg.UpdateMask(dst_t, count)
        assert left == max(count - n, 0)
        Reg.Gather(reg, ub[base].ReinterpretCast(src_t), idx, mask)
        Reg.StoreAlign(ub[out].ReinterpretCast(dst_t), reg, Reg.CreateMask(dst_t, Reg.MaskPattern.ALL))

    got, _ = run_on_ub(vf, ub0, platform=A5)
    active = [i < count for i in range(n)]
    want = ref35.ref_gather(ub0[base:].view(src_t), 0, index, active, dst_t)
    np.testing.assert_array_equal(got[out:out + 256].view(np.uint8), want.view(np.uint8))


def test_expand_gather_index_by_stride():
    # ExpandGatherIdxByStride: load an index row, then repeatedly add the stride and store it under a mask
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[:256] = np.arange(64, dtype=np.uint32).view(np.uint8)

    def vf(ub):
        idx = Reg.RegTensor(np.uint32)
        Reg.LoadAlign(idx, ub[0].ReinterpretCast(np.uint32))
        mask, _ = Reg.UpdateMask(np.uint32, 40)
        for r in range(1, 3):
            Reg.Adds(idx, idx, 100, mask)
            Reg.StoreAlign(ub[256 * r].ReinterpretCast(np.uint32), idx, mask)

    got, _ = run_on_ub(vf, ub0, platform=A5)
    rows = got[256:768].view(np.uint32).reshape(2, 64)
    np.testing.assert_array_equal(rows[0, :40], np.arange(40) + 100)
    np.testing.assert_array_equal(rows[1, :40], np.arange(40) + 200)  # lanes past 40 went to 0 in the register,
    assert np.all(rows[:, 40:] == 0)  # and StoreAlign leaves the masked-off UB lanes as they were (zeros here)


def test_duplicate_and_mask_patterns():
    ub0 = np.full(UB_BYTES, 7, np.uint8)

    def vf(ub):
        reg = Reg.RegTensor(float16)
        Reg.Duplicate(reg, 2.5)
        Reg.StoreAlign(ub[0].ReinterpretCast(float16), reg, Reg.CreateMask(float16, Reg.MaskPattern.M4))
        Reg.StoreAlign(ub[512].ReinterpretCast(float16), reg, Reg.CreateMask(float16, Reg.MaskPattern.H))

    got, _ = run_on_ub(vf, ub0, platform=A5)
    first = got[:256].view(np.float16)
    assert np.all(first[::4] == 2.5) and np.all(got[:256].reshape(-1, 8)[:, 2:] == 7)
    half = got[512:768].view(np.float16)
    assert np.all(half[:64] == 2.5) and np.all(got[512 + 128:768] == 7)


def test_reg_refusals():
    ub0 = np.zeros(UB_BYTES, np.uint8)

    def wrong_index(ub):
        Reg.Gather(Reg.RegTensor(float16), ub[0].ReinterpretCast(float16), Reg.RegTensor(np.uint32),
                   Reg.CreateMask(float16))

    def past_ub(ub):
        idx = Reg.RegTensor(np.uint32)
        Reg.Duplicate(idx, 10**6)
        Reg.Gather(Reg.RegTensor(float32), ub[0].ReinterpretCast(float32), idx, Reg.CreateMask(float32))

    def same_dst(ub):
        r = Reg.RegTensor(float16)
        Reg.Interleave(r, r, Reg.RegTensor(float16), Reg.RegTensor(float16))

    with pytest.raises(ParameterOutOfRange, match="not in table 3"):
        run_on_ub(wrong_index, ub0, platform=A5)
    with pytest.raises(OutOfBounds, match="reads past UB"):
        run_on_ub(past_ub, ub0, platform=A5)
    with pytest.raises(ParameterOutOfRange, match="dstReg0 and dstReg1 may not be the same"):
        run_on_ub(same_dst, ub0, platform=A5)
    with pytest.raises(ParameterOutOfRange, match="Reg::Interleave does not exist on arch 2201"):
        run_on_ub(same_dst, ub0)


def test_store_align_writes_only_up_to_its_last_active_lane():
    # ExpandGatherIdxByStride's last store: 16 uint16 lanes 224 B into a one-register buffer at the end of UB
    from ascend_sim import Chip
    from ascend_sim.ascendc import TBuf, TPipe, TPosition

    def kernel():
        pipe = TPipe()
        pipe.InitBuffer(TBuf(TPosition.VECIN), 253952 - 256)
        idx = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(idx, 256)
        reg = Reg.RegTensor(np.uint16)
        Reg.Duplicate(reg, 7)
        mask, _ = Reg.UpdateMask(np.uint16, 16)
        Reg.StoreAlign(idx.Get(np.uint16)[112], reg, mask)
    chip = Chip(A5)
    chip.launch(kernel, 1, kernel_type="AIV_ONLY")
    ub = chip.cores[0].buffers["UB"].data.view(np.uint16)
    np.testing.assert_array_equal(ub[-16:], 7)
    assert not ub[-128:-16].any()


def test_gather_takes_an_element_aligned_base():
    # GatherDn2Nz4Group gathers from srcAddr + kIdx ([CONFLICT] with the page's 32 B; docs/isa_arch35.md)
    ub0 = np.arange(UB_BYTES // 2, dtype=np.uint16).view(np.uint8)

    def vf(ub):
        idx, dst = Reg.RegTensor(np.uint16), Reg.RegTensor(np.uint16)
        Reg.LoadAlign(idx, ub[0].ReinterpretCast(np.uint16))  # 0, 1, 2, ...
        Reg.Gather(dst, ub.ReinterpretCast(np.uint16)[3], idx, Reg.CreateMask(np.uint16))
        Reg.StoreAlign(ub[4096].ReinterpretCast(np.uint16), dst, Reg.CreateMask(np.uint16))

    got, _ = run_on_ub(vf, ub0, platform=A5)
    np.testing.assert_array_equal(got[4096:4096 + 256].view(np.uint16), np.arange(3, 131))


@settings(max_examples=25, deadline=None)
@given(pair=st.sampled_from([(float16, np.uint16), (bfloat16, np.uint16), (float32, np.uint32)]),
       word=st.sampled_from([0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF, None]), seed=st.integers(0, 2**16))
def test_gather_under_a_mask_loaded_from_ub_matches_the_loop_reference(pair, word, seed):
    # GatherDn2Nz4C04's tail: LoadAlign<uint32_t>(MaskReg, maskAddr), then Gather under it (lanes off read 0)
    dst_t, idx_t = (np.dtype(t) for t in pair)
    n = 256 // dst_t.itemsize
    rng = np.random.default_rng(seed)
    ub0 = rng.integers(0, 256, UB_BYTES, dtype=np.uint8)
    index = rng.integers(0, 2000, n).astype(idx_t)
    ub0[:index.nbytes] = index.view(np.uint8)
    mask_at, base, out = 512, 1024, 16384
    if word is not None:  # the kernel's pattern: one word repeated; else arbitrary bits
        ub0[mask_at:mask_at + 32] = np.full(8, word, np.uint32).view(np.uint8)

    def vf(ub):
        idx, reg = Reg.RegTensor(idx_t), Reg.RegTensor(dst_t)
        Reg.LoadAlign(idx, ub[0].ReinterpretCast(idx_t))
        tail = Reg.CreateMask(dst_t, Reg.MaskPattern.ALL)
        Reg.LoadAlign(tail, ub[mask_at].ReinterpretCast(np.uint32))
        Reg.Gather(reg, ub[base].ReinterpretCast(dst_t), idx, tail)
        Reg.StoreAlign(ub[out].ReinterpretCast(dst_t), reg, Reg.CreateMask(dst_t, Reg.MaskPattern.ALL))

    got, _ = run_on_ub(vf, ub0, platform=A5)
    bits = ref35.ref_mask_bits(ub0[mask_at:mask_at + 32])
    active = bits[::dst_t.itemsize]
    want = ref35.ref_gather(ub0[base:].view(dst_t), 0, index, active, dst_t)
    np.testing.assert_array_equal(got[out:out + 256].view(np.uint8), want.view(np.uint8))


def test_the_c04_tail_mask_keeps_the_first_taps_of_every_c0():
    # 0xff per uint32 word: the first 4 halves (one tap of 4 couts) of every 16
    ub0 = np.zeros(UB_BYTES, np.uint8)
    ub0[:32] = np.full(8, 0xFF, np.uint32).view(np.uint8)
    ub0[1024:1024 + 256] = np.arange(1, 129, dtype=np.float16).view(np.uint8)
    ub0[256:512] = np.arange(128, dtype=np.uint16).view(np.uint8)

    def vf(ub):
        idx, reg = Reg.RegTensor(np.uint16), Reg.RegTensor(float16)
        Reg.LoadAlign(idx, ub[256].ReinterpretCast(np.uint16))
        tail = Reg.CreateMask(float16)
        Reg.LoadAlign(tail, ub[0].ReinterpretCast(np.uint32))
        Reg.Gather(reg, ub[1024].ReinterpretCast(float16), idx, tail)
        Reg.StoreAlign(ub[4096].ReinterpretCast(float16), reg, Reg.CreateMask(float16))

    got, _ = run_on_ub(vf, ub0, platform=A5)
    rows = got[4096:4096 + 256].view(np.float16).reshape(8, 16)
    np.testing.assert_array_equal(rows[:, :4], np.arange(1, 129, dtype=np.float16).reshape(8, 16)[:, :4])
    assert not rows[:, 4:].any()


def test_mask_load_refusals():
    ub0 = np.zeros(UB_BYTES, np.uint8)

    def load(offset):
        def vf(ub):
            Reg.LoadAlign(Reg.CreateMask(float16), ub[offset].ReinterpretCast(np.uint32))
        return vf

    def store_under_loaded(ub):
        mask = Reg.CreateMask(float16)
        Reg.LoadAlign(mask, ub[0].ReinterpretCast(np.uint32))
        Reg.StoreAlign(ub[256].ReinterpretCast(float16), Reg.RegTensor(float16), mask)

    run_on_ub(load(32), ub0, platform=A5)
    with pytest.raises(Misaligned, match="srcAddr address 16 in UB is not a multiple of 32 bytes"):
        run_on_ub(load(16), ub0, platform=A5)  # DIST_NORM: 32-byte aligned
    with pytest.raises(ParameterOutOfRange, match="Reg::LoadAlign does not exist on arch 2201"):
        run_on_ub(load(0), ub0)
    with pytest.raises(ParameterOutOfRange, match="a MaskReg loaded from UB .* modelled for Reg::Gather only"):
        run_on_ub(store_under_loaded, ub0, platform=A5)
