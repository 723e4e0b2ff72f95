"""`ascend-sim debug`: print / x / who-wrote of the operator's tensors by argument name, and check, in scripted
sessions checked against the Python API on the same run and against the command's own operands."""
import io
import re
import sys

import numpy as np
import pytest

from frontends.cli import main

PROMPT = "(ascend-sim) "
MATMUL = ["matmul", "--m", "40", "--n", "24", "--k", "150", "--batch", "2"]
CONV = ["conv3d-dx", "--cin", "20", "--cout", "24", "--dhw", "2,8,8", "--route", "v2", "--kernel", "2,3,3",
        "--stride", "1,2,2"]


@pytest.fixture
def session(monkeypatch, capsys, debug_shells):
    shells = debug_shells

    def run(argv, script):
        monkeypatch.setattr(sys, "stdin", io.StringIO(script))
        code = main(["debug", *argv])
        out = capsys.readouterr().out
        return code, [chunk.splitlines()[1:] for chunk in out.split(PROMPT)[1:]], shells[-1]
    return run


def numbers(line: str) -> np.ndarray:
    return np.array([float(x) for x in re.findall(r"-?\d+\.\d*(?:e-?\d+)?|nan", line.strip("[]"))])


def test_print_and_x_of_conv_tensors(session):
    # fp16 NCDHW: the MIX build, whose vector cores write y in NCDHW (device and logical format are the same)
    code, out, shell = session(CONV, "print y[0, 3, :, 2, 2]\ngoto end\nprint y[0, 3, :, 2, 2]\nprint y[0, 3, 1, 2, 2]\n"
                                     "x y[0, 3, 1, 2, 2]\nprint filter[2, 5, 1, 0, 2]\nprint y[0, 20, 0, 0, 0]\n"
                                     "x y[0, 0, 0, 0, 0, 0]\nprint out_backprop[0, 0:3, 0, 0, 0] full\n")
    assert code == 0
    dbg = shell.dbg
    assert out[0][0].startswith("y[0, 3, :, 2, 2]: NCDHW (2,) float16  (GM y, NCDHW (1, 20, 2, 8, 8))")
    assert np.isnan(numbers(out[0][1])).all()  # the poisoned output before any record
    assert np.allclose(numbers(out[2][1]), dbg.tensor("y", (0, 3, slice(None), 2, 2)), atol=5e-4)
    value = float(dbg.tensor("y", (0, 3, 1, 2, 2)))
    assert out[3] == [f"y[0, 3, 1, 2, 2] = {np.float16(value)!s}  (GM y, NCDHW (1, 20, 2, 8, 8): byte "
                      f"{2 * (((3 * 2 + 1) * 8 + 2) * 8 + 2)}, NCDHW [0, 3, 1, 2, 2])"]
    assert out[4][0].startswith(f"y[0, 3, 1, 2, 2] = {np.float16(value)!s}  (") and "NCDHW [0, 3, 1, 2, 2]" in out[4][0]
    rng = np.random.default_rng(0)  # the command's operands: dy, then the filter, from --seed (default 0)
    dy = rng.standard_normal((1, 24, 3, 4, 4)).astype(np.float16)
    weight = rng.standard_normal((24, 20, 2, 3, 3)).astype(np.float16)
    assert np.float16(out[5][0].split(" = ")[1].split()[0]) == weight[2, 5, 1, 0, 2]
    assert out[6] == ["error: y: index 20 of axis C outside [0, 19]"]
    assert out[7] == ["error: y: 6 indices for 5 axes (NCDHW (1, 20, 2, 8, 8))"]
    assert np.array_equal(numbers(out[8][1]).astype(np.float16), dy[0, 0:3, 0, 0, 0])


def test_who_wrote_an_element_is_the_api_provenance(session):
    code, out, shell = session(MATMUL, "goto end\nwho-wrote --all c[1, 33, 17]\nwho-wrote c[1, 33]\n"
                                       "who-wrote c[1, 33, 17]\n")
    pv = shell.dbg.trace("c", (1, 33, 17))
    lines = out[1]
    assert lines[0].startswith("c[1, 33, 17] = ") and lines[0].endswith("came from:")
    stored = pv.by_role("stored")[0].writer
    assert lines[1].startswith(f"  stored       #{stored.seq} core {stored.core} FIX Fixpipe")
    mmads = [int(re.search(r"#(\d+)", line).group(1)) for line in lines if "accumulated" in line]
    assert len(mmads) == 3 and mmads == [s.writer.seq for s in pv.by_role("accumulated")]
    l1 = [line for line in lines if "loaded L1" in line]
    assert len(l1) == 2 and any("from a: 150 elements a[1, 33, 0] .. a[1, 33, 149]" in line for line in l1)
    assert any("from b: 150 elements b[1, 0, 17] .. b[1, 149, 17]" in line for line in l1)
    assert out[2] == ["error: who-wrote c needs one element: 3 integers (ND (2, 40, 24))"]
    # without --all: the three Mmads of one source line are one line with their range, and the L1 loads keep
    # the GM elements they read
    grouped = out[3]
    first, last = min(mmads), max(mmads)
    accumulated = [line for line in grouped if "accumulated" in line]
    assert len(accumulated) == 1 and f"Mmad x3 (records #{first}-#{last})" in accumulated[0]
    assert len(grouped) < len(lines) and grouped[-1] == "  (who-wrote --all lists every record)"
    assert any("from a: 150 elements a[1, 33, 0] .. a[1, 33, 149]" in line for line in grouped)


def test_check_passes_on_a_correct_run_and_says_where(session):
    code, out, _ = session(MATMUL, "check\ngoto end\ncheck\n")
    assert out[0][0].startswith("check c at the start of the run: FAILED: 1920 of 1920 elements wrong")
    assert "FAILED" in out[0][0] and "the first: c[0, 0, 0] = nan" in out[0][0]
    assert out[2][0].startswith("check c at the end of the run: PASSED")


def test_the_run_commands_names_are_aliases_and_the_banner_lists_them(monkeypatch, capsys):
    # conv3d-dx prints dy, w and dx; the operator's arguments are out_backprop, filter and y: both work
    script = "goto end\nprint dy[0, 3, 1, 2, 2]\nprint out_backprop[0, 3, 1, 2, 2]\nprint w[5, 4, 1, 0, 2]\n" \
             "print filter[5, 4, 1, 0, 2]\nprint dx[0, 7, 1, 3, 4]\nprint y[0, 7, 1, 3, 4]\nwho-wrote dx[0, 7, 1, 3, 4]\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert main(["debug", *CONV]) == 0
    head, *chunks = capsys.readouterr().out.split(PROMPT)
    assert head.splitlines()[1] == ("tensors: out_backprop (dy) NCDHW (1, 24, 3, 4, 4), filter (w) NCDHW "
                                    "(24, 20, 2, 3, 3), y (dx) NCDHW (1, 20, 2, 8, 8)")
    out = [chunk.splitlines()[1:] for chunk in chunks]
    for alias, name in ((1, 2), (3, 4), (5, 6)):
        assert out[alias] == out[name] and " = " in out[name][0]
    assert out[7][0].startswith("y[0, 7, 1, 3, 4] = ") and out[7][0].endswith("came from:")
