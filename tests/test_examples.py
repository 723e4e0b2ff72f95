"""The teaching examples run and pass their own checks."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_matmul_example(capsys, tmp_path):
    assert _load("01_matmul_cube").main(["--m", "256", "--n", "128", "--k", "96", "--trace",
                                         str(tmp_path / "t.json")]) == 0
    assert "PASSED" in capsys.readouterr().out and (tmp_path / "t.json").exists()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_conv3d_dx_api_example(dtype, capsys):
    assert _load("02_conv3d_dx_api").main(["--dtype", dtype]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and " Mmad " in out and "is in L0C" in out
