"""LoadData 2D from GM (into L0B and L1, on MTE2; the Conv3D forward API's weight path) against
tests/isa_reference.py, and its repeat range."""
import isa_reference as ref
import numpy as np
import pytest
from core_buffers import elems, fill, launch_body, local

from ascend_sim.ascendc import GlobalTensor, LoadData, LoadData2DParams
from ascend_sim.machine.faults import SimFault

RNG = np.random.default_rng(3)


def _run_one_core(body, gm_arrays=()):
    return launch_body(body, gm_arrays)[0].cores[0]


@pytest.mark.parametrize("where", ["L0B", "L1"])
@pytest.mark.parametrize("dtype,start,reps,src_stride,dst_gap", [(np.float16, 0, 3, 1, 0), (np.float32, 2, 4, 3, 1),
                                                                 (np.float16, 1, 0, 1, 0)])
def test_load_data_2d_from_gm(where, dtype, start, reps, src_stride, dst_gap):
    dtype = np.dtype(dtype)
    src = RNG.integers(-50, 50, 8192 // dtype.itemsize).astype(dtype)
    dst0 = RNG.integers(-50, 50, 8192 // dtype.itemsize).astype(dtype)

    def body(core, gm):
        fill(core, where, dst0)
        LoadData(local(core, where, dtype), GlobalTensor(dtype).SetGlobalBuffer(gm[0]),
                 LoadData2DParams(startIndex=start, repeatTimes=reps, srcStride=src_stride, dstGap=dst_gap))

    core = _run_one_core(body, [src])
    expect = ref.ref_load2d(dst0, src, 0, 0, start, reps, src_stride, dst_gap, False, dtype.itemsize)
    assert np.array_equal(elems(core, where, dtype, dst0.size), expect)


def test_load_data_2d_from_gm_refuses_out_of_range_repeat():
    def body(core, gm):
        LoadData(local(core, "L0B", np.float16), GlobalTensor(np.float16).SetGlobalBuffer(gm[0]),
                 LoadData2DParams(repeatTimes=256, srcStride=1))

    with pytest.raises(SimFault, match="repeatTimes=256"):
        _run_one_core(body, [np.zeros(4096, np.float16)])
