"""The Conv3DV2 API tiling against the A2 cases of the real unit tests (tests/data/conv3d_v2_tiling_vectors_a2.json).

Each `api_single_core` vector is set up as its test in test_conv3d_api_tiling.cpp does (SetOrgFmapShape ...
SetSingleOutputShapeInTest, SetType) and must end as the test asserts: ret -1 (ApiTilingError) or ret 0 with
TestTilingResult's properties. Those tests assert no field values, so neither does this file; the fields are checked
against the kernel's rules elsewhere.

Covered: all 262 GetTiling cases, M mode (NDC1HWC0, outputOrder M), HW mode (outputOrder HW) and pointwise (NCDHW
fmap); nothing is left out.
"""
import json

import pytest
from paths import DATA_DIR

from tiling.conv3d_v2.api_base import ApiTilingError, Conv3dTiling

DATA = json.loads((DATA_DIR / "conv3d_v2_tiling_vectors_a2.json").read_text())
PLATFORM = DATA["api_platform"]
API = [v for v in DATA["vectors"] if v["kind"] == "api_single_core"]
POINTWISE = [v for v in API if v["formats"]["fmap"] == "NCDHW"]
HW_MODE = [v for v in API if v["output_order"] == "HW" and v not in POINTWISE]
M_MODE = [v for v in API if v not in POINTWISE and v not in HW_MODE]


def run_api_case(v: dict):
    """The UT's set-up, call by call; returns the tiling object after GetTiling."""
    t = Conv3dTiling(PLATFORM)
    t.SetOrgFmapShape(*v["fmap_CiDiHiWi"])
    t.SetOrgWeightShape(*v["weight_CoKdKhKw"])
    if v["single_weight"] is not None:
        t.SetSingleWeightShape(t.shapeInfo.orgCi, *v["single_weight"])
    t.SetPadding(v["pads"])
    d, h, w = v["dilations_DHW"]
    t.SetDilation(h, w, d)
    d, h, w = v["strides_DHW"]
    t.SetStride(h, w, d)
    # SetSingleOutputShapeInTest / ...HwModeInTest: the whole output on one core, groups 1.
    s, a = t.shapeInfo, t.attrInfo
    ho = (s.orgHi + a.padTop + a.padBottom - a.dilationH * (s.orgkH - 1) - 1) // a.strideH + 1
    wo = (s.orgWi + a.padLeft + a.padRight - a.dilationW * (s.orgkW - 1) - 1) // a.strideW + 1
    do = (s.orgDi + a.padHead + a.padTail - a.dilationD * (s.orgkD - 1) - 1) // a.strideD + 1
    if v["output_order"] == "HW":
        t.SetSingleOutputShape(s.orgCo, do, ho, wo)
        t.SetOutputOrder(1)
    else:
        t.SetSingleOutputShape(s.orgCo, do, ho * wo)
    t.SetGroups(v["groups"])
    t.SetOptGroupInfo(v.get("group_opt", 1), 1, s.orgCi, s.orgCo)
    t.hasBias = v["has_bias"]
    t.SetWeightType(v["formats"]["weight"], v["dtype"])
    t.SetFmapType(v["formats"]["fmap"], v["dtype"])
    t.SetOutputType(v["formats"]["output"], v["dtype"])
    if t.hasBias:
        t.SetBiasType("ND", "float32")
    t.GetTiling()
    return t


def check_test_tiling_result(t) -> None:
    """TestTilingResult (test_conv3d_api_tiling.cpp), assertion by assertion."""
    l1, l0, cube = t.l1TilingInfo, t.l0TilingInfo, t.cubeInfo
    assert l1.kAL1 != 0
    if l1.isWeightBypass:
        assert l1.kBL1 == 0 and l1.nBL1Value == 0
    else:
        assert l1.kBL1 != 0 and l1.nBL1Value != 0
        assert l1.nBL1Value % l0.nL0 == 0 or l1.nBL1Value % cube.n0 == 0
    assert l1.mAL1Value != 0
    assert l1.mAL1Value % l0.mL0 == 0 or l1.mAL1Value % cube.m0 == 0
    assert l0.mL0 != 0 and l0.mL0 % cube.m0 == 0
    assert l0.kL0 != 0 and l0.kL0 % cube.k0 == 0
    assert l0.nL0 != 0 and l0.nL0 % cube.n0 == 0


def test_vector_counts():
    # 262 GetTiling cases in the UT file: 196 M-mode, 9 HW-mode, 57 pointwise (NCDHW fmap).
    assert (len(API), len(M_MODE), len(HW_MODE), len(POINTWISE)) == (262, 196, 9, 57)
    assert sum(v["expect"]["ret"] == -1 for v in M_MODE) == 3
    assert sum(v["expect"]["ret"] == -1 for v in POINTWISE) == 7
    assert all(v["expect"]["ret"] == 0 for v in HW_MODE)


@pytest.mark.parametrize("v", API, ids=[v["test"] for v in API])
def test_api_case(v):
    if v["expect"]["ret"] == -1:
        with pytest.raises(ApiTilingError):
            run_api_case(v)
    else:
        check_test_tiling_result(run_api_case(v))


INNER = [v for v in DATA["vectors"] if v["kind"] in ("l0_range", "l0_decision", "l0_tiling")]


@pytest.mark.parametrize("v", INNER, ids=[v["test"] for v in INNER])
def test_inner_l0_case(v):
    """The tests that drive Conv3dTilingAlgorithm's L0 steps directly, with the values they assert."""
    from tiling.conv3d_v2.api_algorithm import Conv3dTilingAlgorithm
    t = Conv3dTiling(PLATFORM)
    t.SetWeightType("NCDHW", v["dtype"])
    t.SetFmapType(v["fmap_format"], v["dtype"])
    t.SetBiasType("ND", v["dtype"])  # these tests give the bias the fmap's dtype
    t.GetCubeInfo()
    algo = Conv3dTilingAlgorithm(t)
    for key, value in v["inputs"].items():
        group, name = key.split(".")
        setattr(getattr(t, group), name, value)
    algo.InitPingPong()
    if "pbAL1" in v:
        assert algo.doubleBufferValue.pbAL1 == v["pbAL1"]
    if v["kind"] == "l0_tiling":
        algo.GetL0Tiling()  # the real one returns 0 (VALID_VALUE) unconditionally; it must not raise
        return
    algo.GetL0TilingRange()
    if v["kind"] == "l0_range":
        assert algo.l0TilingRange.mL0Range == v["mL0Range"]
        assert algo.l0TilingRange.nL0Range == v["nL0Range"]
    else:
        algo.L0TilingDecision()
        assert algo.l0TilingParams.mL0 in v["mL0_in"]
        assert algo.l0TilingParams.nL0 in v["nL0_in"]


def test_inner_case_count():
    assert sorted(v["kind"] for v in INNER) == ["l0_decision"] * 3 + ["l0_range"] * 2 + ["l0_tiling"]
