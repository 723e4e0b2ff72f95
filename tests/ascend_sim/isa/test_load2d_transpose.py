"""LoadDataWithTranspose (the instruction the Conv3DV2 pointwise kernel added for fp32 feature maps) against the
loop reference of tests/isa_reference.py, a hand-computed fact of the b32 form, and its parameter faults."""
import isa_reference as ref
import numpy as np
import pytest
from core_buffers import elems, fill, launch_body, local

from ascend_sim.ascendc import LoadData2dTransposeParams, LoadDataWithTranspose
from ascend_sim.machine.faults import SimFault

RNG = np.random.default_rng(11)


def _run(body):
    return launch_body(lambda core, _: body(core))[0].cores[0]


@pytest.mark.parametrize("where", ["L0A", "L0B"])
@pytest.mark.parametrize("dtype,start,reps,src_stride,dst_gap,frac_gap", [
    (np.float16, 0, 3, 1, 0, 0), (np.float16, 1, 2, 2, 1, 0), (np.float32, 0, 3, 1, 0, 2),
    (np.float32, 1, 2, 2, 1, 0), (np.float32, 0, 4, 1, 0, 3), (np.float32, 0, 0, 1, 0, 0)])
def test_load_data_with_transpose_matches_reference(where, dtype, start, reps, src_stride, dst_gap, frac_gap):
    dtype = np.dtype(dtype)
    src = RNG.integers(-50, 50, 16384 // dtype.itemsize).astype(dtype)
    dst0 = RNG.integers(-50, 50, 16384 // dtype.itemsize).astype(dtype)

    def body(core):
        fill(core, "L1", src)
        fill(core, where, dst0)
        LoadDataWithTranspose(local(core, where, dtype), local(core, "L1", dtype),
                              LoadData2dTransposeParams(startIndex=start, repeatTimes=reps, srcStride=src_stride,
                                                        dstGap=dst_gap, dstFracGap=frac_gap))

    core = _run(body)
    expect = ref.ref_load_data_with_transpose(dst0, src, 0, 0, start, reps, src_stride, dst_gap, frac_gap,
                                              dtype.itemsize)
    assert np.array_equal(elems(core, where, dtype, dst0.size), expect)


def test_b32_square_is_the_transposed_pair_of_fractals():
    """Independent of the reference: two 16 x 8 fp32 fractals side by side form A (16 x 16); the result is A^T
    split into its columns 0-7 (first fractal) and 8-15 (dstFracGap = 1: one fractal further)."""
    a = RNG.integers(-50, 50, (16, 16)).astype(np.float32)
    src = np.concatenate([a[:, :8].ravel(), a[:, 8:].ravel()])

    def body(core):
        fill(core, "L1", src)
        fill(core, "L0B", np.zeros(1024, np.float32))
        LoadDataWithTranspose(local(core, "L0B", np.float32), local(core, "L1", np.float32),
                              LoadData2dTransposeParams(repeatTimes=1, srcStride=1, dstFracGap=1))

    out = elems(_run(body), "L0B", np.float32, 512)
    assert np.array_equal(out[:128].reshape(16, 8), a.T[:, :8])
    assert np.array_equal(out[256:384].reshape(16, 8), a.T[:, 8:])
    assert not out[128:256].any()  # the gap is not written


@pytest.mark.parametrize("field,value", [("repeatTimes", 256), ("srcStride", 65536), ("dstFracGap", -1),
                                         ("startIndex", 70000)])
def test_out_of_range_fields_fault(field, value):
    def body(core):
        p = LoadData2dTransposeParams(repeatTimes=1, srcStride=1)
        setattr(p, field, value)
        LoadDataWithTranspose(local(core, "L0B", np.float16), local(core, "L1", np.float16), p)

    with pytest.raises(SimFault, match=f"LoadDataWithTranspose.*{field}={value}|{field}={value}.*"):
        _run(body)


def test_b8_and_misaligned_destination_fault():
    with pytest.raises(SimFault, match="b16 and b32"):
        _run(lambda core: LoadDataWithTranspose(local(core, "L0B", np.int8), local(core, "L1", np.int8),
                                                LoadData2dTransposeParams(repeatTimes=1)))
    with pytest.raises(SimFault, match="512"):
        _run(lambda core: LoadDataWithTranspose(local(core, "L0B", np.float16, 32), local(core, "L1", np.float16),
                                                LoadData2dTransposeParams(repeatTimes=1)))
