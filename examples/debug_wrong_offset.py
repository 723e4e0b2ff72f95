"""Debugging example: a wrong GM offset, found with `check` and the provenance of the first wrong element.

The kernel computes C = A . B (fp16) one 32-row tile of C per core. For the tile starting at row m0 it reads A from
element m0 * N instead of m0 * K: the pitch of C where the pitch of A belongs. The first tile (m0 = 0) is right,
the others are not, and nothing faults. The debugger finds it in three steps:

1. compare C with numpy (gm_tensors.compare): the first wrong element, c[32, 0];
2. its provenance (Debugger.trace): the Fixpipe that stored it, the Mmad, the loads, back to the GM elements the
   MTE2 load of A brought into L1: a[21, 16] .. a[22, 15], where row 32 of A was needed;
3. the load's source line and the offset it used: element 1024 = 32 * N, not 32 * K = 1536.

    python examples/debug_wrong_offset.py           # the planted bug
    python examples/debug_wrong_offset.py --fixed   # A read from m0 * K: checks against numpy
    python examples/debug_wrong_offset.py --prompt  # the `ascend-sim debug` prompt on the run (check, who-wrote)
The same search at the prompt: docs/debugging.md, "Finding a wrong GM offset".
"""
import argparse
import sys

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_ROW_MAJOR, DataCopy, Fixpipe, FixpipeParamsV220, GetBlockIdx, GlobalTensor,
                                HardEvent, Mmad, MmadParams, Nd2NzParams, QuantMode_t, SetFlag, TBuf, TPipe, TPosition,
                                WaitFlag)
from ascend_sim.debug import Debugger
from ascend_sim.machine.gm_tensors import compare, to_device
from ascend_sim.machine.tensor import GmAddr
from frontends.debugger.shell import DebugShell
from frontends.debugger.tensors import OperatorTensors
from kernels.matmul import MatmulTiling, copy_nd_to_nz, load_a_zz, load_b_zn

FIXED = False  # the planted bug: main(["--fixed"]) sets it


def row_tile_matmul(a_gm, b_gm, c_gm, t: MatmulTiling) -> None:
    """Core i computes rows [i * baseM, (i + 1) * baseM) of C (M x N) = A (M x K) . B (K x N), fp16."""
    a = GlobalTensor(np.float16).SetGlobalBuffer(a_gm, t.M * t.K)
    b = GlobalTensor(np.float16).SetGlobalBuffer(b_gm, t.K * t.N)
    c = GlobalTensor(np.float16).SetGlobalBuffer(c_gm, t.M * t.N)
    m0, rows = GetBlockIdx() * t.baseM, t.baseM
    pipe = TPipe()
    a1, b1, a2, b2, co1 = (TBuf(TPosition.A1), TBuf(TPosition.B1), TBuf(TPosition.A2), TBuf(TPosition.B2),
                           TBuf(TPosition.CO1))
    for buf, size in ((a1, rows * t.K * 2), (b1, t.K * t.N * 2), (a2, rows * t.K * 2), (b2, t.K * t.N * 2),
                      (co1, rows * t.N * 4)):
        pipe.InitBuffer(buf, size)
    a_offset = m0 * t.K if FIXED else m0 * t.N  # the planted bug: C's row pitch (N) where A's (K) belongs
    DataCopy(a1.Get(np.float16), a[a_offset], Nd2NzParams(1, rows, t.K, 0, t.K, rows, 1, 0))  # A rows m0.. as NZ
    copy_nd_to_nz(b1.Get(np.float16), b, t.K, t.N, t.N)
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    load_a_zz(a2.Get(np.float16), a1.Get(np.float16), rows, t.K, 0)
    load_b_zn(b2.Get(np.float16), b1.Get(np.float16), t.K, t.N, t.K, 0)
    SetFlag(HardEvent.MTE1_M, 0)
    WaitFlag(HardEvent.MTE1_M, 0)
    Mmad(co1.Get(np.float32), a2.Get(np.float16), b2.Get(np.float16), MmadParams(rows, t.N, t.K, cmatrixInitVal=True))
    SetFlag(HardEvent.M_FIX, 0)
    WaitFlag(HardEvent.M_FIX, 0)
    Fixpipe(c[m0 * t.N], co1.Get(np.float32), FixpipeParamsV220(nSize=t.N, mSize=rows, srcStride=rows, dstStride=t.N,
                                                                quantPre=QuantMode_t.F322F16), CFG_ROW_MAJOR)


def run(fixed: bool = False):
    """The kernel on two cores, and a debugger at the end of its run that knows a, b and c by name."""
    global FIXED
    FIXED = fixed
    m, n, k, base = 64, 32, 48, 32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    chip = Chip()
    args = (GmAddr(chip.gm.upload("A", a)), GmAddr(chip.gm.upload("B", b)), GmAddr(chip.gm.alloc("C", m * n * 2)),
            MatmulTiling(m, n, k, baseM=base, baseN=n, baseK=k))
    dbg = Debugger.launch(chip, row_tile_matmul, m // base, *args)
    same = lambda x: x
    dbg.tensors = {name: to_device(name, name.upper(), np.float16, "ND", shape, "ND", same)
                   for name, shape in (("a", (m, k)), ("b", (k, n)), ("c", (m, n)))}
    dbg.goto(len(dbg))
    return dbg, a, b


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="read A from m0 * K")
    parser.add_argument("--prompt", action="store_true", help="open the debugger prompt on the run (stdin)")
    options = parser.parse_args(argv)
    dbg, a, b = run(options.fixed)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    if options.prompt:
        dbg.goto(0)
        print(f"{len(dbg)} records on 2 cores; at the start (no record applied). `help` lists the commands.")
        DebugShell(dbg, "float16", sys.stdout, OperatorTensors(dbg.tensors, "c", lambda: expected, 1e-3)).interact(
            sys.stdin)
        return 0
    result = compare(dbg.tensor("c"), expected, 1e-3)
    if result.passed:
        print(f"C against numpy: PASSED (max error {result.max_error:.1e})")
        return 0
    index = result.first
    print(f"C against numpy: FAILED, {result.wrong} of {result.total} elements wrong; the first: c{list(index)} = "
          f"{result.got}, expected {result.expected:.4g}")
    provenance = dbg.trace("c", index)
    for step in provenance.steps:
        w = step.writer
        print(f"  {step.role} {step.into}: #{w.seq} core {w.core} {w.pipe} {w.name} at {w.source}")
    t = dbg.tensors["a"]
    read = sorted({t.logical_index(int(f)) for f in provenance.inputs()["A"] // 2})
    print(f"the A elements it was computed from: a{list(read[0])} .. a{list(read[-1])} ({len(read)} elements)")
    print(f"row {index[0]} of C needs row {index[0]} of A: a[{index[0]}, 0] .. a[{index[0]}, {a.shape[1] - 1}]")
    load = next(s for s in provenance.loads_into("L1") if "A" in s.inputs)
    first = int(load.inputs["A"].min()) // 2
    print(f"=> the load at {load.writer.source} starts at element {first} of A; row {index[0]} starts at "
          f"{index[0] * a.shape[1]}: the offset uses the wrong row pitch")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
