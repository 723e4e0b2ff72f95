"""The arithmetic of one Mmad (isa/cube.py): A (m x k, L0A fractals, ZZ or NZ, or a GEMV row) . B (k x n, L0B
ZN fractals) as float32, the operands converted exactly, HF32-rounded when asked, one BLAS call of the same shape
wherever it runs: the instruction, and the replay engine's batched data work (engine/replay_data.py), which
must give the same bits."""
from __future__ import annotations

import numpy as np

from ascend_sim.machine.dtypes import element_bits, round_to_hf32, to_float32


def fractals_to_f32(data: np.ndarray, dtype: np.dtype, shape: tuple, axes: tuple) -> np.ndarray:
    """The fractal-ordered bytes `data` as float32, reshaped to `shape` (elements of `dtype`) and transposed by
    `axes` in one pass (a fresh C-contiguous array)."""
    return to_float32(element_bits(data, dtype).reshape(shape).transpose(axes), dtype)


def product(ops) -> np.ndarray:
    """A . B of an Mmad's operands (isa/cube.py's MmadOperands), (m1*16 or 1) x (n1*16) float32."""
    abuf, a0, a_bytes, bbuf, b0, b_bytes, dtype, k, m1, n1, k1, c0 = (
        ops.abuf, ops.a0, ops.a_bytes, ops.bbuf, ops.b0, ops.b_bytes, ops.dtype, ops.k, ops.m1, ops.n1, ops.k1,
        ops.c0)
    (a_shape, a_axes), (b_shape, b_axes) = fractal_layouts(ops.a_nz, m1, k1, n1, c0)
    if ops.gemv:  # L0A holds A as a plain vector
        a = abuf.view(dtype, a0, k).astype(np.float32).reshape(1, k)
    else:
        a = fractals_to_f32(abuf.data[a0:a0 + a_bytes], dtype, a_shape, a_axes).reshape(m1 * 16, k1 * c0)
    b = fractals_to_f32(bbuf.data[b0:b0 + b_bytes], dtype, b_shape, b_axes)
    return multiply(a, b.reshape(k1 * c0, n1 * 16), k, ops.hf32_rounding)


def fractal_layouts(a_nz: bool, m1: int, k1: int, n1: int, c0: int) -> tuple:
    """(A's fractals' shape, the axes that turn them into (m1, 16, k1, c0)) and the same for B into
    (k1, c0, n1, 16): A ZZ [m1][k1][16][c0] or NZ [k1][m1][16][c0] -> (m1*16, k1*c0); B ZN [k1][n1][16 n][c0 k]
    -> (k1*c0, n1*16). The compiled conversion of the replay data pass (passes/fast_fractals.py) walks the same."""
    a = ((k1, m1, 16, c0), (1, 2, 0, 3)) if a_nz else ((m1, k1, 16, c0), (0, 2, 1, 3))
    return a, ((k1, n1, 16, c0), (0, 3, 1, 2))


def multiply(a: np.ndarray, b: np.ndarray, k: int, hf32_rounding) -> np.ndarray:
    """a (m x kp, or a GEMV row of k) . b (kp x n), both float32, K masked exactly at k, rounded to HF32 first
    when `hf32_rounding` is (mantissa bits, trans mode). Stacks of such a and b (one more leading axis) give the
    stack of their products: numpy's matmul makes the same BLAS call for each pair as for the pair alone, so the
    bits are the same (the replay engine's batched data work multiplies several Mmads' operands at once)."""
    if k < b.shape[-2]:
        b = b[..., :k, :]
    if k < a.shape[-1]:
        a = a[..., :k]
    if hf32_rounding is not None:
        a, b = round_to_hf32(a, *hf32_rounding), round_to_hf32(b, *hf32_rounding)
    return a @ b  # fp16/bf16 products are exact in fp32; accumulation in fp32
