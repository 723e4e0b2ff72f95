"""The 950's 8-bit conversions read the CTRL register when they issue: Fixpipe's QF322HIF8_PRE / QF322FP8_PRE and the
vector Cast into hifloat8 / float8_e4m3fn saturate at the reset value (inf -> +-max, NaN -> 0, fp8 overflow ->
448) and keep inf / NaN after SetCtrlSpr(48, 48, 1); CTRL[50] = 1 keeps fp8 NaN under saturation.

Expected values are written out from SetCtrlSpr(ISASI).md table 3 and the formats' definitions (hifloat8: largest
32768, values from 40960 round to inf; float8_e4m3fn: largest 448, no inf, beyond 464 NaN), not computed by the
simulator's converters. Each case runs on the exact and the fast engine, which must agree byte for byte and on
every record's timing."""
import numpy as np
import pytest
from core_buffers import fill, local
from vector_reference import run_on_ub

from ascend_sim import Chip
from ascend_sim.ascendc import (Cast, Fixpipe, FixpipeParamsArch3510, GlobalTensor, QuantMode_t, RoundMode,
                                SetCtrlSpr, current_core)
from ascend_sim.machine.dtypes import float8_e4m3fn, float32, hifloat8
from ascend_sim.machine.faults import ParameterOutOfRange
from ascend_sim.machine.tensor import GmAddr

A5 = "Ascend950PR_9589"
INF, NAN = np.inf, np.nan
VALUES = np.array([1.0625, 40960.0, 1e9, -1e9, INF, -INF, NAN, 500.0] + [0.0] * 8, np.float32)
# per CTRL setting: (CTRL bits set by SetCtrlSpr, hifloat8 results, float8_e4m3fn results) for VALUES[:8]
CASES = {
    "reset": ((), [1.125, 32768, 32768, -32768, 32768, -32768, 0, 512],
              [1.0, 448, 448, -448, 448, -448, 0, 448]),
    "ctrl48=1": (((48, 1),), [1.125, INF, INF, -INF, INF, -INF, NAN, 512],
                 [1.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN]),
    "ctrl50=1": (((50, 1),), [1.125, 32768, 32768, -32768, 32768, -32768, 0, 512],
                 [1.0, 448, 448, -448, 448, -448, NAN, 448]),
}
QUANT = {hifloat8: QuantMode_t.QF322HIF8_PRE, float8_e4m3fn: QuantMode_t.QF322FP8_PRE}


def _same(got, want) -> bool:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return np.array_equal(np.isnan(got), np.isnan(want)) and np.array_equal(got[~np.isnan(got)],
                                                                             want[~np.isnan(want)])


def _fixpipe(out, bits, engine):
    chip = Chip(A5, check_races=False, record=True, engine=engine)
    gm = chip.gm.upload("c", np.zeros(16, out))

    def body():
        core = current_core()
        fill(core, "L0C", VALUES)
        for bit, value in bits:
            SetCtrlSpr(bit, bit, value)
        Fixpipe(GlobalTensor(out).SetGlobalBuffer(GmAddr(gm)), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=16, mSize=1, srcStride=1, dstStride=16, quantPre=QUANT[out],
                                      deqScalar=0x3F800000))
    chip.launch(body, 1)
    log = chip.cores[0].log
    return gm.data.view(out).copy(), [(r.name, r.start, r.end, r.registers) for r in log]


def _cast(out, bits, engine):
    ub0 = np.zeros(1024, np.uint8)
    ub0[512:512 + VALUES.nbytes] = VALUES.view(np.uint8)
    mode = RoundMode.CAST_ROUND if out == hifloat8 else RoundMode.CAST_RINT

    def instructions(ub):
        for bit, value in bits:
            SetCtrlSpr(bit, bit, value)
        Cast(ub[0].ReinterpretCast(out), ub[512].ReinterpretCast(float32), mode, 16)
    got, report = run_on_ub(instructions, ub0, platform=A5, engine=engine, record=True)
    log = report.logs[0]
    return got[:16].view(out).copy(), [(r.name, r.start, r.end, r.registers) for r in log]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("out", [hifloat8, float8_e4m3fn], ids=["hifloat8", "float8_e4m3fn"])
@pytest.mark.parametrize("run", [_fixpipe, _cast], ids=["Fixpipe", "Cast"])
def test_8bit_conversions_saturate_as_ctrl_says_on_both_engines(run, out, case):
    bits, hif8, fp8 = CASES[case]
    want = hif8 if out == hifloat8 else fp8
    exact, exact_log = run(out, bits, "exact")
    fast, fast_log = run(out, bits, "fast")
    assert _same(exact[:8].astype(np.float64), want), exact[:8].astype(np.float64)
    assert exact.view(np.uint8).tobytes() == fast.view(np.uint8).tobytes() and exact_log == fast_log
    converting = [regs for name, _, _, regs in exact_log if name.startswith(("Fixpipe", "Cast"))]
    ctrl = dict(converting[0])["ctrl"]  # the CTRL value the conversion read, recorded with it
    assert [ctrl >> bit & 1 for bit, _ in bits] == [value for _, value in bits]
    assert ctrl >> 48 & 1 == dict(bits).get(48, 0)


def test_the_16_bit_fixpipe_conversions_do_not_read_ctrl():
    """F322F16 rounds without saturation whatever CTRL says (as the A2 Fixpipe here): no ctrl register recorded."""
    chip = Chip(A5, check_races=False, record=True)
    gm = chip.gm.upload("c", np.zeros(16, np.float16))

    def body():
        core = current_core()
        fill(core, "L0C", VALUES)
        Fixpipe(GlobalTensor(np.float16).SetGlobalBuffer(GmAddr(gm)), local(core, "L0C", float32),
                FixpipeParamsArch3510(nSize=16, mSize=1, srcStride=1, dstStride=16, quantPre=QuantMode_t.F322F16))
    chip.launch(body, 1)
    got = gm.data.view(np.float16)[:8].astype(np.float64)
    assert _same(got, [1.0625, 40960.0, INF, -INF, INF, -INF, NAN, 500.0])
    fixpipe = [r for r in chip.cores[0].log if r.name.startswith("Fixpipe")][0]
    assert "ctrl" not in dict(fixpipe.registers)


def test_per_instruction_saturation_is_refused_by_name():
    """CTRL[60] = 0 hands saturation to each instruction's own mode, which no modelled instruction carries."""
    with pytest.raises(ParameterOutOfRange, match=r"CTRL\[60\]=0 \(per-instruction saturation\) is not modelled"):
        _fixpipe(hifloat8, ((60, 0),), "exact")
