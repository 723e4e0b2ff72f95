"""The arch35 (Ascend 950) Conv3DBackpropInputV2 tiling against the real UT vectors, its refusals and its limits.

Vectors: tests/data/conv3d_dx_tiling_vectors_arch35.json (see data/README.md), the real generator's output for 32
cases of hicann/ops-nn's arch35 UT, compared field by field with the tiling key and block_dim.
"""
from __future__ import annotations

import json
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import DATA_DIR
from pydantic import ValidationError

from ascend_sim.machine.platform import get_platform
from tiling import TilingInfeasible
from tiling.conv3d_backprop_input.arch35 import BLOB_SIZE, FIELDS, conv3d_backprop_input_tiling_arch35

DATA = DATA_DIR
VECTORS = json.loads((DATA / "conv3d_dx_tiling_vectors_arch35.json").read_text())["vectors"]


def ut_platform():
    """The platform the real UT compiled with (COMPILE_INFO_STR_950). [switch to Ascend950PR_9589 once that
    preset exists: it then only needs UB=245760]"""
    return get_platform("Ascend950PR_9599").with_overrides(
        aic_cores=32, aiv_cores=64, clock_mhz=1650, UB=245760, L1=524288, L0A=65536, L0B=65536, L0C=262144,
        BT=4096)


PLATFORM = ut_platform()


def _generate(vector: dict):
    fmt = vector["formats"]
    return conv3d_backprop_input_tiling_arch35(
        vector["dy_shape"]["ori"], vector["filter_shape"]["ori"], vector["dx_shape"]["ori"], vector["strides"],
        vector["pads"], vector["dilations"], vector["groups"], vector["dtype"], PLATFORM, vector["enable_hf32"],
        data_format=fmt["dy_ori"], filter_format=fmt["filter_ori"])


def test_the_vectors_are_the_ut_platform_and_formats():
    for vector in VECTORS:
        hw = vector["hardware_info"]
        assert (hw["CORE_NUM"], hw["UB_SIZE"], hw["L1_SIZE"], hw["L0A_SIZE"], hw["L0C_SIZE"], hw["BT_SIZE"]) == (
            PLATFORM.aic_cores, PLATFORM.UB, PLATFORM.L1, PLATFORM.L0A, PLATFORM.L0C, PLATFORM.BT)
        fmt = vector["formats"]
        assert fmt["dy_ori"] == fmt["dy_storage"] == fmt["dx_ori"] == fmt["data_format_attr"]
        assert fmt["filter_ori"] == fmt["filter_storage"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_real_vector_field_by_field(vector):
    got = _generate(vector)
    expected = vector["tiling"]
    diffs = {name: (getattr(got, name), expected[name]) for name, _ in FIELDS if getattr(got, name) != expected[name]}
    assert not diffs, f"{got.template}: (got, expected) {diffs}"
    assert got.tiling_key == vector["tiling_key"]
    assert got.key_fields == {k: v for k, v in vector["tiling_key_decoded"].items() if k != "_rest"}
    assert got.block_dim == vector["block_dim"]


def test_every_field_of_the_vectors_is_in_the_struct():
    names = [name for name, _ in FIELDS]
    assert len(names) == 88
    for vector in VECTORS:
        assert list(vector["tiling"]) == names  # the UT prints them in declaration order


def test_blob_layout_matches_the_c_struct():
    """Offsets by the C rules (natural alignment), written out by hand: u32 x6, u64, u8 x16, u32 x29, i32 x5,
    u32 x13, hole, u64 x6, bool x2, i8, hole, u32 x6, hole, u64 x2, u8, reserved[8], tail pad."""
    got = _generate(VECTORS[0])
    blob = got.to_bytes()
    assert len(blob) == BLOB_SIZE == 352
    assert struct.unpack_from("<Q", blob, 24)[0] == got.coreNum
    assert blob[32] == got.al0Pbuffer and blob[47] == got.quantMode
    assert struct.unpack_from("<I", blob, 48)[0] == got.batch
    assert struct.unpack_from("<i", blob, 164)[0] == got.backpropPadTail
    assert struct.unpack_from("<I", blob, 232)[0] == got.singleIterateDk
    assert struct.unpack_from("<Q", blob, 240)[0] == got.singleCoreBatch
    assert struct.unpack_from("<Q", blob, 248)[0] == got.singleCoreM
    assert blob[288] == got.enableSplitK and struct.unpack_from("<b", blob, 290)[0] == got.offsetX
    assert struct.unpack_from("<I", blob, 292)[0] == got.kSCoutFullLoad
    assert struct.unpack_from("<I", blob, 312)[0] == got.woExpand
    assert struct.unpack_from("<Q", blob, 320)[0] == got.dkHkWk
    assert struct.unpack_from("<Q", blob, 328)[0] == got.hkWk
    assert blob[336] == got.fixedShiftVal
    assert blob[337:352] == bytes(15) and blob[236:240] == bytes(4) and blob[291] == 0


def test_hifloat8_vector_rules():
    """The one 8-bit UT case: c0 32 along K (c0Bits 5), cin1 by 32 but cin1G by 16, no enlarge, REVERSE_ONLY,
    vector pre-transpose with its weight workspace."""
    vector = next(v for v in VECTORS if v["dtype"] == "hifloat8")
    got = _generate(vector)
    assert (got.c0, got.c0BitsA, got.c0BitsB, got.enlarge) == (32, 5, 5, 1)
    assert (got.cin, got.cin1, got.cin1G) == (479, 15, 30)
    assert got.key_fields["loadB2Condition"] == 2 and got.enableVecTrans == 1
    cout, kd, kh, kw, cin_aligned = 20, 1, 4, 3, 480
    assert got.workspace_size == 16 * 1024 * 1024 + cout * kd * kh * kw * cin_aligned * 1


@pytest.mark.parametrize("dtype", ["hifloat8", "float8_e4m3fn"])
@pytest.mark.parametrize("data_format, filter_format", [("NDHWC", "NCDHW"), ("NCDHW", "NDHWC"),
                                                        ("NCDHW", "DHWCN")])
def test_8bit_needs_all_ncdhw(dtype, data_format, filter_format):
    dy, wt, dx = (1, 16, 1, 8, 8), (16, 16, 1, 3, 3), (1, 16, 1, 10, 10)
    reorder = {"NCDHW": lambda s: s, "NDHWC": lambda s: (s[0], *s[2:], s[1]),
               "DHWCN": lambda s: (*s[2:], s[1], s[0])}
    with pytest.raises(ValueError, match=rf"dtype='{dtype}' needs out_backprop, filter and y in NCDHW"):
        conv3d_backprop_input_tiling_arch35(reorder[data_format](dy), reorder[filter_format](wt),
                                            reorder[data_format](dx), dtype=dtype, platform=PLATFORM,
                                            data_format=data_format, filter_format=filter_format)


def test_float8_e4m3fn_tiles_like_hifloat8():
    """Both 8-bit types take the same branches (byte size 1): same tiling for the same problem."""
    args = ((2, 64, 4, 20, 20), (64, 48, 3, 3, 3), (2, 48, 6, 22, 22))
    hif8 = conv3d_backprop_input_tiling_arch35(*args, dtype="hifloat8", platform=PLATFORM)
    fp8 = conv3d_backprop_input_tiling_arch35(*args, dtype="float8_e4m3fn", platform=PLATFORM)
    assert hif8.fields() == fp8.fields() and hif8.tiling_key == fp8.tiling_key
    assert (fp8.c0, fp8.enlarge, fp8.key_fields["loadB2Condition"]) == (32, 1, 2)


# The UT's six negative cases (tests/ut/op_host/test_conv3d_backprop_input_v2_arch35_tiling.cpp), each refused by
# name: (case, arguments, the parameter the message must name).
NEGATIVE = [
    ("conv3d_dx_22_soc_version_invalid",
     dict(dy_shape=(1, 1152, 120, 8, 8), filter_shape=(1152, 4, 1, 2, 2), dx_shape=(1, 4, 120, 16, 16),
          strides=(1, 1, 1, 2, 2), dtype="bfloat16", platform="Ascend910B2"), r"npu_arch=2201.*allows npu_arch 3510"),
    ("conv3d_dx_filter_c_shape_zero_failed",
     dict(dy_shape=(1, 257, 1, 89, 63), filter_shape=(1, 0, 4, 1, 1), dx_shape=(1, 257, 4, 1, 1),
          strides=(1, 1, 1, 1, 1), pads=(0, 0, 44, 44, 31, 31), dilations=(1, 1, 29, 1, 1), dtype="bfloat16"),
     r"filter_shape\[1\] \(C\)=0 is outside the allowed range \[1, 2147483647\]"),
    ("conv3d_dx_dtype_unsupported_int32",
     dict(dy_shape=(8, 64, 20, 64, 64), filter_shape=(64, 64, 3, 3, 3), dx_shape=(8, 64, 22, 66, 66),
          dtype="int32"), r"dtype='int32' is not supported"),
    ("conv3d_dx_dilation_w_invalid",
     dict(dy_shape=(8, 64, 20, 64, 64), filter_shape=(64, 64, 3, 3, 3), dx_shape=(8, 64, 22, 66, 66),
          dilations=(1, 1, 1, 1, 0), dtype="bfloat16"), r"dilation_w=0 is outside the allowed range \[1, 2147483647\]"),
    ("conv3d_dx_filter_channel_not_divisible_y_channel",
     dict(dy_shape=(1, 7, 5, 5, 5), filter_shape=(3, 3, 3, 3, 3), dx_shape=(1, 7, 7, 7, 7), dtype="bfloat16"),
     r"filter_shape C \(Cin/groups\)=3 must divide dx_shape C=7"),
    ("conv3d_dx_out_backprop_shape_dim_invalid",
     dict(dy_shape=(1, 64, 5, 5), filter_shape=(64, 64, 3, 3, 3), dx_shape=(1, 64, 7, 7, 7), dtype="bfloat16"),
     r"dy_shape=\(1, 64, 5, 5\) has 4 dims; allowed: 5"),
]


@pytest.mark.parametrize("case, kwargs, message", NEGATIVE, ids=[n[0] for n in NEGATIVE])
def test_ut_negative_cases_are_refused_by_name(case, kwargs, message):
    kwargs = {"platform": PLATFORM, **kwargs}
    with pytest.raises(ValueError, match=message):
        conv3d_backprop_input_tiling_arch35(**kwargs)


def test_arch35_limits_are_wider_than_a2():
    """strides, pads and dilations up to 2^31-1 and stride_d > kernel_d are legal on the 950 (A2 refuses them)."""
    got = conv3d_backprop_input_tiling_arch35((1, 16, 2, 4, 4), (16, 16, 1, 2, 2), (1, 16, 5, 8, 8),
                                              strides=(3, 2, 2), dtype="float16", platform=PLATFORM)
    assert got.strideD == 3 and got.initOutputFlag == 1  # dx planes no dy plane reaches are cleared first
    with pytest.raises(ValueError, match=r"groups=70000 is outside the allowed range \[1, 65535\]"):
        conv3d_backprop_input_tiling_arch35((1, 70000, 1, 1, 1), (70000, 1, 1, 1, 1), (1, 70000, 1, 1, 1),
                                            groups=70000, dtype="float16", platform=PLATFORM)


# ---------------------------------------------------------------- property test over legal problems
LEGAL_KEYS = {"loadB2Condition": range(4), "kernelSplitMode": range(3), "groupConvMode": range(2),
              "isBasicBlockTiling": (1,), "loadB1Condition": range(5)}
DTYPE_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "hifloat8": 1, "float8_e4m3fn": 1}


@st.composite
def problems(draw):
    dtype = draw(st.sampled_from(sorted(DTYPE_BYTES)))
    eight_bit = DTYPE_BYTES[dtype] == 1
    data_format = "NCDHW" if eight_bit else draw(st.sampled_from(["NCDHW", "NDHWC"]))
    filter_format = "NCDHW" if eight_bit else draw(st.sampled_from(["NCDHW", "NDHWC", "DHWCN"]))
    groups = draw(st.sampled_from([1, 1, 1, 2, 4]))
    cin = groups * draw(st.integers(1, 48))
    cout = groups * draw(st.integers(1, 48))
    n = draw(st.integers(1, 3))
    kernel, stride, dil, pads, dx_dhw, dy_dhw = [], [], [], [], [], []
    for axis in range(3):
        k = draw(st.integers(1, 3 if axis == 0 else 6))
        s = draw(st.integers(1, 3))
        d = draw(st.integers(1, 2))
        p0, p1 = draw(st.integers(0, 2)), draw(st.integers(0, 2))
        size = draw(st.integers(1, 6 if axis == 0 else 48))
        span = (k - 1) * d + 1
        if size + p0 + p1 < span:
            size = span
        kernel.append(k)
        stride.append(s)
        dil.append(d)
        pads += [p0, p1]
        dx_dhw.append(size)
        dy_dhw.append((size + p0 + p1 - span) // s + 1)
    order = {"NCDHW": lambda s: s, "NDHWC": lambda s: (s[0], *s[2:], s[1]), "DHWCN": lambda s: (*s[2:], s[1], s[0])}
    return dict(dy_shape=order[data_format]((n, cout, *dy_dhw)),
                filter_shape=order[filter_format]((cout, cin // groups, *kernel)),
                dx_shape=order[data_format]((n, cin, *dx_dhw)), strides=tuple(stride), pads=tuple(pads),
                dilations=tuple(dil), groups=groups, dtype=dtype, enable_hf32=dtype == "float32" and draw(
                    st.booleans()), data_format=data_format, filter_format=filter_format)


def _check_capacities(t, problem):
    """L0A/L0B/L0C exactly, L1 by a lower bound of what the blocks need, computed here from the fields."""
    nbytes = DTYPE_BYTES[problem["dtype"]]
    assert t.baseM % 16 == 0 and t.baseN % 16 == 0 and t.baseK % t.c0 == 0
    assert t.c0 * nbytes == 32
    assert t.baseM * t.baseK * nbytes * t.al0Pbuffer <= PLATFORM.L0A
    assert t.baseN * t.baseK * nbytes * t.bl0Pbuffer <= PLATFORM.L0B
    assert t.baseM * t.baseN * 4 * t.cl0Pbuffer <= PLATFORM.L0C
    b1 = t.baseN * t.stepKb * t.baseK * nbytes * t.bl1Pbuffer
    a1_min = 16 * t.c0 * nbytes * t.al1Pbuffer  # at least one 16-pixel C0 slice of dy per buffer
    keys = t.key_fields
    if keys["loadB1Condition"] == 0 and keys["kernelSplitMode"] == 0:
        # whole kernel taps in L1: baseM dx pixels need ceil(baseM / wi) dx rows, so that many plus the dilated
        # kernel height minus one stride-expanded dy rows (at most all of them), for the Cout channels of one
        # A1 load (stepKa * baseK K elements over Hk * Wk taps)
        rows = min(-(-t.baseM // t.wi) + t.khDilation - 1, t.hoExpand)
        channels = max(t.stepKa * t.baseK // (t.hk * t.wk), 1)
        a1_min = rows * t.woExpand * channels * nbytes * t.al1Pbuffer
    assert b1 + a1_min <= PLATFORM.L1
    assert t.baseM // t.c0 <= 65535  # PostTiling: Load3D dstStride


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_capacity_checks_hold_on_the_real_vectors(vector):
    """The property test's independent capacity rules accept what the real generator produced."""
    _check_capacities(_generate(vector), {"dtype": vector["dtype"]})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_property_legal_or_refused(problem):
    try:
        t = conv3d_backprop_input_tiling_arch35(platform=PLATFORM, **problem)
    except ValidationError:  # a struct field outside its C type is a generator bug, not a refusal
        raise
    except (TilingInfeasible, ValueError):
        return
    for name, allowed in LEGAL_KEYS.items():
        assert t.key_fields[name] in allowed
    assert 1 <= t.block_dim == t.coreNum <= PLATFORM.aic_cores
    assert t.stepKa >= 1 and t.stepKb >= 1
    assert t.workspace_size >= 16 * 1024 * 1024
    assert len(t.to_bytes()) == BLOB_SIZE
    _check_capacities(t, problem)
    assert t.check().ok, str(t.check())  # the arch35 validator accepts what the generator makes
    if DTYPE_BYTES[problem["dtype"]] == 1:
        assert t.enlarge == 1 and t.key_fields["loadB2Condition"] == 2 and t.c0 == 32
