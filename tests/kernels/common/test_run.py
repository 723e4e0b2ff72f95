"""The one run type (kernels/common/run.py): every operator returns it, with the platform it ran on, and the
launch steps it shares keep their promises (NaN outputs, nothing read back in timing-only mode, the trace file)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.machine.platform import get_platform
from kernels import (Run, conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run,
                     convolution_backward_run)
from kernels.common.run import output_buffer, read_output
from tests.kernels.conv3d_backprop_input.arch35_oracle import assert_close_16_32, dx_reference

RNG = np.random.default_rng(18)
NCDHW = dict(strides=(1, 1, 1, 1, 1), pads=(0, 0, 1, 1, 1, 1), data_format="NCDHW")


def _f16(*shape):
    return RNG.standard_normal(shape).astype(np.float16)


def test_every_operator_returns_the_one_run_type_with_its_platform(tmp_path):
    x, w, dy = _f16(1, 16, 2, 4, 4), _f16(16, 16, 1, 3, 3), _f16(1, 16, 2, 4, 4)
    trace = tmp_path / "dx.json"
    runs = {"dx": conv3d_backprop_input_v2_run(x.shape, w, dy, **NCDHW, trace=trace),
            "dw": conv3d_backprop_filter_v2_run(x, w.shape, dy, **NCDHW, execute=False),
            "conv3d": conv3d_v2_run(x, w, None, **NCDHW, platform="Ascend910B3", execute=False)}
    backward = convolution_backward_run(dy, x, w, [16], (1, 1, 1), (0, 1, 1), (1, 1, 1), False, (0, 0, 0), 1,
                                        (True, True, True), execute=False)
    runs.update({launch.gradient: launch for launch in backward.launches})
    assert sorted(runs) == ["conv3d", "dw", "dx", "grad_bias", "grad_input", "grad_weight"]
    for name, run in runs.items():
        assert type(run) is Run, name
        assert run.platform is get_platform("Ascend910B3" if name == "conv3d" else "Ascend910B2"), name
        assert run.cycles == run.report.cycles > 0, name
    assert [launch.kernel for launch in backward.launches] == ["ReduceSum (AIV)", "Conv3DBackpropInputV2",
                                                               "Conv3DBackpropFilterV2"]
    assert runs["dx"].route == "v2" and runs["dx"].matmul_mode is None
    assert runs["dx"].trace_path == str(trace) and json.loads(trace.read_text())
    assert runs["dw"].trace_path is None and runs["dw"].result is None


def test_retime_on_the_run_platform_reproduces_its_cycles_and_another_clock_scales_them():
    w, dy = _f16(16, 16, 1, 3, 3), _f16(1, 16, 2, 4, 4)
    run = conv3d_backprop_input_v2_run((1, 16, 2, 4, 4), w, dy, **NCDHW, execute=False)
    assert run.retime(run.platform).cycles == run.cycles
    slower = run.platform.model_copy(update={"clock_mhz": run.platform.clock_mhz / 2})
    assert run.retime(slower).microseconds == pytest.approx(2 * run.microseconds)


@pytest.mark.parametrize("execute", [True, False])
def test_output_buffer_starts_as_nan_and_read_output_is_none_in_timing_only_mode(execute):
    chip = Chip("Ascend910B2", execute=execute)
    poisoned = output_buffer(chip, "y", (2, 3), np.float16, poison=True)
    plain = output_buffer(chip, "z", (4,), np.float32, poison=False)
    if execute:
        assert np.isnan(read_output(chip, poisoned, (2, 3), np.float16)).all()
        assert not np.isnan(read_output(chip, plain, (4,), np.float32)).any()
    else:
        assert read_output(chip, poisoned, (2, 3), np.float16) is None


def test_dx_on_the_950_without_data_format_reads_ndhwc():
    """data_format None is NDHWC, as the real operator, on the 950's arch35 path too (it was refused there)."""
    w, dy = _f16(16, 16, 1, 1, 1), _f16(1, 4, 4, 4, 16)  # dy NDHWC: (N, D, H, W, Cout)
    run = conv3d_backprop_input_v2_run((1, 4, 4, 4, 16), w, dy, strides=(1,) * 5, pads=(0,) * 6,
                                       platform="Ascend950PR_9589")
    ref, bound = dx_reference((1, 16, 4, 4, 4), w, dy.transpose(0, 4, 1, 2, 3), (1, 1, 1), (0,) * 6, (1, 1, 1), 1)
    assert_close_16_32(run.result.transpose(0, 4, 1, 2, 3), ref, bound, np.float16)


def test_a_convolution_backward_launch_holds_the_gradient_it_returned():
    x, w, go = _f16(1, 16, 4, 4), _f16(16, 16, 3, 3), _f16(1, 16, 2, 2)
    run = convolution_backward_run(go, x, w, [16], (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (True, True, True))
    grads = {"grad_input": run.grad_input, "grad_weight": run.grad_weight, "grad_bias": run.grad_bias}
    for launch in run.launches:
        assert launch.result is grads[launch.gradient] and launch.result.dtype == np.float16
