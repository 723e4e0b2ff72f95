"""--format NDHWC with --timing-only: the stand-in operands stay size-only on their way to data_format (a copy
would allocate the whole tensor the timing-only run never reads)."""
from __future__ import annotations

import tracemalloc

import numpy as np

from frontends.cli.app import main
from frontends.cli.conv_problem import CliProblem
from kernels.common.operands import stand_in

NDHWC = CliProblem(2, 16, 32, (4, 6, 8), (3, 3, 3), (1, 1, 1), (1,) * 6, (1, 1, 1), 1, "float16", "Ascend910B2",
                    False, "NDHWC")


def test_a_stand_in_moves_to_ndhwc_as_a_view():
    moved = NDHWC.to_format(stand_in(NDHWC.dx_shape, np.float16))
    assert moved.shape == (2, 4, 6, 8, 16) and not any(moved.strides)


def test_real_data_moves_to_ndhwc_as_a_contiguous_copy():
    x = np.arange(np.prod(NDHWC.dx_shape), dtype=np.float32).reshape(NDHWC.dx_shape)
    moved = NDHWC.to_format(x)
    assert moved.flags.c_contiguous and moved.shape == (2, 4, 6, 8, 16)
    np.testing.assert_array_equal(moved, np.moveaxis(x, 1, -1))


def test_a_timing_only_ndhwc_run_allocates_far_less_than_its_tensors(capsys):
    """dy and the filter of this layer are 2 x 64 x 16 x 64 x 64 and 64 x 64 x 3 x 3 x 3 fp16 (8.6 MB); dx as
    much: the whole run, records included, stays under them."""
    tracemalloc.start()
    code = main(["conv3d-dx", "--batch", "2", "--cin", "64", "--cout", "64", "--dhw", "16,64,64", "--format", "NDHWC",
                 "--timing-only", "--no-race-check", "--no-records", "--engine", "exact"])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert code == 0, capsys.readouterr().err
    tensors = 2 * 2 * 64 * 16 * 64 * 64 * 2
    assert peak < tensors / 2, (peak, tensors)
