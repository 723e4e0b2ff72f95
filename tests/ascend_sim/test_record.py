"""Records with named operands: every instruction declares its kind and operands type, every record's args is an
instance of it, readers use the field names (never positions), and a cost is callable from operands alone."""
import re

import numpy as np
import pytest
from conftest import run_kernel
from core_buffers import local
from paths import ROOT

from ascend_sim.ascendc import DataCopy, DataCopyParams, GlobalTensor, Mmad, MmadParams
from ascend_sim.engine.chip import current_core
from ascend_sim.isa.cube import MMAD, MmadOperands
from ascend_sim.isa.mte2 import DATA_COPY, CopyOperands
from ascend_sim.machine.pipes import Pipe
from ascend_sim.passes.schedule import CostModel
from ascend_sim.record import SPECS, Kind, define
from kernels import conv3d_backprop_input_v2_run

PACKAGES = ("ascend_sim", "frontends", "kernels", "tiling")


def _sources():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_no_reader_indexes_a_records_operands_by_position():
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for path in _sources() for n, line in enumerate(path.read_text().splitlines(), 1)
            if ".args[" in line]
    assert not hits, "operands are read by name (rec.args.field), not by position:\n" + "\n".join(hits)


def test_no_pass_recognises_a_synchronisation_instruction_by_its_name():
    sync_names = r"[\"'](SetFlag|WaitFlag|PipeBarrier|SyncAll|CrossCoreSetFlag|CrossCoreWaitFlag)[\"']"
    pattern = re.compile(r"\.name\s*(==|!=|in)\s*" + sync_names + r"|" + sync_names + r"\s*(==|!=)\s*\w+\.name")
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for path in _sources() for n, line in enumerate(path.read_text().splitlines(), 1)
            if pattern.search(line)]
    assert not hits, "dispatch on rec.spec.kind, not on the name:\n" + "\n".join(hits)


def test_every_instruction_has_a_kind_and_every_costed_one_its_operands_type():
    assert len(SPECS) > 40
    for spec in SPECS.values():
        assert isinstance(spec.kind, Kind), spec.name
        if spec.execute is not None:
            assert spec.operands is not None and hasattr(spec.operands, "_fields"), spec.name
    kinds = {name: spec.kind for name, spec in SPECS.items()}
    assert kinds["SetFlag"] is Kind.SET_FLAG and kinds["WaitFlag"] is Kind.WAIT_FLAG
    assert kinds["PipeBarrier"] is Kind.BARRIER and kinds["SyncAll"] is Kind.SYNC_ALL
    assert kinds["CrossCoreSetFlag"] is Kind.CROSS_CORE_SET and kinds["CrossCoreWaitFlag"] is Kind.CROSS_CORE_WAIT
    assert kinds["Mmad"] is Kind.COMPUTE and kinds["DataCopy"] is Kind.MOVE
    assert kinds["SetFmatrix"] is Kind.REGISTER_WRITE


def test_a_spec_with_a_cost_must_name_its_operands():
    with pytest.raises(ValueError, match="no operands type"):
        define("NoOperands", Pipe.V, kind=Kind.COMPUTE, cost=lambda ops, model: 1.0)


def test_every_record_of_a_run_carries_its_specs_operands():
    x = (1, 16, 3, 6, 6)
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 16, 2, 2, 2)).astype(np.float16)
    dy = rng.standard_normal((1, 16, 2, 5, 5)).astype(np.float16)
    records = []
    conv3d_backprop_input_v2_run(x, w, dy, strides=(1, 1, 1, 1, 1), pads=(0, 0, 0, 0, 0, 0), data_format="NCDHW",
                                 engine="exact", hooks=[lambda core, rec: records.append(rec)])
    assert records
    seen = set()
    for rec in records:
        if rec.args is not None:
            assert isinstance(rec.args, rec.spec.operands), rec.describe()
            seen.add(rec.spec.kind)
    assert {Kind.MOVE, Kind.COMPUTE} <= seen


def test_a_cost_from_operands_alone_is_what_the_scheduler_charged():
    """MmadOperands and CopyOperands built by hand (no record, no buffers) cost what the issued records took."""
    m, n, k = 40, 48, 64

    def body(src):
        core = current_core()
        Mmad(local(core, "L0C", np.float32), local(core, "L0A", np.float16), local(core, "L0B", np.float16),
             MmadParams(m, n, k))
        DataCopy(local(core, "L1", np.float16), GlobalTensor(np.float16).SetGlobalBuffer(src),
                 DataCopyParams(3, 4, 1, 2))

    chip, _ = run_kernel(body, np.zeros(4096, np.float16), check_races=False, record=True)
    core = chip.cores[0]
    model = CostModel(core.platform, 1)
    mmad = next(r for r in core.log if r.spec is MMAD)
    # 3 x 3 x 4 fractals of 16 x 16 x 16 at cube_k 16 (one per cycle) after the 6-cycle overhead
    assert MMAD.cost(MmadOperands(m1=3, n1=3, k1=4, c0=16, operand="float16"), model) == 6 + 36
    assert mmad.end - mmad.start == 6 + 36
    copy = next(r for r in core.log if r.spec is DATA_COPY)
    by_hand = DATA_COPY.cost(CopyOperands(nbytes=3 * 4 * 32), model)
    assert by_hand == model.rates.mte2_overhead + 384 / model.gm_read_rate
    assert copy.end - copy.start == by_hand
