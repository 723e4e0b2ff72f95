"""Does a tiling fit its platform and the arch22 kernel? A field-by-field explanation of what does not.

The rules come from what the kernel does with the tiling (op_kernel/arch22: InitTque's buffer sizes, the
Load3Dv2 / LoadData2D / Mmad / Fixpipe parameters it derives) and the instruction ranges of
the Ascend C API reference (docs/isa.md lists them with their sources). Use it on generated tilings and on hand-edited ones
(`tiling.with_overrides(baseM=...)`).
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform, get_platform
from tiling.common.validation import Problem, ValidationReport, check_l0_budgets
from tiling.common.validation import field_problem as _problem  # short: it starts most lines below

LOAD3D_L1_HW_MAX = 32767
LOAD3D_PAD_MAX = 255
U16_MAX = 65535
MMAD_MAX = 4095
LOAD2D_REPEAT_MAX = 255
TPIPE_ALIGN = 32  # TPipe rounds every L1 buffer up to 32 bytes


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def kernel_fmap_rows(f: dict, m_l1: int) -> int:
    """The kernel's CalFmapH + InitTque clip: dilated-dy rows an A1 buffer holds for m_l1 output pixels."""
    wi = f["wi"]
    if m_l1 >= wi:
        hi_cal = m_l1 // wi + (2 if m_l1 % wi else 0)
    else:
        hi_cal = 1 if wi % m_l1 == 0 else 2
    rows = hi_cal - 1 + (f["hk"] - 1) * f["dilationH"] + 1
    return min(rows, (f["ho"] - 1) * f["strideH"] + 1)


def l1_bytes(f: dict, dtype_bytes: int) -> tuple[int, int]:
    """(A1, B1) bytes of one L1 buffer each, as InitTque allocates them."""
    hkwk = f["hk"] * f["wk"]
    rows = kernel_fmap_rows(f, f["baseM"] * f["stepM"])
    a1 = rows * f["wo"] * f["strideW"] * (f["stepKa"] * f["baseK"] // hkwk) * dtype_bytes
    if dtype_bytes == 4:
        # fp32 B keeps whole 16-channel cout blocks: ceil(windows / 2) blocks of hk*wk*16.
        windows = f["stepKb"] * f["baseK"] // (hkwk * f["c0"])
        b1 = f["stepN"] * f["baseN"] * _ceil_div(windows, 2) * hkwk * 16 * dtype_bytes
    else:
        b1 = f["stepN"] * f["baseN"] * f["stepKb"] * f["baseK"] * dtype_bytes
    return _align(a1, TPIPE_ALIGN), _align(b1, TPIPE_ALIGN)


def _check_flags(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    c0 = 32 // dtype_bytes
    if f["c0"] != c0:
        _problem(out, f, "c0", f"a {dtype_bytes}-byte dtype has C0={c0}")
    if f["c0Bits"] != c0.bit_length() - 1:
        _problem(out, f, "c0Bits", f"must be log2(C0)={c0.bit_length() - 1}")
    for name in ("al0Pbuffer", "bl0Pbuffer", "cl0Pbuffer", "al1Pbuffer", "bl1Pbuffer"):
        if f[name] not in (1, 2):
            _problem(out, f, name, "must be 1 (single buffer) or 2 (double buffer)")
    for name in ("stepM", "stepN"):
        if f[name] != 1:
            _problem(out, f, name, "the arch22 kernel requires stepM == stepN == 1")
    if f["iterateOrder"] not in (0, 1):
        _problem(out, f, "iterateOrder", "must be 0 (ORDER_M) or 1 (ORDER_N)")
    if f["kDim"] != 1:
        _problem(out, f, "kDim", "the kernel writes without atomic add, so K cannot be split across cores "
                                 "(kDim must be 1)")
    if f["hf32Flag"] not in (0, 1) or (f["hf32Flag"] == 1 and dtype_bytes != 4):
        _problem(out, f, "hf32Flag", "must be 0, or 1 for float32 only")
    if f["initOutputFlag"] not in (0, 1, 2):
        _problem(out, f, "initOutputFlag", "must be 0, 1 or 2")
    for name in ("batch", "cin", "cout", "cout1", "cin1", "cout1G", "cin1G", "dout", "ho", "wo", "di", "hi",
                 "wi", "dk", "hk", "wk", "group", "strideD", "strideH", "strideW", "dilationD", "dilationH",
                 "dilationW", "stepKa", "stepKb", "singleCoreBatch", "singleCoreGroup", "singleCoreDin",
                 "singleCoreCin1", "singleCoreM"):
        if f[name] < 1:
            _problem(out, f, name, "must be at least 1")


def _check_blocks(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    c0 = 32 // dtype_bytes
    for name in ("baseM", "baseN"):
        if f[name] < 16 or f[name] % 16:
            _problem(out, f, name, "must be a positive multiple of 16 (cube fractal)")
    if f["baseK"] < c0 or f["baseK"] % c0:
        _problem(out, f, "baseK", f"must be a positive multiple of C0={c0}")
    for name, mmad in (("baseM", "m"), ("baseN", "n"), ("baseK", "k")):
        if f[name] > MMAD_MAX:
            _problem(out, f, name, f"exceeds the Mmad {mmad} range [1, {MMAD_MAX}]")
    if f["cout1"] != _ceil_div(f["cout"], c0) or f["cin1"] != _ceil_div(f["cin"], c0):
        _problem(out, f, "cout1", f"cout1 and cin1={f['cin1']} must be ceil(cout/C0)={_ceil_div(f['cout'], c0)} "
                                  f"and ceil(cin/C0)={_ceil_div(f['cin'], c0)}")


def _check_split(f: dict, platform: Platform, basic_block: bool, out: list[Problem]) -> None:
    c0 = f["c0"]
    if not 1 <= f["coreNum"] <= platform.aic_cores:
        _problem(out, f, "coreNum", f"must be in [1, {platform.aic_cores}] (AI cores of {platform.name})")
    if f["singleCoreM"] % max(f["wi"], 1):
        _problem(out, f, "singleCoreM", f"must be whole dx rows (a multiple of wi={f['wi']})")
    if f["singleCoreCin"] != f["singleCoreCin1"] * c0:
        _problem(out, f, "singleCoreCin", f"must be singleCoreCin1*C0={f['singleCoreCin1'] * c0}")
    if f["singleCoreCout1"] != f["cout1G"] or f["singleCoreCout"] != f["cout1G"] * c0:
        _problem(out, f, "singleCoreCout", f"singleCoreCout and singleCoreCout1={f['singleCoreCout1']} must be "
                                           f"cout1G*C0={f['cout1G'] * c0} and cout1G={f['cout1G']}")
    if basic_block:
        return
    dims = f["batchDim"] * f["groupDim"] * f["mDim"] * f["kDim"] * f["nDim"] * f["dDim"]
    if dims != f["coreNum"]:
        _problem(out, f, "coreNum", f"must equal batchDim*groupDim*mDim*kDim*nDim*dDim={dims}")
    for dim, single, total, what in (
            ("batchDim", "singleCoreBatch", f["batch"], "batch"), ("groupDim", "singleCoreGroup", f["group"], "group"),
            ("mDim", "singleCoreM", f["hi"] * f["wi"], "hi*wi"), ("nDim", "singleCoreCin1", f["cin1G"], "cin1G"),
            ("dDim", "singleCoreDin", f["di"], "di")):
        if f[dim] * f[single] < total:
            _problem(out, f, single, f"{dim}={f[dim]} x {single}={f[single]} covers only {f[dim] * f[single]} of "
                                     f"{what}={total}: part of dx is never computed")
        elif f[single] >= 1 and (f[dim] - 1) * f[single] >= total:
            # The kernel's tails (total - index * single) are unsigned: a core that starts past the end
            # would compute and write beyond dx instead of idling.
            _problem(out, f, dim, f"core {f[dim] - 1} of {dim} would start at {(f[dim] - 1) * f[single]}, past the "
                                  f"end of {what}={total} ({single}={f[single]}): at most "
                                  f"ceil({total}/{f[single]})={_ceil_div(total, f[single])}")


def _check_buffers(f: dict, dtype_bytes: int, platform: Platform, out: list[Problem]) -> None:
    c0, hkwk = f["c0"], f["hk"] * f["wk"]
    extra_k = c0 if dtype_bytes == 4 and hkwk > 1 else 0  # fp32 B is transposed by Load3Dv2 via one spare C0
    check_l0_budgets(out, f, dtype_bytes, platform, extra_k, "for the fp32 transpose")
    if f["baseM"] < 1 or f["baseK"] < 1 or hkwk < 1:
        return
    a1, b1 = l1_bytes(f, dtype_bytes)
    total = a1 * f["al1Pbuffer"] + b1 * f["bl1Pbuffer"]
    # The whole L1: the real basic-block tiling fills all 512 KiB (UT net_ID_16_m_non_factor uses 524288 B);
    # this kernel has no KFC messages, so Ascend C's 128-byte KFC reserve is not needed.
    if total > platform.L1:
        _problem(out, f, "stepKa", f"L1 needs {total} bytes: A1 {a1} x al1Pbuffer={f['al1Pbuffer']} + B1 {b1} x "
                                   f"bl1Pbuffer={f['bl1Pbuffer']}; L1 has {platform.L1}")


def _check_k_steps(f: dict, out: list[Problem]) -> None:
    window = f["hk"] * f["wk"] * f["c0"]
    if f["baseK"] % window and window % f["baseK"]:
        # LoadToB2V1 / LoadToB2Pro walk the kernel positions of one cout1 window from the step's first one
        _problem(out, f, "baseK", f"must be whole kernel windows or divide one (hk*wk*C0={window}): a K step "
                                  "must not cross from one cout1 block's kernel window into the next")
    longest_k = max(cout1_per_k_loop(f)) * window
    for name in ("stepKa", "stepKb"):
        load = f[name] * f["baseK"]
        # A B load that holds a whole K loop is cut to it (curLoadKbl1); A's Load3Dv2 channelSize is
        # stepKa*baseK/(hk*wk) whatever K is, so A needs whole windows always.
        if f[name] >= 1 and load % window and (name == "stepKa" or load < longest_k):
            unless = "" if name == "stepKa" else f", unless it holds all of K={longest_k}"
            _problem(out, f, name, f"{name}*baseK={load} must be whole kernel windows (a multiple of hk*wk*C0="
                                   f"{window}) so L1 holds whole cout1 blocks{unless}")


def cout1_per_k_loop(f: dict) -> set[int]:
    """cout1 blocks one K loop runs over: all of cout1 (group == 1); per group cout1G, and the last group's rest."""
    if f["group"] <= 1:
        return {f["cout1"]}
    last = f["cout1"] - (f["group"] - 1) * f["cout1G"]
    return {f["cout1G"]} | ({last} if 0 < last < f["cout1G"] else set())


def fp32_tail_misread(f: dict, k: int) -> bool:
    """Whether fp32 B of the last, short K step of a K loop of length k lands at the wrong couts in L0B.

    LoadToB2Pro picks the 8-cout half of a 16-cout group by (kIdx*mmad.k / hk*wk*C0) & 1 and the kernel position
    by kbIdx*mmad.k / C0; LoadToB2ProGemm (1x1) starts at kbIdx*mmad.k. mmad.k is the short tail there, where
    the true start uses baseK; the read is still right where both give the same half and position."""
    base_k, c0, hkwk = f["baseK"], f["c0"], f["hk"] * f["wk"]
    k_iter = _ceil_div(k, base_k)
    tail = k - (k_iter - 1) * base_k
    if k_iter == 1 or tail == base_k:
        return False
    k_idx = k_iter - 1
    kb_idx = k_idx % f["stepKb"]  # the step's place inside its B1 load
    if hkwk == 1:
        return kb_idx > 0
    window = hkwk * c0
    half = (k_idx * tail // window) % 2 != (k_idx * base_k // window) % 2
    position = (kb_idx * tail // c0) % hkwk != (kb_idx * base_k // c0) % hkwk
    return half or position


def fp32_last_b1_load_short(f: dict, cout1: int) -> tuple[int, int] | None:
    """(first block, blocks) of the last B1 load of a K loop over cout1 blocks (hk*wk > 1), if LoadToB1Fp32's
    whole 16-cout groups (two C0 blocks each, counted from the load's first block) do not cover it.

    Only an odd start with an even count falls short; full loads of an odd count are covered."""
    window = f["hk"] * f["wk"] * f["c0"]
    load = f["stepKb"] * f["baseK"]
    if window == f["c0"] or load % window or load // window >= cout1:
        return None
    per_load = load // window
    start = (_ceil_div(cout1, per_load) - 1) * per_load
    count = cout1 - start
    if _ceil_div(start + count, 2) - start // 2 > _ceil_div(count, 2):
        return start, count
    return None


def _check_fp32_b_steps(f: dict, out: list[Problem]) -> None:
    """fp32 B reaches L0B by Load3Dv2 from whole 16-cout groups in L1 (LoadToB2Pro / LoadToB2ProGemm)."""
    window = f["hk"] * f["wk"] * f["c0"]
    for cout1 in sorted(cout1_per_k_loop(f)):
        k = cout1 * window
        if fp32_tail_misread(f, k):
            _problem(out, f, "baseK", f"float32: K = {cout1} cout1 blocks x hk*wk*C0 = {k} ends in a short step "
                                      f"(k = {k % f['baseK']}) that LoadToB2Pro/ProGemm would read from the wrong "
                                      "couts (they place a step by its own k, which is its start only for full "
                                      "steps): make baseK divide K, or change stepKb")
        load = f["stepKb"] * f["baseK"]
        short = fp32_last_b1_load_short(f, cout1)
        if short:
            start, count = short
            _problem(out, f, "stepKb", f"float32: the last B1 load of a K loop over {cout1} cout1 blocks takes "
                                       f"blocks {start}..{start + count - 1}, which start inside a 16-cout group "
                                       f"and span {_ceil_div(start + count, 2) - start // 2} groups, but "
                                       f"LoadToB1Fp32 loads ceil({count}/2) = {_ceil_div(count, 2)}: make "
                                       "stepKb*baseK/(hk*wk*C0) even")
        if window == f["c0"] and load % 16 and load < k:
            _problem(out, f, "stepKb", f"float32 1x1 kernel: stepKb*baseK = {load} must be a multiple of 16 couts "
                                       f"(or hold all K = {k}): LoadToB2ProGemm reads every B1 load from the start "
                                       "of a 16-cout group")


def _check_instructions(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    hkwk = f["hk"] * f["wk"]
    if hkwk < 1 or f["baseK"] < 1:
        return
    channel = f["stepKa"] * f["baseK"] // hkwk
    if channel > U16_MAX:
        _problem(out, f, "stepKa", f"Load3D channelSize = stepKa*baseK/(hk*wk) = {channel} exceeds {U16_MAX}")
    k_start = (f["stepKa"] - 1) * f["baseK"]
    if k_start > U16_MAX:
        _problem(out, f, "stepKa", f"Load3D kStartPt reaches (stepKa-1)*baseK = {k_start}, beyond {U16_MAX}")
    rows = kernel_fmap_rows(f, f["baseM"] * f["stepM"])
    if rows > LOAD3D_L1_HW_MAX:
        _problem(out, f, "baseM", f"Load3D l1H = {rows} dy rows exceeds {LOAD3D_L1_HW_MAX}")
    width = (f["wo"] - 1) * f["strideW"] + 1
    if width > LOAD3D_L1_HW_MAX:
        _problem(out, f, "wo", f"Load3D l1W = (wo-1)*strideW+1 = {width} exceeds {LOAD3D_L1_HW_MAX}")
    for name in ("backpropPadLeft", "backpropPadRight", "backpropPadUp"):
        if f[name] > LOAD3D_PAD_MAX:
            _problem(out, f, name, f"does not fit the 8-bit Load3D padList [0, {LOAD3D_PAD_MAX}]")
    for name in ("hk", "wk"):
        if f[name] > 511:
            _problem(out, f, name, "exceeds the Load3D filter range [1, 511]")
    for name in ("dilationH", "dilationW"):
        if f[name] > 255:
            _problem(out, f, name, "exceeds the Load3D dilation range [1, 255]")
    if dtype_bytes == 2 and f["baseN"] // 16 > LOAD2D_REPEAT_MAX:
        _problem(out, f, "baseN", f"LoadData2D repeatTimes = baseN/16 = {f['baseN'] // 16} exceeds "
                                  f"{LOAD2D_REPEAT_MAX}")
    if dtype_bytes == 4 and hkwk > 1:
        windows = f["stepKb"] * f["baseK"] // (hkwk * f["c0"])
        b_width = _ceil_div(windows, 2) * 16 * hkwk
        if b_width > LOAD3D_L1_HW_MAX:
            _problem(out, f, "stepKb", f"fp32 B Load3D l1W = ceil(cout/16)*16*hk*wk = {b_width} exceeds "
                                       f"{LOAD3D_L1_HW_MAX}")
    if f["hi"] * f["wi"] > 2**32 - 1:
        _problem(out, f, "hi", f"Fixpipe dstStride = hi*wi = {f['hi'] * f['wi']} exceeds 32 bits")


KERNEL_SPLIT_RULE = ("the A2 Conv3DBackpropInputV2 entry (conv3d_backprop_input_v2.cpp) runs no driver when the "
                     "tiling key sets enableKernelSplit (bit 8), only the init-output pass: the kernel-split Conv3dDx "
                     "variant is instantiated by Conv3DTransposeV2 alone, so dx would be left unwritten. The real host "
                     "sets it for two hard-wired shapes on 20- and 24-core chips; the dx operator runs those with "
                     "enableKernelSplit=0 (the same tiling values on the general driver)")


def check_key(f: dict, load_b2_condition: int, basic_block: bool, dtype_bytes: int,
              kernel_split: bool = False) -> list[Problem]:
    """The tiling key's template flags against the fields: the key picks the kernel's code paths.

    loadB2Condition 2 (HKWK_EQ_ONE) indexes A and B by C0 blocks instead of kernel windows, which is right for a
    1x1 kernel only, and a 1x1 kernel is always given 2 (the fp32 B rules here are those of its ProGemm load).
    0 (BASEK_LT_HKWK) walks the kernel positions of one window per K step in the 16-bit B load, so baseK must
    not exceed a window there; 1's general walk also takes a baseK that divides a window.
    enableKernelSplit selects nothing in the Conv3DBackpropInputV2 entry (KERNEL_SPLIT_RULE): always refused.
    """
    out: list[Problem] = []
    if kernel_split:
        out.append(Problem("enableKernelSplit", KERNEL_SPLIT_RULE, 1))
    hkwk = f["hk"] * f["wk"]
    window = hkwk * f["c0"]
    if (load_b2_condition == 2) != (hkwk == 1):
        need = "2 for a 1x1 kernel" if hkwk == 1 else f"0 or 1 for hk*wk={hkwk} (2 is the 1x1-kernel template)"
        out.append(Problem("loadB2Condition", f"must be {need}", load_b2_condition))
    elif load_b2_condition == 0 and dtype_bytes == 2 and f["baseK"] > window:
        out.append(Problem("loadB2Condition", f"0 (baseK/C0 < hk*wk) walks one kernel window per K step, but baseK="
                                              f"{f['baseK']} exceeds hk*wk*C0={window}: set loadB2Condition=1 with "
                                              "this baseK", load_b2_condition))
    if basic_block and f["group"] > 1:
        out.append(Problem("useBasicBlock", f"the basic-block driver has no group loop: it needs group (real_g) == 1, "
                                            f"not {f['group']}", 1))
    return out


def check_fields(f: dict, dtype_bytes: int, platform: Platform, basic_block: bool) -> list[Problem]:
    """All problems of a field dict (params + TConv3DInputV2Tiling fields) for a dtype size on a platform."""
    out: list[Problem] = []
    _check_flags(f, dtype_bytes, out)
    _check_blocks(f, dtype_bytes, out)
    _check_split(f, platform, basic_block, out)
    # The size rules divide by and multiply these; a zero among them is already reported above.
    derivable = all(f[name] >= 1 for name in ("hk", "wk", "wi", "baseM", "baseN", "baseK", "stepM", "stepN",
                                              "stepKa", "stepKb"))
    if f["c0"] == 32 // dtype_bytes and derivable:
        _check_buffers(f, dtype_bytes, platform, out)
        _check_k_steps(f, out)
        if dtype_bytes == 4:
            _check_fp32_b_steps(f, out)
        _check_instructions(f, dtype_bytes, out)
    return out


def validate(tiling, platform=None, *, raise_error: bool = False) -> ValidationReport:
    """Check a Conv3DBackpropInputV2TilingData against a platform (default: the one it was made for).

    Returns a report (truthy when the tiling fits; `str(report)` explains every problem, each as
    field=value: rule) or, with raise_error=True, raises TilingValidationError listing them.
    """
    if platform is None and tiling.platform is None:
        raise ValueError("the tiling records no platform: pass platform=")
    plat = get_platform(platform if platform is not None else tiling.platform)
    dtype_bytes = 4 if tiling.dtype == "float32" else 2
    fields = tiling.fields()
    problems = check_key(fields, tiling.loadB2Condition, tiling.useBasicBlock, dtype_bytes, tiling.enableKernelSplit)
    report = ValidationReport(plat.name, problems + check_fields(fields, dtype_bytes, plat, tiling.useBasicBlock))
    if raise_error:
        report.raise_if_invalid(tiling)
    return report
