"""Does a dw tiling fit its platform and the arch22 kernel? A field-by-field explanation of what does not.

The rules come from what the arch22 Conv3DBackpropFilterV2 kernel does with the tiling (op_kernel/arch22:
InitTque's buffers, LoadToA1/LoadToB1's copies, the Load3Dv2 / Mmad parameters, CalSingleCoreShape's core split,
the basic-block drivers' use of basicBlockTiling), and the instruction ranges of docs/isa.md. They are written from
the kernel, not from the host generator, so that a generated tiling is checked by something else than itself.
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform, get_platform
from tiling.common.validation import Problem, TilingValidationError, ValidationReport, check_l0_budgets
from tiling.common.validation import field_problem as _problem  # short: it starts most lines below
from tiling.conv3d_backprop_filter.keys import TPL_SPLIT_DFL, TPL_SPLIT_K_N, TPL_SPLIT_M_K, TPL_SPLIT_M_N_STREAMK

__all__ = ["Problem", "TilingValidationError", "ValidationReport", "b1_elements", "check_fields", "validate"]

MMAD_MAX = 4095
U16_MAX = 65535
L1W_MAX = 32767          # Load3Dv2 l1W / l1H (MAX_L1W in the kernel)
BLOCK_COUNT_MAX = 4095   # DataCopy blockCount
PAD_MAX = 255
STRIDE_MAX = 63
KERNEL_MAX = 511
DILATION_MAX = 255
TPIPE_ALIGN = 32
BLOCK_CUBE = 16


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def rows_to_copy(size: int, width: int) -> int:
    """The kernel's CalRows2Copy: dy rows that `size` consecutive pixels of width-`width` rows can touch."""
    if size > width:
        rows = _ceil_div(size, width)
        if size == rows * width:
            return rows
        return rows + 1 if (2 * size) % width else rows
    if size == width:
        return 1
    return 2 if width % size else 1


def cin1_rows_to_copy(n: int, f: dict) -> int:
    """CalOut2L1ScalarParams' bL1cin1CopyLen: x channel blocks a B1 load of n columns (a step of N) needs."""
    hwk = f["hk"] * f["wk"]
    bl1_n = n // f["channelSize"]
    rows = _ceil_div(bl1_n, hwk)
    if hwk > bl1_n:
        rows += 1 if bl1_n and hwk % bl1_n else 0
    elif (2 * bl1_n) % hwk:
        rows += 1
    return rows


def b1_elements(f: dict) -> int:
    """x elements the largest B1 load of LoadToB1 writes: x rows (for stepKb*baseK dy pixels) x wi x cin1 rows."""
    kbl1 = min(f["stepKb"] * f["baseK"], f["singleCoreHo"] * f["wo"])
    rows = rows_to_copy(kbl1, f["wo"]) * f["strideH"] + (f["hk"] - 1) * f["dilationH"] + 1 - f["strideH"]
    rows = min(rows, f["hi"])
    cin1 = min(cin1_rows_to_copy(f["stepN"] * f["baseN"], f), _ceil_div(f["singleCoreCin"], f["channelSize"]))
    return rows * f["wi"] * cin1 * f["channelSize"]


def _check_flags(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    c0 = 32 // dtype_bytes
    for name in ("channelSize", "k0"):
        if f[name] != c0:
            _problem(out, f, name, f"a {dtype_bytes}-byte dtype has C0={c0}")
    for name in ("m0", "n0"):
        if f[name] != BLOCK_CUBE:
            _problem(out, f, name, f"must be {BLOCK_CUBE} (cube fractal)")
    for name in ("al0Pbuffer", "bl0Pbuffer", "cl0Pbuffer", "al1Pbuffer", "bl1Pbuffer"):
        if f[name] not in (1, 2):
            _problem(out, f, name, "must be 1 (single buffer) or 2 (double buffer)")
    if f["iterateOrder"] not in (0, 1):
        _problem(out, f, "iterateOrder", "must be 0 (M first) or 1 (N first)")
    if f["hf32Flag"] not in (0, 1) or (f["hf32Flag"] == 1 and dtype_bytes != 4):
        _problem(out, f, "hf32Flag", "must be 0, or 1 for float32 only")
    for name in ("batch", "cin", "cout", "cin1G", "cout1G", "dout", "ho", "wo", "di", "hi", "wi", "dk", "hk", "wk",
                 "group", "strideD", "strideH", "strideW", "dilationD", "dilationH", "dilationW", "baseM", "baseK",
                 "baseN", "stepM", "stepN", "stepKa", "stepKb", "singleCoreBatch", "singleCoreGroup", "singleCoreDk",
                 "singleCoreCout", "singleCoreCin", "singleCoreHo", "bl1Bound", "batchDim", "groupDim", "mDim",
                 "kDim", "nDim", "dkDim"):
        if f[name] < 1:
            _problem(out, f, name, "must be at least 1 (the kernel divides by it or loops over it)")


def _check_blocks(f: dict, out: list[Problem]) -> None:
    for name in ("baseM", "baseN", "baseK"):
        if f[name] % BLOCK_CUBE:
            _problem(out, f, name, f"must be a multiple of {BLOCK_CUBE} (cube fractal; baseK counts dy pixels, "
                                   "loaded in 16-pixel fractal rows)")
    for name, mmad in (("baseM", "m"), ("baseN", "n"), ("baseK", "k")):
        if f[name] > MMAD_MAX:
            _problem(out, f, name, f"exceeds the Mmad {mmad} range [1, {MMAD_MAX}]")
    if f["singleCoreCin"] % f["channelSize"]:
        _problem(out, f, "singleCoreCin", f"must be whole C0 blocks (a multiple of channelSize={f['channelSize']})")


def _gemm(f: dict) -> tuple[int, int, int, bool]:
    """The kernel's (m_, n_, k_) and seperateDk_ (InitTilingData), deterministic builds aside."""
    separate = f["group"] > 1 or f["dilationD"] > 1
    c0 = f["channelSize"]
    if separate:
        m = f["cout1G"] * c0
        n = f["cin1G"] * c0 * f["hk"] * f["wk"]
    else:
        m = _ceil_div(f["cout"], c0) * c0
        n = f["dk"] * f["cin1G"] * c0 * f["hk"] * f["wk"]
    return m, n, f["ho"] * f["wo"], separate


def _cover(out: list[Problem], f: dict, dim: str, single: str, total: int, what: str, unit: int = 1) -> None:
    """dim cores of `single` each must cover `total`, and none may start past its end (the kernel's remainders
    are unsigned: a core that starts beyond the end computes a full block out of bounds instead of idling)."""
    step = f[single] * unit
    if f[dim] * step < total:
        _problem(out, f, single, f"{dim}={f[dim]} x {single}={f[single]}{'' if unit == 1 else f' x {unit}'} covers "
                                 f"only {f[dim] * step} of {what}={total}: part of dw is never computed")
    elif step >= 1 and (f[dim] - 1) * step >= total:
        _problem(out, f, dim, f"core {f[dim] - 1} of {dim} would start at {(f[dim] - 1) * step}, past the end of "
                              f"{what}={total}: at most ceil({total}/{step})={_ceil_div(total, step)}")


def _check_split(f: dict, platform: Platform, key: int, out: list[Problem]) -> None:
    if key != TPL_SPLIT_DFL:
        return  # the basic-block drivers split by basicBlockTiling (see _check_basic_block)
    m, n, k, separate = _gemm(f)
    dims = f["batchDim"] * f["groupDim"] * f["mDim"] * f["kDim"] * f["nDim"] * f["dkDim"]
    if dims > platform.aic_cores:
        _problem(out, f, "batchDim", f"batchDim*groupDim*mDim*kDim*nDim*dkDim={dims} cores, {platform.name} has "
                                     f"{platform.aic_cores}")
    _cover(out, f, "batchDim", "singleCoreBatch", f["batch"] * f["dout"], "batch*dout")
    _cover(out, f, "mDim", "singleCoreCout", m, "M (cout)")
    _cover(out, f, "kDim", "singleCoreHo", f["ho"], "ho")
    _cover(out, f, "nDim", "singleCoreCin", n, "N (dk*cin*hk*wk)" if not separate else "N (cin*hk*wk)",
           unit=f["hk"] * f["wk"])
    if separate:
        _cover(out, f, "groupDim", "singleCoreGroup", f["group"], "group")
        _cover(out, f, "dkDim", "singleCoreDk", f["dk"], "dk")
    else:
        for name in ("groupDim", "dkDim"):
            if f[name] != 1:
                _problem(out, f, name, "must be 1 unless group > 1 or dilationD > 1 (the kernel splits group and "
                                       "dk across cores only then)")


def _check_basic_block(f: dict, platform: Platform, key: int, out: list[Problem]) -> None:
    names = ("coreBindOrder", "usedCoreNum", "singleCoreM", "singleCoreN", "singleCoreK", "streamKType",
             "coreStreamK")
    if key == TPL_SPLIT_DFL:
        for name in names:
            if f[name]:
                _problem(out, f, name, "must be 0 with tiling key 0 (the base template leaves basicBlockTiling zero)")
        return
    m, n, k, _ = _gemm(f)
    if not 1 <= f["usedCoreNum"] <= platform.aic_cores:
        _problem(out, f, "usedCoreNum", f"must be in [1, {platform.aic_cores}] (AI cores of {platform.name})")
    if f["coreBindOrder"] not in (1, 2):
        _problem(out, f, "coreBindOrder", "must be 1 (row first) or 2 (column first)")
    for name in ("singleCoreM", "singleCoreN", "singleCoreK"):
        if f[name] < 1:
            _problem(out, f, name, "must be at least 1")
    if f["singleCoreK"] >= 1 and f["singleCoreK"] % f["wo"] and f["singleCoreK"] < k:
        _problem(out, f, "singleCoreK", f"must be whole dy rows (a multiple of wo={f['wo']}) when it splits K={k}")
    if f["singleCoreHo"] != f["singleCoreK"] // max(f["wo"], 1):
        _problem(out, f, "singleCoreHo", f"must be singleCoreK/wo={f['singleCoreK'] // max(f['wo'], 1)}")
    if f["singleCoreCout"] != f["singleCoreM"]:
        _problem(out, f, "singleCoreCout", f"must equal singleCoreM={f['singleCoreM']}")
    if key == TPL_SPLIT_M_K and f["singleCoreN"] < n:
        _problem(out, f, "singleCoreN", f"tiling key 1 binds M and K: one core takes all of N={n}")
    if key == TPL_SPLIT_K_N and f["singleCoreM"] < m:
        _problem(out, f, "singleCoreM", f"tiling key 2 binds N and K: one core takes all of M={m}")
    if key >= 3 and f["singleCoreK"] < k:
        _problem(out, f, "singleCoreK", f"tiling key {key} binds M and N: one core takes all of K={k}")
    if f["streamKType"] not in (0, 1, 2) or (f["streamKType"] and key != TPL_SPLIT_M_N_STREAMK):
        _problem(out, f, "streamKType", "must be 0, or 1/2 with tiling key 4 (stream-K)")
    if bool(f["streamKType"]) != bool(f["coreStreamK"]):
        _problem(out, f, "coreStreamK", "must be > 0 exactly when streamKType is 1 or 2")


def _check_buffers(f: dict, dtype_bytes: int, platform: Platform, out: list[Problem]) -> None:
    check_l0_budgets(out, f, dtype_bytes, platform)
    a1 = _align(f["stepM"] * f["baseM"] * f["stepKa"] * f["baseK"] * dtype_bytes, TPIPE_ALIGN)
    b1 = _align(f["bl1Bound"] * dtype_bytes, TPIPE_ALIGN)
    total = a1 * f["al1Pbuffer"] + b1 * f["bl1Pbuffer"]
    if total > platform.L1:
        _problem(out, f, "bl1Bound", f"L1 needs {total} bytes: A1 {a1} (stepM*baseM*stepKa*baseK) x al1Pbuffer="
                                     f"{f['al1Pbuffer']} + B1 {b1} (bl1Bound) x bl1Pbuffer={f['bl1Pbuffer']}; L1 has "
                                     f"{platform.L1}")
    need = b1_elements(f)
    if f["bl1Bound"] < need:
        _problem(out, f, "bl1Bound", f"LoadToB1 can write {need} elements (x rows for stepKb*baseK dy pixels x wi "
                                     f"x cin1 blocks x C0) into a B1 buffer of bl1Bound elements")


def _check_instructions(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    kal1 = f["stepKa"] * f["baseK"]
    if kal1 > U16_MAX:
        _problem(out, f, "stepKa", f"A1 DataCopy blockLen = stepKa*baseK = {kal1} exceeds {U16_MAX}")
    if dtype_bytes == 4 and kal1 > L1W_MAX:
        _problem(out, f, "stepKa", f"float32 A Load3Dv2 l1W = stepKa*baseK = {kal1} exceeds {L1W_MAX}")
    if f["stepM"] * f["baseM"] // f["channelSize"] > BLOCK_COUNT_MAX:
        _problem(out, f, "baseM", f"A1 DataCopy blockCount = stepM*baseM/C0 exceeds {BLOCK_COUNT_MAX}")
    if f["wo"] > L1W_MAX:
        _problem(out, f, "wo", f"A Load3Dv2 l1W = wo exceeds {L1W_MAX}")
    if f["wi"] > L1W_MAX:
        _problem(out, f, "wi", f"B Load3Dv2 l1W = wi exceeds {L1W_MAX}")
    rows = rows_to_copy(min(f["stepKb"] * f["baseK"], f["singleCoreHo"] * f["wo"]), f["wo"])
    hi_rows = min(rows * f["strideH"] + (f["hk"] - 1) * f["dilationH"] + 1 - f["strideH"], f["hi"])
    if hi_rows > L1W_MAX:
        _problem(out, f, "stepKb", f"B Load3Dv2 l1H = {hi_rows} x rows exceeds {L1W_MAX}")
    m_start = f["wo"] + f["stepKb"] * f["baseK"]
    if m_start > U16_MAX:
        _problem(out, f, "stepKb", f"B Load3Dv2 mStartPt reaches wo + stepKb*baseK = {m_start}, beyond {U16_MAX}")
    k_start = (f["hk"] * f["wk"] + f["stepN"] * f["baseN"] // f["channelSize"]) * f["channelSize"]
    if k_start > U16_MAX:
        _problem(out, f, "stepN", f"B Load3Dv2 kStartPt/channelSize reach (hk*wk + stepN*baseN/C0)*C0 = {k_start}, "
                                  f"beyond {U16_MAX}")
    for name, high in (("strideH", STRIDE_MAX), ("strideW", STRIDE_MAX), ("hk", KERNEL_MAX), ("wk", KERNEL_MAX),
                       ("dilationH", DILATION_MAX), ("dilationW", DILATION_MAX), ("padUp", PAD_MAX),
                       ("padDown", PAD_MAX), ("padLeft", PAD_MAX), ("padRight", PAD_MAX)):
        if f[name] > high:
            _problem(out, f, name, f"exceeds the Load3Dv2 range [.., {high}]")


def check_fields(f: dict, dtype_bytes: int, platform: Platform, tiling_key: int) -> list[Problem]:
    """All problems of a field dict (params + dwTiling + basicBlockTiling) for a dtype size on a platform."""
    out: list[Problem] = []
    if tiling_key not in range(5):
        out.append(Problem("tiling_key", "must be 0 (base) or 1..4 (basic block)", tiling_key))
        return out
    _check_flags(f, dtype_bytes, out)
    _check_basic_block(f, platform, tiling_key, out)
    if out and any(p.message.startswith("must be at least 1") for p in out):
        return out  # the size rules below divide by these
    _check_blocks(f, out)
    _check_split(f, platform, tiling_key, out)
    _check_buffers(f, dtype_bytes, platform, out)
    _check_instructions(f, dtype_bytes, out)
    return out


def validate(tiling, platform=None, *, raise_error: bool = False) -> ValidationReport:
    """Check a Conv3DBackpropFilterV2TilingData against a platform (default: the one it was made for).

    Returns a report (truthy when the tiling fits; `str(report)` explains every problem, each as field=value:
    rule) or, with raise_error=True, raises TilingValidationError listing them.
    """
    if platform is None and tiling.platform is None:
        raise ValueError("the tiling records no platform: pass platform=")
    plat = get_platform(platform if platform is not None else tiling.platform)
    dtype_bytes = 4 if tiling.dtype == "float32" else 2
    report = ValidationReport(plat.name, check_fields(tiling.fields(), dtype_bytes, plat, tiling.tiling_key))
    if raise_error:
        report.raise_if_invalid(tiling)
    return report
