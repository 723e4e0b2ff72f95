"""The Mmad sums a replay run's data pass keeps between records (replay_data.L0CChains) against the same records
run one by one on isa/cube.py's Mmad semantics (every byte of L0C, and what a record reading L0C in between
sees), and against a float64 numpy product of the operands (an independent reference, to a tolerance)."""
from collections import namedtuple

import numpy as np
import pytest

from ascend_sim.engine import replay_data, replay_passes
from ascend_sim.engine.replay_data import L0CChains
from ascend_sim.isa.cube import MmadOperands, _mmad_execute
from ascend_sim.machine.memory import Buffer
from kernels import conv3d_backprop_input_v2_run

M1, K1, N1, C0 = 2, 3, 2, 16  # fp16: m 32, k 48, n 32
A_BYTES, B_BYTES, C_BYTES = M1 * K1 * 512, K1 * N1 * 512, N1 * M1 * 1024
Probe = namedtuple("Probe", "sbuf dbuf")  # a stand-in for a record reading L0C (a Fixpipe) or not (a load)


def _buffers(seed: int):
    rng = np.random.default_rng(seed)
    l0a, l0b, l0c = Buffer("L0A", 4 * A_BYTES, 512), Buffer("L0B", 4 * B_BYTES, 512), Buffer("L0C", 4 * C_BYTES, 1024)
    l0a.data[:] = rng.standard_normal(l0a.capacity // 2).astype(np.float16).view(np.uint8)
    l0b.data[:] = rng.standard_normal(l0b.capacity // 2).astype(np.float16).view(np.uint8)
    l0c.data[:] = rng.standard_normal(l0c.capacity // 4).astype(np.float32).view(np.uint8)
    return l0a, l0b, l0c


def _mmad(l0a, l0b, l0c, step: int, c_at: int, init: bool):
    args = MmadOperands(l0a, step * A_BYTES, A_BYTES, l0b, step * B_BYTES, B_BYTES, l0c, c_at, C_BYTES,
                        np.dtype(np.float16), M1 * 16, K1 * C0, M1, N1, K1, C0, init, False, "float16", None, None,
                        False)
    return _mmad_execute, replay_passes._Operands(args, ()), True


def _program(l0a, l0b, l0c, seen: list):
    """Records of one core, (semantics, operands, whether they name L0C): a chain of Mmads on one L0C block with
    loads between, a read of L0C, the chain going on from L0C, a second block, an init Mmad in the middle of a
    chain."""
    l1 = Buffer("L1", 1024, 32)

    def probe(ops):
        seen.append(ops.args.sbuf.data.tobytes())

    def load(ops):
        seen.append("load")

    mmad = lambda step, c_at, init: _mmad(l0a, l0b, l0c, step, c_at, init)
    return [mmad(0, 0, True), (load, replay_passes._Operands(Probe(l1, l0a), ()), False), mmad(1, 0, False),
            mmad(2, 0, False), (probe, replay_passes._Operands(Probe(l0c, l1), ()), True), mmad(3, 0, False),
            mmad(0, C_BYTES, False), mmad(1, C_BYTES, True), mmad(2, C_BYTES, False), mmad(3, 0, False)]


def _reference(l0a, l0b, l0c_before) -> np.ndarray:
    """L0C after _program, in float64 from the operands' values (ZZ A, ZN B, NZ C decoded here)."""
    a = [l0a.data[s * A_BYTES:(s + 1) * A_BYTES].view(np.float16).reshape(M1, K1, 16, C0).transpose(0, 2, 1, 3)
         .reshape(M1 * 16, K1 * C0).astype(np.float64) for s in range(4)]
    b = [l0b.data[s * B_BYTES:(s + 1) * B_BYTES].view(np.float16).reshape(K1, N1, 16, C0).transpose(0, 3, 1, 2)
         .reshape(K1 * C0, N1 * 16).astype(np.float64) for s in range(4)]
    c = l0c_before.view(np.float32).astype(np.float64)
    first = a[0] @ b[0] + a[1] @ b[1] + a[2] @ b[2] + a[3] @ b[3] + a[3] @ b[3]
    second = a[1] @ b[1] + a[2] @ b[2]  # its init Mmad drops what the first Mmad on it added to L0C
    out = c.copy()
    for i, block in enumerate((first, second)):
        out[i * C_BYTES // 4:(i + 1) * C_BYTES // 4] = block.reshape(M1 * 16, N1, 16).transpose(1, 0, 2).reshape(-1)
    return out


def _count_stores(monkeypatch) -> list:
    """Per L0CChains.store call from now on: whether it had sums to store."""
    calls = []
    real_store = L0CChains.store

    def store(self, core):
        calls.append(core in self.chains)
        real_store(self, core)
    monkeypatch.setattr(L0CChains, "store", store)
    return calls


@pytest.mark.parametrize("own", [True, False])
def test_kept_sums_give_the_bytes_of_the_records_run_one_by_one(own, monkeypatch):
    """On a core whose L0C is its own the sums are kept (one NZ store a chain); on a shared one every Mmad runs
    as its record. Either way: the bytes and what a record reading L0C sees are the records' one by one."""
    one_by_one, kept = _buffers(0), _buffers(0)
    before = one_by_one[2].data.copy()
    seen_one, seen_kept = [], []
    for run, ops, _ in _program(*one_by_one, seen_one):
        run(ops)
    stores = _count_stores(monkeypatch)
    chains = L0CChains([own])
    for run, ops, names_l0c in _program(*kept, seen_kept):
        chains.run(run, ops, 0, names_l0c)
    chains.store_all()
    assert seen_kept == seen_one and len(seen_one) == 2
    assert kept[2].data.tobytes() == one_by_one[2].data.tobytes()
    # stored when L0C is read, each time the chain moves to another block (twice), and at the end; not at the load
    assert stores.count(True) == (4 if own else 0)
    np.testing.assert_allclose(kept[2].data.view(np.float32), _reference(kept[0], kept[1], before), rtol=1e-5,
                               atol=1e-4)


def test_a_dx_run_keeps_its_sums_and_equals_the_exact_engine(monkeypatch):
    """C3D-like short runs (3 Mmads, left to the records): the replay run keeps its chains' sums and its result
    is the exact engine's byte for byte."""
    kept = _count_stores(monkeypatch)
    monkeypatch.setattr(replay_data, "SHORT_RUN_IMAGE", float("inf"))  # no short run planned for its L1 window
    rng = np.random.default_rng(1)
    x = (1, 32, 4, 8, 8)
    dy = rng.standard_normal((1, 32, 4, 8, 8)).astype(np.float16)
    w = rng.standard_normal((32, 32, 3, 3, 3)).astype(np.float16)
    common = dict(strides=(1, 1, 1, 1, 1), pads=(1, 1, 1, 1, 1, 1), data_format="NCDHW")
    replayed = conv3d_backprop_input_v2_run(x, w, dy, engine="replay", **common)
    assert any(kept) and replay_data.MIN_MMADS > 3
    exact = conv3d_backprop_input_v2_run(x, w, dy, engine="exact", **common)
    assert replayed.result.tobytes() == exact.result.tobytes()


def test_the_kept_sums_are_stored_when_a_record_raises():
    """run_in_order stores the kept sums on its way out of an error: L0C then holds what the records one by one
    left before the failing one."""
    one_by_one, kept = _buffers(2), _buffers(2)

    def fails(ops):
        raise RuntimeError("a record's semantics failed")
    program = lambda bufs: [_mmad(*bufs, 0, 0, True), _mmad(*bufs, 1, 0, False),
                            (fails, replay_passes._Operands(Probe(bufs[0], bufs[1]), ()), False)]  # no L0C named
    for run, ops, _ in program(one_by_one)[:2]:
        run(ops)
    records = program(kept)
    n = len(records)
    with pytest.raises(RuntimeError, match="failed"):
        replay_data.run_in_order([run for run, _, _ in records], [ops for _, ops, _ in records], list(range(n)),
                                 kinds=np.full(n, replay_data.OTHER, np.int8), origins=np.full(n, -1, np.int64),
                                 core_of=np.zeros(n, np.int64), buffers_of=[{}], plans={}, gathers={},
                                 own_l0c=[True], names_l0c=np.array([flag for _, _, flag in records]))
    assert kept[2].data.tobytes() == one_by_one[2].data.tobytes()
    assert kept[2].data.tobytes() != _buffers(2)[2].data.tobytes()  # the Mmads did write L0C
