"""A short run's 16-bit loads and its float16 Mmads' operand conversions in one compiled call (engine/short_runs.py's
fused steps): dw's VideoMAE runs two LoadData 3Dv2 and one Mmad between its L1 loads, 40k times a launch, and
each of those was a numpy take or a compiled walk with its own Python around it (about 5 us a load, 8 us an
Mmad's conversions beside its GEMM).

`run_moves` runs a program of rows in order on a core's L1, L0A and L0B (uint16 views, by number: BUFFERS):
- LOAD2D: isa/mte1.py's LoadData2D, `count` of them alike (short_runs.load2d_copies' joined copies): whole
  256-element fractals, each transposed ([r][c] to [c][r]) or not;
- LOAD3D: isa/mte1.py's dense LoadData 3Dv2 (short_runs._load3d): a take from the source's `span` elements by
  a map clipped once as numpy's mode="clip" clips, by whole C0 blocks or element by element, then the pads
  written;
- CONVERT: an Mmad operand's float16 elements walked into the scratch array as float32 bits
  (fast_fractals.walk_into, the same bits as machine/mmad.py's conversion);
so each Mmad's operands are converted from L0A / L0B as they stand at its place in the run. The GEMMs and the
L0C sums stay in Python (the same BLAS call per Mmad on the same float32 operands). Indices are not checked:
short_runs checks every row's ranges against the buffers when it builds the program. The data pass runs only
after the compiled schedule, so numba is loaded already.
"""
from __future__ import annotations

import numpy as np

from ascend_sim.passes.fast_fractals import walk_into
from ascend_sim.passes.numba_jit import njit

BUFFERS = ("L1", "L0A", "L0B")  # run_moves' buffers, by number
LOAD2D, LOAD3D, CONVERT = 0, 1, 2
WIDTH = 12  # int64 fields a program row
# LOAD2D:  op, src, s0, s_step, s_pitch, dst, d0, d_step, d_pitch, count, reps, transpose (elements)
# LOAD3D:  op, src, s0, span, dst, d0, count, c0, map (offset in `side`: C0 block numbers or elements from s0,
#          clipped to the span as numpy's mode="clip" clips them), blocks (1: the map is C0 block numbers,
#          0: elements), pads (offset in `side` of their count then the positions; -1: none), pad bits
# CONVERT: op, buf, first, walk (offset in `side` of fast_fractals' 10-field walk), out (element of scratch)


@njit(cache=True)
def run_moves(program, side, l1, l0a, l0b, scratch) -> None:
    """The program's rows in order (the module's docstring); `side`: int64 maps, pads and walks the rows point
    into; l1, l0a, l0b: the core's buffers as uint16; scratch: uint32, the converted operands."""
    for row in range(program.shape[0]):
        p = program[row]
        op = p[0]
        if op == CONVERT:
            bits = l1 if p[1] == 0 else l0a if p[1] == 1 else l0b
            walk_into(bits, p[2], side[p[3]:p[3] + 10], scratch, p[4])
            continue
        src = l1 if p[1] == 0 else l0a if p[1] == 1 else l0b
        if op == LOAD2D:
            dst = l1 if p[5] == 0 else l0a if p[5] == 1 else l0b
            for c in range(p[9]):
                for r in range(p[10]):
                    s = np.uint64(p[2] + c * p[3] + r * p[4])
                    d = np.uint64(p[6] + c * p[7] + r * p[8])
                    if p[11]:
                        for i in range(16):
                            for j in range(16):
                                dst[d + np.uint64(i * 16 + j)] = src[s + np.uint64(j * 16 + i)]
                    else:
                        for e in range(256):
                            dst[d + np.uint64(e)] = src[s + np.uint64(e)]
            continue
        dst = l1 if p[4] == 0 else l0a if p[4] == 1 else l0b
        s0, d0, count, c0, at = p[2], p[5], p[6], p[7], p[8]
        if p[9]:  # whole C0 blocks
            for r in range(count // c0):
                s = np.uint64(s0 + side[at + r] * c0)
                d = np.uint64(d0 + r * c0)
                for e in range(c0):
                    dst[d + np.uint64(e)] = src[s + np.uint64(e)]
        else:
            for i in range(count):
                dst[np.uint64(d0 + i)] = src[np.uint64(s0 + side[at + i])]
        if p[10] >= 0:
            pad = np.uint16(p[11])
            for k in range(side[p[10]]):
                dst[np.uint64(d0 + side[p[10] + 1 + k])] = pad
