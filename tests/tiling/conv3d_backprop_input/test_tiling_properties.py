"""Property tests of the Conv3DBackpropInputV2 tiling generator, its validator and its argument checks."""
from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import tiling
from ascend_sim.machine.platform import get_platform
from tiling import TilingInfeasible, TilingValidationError, check_conv3d_dx_args, tiling_for_args, validate
from tiling.conv3d_backprop_input.arch22.common import build_run_info

REAL = ["Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend910_9391"]
HYPOTHETICAL = [
    get_platform("Ascend910B2").with_overrides(name="hypo_small", aic_cores=8, L1=256 * 1024, L0A=32 * 1024,
                                               L0B=32 * 1024, L0C=64 * 1024),
    get_platform("Ascend910B3").with_overrides(name="hypo_big", aic_cores=40, L1=1024 * 1024, L0C=256 * 1024),
]
PROPERTY = settings(max_examples=int(os.environ.get("TILING_EXAMPLES", 500)), deadline=None, suppress_health_check=[HealthCheck.filter_too_much,
                                                                           HealthCheck.too_slow])


def _out(size: int, k: int, dil: int, stride: int, before: int, after: int) -> int:
    return (size + before + after - dil * (k - 1) - 1) // stride + 1


@st.composite
def problems(draw, large: bool = False):
    """A Conv3DBackpropInput problem inside the documented A2 envelope (checks may still reject a few)."""
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32"]))
    groups = draw(st.sampled_from([1, 1, 1, 2, 3, 4, 8, 16, 64, 320] if not large else [1, 1, 2, 32]))
    cmax = 2048 if large else 96
    cin_g = draw(st.integers(1, max(1, cmax // groups)))
    cout_g = draw(st.integers(1, max(1, cmax // groups)))
    kmax = 7 if large else 5
    kd, kh, kw = (draw(st.integers(1, 4)), draw(st.integers(1, kmax)), draw(st.integers(1, kmax)))
    sd = draw(st.integers(1, kd))
    sh, sw = draw(st.integers(1, 8)), draw(st.integers(1, 8))  # stride above the kernel is allowed in H/W
    dd, dh, dw = (draw(st.sampled_from([1, 1, 2, 3])) for _ in range(3))
    pad_d = [draw(st.integers(0, (kd - 1) * dd + 1)) for _ in range(2)]
    pad_h = [draw(st.integers(0, (kh - 1) * dh)) for _ in range(2)]
    pad_w = [draw(st.integers(0, (kw - 1) * dw)) for _ in range(2)]
    n = draw(st.integers(1, 8 if large else 3))
    di = draw(st.integers(1, 40 if large else 10))
    hi = draw(st.integers(1, 600 if large else 48))
    wi = draw(st.integers(1, 2048 if large else 48))
    out = (_out(di, kd, dd, sd, *pad_d), _out(hi, kh, dh, sh, *pad_h), _out(wi, kw, dw, sw, *pad_w))
    if min(out) < 1:
        reject()
    platform = draw(st.sampled_from(REAL + HYPOTHETICAL))
    return dict(dy_shape=(n, cout_g * groups, *out), filter_shape=(cout_g * groups, cin_g, kd, kh, kw),
                dx_shape=(n, cin_g * groups, di, hi, wi), strides=(sd, sh, sw), pads=(*pad_d, *pad_h, *pad_w),
                dilations=(dd, dh, dw), groups=groups, dtype=dtype, platform=platform,
                enable_hf32=dtype == "float32" and draw(st.booleans()))  # HF32 is a float32 mode


def _roomy(args) -> bool:
    """The smallest A1 + B1 load, double-buffered, takes at most half of L1: a tiling must then exist."""
    (_, _, _, ho, wo), (_, _, _, kh, kw) = args.dy_shape, args.filter_shape
    wi, dh, sh, sw = args.dx_shape[4], args.dilations[1], args.strides[1], args.strides[2]
    rows = min((1 if wi % 16 == 0 or 16 % wi == 0 else 2) + (kh - 1) * dh, (ho - 1) * sh + 1)
    a_min = rows * wo * sw * args.c0 * args.dtype_bytes
    b_min = 16 * kh * kw * 16 * args.dtype_bytes
    return 2 * (a_min + b_min) <= args.platform.L1 // 2


def _tile(problem: dict):
    try:
        args = check_conv3d_dx_args(**problem)
    except ValueError:
        reject()  # outside what the A2 operator accepts (e.g. L1 too small for the smallest load)
    try:
        return args, tiling_for_args(args)
    except TilingInfeasible:
        # Near-full-L1 shapes can be infeasible (as in the real generator); roomy ones on real chips never.
        if args.platform.name in REAL and _roomy(args):
            raise
        reject()


def _check_result(args, result) -> None:
    report = validate(result)
    assert report.ok, str(report)
    run = build_run_info(args)
    basic = run.real_g == 1 and args.dtype != "float32" and not run.kernel_split_shape()
    assert (result.template == "basic_block") == basic
    assert result.tiling_key == result.loadB2Condition + 256 * result.enableKernelSplit + 512 * result.useBasicBlock
    hkwk = args.filter_shape[3] * args.filter_shape[4]
    expect_b2 = 2 if hkwk == 1 else int(result.conv3DDxTiling.baseK // args.c0 >= hkwk)
    assert result.loadB2Condition == expect_b2
    assert 1 <= result.params.coreNum <= args.platform.aic_cores
    assert result.conv3DDxTiling.hf32Flag == int(args.enable_hf32 and args.dtype == "float32")
    blob = result.to_bytes()
    assert len(blob) == 312
    again = tiling.Conv3DBackpropInputV2TilingData.from_bytes(
        blob, **result.model_dump(exclude={"params", "conv3DDxTiling", "tiling_key"}))
    assert again == result and again.to_bytes() == blob
    assert tiling.Conv3DBackpropInputV2TilingData.model_validate_json(result.model_dump_json()) == result


@PROPERTY
@given(problems())
def test_every_tiling_is_legal_small_shapes(problem):
    _check_result(*_tile(problem))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(problems(large=True))
def test_every_tiling_is_legal_large_shapes(problem):
    _check_result(*_tile(problem))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["float16", "bfloat16", "float32"]), st.integers(1, 3), st.integers(1, 4),
       st.integers(2, 9), st.integers(1, 64))
def test_stride_larger_than_kernel(dtype, k, extra, stride, size):
    """H/W strides above the kernel leave dx rows without contribution: initOutputFlag must be set."""
    out = _out(size, k, 1, stride, 0, 0)
    if out < 1 or stride <= k:
        reject()
    problem = dict(dy_shape=(1, 16, 2, out, out), filter_shape=(16, 16 * extra, 2, k, k),
                   dx_shape=(1, 16 * extra, 3, size, size), strides=(1, stride, stride), dtype=dtype)
    args, result = _tile(problem)
    _check_result(args, result)
    assert result.conv3DDxTiling.initOutputFlag == 1


# --- the validator on hand-made illegal tilings -----------------------------------------------------------------

def _good(dtype="bfloat16", platform="Ascend910B2"):
    return tiling.conv3d_backprop_input_tiling((2, 64, 4, 16, 16), (64, 64, 3, 3, 3), (2, 64, 6, 18, 18),
                                               dtype=dtype, platform=platform)


def test_good_tiling_passes_and_report_reads_well():
    report = validate(_good())
    assert report.ok and bool(report) and "fits Ascend910B2" in str(report)


@pytest.mark.parametrize("overrides, field, words", [
    ({"baseM": 1024}, "baseM", "L0A needs"),
    ({"baseN": 1024}, "baseN", "L0B needs"),
    ({"baseM": 256, "baseN": 128, "cl0Pbuffer": 2}, "cl0Pbuffer", "L0C needs"),
    ({"stepKa": 96, "stepKb": 96}, "stepKa", "L1 needs"),
    ({"al1Pbuffer": 3}, "al1Pbuffer", "must be 1 (single buffer) or 2"),
    ({"stepM": 2}, "stepM", "stepM == stepN == 1"),
    ({"kDim": 2}, "kDim", "atomic"),
    ({"coreNum": 25}, "coreNum", "[1, 24]"),
    ({"backpropPadLeft": 300}, "backpropPadLeft", "padList"),
    ({"baseK": 40}, "baseK", "multiple of C0=16"),
    ({"baseM": 24}, "baseM", "multiple of 16"),
    ({"stepKa": 1, "stepKb": 1, "baseK": 48}, "stepKa", "whole kernel windows"),
    ({"singleCoreM": 19}, "singleCoreM", "whole dx rows"),
    ({"hf32Flag": 1}, "hf32Flag", "float32 only"),
    ({"c0": 8}, "c0", "C0=16"),
])
def test_validator_explains_illegal_tilings(overrides, field, words):
    bad = _good().with_overrides(validate=False, **overrides)
    report = validate(bad)
    assert not report.ok
    hits = [p for p in report.problems if p.field == field and words in p.message]
    assert hits, str(report)
    with pytest.raises(TilingValidationError, match=field):
        validate(bad, raise_error=True)
    assert not bad.check() and _good().check()


@pytest.mark.parametrize("name", ["baseM", "baseN", "baseK", "stepM", "stepN", "stepKa", "stepKb"])
def test_validator_reports_a_zero_block_or_step(name):
    """Found by the override property test: baseM=0 crashed the validator with ZeroDivisionError."""
    report = validate(_good().with_overrides(validate=False, **{name: 0}))
    assert [str(p).split(":")[0] for p in report.problems] == [f"{name}=0"], str(report)


def test_validator_fp32_l0b_transpose_reserve():
    good = _good(dtype="float32")
    # 128 x 64 fp32 fits L0B double-buffered only without the extra C0 the fp32 transpose needs.
    bad = good.with_overrides(baseN=128, baseK=64, stepKa=9, stepKb=9, validate=False)
    report = validate(bad)
    assert any(p.field == "baseN" and "fp32 transpose" in p.message for p in report.problems), str(report)


def test_validator_coverage_and_other_platform():
    base = tiling.conv3d_backprop_input_tiling((1, 64, 5, 32, 32), (64, 64, 1, 1, 1), (1, 64, 5, 32, 32),
                                               dtype="float32", platform="Ascend910B2")
    assert base.template.startswith("base") and validate(base).ok
    holes = base.with_overrides(mDim=1, validate=False)
    report = validate(holes)
    assert any("never computed" in p.message or "must equal" in p.message for p in report.problems), str(report)
    small = get_platform("Ascend910B2").with_overrides(name="tiny", aic_cores=4)
    assert not validate(base, small).ok


@pytest.mark.parametrize("changes, field", [
    ({"nDim": 2, "dDim": 1, "singleCoreDin": 5, "coreNum": 8}, "nDim"),   # cin1G = 8 blocks, one core holds 8
    ({"mDim": 5, "dDim": 1, "singleCoreDin": 5, "coreNum": 5}, "mDim"),   # hi*wi = 1024, 4 x 256 cover it
    ({"dDim": 3, "singleCoreDin": 3, "coreNum": 12}, "dDim"),             # di = 5: cores at 0, 3 and 6
])
def test_validator_refuses_cores_that_start_past_the_end(changes, field):
    """Found by the override property test: nDim=5 x singleCoreCin1=6 on cin1G=5 passed the validator and the
    kernel was handed a negative N on four cores (on the device an unsigned tail: writes beyond dx)."""
    base = tiling.conv3d_backprop_input_tiling((1, 64, 5, 32, 32), (64, 64, 1, 1, 1), (1, 64, 5, 32, 32),
                                               dtype="float32", platform="Ascend910B2")
    with pytest.raises(TilingValidationError) as info:
        base.with_overrides(**changes)
    [problem] = info.value.report.problems
    assert str(problem).startswith(f"{field}={changes[field]}: core {changes[field] - 1} of {field} would start at")


def test_validator_checks_the_tiling_key_against_the_fields():
    """The key picks the kernel's A/B loads (loadB2Condition) and driver (useBasicBlock)."""
    good = _good()  # 3x3 kernel, baseK = 48 < hk*wk*C0 = 144: loadB2Condition 0
    assert good.loadB2Condition == 0
    two_windows = dict(baseK=288, stepKa=1, stepKb=1, baseM=32, baseN=32)
    with pytest.raises(TilingValidationError, match=r"loadB2Condition=0: 0 \(baseK/C0 < hk\*wk\) walks one kernel "
                                                     r"window per K step, but baseK=288 exceeds hk\*wk\*C0=144"):
        good.with_overrides(**two_windows)
    assert good.with_overrides(**two_windows, loadB2Condition=1).tiling_key == 513
    with pytest.raises(TilingValidationError, match=r"loadB2Condition=2: must be 0 or 1 for hk\*wk=9"):
        good.with_overrides(loadB2Condition=2)
    grouped = tiling.conv3d_backprop_input_tiling((1, 64, 2, 8, 8), (64, 4, 2, 3, 3), (1, 64, 2, 8, 8),
                                                  pads=(1, 0, 1, 1, 1, 1), groups=16, dtype="float16")
    assert grouped.conv3DDxTiling.group > 1 and not grouped.useBasicBlock
    with pytest.raises(TilingValidationError, match=r"useBasicBlock=1: the basic-block driver has no group loop"):
        grouped.with_overrides(useBasicBlock=True)


def test_generator_overrides_are_validated():
    problem = ((2, 64, 4, 16, 16), (64, 64, 3, 3, 3), (2, 64, 6, 18, 18))
    legal = tiling.conv3d_backprop_input_tiling(*problem, dtype="bfloat16", overrides={"al1Pbuffer": 1})
    assert legal.conv3DDxTiling.al1Pbuffer == 1 and validate(legal).ok
    with pytest.raises(TilingValidationError) as info:
        tiling.conv3d_backprop_input_tiling(*problem, dtype="bfloat16", overrides={"baseM": 2048})
    message = str(info.value)
    assert "baseM=2048" in message and "L0A needs" in message and "Ascend910B2" in message
    assert info.value.tiling.conv3DDxTiling.baseM == 2048 and not info.value.report.ok


@pytest.mark.parametrize("overrides, lines", [
    ({"baseK": 32}, ["stepKa=", "whole kernel windows"]),
    ({"baseM": 1024, "baseN": 256}, ["baseM=1024: L0A needs", "cl0Pbuffer=1: L0C needs", "L1 needs"]),
    ({"al1Pbuffer": 3}, ["al1Pbuffer=3: must be 1 (single buffer) or 2 (double buffer)"]),
    ({"iterateOrder": 2}, ["iterateOrder=2: must be 0 (ORDER_M) or 1 (ORDER_N)"]),
    ({"stepN": 2}, ["stepN=2: the arch22 kernel requires stepM == stepN == 1"]),
])
def test_with_overrides_refuses_an_illegal_tiling(overrides, lines):
    with pytest.raises(TilingValidationError) as info:
        _good().with_overrides(**overrides)
    message = str(info.value)
    changed = ", ".join(f"{k}={v}" for k, v in overrides.items())
    assert message.startswith(f"tiling overrides {changed} make the tiling illegal on Ascend910B2")
    for line in lines:
        assert line in message, message


def test_every_problem_names_its_field_and_value():
    """Each line of a refusal reads field=value: rule, with the value the tiling really holds."""
    bad = _good().with_overrides(baseM=24, baseK=40, stepKa=3, stepKb=2, singleCoreM=19, coreNum=99,
                                 cl0Pbuffer=2, validate=False)
    fields = bad.fields()
    report = validate(bad)
    assert len(report.problems) >= 6
    for problem in report.problems:
        assert str(problem).startswith(f"{problem.field}={fields[problem.field]}: "), str(problem)


@pytest.mark.parametrize("name, suggestion", [
    ("basem", "did you mean 'baseM'?"), ("stepK", "'stepKb' or 'stepKa'"), ("al1pbuffer", "'al1Pbuffer'"),
    ("singleCoreMM", "'singleCoreM'"), ("xyz", "the fields are: batchDim"),
])
def test_unknown_override_lists_close_matches(name, suggestion):
    with pytest.raises(ValueError, match="unknown tiling field") as info:
        _good().with_overrides(**{name: 1})
    assert suggestion in str(info.value)


def test_override_values_must_be_integers():
    with pytest.raises(TypeError, match="baseM=True must be an integer"):
        _good().with_overrides(baseM=True)
    with pytest.raises(TypeError, match="baseM=128.0"):
        _good().with_overrides(baseM=128.0)


def test_model_rejects_values_outside_c_types():
    with pytest.raises(ValueError, match="u32"):
        _good().with_overrides(baseM=-1)
    with pytest.raises(ValueError, match="312"):
        tiling.Conv3DBackpropInputV2TilingData.from_bytes(b"\0" * 100)


# --- bad input ----------------------------------------------------------------------------------------------------

BASE = dict(dy_shape=(2, 32, 4, 16, 16), filter_shape=(32, 16, 3, 3, 3), dx_shape=(2, 16, 6, 18, 18))


@pytest.mark.parametrize("change, error, words", [
    ({"strides": (1, 64, 1)}, ValueError, "stride_h=64"),
    ({"strides": (1, 1, 0)}, ValueError, "stride_w=0"),
    ({"strides": (256, 1, 1)}, ValueError, "stride_d=256"),
    ({"strides": (1, 1)}, ValueError, "strides"),
    ({"strides": (2, 1, 1, 1, 1)}, ValueError, "strides"),
    ({"strides": "111"}, TypeError, "strides"),
    ({"strides": (1.5, 1, 1)}, TypeError, "stride_d"),
    ({"pads": (0, 0, 0, 0, 0, -1)}, ValueError, "pad_right=-1"),
    ({"pads": (256, 0, 0, 0, 0, 0)}, ValueError, "pad_front=256"),
    ({"pads": (0, 0, 0, 0, 0)}, ValueError, "pads"),
    ({"dilations": (1, 0, 1)}, ValueError, "dilation_h=0"),
    ({"dilations": (1, 1, 256)}, ValueError, "dilation_w=256"),
    ({"filter_shape": (32, 16, 3, 512, 3)}, ValueError, "kernel_h=512"),
    ({"filter_shape": (32, 16, 3, 3, 512)}, ValueError, "kernel_w=512"),
    ({"filter_shape": (32, 16, 256, 3, 3)}, ValueError, "kernel_d=256"),
    ({"filter_shape": (32, 0, 3, 3, 3)}, ValueError, "filter_shape[1]"),
    ({"groups": 0}, ValueError, "groups=0"),
    ({"groups": 65536}, ValueError, "groups=65536"),
    ({"groups": 3}, ValueError, "groups=3"),
    ({"groups": 2.0}, TypeError, "groups"),
    ({"groups": True}, TypeError, "groups"),
    ({"dy_shape": (2, 32, 4, 0, 16)}, ValueError, "dy_shape[3] (H)=0"),
    ({"dx_shape": (2, 16, 6, 18, -1)}, ValueError, "dx_shape[4] (W)=-1"),
    ({"dy_shape": 5}, TypeError, "dy_shape"),
    ({"dy_shape": (2, 32, 4, 15, 16)}, ValueError, "dy_shape[3] (H)=15"),
    ({"dx_shape": (3, 16, 6, 18, 18)}, ValueError, "dx_shape[0] (N)=3"),
    ({"filter_shape": (31, 16, 3, 3, 3)}, ValueError, "filter_shape[0] (Cout)=31"),
    ({"dtype": "int8"}, ValueError, "dtype='int8'"),
    ({"dtype": "float64"}, ValueError, "dtype"),
    ({"dtype": 5}, TypeError, "dtype"),
    ({"platform": "Ascend999"}, ValueError, "platform='Ascend999'"),
    ({"platform": 3}, TypeError, "platform"),
    ({"enable_hf32": "yes"}, TypeError, "enable_hf32"),
    ({"enable_hf32": True}, ValueError,
     "enable_hf32=True with dtype='float16': HF32 applies to float32 only"),
    ({"enable_hf32": True, "dtype": "bfloat16"}, ValueError,
     "enable_hf32=True with dtype='bfloat16': HF32 applies to float32 only"),
])
def test_bad_input_names_the_parameter(change, error, words):
    with pytest.raises(error) as info:
        tiling.conv3d_backprop_input_tiling(**{**BASE, **change})
    assert words in str(info.value)


@pytest.mark.parametrize("problem, words", [
    (dict(dy_shape=(1, 16, 2, 8, 8), filter_shape=(16, 16, 2, 1, 1), dx_shape=(1, 16, 6, 8, 8), strides=(3, 1, 1)),
     "stride_d"),
    (dict(dy_shape=(1, 16, 1, 10, 8), filter_shape=(16, 16, 1, 1, 1), dx_shape=(1, 16, 1, 8, 8),
          pads=(0, 0, 1, 1, 0, 0)), "pad_top"),
    (dict(dy_shape=(1, 16, 1, 1, 8), filter_shape=(16, 16, 1, 300, 1), dx_shape=(1, 16, 1, 300, 8)),
     "backprop pad top"),
    (dict(dy_shape=(1, 16, 1, 2, 5000), filter_shape=(16, 16, 1, 1, 1), dx_shape=(1, 16, 1, 2, 5000)),
     "W"),
    (dict(dy_shape=(1, 1, 1, 255, 255), filter_shape=(1, 1, 2, 2, 2), dx_shape=(1, 1, 2, 510, 510),
          dilations=(1, 255, 255)), "smallest L1 load"),
])
def test_bad_input_kernel_limits(problem, words):
    with pytest.raises(ValueError) as info:
        tiling.conv3d_backprop_input_tiling(**problem)
    assert words in str(info.value)


def test_messages_name_value_and_range():
    with pytest.raises(ValueError) as info:
        tiling.conv3d_backprop_input_tiling(**{**BASE, "strides": (1, 64, 1)})
    assert "[1, 63]" in str(info.value)


def test_dilation_ignored_where_kernel_is_one():
    """ReCalDilation: a size-1 kernel axis has dilation 1 in the tiling whatever was asked."""
    result = tiling.conv3d_backprop_input_tiling((1, 16, 4, 8, 8), (16, 16, 1, 1, 1), (1, 16, 4, 8, 8),
                                                 dilations=(3, 4, 5))
    t = result.conv3DDxTiling
    assert (t.dilationD, t.dilationH, t.dilationW) == (1, 1, 1) and math.prod((t.dk, t.hk, t.wk)) == 1


# --- command line -------------------------------------------------------------------------------------------------

CLI_ARGS = ["--cin", "17", "--cout", "15", "--dhw", "20,60,60", "--kernel", "2,2,2", "--stride", "2,2,2",
            "--pad", "0,0,0,0,0,0", "--dtype", "bfloat16", "--platform", "Ascend910B3"]


def test_cli_table_and_json(capsys):
    import json

    from frontends.cli import main as ascend_sim

    def main(argv):
        return ascend_sim(["tiling", "conv3d-dx", *argv])
    assert main(CLI_ARGS) == 0
    table = capsys.readouterr().out
    assert "tiling_key=513" in table and "singleCoreM = 3600" in table and "the tiling fits" in table
    assert main([*CLI_ARGS, "--json"]) == 0
    tiling = json.loads(capsys.readouterr().out)["launches"][0]["tiling"]
    assert tiling["tiling_key"] == 513 and tiling["conv3DDxTiling"]["baseM"] == 256


def test_cli_overrides_and_errors(capsys):
    from frontends.cli import main as ascend_sim

    def main(argv):
        return ascend_sim(["tiling", "conv3d-dx", *argv])
    assert main([*CLI_ARGS, "--set", "baseM=2048"]) == 1  # the tiling is printed with the report of what broke
    assert "baseM=2048: L0A needs" in capsys.readouterr().out
    assert main([*CLI_ARGS[:-2], "--platform", "nope"]) == 2
    assert "argument --platform: 'nope'" in capsys.readouterr().err
    assert ascend_sim(["tiling", *CLI_ARGS]) == 2  # the old spelling: a one-line hint to name the operator
    assert "name the operator first" in capsys.readouterr().err
