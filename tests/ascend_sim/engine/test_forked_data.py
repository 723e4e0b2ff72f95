"""The replay data pass on forked processes (ascend_sim/engine/forked_data.py, env ASCEND_DATA_PROCESSES): the
same bytes, records and reports as the one-process pass, the same first fault when a core's data work faults
in a child, and the cases that must stay in one process."""
import os
from collections import Counter

import numpy as np
import pytest

from ascend_sim import Chip
from ascend_sim.engine import forked_data, replay_data
from ascend_sim.isa.fixpipe import FIXPIPE
from ascend_sim.machine.faults import OutOfBounds
from ascend_sim.machine.memory import Buffer, GlobalMemory
from tests.ascend_sim.engine.test_engines import all_fields, dx_run

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform: one process only")


def _forked(monkeypatch) -> list:
    """ASCEND_DATA_PROCESSES=2 with the break-even lowered so small cases fork; the list gets each launch's
    shares (record arrays), first the parent's."""
    shares = []
    real = forked_data.run_shares

    def spy(works, rank):
        shares.append([work.args[2] for work in works])
        return real(works, rank)
    monkeypatch.setattr(forked_data, "run_shares", spy)
    monkeypatch.setattr(forked_data, "FORK_FROM", 0)
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", "2")
    return shares


@pytest.fixture
def forked(monkeypatch):
    return _forked(monkeypatch)


def _one_process(case, monkeypatch):
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", "1")
    return dx_run(case, True, "replay")


@pytest.mark.parametrize("case", ["C3D conv3a, shrunk", "R3D stem, shrunk", "U-Net down, shrunk, bf16",
                                  "MIX NCDHW, groups, odd channels, bf16"])
def test_forked_pass_gives_the_one_process_bytes_and_records(case, forked, monkeypatch):
    """... and replay_data.FALLBACKS' reasons (the children's counts sent back; a run refused in both processes
    is counted in each)."""
    before = Counter(replay_data.FALLBACKS)
    run = dx_run(case, True, "replay")
    fallbacks = replay_data.FALLBACKS - before
    assert len(forked) == 1 and len(forked[0]) == 2 and all(len(share) for share in forked[0])
    before = Counter(replay_data.FALLBACKS)
    one = _one_process(case, monkeypatch)
    once = replay_data.FALLBACKS - before
    assert set(once) == set(fallbacks) and all(fallbacks[reason] >= n for reason, n in once.items())
    assert run.result.tobytes() == one.result.tobytes()
    assert all_fields(run.report) == all_fields(one.report)
    assert run.report.to_dict() == one.report.to_dict()


def _faulting_fixpipe(monkeypatch, cores):
    """Fixpipe's data work faults on the given cube cores (by the race key of its L0C), naming core and address."""
    real = FIXPIPE.execute

    def execute(rec):
        core = rec.args.sbuf.key[0]
        if core in cores:
            raise OutOfBounds(f"injected on core {core} at GM byte {rec.args.d0}", buffer=rec.args.dbuf.name)
        return real(rec)
    monkeypatch.setattr(FIXPIPE, "execute", execute)


def _fault(case):
    with pytest.raises(OutOfBounds) as caught:
        dx_run(case, True, "replay")
    return caught.value


def _fixpipe_cores_run_here(case, monkeypatch) -> set:
    """The cube cores whose Fixpipes run in this process in a forked run: the parent's share (a child's changes
    to Python objects, as this set, stay in the child). Undoes the monkeypatches."""
    here = set()
    real = FIXPIPE.execute
    monkeypatch.setattr(FIXPIPE, "execute", lambda rec: here.add(rec.args.sbuf.key[0]) or real(rec))
    dx_run(case, True, "replay")
    monkeypatch.undo()
    return here


@pytest.mark.parametrize("where", ["child", "every core"])
def test_a_fault_in_a_child_comes_out_as_in_one_process(where, monkeypatch):
    """The first fault in the schedule's order, the same type, message and record: when only the child's cube
    cores fault (Fixpipe), and when every cube core faults."""
    case = "C3D conv3a, shrunk"
    _forked(monkeypatch)
    parent_cores = _fixpipe_cores_run_here(case, monkeypatch)
    shares = _forked(monkeypatch)
    dx_run(case, True, "replay")
    child_share = set(shares.pop()[1].tolist())
    _faulting_fixpipe(monkeypatch, set(range(64)) if where == "every core" else set(range(64)) - parent_cores)
    parallel = _fault(case)
    assert shares and len(shares[0]) == 2
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", "1")
    one = _fault(case)
    assert type(parallel) is type(one) and str(parallel) == str(one)
    assert parallel.data_pass_record == one.data_pass_record
    if where == "child":
        assert parallel.data_pass_record in child_share


def _raising(record):
    def work():
        fault = OutOfBounds(f"at record {record}")
        fault.data_pass_record = record
        raise fault
    return work


@pytest.mark.parametrize("parent, child, first", [(10, 5, 5), (5, 10, 5), (None, 7, 7), (3, None, 3)])
def test_the_first_fault_by_schedule_position_is_raised(parent, child, first):
    """run_shares raises the fault whose record comes first by rank, the parent's or a child's, whichever ended
    first in time; a child's writes into a shared memory reach the parent."""
    out = Buffer("UB", 64, 32, shared=True)

    def child_work():
        out.data[:] = 3
        if child is not None:
            _raising(child)()
    with pytest.raises(OutOfBounds, match=f"at record {first}$"):
        forked_data.run_shares([_raising(parent) if parent is not None else lambda: None, child_work],
                               lambda record: record)
    assert (out.data == 3).all()


def test_state_outside_the_memories_keeps_one_process(monkeypatch):
    """A buffer whose bytes are not in a shared mapping (the debugger swaps arrays), or a record whose semantics
    write Python-held registers, would lose a child's writes: can_fork refuses. With one process asked for, the
    memories are plain arrays (a process's mappings are limited), so can_fork refuses too."""
    chip = Chip()
    chip.gm.upload("x", np.zeros(64, np.float16))
    assert not chip.gm["x"].shared and not can_fork_plain(chip)
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", "2")
    chip = Chip()
    chip.gm.upload("x", np.zeros(64, np.float16))
    assert chip.gm["x"].shared and can_fork_plain(chip)
    chip.gm["x"].data = np.zeros(128, np.uint8)
    assert not chip.gm["x"].shared and not can_fork_plain(chip)
    chip = Chip()

    class Register:
        class spec:
            from ascend_sim.record import Kind
            kind = Kind.VECTOR_REGISTER
    assert not forked_data.can_fork(chip, [], [Register()])
    assert not forked_data.can_fork(Chip(blas_threads=None), [], [])


def can_fork_plain(chip):
    return forked_data.can_fork(chip, [], [])


def test_memories_are_shared_mappings():
    """Memories made shared (a chip made with ASCEND_DATA_PROCESSES > 1): a forked child's writes into a full run's memories reach the parent."""
    gm = GlobalMemory(shared=True)
    buf = gm.alloc("y", 4096)
    local = Buffer("UB", 1024, 32, shared=True)
    assert buf.shared and local.shared and not Buffer("L1", 16, 32, allocate=False).shared
    assert not Buffer("UB", 1024, 32).shared and not GlobalMemory().alloc("z", 64).shared  # the default: plain
    pid = os.fork()
    if pid == 0:
        buf.data[:] = 7
        local.data[5] = 9
        os._exit(0)
    os.waitpid(pid, 0)
    assert (buf.data == 7).all() and local.data[5] == 9 and local.data.sum() == 9


def test_a_short_run_stays_in_one_process(forked, monkeypatch):
    monkeypatch.setattr(forked_data, "FORK_FROM", 10 ** 9)
    dx_run("C3D conv3a, shrunk", True, "replay")
    assert forked == []


@pytest.mark.parametrize("value", ["0", "65", "two", ""])
def test_a_bad_process_count_is_refused_by_name_before_any_launch(value, monkeypatch):
    monkeypatch.setenv("ASCEND_DATA_PROCESSES", value)
    with pytest.raises(ValueError, match=rf"ASCEND_DATA_PROCESSES='{value}' is not a number of processes in "
                                         r"\[1, 64\]"):
        Chip()
