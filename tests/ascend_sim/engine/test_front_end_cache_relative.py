"""Relative on-chip addresses in the cached front end (`cached(on_chip_alignment=...)`: DataCopyPad, LoadData):
calls at other on-chip offsets of the same buffer hit one descriptor whose on-chip ranges and operand addresses
move with the tensor, and every record field, result byte and fault is the same as with the cache off (the miss
path on every call). The faults a moved hit must still raise (past the buffer's end, a misaligned address) are
compared too, with the buffer and byte range they name."""
import numpy as np
import pytest

from ascend_sim.ascendc import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                                GetBlockIdx, GlobalTensor, HardEvent, LoadData, LoadData2DParams, LoadData3DParamsV2,
                                SetFlag, TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.engine.descriptor import describe
from ascend_sim.isa.vector.datacopy import UB_TO_GM_PAD
from ascend_sim.machine.memory import Buffer
from ascend_sim.machine.tensor import LocalTensor
from ascend_sim.record import Record
from tests.ascend_sim.engine import test_engines as corpus
from tests.ascend_sim.engine.test_front_end_cache import _agree, caches  # noqa: F401 (the fixture)

UB_BYTES = 196608  # A2's UB
ROW = 48  # elements of fp16 a row: 96 bytes, so successive rows are 128 bytes apart in UB (32-byte blocks)


def _rows(ub_offsets, *, row=ROW, direction="UB->GM"):
    """An AIV kernel: the UB filled from GM, then one DataCopyPad call site run once per UB offset (elements),
    each row to (or from) its own GM row, as the dx post-process's CopyOutToGm does."""
    def body(src, out):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(np.float16)
        x = GlobalTensor(np.float16).SetGlobalBuffer(src)
        y = GlobalTensor(np.float16).SetGlobalBuffer(out)
        DataCopyPad(ub, x, DataCopyExtParams(1, 8192 * 2, 0, 0), DataCopyPadExtParams(False, 0, 0, 0))
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        params = DataCopyExtParams(1, row * 2, 0, 0)
        for i, offset in enumerate(ub_offsets):
            if direction == "UB->GM":
                DataCopyPad(y[i * row], ub[offset], params)
            else:  # GM -> UB with right padding to the 32-byte block
                DataCopyPad(ub[offset], x[i * row], DataCopyExtParams(1, (row - 4) * 2, 0, 0),
                            DataCopyPadExtParams(True, 0, 4, 7.0))
    src = np.arange(8192, dtype=np.float16) / 64
    out = np.zeros(len(ub_offsets) * row, np.float16)
    return corpus._kernel(body, src, out, kernel_type="AIV_ONLY")


def _relative(cache):
    """The relative descriptors of the cache (some on-chip range moves with a LocalTensor)."""
    return [d for d in cache.entries.values() if hasattr(d, "on_chip_slots") and any(d.on_chip_slots)]


def test_rows_at_other_ub_offsets_hit_one_descriptor(caches):
    offsets = [k * 64 for k in range(12)]
    observed = _agree(_rows(offsets), caches)
    cache = caches[-1]
    # the fill and the first row miss; the other 11 rows hit the first row's descriptor, moved in UB and GM
    assert (cache.misses, cache.hits) == (2, 11)
    assert len(_relative(cache)) == 2
    rows = [r for r in observed[0][0] if r[Record.__slots__.index("name")] == ("str", "DataCopyPad(UB->GM)")]
    reads = [r[Record.__slots__.index("reads")] for r in rows]
    assert len(set(reads)) == 12  # each row read its own UB bytes


def test_gm_to_ub_rows_with_padding_at_other_ub_offsets_agree(caches):
    _agree(_rows([k * 32 for k in range(6)], direction="GM->UB"), caches)
    assert caches[-1].hits == 5


def test_relative_hits_on_two_cores_agree(caches):
    # the same call site on two AIVs: core 1 takes core 0's view, remapped to its own UB, at other UB offsets
    src = np.arange(8192, dtype=np.float16) / 64
    out = np.zeros(5 * ROW, np.float16)

    def kernel(s, o):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, UB_BYTES)
        ub = buf.Get(np.float16)
        y = GlobalTensor(np.float16).SetGlobalBuffer(o)
        DataCopyPad(ub, GlobalTensor(np.float16).SetGlobalBuffer(s), DataCopyExtParams(1, 4096, 0, 0),
                    DataCopyPadExtParams(False, 0, 0, 0))
        SetFlag(HardEvent.MTE2_MTE3, 0)
        WaitFlag(HardEvent.MTE2_MTE3, 0)
        first = GetBlockIdx() * 3  # core 1 starts at another UB offset than core 0 decoded
        for k in range(first, first + 2):
            DataCopyPad(y[(k % 5) * ROW], ub[k * 64], DataCopyExtParams(1, ROW * 2, 0, 0))
    _agree(corpus._kernel(kernel, src, out, block_dim=2, kernel_type="AIV_ONLY"), caches)
    assert caches[-1].hits >= 2


def test_a_row_past_the_ub_end_faults_on_a_hit_as_on_the_miss_path(caches):
    last = UB_BYTES // 2 - ROW  # the last row that fits, in elements
    observed = _agree(_rows([0, 64, last, last + 16]), caches)
    assert observed[0] == "fault" and observed[1] == "OutOfBounds", observed
    end = (last + 16) * 2
    assert f"[{end}, {end + ROW * 2})" in observed[2] and "UB" in observed[2], observed[2]
    assert caches[-1].hits == 3  # the faulting row was a moved hit, bounds-checked by accept


@pytest.mark.parametrize("offset", [1, 8, 24])  # 2, 16 and 48 bytes: not a multiple of 32
def test_a_misaligned_ub_address_faults_after_aligned_hits(offset, caches):
    observed = _agree(_rows([0, 64, 128, 128 + offset]), caches)
    assert observed[0] == "fault" and observed[1] == "Misaligned", observed
    address = (128 + offset) * 2
    assert f"address {address} in UB" in observed[2], observed[2]


def _record(args, reads=(), writes=()):
    return Record(0, 0, UB_TO_GM_PAD, UB_TO_GM_PAD.pipe, None, args, reads, writes, (None, 0))


def test_describe_relative_refuses_what_a_move_could_not_reach():
    ub, l1, gm = Buffer("UB", 1024, 32), Buffer("L1", 1024, 32), Buffer("y", 1024, 1)
    ub.key, l1.key = (0, "UB"), (0, "L1")
    ok = describe(_record((ub, 64, 96, gm, 0), reads=((ub, 64, 160),), writes=((gm, 0, 96),)), 0, (gm,), (0,),
                  ("UB",), (64,))
    assert ok.on_chip_slots == (((0, 0),), (), ((1, 0),))
    assert ok.views[0].local_bases == (64,)
    # a core buffer no LocalTensor of the call names, one named twice, one inside an operands field
    assert describe(_record((l1, 0, gm, 0), reads=((l1, 0, 32),)), 0, (gm,), (0,), ("UB",), (0,)) is None
    assert describe(_record((ub, 0, gm, 0)), 0, (gm,), (0,), ("UB", "UB"), (0, 32)) is None
    assert describe(_record(((ub, 0), gm, 0)), 0, (gm,), (0,), ("UB",), (0,)) is None
    assert describe(_record((ub, "0", gm, 0)), 0, (gm,), (0,), ("UB",), (0,)) is None
    in_ub = Record(0, 0, UB_TO_GM_PAD, UB_TO_GM_PAD.pipe, None, (ub, 0, gm, 0), (), (), (None, 0),
                   footprint=((ub, 0, (1, 32), (32, 1), False),))
    assert describe(in_ub, 0, (gm,), (0,), ("UB",), (0,)) is None  # a footprint in a core buffer would not move
    assert describe(in_ub, 0, (gm,), (0,)) is not None  # (an absolute descriptor keeps it as it is)


# ------------------------------------------------------------------------------------------ LoadData
L0A_BYTES = 65536  # A2's L0A


def _loads(places, form="2D"):
    """A cube kernel: 32 KiB of L1 filled from GM, then one LoadData call site run once per (L0A offset, L1 offset)
    of `places` (fp16 elements): a 2D fractal copy of 2 repeats, or a 3Dv2 img2col of a 4x4 fmap of 16 channels."""
    def body(src):
        pipe = TPipe()
        l1b, l0b = TBuf(TPosition.A1), TBuf(TPosition.A2)
        pipe.InitBuffer(l1b, 32768)
        pipe.InitBuffer(l0b, L0A_BYTES)
        l1, l0a = l1b.Get(np.float16), l0b.Get(np.float16)
        DataCopy(l1, GlobalTensor(np.float16).SetGlobalBuffer(src), DataCopyParams(1, 1024, 0, 0))
        SetFlag(HardEvent.MTE2_MTE1, 0)
        WaitFlag(HardEvent.MTE2_MTE1, 0)
        for dst, at in places:
            if form == "2D":
                LoadData(l0a[dst], l1[at], LoadData2DParams(repeatTimes=2, srcStride=1))
            else:
                LoadData(l0a[dst], l1[at], LoadData3DParamsV2(padList=[1, 1, 1, 1], l1H=4, l1W=4, channelSize=16,
                                                              kExtension=144, mExtension=16, filterW=3,
                                                              filterH=3))
    return corpus._kernel(body, (np.arange(16384) % 251).astype(np.float16))


@pytest.mark.parametrize("form", ["2D", "3Dv2"])
def test_loads_into_ping_pong_l0a_halves_and_l1_offsets_hit_one_descriptor(form, caches):
    # the L0A halves of a double buffer (0, 32 KiB) and L1 offsets on a fractal or a 32-byte block
    places = [(0, 0), (16384, 0), (0, 256), (16384, 256), (256, 16)]
    observed = _agree(_loads(places, form), caches)
    assert (caches[-1].misses, caches[-1].hits) == (2, 4)  # the fill and the first load miss
    loads = [r for r in observed[0][0] if r[Record.__slots__.index("name")][1].startswith("LoadData")]
    assert len({r[Record.__slots__.index("writes")] for r in loads}) == 3  # three L0A places written


def test_a_load_past_the_l0a_end_faults_on_a_hit_as_on_the_miss_path(caches):
    last = L0A_BYTES // 2 - 512  # elements: 1 KiB before the end, the 2 fractals of a 2D load just fit
    observed = _agree(_loads([(0, 0), (last, 0), (last + 256, 0)]), caches)
    assert observed[0] == "fault" and observed[1] == "OutOfBounds", observed
    start = (last + 256) * 2
    assert f"[{start}, {start + 1024})" in observed[2] and "L0A" in observed[2], observed[2]
    assert caches[-1].hits == 2


@pytest.mark.parametrize("place, buffer", [((128, 0), "L0A"), ((0, 8), "L1")])  # 256 B in L0A; 16 B in L1
def test_a_misaligned_load_faults_after_aligned_hits(place, buffer, caches):
    observed = _agree(_loads([(0, 0), (16384, 256), place]), caches)
    assert observed[0] == "fault" and observed[1] == "Misaligned", observed
    assert f"in {buffer} is not a multiple of" in observed[2], observed[2]


def test_hits_at_one_moved_place_share_their_operands(caches):
    # the view at a place is made once per core (a cost is worked out once per operands object)
    from ascend_sim import Chip
    report = _loads([(0, 0), (16384, 0), (16384, 0), (0, 0)])(Chip())
    loads = [r for r in report.logs[0] if r.name == "LoadData2D"]
    assert loads[1].args is loads[2].args and loads[0].args is loads[3].args
    assert loads[0].args != loads[1].args and loads[1].writes[0][1] == loads[0].writes[0][1] + 32768


def test_a_local_tensor_passed_by_keyword_or_in_a_list_is_not_keyed_by_place():
    from ascend_sim.engine.front_end_cache import _relative_names
    ub = Buffer("UB", 1024, 32)
    ub.key = (0, "UB")
    t, other = LocalTensor(ub, 64, np.float16, 8, "VECOUT"), LocalTensor(ub, 0, np.float16, 8, "VECIN")
    moduli = {"UB": 32}
    assert _relative_names((t, 3), {}, moduli) == ("UB",)
    assert _relative_names((t,), {"extra": other}, moduli) is None  # its range in UB would move with t's
    assert _relative_names((t, [other]), {}, moduli) is None
