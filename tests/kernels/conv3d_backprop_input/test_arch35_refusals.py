"""What the dx operator refuses on the Ascend 950 (and 8-bit on A2), by name and before any launch."""
from __future__ import annotations

import numpy as np
import pytest

from ascend_sim.machine.dtypes import float8_e4m3fn, float16, float32, hifloat8
from kernels.conv3d_backprop_input.operator import conv3d_backprop_input_v2_run
from kernels.conv3d_backprop_input.operator_arch35 import plan_arch35
from tiling import TilingValidationError

PLATFORM = "Ascend950PR_9589"


def _run(w, dy, size, **kw):
    args = dict(strides=(1, 1, 1, 1, 1), pads=(1,) * 6, platform=PLATFORM, data_format="NCDHW")
    args.update(kw)
    return conv3d_backprop_input_v2_run(size, w, dy, **args)


def test_mixed_dtypes_refused():
    with pytest.raises(TypeError, match="filter.dtype=float16 and out_backprop.dtype=float32"):
        _run(np.zeros((8, 8, 3, 3, 3), float16), np.zeros((1, 8, 4, 4, 4), float32), (1, 8, 4, 4, 4))


def test_int8_refused():
    with pytest.raises(TypeError, match="filter.dtype=int8 is not supported on the 950"):
        _run(np.zeros((8, 8, 3, 3, 3), np.int8), np.zeros((1, 8, 4, 4, 4), np.int8), (1, 8, 4, 4, 4))


@pytest.mark.parametrize("data_format,filter_format", [("NDHWC", "NCDHW"), ("NCDHW", "NDHWC"), ("NCDHW", "DHWCN")])
def test_8bit_needs_ncdhw(data_format, filter_format):
    with pytest.raises(ValueError, match="8-bit needs out_backprop, filter and y all NCDHW"):
        plan_arch35((1, 8, 4, 4, 4), (8, 8, 3, 3, 3), (1, 8, 4, 4, 4), "hifloat8", strides=(1, 1, 1), pads=(1,) * 6,
                    dilations=(1, 1, 1), groups=1, data_format=data_format, filter_format=filter_format,
                    platform=PLATFORM, enable_hf32=False)


def test_ndhwc_groups_refused():
    with pytest.raises(ValueError, match="groups=2 with data_format='NDHWC': not supported on the 950"):
        _run(np.zeros((8, 4, 3, 3, 3), float16), np.zeros((1, 4, 4, 4, 8), float16), (1, 4, 4, 4, 8),
             groups=2, data_format="NDHWC")


@pytest.mark.parametrize("dtype", [float16, hifloat8])
def test_hf32_with_a_dtype_other_than_float32_refused(dtype):
    # the tiling ignores it (GetImplMode); the operator refused it on the A2 only, and ran a plain 950 result
    with pytest.raises(ValueError, match=f"enable_hf32=True with dtype='{np.dtype(dtype).name}': HF32 applies to "
                                         "float32 only"):
        _run(np.zeros((16, 16, 1, 1, 1), dtype), np.zeros((1, 16, 2, 4, 4), dtype), (1, 16, 2, 4, 4),
             pads=(0,) * 6, enable_hf32=True)


@pytest.mark.parametrize("dtype", [hifloat8, float8_e4m3fn])
def test_8bit_refused_on_a2(dtype):
    with pytest.raises(TypeError, match="is not supported"):
        _run(np.zeros((8, 8, 3, 3, 3), dtype), np.zeros((1, 8, 4, 4, 4), dtype), (1, 8, 4, 4, 4),
             platform="Ascend910B2")


def test_group_enlarge_with_an_8bit_type_refused_by_name():
    # the tiling never enlarges 8-bit (test_arch35_group_enlarge.py); a key forced to ENLARGE is refused, as the
    # source compiles the AIV's weight build out for hifloat8 / fp8 and its AIC would wait for ever
    from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import unported_features
    from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35
    t = conv3d_backprop_input_tiling_arch35((1, 8, 4, 4, 4), (8, 1, 3, 3, 3), (1, 8, 4, 4, 4), (1, 1, 1), (1,) * 6,
                                            (1, 1, 1), 8, "hifloat8", PLATFORM)
    assert unported_features(t.tiling_key, t) == []
    problems = unported_features(t.tiling_key | (1 << 16), t)  # groupConvMode ENLARGE
    assert len(problems) == 1 and problems[0].startswith("groupConvMode=1 (ENLARGE) with an 8-bit type")


def test_tiling_override_of_a_problem_field_refused_on_the_950():
    with pytest.raises(TilingValidationError, match="cin=16: copied by the arch35 tiling from the problem"):
        _run(np.zeros((8, 8, 3, 3, 3), float16), np.zeros((1, 8, 4, 4, 4), float16), (1, 8, 4, 4, 4),
             tiling_overrides={"cin": 16})


def test_illegal_tiling_override_refused_by_the_arch35_rules():
    with pytest.raises(TilingValidationError, match=r"baseK=20: must be a positive multiple of C0=16"):
        _run(np.zeros((8, 8, 3, 3, 3), float16), np.zeros((1, 8, 4, 4, 4), float16), (1, 8, 4, 4, 4),
             tiling_overrides={"baseK": 20})


def test_kernel_entry_refuses_an_unported_tiling_key():
    from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import unported_features
    from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35
    t = conv3d_backprop_input_tiling_arch35((1, 8, 4, 4, 4), (8, 8, 3, 3, 3), (1, 8, 4, 4, 4), (1, 1, 1), (1,) * 6,
                                            (1, 1, 1), 1, "float16", PLATFORM)
    assert unported_features(t.tiling_key, t) == []
    key_hw = t.tiling_key | (1 << 8)  # kernelSplitMode SPLIT_KERNEL_HW
    assert unported_features(key_hw, t.with_overrides(kSCoutFullLoad=1, validate=False)) == []
    # the HW split's NCDHW weight load without Cout held whole reads a ctx field the source never sets
    no_full = t.with_overrides(kSCoutFullLoad=0, enableVecTrans=0, validate=False)
    assert unported_features(key_hw, no_full, "NDHWC") == []
    assert unported_features(key_hw, no_full, "NCDHW") == [
        "kernelSplitMode=1 with an NCDHW filter, kSCoutFullLoad=0 and enableVecTrans=0 "
        "(LoadToB1Dn2NzTransposeForKernelSplitHW reads ctx.dkHkWk_, which the source never sets)"]
    assert unported_features(t.tiling_key | (3 << 8), t) == ["kernelSplitMode=3 (Conv3dDxKsBlock)"]


@pytest.mark.parametrize("extra,mode", [(2 << 8, "kernelSplitMode=2"), (2 << 25, "loadB1Condition=2")])
def test_group_enlarge_with_kernel_split_or_no_hk_refused_by_name(extra, mode):
    # the tiling never combines them (CalRealG drops ENLARGE when the taps must be split; the kernel split needs
    # groups 1): a key forced so is refused by name
    from kernels.conv3d_backprop_input.kernel.arch35.conv3d_backprop_input_v2_arch35 import unported_features
    from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35
    t = conv3d_backprop_input_tiling_arch35((1, 8, 4, 4, 4), (8, 1, 3, 3, 3), (1, 8, 4, 4, 4), (1, 1, 1), (1,) * 6,
                                            (1, 1, 1), 8, "float16", PLATFORM)
    assert unported_features(t.tiling_key, t) == []  # ENLARGE (depthwise fp16) runs
    problems = unported_features(t.tiling_key | extra, t)
    assert any(p.startswith("groupConvMode=1 (ENLARGE) with") and mode in p for p in problems)
