"""What every vector (PIPE_V) instruction shares: UB operand checks, the repeat geometry (8 DataBlocks of 32 B
per repeat, block stride and repeat stride in blocks), the mask (Normal mode: per-repeat bits or a leading
count; Counter mode: a total element count), and one executor that applies an element function to the selected
elements of every repeat.

Sources: asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明/ (高维切分.md: repeats, strides;
掩码.md: mask modes and ranges; 连续计算.md: the count form) and impl/basic_api/dav_c220/
kernel_operator_vec_binary_impl.h (the count form is one instruction in Counter mode with default strides).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ascend_sim.isa.common import BLOCK, check_aligned, check_range, current_core
from ascend_sim.isa.vector.timing import vector_cycles
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import LocalTensor

V = Pipe.V
REPEAT_BYTES = 256  # one repeat reads 8 DataBlocks of 32 B
BLOCKS_PER_REPEAT = 8
FULL_MASK = (1 << 64) - 1
MASK_PLACEHOLDER = 0  # the mask argument when isSetMask=False: the mask register decides
NORM, COUNT = "NORM", "COUNT"  # mask modes (SetMaskNorm / SetMaskCount)


# ------------------------------------------------------------------------------------------ operands
def check_in_ub(core, name: str, pipe: Pipe, tensor, role: str) -> None:
    """A vector operand is a LocalTensor in UB (VECIN/VECOUT/VECCALC)."""
    if tensor.__class__ is not LocalTensor or tensor.buffer.name != "UB":
        where = tensor.buffer.name if isinstance(tensor, LocalTensor) else type(tensor).__name__
        raise core.fault(ParameterOutOfRange(f"{role} is in {where}; {name} takes {role} in UB "
                                             "(VECIN/VECOUT/VECCALC)"), name, pipe)


def check_ub(core, name: str, pipe: Pipe, tensor, role: str) -> None:
    """A vector operand is a LocalTensor in UB, 32 B aligned (通用说明和约束.md)."""
    check_in_ub(core, name, pipe, tensor, role)
    if tensor.address % BLOCK:
        check_aligned(core, name, pipe, tensor, BLOCK, role)


def check_dtype(core, name: str, tensor, allowed: frozenset, role: str = "dst") -> None:
    if tensor.dtype not in allowed:
        names = "/".join(sorted(str(np.dtype(d)) for d in allowed))
        raise core.fault(ParameterOutOfRange(f"{name} on A2/A3 takes {role} dtype {names}, got {tensor.dtype}"),
                         name, V)


def check_same_dtype(core, name: str, dst, *srcs) -> None:
    for i, src in enumerate(srcs):
        if src.dtype is not dst.dtype and src.dtype != dst.dtype:
            raise core.fault(ParameterOutOfRange(f"{name}: src{i if len(srcs) > 1 else ''} dtype {src.dtype} differs "
                                                 f"from dst dtype {dst.dtype}"), name, V)


def check_count(core, name: str, count) -> int:
    if not isinstance(count, (int, np.integer)) or count < 0:
        raise core.fault(ParameterOutOfRange(f"count={count!r} must be an integer >= 0"), name, V)
    return int(count)


# ------------------------------------------------------------------------------------------ the mask
def elements_per_repeat(*dtypes) -> int:
    """256 B of the widest operand: 128 for 16-bit types, 64 for 32-bit types (dtypes: numpy dtypes)."""
    return REPEAT_BYTES // max(d.itemsize for d in dtypes)


def mask_register(core) -> tuple[str, int, int]:
    """(mode, high, low) of the AIV's mask registers (reset state: Normal mode, every bit set)."""
    regs = core.registers
    hi, lo = regs.get("vector_mask", (FULL_MASK, FULL_MASK))
    return regs.get("mask_mode", NORM), hi, lo


def set_mask(core, name: str, mask, per_repeat: int) -> None:
    """What `SetMask<T>(mask)` / `SetMask<T>(mask[1], mask[0])` writes before the instruction (isSetMask=true).

    A count m in Normal mode sets the low m bits (above the repeat's size it means a full repeat; asc-devkit
    kernel_utils_base.h SetMask(len)); in Counter mode the low word is the element count. A list is
    [low, high] (uint64_t mask[2])."""
    mode = core.registers.get("mask_mode", NORM)
    if isinstance(mask, (list, tuple, np.ndarray)):
        if len(mask) < 1 or len(mask) > 2:
            raise core.fault(ParameterOutOfRange(f"mask[] has {len(mask)} words; it is uint64_t mask[2]"), name, V)
        lo = int(mask[0])
        hi = int(mask[1]) if len(mask) > 1 else 0
        for word, value in (("mask[0]", lo), ("mask[1]", hi)):
            check_range(core, name, V, word, value, 0, FULL_MASK)
        core.registers["vector_mask"] = (hi, lo)
        return
    check_range(core, name, V, "mask", int(mask) if isinstance(mask, np.integer) else mask, 0, FULL_MASK)
    if mode == COUNT:
        core.registers["vector_mask"] = (0, mask)
        return
    m = min(mask, per_repeat)
    low_bits = min(m, 64)
    core.registers["vector_mask"] = (((1 << (m - 64)) - 1) if m > 64 else 0, (1 << low_bits) - 1)


@lru_cache(maxsize=1024)
def _normal_bits(hi: int, lo: int, per_repeat: int) -> np.ndarray:
    """Element k of a repeat takes part when bit k of (high:low) is set; 32-bit types use the low word only."""
    bits = np.array([(lo >> k) & 1 for k in range(64)] + [(hi >> k) & 1 for k in range(64)], dtype=bool)
    bits = bits[:per_repeat]
    bits.setflags(write=False)
    return bits


def check_element_count(core, name: str, count: int, per_repeat: int, what: str = "count") -> None:
    """A count (count form or Counter mode) cannot cover more elements than UB holds of the operands' type."""
    limit = core.platform.UB * per_repeat // REPEAT_BYTES
    if count > limit:
        raise core.fault(ParameterOutOfRange(
            f"{what}={count} elements outside [0, {limit}] (UB is {core.platform.UB} bytes)"), name, V)


def selection(core, name: str, repeat_time: int, per_repeat: int) -> tuple[int, tuple]:
    """(repeats, selection key) the mask registers give: ("bits", hi, lo) in Normal mode, ("count", n) in
    Counter mode, where repeatTime is ignored and the repeats follow from the count."""
    mode, hi, lo = mask_register(core)
    if mode == COUNT:
        check_element_count(core, name, lo, per_repeat, "Counter-mode mask count")
        return -(-lo // per_repeat), ("count", lo)
    return repeat_time, ("bits", hi, lo)


def selected(key: tuple, repeats: int, per_repeat: int) -> np.ndarray:
    """The (repeats, per_repeat) boolean array of the elements an instruction computes."""
    if key[0] == "count":
        return (np.arange(repeats * per_repeat) < key[1]).reshape(repeats, per_repeat)
    return np.broadcast_to(_normal_bits(key[1], key[2], per_repeat), (repeats, per_repeat))


# ------------------------------------------------------------------------------------------ geometry
def repeat_offsets(repeats: int, per_repeat: int, itemsize: int, blk_stride: int, rep_stride: int) -> np.ndarray:
    """Element offsets (repeats, per_repeat) of one operand: element k of repeat r is in DataBlock
    r * repStride + (k // C0) * blkStride, at k % C0 in it (C0 = 32 B / element size)."""
    c0 = BLOCK // itemsize
    k = np.arange(per_repeat)
    r = np.arange(repeats).reshape(-1, 1)
    return (r * rep_stride + (k // c0) * blk_stride) * c0 + k % c0


class Plan:
    """Where an instruction's selected elements are, per operand, in repeat order: a slice (lo, hi) when they are
    one contiguous run, else flat element indices (`flats`); whether its repeats must run one after another (a
    later repeat reads or rewrites what an earlier one wrote); `rows`, the bounds of each repeat's elements in
    that order; `spans`, the element count each operand's view needs."""

    __slots__ = ("flats", "rows", "spans", "sequential", "slices", "count", "byte_ranges", "partial_overlap",
                 "later_reads")

    def __init__(self, flats, rows, spans, sequential, slices, count, byte_ranges, partial_overlap, later_reads):
        self.flats, self.rows, self.spans, self.sequential = flats, rows, spans, sequential
        self.slices, self.count, self.byte_ranges = slices, count, byte_ranges
        self.partial_overlap = partial_overlap  # (repeat, source) where dst meets a source only in part, or None
        self.later_reads = later_reads  # sources a later repeat reads where an earlier repeat's dst wrote

    def index(self, i: int, part: slice | None = None):
        """The selected elements of operand i (all repeats, or the range `part` of them) as a slice or indices."""
        s = self.slices[i]
        if s is not None:
            return slice(s[0], s[1]) if part is None else slice(s[0] + part.start, s[0] + part.stop)
        return self.flats[i] if part is None else self.flats[i][part]


@lru_cache(maxsize=512)
def make_plan(repeats: int, per_repeat: int, key: tuple, operands: tuple) -> Plan | None:
    """operands: ((address, itemsize, blk_stride, rep_stride), ...) with the destination first. None when no
    element is selected."""
    sel = selected(key, repeats, per_repeat)
    count = int(sel.sum())
    if count == 0:
        return None
    flats, spans, slices, byte_ranges, blocks, addresses = [], [], [], [], [], []
    for address, itemsize, blk, rep in operands:
        offs = repeat_offsets(repeats, per_repeat, itemsize, blk, rep)
        addresses.append(address + offs * itemsize)
        flat = offs[sel]
        lo, hi = int(flat.min()), int(flat.max()) + 1
        contiguous = hi - lo == count and flat[0] == lo and bool(np.all(np.diff(flat) == 1))
        flats.append(None if contiguous else flat.astype(np.int32))  # cached: keep only what is needed
        slices.append((lo, hi) if contiguous else None)
        spans.append(hi)
        byte_ranges.append((address + lo * itemsize, address + hi * itemsize))
        blocks.append(address // BLOCK + offs // (BLOCK // itemsize))  # (repeats, per_repeat) block ids
    rows = np.concatenate(([0], np.cumsum(sel.sum(axis=1))))
    sequential, later_reads = _repeat_order(blocks, byte_ranges) if repeats > 1 else (False, ())
    partial = _partial_overlap(blocks, addresses, byte_ranges, [op[1] for op in operands])
    return Plan(tuple(flats), rows, tuple(spans), sequential, tuple(slices), count, tuple(byte_ranges), partial,
                later_reads)


def _partial_overlap(blocks: list, addresses: list, byte_ranges: list, itemsizes: list):
    """(repeat, source index) of the first repeat whose destination shares a DataBlock with a source without
    being that source element for element (通用说明和约束.md: within a repeat, dst and src overlap 100% or not
    at all), or None. Operands of other element sizes (Cast) are not compared."""
    d_lo, d_hi = byte_ranges[0]
    dst_blocks = blocks[0][:, ::BLOCK // itemsizes[0]]  # the 8 (or fewer) blocks of each repeat
    for i in range(1, len(blocks)):
        lo, hi = byte_ranges[i]
        if itemsizes[i] != itemsizes[0] or not (lo < d_hi and d_lo < hi):
            continue
        src_blocks = blocks[i][:, ::BLOCK // itemsizes[i]]
        meets = (dst_blocks[:, :, None] == src_blocks[:, None, :]).any(axis=(1, 2))
        same = (addresses[0] == addresses[i]).all(axis=1)
        bad = np.flatnonzero(meets & ~same)
        if bad.size:
            return int(bad[0]), i - 1
    return None


def _repeat_order(blocks: list, byte_ranges: list) -> tuple[bool, tuple]:
    """(sequential, later_reads): whether the repeats must run in order because a block the destination
    writes in repeat r is read or written again in a later repeat, and which sources (0 = src0) read such a
    block later. Checked per 32 B block, so it may see a meeting where elements do not actually meet."""
    d_lo, d_hi = byte_ranges[0]
    if not any(lo < d_hi and d_lo < hi for lo, hi in byte_ranges[1:]) and len(np.unique(blocks[0])) == blocks[0].size:
        return False, ()  # no source meets the destination and no destination block is written twice
    dst = blocks[0]
    repeats = dst.shape[0]
    base = int(min(b.min() for b in blocks))
    size = int(max(b.max() for b in blocks)) - base + 1
    first_write = np.full(size, repeats, dtype=np.int64)
    ids = np.broadcast_to(np.arange(repeats).reshape(-1, 1), dst.shape).ravel()
    np.minimum.at(first_write, (dst - base).ravel(), ids)

    def later(b):
        return bool(np.any(first_write[(b - base).ravel()] < np.broadcast_to(
            np.arange(repeats).reshape(-1, 1), b.shape).ravel()))
    readers = tuple(i - 1 for i in range(1, len(blocks)) if later(blocks[i]))
    return bool(readers) or later(dst), readers


def run_elementwise(plan: Plan, operands: tuple, fn) -> None:
    """dst[selected] = fn(src0[selected], ...): all repeats at once, or repeat by repeat when they interfere
    (each repeat reads its sources, then writes)."""
    views = [buf.view(dtype, address, span) for (buf, address, dtype), span in zip(operands, plan.spans)]
    n = len(operands)
    if not plan.sequential:
        views[0][plan.index(0)] = fn(*(views[i][plan.index(i)] for i in range(1, n)))
        return
    rows = plan.rows
    for r in range(len(rows) - 1):
        if rows[r + 1] > rows[r]:
            part = slice(int(rows[r]), int(rows[r + 1]))
            views[0][plan.index(0, part)] = fn(*(views[i][plan.index(i, part)] for i in range(1, n)))


def vector_cost(ops, model) -> float:
    """The instruction's cycles from its operands' timing key (name, dtype, repeats, per_repeat) in the
    platform's vector table (timing.py)."""
    return vector_cycles(*ops.timing, model.platform.vector_timing)


__all__ = ["V", "REPEAT_BYTES", "FULL_MASK", "MASK_PLACEHOLDER", "NORM", "COUNT", "check_in_ub", "check_ub", "check_dtype",
           "check_same_dtype", "check_count", "elements_per_repeat", "mask_register", "set_mask", "check_element_count", "selection",
           "selected", "repeat_offsets", "Plan", "make_plan", "run_elementwise", "vector_cost", "current_core"]
