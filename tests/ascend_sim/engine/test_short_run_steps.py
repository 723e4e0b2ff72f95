"""Short runs' steps (ascend_sim/engine/short_runs.py: dense LoadData 3Dv2 gathers, float16 Mmads into the L0C
chains and LoadData2D copies, run from the template's operands on the core's buffers) against the same runs'
records one by one (ShortRun off): Conv3DV2, dw and dx layers in float16, bfloat16 and float32, every byte of
every core's local buffers after the data pass, the result and the cycles equal, and the result equal to the
exact engine's; each case checks which steps ran. And the row copies of real records (a template's first call)
joined like a template's, with the bytes of the records one by one."""
import ml_dtypes
import numpy as np
import pytest
from core_buffers import keep_buffers_after_passes

from ascend_sim.engine import replay_data, replay_passes, short_runs
from ascend_sim.engine.short_runs import ShortRun
from ascend_sim.passes import fast_steps
from kernels import conv3d_backprop_filter_v2_run, conv3d_backprop_input_v2_run, conv3d_v2_run

DTYPES = [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)]


def _conv3d(x_shape, w_shape, strides, pads, seed):
    """A Conv3DV2 launch (dtype, engine) -> run of these shapes, with a bias."""
    def launch(dtype, engine):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(x_shape).astype(dtype)
        w = rng.standard_normal(w_shape).astype(dtype)
        b = rng.standard_normal(w_shape[0]).astype(dtype)
        return conv3d_v2_run(x, w, b, strides=strides, pads=pads, engine=engine)
    return launch


_forward = _conv3d((1, 64, 4, 8, 8), (32, 64, 3, 3, 3), (1, 1, 1, 1, 1), (1,) * 6, seed=2)
# VideoMAE-like (kernel = stride = 2x16x16): the weight goes GM -> L0B by LoadData2D(GM)
_patch_embedding = _conv3d((1, 3, 4, 64, 64), (64, 3, 2, 16, 16), (1, 1, 2, 16, 16), (0,) * 6, seed=1)


def _dw(dtype, engine):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 16, 4, 8, 8)).astype(dtype)
    dy = rng.standard_normal((1, 32, 4, 8, 8)).astype(dtype)
    return conv3d_backprop_filter_v2_run(x, (32, 16, 3, 3, 3), dy, strides=(1, 1, 1, 1, 1), pads=(1,) * 6,
                                         data_format="NCDHW", engine=engine)


def _dx(dtype, engine):
    rng = np.random.default_rng(0)
    dy = rng.standard_normal((1, 32, 4, 8, 8)).astype(dtype)
    w = rng.standard_normal((32, 32, 3, 3, 3)).astype(dtype)
    return conv3d_backprop_input_v2_run((1, 32, 4, 8, 8), w, dy, strides=(1, 1, 1, 1, 1), pads=(1,) * 6,
                                        data_format="NCDHW", engine=engine)


def _captured(monkeypatch, launch, steps=True, real_joins=True):
    """(result bytes, cycles, every core's local buffers after the data pass, steps run by kind, joined copies)
    of launch(); `steps`: short runs by their steps (else each record as itself); `real_joins`: real records'
    row copies joined."""
    buffers, ran, joined = [], {"load3d": 0, "mmad": 0}, []
    with monkeypatch.context() as m:
        if not steps:
            m.setattr(ShortRun, "compiled", classmethod(lambda cls, args_list: None))
        if not real_joins:
            close = replay_passes._RealRecords.close
            m.setattr(replay_passes._RealRecords, "close", lambda self: setattr(self, "joining", False) or close(self))
        for name in ran:
            real = getattr(short_runs, "_" + name)
            m.setattr(short_runs, "_" + name,
                      lambda *args, real=real, name=name: ran.__setitem__(name, ran[name] + 1) or real(*args))

        def moves(program, *args, real=fast_steps.run_moves):  # the fused steps' loads and Mmads, counted alike
            ran["load3d"] += int((program[:, 0] == fast_steps.LOAD3D).sum())
            ran["mmad"] += int((program[:, 0] == fast_steps.CONVERT).sum()) // 2
            real(program, *args)
        m.setattr(fast_steps, "run_moves", moves)
        real_copies = replay_data.copies
        m.setattr(replay_data, "copies", lambda *args: joined.append(args[1]) or real_copies(*args))
        keep_buffers_after_passes(m, buffers)
        run = launch()
    return run.result.tobytes(), run.report.cycles, buffers, ran, joined


@pytest.mark.parametrize("layer", [_forward, _patch_embedding, _dw, _dx], ids=["conv3d", "patch", "dw", "dx"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_short_run_steps_write_what_the_records_write(monkeypatch, layer, dtype):
    monkeypatch.setattr(replay_data, "SHORT_RUN_IMAGE", float("inf"))  # dx's short runs are not planned
    result, cycles, buffers, ran, _ = _captured(monkeypatch, lambda: layer(dtype, "replay"))
    assert ran["load3d"] > 0
    assert (ran["mmad"] > 0) == (dtype == np.float16)  # other dtypes' Mmads run as their records
    one_by_one = _captured(monkeypatch, lambda: layer(dtype, "replay"), steps=False)
    assert one_by_one[3] == {"load3d": 0, "mmad": 0}
    assert buffers and buffers == one_by_one[2]
    assert (result, cycles) == one_by_one[:2]
    assert result == layer(dtype, "exact").result.tobytes()


def test_real_records_join_their_copies_with_the_bytes_of_the_records(monkeypatch):
    """The patch embedding's templates' first calls load L0B by LoadData2D(GM) alike: joined like a template's."""
    launch = lambda: _patch_embedding(DTYPES[0], "replay")  # noqa: E731
    result, cycles, buffers, _, joined = _captured(monkeypatch, launch)
    apart = _captured(monkeypatch, launch, real_joins=False)
    assert len(joined) > len(apart[4]) and sum(joined) > sum(apart[4])
    assert buffers and buffers == apart[2]
    assert (result, cycles) == apart[:2]


@pytest.mark.parametrize("layer", [_forward, _patch_embedding], ids=["conv3d", "patch"])
@pytest.mark.parametrize("dtype", DTYPES, ids=[d.name for d in DTYPES])
def test_bias_mmads_in_the_chains_write_what_their_records_write(monkeypatch, layer, dtype):
    """Conv3DV2's first Mmad of each tile starts from the bias row: its sums kept in the L0C chains (and, in
    float16, its step fused) against every bias Mmad run as its record (the chains stored first) with the
    short runs' steps off."""
    biased = []
    chains_run = replay_data.L0CChains.run

    def counted(self, run, ops, core, names_l0c):
        biased.append(getattr(ops.args, "bias_bt", None) is not None)
        chains_run(self, run, ops, core, names_l0c)

    with monkeypatch.context() as m:
        m.setattr(replay_data.L0CChains, "run", counted)
        result, cycles, buffers, _, _ = _captured(monkeypatch, lambda: layer(dtype, "replay"))

    def as_record(self, run, ops, core, names_l0c):  # the pass before bias Mmads joined the chains
        if getattr(ops.args, "bias_bt", None) is not None:
            self.store(core)
            run(ops)
        else:
            chains_run(self, run, ops, core, names_l0c)

    with monkeypatch.context() as m:
        m.setattr(replay_data.L0CChains, "run", as_record)
        records = _captured(monkeypatch, lambda: layer(dtype, "replay"), steps=False)
    assert any(biased) != (dtype == np.float16)  # float16's bias Mmads are steps, others reach the chains
    assert buffers and buffers == records[2]
    assert (result, cycles) == records[:2]
