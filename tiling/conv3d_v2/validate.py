"""Does a Conv3DV2 tiling fit its platform and the arch22 kernel? Every broken rule as field=value: rule.

The rules come from what the Conv3D API does with the tiling (asc-devkit conv3d_common_init_func.h: InitBuffer's
L1 / L0C / BT sizes, the L0A / L0B ping-pong halves, the K / M / N step arithmetic of Init*DirectionBaseValue and
LoadBL0; conv3d_common_func.h: IterateImpl's two loop orders) and from the instruction ranges in docs/isa.md. Use
it on generated tilings and on hand-edited ones (`tiling.with_overrides(mL0=...)`); the operator runs it before
every launch.
"""
from __future__ import annotations

from ascend_sim.machine.platform import Platform, get_platform
from tiling.common.validation import Problem, ValidationReport

C0_BYTES = 32
CUBE = 16
MMAD_MAX = 4095
LOAD2D_REPEAT_MAX = 255
PB_L0A, PB_L0B, PB_CL0, PB_AL1, PB_BL1 = 0x01, 0x02, 0x04, 0x08, 0x10  # pBufferFlag bits
ORDER_M_FIRST, ORDER_N_FIRST = 0, 1  # IterateMNOrder::ORDER_MTERFIRST / ORDER_NTERFIRST


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _align(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


def buffer_bytes(api, run, dtype_bytes: int, bias_bytes: int, pointwise: bool = False) -> dict[str, int]:
    """Bytes the kernel asks for in each buffer (the API's InitBuffer or InitBufferPointWise, TPipe's 32-byte
    rounding)."""
    k0 = C0_BYTES // dtype_bytes
    db = lambda bit: 2 if api.pBufferFlag & bit else 1  # noqa: E731
    bl1 = 0 if api.bl1BypassFlag else _align(api.nBL1 * api.kBL1 * dtype_bytes, C0_BYTES)
    if pointwise:  # x as [kAL1 aligned to 16][mAL1]; the bias as 8-wide fp32 rows (K0_BIAS); no BT buffer
        m_al1 = api.mAL1 if api.mAL1 < api.singleCoreM else _align(api.singleCoreM, CUBE)
        al1 = _align(m_al1 * _align(api.kAL1, CUBE) * dtype_bytes, C0_BYTES)
        bias_l1 = (_align(api.singleCoreCo * bias_bytes, CUBE * bias_bytes) if api.biasFullLoadFlag
                   else api.nL0 * bias_bytes) * 8
        return {"L1": al1 * db(PB_AL1) + bl1 * db(PB_BL1) + _align(bias_l1, C0_BYTES),
                "L0C": api.mL0 * api.nL0 * 4 * db(PB_CL0), "BT": 0}
    dil_kh = 1 + (api.kernelH - 1) * api.dilationH
    if api.outputOrder:  # HW mode: kH rows of the columns one mAL1 block of an output row reads
        hi_max = min(dil_kh, api.orgHi)
        win = min((api.mAL1 - 1) * api.strideW + 1 + (api.kernelW - 1) * api.dilationW, api.orgWi)
    else:
        ho_max = min(api.mAL1, api.singleCoreM) // max(api.orgWo, 1) + 2
        hi_max, win = min((ho_max - 1) * api.strideH + dil_kh, api.orgHi), api.orgWi
    al1 = _align(api.cin1InAL1 * k0 * hi_max * win * dtype_bytes, C0_BYTES)
    bias_l1 = (_align(api.singleCoreCo * bias_bytes, CUBE * bias_bytes) if api.biasFullLoadFlag
               else api.nL0 * bias_bytes)
    # the bias buffers are allocated with or without a bias (Init does not look at hasBias)
    return {"L1": al1 * db(PB_AL1) + bl1 * db(PB_BL1) + _align(bias_l1, C0_BYTES),
            "L0C": api.mL0 * api.nL0 * 4 * db(PB_CL0),
            "BT": _align(api.nL0 * 4, 64)}


def check_fields(api, run, dtype_bytes: int, bias_bytes: int, platform: Platform,
                 pointwise: bool = False) -> list[Problem]:
    out: list[Problem] = []

    def bad(name: str, value, rule: str) -> None:
        out.append(Problem(name, rule, value))

    k0 = C0_BYTES // dtype_bytes
    khkw = api.kernelH * api.kernelW
    weight_l1 = () if api.bl1BypassFlag else ("kBL1", "nBL1")  # bypassed: the weight never goes to L1
    for name in ("mL0", "kL0", "nL0", "mAL1", "kAL1", *weight_l1, "singleCoreM", "singleCoreCo", "singleCoreDo",
                 "cin1InAL1"):
        if getattr(api, name) <= 0:
            bad(name, getattr(api, name), "must be positive")
    for name in ("batchDim", "doDim", "mDim", "nDim", "groupDim"):
        if getattr(run, name) <= 0:
            bad(name, getattr(run, name), "must be positive")
    if api.iterateMNOrder not in (ORDER_M_FIRST, ORDER_N_FIRST):  # IterateImpl ends only on these two orders
        bad("iterateMNOrder", api.iterateMNOrder, f"must be {ORDER_M_FIRST} (M first) or {ORDER_N_FIRST} (N first): "
            "Iterate returns false only from IterateMFirst / IterateNFirst, so any other order never ends")
    if out:
        return out
    for name, unit in (("mL0", CUBE), ("nL0", CUBE), ("kL0", k0), *((("nBL1", CUBE),) if weight_l1 else ())):
        if getattr(api, name) % unit:
            bad(name, getattr(api, name), f"must be a multiple of {unit} (the cube fractal)")
    for name, value in (("mL0", api.mL0), ("nL0", api.nL0), ("kL0", api.kL0)):
        if value > MMAD_MAX:
            bad(name, value, f"Mmad takes m, n, k up to {MMAD_MAX}")
    if api.kAL1 % (khkw * k0):
        bad("kAL1", api.kAL1, f"must be whole kernel planes of C0 channels (a multiple of kH*kW*k0 = {khkw * k0})")
    if api.kAL1 % api.kL0:
        bad("kAL1", api.kAL1, f"must be a multiple of kL0={api.kL0} (the L0 K steps tile the L1 block)")
    if not api.bl1BypassFlag and api.kBL1 % api.kL0:
        bad("kBL1", api.kBL1, f"must be a multiple of kL0={api.kL0}")
    if api.cin1InAL1 * khkw * k0 != api.kAL1:
        bad("cin1InAL1", api.cin1InAL1, f"must equal kAL1 / (kH*kW*k0) = {api.kAL1 // (khkw * k0)}")
    if api.mAL1DivmL0 != _ceil_div(api.mAL1, api.mL0):
        bad("mAL1DivmL0", api.mAL1DivmL0, f"must be ceil(mAL1 / mL0) = {_ceil_div(api.mAL1, api.mL0)}")
    if not api.bl1BypassFlag and api.nBL1DivnL0 != _ceil_div(api.nBL1, api.nL0):
        bad("nBL1DivnL0", api.nBL1DivnL0, f"must be ceil(nBL1 / nL0) = {_ceil_div(api.nBL1, api.nL0)}")
    if not api.bl1BypassFlag and api.nBL1 >= api.coutOpt and run.nDim > 1:
        bad("nBL1", api.nBL1, f"a BL1 block of every cout (nBL1 >= Cout={api.coutOpt}) is read from the core's first "
            f"cout on: the N split must be nDim=1, not {run.nDim}")
    k_steps = _ceil_div(_align(api.cinOpt, k0) * khkw * api.kernelD, api.kL0)  # K steps of one Iterate
    if api.pBufferFlag & PB_L0A and not api.pBufferFlag & PB_L0B and not api.bl1BypassFlag and k_steps > 1:
        bad("pBufferFlag", api.pBufferFlag, "L0A ping-pong alone with several K steps needs BL1 bypass (the API's "
            "L0A_OPEN protocol assumes it: with the weight through L1 the single L0B is reloaded while the previous "
            "Mmad may still read it; with one K step every load waits on event 0 and nothing races)")
    if api.pBufferFlag & PB_L0B and not api.pBufferFlag & PB_L0A and api.bl1BypassFlag:
        per_core = _ceil_div(run.dout, run.doDim)
        fewest = run.dout - (_ceil_div(run.dout, per_core) - 1) * per_core  # the last core's output depths
        if k_steps > 1 and min(per_core, fewest) == 1:
            bad("pBufferFlag", api.pBufferFlag, "L0B ping-pong alone with BL1 bypass arms its second M -> MTE2 event "
                f"only on a core with more than one output depth; with {k_steps} K steps a core with one waits on it "
                "forever (deadlock)")
    if api.nL0xk0 != api.nL0 * k0:
        bad("nL0xk0", api.nL0xk0, f"must be nL0 * k0 = {api.nL0 * k0}")
    if api.bl1BypassFlag and api.nL0 >= api.coutOpt and (api.nL0 // CUBE) * (api.kL0 // k0) > LOAD2D_REPEAT_MAX:
        bad("kL0", api.kL0, f"one LoadData 2D of the whole weight block needs nL0/16 * kL0/k0 <= {LOAD2D_REPEAT_MAX} "
            "repeats")
    for name, bit in (("L0A", PB_L0A), ("L0B", PB_L0B)):
        # with ping-pong the API's pong block starts at the fixed half (L0A_SIZE / 2); without, one block from 0
        room = platform.capacity(name) // 2 if api.pBufferFlag & bit else platform.capacity(name)
        size = (api.mL0 if name == "L0A" else api.nL0) * api.kL0 * dtype_bytes
        if size > room:
            where = "the API's half" if api.pBufferFlag & bit else "all"
            bad("kL0", api.kL0, f"a {name} block of {size} bytes is more than {where} of {name} ({room} bytes)")
    used = buffer_bytes(api, run, dtype_bytes, bias_bytes, pointwise)
    for name in ("L1", "L0C", "BT"):
        if used[name] > platform.capacity(name):
            field = {"L1": "kAL1", "L0C": "mL0", "BT": "nL0"}[name]
            bad(field, getattr(api, field), f"the kernel needs {used[name]} bytes of {name}, which has "
                f"{platform.capacity(name)}")
    if api.outputOrder and (api.singleCoreM > api.orgHo or api.mAL1 > _align(api.orgWo, CUBE)):
        bad("outputOrder", api.outputOrder, f"HW mode needs singleCoreM (output rows per core, here "
            f"{api.singleCoreM}) <= orgHo={api.orgHo} and mAL1 (columns of one row, here {api.mAL1}) <= Wo aligned to "
            f"16 = {_align(api.orgWo, CUBE)}")
    out += _check_core_split(api, run, pointwise)
    cores = run.batchDim * run.doDim * run.mDim * run.nDim * run.groupDim
    if cores > platform.aic_cores:
        bad("batchDim*doDim*mDim*nDim*groupDim", cores, f"more than the {platform.aic_cores} cube cores")
    return out


def _check_core_split(api, run, pointwise: bool) -> list[Problem]:
    """The kernel's block index arithmetic (CountIdxTail, kernels/conv3d_v2/kernel/conv3d_v2.py): shares of
    ceil(whole / dim) per core. Without groups the kernel never reads groupDim, so its cores past the first
    groupDim-th would redo (and race on) the same blocks; an N share must be whole 16-cout fractals, or the next core
    starts inside one and both write it; singleCoreCo, singleCoreM and singleCoreDo are the cout, M and depth shares (InitBuffer sizes AL1
    by the first, a core that is no tail computes both), and L0 blocks tile an AL1 block whole only in mL0 steps (M mode)."""
    out: list[Problem] = []
    if api.groups <= 1 and run.groupDim != 1:
        out.append(Problem("groupDim", "must be 1 without groups (the kernel splits no group dimension)",
                           run.groupDim))
    n_whole = _align(api.coutOpt if api.groups > 1 else run.cout, CUBE)
    if _ceil_div(n_whole, run.nDim) % CUBE:
        out.append(Problem("nDim", f"each core's share of the {n_whole} couts (16-aligned), ceil({n_whole} / nDim) = "
                           f"{_ceil_div(n_whole, run.nDim)}, must be a multiple of 16", run.nDim))
    couts = min(_ceil_div(n_whole, run.nDim), api.coutOpt if api.groups > 1 else run.cout)
    if not pointwise and api.singleCoreCo != couts:
        out.append(Problem("singleCoreCo", f"must be a core's share of the couts, min(ceil({n_whole} / nDim={run.nDim}), "
                           f"Cout) = {couts}: a core that is no tail computes that many (more read the bias past its "
                           "end, fewer left couts unwritten)", api.singleCoreCo))
    share = _ceil_div(run.hout * run.wout, run.mDim)
    if not pointwise and not api.outputOrder and api.singleCoreM != share:
        out.append(Problem("singleCoreM", f"must be a core's share of the output pixels, ceil(Ho*Wo / mDim={run.mDim}) "
                           f"= {share}: InitBuffer sizes AL1 by it and a core that is no tail computes that many "
                           "from its share's start (smaller: loads past AL1; larger: into the next core's pixels)",
                           api.singleCoreM))
    depths = _ceil_div(run.dout, run.doDim)
    if not pointwise and api.singleCoreDo != depths:
        out.append(Problem("singleCoreDo", f"must be a core's share of the output depths, ceil(Do={run.dout} / "
                           f"doDim={run.doDim}) = {depths}: a core that is no tail computes that many from its "
                           "share's start", api.singleCoreDo))
    if not pointwise and not api.outputOrder and _ceil_div(share, api.mAL1) > 1 and api.mAL1 % api.mL0:
        out.append(Problem("mAL1", f"must be a multiple of mL0={api.mL0} when a core's {share} pixels take several AL1 "
                           "blocks: every L0 block but the core's last is mL0 pixels, so one past the AL1 block's end "
                           "writes the next block's pixels too", api.mAL1))
    return out


def validate(tiling, platform=None, *, raise_error: bool = False, overrides: dict | None = None) -> ValidationReport:
    """Check a Conv3DV2TilingData against a platform (default: the one it was made for)."""
    if platform is None and tiling.platform is None:
        raise ValueError("the tiling records no platform: pass platform=")
    plat = get_platform(platform if platform is not None else tiling.platform)
    dtype_bytes = 4 if tiling.dtype == "float32" else 2
    # DTYPE_BIAS (float32 on the pointwise path), else float
    bias_bytes = 2 if tiling.dtype == "float16" and tiling.convRunInfo.hasBias and not tiling.pointwise else 4
    report = ValidationReport(plat.name, check_fields(tiling.convApiTiling, tiling.convRunInfo, dtype_bytes,
                                                      bias_bytes, plat, tiling.pointwise))
    if raise_error:
        report.raise_if_invalid(tiling, overrides)
    return report
