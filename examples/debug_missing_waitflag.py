"""Debugging example: a missing WaitFlag, a race between the MTE1 and M pipes, found post-mortem.

The kernel multiplies one fp16 tile C = A . B on the cube: GM -> L1 (DataCopy with Nd2Nz), L1 -> L0A/L0B (LoadData
2D), Mmad into L0C, Fixpipe to GM. Between the loads and the Mmad it sets the MTE1 -> M flag but forgets to wait
for it, so the cube may read L0A before LoadData has filled it. The simulator's race check stops the run at that
Mmad, and the replay debugger opens on the state just before it:

* the fault, and the faulting record (issued, never applied);
* who last wrote the L0A bytes the Mmad reads: the LoadData on MTE1, with its cycles, overlapping the Mmad's;
* the flags set on the core and never waited: MTE1_M 0, the missing WaitFlag.

    python examples/debug_missing_waitflag.py           # the planted bug
    python examples/debug_missing_waitflag.py --fixed   # with WaitFlag(HardEvent.MTE1_M, 0): checks against numpy
    python examples/debug_missing_waitflag.py --prompt  # the `ascend-sim debug` prompt, post-mortem on the fault
The same post-mortem at the prompt: docs/debugging.md, "Finding a missing WaitFlag".
"""
import argparse
import sys

import numpy as np

from ascend_sim import Chip
from ascend_sim.ascendc import (CFG_ROW_MAJOR, Fixpipe, FixpipeParamsV220, GlobalTensor, HardEvent, Mmad, MmadParams,
                                QuantMode_t, SetFlag, TBuf, TPipe, TPosition, WaitFlag)
from ascend_sim.debug import Debugger
from ascend_sim.machine.tensor import GmAddr
from frontends.debugger.shell import DebugShell
from kernels.matmul import MatmulTiling, copy_nd_to_nz, load_a_zz, load_b_zn

FIXED = False  # the planted bug: main(["--fixed"]) sets it


def one_tile_matmul(a_gm, b_gm, c_gm, t: MatmulTiling) -> None:
    """C (M x N) = A (M x K) . B (K x N), fp16, one tile: M, N, K multiples of 16 and at most 128."""
    a = GlobalTensor(np.float16).SetGlobalBuffer(a_gm, t.M * t.K)
    b = GlobalTensor(np.float16).SetGlobalBuffer(b_gm, t.K * t.N)
    c = GlobalTensor(np.float16).SetGlobalBuffer(c_gm, t.M * t.N)
    pipe = TPipe()
    a1, b1, a2, b2, co1 = (TBuf(TPosition.A1), TBuf(TPosition.B1), TBuf(TPosition.A2), TBuf(TPosition.B2),
                           TBuf(TPosition.CO1))
    for buf, size in ((a1, t.M * t.K * 2), (b1, t.K * t.N * 2), (a2, t.M * t.K * 2), (b2, t.K * t.N * 2),
                      (co1, t.M * t.N * 4)):
        pipe.InitBuffer(buf, size)
    copy_nd_to_nz(a1.Get(np.float16), a, t.M, t.K, t.K)
    copy_nd_to_nz(b1.Get(np.float16), b, t.K, t.N, t.N)
    SetFlag(HardEvent.MTE2_MTE1, 0)
    WaitFlag(HardEvent.MTE2_MTE1, 0)
    load_a_zz(a2.Get(np.float16), a1.Get(np.float16), t.M, t.K, 0)
    load_b_zn(b2.Get(np.float16), b1.Get(np.float16), t.K, t.N, t.K, 0)
    SetFlag(HardEvent.MTE1_M, 0)
    if FIXED:
        WaitFlag(HardEvent.MTE1_M, 0)  # the line the buggy kernel forgets
    Mmad(co1.Get(np.float32), a2.Get(np.float16), b2.Get(np.float16), MmadParams(t.M, t.N, t.K, cmatrixInitVal=True))
    SetFlag(HardEvent.M_FIX, 0)
    WaitFlag(HardEvent.M_FIX, 0)
    Fixpipe(c, co1.Get(np.float32), FixpipeParamsV220(nSize=t.N, mSize=t.M, srcStride=t.M, dstStride=t.N,
                                                      quantPre=QuantMode_t.F322F16), CFG_ROW_MAJOR)


def main(argv=None) -> int:
    global FIXED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixed", action="store_true", help="run the kernel with its WaitFlag")
    parser.add_argument("--prompt", action="store_true", help="open the debugger prompt on the run (stdin)")
    options = parser.parse_args(argv)
    FIXED = options.fixed
    m, n, k = 32, 32, 64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    chip = Chip()
    args = (GmAddr(chip.gm.upload("A", a)), GmAddr(chip.gm.upload("B", b)), GmAddr(chip.gm.alloc("C", m * n * 2)),
            MatmulTiling(m, n, k, baseM=m, baseN=n, baseK=k))
    dbg = Debugger.launch(chip, one_tile_matmul, 1, *args)
    if options.prompt:
        shell = DebugShell(dbg, "float16", sys.stdout)
        if dbg.fault is not None:
            shell.open_post_mortem()
        shell.interact(sys.stdin)
        return 0
    if dbg.fault is None:
        c = dbg.chip.gm["C"].data.view(np.float16).reshape(m, n)
        ok = np.allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3, atol=2e-2)
        print(f"no fault; C against numpy: {'PASSED' if ok else 'FAILED'}")
        return 0 if ok else 1
    print(f"the run stopped in a fault: {dbg.fault}")
    bad = dbg.fault_record
    print(f"faulting record (not applied): core {bad.core} {bad.pipe.name} {bad.name} at {bad.source}, "
          f"due to start at cycle {bad.start:.0f}")
    dbg.goto(len(dbg))  # post-mortem: every record that ran is applied, the state just before the fault
    l0a, lo, _ = bad.reads[0]
    for w in dbg.who_wrote_buffer(bad.core, l0a.name, lo):
        print(f"L0A byte {lo} that the Mmad reads was written by #{w.seq} core {w.core} {w.pipe} {w.name} "
              f"[{w.start:.0f}, {w.end:.0f}) at {w.source}")
    # M_MTE1 0-2 are TPipe's own: TPipe() sets them and its Destroy waits them when the kernel ends
    waiting = {f"{event} {event_id}": count for (event, event_id), count in dbg.flags(bad.core).items()
               if event != "M_MTE1"}
    print(f"flags set on core {bad.core} and never waited (besides TPipe's M_MTE1 0-2): {waiting}")
    if "MTE1_M 0" in waiting:
        print("=> the Mmad does not wait for MTE1_M 0: add WaitFlag(HardEvent.MTE1_M, 0) before it")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
