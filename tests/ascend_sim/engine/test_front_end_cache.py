"""The cached front end (ascend_sim/engine/front_end_cache.py) changes nothing observable: every case of the engine
agreement corpus (test_engines.py) runs with the cache on and off, and every record field, the order the passes
ran, the report, the GM bytes, the result bytes and the faults (type, message, core, instruction, source line)
are compared. The cache must also be used (hits counted), and a GM bounds fault must still fire on a hit."""
import dataclasses
import types

import numpy as np
import pytest
from conftest import l1_and_l0a

import ascend_sim.engine.chip as chip_module
from ascend_sim import Chip, SimFault
from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, LoadData, LoadData3DParamsV2,
                                SetFlag, SetFmatrix, WaitFlag)
from ascend_sim.engine.descriptor import FrontEndCache
from ascend_sim.machine.memory import Buffer
from ascend_sim.record import Record, Spec
from tests.ascend_sim.engine import test_engines as corpus


@pytest.fixture
def caches(monkeypatch):
    """The FrontEndCache of every launch made during the test, in order. Replay is off here: a replayed API unit
    issues no call, so the cache's hit counts would measure the replay (the replay engine's agreement tests run with
    the cache on)."""
    monkeypatch.setenv("ASCEND_REPLAY", "off")
    made = []

    class Kept(FrontEndCache):
        def __init__(self):
            super().__init__()
            made.append(self)
    monkeypatch.setattr(chip_module, "FrontEndCache", Kept)
    return made


def _canon(value):
    """A comparable form of a record field: buffers by core and name, arrays by bytes, types kept (2 != 2.0)."""
    if isinstance(value, Record):
        return ("record", value.core, value.seq)
    if isinstance(value, Buffer):
        return ("buffer", value.key, value.capacity)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_canon(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _canon(v)) for k, v in value.items()))
    if isinstance(value, Spec):
        return ("spec", value.name)
    if isinstance(value, types.CodeType):
        return ("code", value.co_filename, value.co_name, value.co_firstlineno)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return ("function", value.__module__, value.__qualname__)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple(_canon(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return (type(value).__name__, _canon(vars(value)))
    return (type(value).__name__, value)


def _record(rec, call_ids: dict):
    """Every field of a record; the API call ids (unique in the process) by their order of first appearance."""
    api = tuple((name, call_ids.setdefault(call, len(call_ids))) for name, call in rec.api)
    return tuple(_canon(api if field == "api" else getattr(rec, field)) for field in Record.__slots__)


def _records(logs):
    call_ids: dict = {}
    return [[_record(r, call_ids) for r in log] for log in logs]


def _observe(cache: bool, launch):
    chip = Chip(front_end_cache=cache)
    try:
        report = launch(chip)
    except SimFault as fault:
        return ("fault", type(fault).__name__, str(fault), fault.core, fault.instruction, fault.source)
    return (_records(report.logs), [(r.core, r.seq) for r in chip.executed],
            report.to_dict(), {name: bytes(buf.data) for name, buf in chip.gm.allocations.items()})


def _agree(launch, caches):
    off = _observe(False, launch)
    on = _observe(True, launch)
    assert on == off
    return on


@pytest.mark.parametrize("shape", [(96, 64, 80, 2), (256, 384, 512, 8), (33, 17, 300, 1)])
def test_matmul_kernels_agree(shape, caches):
    _agree(corpus.matmul_launch(*shape), caches)
    assert caches[-1].misses > 0  # the cache was consulted
    if shape[2] >= 512:  # long K loops repeat their instructions
        assert caches[-1].hits > caches[-1].misses


def test_a_batched_fp32_matmul_agrees(caches):
    _agree(corpus.matmul_launch(64, 96, 40, 4, np.float32, batch=3), caches)


@pytest.mark.parametrize("case", list(corpus.FAULTS))
def test_faults_agree(case, caches):
    observed = _agree(corpus.FAULTS[case], caches)
    assert observed[0] == "fault", observed


def _operator(run, on, monkeypatch, **kwargs):
    monkeypatch.setitem(Chip.__init__.__kwdefaults__, "front_end_cache", on)
    return run(**kwargs)


def _same_runs(off, on, execute=True):
    assert _records(on.report.logs) == _records(off.report.logs)
    assert on.report.to_dict() == off.report.to_dict()
    if execute:
        assert on.result.tobytes() == off.result.tobytes()


@pytest.mark.parametrize("case", list(corpus.DX_CASES))
@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_dx_operator_runs_agree(case, execute, monkeypatch, caches):
    def run():
        return corpus.dx_run(case, execute, "auto")
    off, on = (_operator(run, cache, monkeypatch) for cache in (False, True))
    _same_runs(off, on, execute)
    assert caches[-1].hits > caches[-1].misses


@pytest.mark.parametrize("deterministic", [False, True], ids=["atomic", "deterministic"])
def test_dw_operator_runs_agree(deterministic, monkeypatch, caches):
    from kernels import conv3d_backprop_filter_v2_run

    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 9, 9, 20)).astype(np.float16)  # NDHWC
    dy = rng.standard_normal((2, 3, 4, 5, 24)).astype(np.float16)

    def run():
        return conv3d_backprop_filter_v2_run(x, (24, 20, 3, 3, 3), dy, strides=(1, 2, 2, 2, 1),
                                             pads=(1, 1, 0, 0, 1, 1), deterministic=deterministic)
    off, on = (_operator(run, cache, monkeypatch) for cache in (False, True))
    _same_runs(off, on)
    assert caches[-1].hits > 0


@pytest.mark.parametrize("execute", [True, False], ids=["full", "timing"])
def test_conv3d_v2_operator_runs_agree(execute, monkeypatch, caches):
    from kernels import conv3d_v2_run

    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 20, 5, 9, 10)).astype(np.float16)
    w = rng.standard_normal((33, 20, 3, 3, 2)).astype(np.float16)
    b = rng.standard_normal(33).astype(np.float16)

    def run():
        return conv3d_v2_run(x, w, b, strides=(1, 1, 2, 2, 3), pads=(1, 1, 2, 0, 1, 1), dilations=(1, 1, 1, 2, 1),
                             execute=execute)
    off, on = (_operator(run, cache, monkeypatch) for cache in (False, True))
    _same_runs(off, on, execute)
    assert caches[-1].hits > 0


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_conv3d_v2_pointwise_runs_agree(dtype, monkeypatch, caches):
    from kernels import conv3d_v2_run

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 37, 3, 5, 7)).astype(dtype)
    w = rng.standard_normal((21, 37, 1, 1, 1)).astype(dtype)
    b = rng.standard_normal(21).astype(dtype)

    def run():
        return conv3d_v2_run(x, w, b, strides=(1,) * 5, pads=(0,) * 6)
    off, on = (_operator(run, cache, monkeypatch) for cache in (False, True))
    _same_runs(off, on)


# ------------------------------------------------------------------------------------------ faults on hits
def _copies(src, blocks):
    """One DataCopy call site, run for each (GM offset in elements, blockLen) of `blocks`, with its flags."""
    l1, _ = l1_and_l0a()
    gm = GlobalTensor(np.float16).SetGlobalBuffer(src)
    for offset, block_len in blocks:
        DataCopy(l1, gm[offset], DataCopyParams(1, block_len, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)


def test_a_gm_bounds_fault_fires_on_a_cache_hit(caches):
    # 1024 fp16 = 2 KiB in GM; 16 blocks = 512 B per copy: offsets 0 and 512 fit, 896 runs 256 B past the end
    launch = corpus._kernel(lambda src: _copies(src, [(0, 16), (512, 16), (896, 16)]), np.zeros(1024, np.float16))
    observed = _agree(launch, caches)
    assert observed[0] == "fault" and observed[1] == "OutOfBounds", observed
    assert observed[4] == "DataCopy" and observed[5].startswith("test_front_end_cache.py:")
    assert caches[-1].hits == 2  # the second copy and the faulting third were hits of the first's descriptor


def test_a_float_parameter_faults_on_a_site_cached_with_an_int(caches):
    # 16 and 16.0 are equal keys; the field check refuses the float, so the cache must not answer for it
    launch = corpus._kernel(lambda src: _copies(src, [(0, 16), (0, 16.0)]), np.zeros(1024, np.float16))
    observed = _agree(launch, caches)
    assert observed[0] == "fault" and "blockLen=16.0" in observed[2], observed


def test_a_register_written_between_two_calls_changes_the_decoded_instruction(caches):
    def body():
        l1, l0a = l1_and_l0a()
        for l1h in (4, 4, 8):
            SetFmatrix(l1h, 4, (0, 0, 0, 0))
            LoadData(l0a, l1, LoadData3DParamsV2(l1H=l1h, l1W=4, channelSize=16, kExtension=16, mExtension=16),
                     False)
    observed = _agree(corpus._kernel(body), caches)
    loads = [r for r in observed[0][0] if r[Record.__slots__.index("name")] == ("str", "LoadData3Dv2")]
    decoded = [tuple(r[Record.__slots__.index(f)] for f in ("params", "args", "registers", "src")) for r in loads]
    assert len(decoded) == 3 and decoded[0] == decoded[1] != decoded[2]


def test_a_pad_list_changed_in_place_between_two_calls_is_a_new_instruction(caches):
    # a struct's sequence field keys by its values when called: the kernel's list changed in place after a call
    # must not hit the descriptor decoded before (whose parameter snapshot holds the old pads)
    def body():
        l1, l0a = l1_and_l0a()
        params = LoadData3DParamsV2(padList=[0, 0, 0, 0], l1H=4, l1W=4, channelSize=16, kExtension=16,
                                    mExtension=16)
        for top in (0, 0, 1, 1):
            params.padList[2] = top
            LoadData(l0a, l1, params)
    observed = _agree(corpus._kernel(body), caches)
    loads = [r for r in observed[0][0] if r[Record.__slots__.index("name")] == ("str", "LoadData3Dv2")]
    decoded = [tuple(r[Record.__slots__.index(f)] for f in ("params", "args")) for r in loads]
    assert len(decoded) == 4 and decoded[0] == decoded[1] != decoded[2] == decoded[3]
    assert (caches[-1].hits, caches[-1].misses) == (2, 2)


def test_hooks_see_the_same_records(caches):
    def observe(cache):
        seen = []
        chip = Chip(front_end_cache=cache, hooks=[lambda core, rec: seen.append(rec)])
        corpus.matmul_launch(256, 384, 512, 8)(chip)
        return _records([seen])
    assert observe(True) == observe(False)
    assert caches[-1].hits > caches[-1].misses


def _described(args, reads=(), writes=(), footprint=None, gm=()):
    """describe() of a made-up record with these operands, from a call whose GlobalTensors are in `gm`."""
    from ascend_sim.engine.descriptor import describe
    from ascend_sim.isa.mte2 import DATA_COPY

    rec = Record(0, 0, DATA_COPY, DATA_COPY.pipe, None, args, reads, writes, (None, 0), footprint=footprint)
    return describe(rec, 0, gm, tuple(0 for _ in gm))


def test_describe_refuses_what_a_shift_could_not_move():
    local, gm, other = Buffer("L1", 1024, 32), Buffer("x", 1024, 1), Buffer("y", 1024, 1)
    local.key = (0, "L1")
    # a GM buffer followed by its address is shifted there; local buffers are found for the other cores' views
    ok = _described((gm, 64, local, 0), reads=((gm, 64, 128),), writes=((local, 0, 64),), gm=(gm,))
    assert (ok.arg_slots, ok.read_slots, ok.local_writes, ok.local_args, ok.portable) == (
        ((1, 0),), ((0, 0),), (0,), (2,), True)
    assert _described((gm, 64), reads=((other, 0, 64),), gm=(gm,)) is None  # a GM range the call does not name
    assert _described((other, 64), gm=(gm,)) is None  # a GM operand the call does not name
    assert _described((gm, "64"), gm=(gm,)) is None  # no int address after the GM operand
    assert _described(((gm, 64),), gm=(gm,)) is None  # a GM buffer inside a field
    nested = _described(((local, 0), 1.5))
    assert nested.local_args is None and nested.portable  # a core buffer inside a field: remapped as a whole
    assert not _described((object(),)).portable
