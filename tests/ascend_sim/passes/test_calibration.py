"""The timing model against measured reference points (docs/timing.md, "Reference points").

Each point is a profiling value of hw-native-sys/pto-isa's A2/A3 cost-model tests (commit 3186c381,
tests/costmodel/st/testcase/<case>/main.cpp: the `profiling` argument, in cycles), rebuilt here as a small
kernel with the case's shape and dtype, issuing the instructions pto-isa's A2/A3 implementation issues for it
(include/pto/common/arch/memory/tload_common.hpp: a TLOAD to a Vec tile is one copy_gm_to_ubuf per outer
index of the 5-D global shape, each `rows` bursts of one row; TMATMUL is one mad; TADD and the other
element-wise tile ops on whole repeats one vector instruction; TMOV between Vec tiles copy_ubuf_to_ubuf). A
point passes when the simulated cycles are within its group's tolerance of the reference; a known gap is a
strict xfail with its reason.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import run_kernel
from vector_reference import run_aiv

from ascend_sim import ascendc
from ascend_sim.ascendc import (DataCopy, DataCopyExtParams, DataCopyPad, DataCopyPadExtParams, DataCopyParams,
                                GlobalTensor, Mmad, MmadParams, TBuf, TPipe, TPosition)
from ascend_sim.isa.vector.cast import RoundMode
from ascend_sim.machine.platform import get_platform

# Relative error allowed. Copies: 5%, the spread of the tload points around the two-point fit (c08 is the
# worst, +3.8%). Mmad: exact, as pto-isa asks of its own model (accuracy 1.0 on every tmatmul case). Vector:
# 10%, about the scatter of single measurements (pto-isa's own model is held to 90-96% on these cases).
COPY_TOLERANCE = 0.05
MMAD_TOLERANCE = 0.0
VECTOR_TOLERANCE = 0.10


def _error(model: float, reference: float) -> float:
    return model / reference - 1


# --------------------------------------------------------------------------- GM -> UB (TLOAD to a Vec tile)
# (case, dtype, copies, rows per copy, bytes per row, profiling cycles)
TLOAD = [
    ("c01_nd_float_128x128", np.float32, 1, 128, 512, 776),
    ("c02_nd_float_256x64", np.float32, 8, 32, 256, 2624),
    ("c03_nd_float_128x127_padmax", np.float32, 1, 128, 508, 773),
    ("c04_nd_int16_128x127_padmax", np.int16, 1, 128, 254, 519),
    ("c05_nd_uint8_128x127_padmin", np.uint8, 1, 128, 127, 392),
    ("c06_nd_int16_64x128_dyn", np.int16, 32, 2, 256, 8576),
    ("c08_nd_float_256x60_padmax", np.float32, 8, 32, 240, 2497),
    ("c09_dn_float_64x128", np.float32, 32, 4, 256, 8704),
]
# c07 is c06 with a static shape (the same copies, the same 8576 cycles); c10 is the known gap below.


def tload_cycles(dtype, copies: int, rows: int, row_bytes: int) -> float:
    """One AIV: `copies` DataCopyPad GM -> UB of `rows` rows of `row_bytes` each, back to back on MTE2."""
    pitch = -(-row_bytes // 32) * 32  # the UB row: the tile's row, each copied row padded to 32 bytes

    def kernel(src):
        pipe, buf = TPipe(), TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, copies * rows * pitch)
        ub = buf.Get(dtype)
        gm = GlobalTensor(dtype).SetGlobalBuffer(src)
        per_copy = rows * row_bytes // np.dtype(dtype).itemsize
        for i in range(copies):
            DataCopyPad(ub[i * rows * pitch // np.dtype(dtype).itemsize], gm[i * per_copy],
                        DataCopyExtParams(rows, row_bytes, 0, 0, 0), DataCopyPadExtParams())

    gm_bytes = copies * rows * row_bytes
    _, report = run_aiv(kernel, np.zeros(gm_bytes // np.dtype(dtype).itemsize, dtype), execute=False)
    return report.cycles


@pytest.mark.parametrize("case, dtype, copies, rows, row_bytes, reference", TLOAD, ids=[c[0] for c in TLOAD])
def test_gm_to_ub_copies_match_the_tload_profiling(case, dtype, copies, rows, row_bytes, reference):
    cycles = tload_cycles(dtype, copies, rows, row_bytes)
    assert abs(_error(cycles, reference)) <= COPY_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


@pytest.mark.xfail(strict=True, reason="known gap: pto-isa tload c10 (DN, 8 copies of 8 bursts of 1020 B, GM "
                   "column stride 8 < 255 rows) measures 8352 cycles, 1044 per copy; the model prices the bytes "
                   "(264 + 8160 / 128 = 328 per copy) and has no slow path for it")
def test_tload_c10_unaligned_dn_bursts():
    cycles = tload_cycles(np.float32, 8, 8, 1020)
    assert abs(_error(cycles, 8352)) <= COPY_TOLERANCE


# --------------------------------------------------------------------------- GM -> L1 (TLOAD to a conv tile)
# (case, dtype, bursts, 32-byte blocks per burst, profiling cycles): tloadconv's NC1HWC0 cases, one
# copy_gm_to_cbuf each (include/pto/npu/a2a3/TLoad.hpp, TLoad5HD). Its FRACTAL_Z cases have accuracy 0 there
# (unchecked) and are left out.
TLOADCONV = [
    ("c01_nc1hwc0_half_1_2_4_4", np.float16, 2, 16, 28),
    ("c02_nc1hwc0_float_1_4_10_10", np.float32, 4, 100, 116),
]


def gm_to_l1_cycles(dtype, bursts: int, blocks: int, platform="Ascend910B2") -> float:
    """One AIC: one DataCopy GM -> L1 of `bursts` bursts of `blocks` 32-byte blocks; its pipe time."""
    def body(src):
        pipe, buf = TPipe(), TBuf(TPosition.A1)
        pipe.InitBuffer(buf, bursts * blocks * 32)
        DataCopy(buf.Get(dtype), GlobalTensor(dtype).SetGlobalBuffer(src), DataCopyParams(bursts, blocks, 0, 0))

    _, report = run_kernel(body, np.zeros(bursts * blocks * 32 // np.dtype(dtype).itemsize, dtype),
                           platform=platform, execute=False)
    copy = next(r for r in report.logs[0] if r.name == "DataCopy")
    return copy.end - copy.start


@pytest.mark.xfail(strict=True, reason="known gap: tloadconv's two GM -> L1 figures fit about 20 + bytes / 134, "
                   "a fixed cost 13 times smaller than the eight GM -> UB points' 264; one MTE2 overhead cannot "
                   "fit both (docs/timing.md, reference points)")
@pytest.mark.parametrize("case, dtype, bursts, blocks, reference", TLOADCONV, ids=[c[0] for c in TLOADCONV])
def test_gm_to_l1_copies_match_the_tloadconv_profiling(case, dtype, bursts, blocks, reference):
    cycles = gm_to_l1_cycles(dtype, bursts, blocks)
    assert abs(_error(cycles, reference)) <= COPY_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


@pytest.mark.parametrize("case, dtype, bursts, blocks, reference", TLOADCONV, ids=[c[0] for c in TLOADCONV])
def test_the_tloadconv_reading_is_a_documented_override(case, dtype, bursts, blocks, reference):
    """platform.py's [CONFLICT] option for GM -> L1 (about 20 + bytes / 134) reproduces tloadconv."""
    tloadconv = get_platform("Ascend910B2").with_overrides(rates={"mte2_overhead": 20, "gm_to_l1": 134.0})
    cycles = gm_to_l1_cycles(dtype, bursts, blocks, tloadconv)
    assert abs(_error(cycles, reference)) <= COPY_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


# --------------------------------------------------------------------------- UB -> UB (TMOV Vec -> Vec)
# (case, copies, 32-byte blocks per copy, profiling cycles): TMovToVecImpl (include/pto/npu/a2a3/TMov.hpp) issues
# one copy_ubuf_to_ubuf for a whole tile, one per row when the valid columns are fewer than the tile's. c02-c08
# are c01 with other layouts (the same copy, 1029), c11-c16 are c10's (1323).
TMOV = [
    ("c01_f_64_128_64_128", 1, 1024, 1029),
    ("c09_f_16_24_15_23", 15, 3, 120),
    ("c10_f_64_128_63_125", 63, 16, 1323),
]


def ub_to_ub_cycles(copies: int, blocks: int) -> float:
    """One AIV: `copies` DataCopy UB -> UB of one burst of `blocks` 32-byte blocks each, back to back on V."""
    def kernel():
        pipe, buf = TPipe(), TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 2 * copies * blocks * 32)
        ub = buf.Get(np.float32)
        for i in range(copies):
            DataCopy(ub[(copies + i) * blocks * 8], ub[i * blocks * 8], DataCopyParams(1, blocks, 0, 0))

    _, report = run_aiv(kernel, execute=False)
    copies_on_v = [r for r in report.logs[0] if r.name == "DataCopy(UB->UB)"]
    return copies_on_v[-1].end - copies_on_v[0].start


@pytest.mark.parametrize("case, copies, blocks, reference", TMOV, ids=[c[0] for c in TMOV])
def test_ub_to_ub_copies_match_the_tmov_profiling(case, copies, blocks, reference):
    cycles = ub_to_ub_cycles(copies, blocks)
    assert abs(_error(cycles, reference)) <= COPY_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


# --------------------------------------------------------------------------- Mmad (TMATMUL)
# (case, operand dtype, m, k, n, Mmads back to back, profiling cycles of the last one)
TMATMUL = [
    ("half_40x50x60", np.float16, 40, 50, 60, 1, 54),
    ("split_k_half_128x128x64_reps5", np.float16, 128, 128, 64, 5, 262),
    ("float_120x110x50", np.float32, 120, 110, 50, 1, 902),
]
# int8_6x7x8 (7 cycles) is left out: the simulator's cube takes fp16 / bf16 / fp32 operands only.


def mmad_cycles(dtype, m: int, k: int, n: int, repeats: int) -> float:
    """One AIC: `repeats` Mmads on L0A/L0B (the later ones accumulate); the last one's pipe time."""
    def body():
        pipe = TPipe()
        a, b, c = TBuf(TPosition.A2), TBuf(TPosition.B2), TBuf(TPosition.CO1)
        for buf, size in ((a, 64 * 1024), (b, 64 * 1024), (c, 128 * 1024)):
            pipe.InitBuffer(buf, size)
        for i in range(repeats):
            Mmad(c.Get(np.float32), a.Get(dtype), b.Get(dtype), MmadParams(m=m, n=n, k=k, cmatrixInitVal=i == 0))

    _, report = run_kernel(body, check_races=False)
    last = [r for r in report.logs[0] if r.name == "Mmad"][-1]
    return last.end - last.start


@pytest.mark.parametrize("case, dtype, m, k, n, repeats, reference", TMATMUL, ids=[c[0] for c in TMATMUL])
def test_mmad_matches_the_tmatmul_profiling(case, dtype, m, k, n, repeats, reference):
    cycles = mmad_cycles(dtype, m, k, n, repeats)
    assert abs(_error(cycles, reference)) <= MMAD_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


# --------------------------------------------------------------------------- vector (TADD, TEXP, ...)
# (case, instruction, dtype, elements, profiling cycles): the fp16/fp32/int32 cases whose tile is whole 256-byte
# repeats, which pto-isa's A2/A3 binary and unary ops issue as one instruction of elements / (256 B) repeats
# (include/pto/npu/a2a3/TBinOp.hpp); the count form of ours issues the same repeats. Left out: int16 cases and
# tiles with partial rows (count-mode or per-row paths), the reductions over several repeats per row and over
# columns (several instructions each), and cases with profiling 0 (unmeasured).
VECTOR = [
    ("tadd_float_64x64", "Add", np.float32, 4096, 160),
    ("tadd_half_16x256", "Add", np.float16, 4096, 92),
    ("tadd_int32_64x64", "Add", np.int32, 4096, 151),
    ("tsub_float_64x64", "Sub", np.float32, 4096, 153),
    ("tmul_float_64x64", "Mul", np.float32, 4096, 168),
    ("tmul_half_16x256", "Mul", np.float16, 4096, 96),
    ("tdiv_float_64x64", "Div", np.float32, 4096, 288),
    ("tadds_float_32x64", "Adds", np.float32, 2048, 57),
    ("tadds_float_7x448", "Adds", np.float32, 3136, 77),
    ("tmuls_float_32x64", "Muls", np.float32, 2048, 58),
    ("tmuls_float_7x448", "Muls", np.float32, 3136, 77),
    ("texp_float_64x64", "Exp", np.float32, 4096, 159),
    ("texp_half_64x64", "Exp", np.float16, 4096, 95),
    ("texp_half_32x32", "Exp", np.float16, 1024, 47),
    ("texp_float_32x32", "Exp", np.float32, 1024, 63),
    ("tabs_float_64x64", "Abs", np.float32, 4096, 68),
    ("tabs_half_16x256", "Abs", np.float16, 4096, 36),
    ("tcvt_f32_to_f16_4x64", "Cast", (np.float16, np.float32), 256, 33),
    ("tcvt_f16_to_f32_4x64", "Cast", (np.float32, np.float16), 256, 33),
]
VECTOR_GAPS = {  # known gaps: the fits are fp32 measurements, these single points sit off them
    "tsub_half_16x256": ("Sub", np.float16, 4096, 68, "TSUB half measures 68 where TADD half, the same class, "
                                                      "measures 92; the fit gives 91.5"),
    "tsub_int32_64x64": ("Sub", np.int32, 4096, 132, "int32 TSUB measures 17% under the fp32 fit"),
    "tmul_int32_64x64": ("Mul", np.int32, 4096, 152, "int32 TMUL measures 12% under the fp32 fit"),
    "tdiv_half_64x64": ("Div", np.float16, 4096, 304, "half TDIV, one vdiv of 32 repeats in pto-isa too, "
                                                      "measures 304: twice the fp32 fit's cycles per repeat"),
}


def vector_cycles_of(name: str, dtype, count: int, platform="Ascend910B2") -> float:
    """One AIV: one vector instruction over `count` elements (count form); its pipe time."""
    dst_dtype, src_dtype = dtype if isinstance(dtype, tuple) else (dtype, dtype)

    def kernel():
        pipe, buf = TPipe(), TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 3 * 16384)
        dst, src = buf.Get(dst_dtype), buf.Get(src_dtype)[16384 // np.dtype(src_dtype).itemsize]
        other = buf.Get(src_dtype)[2 * 16384 // np.dtype(src_dtype).itemsize]
        op = getattr(ascendc, name)
        if name == "Cast":
            op(dst, src, RoundMode.CAST_RINT if np.dtype(dst_dtype).itemsize == 2 else RoundMode.CAST_NONE, count)
        elif name in ("Adds", "Muls"):
            op(dst, src, src_dtype(1.5), count)
        elif name in ("Exp", "Abs"):
            op(dst, src, count)
        else:
            op(dst, src, other, count)

    _, report = run_aiv(kernel, platform=platform, execute=False)
    rec = [r for r in report.logs[0] if r.name == name][-1]
    return rec.end - rec.start


@pytest.mark.parametrize("case, name, dtype, count, reference", VECTOR, ids=[c[0] for c in VECTOR])
def test_vector_instruction_matches_the_profiling(case, name, dtype, count, reference):
    cycles = vector_cycles_of(name, dtype, count)
    assert abs(_error(cycles, reference)) <= VECTOR_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


# (case, instruction, dtype, repeats, elements per repeat, profiling cycles): TROWSUM / TROWMAX of one repeat per
# row is one vcadd / vcmax over all rows (include/pto/npu/a2a3/TRowReduceOps.hpp, OneRepeatProc).
ROW_REDUCE = [
    ("trowsum_float_64x64", "WholeReduceSum", np.float32, 64, 64, 492),
    ("trowsum_half_64x128", "WholeReduceSum", np.float16, 64, 128, 495),
    ("trowmax_float_64x64", "WholeReduceMax", np.float32, 64, 64, 480),
    ("trowmax_half_64x128", "WholeReduceMax", np.float16, 64, 128, 481),
]


def row_reduce_cycles(name: str, dtype, repeats: int, per_repeat: int) -> float:
    """One AIV: one WholeReduceSum / WholeReduceMax of `repeats` full repeats, one result per repeat."""
    def kernel():
        pipe, buf = TPipe(), TBuf(TPosition.VECCALC)
        pipe.InitBuffer(buf, 2 * 32768)
        src, dst = buf.Get(dtype), buf.Get(dtype)[32768 // np.dtype(dtype).itemsize]
        if name == "WholeReduceSum":
            ascendc.WholeReduceSum(dst, src, per_repeat, repeats, 1, 1, 8)
        else:
            ascendc.WholeReduceMax(dst, src, per_repeat, repeats, 1, 1, 8)

    _, report = run_aiv(kernel, execute=False)
    rec = [r for r in report.logs[0] if r.name == name][-1]
    return rec.end - rec.start


@pytest.mark.parametrize("case, name, dtype, repeats, per_repeat, reference", ROW_REDUCE,
                         ids=[c[0] for c in ROW_REDUCE])
def test_row_reductions_match_the_profiling(case, name, dtype, repeats, per_repeat, reference):
    cycles = row_reduce_cycles(name, dtype, repeats, per_repeat)
    assert abs(_error(cycles, reference)) <= VECTOR_TOLERANCE, f"{case}: model {cycles:.0f}, reference {reference}"


@pytest.mark.parametrize("case", list(VECTOR_GAPS))
def test_vector_known_gaps(case, request):
    name, dtype, count, reference, reason = VECTOR_GAPS[case]
    request.applymarker(pytest.mark.xfail(strict=True, reason=f"known gap: {reason}"))
    assert abs(_error(vector_cycles_of(name, dtype, count), reference)) <= VECTOR_TOLERANCE


def test_the_published_vector_table_is_a_documented_override():
    """vector_timing="published" prices by asc-devkit's parallelism and pypto's latency: an fp32 Add of 64 full
    repeats at 64 elements per cycle, plus vadd's 6."""
    published = get_platform("Ascend910B2").with_overrides(vector_timing="published")
    assert vector_cycles_of("Add", np.float32, 4096, published) == 64 * 1 + 6
