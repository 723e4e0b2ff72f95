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


def test_matmul_example(capsys, tmp_path):
    assert _load("04_matmul_cube").main(["--m", "256", "--n", "128", "--k", "96", "--trace",
                                         str(tmp_path / "t.json")]) == 0
    assert "PASSED" in capsys.readouterr().out and (tmp_path / "t.json").exists()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_conv3d_dx_api_example(dtype, capsys):
    assert _load("06_conv3d_dx_api").main(["--dtype", dtype]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and " Mmad " in out and "is in L0C" in out


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_conv3d_forward_api_example(dtype, capsys):
    assert _load("08_conv3d_forward_api").main(["--dtype", dtype]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "LoadData2D(GM)" in out and "DataCopy(L1->BT)" in out and " Mmad " in out


def test_mix_example_hands_tiles_from_the_aic_to_its_aiv(capsys):
    mix = _load("05_mix_matmul_bias_relu")
    assert mix.main(["--m", "256", "--n", "128", "--k", "128", "--cores", "2"]) == 0
    assert "PASSED" in capsys.readouterr().out
    import numpy as np
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 64)).astype(np.float16), rng.standard_normal((64, 128)).astype(np.float16)
    _, report = mix.run(a, b, rng.standard_normal(128).astype(np.float32), cores=2)
    assert [c.name for c in report.cores] == ["AIC 0", "AIV 0", "AIC 1", "AIV 1"]
    for aic, aiv in ((report.logs[0], report.logs[1]), (report.logs[2], report.logs[3])):
        fixpipes = [r for r in aic if r.name == "Fixpipe"]
        adds = [r for r in aiv if r.name == "Add"]
        assert len(fixpipes) == len(adds) == 2  # two tiles per AI core
        for fixpipe, add in zip(fixpipes, adds):
            assert add.start >= fixpipe.end  # the flag orders the AIV's work after the AIC's store


def test_mix_example_without_the_slot_free_wait_is_a_race_between_the_aic_and_its_aiv(monkeypatch):
    from ascend_sim import CrossCoreRace
    mix = _load("05_mix_matmul_bias_relu")
    real_wait = mix.CrossCoreWaitFlag
    monkeypatch.setattr(mix, "CrossCoreWaitFlag", lambda flag: None if flag == mix.SLOT_FREE else real_wait(flag))
    import numpy as np
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((256, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
    with pytest.raises(CrossCoreRace, match=r"Fixpipe.*GM:workspace|GM:workspace.*Fixpipe"):
        mix.run(a, b, np.zeros(64, np.float32), cores=1)


def test_dx_operator_example_runs_a_tiling_experiment(capsys):
    example = _load("07_conv3d_dx_operator")
    assert example.main(["--set", "stepKa=3"]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "the same with {'stepKa': 3}" in out
    assert example.main(["--set", "stepKa=1"]) == 0  # refused by the validator before launch, naming the field
    assert "refused before launch" in capsys.readouterr().out


def test_the_tutorial_walks_through_every_numbered_example_in_order():
    import re
    tutorial = (EXAMPLES.parent / "docs" / "tutorial.md").read_text()
    listed = re.findall(r"^\| (\d) \| `(\d\d_\w+\.py)` \|", tutorial, re.M)
    on_disk = sorted(p.name for p in EXAMPLES.glob("[0-9][0-9]_*.py"))
    assert [name for _, name in listed] == on_disk
    assert [int(n) for n, _ in listed] == [int(name[:2]) for name in on_disk] == list(range(1, len(on_disk) + 1))
    for _, name in listed:  # and each has its own section
        assert f"## {int(name[:2])}. `{name}`" in tutorial


ALL_EXAMPLES = sorted(path.stem for path in EXAMPLES.glob("*.py"))


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_every_example_takes_help_and_knows_its_documented_flags(name, capsys):
    """--help prints a usage and exits 0 without running; every flag the example's docstring shows in a
    `python examples/NAME.py ...` line is one the help lists."""
    module = _load(name)
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and out.startswith("usage: ")
    documented = [line for line in module.__doc__.splitlines() if f"python examples/{name}.py" in line]
    flags = {word.split("=")[0].strip("[]") for line in documented for word in line.split() if
             word.strip("[").startswith("--")}
    assert all(flag in out for flag in flags), flags


@pytest.mark.parametrize("name", ["02_vector_repeat_mask", "03_vector_reduce"])
def test_vector_examples_write_their_trace(name, capsys, tmp_path):
    trace = tmp_path / "t.json"
    assert _load(name).main(["--trace", str(trace)]) == 0
    assert trace.stat().st_size > 0 and f"trace written to {trace}" in capsys.readouterr().out
