"""`ascend-sim conv-backward`: runs and checks 1D/2D/3D, transposed, masks and cube math types; JSON, traces,
timing-only; bad flags on one line with exit code 2. Also its numpy references against torch."""
import json

import numpy as np
import pytest
import torch

from frontends.cli.app import main
from kernels.convolution_backward.reference import convolution_backward_reference

SMALL = ["--cin", "8", "--cout", "16"]


@pytest.mark.parametrize("flags,kernels", [
    (["--dhw", "12", "--kernel", "3", "--stride", "2"], ["ReduceSum (AIV)", "Conv3DBackpropInputV2",
                                                           "Conv3DBackpropFilterV2"]),
    (["--dhw", "4,4", "--kernel", "4,4", "--pad", "0,0", "--dtype", "bfloat16"],
     ["ReduceSum (AIV)", "MatMul (FM_EQ_KERNEL)", "MatMul (FM_EQ_KERNEL)"]),
    (["--dhw", "2,6,6", "--mask", "0,1,0", "--dtype", "float32", "--cube-math-type", "2"],
     ["Conv3DBackpropFilterV2"]),
    (["--dhw", "2,5,5", "--transposed", "--stride", "1,2,2", "--output-padding", "0,1,1"],
     ["ReduceSum (AIV)", "Conv3DV2", "Conv3DBackpropFilterV2"]),
])
def test_runs_and_checks(capsys, flags, kernels):
    assert main(["conv-backward", *SMALL, *flags, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["check_passed"] is True and [launch["kernel"] for launch in doc["launches"]] == kernels
    assert all(launch["report"]["cycles"] > 0 and launch["tiling"] for launch in doc["launches"])
    assert len(doc["checks"]) == len(kernels)


def test_text_report_traces_and_timing_only(tmp_path, capsys):
    trace = tmp_path / "bp.json"
    assert main(["conv-backward", *SMALL, "--dhw", "2,6,6", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert out.count("PASSED") == 3 and "grad_weight: Conv3DBackpropFilterV2" in out and "total: 3 kernels" in out
    # one trace file with the three launches one after the other (processes launch * 1000 + core)
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert {name.split(":")[0] for name in names} == {"grad_input", "grad_weight", "grad_bias"}
    spans = [e for e in events if e["ph"] == "X"]
    by_launch = {}
    for e in spans:
        by_launch.setdefault(e["pid"] // 1000, []).append(e)
    assert sorted(by_launch) == [0, 1, 2]
    for earlier, later in ((0, 1), (1, 2)):  # each launch starts where the one before ended
        assert max(e["ts"] + e["dur"] for e in by_launch[earlier]) <= min(e["ts"] for e in by_launch[later]) + 1e-9
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bp.json"]
    assert main(["conv-backward", *SMALL, "--dhw", "2,6,6", "--timing-only", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["check_passed"] is None


def test_one_value_means_every_axis(capsys):
    assert main(["conv-backward", *SMALL, "--dhw", "2,6,6", "--stride", "1", "--kernel", "3", "--pad", "1",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["check_passed"] is True
    assert main(["conv-backward", *SMALL, "--dhw", "2,6,6", "--stride", "1,1,1", "--kernel", "3,3,3", "--pad", "1,1,1",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["launches"] == doc["launches"]


@pytest.mark.parametrize("old,new", [(["--size", "2,6,6"], "renamed --dhw; write --dhw 2,6,6"),
                                     (["--padding", "1"], "renamed --pad; write --pad 1")])
def test_old_spellings_answer_with_the_new_one(capsys, old, new):
    assert main(["conv-backward", *old]) == 2
    err = capsys.readouterr().err
    assert err == f"ascend-sim conv-backward: error: argument {old[0]}: {new}\n"


@pytest.mark.parametrize("flags,words", [
    (["--dhw", "4,4", "--stride", "1,1,1"], "argument --stride"),
    (["--dhw", "1,2,3,4,5"], "argument --dhw"),
    (["--cube-math-type", "4"], "argument --cube-math-type"),
    (["--mask", "1,0"], "argument --mask"),
    (["--groups", "3"], "argument --groups"),
    (["--dhw", "4,80,8", "--stride", "1,64,1"], "stride[1] (H)=64 is outside the allowed range [1, 63]"),
    (["--output-padding", "1,0,0"], "output_padding=(1, 0, 0) must be all 0 when transposed=False"),
])
def test_bad_flags_one_line_exit_2(capsys, flags, words):
    assert main(["conv-backward", *SMALL, *flags]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,stride,padding,dilation,groups", [
    ((2, 4, 9), (6, 2, 3), (2,), (1,), (2,), 2),
    ((1, 4, 7, 8), (6, 4, 3, 2), (2, 1), (1, 0), (1, 2), 1),
    ((1, 4, 3, 5, 5), (4, 2, 2, 3, 3), (1, 2, 2), (0, 1, 1), (1, 1, 1), 2),
])
def test_numpy_references_match_torch(x_shape, w_shape, stride, padding, dilation, groups, transposed):
    rng = np.random.default_rng(0)
    if transposed:  # the weight is (Cin, Cout/groups, k...)
        w_shape = (x_shape[1], w_shape[0] // groups, *w_shape[2:])
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    spatial = len(x_shape) - 2
    fn = getattr(torch.nn.functional, f"conv{'_transpose' if transposed else ''}{spatial}d")
    y = fn(torch.tensor(x), torch.tensor(w), stride=stride, padding=padding, dilation=dilation, groups=groups)
    go = rng.standard_normal(tuple(y.shape))
    ref = torch.ops.aten.convolution_backward(torch.tensor(go), torch.tensor(x), torch.tensor(w), [1], list(stride),
                                              list(padding), list(dilation), transposed, [0] * spatial, groups,
                                              [True] * 3)
    mine = convolution_backward_reference(go, x, w, stride, tuple((p, p) for p in padding), dilation, transposed,
                                          groups, (True, True, True))
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-10, atol=1e-10)
