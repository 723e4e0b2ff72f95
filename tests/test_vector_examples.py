"""The vector teaching examples run and pass their own numpy checks."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("buffers", ["1", "2"])
def test_vector_add_example(buffers, capsys, tmp_path):
    trace = tmp_path / "add.json"
    assert _load("01_vector_add").main(["--n", "16384", "--cores", "2", "--tile", "1024", "--buffers", buffers,
                                     "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "2 cores" in out and trace.exists()


def test_vector_add_double_buffering_is_faster():
    module = _load("01_vector_add")
    import numpy as np
    x = np.arange(16384, dtype=np.float16)
    one = module.run_add(x, x, 2, 1024, 1)[1].cycles
    two = module.run_add(x, x, 2, 1024, 2)[1].cycles
    assert two < one


@pytest.mark.parametrize("name", ["02_vector_repeat_mask", "03_vector_reduce"])
def test_vector_examples(name, capsys):
    assert _load(name).main([]) == 0
    out = capsys.readouterr().out
    assert "check against numpy PASSED" in out and "FAILED" not in out
