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


def test_verify_mode_catches_an_incomplete_dw_short_key(monkeypatch):
    """The dw tile's short key without the API object's attributes (only the tile's Out2L1ScalarParams and the
    queue protocol): a hit on the template of a tile of another width is caught in verify mode, naming the
    attribute."""
    from kernels.conv3d_backprop_filter.kernel.api import Conv3DBackpropFilter

    unit = Conv3DBackpropFilter._compute.unit
    key = unit.key
    monkeypatch.setattr(unit, "key", lambda *args: key(*args)[-2:])
    monkeypatch.setenv("ASCEND_REPLAY", "verify")
    with pytest.raises(replay.ReplayMismatch, match=r"unit Conv3DBackpropFilter._compute on AIC \d+ .*short key "
                       r"matched a template whose full key differs .*attribute baseUseN: this call 144, the "
                       r"template's 256"):
        dw_run(False, "replay")


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
