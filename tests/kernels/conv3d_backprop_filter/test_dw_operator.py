"""conv3d_backprop_filter_v2 (the host operator with the generated tiling, on the simulated chip) against torch:
a grid over dtypes, groups, strides larger than the kernel, dilations, asymmetric pads, batch > 1, channels that
are not multiples of C0 and the data / filter formats; a few hypothesis examples; timing-only runs; the record
stream (atomic adds, RIGHT fmatrix, transposing A loads); bad input refused before launch."""
import ml_dtypes
import numpy as np
import pytest
from dw_reference import dw_reference
from hypothesis import given, settings
from hypothesis import strategies as st
from paths import ROOT

from kernels.conv3d_backprop_filter import conv3d_backprop_filter_v2, conv3d_backprop_filter_v2_run

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)


def _out(size, k, s, d, before, after):
    return (size + before + after - (k - 1) * d - 1) // s + 1


def _problem(dtype, n, cin, cout, dhw, k, strides=(1, 1, 1), pads=(0,) * 6, dil=(1, 1, 1), groups=1, seed=0,
             ints=True):
    rng = np.random.default_rng(seed)
    o = tuple(_out(dhw[i], k[i], strides[i], dil[i], pads[2 * i], pads[2 * i + 1]) for i in range(3))
    make = ((lambda s: rng.integers(-3, 4, s)) if ints else (lambda s: rng.standard_normal(s)))
    x = make((n, cin, *dhw)).astype(np.float32).astype(dtype)
    dy = make((n, cout, *o)).astype(np.float32).astype(dtype)
    return x, dy, (cout, cin // groups, *k)


def _run(x, dy, w_shape, strides, pads, dil, groups, data_format="NCDHW", filter_format="NCDHW", **kw):
    """Run the operator with NCDHW arrays converted to data_format, and the filter read back to NCDHW."""
    to_fmt = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 4, 1))) if data_format == "NDHWC" else (lambda a: a)
    w5 = {"NCDHW": w_shape, "NDHWC": (w_shape[0], *w_shape[2:], w_shape[1]),
          "DHWCN": (*w_shape[2:], w_shape[1], w_shape[0])}[filter_format]
    s5 = (1, *strides, 1) if data_format == "NDHWC" else (1, 1, *strides)
    d5 = (1, *dil, 1) if data_format == "NDHWC" else (1, 1, *dil)
    run = conv3d_backprop_filter_v2_run(to_fmt(x), w5, to_fmt(dy), strides=s5, pads=pads, dilations=d5,
                                        groups=groups, data_format=data_format, filter_format=filter_format, **kw)
    back = {"NCDHW": (0, 1, 2, 3, 4), "NDHWC": (0, 4, 1, 2, 3), "DHWCN": (4, 3, 0, 1, 2)}[filter_format]
    return run, run.result.transpose(back)


GRID = [  # dtype, N, Cin, Cout, DHW, kernel, strides, pads (f, b, t, bt, l, r), dilations, groups, formats
    (F16, 1, 16, 16, (2, 6, 6), (1, 3, 3), (1, 1, 1), (0,) * 6, (1, 1, 1), 1, ("NCDHW", "NCDHW")),
    (BF16, 2, 20, 24, (3, 7, 9), (2, 3, 2), (1, 2, 2), (1, 1, 1, 1, 0, 0), (1, 1, 1), 1, ("NDHWC", "NCDHW")),
    (F32, 1, 12, 20, (4, 9, 9), (3, 3, 3), (1, 1, 1), (1, 1, 2, 2, 1, 1), (1, 2, 2), 1, ("NCDHW", "DHWCN")),
    (F16, 1, 8, 16, (4, 8, 8), (2, 2, 2), (2, 3, 3), (0,) * 6, (1, 1, 1), 1, ("NDHWC", "NDHWC")),  # stride > kernel
    (F16, 1, 32, 32, (3, 6, 6), (3, 3, 3), (1, 1, 1), (2, 2, 1, 1, 1, 1), (2, 1, 1), 1, ("NCDHW", "NCDHW")),
    (BF16, 2, 24, 40, (3, 7, 8), (2, 3, 3), (1, 1, 2), (0, 1, 2, 0, 1, 2), (1, 1, 1), 1, ("NCDHW", "NCDHW")),
    (F16, 1, 32, 32, (3, 6, 6), (1, 3, 3), (1, 1, 1), (0, 0, 1, 1, 1, 1), (1, 1, 1), 2, ("NCDHW", "NCDHW")),
    (F32, 1, 16, 24, (2, 5, 5), (1, 3, 3), (1, 1, 1), (0,) * 6, (1, 1, 1), 4, ("NDHWC", "NCDHW")),
    (BF16, 2, 12, 18, (3, 5, 6), (2, 2, 3), (1, 2, 1), (1, 0, 0, 1, 2, 0), (2, 1, 2), 3, ("NCDHW", "NCDHW")),
    (F32, 3, 5, 7, (3, 6, 5), (2, 3, 2), (2, 1, 3), (0, 1, 1, 0, 1, 1), (1, 2, 1), 1, ("NDHWC", "DHWCN")),
]


@pytest.mark.parametrize("case", GRID, ids=[f"{c[0].name}-n{c[1]}-c{c[2]}x{c[3]}-g{c[9]}-{c[10][0]}" for c in GRID])
def test_grid_against_torch(case):
    dtype, n, cin, cout, dhw, k, strides, pads, dil, groups, (data_format, filter_format) = case
    x, dy, w_shape = _problem(dtype, n, cin, cout, dhw, k, strides, pads, dil, groups, seed=cin + cout)
    run, got = _run(x, dy, w_shape, strides, pads, dil, groups, data_format, filter_format)
    expect = dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), strides, pads, dil, groups)
    assert run.result.dtype == np.float32
    np.testing.assert_array_equal(got, expect.astype(np.float32))


@pytest.mark.parametrize("case", GRID, ids=[f"{c[0].name}-n{c[1]}-c{c[2]}x{c[3]}-g{c[9]}-{c[10][0]}" for c in GRID])
def test_grid_in_replay_verify_mode(case, monkeypatch):
    """Every replayed tile (the API's K loop, kernel/replay_keys.py) is also run for real and compared record by
    record (ascend_sim/engine/replay.py); a difference raises ReplayMismatch."""
    dtype, n, cin, cout, dhw, k, strides, pads, dil, groups, (data_format, filter_format) = case
    x, dy, w_shape = _problem(dtype, n, cin, cout, dhw, k, strides, pads, dil, groups, seed=cin + cout)
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    _, got = _run(x, dy, w_shape, strides, pads, dil, groups, data_format, filter_format)
    expect = dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), strides, pads, dil, groups)
    np.testing.assert_array_equal(got, expect.astype(np.float32))


@pytest.mark.parametrize("dtype", [F16, BF16, F32])
def test_random_data_within_fp32_accumulation_error(dtype):
    x, dy, w_shape = _problem(dtype, 2, 24, 32, (3, 8, 8), (2, 3, 3), (1, 1, 1), (1, 0, 1, 1, 1, 1), seed=7,
                              ints=False)
    _, got = _run(x, dy, w_shape, (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1), 1)
    xf, dyf = x.astype(np.float64), dy.astype(np.float64)
    expect = dw_reference(xf, w_shape, dyf, (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1))
    magnitude = dw_reference(np.abs(xf), w_shape, np.abs(dyf), (1, 1, 1), (1, 0, 1, 1, 1, 1), (1, 1, 1))
    k = 2 * 3 * 8 * 8
    assert np.all(np.abs(got - expect) <= (k + 2) * 2.0 ** -24 * magnitude + 1e-30)


@settings(max_examples=6, deadline=None)
@given(dtype=st.sampled_from([F16, BF16, F32]), n=st.integers(1, 2), cin=st.integers(1, 20), cout=st.integers(1, 20),
       k=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3)),
       s=st.tuples(st.integers(1, 2), st.integers(1, 3), st.integers(1, 3)),
       pads=st.tuples(*[st.integers(0, 1)] * 6), seed=st.integers(0, 99))
def test_hypothesis_small_problems(dtype, n, cin, cout, k, s, pads, seed):
    dhw = (3, 6, 7)
    x, dy, w_shape = _problem(dtype, n, cin, cout, dhw, k, s, pads, seed=seed)
    _, got = _run(x, dy, w_shape, s, pads, (1, 1, 1), 1)
    np.testing.assert_array_equal(got, dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32), s, pads,
                                                    (1, 1, 1)).astype(np.float32))


def test_plain_function_returns_the_run_result_and_timing_only_agrees_on_cycles():
    x, dy, w_shape = _problem(F16, 1, 16, 32, (2, 6, 6), (1, 3, 3), ints=True)
    kwargs = {"strides": (1, 1, 1, 1, 1), "pads": (0,) * 6, "data_format": "NCDHW"}
    full = conv3d_backprop_filter_v2_run(x, w_shape, dy, **kwargs)
    np.testing.assert_array_equal(conv3d_backprop_filter_v2(x, w_shape, dy, **kwargs), full.result)
    timing = conv3d_backprop_filter_v2_run(x, w_shape, dy, execute=False, **kwargs)
    assert timing.result is None
    assert timing.report.cycles == full.report.cycles > 0


def test_enable_hf32_sets_and_clears_the_mode():
    x, dy, w_shape = _problem(F32, 1, 8, 16, (2, 5, 5), (1, 3, 3))
    run = conv3d_backprop_filter_v2_run(x, w_shape, dy, strides=(1,) * 5, pads=(0,) * 6, data_format="NCDHW",
                                        enable_hf32=True)
    assert run.tiling.dwTiling.hf32Flag == 1
    modes = [r.params["value"] for r in run.report.logs[0] if r.name == "SetHF32Mode"]
    assert modes == [True, False]
    np.testing.assert_array_equal(run.result, dw_reference(x, w_shape, dy, (1, 1, 1), (0,) * 6, (1, 1, 1)))


def test_record_stream_shows_the_dw_instruction_features():
    x, dy, w_shape = _problem(BF16, 1, 16, 16, (2, 6, 6), (1, 3, 3))
    run = conv3d_backprop_filter_v2_run(x, w_shape, dy, strides=(1,) * 5, pads=(0,) * 6,
                                        data_format="NCDHW")
    log = run.report.logs[0]
    loads = [r for r in log if r.name == "LoadData3Dv2"]
    a_loads = [r for r in loads if r.writes[0][0].name == "L0A"]
    b_loads = [r for r in loads if r.writes[0][0].name == "L0B"]
    assert a_loads and all(r.params.enTranspose and r.registers[0][0] == "FMATRIX_LEFT" for r in a_loads)
    assert b_loads and all(r.params.fMatrixCtrl and r.registers[0][0] == "FMATRIX_RIGHT" for r in b_loads)
    names = [r.name for r in log]
    first_fix = names.index("Fixpipe")
    assert names[first_fix - 1] == "SetAtomicAdd" and names[first_fix + 1] == "SetAtomicNone"
    assert "DataCopyL1ToGM" in names  # the init-output pass zeroes dw from L1


BAD = [
    ({"data_format": "NHWC"}, ValueError, "data_format='NHWC'"),
    ({"filter_format": "OIDHW"}, ValueError, "filter_format='OIDHW'"),
    ({"strides": (2, 1, 1, 1, 1)}, ValueError, "strides=.*N and C entries"),
    ({"strides": (1, 1, 1, 1)}, ValueError, "strides"),
    ({"pads": (0, 0, 0, 0)}, ValueError, "pads"),
    ({"filter_size": (16, 16, 1, 3)}, ValueError, "filter_size"),
    ({"filter_size": (8, 16, 1, 3, 3)}, ValueError, "out_backprop channels=16 .* filter_size Cout=8"),
    ({"filter_size": (16, 16, 1, 5, 3)}, ValueError, "out_backprop H=4 .*expected"),
    ({"x": "float16 list"}, TypeError, "x must be a numpy.ndarray"),
    ({"dy_dtype": F32}, TypeError, "x.dtype=float16 and out_backprop.dtype=float32 differ"),
    ({"x_dtype": np.float64}, TypeError, "x.dtype=float64 is not supported"),
    # the 950 reads L0A as NZ: the arch22 kernel is refused there by name until the arch35 kernel is ported
    ({"platform": "Ascend950PR_9589"}, ValueError,
     r"platform='Ascend950PR_9589' \(npu_arch 3510\): Conv3DBackpropFilterV2 runs its arch22 kernel .*arch35 kernel"),
]


@pytest.mark.parametrize("bad,exc,match", BAD, ids=[str(next(iter(b[0]))) + str(i) for i, b in enumerate(BAD)])
def test_bad_input_is_refused_naming_the_parameter(bad, exc, match):
    x, dy, w_shape = _problem(F16, 1, 16, 16, (2, 6, 6), (1, 3, 3))
    args = {"x": x, "filter_size": w_shape, "out_backprop": dy, "strides": (1,) * 5, "pads": (0,) * 6, "data_format": "NCDHW"}
    bad = dict(bad)
    if "dy_dtype" in bad:
        args["out_backprop"] = dy.astype(bad.pop("dy_dtype"))
    if "x_dtype" in bad:
        args["x"] = x.astype(bad.pop("x_dtype"))
    if bad.get("x") == "float16 list":
        args["x"] = x.tolist()
        bad.pop("x")
    args.update(bad)
    with pytest.raises(exc, match=match):
        conv3d_backprop_filter_v2_run(args.pop("x"), args.pop("filter_size"), args.pop("out_backprop"), **args)


@pytest.mark.parametrize("dtype,n,cin,cout,dhw,key", [(BF16, 2, 32, 48, (4, 16, 16), 2), (F16, 1, 128, 64, (2, 16, 16), 1),
                                                      (F16, 4, 16, 16, (4, 32, 32), 1)])
def test_generated_basic_block_tilings(dtype, n, cin, cout, dhw, key):
    """1x1x1 kernels the generator gives to the basic-block templates (SPLIT_M_K = 1, SPLIT_K_N = 2)."""
    x, dy, w_shape = _problem(dtype, n, cin, cout, dhw, (1, 1, 1), seed=key)
    run, got = _run(x, dy, w_shape, (1, 1, 1), (0,) * 6, (1, 1, 1), 1)
    assert run.tiling.tiling_key == key
    np.testing.assert_array_equal(got, dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32),
                                                    (1, 1, 1), (0,) * 6, (1, 1, 1)).astype(np.float32))


def test_docs_snippet_runs():
    """The usage block at the top of docs/conv3d_backprop_filter.md runs as written."""
    import re
    text = (ROOT / "docs" / "conv3d_backprop_filter.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1).replace("print(", "str(")
    namespace = {}
    exec(compile(code, "conv3d_backprop_filter.md", "exec"), namespace)  # noqa: S102 - the repository's own docs
    assert namespace["dw"].shape == (32, 16, 1, 3, 3) and namespace["dw"].dtype == np.float32


def test_a_broken_tiling_becomes_a_simulated_fault_naming_the_kernel_line():
    """baseN = 24 is not a whole number of bf16 C0 columns: the img2col load into L0B refuses the kExtension it
    gets, naming the core, the pipe, the instruction and the kernel line, before anything runs on the data."""
    from ascend_sim.machine.faults import ParameterOutOfRange
    x, dy, w_shape = _problem(BF16, 1, 16, 16, (2, 6, 6), (1, 3, 3))
    kwargs = {"strides": (1,) * 5, "pads": (0,) * 6, "data_format": "NCDHW"}
    good = conv3d_backprop_filter_v2_run(x, w_shape, dy, **kwargs).tiling
    bad = good.with_overrides(validate=False, baseN=24)
    with pytest.raises(ParameterOutOfRange) as err:
        conv3d_backprop_filter_v2_run(x, w_shape, dy, tiling=bad, **kwargs)
    text = str(err.value)
    assert "MTE1 LoadData3Dv2" in text and "load_b.py" in text and "kExtension=" in text and "core " in text


@pytest.mark.parametrize("pads", [(0, 0, 1, 2, 0, 0), (0, 0, 3, 0, 1, 1), (1, 1, 0, 3, 2, 2)])
def test_pads_reaching_past_the_kernel_in_h(pads):
    """Output rows that read only padding (pad >= kernel height): the operator writes the H pads into x, since
    the kernel's B1 load would count zero or fewer rows for them (found by a random sweep: blockLen=-36)."""
    x, dy, w_shape = _problem(F32, 1, 12, 20, (4, 1, 9), (2, 1, 3), (1, 1, 2), pads, seed=sum(pads))
    run, got = _run(x, dy, w_shape, (1, 1, 2), pads, (1, 1, 1), 1)
    assert run.tiling.dwTiling.padUp == run.tiling.dwTiling.padDown == 0
    np.testing.assert_array_equal(got, dw_reference(x, w_shape, dy, (1, 1, 2), pads, (1, 1, 1)).astype(np.float32))


@pytest.mark.parametrize("case", GRID[2::3], ids=lambda c: f"{c[0].name}-g{c[9]}")
def test_numpy_reference_of_the_cli_matches_torch(case):
    """kernels/conv3d_backprop_filter/reference.py (the CLI's check, no torch) against torch."""
    from kernels.conv3d_backprop_filter.reference import conv3d_dw_reference
    _dtype, n, cin, cout, dhw, k, strides, pads, dil, groups, _ = case
    x, dy, w_shape = _problem(F32, n, cin, cout, dhw, k, strides, pads, dil, groups, seed=3, ints=False)
    np.testing.assert_allclose(conv3d_dw_reference(x, dy, w_shape, strides, pads, dil, groups),
                               dw_reference(x, w_shape, dy, strides, pads, dil, groups), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype,n,cin,cout,dhw,k,groups", [(F16, 1, 16, 16, (4, 6, 6), (3, 3, 3), 1),
                                                           (BF16, 2, 20, 24, (3, 7, 9), (2, 2, 2), 1),
                                                           (F32, 1, 12, 20, (4, 9, 9), (3, 3, 3), 1),
                                                           (F16, 1, 32, 32, (3, 6, 6), (3, 3, 3), 2)])
def test_deterministic_build_sums_the_stream_k_tail_on_the_vector_cores(dtype, n, cin, cout, dhw, k, groups):
    """deterministic=True: the host tiles for stream-K (key 4); the tail blocks' parts go to per-core workspaces
    and the vector cores of a MIX_AIC_1_2 launch sum them in core order into dw."""
    x, dy, w_shape = _problem(dtype, n, cin, cout, dhw, k, groups=groups, seed=cin)
    run, got = _run(x, dy, w_shape, (1, 1, 1), (0,) * 6, (1, 1, 1), groups, deterministic=True)
    assert run.tiling.tiling_key == 4
    np.testing.assert_array_equal(got, dw_reference(x.astype(np.float32), w_shape, dy.astype(np.float32),
                                                    (1, 1, 1), (0,) * 6, (1, 1, 1), groups).astype(np.float32))
    bb = run.tiling.basicBlockTiling
    aiv_records = [r for log in run.report.logs[1::3] + run.report.logs[2::3] for r in log]
    if bb.streamKType:  # the vector cores zeroed the workspaces and summed them with Add
        assert any(r.name == "Add" for r in aiv_records) and any(r.name == "Duplicate" for r in aiv_records)
    else:  # only their TPipes' closing PipeBarrier(PIPE_ALL)
        assert {r.name for r in aiv_records} == {"PipeBarrier"}


def test_deterministic_runs_are_bit_identical_on_random_data():
    x, dy, w_shape = _problem(BF16, 2, 20, 24, (3, 7, 9), (2, 2, 2), seed=5, ints=False)
    first = _run(x, dy, w_shape, (1, 1, 1), (0,) * 6, (1, 1, 1), 1, deterministic=True)[1]
    second = _run(x, dy, w_shape, (1, 1, 1), (0,) * 6, (1, 1, 1), 1, deterministic=True)[1]
    assert first.tobytes() == second.tobytes()
