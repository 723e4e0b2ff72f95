"""The arch35 validator (tiling/conv3d_backprop_input/arch35/validate.py): it accepts the real UT tilings and
refuses, by field name, each rule broken on purpose. The L1 figures are worked out by hand from IsL1ParamsValid's
formulas (comments), not read from the code."""
from __future__ import annotations

import json

import pytest
from paths import DATA_DIR

from ascend_sim.machine.platform import get_platform
from tiling import TilingValidationError
from tiling.conv3d_backprop_input.arch35 import conv3d_backprop_input_tiling_arch35

VECTORS = json.loads((DATA_DIR / "conv3d_dx_tiling_vectors_arch35.json").read_text())["vectors"]
UT_PLATFORM = get_platform("Ascend950PR_9589").with_overrides(UB=245760)
PLATFORM = get_platform("Ascend950PR_9589")


def small(dtype="float16", platform=PLATFORM):
    """dy (1, 16, 4, 8, 8), w (16, 16, 3, 3, 3), stride 1, pad 1: SmallShape, baseM 64, baseK 144 (fp16)."""
    return conv3d_backprop_input_tiling_arch35((1, 16, 4, 8, 8), (16, 16, 3, 3, 3), (1, 16, 4, 8, 8), (1, 1, 1),
                                               (1,) * 6, (1, 1, 1), 1, dtype, platform)


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_every_real_ut_tiling_fits(vector):
    fmt = vector["formats"]
    t = conv3d_backprop_input_tiling_arch35(
        vector["dy_shape"]["ori"], vector["filter_shape"]["ori"], vector["dx_shape"]["ori"], vector["strides"],
        vector["pads"], vector["dilations"], vector["groups"], vector["dtype"], UT_PLATFORM, vector["enable_hf32"],
        data_format=fmt["dy_ori"], filter_format=fmt["filter_ori"])
    assert t.fields() == vector["tiling"]  # the real answer (test_tiling_arch35_vectors checks this too)
    assert t.check().ok, str(t.check())


@pytest.mark.parametrize("overrides, field, rule", [
    ({"baseM": 40}, "baseM=40", "positive multiple of 16"),
    ({"baseN": 8}, "baseN=8", "positive multiple of 16"),
    ({"baseK": 24}, "baseK=24", "positive multiple of C0=16"),
    ({"al1Pbuffer": 3}, "al1Pbuffer=3", "must be 1 (single buffer) or 2"),
    ({"iterateOrder": 2}, "iterateOrder=2", "must be 0 or 1"),
    ({"coreNum": 33}, "coreNum=33", "must be in [1, 32]"),
    ({"stepKa": 0}, "stepKa=0", "must be at least 1"),
    # L0A: 128 * 144 * 2 = 36864 bytes per half, two halves (al0 = bl0 = 2) > 65536
    ({"baseM": 128}, "baseM=128", "L0A needs 73728 bytes"),
    # L0C: 512 * 256 * 4 = 524288 > 262144
    ({"baseM": 512, "baseN": 256, "baseK": 16, "al0Pbuffer": 1, "bl0Pbuffer": 1, "cl0Pbuffer": 1},
     "cl0Pbuffer=1", "L0C needs 524288 bytes"),
    # a K load of 48 is neither all of K (144) nor whole hk*wk*C0 = 144 groups
    ({"baseK": 48, "stepKa": 1, "stepKb": 1}, "stepKa=1", "IsHkWkAligned"),
])
def test_each_rule_refuses_by_name(overrides, field, rule):
    with pytest.raises(TilingValidationError) as err:
        small().with_overrides(**overrides)
    assert field in str(err.value) and rule in str(err.value)


def test_hf32_only_for_float32():
    report = small().with_overrides(validate=False, hf32Flag=1).check()
    assert [str(p) for p in report.problems] == ["hf32Flag=1: must be 0, or 1 for float32 only"]


def test_l1_bound_is_strict_and_counted_as_is_l1_params_valid():
    # baseM 64 = 8 whole rows of wi 8: CalFmapH = min(8 + 3 - 1, (ho - 1) * 1 + 1 = 8) = 8 dy rows of wo 8;
    # A1 = 8 * 8 * strideW 1 * (144 / 9 = 16 channels) * 2 bytes * al1Pbuffer 2 = 4096;
    # B1 = bl1Pbuffer 2 * 2 bytes * baseN 16 * 1 copy line * 144 = 9216; A1 + B1 = 13312 must stay below L1.
    t = small()
    assert (t.baseM, t.baseN, t.baseK, t.stepKa, t.stepKb, t.al1Pbuffer, t.bl1Pbuffer) == (64, 16, 144, 1, 1, 2, 2)
    assert t.check(PLATFORM.with_overrides(L1=13312 + 32)).ok  # L1 sizes are whole 32-byte blocks
    problems = [str(p) for p in t.check(PLATFORM.with_overrides(L1=13312)).problems]
    assert problems == ["stepKa=1: L1 needs 13312 bytes: A1 4096 (al1Pbuffer=2) + B1 9216 (bl1Pbuffer=2); it must "
                        "stay below L1=13312 (IsL1ParamsValid)"]


@pytest.mark.parametrize("dtype, c0", [("float32", 8), ("hifloat8", 32)])
def test_c0_follows_the_dtype(dtype, c0):
    t = small(dtype)
    assert t.c0 == c0 and t.check().ok
    broken = t.with_overrides(validate=False, baseK=c0 + c0 // 2).check()
    assert f"must be a positive multiple of C0={c0}" in str(broken)
