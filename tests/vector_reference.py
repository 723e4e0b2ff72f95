"""Plain-loop references of the vector core's instructions, written from the asc-devkit API pages (not from
ascend_sim): one Python loop per repeat, DataBlock and element, on a copy of UB as bytes. Slow on purpose;
the tests keep their parameters small. Also the harness that runs one instruction on a simulated AIV.

Sources (asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/): SIMD计算说明/高维切分.md (a repeat is 8
DataBlocks of 32 B; element k of repeat r is in block r*repStride + (k // C0)*blkStride), 掩码.md (Normal mode:
bit k of mask[1]:mask[0], or the first m elements; Counter mode: the first n elements over all repeats),
数据搬运/DataCopy*.md and DataCopyPad*.md (block counts, lengths and gaps).
"""
from __future__ import annotations

import math

import numpy as np

BLOCK = 32
REPEAT = 256


# ------------------------------------------------------------------------------------------ element selection
def per_repeat(*dtypes) -> int:
    return REPEAT // max(np.dtype(d).itemsize for d in dtypes)


def is_selected(mode: str, mask, r: int, k: int, n_per_repeat: int) -> bool:
    """mode "bits": mask = [low, high] (32-bit types read the low word only); "count": the first mask
    elements of each repeat; "counter": the first mask elements over all repeats."""
    if mode == "bits":
        word = mask[0] if k < 64 else (mask[1] if n_per_repeat > 64 else 0)
        return (int(word) >> (k % 64)) & 1 == 1
    if mode == "count":
        return k < min(mask, n_per_repeat)
    return r * n_per_repeat + k < mask


def element_address(base: int, itemsize: int, r: int, k: int, blk: int, rep: int) -> int:
    c0 = BLOCK // itemsize
    block = r * rep + (k // c0) * blk
    return base + block * BLOCK + (k % c0) * itemsize


def read(ub: np.ndarray, address: int, dtype):
    dt = np.dtype(dtype)
    return ub[address:address + dt.itemsize].view(dt)[0]


def write(ub: np.ndarray, address: int, dtype, value) -> None:
    dt = np.dtype(dtype)
    ub[address:address + dt.itemsize] = np.array([value], dtype=dt).view(np.uint8)


def repeat_op(ub: np.ndarray, fn, dst: tuple, srcs: list, repeats: int, mode: str, mask) -> np.ndarray:
    """dst/src operands: (address, dtype, blkStride, repStride). Each repeat reads all its selected source
    elements, then writes its results. In "counter" mode repeatTime is ignored (repeats = ceil(n / P))."""
    ub = ub.copy()
    n = per_repeat(dst[1], *(s[1] for s in srcs))
    if mode == "counter":
        repeats = math.ceil(mask / n)
    for r in range(repeats):
        results = []
        for k in range(n):
            if not is_selected(mode, mask, r, k, n):
                continue
            args = [read(ub, element_address(a, np.dtype(t).itemsize, r, k, b, p), t) for a, t, b, p in srcs]
            results.append((k, fn(*args)))
        for k, value in results:
            a, t, b, p = dst
            write(ub, element_address(a, np.dtype(t).itemsize, r, k, b, p), t, value)
    return ub


# ------------------------------------------------------------------------------------------ element functions
def f16(x):
    return np.float16(x)


def scalar_fn(name, dtype):
    """The documented formula of each instruction, evaluated on one element in the operands' type."""
    dt = np.dtype(dtype)

    def cast(v):  # float64 holds every exact sum / product / quotient closely enough to round once into dt
        with np.errstate(all="ignore"):
            return np.array([v], dtype=np.float64 if dt.kind == "f" else np.int64).astype(dt)[0]

    if dt.kind == "f":  # exact results of one IEEE operation, rounded once into dt
        exact = {"Add": lambda a, b: float(a) + float(b), "Sub": lambda a, b: float(a) - float(b),
                 "Mul": lambda a, b: float(a) * float(b),
                 "Div": _divide,
                 "Max": lambda a, b: max(float(a), float(b)), "Min": lambda a, b: min(float(a), float(b)),
                 "Exp": lambda a: math.exp(float(a)) if float(a) < 700 else math.inf,
                 "Ln": lambda a: math.log(float(a)) if float(a) > 0 else (-math.inf if float(a) == 0 else math.nan),
                 "Abs": lambda a: abs(float(a)), "Relu": lambda a: max(float(a), 0.0)}
    else:  # integers: two's complement wrap-around
        bits = dt.itemsize * 8

        def wrap(v):
            v = int(v) & ((1 << bits) - 1)
            return v - (1 << bits) if v >= 1 << (bits - 1) else v
        exact = {"Add": lambda a, b: wrap(int(a) + int(b)), "Sub": lambda a, b: wrap(int(a) - int(b)),
                 "Mul": lambda a, b: wrap(int(a) * int(b)), "Max": lambda a, b: max(int(a), int(b)),
                 "Min": lambda a, b: min(int(a), int(b)), "Relu": lambda a: max(int(a), 0)}
    base = exact[name]
    return lambda *args: cast(base(*args))


def _divide(a, b) -> float:
    a, b = float(a), float(b)
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


# ------------------------------------------------------------------------------------------ data movement
def data_copy(src: np.ndarray, s0: int, dst: np.ndarray, d0: int, block_count: int, block_len_bytes: int,
              src_gap_bytes: int, dst_gap_bytes: int) -> np.ndarray:
    """blockCount blocks of blockLen bytes, each gap bytes after the end of the previous one."""
    dst = dst.copy()
    for i in range(block_count):
        s = s0 + i * (block_len_bytes + src_gap_bytes)
        d = d0 + i * (block_len_bytes + dst_gap_bytes)
        for j in range(block_len_bytes):
            dst[d + j] = src[s + j]
    return dst


def data_copy_pad_gm_to_ub(gm: np.ndarray, s0: int, ub: np.ndarray, d0: int, dtype, block_count, block_len,
                           src_stride, dst_stride, is_pad, left, right, value) -> np.ndarray:
    """Each UB row: left pads, the block, right pads, dummy to 32 B; rows dst_stride blocks apart. Pads and
    dummy are paddingValue when isPad; with no pads the dummy is the block's first element; otherwise the
    hardware leaves them undefined (the reference then leaves them unchanged, as the simulator does)."""
    ub = ub.copy()
    if block_count == 0 or block_len == 0:
        return ub  # a NOP (DataCopyPad（GMToUB非对齐数据搬运）.md 约束说明)
    size = np.dtype(dtype).itemsize
    row = math.ceil((block_len + (left + right) * size) / BLOCK) * BLOCK
    for i in range(block_count):
        s = s0 + i * (block_len + src_stride)
        d = d0 + i * (row + dst_stride * BLOCK)
        for j in range(block_len):
            ub[d + left * size + j] = gm[s + j]
        pad_positions = list(range(left)) + list(range(left + block_len // size, row // size))
        for e in pad_positions:
            if left == 0 and right == 0:
                ub[d + e * size:d + (e + 1) * size] = gm[s:s + size]
            elif is_pad:
                write(ub, d + e * size, dtype, value)
    return ub


def data_copy_pad_ub_to_gm(ub: np.ndarray, s0: int, gm: np.ndarray, d0: int, block_count, block_len, src_stride,
                           dst_stride) -> np.ndarray:
    gm = gm.copy()
    row = math.ceil(block_len / BLOCK) * BLOCK
    for i in range(block_count):
        s = s0 + i * (row + src_stride * BLOCK)
        d = d0 + i * (block_len + dst_stride)
        for j in range(block_len):
            gm[d + j] = ub[s + j]
    return gm


# ------------------------------------------------------------------------------------------ harness
def run_on_ub(instructions, ub_init: np.ndarray, platform="Ascend910B2", **chip_options):
    """Copy `ub_init` (bytes) into UB, run `instructions(ub)` (ub: the whole region as a uint8 LocalTensor),
    copy UB back; returns (UB bytes after, report). The flags order MTE2 -> V -> MTE3."""
    from ascend_sim import Chip
    from ascend_sim.ascendc import (DataCopy, DataCopyParams, GlobalTensor, HardEvent, SetFlag, TBuf, TPipe, TPosition,
                                    WaitFlag)
    from ascend_sim.machine.tensor import GmAddr

    nbytes = ub_init.size
    assert nbytes % BLOCK == 0

    def kernel(src, dst):
        pipe = TPipe()
        buf = TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, nbytes)
        ub = buf.Get(np.uint8)
        DataCopy(ub, GlobalTensor(np.uint8).SetGlobalBuffer(src), DataCopyParams(1, nbytes // BLOCK, 0, 0))
        SetFlag(HardEvent.MTE2_V, 0)
        WaitFlag(HardEvent.MTE2_V, 0)
        instructions(ub)
        SetFlag(HardEvent.V_MTE3, 0)
        WaitFlag(HardEvent.V_MTE3, 0)
        DataCopy(GlobalTensor(np.uint8).SetGlobalBuffer(dst), ub, DataCopyParams(1, nbytes // BLOCK, 0, 0))

    chip = Chip(platform, **chip_options)
    src = GmAddr(chip.gm.upload("ub_in", ub_init))
    dst = GmAddr(chip.gm.alloc("ub_out", nbytes))
    report = chip.launch(kernel, 1, src, dst, kernel_type="AIV_ONLY")
    return chip.gm["ub_out"].data.copy(), report


def run_aiv(kernel, *arrays, out_bytes=0, block_dim=1, platform="Ascend910B2", **chip_options):
    """Upload arrays as in0, in1, ... (+ an output `out`), launch `kernel` AIV_ONLY; returns (chip, report)."""
    from ascend_sim import Chip
    from ascend_sim.machine.tensor import GmAddr

    chip = Chip(platform, **chip_options)
    addrs = [GmAddr(chip.gm.upload(f"in{i}", np.ascontiguousarray(a))) for i, a in enumerate(arrays)]
    if out_bytes:
        addrs.append(GmAddr(chip.gm.alloc("out", out_bytes)))
    return chip, chip.launch(kernel, block_dim, *addrs, kernel_type="AIV_ONLY")


# ------------------------------------------------------------------------------------------ Cast
def _float_table(dtype):
    """Every finite value of a 16-bit float type with its bit pattern, sorted; +-inf at the ends with the
    value IEEE rounding compares them at (the largest finite value plus one ulp)."""
    import ml_dtypes  # noqa: F401 - registers bfloat16
    bits = np.arange(65536, dtype=np.uint16)
    with np.errstate(invalid="ignore"):
        values = bits.view(np.dtype(dtype)).astype(np.float64)
    keep = np.isfinite(values) & ~((values == 0) & (bits >= 0x8000))  # one zero
    pairs = sorted(zip(values[keep].tolist(), bits[keep].tolist()))
    top = pairs[-1][0]
    ulp = top - pairs[-2][0]
    inf_bits = int(np.array(np.inf, dtype=np.dtype(dtype)).view(np.uint16))
    return [(-np.inf, inf_bits | 0x8000, -(top + ulp))] + [(v, b, v) for v, b in pairs] + [(np.inf, inf_bits, top + ulp)]


_TABLES: dict = {}


def _neighbours_16(x: float, dtype):
    """(value, bits, position) of the representable values at or just below and at or just above x."""
    import bisect
    key = np.dtype(dtype).name
    if key not in _TABLES:
        table = _float_table(dtype)
        _TABLES[key] = table, [t[2] for t in table[1:-1]]
    table, positions = _TABLES[key]
    finite = table[1:-1]
    i = bisect.bisect_right(positions, x) - 1  # finite[i] <= x < finite[i + 1]
    lo = table[0] if i < 0 else finite[i]
    hi = lo if lo[2] == x and i >= 0 else (table[-1] if i + 1 >= len(finite) else finite[i + 1])
    return lo, hi


def _neighbours_f32(x: float):
    import struct
    near = struct.unpack("<f", struct.pack("<f", x))[0]
    bits = struct.unpack("<I", struct.pack("<f", near))[0]
    other_bits = bits + 1 if (near < x) == (near >= 0) else bits - 1
    other = struct.unpack("<f", struct.pack("<I", other_bits & 0xFFFFFFFF))[0]
    a, b = (near, bits, near), (other, other_bits, other)
    if near == x:
        return a, a
    return (a, b) if near < x else (b, a)


def round_float(x: float, dtype, mode: str):
    """x (exact in float64) rounded into a float type by the RoundMode's rule; a zero keeps x's sign."""
    import math
    if math.isnan(x) or math.isinf(x):
        return x
    r = _round_float(x, dtype, mode)
    return math.copysign(0.0, x) if r == 0 else r


def _round_float(x: float, dtype, mode: str):
    import math
    lo, hi = _neighbours_f32(x) if np.dtype(dtype).itemsize == 4 else _neighbours_16(x, dtype)
    if lo[2] == x and math.isfinite(lo[0]):
        return lo[0]
    if mode == "CAST_FLOOR":
        return lo[0]
    if mode == "CAST_CEIL":
        return hi[0]
    if mode == "CAST_TRUNC":
        return lo[0] if x > 0 else hi[0]
    if mode == "CAST_ODD":
        return lo[0] if lo[1] & 1 else hi[0]
    d_lo, d_hi = x - lo[2], hi[2] - x
    if d_lo != d_hi:
        return lo[0] if d_lo < d_hi else hi[0]
    if mode == "CAST_ROUND":
        return hi[0] if x > 0 else lo[0]
    return lo[0] if lo[1] % 2 == 0 else hi[0]  # CAST_RINT / CAST_NONE: ties to the even pattern


def round_integral(x: float, mode: str) -> float:
    """x rounded to an integer value (exactly, with fractions)."""
    import math
    from fractions import Fraction
    if math.isnan(x) or math.isinf(x):
        return x
    f = Fraction(x)
    if mode == "CAST_FLOOR":
        r = math.floor(f)
    elif mode == "CAST_CEIL":
        r = math.ceil(f)
    elif mode == "CAST_TRUNC":
        r = math.trunc(f)
    elif mode == "CAST_ROUND":
        r = math.floor(abs(f) + Fraction(1, 2)) * (1 if f >= 0 else -1)
    else:
        r = round(f)  # Fraction.__round__: ties to even
    return math.copysign(float(r), x) if r == 0 else float(r)


def cast_element(value, src_dtype, dst_dtype, mode: str):
    """One Cast element: the A2 rules (saturating integers, NaN -> 0 for integer targets)."""
    import math
    dst = np.dtype(dst_dtype)
    x = float(value) if np.dtype(src_dtype).kind == "f" or np.dtype(src_dtype).name == "bfloat16" else int(value)
    if dst.kind == "i":
        info = np.iinfo(dst)
        if isinstance(x, float):
            if math.isnan(x):
                return 0
            x = round_integral(x, mode)
            if math.isinf(x):
                return info.max if x > 0 else info.min
            x = int(x)
        return min(max(x, info.min), info.max)
    if np.dtype(src_dtype) == dst:
        return round_integral(x, mode)
    return round_float(float(x), dst, mode)


# ------------------------------------------------------------------------------------------ reductions
def pair_tree_sum(values: list, dtype):
    """Adjacent pairs added level by level, each sum rounded to dtype (ReduceDataBlock.md 关键特性说明)."""
    t = np.dtype(dtype).type
    values = [t(v) for v in values]
    with np.errstate(all="ignore"):
        while len(values) > 1:
            values = [t(values[i] + values[i + 1]) for i in range(0, len(values), 2)]
    return values[0]


def first_extreme(values: list, largest: bool):
    best = 0
    for i, v in enumerate(values):
        if (v > values[best]) if largest else (v < values[best]):
            best = i
    return values[best], best


def reduce_repeats(ub, dst, src, dtype, kind, repeats, mode, mask, dst_rep, src_blk, src_rep, order="ONLY_VALUE",
                   block_level=False):
    """WholeReduce* (one result per repeat) or BlockReduce* (one per DataBlock); kind "sum" / "max" / "min"."""
    ub = ub.copy()
    if (mode == "count" and mask == 0) or (mode == "bits" and not any(mask)):
        return ub  # ReduceRepeat.md: mask 0 is a NOP
    dt = np.dtype(dtype)
    n = REPEAT // dt.itemsize
    identity = {"sum": 0.0, "max": -np.inf, "min": np.inf}[kind]
    pair = kind != "sum" and not block_level and order in ("VALUE_INDEX", "INDEX_VALUE")
    unit = 2 if pair else 1
    groups = 8 if block_level else 1
    size = n // groups
    for r in range(repeats):
        values = [read(ub, element_address(src, dt.itemsize, r, k, src_blk, src_rep), dt)
                  if is_selected(mode, mask, r, k, n) else dt.type(identity) for k in range(n)]
        for g in range(groups):
            part = values[g * size:(g + 1) * size]
            at = dst + (r * dst_rep * unit * groups + g * unit) * dt.itemsize
            if kind == "sum":
                write(ub, at, dt, pair_tree_sum(part, dt))
                continue
            value, index = first_extreme(part, kind == "max")
            index_bits = np.array([index], dtype=np.uint16 if dt.itemsize == 2 else np.uint32).view(dt)[0]
            first, second = {"VALUE_INDEX": (value, index_bits), "INDEX_VALUE": (index_bits, value),
                             "ONLY_VALUE": (value, None), "ONLY_INDEX": (index_bits, None)}[order]
            write(ub, at, dt, first)
            if second is not None:
                write(ub, at + dt.itemsize, dt, second)
    return ub


def reduce_sum_count(values: np.ndarray):
    """ReduceSum's count form: per-repeat tree sums added to a running total in order (the model's choice)."""
    dt = values.dtype
    n = REPEAT // dt.itemsize
    total = dt.type(0)
    for start in range(0, values.size, n):
        chunk = list(values[start:start + n]) + [dt.type(0)] * (n - len(values[start:start + n]))
        with np.errstate(all="ignore"):
            total = dt.type(total + pair_tree_sum(chunk, dt))
    return total


# ------------------------------------------------------------------------------------------ TransDataTo5HD
def trans_data_to_5hd(ub, dst_list, src_list, dtype, repeat_times, dst_rep, src_rep):
    """Per repeat: dst block j, element i = src block i, element j (16-bit); with repeatTimes 1 the only repeat
    is offset by one RepStride (TransDataTo5HD.md)."""
    ub = ub.copy()
    dt = np.dtype(dtype)
    for r in range(repeat_times):
        k = r + 1 if repeat_times == 1 else r
        rows = [[read(ub, src_list[i] + k * src_rep * BLOCK + j * dt.itemsize, dt) for j in range(16)]
                for i in range(16)]
        for j in range(16):
            for i in range(16):
                write(ub, dst_list[j] + k * dst_rep * BLOCK + i * dt.itemsize, dt, rows[i][j])
    return ub


def trans_data_to_5hd_b8_b32(ub, dst_list, src_list, dtype, repeat_times, dst_rep, src_rep, dst_high=False,
                             src_high=False):
    """TransDataTo5HD.md for 8- and 32-bit elements, per repeat (offset as in trans_data_to_5hd):
    b8:  dst block j, element 16*dstHighHalf + i = src block i, element 16*srcHighHalf + j   (i, j < 16)
    b32: dst block 2j + h, element e = src block 8h + e, element j                           (j, e < 8, h < 2)"""
    ub = ub.copy()
    dt = np.dtype(dtype)
    for r in range(repeat_times):
        k = r + 1 if repeat_times == 1 else r
        s_base = [a + k * src_rep * BLOCK for a in src_list]
        d_base = [a + k * dst_rep * BLOCK for a in dst_list]
        if dt.itemsize == 1:
            moved = [(d_base[j] + 16 * dst_high + i, read(ub, s_base[i] + 16 * src_high + j, dt))
                     for j in range(16) for i in range(16)]
        else:
            moved = [(d_base[2 * j + h] + e * 4, read(ub, s_base[8 * h + e] + j * 4, dt))
                     for j in range(8) for h in range(2) for e in range(8)]
        for address, value in moved:
            write(ub, address, dt, value)
    return ub
