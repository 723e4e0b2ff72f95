"""float16 -> float32 conversions of the replay data pass, compiled: an Mmad's A and B walked from their L0
fractals in the order it multiplies them (engine/replay_data.py's L0CChains, the records one by one: `product`),
and contiguous elements (RunPlan.run's L1 window images and gathered operands: `to_float32`); and the joined
transposed LoadData2D copies of engine/short_runs.py (`transposed_fractals`).

machine/mmad.py converts an operand by the fp16 -> fp32 table (machine/dtypes.py's `to_float32`) through a
transposed view: numpy first copies the strided uint16 view into an index array, then takes from the 256 KB
table (C3D conv3a's A, 256 x 48: about 13 us). Here one loop walks the fractals in the multiply order and
converts each element from its bits (sign, exponent and mantissa moved as the table's float32 holds them:
normals and infinities / NaNs by shifts, NaN payloads kept, subnormals as their integer times 2^-24, which is
exact), branch-free, so the loop vectorises (about 5 us for that A). The float32 bits are the table's (numpy's
cast) for all 65,536 patterns (tests/ascend_sim/passes/test_fast_fractals.py checks every one), so the GEMM gets
the same operands and makes the same BLAS call. Walks whose innermost step is not one element (B's transpose
inside each fractal) convert the elements in place order first, then gather them. numba is loaded already:
the data pass runs only after the compiled schedule.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascend_sim.machine import dtypes, mmad
from ascend_sim.machine.dtypes import float16
from ascend_sim.passes.numba_jit import njit


@njit(cache=True, inline="always")
def _f32_bits(h16):
    """The float32 bits of the float16 with bits h16 (the table's, machine/dtypes.py's _F16_TO_F32)."""
    h = np.uint32(h16)
    magnitude = h & np.uint32(0x7FFF)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    # exponent rebiased from 15 to 127 (normals), or to 255 (infinities and NaNs, the payload shifted along)
    shifted = (magnitude << np.uint32(13)) + (np.uint32(0x70000000) if magnitude >= np.uint32(0x7C00)
                                              else np.uint32(0x38000000))
    subnormal = np.float32(np.float32(magnitude) * np.float32(2.0 ** -24)).view(np.uint32)  # exact: < 2^24
    return sign | (subnormal if magnitude < np.uint32(0x400) else shifted)


@njit(cache=True)
def f16_walk(bits, first: int, walk):
    """The float16 elements of `bits` (uint16) at first + i0*s0 + i1*s1 + i2*s2 + i3*s3 for each (i0, i1, i2, i3)
    of dims in C order, as a fresh float32 (rows, cols) array; `walk`: int64 [n0, n1, n2, n3, s0, s1, s2, s3, rows,
    cols] (_walks')."""
    out = np.empty(walk[0] * walk[1] * walk[2] * walk[3], np.uint32)
    walk_into(bits, first, walk, out, 0)
    return out.view(np.float32).reshape((walk[8], walk[9]))


@njit(cache=True)
def walk_into(bits, first: int, walk, out, o: int) -> None:
    """f16_walk's float32 bits written into `out` (uint32) from element o on (passes/fast_steps.py's fused steps
    write an Mmad's operands into a scratch array). Unsigned indices: numba then makes no negative-index check
    and the loops vectorise."""
    n0, n1, n2, n3, s0, s1, s2, s3 = walk[0], walk[1], walk[2], walk[3], walk[4], walk[5], walk[6], walk[7]
    o = np.uint64(o)
    if s3 == 1:
        for i0 in range(n0):
            for i1 in range(n1):
                for i2 in range(n2):
                    at = np.uint64(first + i0 * s0 + i1 * s1 + i2 * s2)
                    for i3 in range(n3):
                        out[o + np.uint64(i3)] = _f32_bits(bits[at + np.uint64(i3)])
                    o += np.uint64(n3)
        return
    # the elements the walk reads, converted in place order, then gathered
    lo = first + min(0, (n0 - 1) * s0) + min(0, (n1 - 1) * s1) + min(0, (n2 - 1) * s2) + min(0, (n3 - 1) * s3)
    hi = first + max(0, (n0 - 1) * s0) + max(0, (n1 - 1) * s1) + max(0, (n2 - 1) * s2) + max(0, (n3 - 1) * s3)
    converted = np.empty(hi - lo + 1, np.uint32)
    for i in range(hi - lo + 1):
        converted[i] = _f32_bits(bits[np.uint64(lo + i)])
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                at = first - lo + i0 * s0 + i1 * s1 + i2 * s2
                for i3 in range(n3):
                    out[o + np.uint64(i3)] = converted[np.uint64(at + i3 * s3)]
                o += np.uint64(n3)


@njit(cache=True)
def _f16_into(bits, out) -> None:
    """out (uint32, float32 bits) = the float16 `bits` (uint16), both flat and of one size."""
    for i in range(bits.size):
        out[i] = _f32_bits(bits[i])


def to_float32(elements: np.ndarray, dtype: np.dtype, out: np.ndarray | None = None) -> np.ndarray:
    """machine/dtypes.py's to_float32 (the same contract and bits), C-contiguous float16 elements converted by
    the compiled loop (the replay plans' L1 window images and gathered operands); anything else by machine's."""
    if dtype != float16 or not elements.flags.c_contiguous or not (out is None or out.flags.c_contiguous):
        return dtypes.to_float32(elements, dtype, out)
    if out is None:
        out = np.empty(elements.shape, np.float32)
    _f16_into(elements.reshape(-1), out.reshape(-1).view(np.uint32))
    return out


@njit(cache=True)
def f16_operands(a_bits, a_first: int, b_bits, b_first: int, walks):
    """An Mmad's A and B (f16_walk's of each, `walks`: _walks' two rows) in one call."""
    return f16_walk(a_bits, a_first, walks[0]), f16_walk(b_bits, b_first, walks[1])


@njit(cache=True)
def transposed_fractals(src, s0: int, s_step: int, s_pitch: int, dst, d0: int, d_step: int, d_pitch: int,
                        count: int, reps: int) -> None:
    """`count` x `reps` 16 x 16 fractals of 16-bit elements copied transposed (element [r][c] to [c][r]), the
    (c, r)-th from src element s0 + c*s_step + r*s_pitch to dst element d0 + c*d_step + r*d_pitch (steps and
    pitches in elements, either sign; the caller checked that every fractal lies inside both arrays):
    engine/short_runs.py's joined LoadData2D copies."""
    for c in range(count):
        for r in range(reps):
            s = s0 + c * s_step + r * s_pitch
            d = d0 + c * d_step + r * d_pitch
            for i in range(16):
                for j in range(16):
                    dst[np.uint64(d + i * 16 + j)] = src[np.uint64(s + j * 16 + i)]


def product(ops) -> np.ndarray:
    """machine/mmad.py's product of an Mmad's operands (MmadOperands), its float16 A and B converted by the
    compiled walk: the same float32 operands, shapes and BLAS call, so the same bits. GEMV Mmads, other dtypes
    and odd byte addresses go to machine/mmad.py's."""
    if ops.dtype != float16 or ops.gemv or (ops.a0 | ops.b0) & 1:
        return mmad.product(ops)
    a, b = f16_operands(ops.abuf.data.view(np.uint16), ops.a0 >> 1, ops.bbuf.data.view(np.uint16), ops.b0 >> 1,
                        _walks(ops.a_nz, ops.m1, ops.k1, ops.n1, ops.c0))
    return mmad.multiply(a, b, ops.k, ops.hf32_rounding)


def _merged(dims: list, steps: list) -> list:
    """A walk's dims and steps without its axes of one element and with each axis that continues the one inside
    it (its step that axis' whole extent) merged into it, leading dims of 1: the same elements in the same order,
    in longer inner loops (dw's A, 128 x 16, one run of 2,048 elements instead of 128 of 16)."""
    merged: list = []  # (dim, step), innermost first
    for n, step in reversed([(n, step) for n, step in zip(dims, steps) if n != 1]):
        if merged and step == merged[-1][0] * merged[-1][1]:
            merged[-1] = (merged[-1][0] * n, merged[-1][1])
        else:
            merged.append((n, step))
    merged += [(1, 0)] * (4 - len(merged))
    merged.reverse()
    return [int(n) for n, _ in merged] + [int(step) for _, step in merged]


@lru_cache(maxsize=64)
def _walks(a_nz: bool, m1: int, k1: int, n1: int, c0: int) -> np.ndarray:
    """Per operand (A, B), f16_walk's walk: machine/mmad.py's fractal_layouts as the transposed fractals' dims,
    each axis' step in the source, and the (m, k) / (k, n) shape."""
    walks = []
    for (shape, axes), matrix in zip(mmad.fractal_layouts(a_nz, m1, k1, n1, c0),
                                     ((m1 * 16, k1 * c0), (k1 * c0, n1 * 16))):
        steps = [int(np.prod(shape[axis + 1:])) for axis in range(4)]
        walks.append(_merged([shape[axis] for axis in axes], [steps[axis] for axis in axes]) + list(matrix))
    walks = np.array(walks, np.int64)
    walks.flags.writeable = False  # shared by every call of this shape
    return walks
