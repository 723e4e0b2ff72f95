"""Bugs planted in the matmul example kernel (benchmarks/kernel_mutants.py: one AST edit, the kernel's own file
and lines) fault on every engine, naming the kernel line: the promise of docs/testing.md's mutation hunt, kept."""
import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from ascend_sim import RaceFault, SyncFault
from ascend_sim.machine.faults import UnwrittenRead
from kernels.matmul import MatmulTiling, run_matmul
from kernels.matmul.kernel import matmul_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from kernel_mutants import install, mutate, sites, uninstall  # noqa: E402

KERNEL = Path(matmul_kernel.__file__)


def _line(text: str) -> int:
    return next(i for i, line in enumerate(KERNEL.read_text().splitlines(), 1) if line.strip() == text)


_MMAD = "Mmad(c_l0, a2, b2, MmadParams(align(use_m, 16), use_n, use_k, cmatrixInitVal=(k_l1 + k == 0)))"

# (the statement mutated, the mutation, the fault, the statement the fault names, words of its message)
CASES = {
    "a dropped WaitFlag before the Mmad": (
        "WaitFlag(HardEvent.MTE1_M, ping)", "drop WaitFlag", RaceFault,
        _MMAD,
        "M Mmad, at matmul_kernel.py:{line}] race between pipes: read of L0A"),
    "a SetFlag on the wrong event id": (
        "SetFlag(HardEvent.MTE1_M, ping)", "SetFlag flag id + 1", SyncFault, "WaitFlag(HardEvent.MTE1_M, ping)",
        "M WaitFlag, at matmul_kernel.py:{line}] synchronisation error: deadlock"),
    "an EnQue twice": (
        "self.qa1.EnQue(a1)", "double EnQue", SyncFault, "self.qa1.EnQue(a1)",
        "MTE2 EnQue, at matmul_kernel.py:{line}] synchronisation error: EnQue of a buffer already in the A1 queue"),
    "the first K step accumulating onto L0C": (  # the hardware would add what the previous kernel left in L0C
        _MMAD, "Mmad cmatrixInitVal negated", UnwrittenRead, _MMAD,
        "M Mmad, at matmul_kernel.py:{line}] read of unwritten memory: read of bytes [0, 2048) of L0C"),
}


@pytest.mark.parametrize("engine", ["exact", "auto", "replay"])
@pytest.mark.parametrize("case", CASES)
def test_a_planted_bug_faults_naming_the_kernel_line(case, engine):
    mutated, mutation, fault, named, words = CASES[case]
    tree = ast.parse(KERNEL.read_text(), str(KERNEL))
    site = next(s for s in sites(tree, {_line(mutated)}) if s.desc == mutation)
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(shape).astype(np.float16) for shape in ((48, 80), (80, 32)))
    swapped = install(str(KERNEL), mutate(tree, site))
    assert swapped
    try:
        with pytest.raises(fault) as info:
            run_matmul(a, b, tiling=MatmulTiling(48, 32, 80, baseM=16, baseN=32, baseK=32, stepK=2), engine=engine)
    finally:
        uninstall(swapped)
    assert words.format(line=_line(named)) in str(info.value)
    assert info.value.core is not None
    run_matmul(a, b, engine=engine)  # the kernel is whole again
