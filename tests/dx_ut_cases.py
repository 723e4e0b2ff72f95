"""The real A2 Conv3DBackpropInputV2 tiling UT's cases (tests/data/conv3d_dx_ut_cases_a2.json) as runnable cases:
the operator's arguments in the UT's own formats and the real tiling decoded from the UT's blob, to force field by
field (`real_overrides`)."""
from __future__ import annotations

import json
import struct
from pathlib import Path

from ascend_sim.machine.platform import get_platform
from tiling.conv3d_backprop_input.arch22.model import Conv3DBackpropInputV2TilingData

DATA = Path(__file__).parent / "data" / "conv3d_dx_ut_cases_a2.json"
CASES = json.loads(DATA.read_text())["cases"]
# the 23 cases whose real tiling succeeds (the other 4 assert that the real host refuses the problem)
TILED = [case for case in CASES if case["tiling_result"]]


def case_id(case: dict) -> str:
    """The case's name, with its array's core count where a name is in both arrays (conv3d_dx_050_fp32)."""
    same = [c for c in CASES if c["case_name"] == case["case_name"]]
    return case["case_name"] if len(same) == 1 else f"{case['case_name']}@{case['uid'].split('_')[1]}"


def platform(case: dict):
    """The case's SoC with the buffer sizes and core count of its compile info (a vector core pair per cube)."""
    hw = case["hardware_info"]
    plat = get_platform(case["soc_version"])
    changes = {field: hw[key] for field, key in (("aic_cores", "CORE_NUM"), ("L1", "L1_SIZE"), ("L0A", "L0A_SIZE"),
                                                 ("L0B", "L0B_SIZE"), ("L0C", "L0C_SIZE"), ("UB", "UB_SIZE"))
               if getattr(plat, field) != hw[key]}
    if "aic_cores" in changes:
        changes["aiv_cores"] = 2 * changes["aic_cores"]
    return plat.with_overrides(**changes) if changes else plat


def operator_arguments(case: dict) -> dict:
    """conv3d_backprop_input_v2_run's keyword arguments besides the operands: the UT's attributes, formats and
    platform."""
    return dict(strides=tuple(case["strides"]), pads=tuple(case["pads"]), dilations=tuple(case["dilations"]),
                groups=case["groups"], data_format=case["data_format"], filter_format=case["filter_ori_format"],
                platform=platform(case), enable_hf32=bool(case["enable_hf32"]))


def real_tiling(case: dict) -> Conv3DBackpropInputV2TilingData:
    """The UT's asserted tiling, decoded from its 78 int32 words, with the template flags of its tiling key."""
    key = case["tiling_key"]
    return Conv3DBackpropInputV2TilingData.from_bytes(
        struct.pack(f"<{len(case['tiling_words_int32'])}i", *case["tiling_words_int32"]), dtype=case["dtype"],
        platform=platform(case), loadB2Condition=key % 256, enableKernelSplit=bool(key // 256 % 2),
        useBasicBlock=bool(key // 512 % 2))


def real_overrides(case: dict) -> dict[str, int]:
    """Every field of the real tiling and its template flags, as tiling_overrides."""
    t = real_tiling(case)
    return {**t.fields(), "loadB2Condition": t.loadB2Condition, "useBasicBlock": int(t.useBasicBlock),
            "enableKernelSplit": int(t.enableKernelSplit)}
