"""Loads into L0A / L0B held pending and Mmads gathering from L1 (ascend_sim/engine/pending_loads.py) against the
same records run one by one with every load copied (isa/mte1.py's LoadData2D and LoadData 3Dv2, isa/mte2.py's
DataCopy, isa/cube.py's Mmad semantics): every byte of L1, L0A, L0B and L0C, what a record reading L0A in
between sees, a load's L1 source overwritten before its Mmad, an Mmad reading L0 bytes only partly pending, a
record raising inside the run; and L0C against a float64 product of the operands taken from L1 by plain numpy."""
from collections import namedtuple

import numpy as np
import pytest

from ascend_sim.engine import replay_data, replay_passes
from ascend_sim.engine.pending_loads import PendingLoads
from ascend_sim.engine.short_runs import ShortRun
from ascend_sim.isa.cube import MmadOperands, _mmad_execute
from ascend_sim.isa.mte1 import Load2DOperands, Load3DOperands, _load2d_execute, _load3d_execute
from ascend_sim.isa.mte2 import CopyOperands, _datacopy_execute
from ascend_sim.machine.memory import Buffer

F16 = np.dtype(np.float16)
M1, K1, N1, C0 = 2, 3, 2, 16  # fp16: m 32, k 48, n 32
A_BYTES, B_BYTES, C_BYTES = M1 * K1 * 512, K1 * N1 * 512, N1 * M1 * 1024
A_ELEMENTS = A_BYTES // 2
SPAN = 4096  # elements of L1 an img2col reads
B_AT = 40960  # L1 byte where the B fractals start
Probe = namedtuple("Probe", "sbuf dbuf")  # a record of another kind reading sbuf (a Fixpipe, a vector copy)


def _buffers(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    buffers = {"L1": Buffer("L1", 65536, 32), "L0A": Buffer("L0A", 16384, 512), "L0B": Buffer("L0B", 16384, 512),
               "L0C": Buffer("L0C", 16384, 1024), "GM": Buffer("GM:x", 65536, 32)}
    for name in ("L1", "L0A", "L0B", "GM"):
        buffers[name].data[:] = rng.standard_normal(buffers[name].capacity // 2).astype(F16).view(np.uint8)
    buffers["L0C"].data[:] = rng.standard_normal(4096).astype(np.float32).view(np.uint8)
    return buffers


def _maps(seed: int, rows: bool) -> tuple:
    """An img2col-like gather of A_ELEMENTS elements from SPAN (C0 blocks when `rows`, else single elements) and
    its pad positions (whole blocks, and a few single elements when not `rows`)."""
    rng = np.random.default_rng(seed)
    if rows:
        index = (rng.integers(0, SPAN // C0, A_ELEMENTS // C0)[:, None] * C0 + np.arange(C0)).reshape(-1)
        pads = (rng.choice(A_ELEMENTS // C0, 5, replace=False)[:, None] * C0 + np.arange(C0)).reshape(-1)
    else:
        index = rng.integers(0, SPAN, A_ELEMENTS)
        pads = np.sort(rng.choice(A_ELEMENTS, 40, replace=False))
    return index, np.sort(pads)


MAPS = [_maps(1, True), _maps(2, False)]


def _load_a(b, step: int, maps, s0: int):
    index, pads = maps
    ops = Load3DOperands(b["L1"], s0, SPAN, b["L0A"], (step % 2) * A_BYTES, A_ELEMENTS, A_ELEMENTS, F16, index,
                         pads, None, 0.5, 1, 1, A_BYTES)
    return _load3d_execute, replay_passes._Operands(ops, ()), False


def _loads_b(b, step: int, s0: int) -> list:
    """B of a step by three transposed LoadData2D of two fractals each (C3D's form: sources going down)."""
    return [(_load2d_execute, replay_passes._Operands(Load2DOperands(
        b["L1"], s0 - 1024 * k, 512, b["L0B"], (step % 2) * B_BYTES + 1024 * k, 512, 2, True, F16, 1024), ()), False)
        for k in range(3)]


def _mmad(b, step: int, init: bool):
    ops = MmadOperands(b["L0A"], (step % 2) * A_BYTES, A_BYTES, b["L0B"], (step % 2) * B_BYTES, B_BYTES, b["L0C"], 0,
                       C_BYTES, F16, M1 * 16, K1 * C0, M1, N1, K1, C0, init, False, "float16", None, None, False)
    return _mmad_execute, replay_passes._Operands(ops, ()), True


def _copy_to_l1(b, d0: int, rows: int, blen: int):
    ops = CopyOperands(b["GM"], 0, blen, b["L1"], d0, blen, rows, blen, rows * blen)
    return _datacopy_execute, replay_passes._Operands(ops, ()), False


def _steps(b, count: int, maps) -> list:
    """`count` K steps of a C3D-like short run: A by an img2col, B by three LoadData2D, an Mmad into one L0C block
    (ping-pong halves of L0A and L0B: a step's loads overwrite those of two steps before)."""
    records = []
    for step in range(count):
        records += [_load_a(b, step, maps, 64 * step), *_loads_b(b, step, B_AT + 4096 * step), _mmad(b, step, step == 0)]
    return records


def _one_by_one(records) -> None:
    for run, ops, _ in records:
        run(ops)


def _pending(records, counted: list) -> PendingLoads:
    chains = PendingLoads([True])
    for run, ops, names_l0c in records:
        chains.run(_counting(run, counted), ops, 0, names_l0c)
    chains.store_all()
    return chains


def _counting(run, counted: list):
    def counted_run(ops):
        counted.append(run.__name__)
        run(ops)
    return counted_run


def _same(one, other) -> None:
    for name in ("L1", "L0A", "L0B", "L0C"):
        assert one[name].data.tobytes() == other[name].data.tobytes(), name


@pytest.mark.parametrize("maps", MAPS, ids=["C0 blocks", "elements"])
def test_held_loads_give_the_bytes_of_the_records_one_by_one(maps):
    reference, pending = _buffers(0), _buffers(0)
    _one_by_one(_steps(reference, 4, maps))
    counted: list = []
    _pending(_steps(pending, 4, maps), counted)
    _same(reference, pending)
    # the loads of steps 0 and 1 were overwritten whole before anything but their Mmads read them: never run;
    # those of steps 2 and 3 are what L0A / L0B hold at the end
    assert counted.count("_load3d_execute") == 2 and counted.count("_load2d_execute") == 6
    assert counted.count("_mmad_execute") == 0  # every Mmad gathered its operands from L1


def test_l0c_against_a_numpy_product_of_the_l1_operands():
    """L0C after four steps against float64 sums of A . B with A and B taken from L1 by plain numpy (the maps, the
    pads, the transposed fractals), to a tolerance."""
    b = _buffers(3)
    l1 = b["L1"].data.view(np.float16).astype(np.float64)
    c = np.zeros((M1 * 16, N1 * 16))
    index, pads = MAPS[0]
    for step in range(4):
        a = l1[64 * step // 2:][index].copy()
        a[pads] = 0.5
        a = a.reshape(M1, K1, 16, C0).transpose(0, 2, 1, 3).reshape(M1 * 16, K1 * C0)  # ZZ
        fractals = [l1[(B_AT + 4096 * step - 1024 * k) // 2 + 256 * r:][:256].reshape(16, 16).T
                    for k in range(3) for r in range(2)]  # each transposed, in L0B's order
        zn = np.stack(fractals).reshape(K1, N1, 16, C0)
        c += a @ zn.transpose(0, 3, 1, 2).reshape(K1 * C0, N1 * 16)
    _pending(_steps(b, 4, MAPS[0]), [])
    nz = b["L0C"].data[:C_BYTES].view(np.float32).reshape(N1, M1 * 16, 16).transpose(1, 0, 2).reshape(M1 * 16, -1)
    np.testing.assert_allclose(nz, c, rtol=1e-5, atol=1e-3)


def test_a_source_overwritten_before_its_mmad():
    """A DataCopy into L1 over the A source of step 2's pending load, between the load and its Mmad: the load
    copies the old bytes first (the Mmad reads them from L0A), the B loads, whose sources it misses, stay
    pending."""
    def program(b):
        records = _steps(b, 4, MAPS[0])
        return records[:12] + [_copy_to_l1(b, 128, 8, 256)] + records[12:]
    reference, pending = _buffers(4), _buffers(4)
    _one_by_one(program(reference))
    counted: list = []
    _pending(program(pending), counted)
    _same(reference, pending)
    assert counted.count("_datacopy_execute") == 1 and counted.count("_load3d_execute") == 3


def test_a_copy_missing_every_source_leaves_the_loads_pending():
    def program(b):
        records = _steps(b, 4, MAPS[0])
        return records[:12] + [_copy_to_l1(b, 30000, 4, 512)] + records[12:]
    reference, pending = _buffers(5), _buffers(5)
    _one_by_one(program(reference))
    counted: list = []
    _pending(program(pending), counted)
    _same(reference, pending)
    assert counted.count("_load3d_execute") == 2


@pytest.mark.parametrize("at", [11, 12, 17])
def test_l0a_read_by_another_record(at):
    """A record of another kind reading L0A between loads and Mmads sees the bytes the loads wrote."""
    def program(b, seen):
        def probe(ops):
            seen.append(ops.args.sbuf.data.tobytes())
        records = _steps(b, 4, MAPS[1])
        return records[:at] + [(probe, replay_passes._Operands(Probe(b["L0A"], b["L1"]), ()), False)] + records[at:]
    reference, pending = _buffers(6), _buffers(6)
    seen_reference, seen_pending = [], []
    _one_by_one(program(reference, seen_reference))
    _pending(program(pending, seen_pending), [])
    assert seen_pending == seen_reference
    _same(reference, pending)


def test_an_mmad_reading_l0_bytes_partly_pending():
    """One LoadData2D fractal into the middle of L0A's ping half, then an Mmad reading the whole half: the pending
    load is copied and the Mmad reads L0A."""
    def program(b):
        load = (_load2d_execute, replay_passes._Operands(Load2DOperands(
            b["L1"], 2048, 512, b["L0A"], 1024, 512, 1, False, F16, 512), ()), False)
        return [load, *_loads_b(b, 0, B_AT), _mmad(b, 0, True)]
    reference, pending = _buffers(7), _buffers(7)
    _one_by_one(program(reference))
    counted: list = []
    _pending(program(pending), counted)
    _same(reference, pending)
    assert counted.count("_mmad_execute") == 0 and counted.count("_load2d_execute") == 4


def test_joined_loads_held_and_gathered():
    """A ShortRun's three joined LoadData2D held as one pending load, its Mmad gathering B from L1."""
    reference, pending = _buffers(8), _buffers(8)
    _one_by_one(_steps(reference, 4, MAPS[0]))
    records = _steps(pending, 4, MAPS[0])
    plan = ShortRun.compiled([ops.args for _, ops, _ in records])
    assert plan is not None and any(count == 3 for _, count, _, _ in plan.steps)
    chains = PendingLoads([True])
    plan.run(chains, 0, list(range(len(records))), [run for run, _, _ in records], [ops for _, ops, _ in records],
             [flag for _, _, flag in records])
    assert chains.pending[0]  # the last steps' loads still pending
    chains.store_all()
    _same(reference, pending)


def test_a_core_sharing_its_buffers_copies_every_load():
    reference, pending = _buffers(9), _buffers(9)
    _one_by_one(_steps(reference, 4, MAPS[0]))
    counted: list = []
    chains = PendingLoads([False])
    for run, ops, names_l0c in _steps(pending, 4, MAPS[0]):
        chains.run(_counting(run, counted), ops, 0, names_l0c)
    chains.store_all()
    _same(reference, pending)
    assert counted.count("_load3d_execute") == 4 and counted.count("_mmad_execute") == 4


def test_a_record_raising_inside_the_run():
    """run_in_order makes the pending loads real on its way out of an error: L0A, L0B and L0C then hold what the
    records one by one left before the failing one."""
    def fails(ops):
        raise RuntimeError("a record's semantics failed")

    def program(b):
        records = _steps(b, 4, MAPS[0])
        return records[:13] + [(fails, replay_passes._Operands(Probe(b["L1"], b["L1"]), ()), False)] + records[13:]
    reference, pending = _buffers(10), _buffers(10)
    _one_by_one(program(reference)[:13])
    records = program(pending)
    n = len(records)
    with pytest.raises(RuntimeError, match="failed") as raised:  # every record through PendingLoads.run
        replay_data.run_in_order([run for run, _, _ in records], [ops for _, ops, _ in records], list(range(n)),
                                 kinds=np.full(n, replay_data.OTHER, np.int8), origins=np.full(n, -1, np.int64), core_of=np.zeros(n, np.int64),
                                 buffers_of=[pending], plans={}, gathers={}, own_l0c=[True],
                                 names_l0c=np.array([flag for _, _, flag in records]), chains_type=PendingLoads)
    assert raised.value.data_pass_record == 13
    _same(reference, pending)
    assert pending["L0A"].data.tobytes() != _buffers(10)["L0A"].data.tobytes()
