"""The example matmul's host operator: operand checks, the tiling, GM, the launch, C back as numpy.

The kernel follows the platform's npu_arch: kernel/matmul_kernel.py on A2/A3 (2201), kernel/arch35/matmul_kernel.py
on the Ascend 950 (3510), which also takes hifloat8 and float8_e4m3fn operands (refused by name elsewhere)."""
from __future__ import annotations

import numpy as np

from ascend_sim import Chip
from ascend_sim.machine.dtypes import arch_refuses
from ascend_sim.machine.platform import get_platform
from ascend_sim.machine.tensor import GmAddr
from kernels.common.run import Run, output_buffer, read_output
from kernels.common.size_guard import RunEstimate, check_fits, conv_estimate, gemm_tiles
from kernels.matmul.kernel.arch35.matmul_kernel import matmul_kernel as matmul_kernel_arch35
from kernels.matmul.kernel.matmul_kernel import matmul_kernel
from tiling.common.problem import check_hf32
from tiling.matmul import OPERAND_DTYPES, MatmulTiling


def _kernel_for(npu_arch: int):
    """The device code for a platform's npu_arch, or None (looked up at each call, so a test may swap one)."""
    return {2201: matmul_kernel, 3510: matmul_kernel_arch35}.get(npu_arch)


def _dtype_name(dtype) -> str | None:
    return next((name for name, value in OPERAND_DTYPES.items() if value == dtype), None)


# what makes a matmul run need less (size_guard.REMEDIES): it keeps every record
MATMUL_REMEDIES = ("execute", "check_races")


def estimate_matmul(t: MatmulTiling, block_dim: int, *, shared_b: bool | None = None, execute: bool = True,
                    check_races: bool = True) -> RunEstimate:
    """What run_matmul of tiling t on block_dim cores takes (kernels/common/size_guard.py), nothing allocated: A,
    B (one for every batch when shared_b; default t.shared_b) and C in GM as stored (ND), their host copies, the
    race shadows of C and the records of the GEMM's tiles (every record is kept)."""
    operand, result = OPERAND_DTYPES[t.dtype].itemsize, OPERAND_DTYPES[t.out].itemsize
    b_batch = 1 if (t.shared_b if shared_b is None else shared_b) else t.batch
    inputs = (t.batch * t.M * t.K * operand, b_batch * t.K * t.N * operand)
    return conv_estimate(inputs, t.batch * t.M * t.N * result, tiles=gemm_tiles(t.M, t.N, t.K, t.baseM, t.baseN,
                                                                                t.baseK, t.batch),
                         cores=block_dim, execute=execute, check_races=check_races)


def default_block_dim(t: MatmulTiling, aic_cores: int) -> int:
    """One core per baseM x baseN block of C, at most every cube core."""
    return min(t.batch * -(-t.M // t.baseM) * -(-t.N // t.baseN), aic_cores)


def run_matmul(a: np.ndarray, b: np.ndarray, *, platform="Ascend910B2", block_dim: int | None = None,
               tiling: MatmulTiling | None = None, execute: bool = True, check_races: bool = True,
               out_dtype=None, hf32: bool = False, hooks=None, poison_output: bool = False,
               engine: str = "auto", max_memory: int | None = None):
    """Run the kernel on a simulated chip. Returns a `Run` (kernels/common/run.py): `.result` is C, `.report` the
    RunReport, `.tiling` the MatmulTiling.

    a: (M, K) or (batch, M, K); b: (K, N), (1, K, N) or (batch, K, N): a 2-D or batch-1 B is shared by every
    batch. The operand dtype is a's if it is float16, bfloat16, float32 or, on the Ascend 950, hifloat8 or
    float8_e4m3fn (b is cast to it), else float16. out_dtype: C's dtype (default the operand dtype; an 8-bit C
    is Fixpipe's QF322HIF8_PRE / QF322FP8_PRE). hf32: round float32 operands to HF32 in the cube.
    poison_output fills C with NaN first (float outputs), so that an element the kernel never writes shows.
    C is (M, N) for a 2-D a, else (batch, M, N); None when execute=False (timing-only: GM holds no bytes).
    max_memory: the bytes the run may take (default: a fraction of the machine's available memory); a run
    estimated to need more (estimate_matmul) is refused before anything is allocated (MemoryLimitError).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim not in (2, 3) or b.ndim not in (2, 3):
        raise ValueError(f"A and B must be 2-D or 3-D (batch first), got shapes {a.shape} and {b.shape}")
    batch = a.shape[0] if a.ndim == 3 else 1
    (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
    if k != k2:
        raise ValueError(f"inner dimensions differ: A is {a.shape}, B is {b.shape}")
    b_batch = b.shape[0] if b.ndim == 3 else 1
    if b_batch not in (1, batch):
        raise ValueError(f"B's batch {b_batch} must be 1 (shared) or A's batch {batch}")
    plat = get_platform(platform)
    kernel = _kernel_for(plat.npu_arch)
    if kernel is None:
        raise ValueError(f"platform={plat.name!r} (npu_arch {plat.npu_arch}): the example matmul has kernels for "
                         "npu_arch 2201 (A2/A3) and 3510 (Ascend 950)")
    dtype = _dtype_name(a.dtype) or "float16"
    check_hf32("hf32", hf32, dtype)  # before the tiling: a 16-bit run must not silently drop the request
    out = dtype if out_dtype is None else _dtype_name(np.dtype(out_dtype))
    if out is None:
        raise TypeError(f"out_dtype={np.dtype(out_dtype)} is not supported; allowed: {sorted(OPERAND_DTYPES)}")
    shared_b = batch > 1 and b_batch == 1
    t = tiling or MatmulTiling.for_shape(m, n, k, dtype, out_dtype=out, batch=batch, shared_b=shared_b, hf32=hf32)
    if (t.M, t.N, t.K, t.batch) != (m, n, k, batch):
        raise ValueError(f"the tiling is for batch {t.batch} of M={t.M} N={t.N} K={t.K}, the operands for batch "
                         f"{batch} of M={m} N={n} K={k}")
    for name, value in (("dtype", t.dtype), ("out_dtype", t.out)):
        refused = value in OPERAND_DTYPES and arch_refuses(OPERAND_DTYPES[value], plat.npu_arch)
        if refused:
            raise ValueError(f"{name}={value}: {refused} (platform {plat.name})")
    t.check(plat.L1, plat.L0C)
    block_dim = block_dim or default_block_dim(t, plat.aic_cores)
    check_fits(estimate_matmul(t, block_dim, shared_b=shared_b, execute=execute, check_races=check_races),
               max_memory, MATMUL_REMEDIES)
    chip = Chip(plat, execute=execute, check_races=check_races, hooks=hooks, engine=engine)
    operand, result = OPERAND_DTYPES[t.dtype], OPERAND_DTYPES[t.out]
    a_gm = chip.gm.upload("A", a.astype(operand, copy=False))
    b_gm = chip.gm.upload("B", b.astype(operand, copy=False))
    c_gm = output_buffer(chip, "C", (batch, m, n), result, poison_output)
    report = chip.launch(kernel, block_dim, GmAddr(a_gm), GmAddr(b_gm), GmAddr(c_gm), t)
    c = read_output(chip, c_gm, (batch, m, n), result)
    return Run(c if c is None or a.ndim == 3 else c[0], t, report)
