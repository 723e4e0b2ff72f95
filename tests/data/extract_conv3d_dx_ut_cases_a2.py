"""Extract every case of hicann/ops-nn's A2 Conv3DBackpropInputV2 tiling UT into conv3d_dx_ut_cases_a2.json.

Usage: python tests/data/extract_conv3d_dx_ut_cases_a2.py <ops-nn git dir> [commit]  (writes next to this script)

The UT (`conv/conv3d_backprop_input_v2/tests/ut/op_host/test_conv3d_backprop_input_v2_tiling.cpp`) lists its cases
as brace initialisers of `Conv3DBpInputV2TilingTestParam` in two arrays (`general_20_core_num_cases_params`,
`general_24_core_num_cases_params`). Each case is recorded as the UT states it, member by member (the struct's own
member names, in its order): shapes, formats, attributes, the compile info's hardware_info, whether parsing and
tiling must succeed and, for a successful one, the asserted block_dim, tiling key and the tiling blob as int32 words.
Nothing is computed here: the words are the UT's string, split.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

UT_FILE = "conv/conv3d_backprop_input_v2/tests/ut/op_host/test_conv3d_backprop_input_v2_tiling.cpp"
ARRAYS = ("general_20_core_num_cases_params", "general_24_core_num_cases_params")
# Conv3DBpInputV2TilingTestParam's members, in declaration order (the UT's struct).
MEMBERS = ("case_name", "soc_version", "short_soc_version", "compile_info", "dtype", "input_size", "filter_ori_shape",
           "filter_shape", "out_backprop_ori_shape", "out_backprop_shape", "y_ori_shape", "y_shape",
           "input_size_format", "filter_ori_format", "filter_format", "out_backprop_ori_format",
           "out_backprop_format", "y_ori_format", "y_format", "strides", "pads", "dilations", "groups", "data_format",
           "enable_hf32", "padding", "_op_impl_mode_enum", "parse_result", "tiling_result", "block_dim", "tiling_key",
           "tiling_data")
TOKEN = re.compile(r'R"\((?P<raw>.*?)\)"|"(?P<str>(?:[^"\\]|\\.)*)"|(?P<punct>[{},])|(?P<word>[^\s{},"]+)', re.S)


def _tokens(text: str):
    for m in TOKEN.finditer(text):
        if m.group("raw") is not None:
            yield "str", m.group("raw")
        elif m.group("str") is not None:
            yield "str", m.group("str")
        elif m.group("punct"):
            yield m.group("punct"), None
        else:
            yield "word", m.group("word")


def _value(tokens: list, i: int):
    """(value, next index) of the initialiser at tokens[i]: a string (adjacent literals joined), a list, a word."""
    kind, text = tokens[i]
    if kind == "{":
        items, i = [], i + 1
        while tokens[i][0] != "}":
            item, i = _value(tokens, i)
            items.append(item)
            if tokens[i][0] == ",":
                i += 1
        return items, i + 1
    if kind == "str":
        parts = []
        while tokens[i][0] == "str":
            parts.append(tokens[i][1])
            i += 1
        return "".join(parts), i
    return _word(text), i + 1


def _word(text: str):
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text.removeprefix("ge::FORMAT_")


def _cases(source: str, array: str) -> list[dict]:
    start = source.index(array + "[] =")
    body = source[source.index("{", start):]
    tokens = list(_tokens(body))
    cases, i = [], 1
    while tokens[i][0] == "{":
        values, i = _value(tokens, i)
        if len(values) != len(MEMBERS):
            raise SystemExit(f"{array}: a case with {len(values)} members, the struct has {len(MEMBERS)}")
        case = dict(zip(MEMBERS, values))
        case["hardware_info"] = json.loads(case.pop("compile_info"))["hardware_info"]
        words = case.pop("tiling_data").split()
        case["tiling_words_int32"] = [int(w) for w in words]
        case["uid"] = f"{array}/{case['case_name']}"
        cases.append(case)
        if tokens[i][0] == ",":
            i += 1
    return cases


def main(argv: list[str]) -> None:
    git_dir = argv[1]
    commit = argv[2] if len(argv) > 2 else "HEAD"
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    source = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{UT_FILE}"], check=True,
                            capture_output=True, text=True).stdout
    cases = [case for array in ARRAYS for case in _cases(source, array)]
    out = {
        "description": "Every case of the real A2 Conv3DBackpropInputV2 tiling UT, member by member as the UT "
                       "states it (Conv3DBpInputV2TilingTestParam), extracted by extract_conv3d_dx_ut_cases_a2.py. "
                       "tiling_result false: the real tiling must fail (no tiling recorded). tiling_words_int32: "
                       "the asserted tiling blob (312 bytes: conv3d_backprop_input_v2_tiling_data.h).",
        "source": {"repository": "hicann/ops-nn", "commit": commit, "file": UT_FILE, "arrays": list(ARRAYS)},
        "cases": cases,
    }
    path = Path(__file__).with_name("conv3d_dx_ut_cases_a2.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    ok = sum(case["tiling_result"] for case in cases)
    print(f"wrote {path}: {len(cases)} cases, {ok} with a tiling, {len(cases) - ok} that must fail")


if __name__ == "__main__":
    main(sys.argv)
