"""GM tensors by argument name (ascend_sim/machine/gm_tensors.py, frontends/debugger/tensors.py), the exact write sets and
move sources of records (ascend_sim/debug/dataflow.py) and the provenance of one output element (ascend_sim/debug/provenance.py),
checked against the operands and results the operator commands produced and against index arithmetic written here."""
import numpy as np
import pytest

from ascend_sim.debug import Capture
from ascend_sim.machine.gm_tensors import trace_layout
from frontends.cli import conv3d_dx_command, matmul_command
from frontends.cli.app import build_parser
from frontends.debugger.tensors import operator_tensors


def simulate(argv):
    """(debugger at the end of the run, the command's run, its OperatorTensors) for `ascend-sim <argv>`."""
    args = build_parser()[0].parse_args(argv)
    capture = Capture()
    command = matmul_command if argv[0] == "matmul" else conv3d_dx_command
    ran = command.simulate(args, hooks=[capture])
    tensors = operator_tensors(args, capture.initial_gm)
    dbg = capture.debugger(tensors=tensors.tensors)
    dbg.goto(len(dbg))
    return dbg, ran, tensors


MATMUL = ["matmul", "--m", "40", "--n", "24", "--k", "150", "--batch", "2"]
CONV = ["conv3d-dx", "--cin", "20", "--cout", "24", "--dhw", "2,8,8", "--route", "v2", "--kernel", "2,3,3",
        "--stride", "1,2,2"]
CONV_REWRITE = ["conv3d-dx", "--cin", "20", "--cout", "24", "--dhw", "2,8,8", "--route", "v2", "--pad", "2,2,3,3,1,1",
                "--stride", "3,1,2", "--kernel", "2,3,3"]  # pads beyond the kernel reach and strideD > kD
CONV_MATMUL = ["conv3d-dx", "--cin", "8", "--cout", "16", "--dhw", "2,8,8", "--kernel", "2,2,2", "--stride", "2,2,2",
               "--pad", "0,0,0,0,0,0"]  # aclnn's STRIDE_EQ_KERNEL matmul


@pytest.fixture(scope="module")
def matmul_run():
    return simulate(MATMUL)


@pytest.fixture(scope="module")
def conv_run():
    return simulate(CONV)


def test_trace_layout_of_a_transpose_and_a_pad():
    where = trace_layout(lambda x: np.pad(x.T, ((0, 1), (0, 0))), (2, 3), np.float16)
    assert where.tolist() == [[0, 3], [1, 4], [2, 5], [-1, -1]]
    big = trace_layout(lambda x: x[::-1], (70000,), np.float16)  # more than one 14-bit digit
    assert np.array_equal(big, np.arange(70000)[::-1])


@pytest.mark.parametrize("argv", [MATMUL, CONV, CONV_REWRITE, CONV_MATMUL], ids=["matmul", "conv", "rewrite", "route"])
def test_logical_tensors_are_the_operands_and_the_result(argv, request):
    dbg, ran, ot = simulate(argv)
    if argv[0] == "matmul":
        pairs = {"a": ran.a, "b": ran.b, "c": ran.c}
    else:
        pairs = {"out_backprop": ran.dy, "filter": ran.weight, "y": ran.result.result}
        assert ran.result.route == ("matmul" if argv is CONV_MATMUL else "v2")
    for name, array in pairs.items():
        assert np.array_equal(dbg.tensor(name), array), name
    dbg.goto(0)  # at the start the output is the poison the operator put there
    assert np.isnan(dbg.tensor(ot.output)).all()


def test_device_view_and_one_element(conv_run):
    dbg, ran, _ = conv_run
    y = dbg.tensors["y"]
    assert y.device_format == "NCDHW" and y.logical_format == "NCDHW"  # fp16 NCDHW: the MIX build writes NCDHW
    n, c, d, h, w = 0, 17, 1, 5, 4
    assert y.device_index((n, c, d, h, w)) == (n, c, d, h, w)
    device = dbg.tensor("y", device=True)
    assert device[n, c, d, h, w] == ran.result.result[n, c, d, h, w]
    f32 = simulate(CONV + ["--dtype", "float32"])[0].tensors["y"]  # fp32: NDC1HWC0, converted on the host
    assert f32.device_format == "NDC1HWC0" and f32.device_index((n, c, d, h, w)) == (n, d, c // 8, h, w, c % 8)
    assert np.array_equal(dbg.tensor("y", (0, 3, slice(None), 2, 2)), ran.result.result[0, 3, :, 2, 2])
    with pytest.raises(ValueError, match=r"index 20 of axis C outside \[0, 19\]"):
        y.byte_offset((0, 20, 0, 0, 0))
    with pytest.raises(KeyError, match="no tensor 'dx'; tensors: out_backprop, filter, y"):
        dbg.tensor("dx")


def test_written_bytes_of_a_strided_load_skip_its_gaps(matmul_run):
    """A's first LoadData 2D of a tile writes M1 fractals dstGap = K1 - 1 fractals apart: not the ones between."""
    dbg, _, _ = matmul_run
    seq = next(i for i, r in enumerate(dbg.records) if r.name == "LoadData2D" and r.writes[0][0].name == "L0A")
    rec = dbg.records[seq]
    p = rec.params
    (key, lo, mask), = dbg.flow.written(seq)
    expect = np.zeros(mask.size, bool)
    for i in range(p.repeatTimes):
        start = i * (1 + p.dstGap) * 512
        expect[start:start + 512] = True
    assert p.dstGap > 0 and np.array_equal(mask, expect)


def test_provenance_of_a_matmul_element_reads_its_row_and_column(matmul_run):
    dbg, ran, _ = matmul_run
    t = ran.tiling
    b_i, i, j = 1, 33, 17
    pv = dbg.trace("c", (b_i, i, j))
    store, = pv.by_role("stored")
    assert store.writer.name == "Fixpipe"
    mmads = pv.by_role("accumulated")
    assert len(mmads) == -(-t.K // t.baseK)  # one Mmad per baseK slice of K
    assert mmads[-1].writer.record.params.cmatrixInitVal
    size = np.dtype(ran.a.dtype).itemsize
    row_a = (b_i * t.M * t.K + i * t.K + np.arange(t.K)) * size
    col_b = (b_i * t.K * t.N + np.arange(t.K) * t.N + j) * size
    inputs = pv.inputs()
    assert np.array_equal(inputs["A"], np.sort((row_a[:, None] + np.arange(size)).reshape(-1)))
    assert np.array_equal(inputs["B"], np.sort((col_b[:, None] + np.arange(size)).reshape(-1)))
    # every load feeds a record on the path, and the stages are the kernel's
    assert {s.writer.pipe for s in pv.loads_into("L1")} == {"MTE2"}
    assert {s.writer.pipe for s in pv.loads_into("L0A") + pv.loads_into("L0B")} == {"MTE1"}
    path = {s.writer.seq for s in pv.steps}
    assert all(s.fed <= path for s in pv.steps)


def test_provenance_of_a_conv_dx_element_reads_the_dy_it_needs(conv_run):
    """The dy elements reached are exactly those the dx formula sums over; the filter elements reached include
    every tap that multiplies one of them and only weights of this input channel."""
    dbg, ran, ot = conv_run
    p = ran.problem
    n, ci, d, h, w = 0, 17, 1, 5, 4
    pv = dbg.trace("y", (n, ci, d, h, w))
    cout, _, kd, kh, kw = p.filter_shape
    dims = p.dy_shape[2:]
    want_dy, want_w = set(), set()
    for co in range(cout):
        for a in range(kd):
            for b in range(kh):
                for c in range(kw):
                    pos = []
                    for x, k, s, pad, dil, size in zip((d, h, w), (a, b, c), p.stride, p.pad[::2], p.dilation,
                                                       dims):
                        num = x + pad - k * dil
                        pos.append(num // s if num % s == 0 and 0 <= num // s < size else None)
                    if None not in pos:
                        want_dy.add((n, co, *pos))
                        want_w.add((co, ci, a, b, c))
    inputs = pv.inputs()
    got = {}
    for name in ("out_backprop", "filter"):
        t = ot.tensors[name]
        size = t.dtype.itemsize
        flat = np.unique(inputs[name] // size)
        got[name] = {t.logical_index(int(f)) for f in flat} - {None}  # None: a zero the format padded
    assert got["out_backprop"] == want_dy
    assert want_w <= got["filter"] and all(key[1] == ci for key in got["filter"])
    # fp16/bf16 NCDHW is the MIX build: the AIV's DataCopyPad into y, then the AIC's Fixpipe into the workspace
    # slot it copied from (through UB and TransDataTo5HD); fp32 has the Fixpipe into y only
    stores = [s.writer.name for s in pv.by_role("stored")]
    want = ["Fixpipe"] if ran.problem.dtype == "float32" else ["DataCopyPad(UB->GM)", "Fixpipe"]
    assert stores == want and pv.by_role("accumulated")
    if len(stores) == 2:
        assert pv.by_role("stored")[1].into == "gm workspace"
        assert {s.writer.name for s in pv.steps if s.into == "UB"} == {"TransDataTo5HD", "DataCopy(GM->UB)"}


def test_tracing_leaves_the_debugger_state_as_it_was(matmul_run):
    dbg, _, _ = matmul_run
    dbg.goto(len(dbg) - 3)
    before = {key: array.copy() for key, array in dbg._state.items()}
    dbg.trace("c", (0, 5, 7))
    assert all(np.array_equal(before[key], array) for key, array in dbg._state.items())
    dbg.goto(len(dbg))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_provenance_in_other_dtypes(dtype):
    """The tags that trace a move ride in 2-byte granules: 4-byte (float32) elements move as two of them."""
    test_provenance_of_a_matmul_element_reads_its_row_and_column(simulate(MATMUL + ["--dtype", dtype]))
    test_provenance_of_a_conv_dx_element_reads_the_dy_it_needs(simulate(CONV + ["--dtype", dtype]))


def split_k_kernel(a_gm, b_gm, c_gm, m, n, k):
    """Core i multiplies the K half i of A (m x k) and B (k x n) and atomically adds its product into C (fp32)."""
    from ascend_sim.ascendc import (CFG_ROW_MAJOR, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor, HardEvent,
                                    Mmad, MmadParams, QuantMode_t, SetAtomicAdd, SetAtomicNone, SetFlag, TBuf, TPipe,
                                    TPosition, WaitFlag)
    from kernels.matmul import copy_nd_to_nz, load_a_zz, load_b_zn
    half = k // 2
    k0 = GetBlockIdx() * half
    a = GlobalTensor(np.float16).SetGlobalBuffer(a_gm, m * k)
    b = GlobalTensor(np.float16).SetGlobalBuffer(b_gm, k * n)
    c = GlobalTensor(np.float32).SetGlobalBuffer(c_gm, m * n)
    pipe = TPipe()
    bufs = [TBuf(p) for p in (TPosition.A1, TPosition.B1, TPosition.A2, TPosition.B2, TPosition.CO1)]
    for buf, size in zip(bufs, (m * half * 2, half * n * 2, m * half * 2, half * n * 2, m * n * 4)):
        pipe.InitBuffer(buf, size)
    a1, b1, a2, b2, co1 = (buf.Get(np.float32 if i == 4 else np.float16) for i, buf in enumerate(bufs))
    copy_nd_to_nz(a1, a[k0], m, half, k)
    copy_nd_to_nz(b1, b[k0 * n], half, n, n)
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    load_a_zz(a2, a1, m, half, 0)
    load_b_zn(b2, b1, half, n, half, 0)
    SetFlag(HardEvent.MTE1_M, 0)
    WaitFlag(HardEvent.MTE1_M, 0)
    Mmad(co1, a2, b2, MmadParams(m, n, half, cmatrixInitVal=True))
    SetFlag(HardEvent.M_FIX, 0)
    WaitFlag(HardEvent.M_FIX, 0)
    SetAtomicAdd(np.float32)
    Fixpipe(c, co1, FixpipeParamsV220(nSize=n, mSize=m, srcStride=m, dstStride=n, quantPre=QuantMode_t.NoQuant),
            CFG_ROW_MAJOR)
    SetAtomicNone()


def test_provenance_follows_atomic_adds_to_every_store():
    from ascend_sim import Chip
    from ascend_sim.debug import Debugger
    from ascend_sim.machine.tensor import GmAddr
    m, n, k = 32, 32, 64
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    chip = Chip()
    c = chip.gm.alloc("C", m * n * 4)
    dbg = Debugger.launch(chip, split_k_kernel, 2, GmAddr(chip.gm.upload("A", a)), GmAddr(chip.gm.upload("B", b)),
                          GmAddr(c), m, n, k)
    assert dbg.fault is None
    dbg.goto(len(dbg))
    got = dbg.gm("C", np.float32).reshape(m, n)
    assert np.allclose(got, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)
    i, j = 5, 27
    pv = dbg.provenance("C", (i * n + j) * 4)
    stores = pv.by_role("stored")
    assert sorted(s.writer.core for s in stores) == [0, 1] and all(s.writer.name == "Fixpipe" for s in stores)
    assert sorted(s.writer.core for s in pv.by_role("accumulated")) == [0, 1]
    inputs = pv.inputs()
    row_a, col_b = (i * k + np.arange(k)) * 2, (np.arange(k) * n + j) * 2
    assert np.array_equal(inputs["A"], np.sort(np.concatenate([row_a, row_a + 1])))
    assert np.array_equal(inputs["B"], np.sort(np.concatenate([col_b, col_b + 1])))
