"""The Ascend 950 machine: presets against docs/ascend950.md, data paths per arch, the CTRL register, the 8-bit
types (decoders and encoders written here from the format definitions) and the saturating conversions."""

import numpy as np
import pytest
from core_buffers import local
from paths import ROOT

from ascend_sim import Chip, get_platform
from ascend_sim.ascendc import (CrossCoreWaitFlag, DataCopy, DataCopyParams, GetCtrlSpr, GlobalTensor, LoadData,
                                LoadData2DParams, ResetCtrlSpr, SetCtrlSpr)
from ascend_sim.engine.chip import current_core
from ascend_sim.isa.ctrl import float_saturation
from ascend_sim.isa.fixpipe import FIXPIPE
from ascend_sim.machine.convert import to_float8_e4m3fn, to_hifloat8
from ascend_sim.machine.coretypes import AIC, AIV, CROSS_CORE_MODES, DATA_PATHS, missing_path
from ascend_sim.machine.dtypes import arch_refuses, c0_of, float8_e4m3fn, hifloat8
from ascend_sim.machine.faults import MissingDataPath, ParameterOutOfRange, SyncFault
from ascend_sim.machine.pipes import Pipe
from ascend_sim.machine.tensor import GmAddr

DOC = ROOT / "docs" / "ascend950.md"
A5 = "Ascend950PR_9589"


def _preset_table():
    """{preset: {field: text}} from the docs' preset table (the section "## Presets")."""
    section = DOC.read_text().split("## Presets", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("|")]
    header, body = rows[0], rows[2:]
    presets = header[1:-1]
    return {name: {row[0]: row[1 + i] for row in body} for i, name in enumerate(presets)}


def _field(platform, dotted):
    value = platform
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def test_presets_match_the_doc_table():
    table = _preset_table()
    assert sorted(table) == ["Ascend950DT_9581", "Ascend950DT_9591", "Ascend950PR_9589", "Ascend950PR_9599"]
    for name, fields in table.items():
        platform = get_platform(name)
        assert len(fields) >= 35
        for field, text in fields.items():
            value = _field(platform, field)
            expected = text if isinstance(value, str) else type(value)(float(text))
            assert value == expected, (name, field, value, text)


def test_the_950_skus_differ_only_where_the_inis_do():
    pr89, pr99, dt81, dt91 = (get_platform(n) for n in ("Ascend950PR_9589", "Ascend950PR_9599", "Ascend950DT_9581",
                                                         "Ascend950DT_9591"))
    same = {"name", "aic_cores", "aiv_cores", "clock_mhz", "hbm_bytes"}
    for other in (pr99, dt81, dt91):
        assert {k: v for k, v in pr89.model_dump().items() if k not in same} == \
               {k: v for k, v in other.model_dump().items() if k not in same}
    assert (pr89.aic_cores, pr89.clock_mhz, dt91.aic_cores, dt91.clock_mhz) == (32, 1650, 36, 1800)


def test_a2_presets_keep_their_rates():
    b2 = get_platform("Ascend910B2")
    assert (b2.npu_arch, b2.UB, b2.L0C, b2.BT, b2.cube.float32, b2.rates.gm_to_l1, b2.rates.l1_to_l0b) == \
           (2201, 192 * 1024, 128 * 1024, 1024, 4, 128.0, 128.0)


# ------------------------------------------------------------------------------------------------ data paths
def test_path_table():
    assert DATA_PATHS[3510]["AIC"] - DATA_PATHS[2201]["AIC"] == {"L0C->UB", "L1->UB"}
    assert DATA_PATHS[2201]["AIC"] - DATA_PATHS[3510]["AIC"] == {"GM->L0A", "GM->L0B", "L1->GM"}
    assert DATA_PATHS[3510]["AIV"] - DATA_PATHS[2201]["AIV"] == {"UB->L1"}
    assert missing_path(2201, AIC, "L0C->GM") is None and missing_path(3510, AIV, "UB->L1") is None
    assert missing_path(3510, AIV, "L0C->UB") == "L0C->UB does not exist on arch 3510 AIV (only the AIC has it)"
    assert missing_path(2201, AIC, "L0C->UB") == "L0C->UB does not exist on arch 2201 AIC"
    assert CROSS_CORE_MODES == {2201: (0, 1, 2), 3510: (0, 1, 2, 4)}


def _run(body, platform=A5, arrays=()):
    chip = Chip(platform, check_races=False)
    addrs = [GmAddr(chip.gm.upload(f"g{i}", a)) for i, a in enumerate(arrays)]
    out = []
    chip.launch(lambda: out.append(body(current_core(), addrs)), 1)
    return out[0]


@pytest.mark.parametrize("count", [2, 0])  # 0: the NOP form does not exist there either
def test_l1_to_gm_is_a_missing_path_on_3510(count):
    def body(core, gm):
        DataCopy(GlobalTensor(np.float16).SetGlobalBuffer(gm[0]), local(core, "L1", np.float16),
                 DataCopyParams(count, 1, 0, 0))
    with pytest.raises(MissingDataPath, match=r"L1->GM does not exist on arch 3510 AIC"):
        _run(body, arrays=[np.zeros(64, np.float16)])
    _run(body, "Ascend910B2", [np.zeros(64, np.float16)])  # A2 has it


@pytest.mark.parametrize("dst", ["L0A", "L0B"])
def test_gm_to_l0_is_a_missing_path_on_3510(dst):
    def body(core, gm):
        LoadData(local(core, dst, np.float16), GlobalTensor(np.float16).SetGlobalBuffer(gm[0]),
                 LoadData2DParams(0, 1, 1, 0, 0, False, 0))
    with pytest.raises(MissingDataPath, match=rf"GM->{dst} does not exist on arch 3510 AIC"):
        _run(body, arrays=[np.zeros(256, np.float16)])
    _run(body, "Ascend910B2", [np.zeros(256, np.float16)])


def test_every_record_naming_a_missing_path_faults():
    """The generic check in AICore.issue: a record on L0C->UB (a 950 path) from an A2 core."""
    def body(core, gm):
        core.issue(FIXPIPE, Pipe.FIX, None, path="L0C->UB")
    with pytest.raises(MissingDataPath, match=r"L0C->UB does not exist on arch 2201 AIC"):
        _run(body, "Ascend910B2")


# ------------------------------------------------------------------------------------------------ CTRL
def test_ctrl_reset_value_and_bits():
    def body(core, gm):
        seen = [GetCtrlSpr(0, 63), GetCtrlSpr(48, 48), GetCtrlSpr(60, 60), float_saturation(core, "Cast", Pipe.V)]
        SetCtrlSpr(48, 48, 1)
        seen += [GetCtrlSpr(48, 48), GetCtrlSpr(0, 63), float_saturation(core, "Cast", Pipe.V)]
        SetCtrlSpr(48, 48, 0)
        SetCtrlSpr(50, 50, 1)
        seen += [float_saturation(core, "Cast", Pipe.V)]
        SetCtrlSpr(45, 45, 1)
        ResetCtrlSpr(50, 50)
        seen += [GetCtrlSpr(0, 63)]
        return seen
    seen = _run(body)
    assert seen[:4] == [0x1000000000000008, 0, 1, (True, True)]
    assert seen[4:7] == [1, 0x1001000000000008, (False, False)]
    assert seen[7] == (True, False)
    assert seen[8] == 0x1000200000000008  # CTRL[45] kept, CTRL[50] back to 0


def test_ctrl_writes_are_records_on_the_scalar_pipe():
    chip = Chip(A5, check_races=False, record=True)
    chip.launch(lambda: SetCtrlSpr(48, 48, 1), 1)
    (rec,) = [r for r in chip.cores[0].log if r.name == "SetCtrlSpr"]
    assert rec.pipe == Pipe.S and rec.params == {"register": "ctrl", "value": 0x1001000000000008}


def test_ctrl_global_saturation_off_is_refused_for_conversions():
    def body(core, gm):
        SetCtrlSpr(60, 60, 0)
        return float_saturation(core, "Cast", Pipe.V)
    with pytest.raises(ParameterOutOfRange, match=r"CTRL\[60\]=0"):
        _run(body)


@pytest.mark.parametrize("platform,call,match", [
    (A5, lambda: SetCtrlSpr(47, 47, 1), r"bits \[47, 47\] are not writable on arch 3510"),
    (A5, lambda: SetCtrlSpr(48, 49, 1), r"bits \[48, 49\] are not writable"),
    (A5, lambda: SetCtrlSpr(0, 63, 0), r"bits \[0, 63\] are not writable"),
    (A5, lambda: SetCtrlSpr(48, 48, 2), r"value=2 does not fit CTRL\[48:48\]"),
    (A5, lambda: SetCtrlSpr(6, 8, 1), r"CTRL\[8:6\] .* not modelled: use SetAtomicAdd"),
    (A5, lambda: SetCtrlSpr(49, 48, 1), r"startBit=49 > endBit=48"),
    (A5, lambda: GetCtrlSpr(0, 64), r"endBit=64 outside \[0, 63\]"),
    ("Ascend910B2", lambda: SetCtrlSpr(45, 45, 1), r"not writable on arch 2201; allowed: CTRL\[48\]"),
    ("Ascend910B2", lambda: ResetCtrlSpr(48, 48), r"ResetCtrlSpr does not exist on arch 2201"),
    ("Ascend910B2", lambda: GetCtrlSpr(0, 63), r"only CTRL\[48\] is readable on arch 2201"),
])
def test_ctrl_refusals_name_the_bits(platform, call, match):
    with pytest.raises(ParameterOutOfRange, match=match):
        _run(lambda core, gm: call(), platform)


def test_ctrl_on_a2_saturation_bit():
    def body(core, gm):
        before = (GetCtrlSpr(48, 48), float_saturation(core, "Cast", Pipe.V))
        SetCtrlSpr(48, 48, 1)
        return before, (GetCtrlSpr(48, 48), float_saturation(core, "Cast", Pipe.V))
    assert _run(body, "Ascend910B2") == ((0, (True, True)), (1, (False, False)))


# ------------------------------------------------------------------------------------------------ 8-bit types
def _hif8_decode(code: int) -> float:
    """HiFloat8 from its definition (arXiv 2409.16626; en-dtypes README): S | Dot | E (sign-magnitude, implicit
    leading 1) | M; Dot 11 / 10 / 01 / 001 / 0001 give 4 / 3 / 2 / 1 / 0 exponent bits and 1 / 2 / 3 / 3 / 3
    mantissa bits; Dot 0000 is a denormal 2^(M-23); 0x80 NaN, 0x6F / 0xEF +-inf."""
    sign = -1.0 if code & 0x80 else 1.0
    if code & 0x7F == 0x6F:
        return sign * np.inf
    bits = format(code & 0x7F, "07b")
    for dot, e_bits, m_bits in (("11", 4, 1), ("10", 3, 2), ("01", 2, 3), ("001", 1, 3), ("0001", 0, 3)):
        if bits.startswith(dot):
            rest = bits[len(dot):]
            e_field, m = rest[:e_bits], int(rest[e_bits:], 2)
            magnitude = int("1" + e_field[1:], 2) if e_bits else 0
            exponent = -magnitude if e_bits and e_field[0] == "1" else magnitude
            return sign * 2.0 ** exponent * (1 + m / 2 ** m_bits)
    m = int(bits[4:], 2)
    if m == 0:
        return np.nan if code & 0x80 else 0.0
    return sign * 2.0 ** (m - 23)


def _e4m3fn_decode(code: int) -> float:
    """OCP FP8 E4M3FN: bias 7, no inf, S.1111.111 NaN, E=0 subnormal M/8 * 2^-6."""
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 3) & 0xF, code & 7
    if e == 15 and m == 7:
        return np.nan
    return sign * (m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))


DECODERS = {"hifloat8": (hifloat8, _hif8_decode), "float8_e4m3fn": (float8_e4m3fn, _e4m3fn_decode)}


@pytest.mark.parametrize("name", list(DECODERS))
def test_all_256_codes_decode_as_the_format_says(name):
    dtype, decode = DECODERS[name]
    package = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float64)
    assert np.array_equal(package, np.array([decode(c) for c in range(256)]), equal_nan=True)


def _nearest_codes(x: np.ndarray, name: str) -> np.ndarray:
    """The code of the value nearest |x| (sign applied), by search over every finite code: hifloat8 ties go away
    from zero, float8_e4m3fn ties to the even code. |x| must not exceed the largest finite value."""
    dtype, decode = DECODERS[name]
    positive = [(decode(c), c) for c in range(0x80) if np.isfinite(decode(c))]
    grid = np.array([v for v, _ in positive])
    codes = np.array([c for _, c in positive])
    mag = np.abs(x.astype(np.float64))
    dist = np.abs(mag[:, None] - grid[None, :])
    best = dist.min(axis=1, keepdims=True)
    tied = dist == best
    if name == "hifloat8":  # the largest magnitude among the nearest
        pick = np.where(tied, grid[None, :], -1.0).argmax(axis=1)
    else:  # the even code among the nearest
        pick = np.where(tied & (codes[None, :] % 2 == 0), 1, 0).argmax(axis=1)
        pick = np.where(tied[np.arange(len(x)), pick], pick, dist.argmin(axis=1))
    out = codes[pick].astype(np.uint8)
    negative = np.signbit(x) & ((out != 0) | (name == "float8_e4m3fn"))  # hifloat8 has no -0
    return np.where(negative, out | 0x80, out).astype(np.uint8)


@pytest.mark.parametrize("name,convert,top", [("hifloat8", to_hifloat8, 32768.0),
                                              ("float8_e4m3fn", to_float8_e4m3fn, 448.0)])
def test_encode_rounds_to_the_nearest_code(name, convert, top):
    rng = np.random.default_rng(7)
    dtype, decode = DECODERS[name]
    grid = np.unique([abs(decode(c)) for c in range(256) if np.isfinite(decode(c))])
    mids = ((grid[:-1] + grid[1:]) / 2).astype(np.float32)
    values = np.concatenate([
        (rng.choice([-1, 1], 20000) * 2.0 ** rng.uniform(-25, np.log2(top), 20000)).astype(np.float32),
        mids, -mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf)),
        grid.astype(np.float32), np.float32([0.0, -0.0, top, -top])])
    got = convert(values).view(np.uint8)
    assert np.array_equal(got, _nearest_codes(values, name))
    assert np.array_equal(got, values.astype(dtype).view(np.uint8))  # in range, the package's rounding


def test_saturation_follows_the_ctrl_rules():
    x = np.float32([np.inf, -np.inf, np.nan, 1e6, -1e6, 40960, 36000, 465, -500])
    hif8 = to_hifloat8(x).astype(np.float64)
    assert np.array_equal(hif8, [32768, -32768, 0, 32768, -32768, 32768, 32768, 512, -512])
    fp8 = to_float8_e4m3fn(x).astype(np.float64)
    assert np.array_equal(fp8, [448, -448, 0, 448, -448, 448, 448, 448, -448])
    assert np.isnan(to_float8_e4m3fn(x, nan_to_zero=False).astype(np.float64)[2])
    # saturation off: the packages' results (inf / NaN out of range)
    raw_h = to_hifloat8(x, saturate=False).astype(np.float64)
    assert np.isposinf(raw_h[0]) and np.isneginf(raw_h[1]) and np.isnan(raw_h[2]) and np.isposinf(raw_h[5])
    raw_f = to_float8_e4m3fn(x, saturate=False).astype(np.float64)
    assert np.isnan(raw_f[[0, 1, 2, 3, 7]]).all()


@pytest.mark.parametrize("call,match", [(lambda x: to_hifloat8(x, round_mode="CAST_HYBRID"), "CAST_HYBRID"),
                                        (lambda x: to_hifloat8(x, round_mode="CAST_RINT"), "CAST_RINT"),
                                        (lambda x: to_float8_e4m3fn(x, round_mode="CAST_ROUND"), "CAST_ROUND")])
def test_unmodelled_round_modes_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call(np.float32([1.0]))


def test_c0_and_arch_refusal_of_the_8bit_types():
    assert c0_of(hifloat8) == c0_of(float8_e4m3fn) == 32 and c0_of(np.float16) == 16 and c0_of(np.float32) == 8
    assert arch_refuses(hifloat8, 3510) is None and arch_refuses(np.float16, 2201) is None
    assert arch_refuses(float8_e4m3fn, 2201) == ("float8_e4m3fn is an Ascend 950 (arch 3510) type; arch 2201 "
                                                  "(A2/A3) does not take it")


# ------------------------------------------------------------------------------------------------ cross-core mode 4
def _mode4_kernel(src):
    from ascend_sim.ascendc import ASCEND_IS_AIC, PIPE_MTE2, PIPE_S, CrossCoreSetFlag, GetSubBlockIdx
    core = current_core()
    gm = GlobalTensor(np.float16).SetGlobalBuffer(src)
    if ASCEND_IS_AIC():
        DataCopy(local(core, "L1", np.float16), gm, 8192)  # a slow copy before the sets
        CrossCoreSetFlag(4, PIPE_MTE2, 3)  # -> AIV0's flag 3
        CrossCoreSetFlag(4, PIPE_MTE2, 16 + 5)  # -> AIV1's flag 5
        CrossCoreWaitFlag(7, 4)  # AIV0's set 7
        CrossCoreWaitFlag(16 + 7, 4)  # AIV1's set 7
    elif GetSubBlockIdx() == 0:
        CrossCoreWaitFlag(3, 4)
        CrossCoreSetFlag(4, PIPE_S, 7)  # mode 4 takes PIPE_S
    else:
        CrossCoreWaitFlag(5, 4)
        DataCopy(local(core, "UB", np.float16), gm, 8192)
        CrossCoreSetFlag(4, PIPE_MTE2, 7)


@pytest.mark.parametrize("engine", ["exact", "fast"])
def test_mode4_flags_pair_an_aic_with_one_aiv(engine):
    chip = Chip(A5, engine=engine, check_races=False)
    src = GmAddr(chip.gm.upload("x", np.zeros(8192, np.float16)))
    report = chip.launch(_mode4_kernel, 2, src, kernel_type="MIX_AIC_1_2")
    for group in (0, 3):  # AIC, AIV0, AIV1 per AI core
        aic, aiv0, aiv1 = ([r for r in log if r.name.startswith("CrossCore") or r.name.startswith("DataCopy")]
                           for log in report.logs[group:group + 3])
        copy, set3, set21, wait7, wait23 = aic
        assert set3.start >= copy.end and aiv0[0].end >= set3.end and aiv1[0].end >= set21.end
        assert wait7.end >= aiv0[1].end and wait23.end >= aiv1[2].end
        assert aiv1[2].start >= aiv1[1].end  # AIV1's set waits for its copy
        assert wait23.end > wait7.end  # AIV1's slow copy comes first


def test_mode4_engines_agree():
    times = []
    for engine in ("exact", "fast"):
        chip = Chip(A5, engine=engine, check_races=False)
        src = GmAddr(chip.gm.upload("x", np.zeros(8192, np.float16)))
        report = chip.launch(_mode4_kernel, 2, src, kernel_type="MIX_AIC_1_2")
        times.append([[(r.name, r.start, r.end) for r in log] for log in report.logs])
    assert times[0] == times[1]


@pytest.mark.parametrize("platform,kernel_type,call,match", [
    ("Ascend910B2", "MIX_AIC_1_2", lambda: CrossCoreWaitFlag(1, 4),
     r"modeId=4 must be one of 0, 1, 2 on arch 2201"),
    (A5, "MIX_AIC_1_1", lambda: CrossCoreWaitFlag(1, 4),
     r"modeId=4 \(an AIC and one of its AIVs\) needs a MIX_AIC_1_2 kernel"),
    (A5, "MIX_AIC_1_2", lambda: CrossCoreWaitFlag(11, 4),
     r"flagId=11 outside \[0, 10\] or \[16, 26\] for modeId=4 on the AIC"),
])
def test_mode4_refusals(platform, kernel_type, call, match):
    with pytest.raises((ParameterOutOfRange, SyncFault), match=match):
        Chip(platform).launch(call, 1, kernel_type=kernel_type)


def test_mode4_aiv_flag_range_and_deadlock():
    from ascend_sim.ascendc import ASCEND_IS_AIV, PIPE_MTE2, CrossCoreSetFlag

    def aiv_flag_16():
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(16, 4)
    with pytest.raises(ParameterOutOfRange, match=r"flagId=16 outside \[0, 10\] for modeId=4 on the AIV"):
        Chip(A5).launch(aiv_flag_16, 1, kernel_type="MIX_AIC_1_2")

    def wrong_aiv():  # the AIC's flag 3 reaches AIV0 only: AIV1 waits forever
        if ASCEND_IS_AIV():
            CrossCoreWaitFlag(3, 4)
        else:
            CrossCoreSetFlag(4, PIPE_MTE2, 3)
    with pytest.raises(SyncFault, match=r"deadlock"):
        Chip(A5).launch(wrong_aiv, 1, kernel_type="MIX_AIC_1_2")
