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
    (["--size", "12", "--kernel", "3", "--stride", "2"], ["ReduceSum (AIV)", "Conv3DBackpropInputV2",
                                                           "Conv3DBackpropFilterV2"]),
    (["--size", "4,4", "--kernel", "4,4", "--padding", "0,0", "--dtype", "bfloat16"],
     ["ReduceSum (AIV)", "MatMul (FM_EQ_KERNEL)", "MatMul (FM_EQ_KERNEL)"]),
    (["--size", "2,6,6", "--mask", "0,1,0", "--dtype", "float32", "--cube-math-type", "2"],
     ["Conv3DBackpropFilterV2"]),
    (["--size", "2,5,5", "--transposed", "--stride", "1,2,2", "--output-padding", "0,1,1"],
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
    assert main(["conv-backward", *SMALL, "--size", "2,6,6", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert out.count("PASSED") == 3 and "grad_weight: Conv3DBackpropFilterV2" in out and "total: 3 kernels" in out
    for gradient in ("grad_input", "grad_weight", "grad_bias"):
        assert json.loads((tmp_path / f"bp.{gradient}.json").read_text())
    assert main(["conv-backward", *SMALL, "--size", "2,6,6", "--timing-only", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["check_passed"] is None


@pytest.mark.parametrize("flags,words", [
    (["--size", "4,4", "--stride", "1,1,1"], "argument --stride"),
    (["--size", "1,2,3,4,5"], "argument --size"),
    (["--cube-math-type", "4"], "argument --cube-math-type"),
    (["--mask", "1,0"], "argument --mask"),
    (["--groups", "3"], "argument --groups"),
    (["--size", "4,80,8", "--stride", "1,64,1"], "stride[1] (H)=64 is outside the allowed range [1, 63]"),
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
