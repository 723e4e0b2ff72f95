"""`ascend-sim conv3d-dx --platform Ascend950PR_9589`: the arch35 kernel, hifloat8 included, checked against the
numpy reference."""
from __future__ import annotations

import json

import pytest

from frontends.cli import main

SMALL_CONV = ["--cin", "16", "--cout", "16", "--dhw", "2,8,8"]


@pytest.mark.parametrize("dtype", ["hifloat8", "float8_e4m3fn", "bfloat16"])
def test_conv3d_dx_on_the_950(dtype, capsys):
    code = main(["conv3d-dx", "--platform", "Ascend950PR_9589", "--dtype", dtype, *SMALL_CONV])
    out = capsys.readouterr().out
    assert code == 0
    assert "note: arch35 kernel" in out and "check against the numpy reference: PASSED" in out
    assert "8 AIC + 16 AIV cores" in out


def test_conv3d_dx_950_json(capsys):
    code = main(["conv3d-dx", "--platform", "Ascend950PR_9589", "--dtype", "hifloat8", *SMALL_CONV, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["check_passed"] and data["launches"][0]["tiling"]["c0"] == 32


def test_8bit_refused_on_a2(capsys):
    code = main(["conv3d-dx", "--dtype", "hifloat8", *SMALL_CONV])
    assert code != 0 and "dtype='hifloat8' is not supported" in capsys.readouterr().err
