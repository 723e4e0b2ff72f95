"""The operator grids of the engine agreement corpus (test_engines.py: dx, dw, Conv3DV2, matmul) in replay's verify mode:
every hit is replayed on a snapshot, undone, run for real and compared (records, state, counters), and a hit found
by a unit's declared short key is first checked against the full key. So CI checks every declared key, anchor and
state change on these cases; the results must still be the exact engine's."""
import numpy as np
import pytest

from ascend_sim.engine import replay
from kernels.matmul import MatmulTiling
from tests.ascend_sim.engine.test_engines import (DX_CASES, MATMUL_SHAPES, all_fields, conv3d_v2_case_run, dw_run,
                                                dx_run, matmul_launch, observe, pointwise_run)


@pytest.fixture
def verified(monkeypatch):
    """Runs in verify mode; the list of the units whose hits were verified."""
    seen = []
    real_verify = replay.Replayer._verify

    def counting(self, u, *args):
        seen.append(u.name)
        return real_verify(self, u, *args)
    monkeypatch.setattr(replay.Replayer, "_verify", counting)
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    return seen


def _same(run, exact, execute=True):
    assert all_fields(run.report) == all_fields(exact.report)
    assert run.report.to_dict() == exact.report.to_dict()
    if execute:
        assert run.result.tobytes() == exact.result.tobytes()


@pytest.mark.parametrize("case", list(DX_CASES))
@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_dx_grid_in_verify_mode(case, execute, verified):
    _same(dx_run(case, execute, "replay"), dx_run(case, execute, "exact"), execute)
    assert "Conv3DBackpropInput._compute_kernel_plane" in verified or "Conv3DBackpropInput._compute" in verified


@pytest.mark.parametrize("deterministic", [False, True], ids=["atomic", "deterministic"])
def test_dw_grid_in_verify_mode(deterministic, verified):
    _same(dw_run(deterministic, "replay"), dw_run(deterministic, "exact"))
    assert "Conv3DBackpropFilter._compute" in verified


@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_conv3d_v2_grid_in_verify_mode(execute, verified):
    _same(conv3d_v2_case_run(execute, "replay"), conv3d_v2_case_run(execute, "exact"), execute)
    assert "Conv3D.IterateK" in verified


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_conv3d_v2_pointwise_grid_in_verify_mode(dtype, verified):
    _same(pointwise_run(dtype, "replay"), pointwise_run(dtype, "exact"))
    assert "Conv3D.IterateK" in verified


@pytest.mark.parametrize("shape", MATMUL_SHAPES)
def test_matmul_grid_in_verify_mode(shape, verified):
    assert observe("replay", matmul_launch(*shape)) == observe("exact", matmul_launch(*shape))
    m, n, k, _ = shape
    t = MatmulTiling.for_shape(m, n, k, "float16")
    tiles = -(-m // t.baseM) * -(-n // t.baseN)
    # each of these shapes has tiles of one size (a single tile, or whole baseM x baseN tiles): every tile after the
    # first replays it, on any core
    assert verified.count("MatmulTiles.ComputeTile") == tiles - 1


def _dw_timing_run(x_shape, cout, kernel, pads):
    """dw timing-only on the replay engine, stride 1, random fp16 operands (NCDHW)."""
    from kernels import conv3d_backprop_filter_v2_run

    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(np.float16)
    dy_dhw = [x_shape[2 + i] + pads[2 * i] + pads[2 * i + 1] - kernel[i] + 1 for i in range(3)]
    dy = rng.standard_normal((x_shape[0], cout, *dy_dhw)).astype(np.float16)
    return conv3d_backprop_filter_v2_run(x, (cout, x_shape[1], *kernel), dy, data_format="NCDHW", strides=(1,) * 5,
                                         pads=pads, engine="replay", execute=False, check_races=False)


# dw launches whose tiles replay across N blocks and cores (ho blocks) that differ in what the tile's key holds by
# what it decides (its extra, replay_keys._decided): the video-VAE causal conv of the benchmarks (8 ho blocks, 27 N
# tiles a core, a two-deep front pad), a short one with a kernel depth of 2, and a small one whose cores take
# different numbers of cin1 planes
DW_CAUSAL = ((1, 128, 5, 32, 32), 128, (3, 3, 3), (2, 0, 1, 1, 1, 1))
DW_SHORT = ((1, 128, 1, 32, 32), 128, (2, 3, 3), (1, 0, 1, 1, 1, 1))
DW_SMALL = ((1, 32, 5, 16, 16), 32, (3, 3, 3), (2, 0, 1, 1, 1, 1))


def test_verify_mode_catches_an_incomplete_dw_short_key(monkeypatch):
    """The dw tile's short key without the API object's attributes (only the queue protocol; the extra stays): on
    the causal conv a hit on the template of a tile with the other L0 ping-pong parity is caught in verify mode,
    naming the attribute. (Before a flag's balance of 0 left the core's balances, the balances told the parities
    apart and the first wrong hit was one with other B1 rows in L1, bL1HiCopyLenPing.)"""
    from kernels.conv3d_backprop_filter.kernel.api import Conv3DBackpropFilter

    unit = Conv3DBackpropFilter._compute.unit
    key = unit.key
    monkeypatch.setattr(unit, "key", lambda *args: key(*args)[-1:])
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3DBackpropFilter._compute on AIC \d+ .*short key "
                       r"matched a template whose full key differs .*attribute l0aPingPongFlag: this call \d+, "
                       r"the template's \d+"):
        _dw_timing_run(*DW_CAUSAL)


@pytest.mark.parametrize("case, dropped, what", [
    (DW_SMALL, 6, r"record 0 \(#\d+ DataCopy\) field params"),
    (DW_CAUSAL, 10, r"record 1 \(#\d+ WaitFlag\) field params"),
    (DW_SHORT, 11, r"record 0 \(#\d+ DataCopy\) field params")],
    ids=["cin1 planes", "B1 ping-pong parity", "B1 rows"])
def test_verify_mode_catches_an_incomplete_dw_extra(case, dropped, what, monkeypatch):
    """The dw tile's extra without one of the values the tile's and core's indices decide: a tile of another N
    block or core replays a template whose records differ, and verify mode names the record and field. (The N
    tile's first column inside its B1 planes, the extra's eighth value, is not caught alone on these launches: the
    load parameters the previous tile left, in the key, follow the N loop; the A side's values have one M block.)"""
    from kernels.conv3d_backprop_filter.kernel.api import Conv3DBackpropFilter

    unit = Conv3DBackpropFilter._compute.unit
    extra = unit.extra
    monkeypatch.setattr(unit, "extra", lambda *args: tuple(v for i, v in enumerate(extra(*args)) if i != dropped))
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3DBackpropFilter._compute on AIC \d+ .*" + what):
        _dw_timing_run(*case)


@pytest.mark.parametrize("case", [DW_CAUSAL, DW_SHORT, DW_SMALL], ids=["causal", "short", "small"])
def test_dw_tiles_replay_across_n_blocks_and_cores(case, verified):
    """The three launches above in verify mode: every hit, across N blocks and ho blocks, replays what the real call
    does."""
    run = _dw_timing_run(*case)
    assert verified.count("Conv3DBackpropFilter._compute") > run.report.instructions // 100


def test_verify_mode_catches_an_incomplete_conv3d_v2_short_key(monkeypatch):
    """Conv3DV2's block short key without the API object's and the tools' values (only the queue protocol): a hit
    on the template of a core with another Cout tail is caught in verify mode, naming the attribute."""
    from kernels.conv3d_v2.kernel.api import Conv3D

    unit = Conv3D.IterateK.unit
    key = unit.key
    monkeypatch.setattr(unit, "key", lambda api: key(api)[-1:])
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3D.IterateK on AIC \d+ .*short key matched a template "
                       r"whose full key differs .*attribute nL0Tail: this call 1, the template's 16"):
        conv3d_v2_case_run(False, "replay")


def test_conv3d_v2_key_layouts_name_the_attributes():
    """The key's layout numbers stand for the attribute names in order: other names or another order, another
    number; an attribute that held a stateful object (left out) and now holds a plain value is keyed by value."""
    from ascend_sim.ascendc import TPipe
    from kernels.conv3d_v2.kernel.replay_keys import _named_values

    class Tool:
        pass

    a, b, c = Tool(), Tool(), Tool()
    a.x, a.y = 1, 2
    b.y, b.x = 2, 1
    c.x, c.y = 1, 2
    assert _named_values(a) == _named_values(c) and _named_values(a)[1:] == (1, 2)
    assert _named_values(a)[0] != _named_values(b)[0]
    a.pipe = c.pipe = TPipe.__new__(TPipe)
    assert _named_values(a) == _named_values(c) and _named_values(a)[1:] == (1, 2)
    c.pipe = 7
    assert _named_values(c)[1:] == (1, 2, 7) and _named_values(c)[0] != _named_values(a)[0]


@pytest.mark.parametrize("run", [lambda: dw_run(False, "replay"), lambda: conv3d_v2_case_run(False, "replay"),
                                 lambda: pointwise_run(np.float16, "replay")], ids=["dw", "conv3d_v2", "pointwise"])
def test_declared_short_key_hits_walk_no_state(run, monkeypatch):
    """With the dw tile's and Conv3DV2 block's declared short keys the state is walked only around a call run for
    real (before and after it, to make the template): a hit walks nothing."""
    walks = []
    real_state = replay._State
    monkeypatch.setattr(replay, "_State", lambda *args: walks.append(1) or real_state(*args))
    replayers = []
    real_call = replay.Replayer.call
    monkeypatch.setattr(replay.Replayer, "call", lambda self, *args: replayers.append(self) or real_call(self, *args))
    run()
    replayer = replayers[-1]
    assert replayer.hits > 0 and len(walks) == 2 * len(replayer.templates)


# Conv3DV2 launches whose blocks replay on cores that differ in what the block's key holds by what it decides
# rather than by value (issue 23, branch h27v2: the core's first input depth, its group-opt block count): a small
# VideoMAE-like patch embedding (kernel = stride, no pads, a depth split), a depth split with a front and a
# two-deep back pad (batch 2, so that a block of the first batch shifted to another core's depth stays inside x
# and a wrong key is not hidden by the bounds check of the GM shifts), and tail cores (SetSingleOutputShape sets
# their singleCoreGroupOpt to 0)
SHARED_BLOCK_CASES = {  # x shape, weight shape, strides (D, H, W), pads, dtype, what the sharing cores differ in
    "VideoMAE-like patch embedding": ((1, 3, 16, 64, 64), (64, 3, 2, 16, 16), (2, 16, 16), (0,) * 6, np.float16,
                                      "diStartPos"),
    "depth pads 1 and 2": ((2, 16, 12, 8, 8), (16, 16, 3, 3, 3), (1, 1, 1), (1, 2, 1, 1, 1, 1), np.float16,
                           "diStartPos"),
    "tail cores": ((1, 16, 4, 12, 12), (32, 16, 3, 3, 3), (1, 1, 1), (1,) * 6, np.float32, "singleCoreGroupOpt"),
}


def _shared_block_run(case, engine, execute=True):
    from kernels import conv3d_v2_run

    x_shape, w_shape, strides, pads, dtype, _ = SHARED_BLOCK_CASES[case]
    rng = np.random.default_rng(8)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype)
    return conv3d_v2_run(x, w, b, strides=(1, 1, *strides), pads=pads, engine=engine, execute=execute)


@pytest.fixture
def block_cores(monkeypatch):
    """Per Conv3DV2 block hit: (the API object of the call that made the template, as {attribute: value} of the
    attributes in SHARED_BLOCK_CASES, that of the call replaying it)."""
    made, hits = {}, []
    real_template, real_replay = replay._template, replay.Replayer._replay
    attributes = {case[-1] for case in SHARED_BLOCK_CASES.values()}

    def values(api):
        return {name: getattr(api, name) for name in attributes}

    def template(u, core, roots, *args):
        made_now = real_template(u, core, roots, *args)
        if made_now is not None and u.name == "Conv3D.IterateK":
            made[id(made_now)] = values(roots[0])
        return made_now

    def replayed(self, core, objects, template, shifts):
        if template.unit == "Conv3D.IterateK":
            hits.append((made[id(template)], values(objects[0])))
        return real_replay(self, core, objects, template, shifts)
    monkeypatch.setattr(replay, "_template", template)
    monkeypatch.setattr(replay.Replayer, "_replay", replayed)
    return hits


@pytest.mark.parametrize("mode", ["on", "verify"])
@pytest.mark.parametrize("case", list(SHARED_BLOCK_CASES))
def test_conv3d_v2_blocks_replay_across_cores(case, mode, block_cores, monkeypatch):
    """Blocks replay on cores at another first input depth (GM shifted by the input's anchor) or with another
    group-opt block count, and the records, report and result are the exact engine's; in verify mode every such
    hit is also run for real and compared."""
    monkeypatch.setenv("ASCEND_REPLAY", mode)
    run = _shared_block_run(case, "replay")
    attribute = SHARED_BLOCK_CASES[case][-1]
    assert any(made[attribute] != now[attribute] for made, now in block_cores)
    monkeypatch.setenv("ASCEND_REPLAY", "off")
    _same(run, _shared_block_run(case, "exact"))


@pytest.mark.parametrize("dropped", [0, 1], ids=["first plane of the GM offsets", "back pad's reach"])
def test_verify_mode_catches_an_incomplete_conv3d_v2_depth_window(dropped, monkeypatch):
    """Conv3DV2's block key without one of the two values the core's first input depth decides (in its unit's extra,
    `_depth_window`): a block of a core with another front or back pad replays a template whose records differ,
    and verify mode names the record and field. (The extra's third value, whether the block is the core's last
    group-opt block, decides nothing the key's other attributes do not in the launches tried: kept as the one
    use of maxGroupOptIter inside a block.)"""
    from kernels.conv3d_v2.kernel.api import Conv3D

    unit = Conv3D.IterateK.unit
    extra = unit.extra
    monkeypatch.setattr(unit, "extra", lambda api: tuple(v for i, v in enumerate(extra(api)) if i != dropped))
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3D.IterateK on AIC \d+ .*record \d+ \(#\d+ \w+\) "
                       r"field spec: replayed <instruction (InitConstValue|DataCopy)"):
        _shared_block_run("depth pads 1 and 2", "replay", execute=False)


def test_verify_mode_catches_a_dx_key_without_its_instruction_parameters(monkeypatch):
    """dx's tile and kernel-plane short key without the instruction parameters the previous call left (the Mmad's,
    LoadData3Dv2's and LoadData2D's fields, `replay_keys._parameters`): on the 3D U-Net down layer of the benchmarks
    a kernel plane whose LoadData3Dv2 window height differs hits another's template, and verify mode names the
    attribute."""
    from kernels import conv3d_backprop_input_v2_run
    from kernels.conv3d_backprop_input.kernel.arch22.api import Conv3DBackpropInput

    for method in (Conv3DBackpropInput._compute, Conv3DBackpropInput._compute_kernel_plane):
        key = method.unit.key  # (... attributes, parameters, queue protocol)
        monkeypatch.setattr(method.unit, "key", lambda *args, key=key: key(*args)[:-2] + key(*args)[-1:])
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    rng = np.random.default_rng(0)
    dy = rng.standard_normal((1, 64, 8, 32, 32)).astype(np.float16)
    w = rng.standard_normal((64, 32, 3, 3, 3)).astype(np.float16)
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3DBackpropInput._compute_kernel_plane on AIC \d+ .*"
                       r"short key matched a template whose full key differs .*attribute l1H: this call \d+, "
                       r"the template's \d+"):
        conv3d_backprop_input_v2_run((1, 32, 16, 64, 64), w, dy, data_format="NCDHW", strides=(1, 1, 2, 2, 2),
                                     pads=(1,) * 6, engine="replay", execute=False, check_races=False)
