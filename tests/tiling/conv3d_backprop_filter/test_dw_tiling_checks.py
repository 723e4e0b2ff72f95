"""The dw tiling's argument checks and its validator: bad input is refused naming the parameter, value and range;
a broken tiling is explained field by field."""
from __future__ import annotations

import pytest

import tiling
from tiling import TilingValidationError
from tiling.conv3d_backprop_filter import check_conv3d_dw_args

# 25_b16 of the real vectors: a 3x3x3 bf16 dw on 20 cores (basic block, tiling key 1)
GOOD = dict(x_shape=(1, 512, 11, 64, 64), filter_shape=(512, 512, 3, 3, 3), dy_shape=(1, 512, 9, 64, 64),
            strides=(1, 1, 1), pads=(0, 0, 1, 1, 1, 1), dilations=(1, 1, 1), groups=1, dtype="bfloat16",
            platform="Ascend910B3")
# stdit_01_fp16: the base template (tiling key 0)
BASE = dict(x_shape=(1, 4, 1, 32, 32), filter_shape=(1152, 4, 1, 2, 2), dy_shape=(1, 1152, 1, 16, 16),
            strides=(1, 2, 2), dtype="float16", platform="Ascend910B2")


def _refused(match: str, error=ValueError, **changes):
    with pytest.raises(error, match=match):
        tiling.conv3d_backprop_filter_tiling(**{**GOOD, **changes})


@pytest.mark.parametrize("changes, match", [
    (dict(x_shape=(1, 512, 11, 64, 0)), r"x_shape\[4\] \(W\)=0 is outside the allowed range \[1, 2147483646\]"),
    (dict(dy_shape=(2, 512, 9, 64, 64)), r"dy_shape\[0\] \(N\)=2 must equal x_shape\[0\] \(N\)=1"),
    (dict(filter_shape=(256, 512, 3, 3, 3)), r"filter_shape\[0\] \(Cout\)=256 must equal dy_shape\[1\]"),
    (dict(strides=(1, 64, 1)), r"stride_h=64 \(strides\[1\]\) is outside the allowed range \[1, 63\]"),
    (dict(dilations=(1, 1, 256)), r"dilation_w=256 .* \[1, 255\]"),
    (dict(pads=(0, 0, 1, 1, 256, 1)), r"pad_left=256 .* \[0, 255\]"),
    (dict(pads=(0, 0, 1, -1, 1, 1)), r"pad_bottom=-1"),
    (dict(filter_shape=(512, 512, 3, 512, 3)), r"kH=512 .* \[1, 511\]"),
    (dict(groups=3), r"groups=3 disagrees with the shapes: x_shape\[1\] \(Cin\)=512 / filter_shape\[1\]"),
    (dict(filter_shape=(512, 300, 3, 3, 3)), r"filter_shape\[1\] \(Cin/groups\)=300 must divide x_shape\[1\]"),
    (dict(dy_shape=(1, 512, 9, 64, 63)), r"dy_shape\[4\] \(W\)=63 does not fit the convolution: expected .* = 64"),
    (dict(dtype="int8"), r"dtype='int8' is not supported"),
    (dict(enable_hf32=True), r"enable_hf32=True with dtype='bfloat16'"),
])
def test_bad_arguments_are_refused_by_name(changes, match):
    _refused(match, **changes)


def test_wrong_types_are_refused():
    _refused(r"groups=1.5 must be an integer", TypeError, groups=1.5)
    _refused(r"deterministic=1 must be a bool", TypeError, deterministic=1)
    _refused(r"platform=3 must be a preset name", TypeError, platform=3)


def test_groups_one_takes_the_channel_ratio_as_the_real_host_does():
    args = check_conv3d_dw_args(x_shape=(1, 8, 4, 8, 8), filter_shape=(8, 2, 1, 1, 1), dy_shape=(1, 8, 4, 8, 8),
                                groups=1)
    assert args.groups == 4
    with pytest.raises(ValueError, match="groups=4 must divide dy_shape\\[1\\] \\(Cout\\)=6"):
        check_conv3d_dw_args(x_shape=(1, 8, 4, 8, 8), filter_shape=(6, 2, 1, 1, 1), dy_shape=(1, 6, 4, 8, 8))


def test_kernel_of_one_drops_its_dilation():
    args = check_conv3d_dw_args(x_shape=(1, 16, 4, 8, 8), filter_shape=(16, 16, 1, 3, 1), dy_shape=(1, 16, 4, 4, 8),
                                dilations=(3, 2, 5))
    assert args.dilations == (1, 2, 1)


def test_rows_too_wide_for_l1_are_refused():
    # 5 x rows (kH=3, dilation 2) of W=3446 x 16 channels x 2 bytes = 551360 bytes > 512 KiB
    with pytest.raises(ValueError, match=r"x_shape\[4\] \(W\)=3446 is too wide for L1"):
        tiling.conv3d_backprop_filter_tiling((3, 32, 23, 5, 3446), (128, 8, 20, 3, 1), (3, 128, 4, 1, 863),
                                             (1, 5, 4), (0, 0, 2, 1, 2, 3), (1, 2, 1), 4, "float16", "Ascend910B3")


def test_generated_tilings_validate():
    for problem in (GOOD, BASE):
        result = tiling.conv3d_backprop_filter_tiling(**problem)
        assert tiling.validate_dw(result).ok
        assert result.check().ok


def test_bl1_bound_is_checked_against_what_load_to_b1_writes():
    result = tiling.conv3d_backprop_filter_tiling(**GOOD)
    f = result.fields()
    # by hand: stepKb*baseK dy pixels over rows of wo, the x rows they need, x channels for stepN*baseN columns
    assert (f["stepKb"] * f["baseK"], f["wo"], f["stepN"] * f["baseN"], f["hk"] * f["wk"]) == (512, 64, 128, 9)
    rows = 512 // 64 + (3 - 1)  # 8 dy rows, stride 1, kH 3
    cin1 = -(-(128 // 16) // 9) + 1  # 8 C0 columns of a 9-position window straddle two cin1 rows
    assert f["bl1Bound"] >= rows * 64 * cin1 * 16
    with pytest.raises(TilingValidationError, match=r"bl1Bound=20479: LoadToB1 can write 20480 elements"):
        result.with_overrides(bl1Bound=rows * 64 * cin1 * 16 - 1)
    assert result.with_overrides(bl1Bound=rows * 64 * cin1 * 16).check().ok


@pytest.mark.parametrize("changes, field", [
    (dict(baseM=4112), "baseM"),                # Mmad m and L0A
    (dict(baseK=24), "baseK"),                  # not a 16-pixel fractal row
    (dict(al1Pbuffer=3), "al1Pbuffer"),
    (dict(cl0Pbuffer=2, baseN=256, baseM=128), "cl0Pbuffer"),  # 128*256*4*2 > L0C
    (dict(stepKa=64), "bl1Bound"),              # A1 64x larger: L1 overflows
    (dict(usedCoreNum=21), "usedCoreNum"),      # 20 cores on Ascend910B3
    (dict(singleCoreN=128), "singleCoreN"),     # key 1 gives one core all of N
    (dict(streamKType=1, coreStreamK=2), "streamKType"),  # stream-K is tiling key 4 only
    (dict(tiling_key=0), "coreBindOrder"),      # key 0 leaves basicBlockTiling zero
    (dict(strideH=64), "strideH"),
    (dict(hf32Flag=1), "hf32Flag"),
])
def test_validator_names_the_broken_field(changes, field):
    result = tiling.conv3d_backprop_filter_tiling(**GOOD)
    with pytest.raises(TilingValidationError) as err:
        result.with_overrides(**changes)
    assert any(p.field == field for p in err.value.report.problems), str(err.value)
    assert err.value.tiling is not None
    assert not result.with_overrides(validate=False, **changes).check().ok


@pytest.mark.parametrize("changes, field", [
    (dict(mDim=13), "mDim"),               # a core would start past the end of M
    (dict(singleCoreHo=1), "singleCoreHo"),  # kDim cores of one row leave ho uncovered
    (dict(batchDim=25), "batchDim"),        # more cores than Ascend910B2 has
    (dict(dkDim=2), "dkDim"),               # no depth split without groups or depth dilation
])
def test_validator_checks_the_base_templates_core_split(changes, field):
    result = tiling.conv3d_backprop_filter_tiling(**BASE)
    assert result.tiling_key == 0
    with pytest.raises(TilingValidationError) as err:
        result.with_overrides(**changes)
    assert any(p.field == field for p in err.value.report.problems), str(err.value)


def test_overrides_refuse_unknown_names_and_non_integers():
    result = tiling.conv3d_backprop_filter_tiling(**GOOD)
    with pytest.raises(ValueError, match="unknown tiling field 'basem'; did you mean 'baseM'"):
        result.with_overrides(basem=64)
    with pytest.raises(TypeError, match="baseM=64.0 must be an integer"):
        result.with_overrides(baseM=64.0)
    changed = tiling.conv3d_backprop_filter_tiling(**GOOD, tiling_overrides={"stepKa": 2, "stepKb": 2})
    assert (changed.dwTiling.stepKa, changed.dwTiling.stepKb) == (2, 2)
    assert changed.notes[-1] == "overridden: ['stepKa', 'stepKb']"
