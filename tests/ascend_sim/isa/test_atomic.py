"""SetAtomicAdd / SetAtomicNone, against tests/isa_reference.py: Fixpipe adding into GM (NZ fp32, bf16 rounded
once), the atomic type a store must match, and atomic adds of several cores into one GM tensor (no race; a plain
store against another core's add is one). (DataCopy L1 -> GM under SetAtomicAdd is in test_mte3.py.)"""
import isa_reference as ref
import ml_dtypes
import numpy as np
import pytest
from core_buffers import fill, launch_body, local

from ascend_sim.ascendc import (CFG_NZ, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, QuantMode_t,
                                SetAtomicAdd, SetAtomicNone)
from ascend_sim.machine.faults import CrossCoreRace, ParameterOutOfRange

BF16 = np.dtype(ml_dtypes.bfloat16)


FIX_CASES = [  # mSize, nSize, srcStride, dstStride (32-byte blocks), split
    (16, 16, 16, 32, False), (20, 32, 32, 64, False), (24, 40, 32, 24, True), (1, 8, 16, 8, True),
]


@pytest.mark.parametrize("m,n,sstride,dstride,split", FIX_CASES)
def test_fixpipe_atomic_add_nz_fp32(m, n, sstride, dstride, split):
    rng = np.random.default_rng(m + n)
    l0c = rng.standard_normal(4096).astype(np.float32)
    gm0 = rng.standard_normal(2048).astype(np.float32)

    def body(core, gm):
        fill(core, "L0C", l0c)
        out = GlobalTensor(np.float32).SetGlobalBuffer(gm[0])
        SetAtomicAdd(np.float32)
        Fixpipe(out[8], local(core, "L0C", np.float32), FixpipeParamsV220(
            nSize=n, mSize=m, srcStride=sstride, dstStride=dstride, isChannelSplit=split), CFG_NZ)
        SetAtomicNone()

    chip, bufs = launch_body(body, [gm0])
    expect = ref.ref_fixpipe(gm0, l0c, 8, 0, n, m, sstride, dstride, "NoQuant", split, False, np.float32,
                             atomic_add=True)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), expect)
    names = [(r.name, r.pipe.name) for r in chip.cores[0].log]
    assert names == [("SetAtomicAdd", "S"), ("Fixpipe", "FIX"), ("SetAtomicNone", "S")]
    assert chip.cores[0].log[1].registers == (("atomic", "float32"),)


def test_atomic_add_bf16_fixpipe_rounds_once():
    rng = np.random.default_rng(3)
    l0c = rng.standard_normal(1024).astype(np.float32)
    gm0 = rng.standard_normal(512).astype(np.float32).astype(BF16)

    def body(core, gm):
        fill(core, "L0C", l0c)
        SetAtomicAdd(BF16)
        Fixpipe(GlobalTensor(BF16).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32), FixpipeParamsV220(
            nSize=16, mSize=16, srcStride=16, dstStride=1, quantPre=QuantMode_t.F322BF16), CFG_NZ)
        SetAtomicNone()

    _, bufs = launch_body(body, [gm0])
    expect = ref.ref_fixpipe(gm0, l0c, 0, 0, 16, 16, 16, 1, "F322BF16", False, False, BF16, atomic_add=True)
    assert np.array_equal(bufs[0].data.view(BF16).view(np.uint16), expect.view(np.uint16))


def test_atomic_type_mismatch_faults():
    def body(core, gm):
        SetAtomicAdd(np.float32)
        Fixpipe(GlobalTensor(np.float16).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32),
                FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=1, quantPre=QuantMode_t.F322F16), CFG_NZ)

    with pytest.raises(ParameterOutOfRange, match=r"SetAtomicAdd<float32> is set but the store writes float16"):
        launch_body(body, [np.zeros(512, np.float16)])


def _two_cores_store(atomic_on_core):
    def body(core, gm):
        idx = GetBlockIdx()
        fill(core, "L0C", np.full(256, idx + 1.0, np.float32))
        if idx in atomic_on_core:
            SetAtomicAdd(np.float32)
        Fixpipe(GlobalTensor(np.float32).SetGlobalBuffer(gm[0]), local(core, "L0C", np.float32),
                FixpipeParamsV220(nSize=16, mSize=16, srcStride=16, dstStride=2), CFG_NZ)
        if idx in atomic_on_core:
            SetAtomicNone()
    return body


def test_atomic_adds_of_two_cores_commute_and_do_not_race():
    _, bufs = launch_body(_two_cores_store((0, 1)), [np.full(256, 10.0, np.float32)], block_dim=2, check_races=True)
    np.testing.assert_array_equal(bufs[0].data.view(np.float32), np.full(256, 13.0, np.float32))


def test_plain_store_against_atomic_add_of_another_core_races():
    with pytest.raises(CrossCoreRace):
        launch_body(_two_cores_store((1,)), [np.zeros(256, np.float32)], block_dim=2, check_races=True)
