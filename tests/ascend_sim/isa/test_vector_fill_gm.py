"""Fill(GlobalTensor, size, value) (the adv API InitGlobalMemory) on a vector core: exactly `size` elements from
the tensor's start take `value`, everything around them is untouched, for bursts of UB's size plus a tail."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_reference import run_aiv

from ascend_sim.ascendc import Fill, GlobalTensor
from ascend_sim.machine.dtypes import bfloat16, float16, float32


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([np.int8, float16, bfloat16, float32]), st.integers(0, 40), st.integers(0, 70000),
       st.integers(0, 2**31))
def test_fill_sets_exactly_the_range(dtype, start, size, seed):
    dtype = np.dtype(dtype)
    total = start + size + 37
    before = np.random.default_rng(seed).integers(0, 256, total * dtype.itemsize).astype(np.uint8)
    value = dtype.type(3) if dtype != np.int8 else np.int8(-5)

    def kernel(x):
        Fill(GlobalTensor(dtype).SetGlobalBuffer(x)[start], size, value)
    chip, _ = run_aiv(kernel, before, platform="Ascend950PR_9589")
    got = chip.gm["in0"].data.view(dtype)
    expect = before.view(dtype).copy()
    expect[start:start + size] = value
    assert np.array_equal(got.view(np.uint8), expect.view(np.uint8))


def test_fill_does_nothing_on_a_cube_core():
    from ascend_sim import Chip
    from ascend_sim.machine.tensor import GmAddr
    chip = Chip("Ascend950PR_9589")
    x = chip.gm.upload("x", np.ones(64, np.float32))
    chip.launch(lambda a: Fill(GlobalTensor(np.float32).SetGlobalBuffer(a), 64, np.float32(0)), 1, GmAddr(x),
                kernel_type="AIC_ONLY")
    assert (chip.gm["x"].data.view(np.float32) == 1).all()


def test_fill_takes_a_global_tensor():
    with pytest.raises(TypeError, match="must be a GlobalTensor"):
        Fill(np.zeros(4), 4, 0)
