"""Extract the A2 (arch22) Conv3DV2 tiling cases of hicann/ops-nn's unit tests into conv3d_v2_tiling_vectors_a2.json.

Usage: python tests/data/extract_conv3d_v2_vectors.py <ops-nn git dir> [commit]  (writes next to this script)

Only what a test asserts is recorded. Two A2 files state expectations on tiling results:
- test_conv3d_api_tiling.cpp (the Conv3D API tiling on A2 buffer sizes, one core's whole problem): each GetTiling
  case becomes a vector with its shapes, attributes, dtype, formats and the asserted outcome, either "ok" (ret 0 plus
  TestTilingResult's checks, recorded as the list of properties it asserts) or "fail" (ret -1). The few tests of
  inner steps (L0 ranges) become "l0_range" / "l0_decision" / "l0_tiling" vectors with the values they assert.
- test_conv3d_v2_tiling.cpp: the ComputeNumBlocks cases (Ascend910B, opInfo.aicoreNum) with the expected
  NumBlocksRes.
A test whose body uses a statement this script does not understand is listed under "not_extracted" with the reason;
nothing is guessed. The other UT files are arch35 (NpuArch 3510 / Ascend950), fully commented out, or test attribute
parsing only; they are listed under "files_skipped".
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

UT_DIR = "conv/conv3d_v2/tests/ut/op_tiling/"
API_FILE = UT_DIR + "test_conv3d_api_tiling.cpp"
RUNTIME_FILE = UT_DIR + "test_conv3d_v2_tiling.cpp"
DTYPES = {"BF16": "bfloat16", "FLOAT16": "float16", "FLOAT32": "float32", "INT8": "int8"}
FILES_SKIPPED = {
    UT_DIR + "test_conv3d_v2_ascendc_check_attrs_tiling.cpp": "arch35: platform NpuArch 3510",
    UT_DIR + "test_conv3d_v2_ascendc_check_input_tiling.cpp": "arch35: platform NpuArch 3510 (tests made by CONV3D_INPUT_* macros)",
    UT_DIR + "test_conv3d_v2_ascendc_check_limits_tiling.cpp": "arch35: platform NpuArch 3510",
    UT_DIR + "test_conv3d_v2_ascendc_pipeline_extra_tiling.cpp": "arch35: platform NpuArch 3510",
    UT_DIR + "test_conv3d_v2_ascendc_repo_tiling.cpp": "arch35 (Ascend950PR_9589); asserts success of a repo lookup",
    UT_DIR + "test_conv3d_v2_ascendc_tiling.cpp": "entirely commented out",
    UT_DIR + "test_conv3d_engine_tiling.cpp": "every test is commented out",
    UT_DIR + "test_conv3d_v2_apt_api_tiling.cpp": "arch35 API tiling (includes op_tiling/arch35/conv3d_v2_api_tiling.h)",
    UT_DIR + "test_conv3d_v2_tuning_tiling.cpp": "asserts the parsing of AOE tuning arguments, no tiling result",
}
# The checks TestTilingResult makes on a successful GetTiling (test_conv3d_api_tiling.cpp).
OK_PROPERTIES = [
    "ret == 0", "kAL1 != 0", "weight bypass: kBL1 == 0 and nBL1Value == 0; else kBL1 != 0, nBL1Value != 0 and "
    "(nBL1Value % nL0 == 0 or nBL1Value % n0 == 0)", "mAL1Value != 0 and (mAL1Value % mL0 == 0 or mAL1Value % m0 == 0)",
    "mL0 != 0, mL0 % m0 == 0", "kL0 != 0, kL0 % k0 == 0", "nL0 != 0, nL0 % n0 == 0",
]


def _ints(text: str) -> list[int]:
    return [int(eval(x.strip().replace("UINT64_MAX", str(2**64 - 1)).replace("/", "//"), {}))  # noqa: S307
            for x in text.split(",")]


def _tests(source: str, fixture: str) -> list[tuple[str, str]]:
    parts = re.split(rf"\nTEST_F\({fixture}, (\w+)\)\n", source)
    return [(name, body.split("\n}\n")[0]) for name, body in zip(parts[1::2], parts[2::2])]


def _api_platform(source: str) -> dict:
    consts = dict(re.findall(r"constexpr uint32_t (\w+_SIZE) = (\d+);", source))
    return {k: int(v) for k, v in consts.items()}


def _api_case(name: str, body: str) -> dict:
    """One GetTiling test, statement by statement; ValueError for anything not understood."""
    case = {"groups": 1, "has_bias": False, "output_order": "M", "single_weight": None}
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line in ("{", "}") or line.startswith(("//", "Ops::NN::Conv3dV2::TConv3DTiling tilingData",
                                                              "Conv3dApiTiling::Conv3dTiling testTiling(platform)")):
            continue
        if m := re.fullmatch(r"testTiling\.SetOrgFmapShape\((.*)\);", line):
            case["fmap_CiDiHiWi"] = _ints(m[1])
        elif m := re.fullmatch(r"testTiling\.SetOrgWeightShape\((.*)\);", line):
            case["weight_CoKdKhKw"] = _ints(m[1])
        elif m := re.fullmatch(r"testTiling\.SetSingleWeightShape\(testTiling\.shapeInfo\.orgCi, (.*)\);", line):
            case["single_weight"] = _ints(m[1])
        elif m := re.fullmatch(r"std::vector<int64_t> padList = \{(.*)\};", line):
            case["pads"] = _ints(m[1])
        elif line == "testTiling.SetPadding(padList);":
            pass
        elif m := re.fullmatch(r"testTiling\.SetDilation\((.*)\);", line):
            h, w, d = _ints(m[1])
            case["dilations_DHW"] = [d, h, w]
        elif m := re.fullmatch(r"testTiling\.SetStride\((.*)\);", line):
            h, w, d = _ints(m[1])
            case["strides_DHW"] = [d, h, w]
        elif line == "SetInputPointWise(testTiling);":
            case.update(single_weight=[1, 1, 1], pads=[0] * 6, dilations_DHW=[1, 1, 1], strides_DHW=[1, 1, 1])
        elif line == "SetSingleOutputShapeInTest(testTiling);":
            case["output_order"] = "M"
        elif line == "SetSingleOutputShapeHwModeInTest(testTiling);":
            case["output_order"] = "HW"  # the helper also sets the single weight to the whole kernel
        elif m := re.fullmatch(r"testTiling\.hasBias = (\w+);", line):
            case["has_bias"] = {"0": False, "1": True, "true": True, "false": False}[m[1]]
        elif line == "SetType(testTiling);":
            case["formats"] = {"fmap": "NDC1HWC0", "weight": "FRACTAL_Z_3D", "output": "NDC1HWC0"}
            case["dtype"] = "bfloat16"
        elif m := re.fullmatch(r"SetTypePointWise\(testTiling(?:, ConvDtype::(\w+))?\);", line):
            case["formats"] = {"fmap": "NCDHW", "weight": "NCDHW", "output": "NCDHW"}
            case["dtype"] = DTYPES[m[1] or "BF16"]
        elif m := re.fullmatch(r"testTiling\.Set(Weight|Fmap|Output)Type\(TPosition::GM, ConvFormat::(\w+), "
                               r"ConvDtype::(\w+)\);", line):
            case.setdefault("formats", {})[m[1].lower()] = m[2]
            case["dtype"] = DTYPES[m[3]]
        elif re.fullmatch(r"(if \(testTiling\.hasBias\) \{|testTiling\.SetBiasType\(TPosition::GM, ConvFormat::ND, "
                          r"ConvDtype::FLOAT32\);)", line):
            pass  # bias is fp32 ND in every test
        elif line == "int64_t ret1 = testTiling.GetTiling(tilingData);":
            pass
        elif line == "TestTilingResult(ret1, testTiling);":
            case["expect"] = {"ret": 0, "asserts": "TestTilingResult"}
        elif line == "EXPECT_EQ(ret1, -1);":
            case["expect"] = {"ret": -1}
        else:
            raise ValueError(f"statement not understood: {line}")
    for key in ("fmap_CiDiHiWi", "weight_CoKdKhKw", "pads", "strides_DHW", "dilations_DHW", "dtype", "expect"):
        if key not in case:
            raise ValueError(f"no {key}")
    if case["output_order"] == "HW":
        case["single_weight"] = case["weight_CoKdKhKw"][1:]
    # single_weight: the (kD, kH, kW) of SetSingleWeightShape(orgCi, ...); null when the test never calls it.
    return case


def _grouped_pointwise_case(name: str, body: str) -> dict:
    """PointWise_Groups_negative*: the output shape inline, then SetGroups(n) with groupOpt 1 -> ret -1."""
    head, _, tail = body.partition("int64_t orgHo")
    groups = re.search(r"testTiling\.SetGroups\((\d+)\);", tail)
    if not groups or "EXPECT_EQ(ret1, -1);" not in tail or "testTiling.attrInfo.groupOpt = 1;" not in tail:
        raise ValueError("grouped case of an unknown form")
    if "SetTypePointWise(testTiling);" not in tail:
        raise ValueError("grouped case without SetTypePointWise")
    bias = "testTiling.hasBias = 1;" if "testTiling.hasBias = 1;" in tail else "testTiling.hasBias = 0;"
    case = _api_case(name, head + f"\n{bias}\nSetTypePointWise(testTiling);\n"
                     "int64_t ret1 = testTiling.GetTiling(tilingData);\nEXPECT_EQ(ret1, -1);")
    case.update(groups=int(groups[1]), group_opt=1)
    return case


def _inner_case(name: str, body: str) -> dict:
    """The L0 range / decision tests: inputs set field by field, then the values asserted."""
    sets = dict(re.findall(r"testTiling->(\w+\.\w+) = ([^;]+);", body))
    values = {}
    for key, expr in sets.items():
        expr = expr.replace("testTiling->cubeInfo.m0", "16").replace("true", "1")
        values[key] = int(eval(expr, {}))  # noqa: S307 - integer literals and one product
    fmt = re.search(r"SetFmapType\(TPosition::GM, ConvFormat::(\w+), ConvDtype::(\w+)\)", body)
    case = {"inputs": values, "dtype": DTYPES[fmt[2]], "fmap_format": fmt[1]}
    ranges = dict(re.findall(r"std::vector<uint64_t> (expRes\d) = \{([^}]*)\};", body))
    if "algo.L0TilingDecision();" in body:
        case.update(kind="l0_decision", mL0_in=_ints(ranges["expRes0"]), nL0_in=_ints(ranges["expRes1"]))
    elif "EXPECT_EQ(algo.l0TilingRange.mL0Range, expRes0);" in body:
        case.update(kind="l0_range", mL0Range=_ints(ranges["expRes0"]), nL0Range=_ints(ranges["expRes1"]))
    elif "int64_t ret = algo.GetL0Tiling();" in body and "EXPECT_EQ(ret, 0);" in body:
        case.update(kind="l0_tiling", ret=0)
    else:
        raise ValueError("inner-step test of an unknown form")
    if m := re.search(r"EXPECT_EQ\(algo\.doubleBufferValue\.pbAL1, (\d+)\);", body):
        case["pbAL1"] = int(m[1])
    return case


def _runtime_cases(source: str) -> tuple[list[dict], list[dict]]:
    vectors, skipped = [], []
    for name, body in _tests(source, "Conv3DV2TilingRuntime"):
        if not re.search(r"auto res = ComputeNumBlocksViaEngine\(conv3dBT\);", body):
            first = re.search(r"(?:ASSERT|EXPECT)_\w+\(([^;]*)\);", body)
            skipped.append({"source": RUNTIME_FILE, "test": name, "reason": "asserts an inner step or context "
                            f"parsing, not a tiling result (first assertion: {first[1] if first else None})"})
            continue
        try:
            shape = {k: int(v) for k, v in re.findall(r"shapeInfo\.(\w+) = (\d+);", body)}
            core = int(re.search(r"uint32_t aicoreNum = (\d+);", body)[1])
            groups = int(re.search(r"attrInfo_\.groups = (\d+);", body)[1])
            exp = re.search(r"NumBlocksRes expectRes = \{([^}]*)\};", body)[1]
            exp = [x.strip() for x in exp.split(",")]
            env = {"aicoreNum": core, **{f"shapeInfo.{k}": v for k, v in shape.items()}}
            exp = [env[x] if x in env else int(re.sub(r"static_cast<uint32_t>\((.*)\)", r"\1", x)
                                                if x.isdigit() else env[re.sub(r"static_cast<uint32_t>\((.*)\)",
                                                                                r"\1", x)]) for x in exp]
            asserted = re.findall(r"ASSERT_EQ\(res\.(\w+), expectRes\.\w+\);", body)
            if set(shape) - {"batch", "cIn", "di", "hi", "wi", "cOut", "kd", "kh", "kw", "dOut", "ho", "wo"}:
                raise ValueError(f"shape fields {sorted(shape)}")
            extra = re.findall(r"(?:attrInfo_|opInfo|shapeInfo_|conv3dBT)\.(\w+) = ([^;]+);", body)
            # NumBlocksRes field order (conv3d_base_tiling.h): batchDim, mDim, nDim, doDim, groupDim, hoDim
            res = dict(zip(["batchDim", "mDim", "nDim", "doDim", "groupDim", "hoDim"], exp))
            vectors.append({"source": RUNTIME_FILE, "test": name, "kind": "num_blocks", "aicoreNum": core,
                            "shape": shape, "groups": groups, "other_settings": dict(extra),
                            "expect": {k: res[k] for k in asserted}})
        except (TypeError, ValueError, KeyError) as err:
            skipped.append({"source": RUNTIME_FILE, "test": name, "reason": str(err)})
    return vectors, skipped


def main(git_dir: str, commit: str = "HEAD") -> None:
    def show(path):
        return subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True,
                              capture_output=True, text=True).stdout
    commit_id = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], check=True, capture_output=True,
                               text=True).stdout.strip()
    api = show(API_FILE)
    vectors, skipped = [], []
    for name, body in _tests(api, "TestConv3dTiling"):
        try:
            if "algo." in body:
                case = _inner_case(name, body)
            elif "testTiling.SetGroups(" in body:
                case = {"kind": "api_single_core", **_grouped_pointwise_case(name, body)}
            else:
                case = {"kind": "api_single_core", **_api_case(name, body)}
            vectors.append({"source": API_FILE, "test": name, **case})
        except (ValueError, KeyError, TypeError) as err:
            skipped.append({"source": API_FILE, "test": name, "reason": str(err)})
    runtime, runtime_skipped = _runtime_cases(show(RUNTIME_FILE))
    out = {
        "provenance": {"repository": "hicann/ops-nn", "commit": commit_id,
                       "extracted_by": "tests/data/extract_conv3d_v2_vectors.py"},
        "api_platform": _api_platform(api),
        "TestTilingResult": OK_PROPERTIES,
        "vectors": vectors + runtime,
        "not_extracted": skipped + runtime_skipped,
        "files_skipped": FILES_SKIPPED,
    }
    target = Path(__file__).with_name("conv3d_v2_tiling_vectors_a2.json")
    # One vector per line: readable, and a diff shows which case changed.
    lines = [json.dumps({k: v for k, v in out.items() if k not in ("vectors", "not_extracted")}, indent=1)[:-2] + ","]
    for key in ("vectors", "not_extracted"):
        rows = ",\n".join("  " + json.dumps(item) for item in out[key])
        lines.append(f' "{key}": [\n{rows}\n ]' + ("," if key == "vectors" else ""))
    target.write_text("\n".join(lines) + "\n}\n")
    kinds = {}
    for v in out["vectors"]:
        kinds[v["kind"]] = kinds.get(v["kind"], 0) + 1
    print(f"{len(out['vectors'])} vectors {kinds}, {len(out['not_extracted'])} not extracted -> {target}")


if __name__ == "__main__":
    main(*sys.argv[1:])
