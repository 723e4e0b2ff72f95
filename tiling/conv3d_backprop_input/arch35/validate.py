"""Does an arch35 dx tiling fit its platform and the arch35 kernel? A field-by-field explanation of what does not.

The rules are the arch35 host tiling's own (hicann/ops-nn @ e5c3fa93, `op_host/op_tiling/arch35/`):
InitBaseMNK's L0 budgets (L0A / L0B split in two by the L0 ping-pong, L0C by cl0Pbuffer), IsL1ParamsValid
(IsHkWkAligned and A1 + B1 below L1, with the same formulas: common.al1_bytes / bl1_bytes / fmap_h),
PostTiling's Load3D dstStride, and what the kernel takes as given: the C0 of the dtype, the cube fractal (16) for
baseM / baseN and C0 for baseK, buffer counts 1 or 2, iterateOrder 0 or 1, coreNum within the AI cores, and the
fields derived from the problem (hkWk, dkHkWk, cout1 ...) consistent with it. A field the tiling copies from the
problem is not a knob: an override of it is refused by the operator (kernels/conv3d_backprop_input/operator_arch35.py).

The L1 rule is checked for loadB1Condition GM_TO_L1 without kernel split (the whole hk*wk per K step), the only L1
path the ported kernel runs; the other paths (C04, NO_HK, NO_HK_WK, kernel split: their own L1 formulas) are
refused as not ported by the operator, and their L1 is not checked here [limit].
"""
from __future__ import annotations

from ascend_sim.machine.dtypes import DTYPES, EIGHT_BIT_DTYPES
from ascend_sim.machine.platform import get_platform
from tiling.common.integers import ceil_div
from tiling.common.validation import Problem, ValidationReport, check_l0_budgets
from tiling.common.validation import field_problem as _problem  # short: it starts most lines below
from tiling.conv3d_backprop_input.arch35.common import (BASIC_BLOCK_SIZE_16, UINT16_MAX, al1_bytes, bl1_bytes, fmap_h,
                                                        hk_wk_aligned)

BLOCK_CUBE = BASIC_BLOCK_SIZE_16
GM_TO_L1, NO_SPLIT_KERNEL = 0, 0  # loadB1Condition and kernelSplitMode of the tiling key

# The fields the tiling copies from the problem (SetRunInfoTiling / SetShapeTiling): not knobs.
PROBLEM_FIELDS = ("batch cin cout cinG coutG cout1 cin1 cout1G cin1G dout ho wo di hi wi dk hk wk group oriGroup "
                  "strideD strideH strideW padFront padBack padUp padDown padLeft padRight backpropPadTail "
                  "backpropPadUp backpropPadDown backpropPadLeft backpropPadRight dilationD dilationH dilationW "
                  "hkWk dkHkWk c0 c0BitsA c0BitsB hf32Flag").split()
# The fields the tiling derives together and the kernel trusts as a set: split-K's segments (the kernel steps cout by
# kSegment, 0 never ends; its workspace is sized by the tiling), the weight pre-transpose (its workspace and cores:
# turned on alone it gave wrong dx) and the cout per core (coutG, 4 under C04; a smaller one made Load3D read past
# the img2col matrix). An override of one is refused, as a copied field is.
DERIVED_FIELDS = ("enableSplitK", "kSegment", "kSegmentTail", "kValueSegment", "useUbAccumForSplitK",
                  "enableVecTrans", "singleCoreCout")
# The knobs a sweep or `--set` may change; every other field is derived by the tiling from these and the problem.
KNOBS = ("baseM", "baseN", "baseK", "stepKa", "stepKb", "al0Pbuffer", "bl0Pbuffer", "cl0Pbuffer", "al1Pbuffer",
         "bl1Pbuffer", "iterateOrder", "singleCoreM", "singleCoreCin", "coreNum")


def _dtype_bytes(dtype: str) -> int:
    return {**DTYPES, **EIGHT_BIT_DTYPES}[dtype].itemsize


def _check_flags(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    c0 = 32 // dtype_bytes
    if f["c0"] != c0:
        _problem(out, f, "c0", f"a {dtype_bytes}-byte dtype has C0={c0}")
    for name in ("c0BitsA", "c0BitsB"):
        if f[name] != c0.bit_length() - 1:
            _problem(out, f, name, f"must be log2(C0)={c0.bit_length() - 1}")
    for name in ("al0Pbuffer", "bl0Pbuffer", "cl0Pbuffer", "al1Pbuffer", "bl1Pbuffer"):
        if f[name] not in (1, 2):
            _problem(out, f, name, "must be 1 (single buffer) or 2 (double buffer)")
    if f["iterateOrder"] not in (0, 1):
        _problem(out, f, "iterateOrder", "must be 0 or 1")
    for name in ("enableFullLoad", "enableVecTrans", "enableSplitK", "useUbAccumForSplitK"):
        if f[name] not in (0, 1):
            _problem(out, f, name, "must be 0 or 1")
    if f["hf32Flag"] not in (0, 1) or (f["hf32Flag"] == 1 and dtype_bytes != 4):
        _problem(out, f, "hf32Flag", "must be 0, or 1 for float32 only")
    for name in ("batch", "cin", "cout", "cinG", "coutG", "cout1G", "dout", "ho", "wo", "di", "hi", "wi", "dk",
                 "hk", "wk", "group", "strideD", "strideH", "strideW", "dilationD", "dilationH", "dilationW",
                 "stepKa", "stepKb", "singleCoreBatch", "singleCoreGroup", "singleCoreDin", "singleCoreM",
                 "singleCoreCin", "singleCoreCout", "singleIterateDk"):
        if f[name] < 1:
            _problem(out, f, name, "must be at least 1")
    if f["hkWk"] != f["hk"] * f["wk"] or f["dkHkWk"] != f["dk"] * f["hk"] * f["wk"]:
        _problem(out, f, "hkWk", f"hkWk and dkHkWk={f['dkHkWk']} must be hk*wk={f['hk'] * f['wk']} and "
                                 f"dk*hk*wk={f['dk'] * f['hk'] * f['wk']}")
    if c0 and f["cout1G"] != ceil_div(f["coutG"], c0):
        _problem(out, f, "cout1G", f"must be ceil(coutG/C0)={ceil_div(f['coutG'], c0)}")


def _check_blocks(f: dict, dtype_bytes: int, out: list[Problem]) -> None:
    k0 = 32 // dtype_bytes
    for name in ("baseM", "baseN"):
        if f[name] < BLOCK_CUBE or f[name] % BLOCK_CUBE:
            _problem(out, f, name, f"must be a positive multiple of {BLOCK_CUBE} (cube fractal)")
    if f["baseK"] < k0 or f["baseK"] % k0:
        _problem(out, f, "baseK", f"must be a positive multiple of C0={k0} (k0)")
    if f["baseM"] // k0 > UINT16_MAX:
        _problem(out, f, "baseM", f"baseM/C0 must fit the Load3D dstStride (at most {UINT16_MAX}; PostTiling)")


def _check_split(f: dict, aic_cores: int, out: list[Problem]) -> None:
    if not 1 <= f["coreNum"] <= aic_cores:
        _problem(out, f, "coreNum", f"must be in [1, {aic_cores}] (the platform's AI cores)")
    if f["enlarge"] > 1 and f["singleCoreCin"] < f["cinG"] and f["singleCoreCin"] % BLOCK_CUBE:
        # found by a random-override fuzz: 8 of cinG 48 (bf16), 8 or 12 of cinG 24 (fp32) gave wrong dx, 16 and 32
        # were right; the generator's shares are multiples of 16
        _problem(out, f, "singleCoreCin", f"with enlarge={f['enlarge']} (groups merged into block-diagonal weights) "
                                          f"a core's Cin share must be a multiple of {BLOCK_CUBE} or all of "
                                          f"cinG={f['cinG']}")


def _check_buffers(f: dict, dtype_bytes: int, platform, out: list[Problem], *, l1: bool) -> None:
    """InitBaseMNK's L0 budgets and (l1) IsL1ParamsValid for the GM_TO_L1 L1 path."""
    check_l0_budgets(out, f, dtype_bytes, platform)
    if not l1:
        return
    k0 = 32 // dtype_bytes
    len_hk_wk_c0 = f["hk"] * f["wk"] * k0
    k_value = len_hk_wk_c0 * f["cout1G"]
    k_al1, k_bl1 = f["stepKa"] * f["baseK"], f["stepKb"] * f["baseK"]
    if not hk_wk_aligned(k_al1, k_bl1, k_value, len_hk_wk_c0):
        _problem(out, f, "stepKa", f"stepKa*baseK={k_al1} and stepKb*baseK={k_bl1} must each be all of K={k_value} "
                                   f"or whole kernel-tap groups (a multiple of hk*wk*C0={len_hk_wk_c0}; "
                                   "IsHkWkAligned)")
    ho = fmap_h(f["baseM"], f["wi"], f["ho"], f["strideH"], f["hk"], f["dilationH"])
    a1 = al1_bytes(ho, f["wo"], f["strideW"], k_al1, f["hk"] * f["wk"], dtype_bytes, f["al1Pbuffer"])
    b1 = bl1_bytes(k_bl1, len_hk_wk_c0, f["baseN"], f["bl1Pbuffer"], dtype_bytes)
    if a1 + b1 >= platform.L1:
        _problem(out, f, "stepKa", f"L1 needs {a1 + b1} bytes: A1 {a1} (al1Pbuffer={f['al1Pbuffer']}) + B1 {b1} "
                                   f"(bl1Pbuffer={f['bl1Pbuffer']}); it must stay below L1={platform.L1} "
                                   "(IsL1ParamsValid)")


def l1_usage(tiling) -> dict[str, int]:
    """The A1 and B1 bytes IsL1ParamsValid counts for this tiling (GM_TO_L1), for the lab's buffer columns."""
    f = tiling.fields()
    dtype_bytes = _dtype_bytes(tiling.dtype)
    k0 = 32 // dtype_bytes
    ho = fmap_h(f["baseM"], f["wi"], f["ho"], f["strideH"], f["hk"], f["dilationH"])
    a1 = al1_bytes(ho, f["wo"], f["strideW"], f["stepKa"] * f["baseK"], f["hk"] * f["wk"], dtype_bytes,
                   f["al1Pbuffer"])
    b1 = bl1_bytes(f["stepKb"] * f["baseK"], f["hk"] * f["wk"] * k0, f["baseN"], f["bl1Pbuffer"], dtype_bytes)
    return {"a1_bytes": a1, "b1_bytes": b1}


def check_fields(f: dict, dtype: str, platform, key: dict[str, int]) -> list[Problem]:
    """All problems of an arch35 field dict for a dtype on a platform; key: the tiling key's five parameters (the
    L1 rule is the GM_TO_L1 one: checked when loadB1Condition is GM_TO_L1 and kernelSplitMode 0)."""
    dtype_bytes = _dtype_bytes(dtype)
    out: list[Problem] = []
    _check_flags(f, dtype_bytes, out)
    _check_blocks(f, dtype_bytes, out)
    _check_split(f, platform.aic_cores, out)
    derivable = all(f[name] >= 1 for name in ("hk", "wk", "wi", "wo", "ho", "baseM", "baseN", "baseK", "stepKa",
                                              "stepKb", "strideH", "strideW", "dilationH"))
    gm_to_l1 = key["loadB1Condition"] == GM_TO_L1 and key["kernelSplitMode"] == NO_SPLIT_KERNEL
    if derivable and f["c0"] == 32 // dtype_bytes:
        _check_buffers(f, dtype_bytes, platform, out, l1=gm_to_l1)
    return out


def validate_arch35(tiling, platform=None, *, raise_error: bool = False) -> ValidationReport:
    """Check a Conv3DBackpropInputArch35TilingData against a platform (default: the one it was made for)."""
    if platform is None and tiling.platform is None:
        raise ValueError("the tiling records no platform: pass platform=")
    plat = get_platform(platform if platform is not None else tiling.platform)
    report = ValidationReport(plat.name, check_fields(tiling.fields(), tiling.dtype, plat, tiling.key_fields))
    if raise_error:
        report.raise_if_invalid(tiling)
    return report
