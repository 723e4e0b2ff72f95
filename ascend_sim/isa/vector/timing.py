"""Cycles of the vector instructions on A2/A3, from one of two tables (Platform.vector_timing).

"measured" (the default): repeats x cycles per repeat + fixed cycles, the fits of measurements on 910B3 that
hw-native-sys/pto-isa 3186c381 records beside its A2/A3 model
(include/pto/costmodel/a2a3/cce_costmodel/cce_costmodel_vector_compute.hpp, the "910B3 标定 ... measured" lines),
or fitted here on the `profiling` cycles of its tests (tests/costmodel/st/testcase/<case>/main.cpp), each named
in _MEASURED. A repeat costs the same whatever its mask (a modelling choice). The other instructions take the
published figures below: nothing measured them (Duplicate, BlockReduceSum, TransDataTo5HD), or they fit the
measurement already (Abs: tabs float 64x64 68 and half 16x256 36, exactly).

"published": repeats * ceil(per_repeat / parallelism) + the instruction's pipeline latency.
* Parallelism (elements per cycle): asc-devkit docs/zh/api/附录/Vector指令理论性能汇总.md, tables 6, 10, 11,
  13 (A2/A3). Add/Sub/Mul/Max/Min and the scalar forms: 128 (half, int16), 64 (float, int32); Exp/Ln/Div: 32;
  Abs/Relu: 128 (half), 64 (float, int32); Duplicate 128 (16-bit) / 64 (32-bit); Cast 64 or 128 by the pair.
* Latency (cycles after the last repeat before the result is in UB): the per-instruction "delay" column of
  hicann/pypto framework/src/cost_model/simulation_ca/A2A3/model/def.h (VEC_VALU_TAB), e.g. vadd 4 (int) / 6
  (float), vmul 5 / 7, vdiv 13, vexp 12, vln 14, vabs 4, vmax/vmin 4, vconv 4, vcadd 23 (half) / 20 (float).
  That model also adds a 15-cycle vecDelay_ per instruction that later instructions overlap; our pipes run
  one instruction at a time, so it is left out (modelling choice).
* Instructions the tables do not list (WholeReduceSum, BlockReduceSum, TransDataTo5HD) use the nearest
  listed figure, named next to it.
The measured binary ops take about 2 cycles per 256-byte repeat where the published parallelism gives 1.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

_16 = ("float16", "int16", "bfloat16", "uint16")

# the published table: name -> (elements per cycle for 16-bit, for 32-bit types, latency)
_TABLE = {
    "Add": (128, 64, 6), "Sub": (128, 64, 6), "Mul": (128, 64, 7), "Max": (128, 64, 4), "Min": (128, 64, 4),
    "Div": (32, 32, 13),
    "Adds": (128, 64, 6), "Muls": (128, 64, 7), "Maxs": (128, 64, 4), "Mins": (128, 64, 4),
    "Exp": (32, 32, 12), "Ln": (32, 32, 14), "Abs": (128, 64, 4), "Relu": (128, 64, 4),
    "Duplicate": (128, 64, 4),  # latency: vbrcb/vcopy's 4 in def.h (Duplicate itself is not listed)
    "Cast": (128, 64, 4),  # 32-bit side 64, 16-bit to 16-bit 128 (table 10); vconv delay 4
    "WholeReduceSum": (128, 64, 23),  # vcadd: one repeat per cycle (def.h parallel 256 B), delay 23 (half)/20
    "BlockReduceSum": (128, 64, 15),  # vcgadd: one repeat per cycle, delay 15 (half) / 12 (float)
    "WholeReduceMax": (128, 64, 9),  # vcmax: delay 9 (half) / 8 (float); throughput 1/7 (vecRmwDelay_) not modelled
    "TransDataTo5HD": (128, 64, 7),  # vnchwconv: 128 B per cycle (def.h), delay 7; table 12: 128/64 el/cycle
}
_INT_LATENCY = {"Add": 4, "Sub": 4, "Mul": 5, "Adds": 4, "Muls": 5}  # def.h: int16/int32 rows
_FLOAT32_LATENCY = {"WholeReduceSum": 20, "BlockReduceSum": 12, "WholeReduceMax": 8}


# name -> (cycles per repeat, fixed cycles), measured on 910B3 (pto-isa); "fit" = the fit pto-isa records,
# "st" = fitted here on pto-isa's test profiling values
_MEASURED = {
    "Add": (2.11, 24), "Sub": (2.11, 24),  # fit, fp32 TADD / TSUB
    "Mul": (2.3, 25),  # fit, fp32 TMUL
    "Max": (2.01, 23),  # fit, fp32 TMAX
    "Min": (2.01, 23),  # vmax's fit: pto-isa's own assumption (vmin unmeasured, the same unit)
    "Div": (4.03, 31),  # fit, fp32 TDIV (default div mode)
    "Muls": (1, 26), "Maxs": (1, 23), "Relu": (1, 23),  # fits, fp32 TMULS / TMAXS / TRELU
    "Adds": (1, 26), "Mins": (1, 23),  # unmeasured scalar forms: their class's fits (Muls / Maxs), modelling choice
    "Exp": (2, 31), "Ln": (2, 33),  # fits, fp32 TEXP / TLOG
    "Cast": (2, 25),  # st: tcvt f32->f16 and f16->f32 4x64 (33 each), pto-isa's vconv slope 2
    # vcadd / vcmax: 7 cycles per repeat (pypto vecRmwDelay_, pto-isa's vcadd model); fixed: st trowsum float
    # 64x64 / half 64x128 (492 / 495) and trowmax (480 / 481), one 64-repeat instruction each
    "WholeReduceSum": (7, 45), "WholeReduceMax": (7, 32),
}
TABLES = ("measured", "published")


@lru_cache(maxsize=4096)
def vector_cycles(name: str, dtype, repeats: int, per_repeat: int, table: str = "measured") -> float:
    """The instruction's cycles from `table` (see the module doc); 0 repeats cost nothing (a NOP issue slot)."""
    if repeats <= 0:
        return 0.0
    if table == "measured" and name in _MEASURED:
        per_repeat_cycles, fixed = _MEASURED[name]
        return float(repeats * per_repeat_cycles + fixed)
    dt = np.dtype(dtype)
    p16, p32, latency = _TABLE[name]
    parallel = p16 if dt.name in _16 else p32
    if np.issubdtype(dt, np.integer) and name in _INT_LATENCY:
        latency = _INT_LATENCY[name]
    elif dt.itemsize == 4 and name in _FLOAT32_LATENCY:
        latency = _FLOAT32_LATENCY[name]
    return float(repeats * -(-per_repeat // parallel) + latency)
