"""The Conv3DV2 tiling engine (`Conv3dTilingEngine`): the operator's checks, the group fold, the output order,
the multi-core split (ComputeNumBlocks), convRunInfo, and the call into the Conv3D API tiling for one core's share.

Ported from conv/conv3d_v2/op_host/op_tiling/conv3d_tiling_engine.cpp (hicann/ops-nn e5c3fa93), real method names.
A refused problem raises ApiTilingError naming the check, as the engine's OP_LOGE does before returning false.
"""
from __future__ import annotations

from types import SimpleNamespace

from tiling.conv3d_v2.api_base import Conv3dTiling
from tiling.conv3d_v2.api_util import (CUBE_MKN, DTYPE_SIZE, HW_MODE, LOAD3D_MAX_DILATION_H_W, LOAD3D_MAX_FILTER_H_W,
                                       LOAD3D_MAX_PAD, LOAD3D_MAX_STRIDE_H_W, M_MODE,
                                       POINTWISE_SUPPORTED_TYPES_WITH_BIAS, POINTWISE_SUPPORTED_TYPES_WITHOUT_BIAS,
                                       SUPPORTED_TYPES_WITH_BIAS, SUPPORTED_TYPES_WITHOUT_BIAS, ApiTilingError,
                                       align_up, calc_comm_factor, ceil_div, infer_hi_l1, mul_overflows_u64)
from tiling.conv3d_v2.model import Conv3DRunInfo, TConv3DTiling

BATCH_AICORE_COF = 2
DO_DIM_FILTER_THRESHOLD = 6
C0_SIZE = 32
MAX_16_BIT_NUM = 65535
DIMS = ("batchDim", "mDim", "nDim", "doDim", "groupDim")  # NUMBLOCKS_*_IDX order


def _product(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def lcm(a: int, b: int) -> int:
    """Conv3dApiTiling::LCM (1 when either is 0)."""
    if a == 0 or b == 0:
        return 1
    x, y = a, b
    while x % y:
        x, y = y, x % y
    return a * b // y


class Conv3dTilingEngine:
    """Set shapeInfo_, attrInfo_, descInfo_, flagInfo_ and platformInfo_, then GetConv3DV2TilingData()."""

    def __init__(self, platformInfo: dict):
        self.platformInfo_ = SimpleNamespace(**platformInfo)  # aicoreNum, l1Size, l0aSize, ..., l2Rate
        self.shapeInfo_ = SimpleNamespace(batch=0, cIn=0, di=0, hi=0, wi=0, cOut=0, kd=0, kh=0, kw=0, dOut=0, ho=0,
                                          wo=0, cinOpt=1, coutOpt=1)
        self.attrInfo_ = SimpleNamespace(groups=1, groupOpt=1, strideD=1, strideH=1, strideW=1, dilationD=1,
                                         dilationH=1, dilationW=1, padHead=0, padTail=0, padTop=0, padBottom=0,
                                         padLeft=0, padRight=0, hf32Enable=0)
        self.descInfo_ = SimpleNamespace(fMapDtype="bfloat16", weightDtype="bfloat16", outDtype="bfloat16",
                                         biasDtype="float32", fMapFormat="NDC1HWC0", weightFormat="FRACTAL_Z_3D",
                                         outFormat="NDC1HWC0", biasFormat="ND")
        self.flagInfo_ = SimpleNamespace(hasBias=False, hasScale=False)
        self.outputBatch_ = self.outputCOut_ = 0
        self.outputOrder_ = M_MODE
        self.isPointWise = False
        self.numBlocksRes_ = self.numBlocksResOpt_ = None
        self.conv3dApiTiling_ = None

    # --- the whole flow (GetConv3DV2TilingData) --------------------------------------------------------
    def GetConv3DV2TilingData(self) -> tuple[TConv3DTiling, Conv3DRunInfo]:
        self.UpdatePointWiseMode()
        self.CheckAllParams()
        self.InitOutputOrder()
        self.ComputeNumBlocks()
        run_info = self.GetConv3DRunInfo()
        api = self.GetConv3dApiTiling()
        return api, run_info

    def UpdatePointWiseMode(self):
        s, d = self.shapeInfo_, self.descInfo_
        kernel_point_wise = (s.kd, s.kh, s.kw) == (1, 1, 1)
        self.isPointWise = kernel_point_wise and (d.fMapFormat, d.weightFormat, d.outFormat) == ("NCDHW",) * 3

    # --- CheckAllParams --------------------------------------------------------------------------------
    def CheckAllParams(self):
        s, a = self.shapeInfo_, self.attrInfo_
        if min(a.strideH, a.strideW, a.strideD) <= 0:
            raise ApiTilingError("CheckAllParams failed: invalid stride configuration")
        if min(a.dilationH, a.dilationW, a.dilationD) <= 0:
            raise ApiTilingError("CheckAllParams failed: invalid dilation configuration")
        if min(a.padHead, a.padTail, a.padTop, a.padBottom, a.padLeft, a.padRight) < 0:
            raise ApiTilingError("CheckAllParams failed: invalid padding configuration")
        if min(s.batch, s.cIn, s.di, s.hi, s.wi) <= 0:
            raise ApiTilingError("CheckAllParams failed: invalid feature map shape")
        if min(s.cOut, s.kd, s.kh, s.kw) <= 0:
            raise ApiTilingError("CheckAllParams failed: invalid weight shape")
        self.CheckParamsDtype()
        self.CheckInputFormat()
        self.CheckPointWiseParams()
        self.CheckInputShapeWithPad()
        self.CheckOutputShapeConsistency()
        self.CheckLoad3DLimits()
        self.GetGroupConvOpt()
        self.CheckParamsOverflow()

    def CheckParamsDtype(self):
        d, bias = self.descInfo_, self.flagInfo_.hasBias
        types = (d.fMapDtype, d.weightDtype, *((d.biasDtype,) if bias else ()), d.outDtype)
        if self.isPointWise:
            allowed = POINTWISE_SUPPORTED_TYPES_WITH_BIAS if bias else POINTWISE_SUPPORTED_TYPES_WITHOUT_BIAS
        else:
            allowed = SUPPORTED_TYPES_WITH_BIAS if bias else SUPPORTED_TYPES_WITHOUT_BIAS
        if types not in allowed:
            raise ApiTilingError(f"CheckAllParams failed: unsupported data types [fmap, weight, (bias,) output] "
                                 f"{types}; allowed {sorted(allowed)}")

    def CheckInputFormat(self):
        d = self.descInfo_
        expect = ("NCDHW",) * 3 if self.isPointWise else ("NDC1HWC0", "FRACTAL_Z_3D", "NDC1HWC0")
        if (d.fMapFormat, d.weightFormat, d.outFormat) != expect:
            raise ApiTilingError(f"CheckAllParams failed: formats {(d.fMapFormat, d.weightFormat, d.outFormat)}, "
                                 f"expected {expect}")

    def CheckPointWiseParams(self):
        if not self.isPointWise:
            return
        a = self.attrInfo_
        if (a.groups != 1 or (a.strideD, a.strideH, a.strideW) != (1, 1, 1)
                or (a.dilationD, a.dilationH, a.dilationW) != (1, 1, 1)
                or any((a.padHead, a.padTail, a.padTop, a.padBottom, a.padLeft, a.padRight))):
            raise ApiTilingError("CheckAllParams failed: a pointwise convolution needs groups 1, strides 1, "
                                 "dilations 1 and pads 0")

    def _expected_out(self):
        s, a = self.shapeInfo_, self.attrInfo_
        def out(size, pads, k, dilation, stride):
            extent = size + pads - dilation * (k - 1) - 1
            quotient = abs(extent) // stride  # int64 division truncates toward zero
            return (quotient if extent >= 0 else -quotient) + 1
        return (out(s.di, a.padHead + a.padTail, s.kd, a.dilationD, a.strideD),
                out(s.hi, a.padTop + a.padBottom, s.kh, a.dilationH, a.strideH),
                out(s.wi, a.padLeft + a.padRight, s.kw, a.dilationW, a.strideW))

    def CheckInputShapeWithPad(self):
        s, a = self.shapeInfo_, self.attrInfo_
        pads = (s.di + a.padHead + a.padTail - a.dilationD * (s.kd - 1) - 1,
                s.hi + a.padTop + a.padBottom - a.dilationH * (s.kh - 1) - 1,
                s.wi + a.padLeft + a.padRight - a.dilationW * (s.kw - 1) - 1)
        if min(pads) < 0:
            raise ApiTilingError(f"CheckAllParams failed: Fmap size(DHW) after padding should be >= filter "
                                 f"size(DHW). idPad {pads[0]}, ihPad {pads[1]}, iwPad {pads[2]}")

    def CheckOutputShapeConsistency(self):
        s = self.shapeInfo_
        if (self.outputBatch_, self.outputCOut_, s.dOut, s.ho, s.wo) != (s.batch, s.cOut, *self._expected_out()):
            raise ApiTilingError(f"CheckAllParams failed: output shape mismatch, expected "
                                 f"{(s.batch, s.cOut, *self._expected_out())}, "
                                 f"got {(self.outputBatch_, self.outputCOut_, s.dOut, s.ho, s.wo)}")

    def CheckLoad3DLimits(self):
        s, a = self.shapeInfo_, self.attrInfo_
        k0 = CUBE_MKN[self.descInfo_.fMapDtype][1]
        if (max(a.strideH, a.strideW) > LOAD3D_MAX_STRIDE_H_W
                or max(a.padTop, a.padBottom, a.padLeft, a.padRight) > LOAD3D_MAX_PAD
                or max(a.dilationH, a.dilationW) > LOAD3D_MAX_DILATION_H_W
                or max(s.kh, s.kw) > LOAD3D_MAX_FILTER_H_W or s.kh * s.kw * k0 > MAX_16_BIT_NUM):
            raise ApiTilingError("CheckAllParams failed: configuration violates LOAD3D hardware limits")

    def GetGroupConvOpt(self):
        """CalOptGroupParams: fold groups into groupOpt super-groups of enlarge groups each."""
        s, a = self.shapeInfo_, self.attrInfo_
        if a.groups < 1 or s.cIn < 1 or s.cOut < 1:
            raise ApiTilingError("CheckAllParams failed: groups, cIn and cOut must be greater than zero")
        if a.groups == 1:
            a.groupOpt, s.cinOpt, s.coutOpt = 1, s.cIn, s.cOut
            return
        if s.cIn % a.groups or s.cOut % a.groups:
            raise ApiTilingError("CheckAllParams failed: cIn and cOut should be multiple of groups")
        _, k0, n0 = CUBE_MKN[self.descInfo_.fMapDtype]
        cin_g, cout_g = s.cIn // a.groups, s.cOut // a.groups
        enlarge = min(lcm(lcm(cin_g, k0) // cin_g, lcm(cout_g, n0) // cout_g), a.groups)
        a.groupOpt = ceil_div(a.groups, enlarge)
        s.cinOpt, s.coutOpt = cin_g * enlarge, cout_g * enlarge

    def CheckParamsOverflow(self):
        s, a, d = self.shapeInfo_, self.attrInfo_, self.descInfo_
        _, k0, n0 = CUBE_MKN[d.fMapDtype]
        if (mul_overflows_u64(s.batch, s.di, a.groupOpt, ceil_div(s.cinOpt, k0), s.hi, s.wi,
                              k0 * DTYPE_SIZE[d.fMapDtype])
                or mul_overflows_u64(a.groupOpt, s.kd, ceil_div(s.cinOpt, k0), s.kh, s.kw, ceil_div(s.coutOpt, n0),
                                     n0 * k0 * DTYPE_SIZE[d.weightDtype])
                or mul_overflows_u64(s.batch, s.dOut, a.groupOpt, ceil_div(s.coutOpt, k0), s.ho, s.wo,
                                     k0 * DTYPE_SIZE[d.outDtype])):
            raise ApiTilingError("CheckAllParams failed: parameter size overflow detected")

    # --- output order ----------------------------------------------------------------------------------
    def InitOutputOrder(self):
        if self.CalcMinL1LoadSize(M_MODE) <= self.platformInfo_.l1Size:
            self.outputOrder_ = M_MODE
            return
        if self.isPointWise:
            raise ApiTilingError("MinL1LoadSize > L1size")
        self.CheckInputLimitsHwMode()
        if self.CalcMinL1LoadSize(HW_MODE) > self.platformInfo_.l1Size:
            raise ApiTilingError("MinL1LoadSize > L1size in HW_Mode")
        self.outputOrder_ = HW_MODE

    def CalcMinL1LoadSize(self, outputOrder: int) -> int:
        s, a, d = self.shapeInfo_, self.attrInfo_, self.descInfo_
        m0, k0, n0 = CUBE_MKN[d.fMapDtype]
        min_bias = align_up(n0 * DTYPE_SIZE[d.biasDtype], C0_SIZE) if self.flagInfo_.hasBias else 0
        if outputOrder == M_MODE:
            hi = infer_hi_l1(m0 // s.wo + 2, s.hi, s.kh, a.dilationH, a.strideH)
            return min_bias + hi * s.wi * k0 * DTYPE_SIZE[d.fMapDtype]
        hi = infer_hi_l1(1, s.hi, s.kh, a.dilationH, a.strideH)
        wi = infer_hi_l1(m0, s.wi, s.kw, a.dilationW, a.strideW)
        return min_bias + hi * wi * k0 * DTYPE_SIZE[d.fMapDtype]

    def CheckInputLimitsHwMode(self):
        if self.attrInfo_.groups != 1:
            raise ApiTilingError(f"Only groups 1 is supported in HW_Mode, current groups: {self.attrInfo_.groups}")

    # --- ComputeNumBlocks ------------------------------------------------------------------------------
    def ComputeNumBlocks(self):
        self.GetNumBlocksRange()
        self.GetNumBlocksInit()
        self.CoreNumBlocksDecision()

    def GetNumBlocksRange(self):
        s, a, cores = self.shapeInfo_, self.attrInfo_, self.platformInfo_.aicoreNum
        m0, _, n0 = CUBE_MKN[self.descInfo_.fMapDtype]
        aic = calc_comm_factor(cores, cores)
        r = SimpleNamespace(aicNumRange=aic)
        r.batchRange = aic if s.batch >= BATCH_AICORE_COF * cores else self.NumBlocksFactorMix(
            s.batch, calc_comm_factor(s.batch, cores), aic)
        r.nRange = calc_comm_factor(ceil_div(s.coutOpt, n0), cores)
        m_whole = ceil_div(s.ho * s.wo, m0) if self.outputOrder_ == M_MODE else s.ho
        r.mRange = self.NumBlocksFactorMix(m_whole, calc_comm_factor(m_whole, cores), aic)
        r.doRange = self.NumBlocksFactorMix(s.dOut, calc_comm_factor(s.dOut, cores), aic)
        r.groupRange = [1] if a.groups == 1 else calc_comm_factor(a.groupOpt, cores)
        self.numBlocksRanges_ = r

    @staticmethod
    def NumBlocksFactorMix(orgDim: int, inputRange: list[int], mixRange: list[int]) -> list[int]:
        """The divisors of orgDim plus every core-count divisor up to orgDim, sorted, without repeats."""
        return sorted(set(inputRange) | {v for v in mixRange if v <= orgDim})

    @staticmethod
    def NumBlocksRangesFilter(orgDim: int, inputRange: list[int]) -> list[int]:
        """Keep the splits whose last core is not left empty; all of them if none is."""
        kept = [n for n in inputRange if ceil_div(orgDim, ceil_div(orgDim, n)) == n]
        return kept or inputRange

    def GetNumBlocksInit(self):
        r = self.numBlocksRanges_
        ranges = (r.batchRange, r.mRange, r.nRange, r.doRange, r.groupRange)
        self.numBlocksInit_ = [rng[0] if rng else 1 for rng in ranges]
        m0, k0, n0 = CUBE_MKN[self.descInfo_.fMapDtype]
        self.numBlocksConst_ = SimpleNamespace(m0=m0, k0=k0, n0=n0, ci1=ceil_div(self.shapeInfo_.cinOpt, k0),
                                               co1=ceil_div(self.shapeInfo_.coutOpt, n0))

    def CoreNumBlocksDecision(self):
        r = self.numBlocksRanges_
        ranges = [r.batchRange, r.mRange, r.nRange, r.doRange, r.groupRange]
        self.numBlocksRes_ = self.NumBlocksDecisionBackTrack(ranges)
        self.numBlocksResOpt_ = self.numBlocksRes_
        # Again with only the depth splits that leave no core empty; kept if it is no dearer and valid.
        ranges[3] = r.doRange = self.NumBlocksRangesFilter(self.shapeInfo_.dOut, r.doRange)
        filtered = self.NumBlocksDecisionBackTrack(ranges)
        if (self.numBlocksRes_["doDim"] <= DO_DIM_FILTER_THRESHOLD and filtered["minCost"] <= self.numBlocksRes_[
                "minCost"] and self.ValidateOptimizedTilingContract(filtered)):
            self.numBlocksResOpt_ = filtered

    def NumBlocksDecisionBackTrack(self, ranges: list[list[int]]) -> dict:
        """Every combination (one value per axis, values below the axis's first candidate skipped, or 1 when
        only the last one is left), within the core count, at the least cost; ties prefer more batch, then group,
        then depth cores. Iterative form of the source's recursion, same visiting order."""
        best = dict.fromkeys(DIMS, 1) | {"minCost": 2**64 - 1}
        cores = self.platformInfo_.aicoreNum

        def choices(axis):
            rng, init = ranges[axis], self.numBlocksInit_[axis]
            for i, value in enumerate(rng):
                if value < init and i < len(rng) - 1:
                    continue
                yield 1 if value < init else value

        def walk(axis, record):
            nonlocal best
            if record and _product(record) > cores:
                return  # every leaf below is over the core count; the source visits and rejects them
            if axis == len(ranges):
                b, m, n, d, g = record
                if b * m * n * d * g > cores:
                    return
                cost = self.CalcTotalCost(b, m, n, d, g)
                better = cost < best["minCost"] or (cost == best["minCost"] and (
                    best["batchDim"] < b or (best["batchDim"] == b and best["groupDim"] < g)
                    or (best["batchDim"] == b and best["groupDim"] == g and best["doDim"] < d)))
                if better:
                    best = dict(zip(DIMS, record)) | {"minCost": cost}
                return
            for value in choices(axis):
                walk(axis + 1, (*record, value))

        walk(0, ())
        return best

    def CalcTotalCost(self, batchDim, mDim, nDim, doDim, groupDim) -> int:
        """The host's cost model, in doubles as the source computes it."""
        s, a, c, l2 = self.shapeInfo_, self.attrInfo_, self.numBlocksConst_, float(self.platformInfo_.l2Rate)
        load_fmap = (s.batch / batchDim * s.dOut / doDim * float(s.hi * s.wi) / mDim
                     * float(s.kd * c.ci1 * c.k0) / l2)
        load_weight = (float(c.co1 * c.n0) / nDim * float(s.kd * c.ci1 * s.kh * s.kw * c.k0)
                       * s.batch / batchDim / l2)
        load_output = (s.batch / batchDim * float(c.co1 * c.n0) / nDim * s.dOut / doDim
                       * float(s.ho * s.wo) / mDim / l2)
        if self.outputOrder_ == M_MODE:
            single_m1 = float(ceil_div(s.ho * s.wo, c.m0)) / mDim
        else:
            single_m1 = float(ceil_div(ceil_div(s.ho, mDim) * s.wo, c.m0))
        cube = (s.batch / batchDim * float(c.co1) / nDim * s.dOut / doDim * float(s.kd * c.ci1 * s.kh * s.kw)
                * single_m1)
        if a.groups != 1:
            scale = float(a.groupOpt) / groupDim
            load_fmap, load_weight, load_output, cube = (x * scale for x in (load_fmap, load_weight, load_output, cube))
        return int(load_fmap + load_weight + load_output + cube)

    def ValidateOptimizedTilingContract(self, res: dict) -> bool:
        s, a = self.shapeInfo_, self.attrInfo_
        if min(res[d] for d in DIMS) == 0:
            return False
        total = res["batchDim"] * res["mDim"] * res["nDim"] * res["doDim"] * res["groupDim"]
        if total > self.platformInfo_.aicoreNum:
            return False
        n0 = CUBE_MKN[self.descInfo_.fMapDtype][2]
        total_m = s.ho * s.wo if self.outputOrder_ == M_MODE else s.ho

        def axis_ok(whole, real_whole, dim):
            if whole == 0 or real_whole == 0:
                return False
            per_core = ceil_div(whole, dim)
            return (ceil_div(whole, per_core) - 1) * per_core < real_whole

        return (axis_ok(s.batch, s.batch, res["batchDim"]) and axis_ok(s.dOut, s.dOut, res["doDim"])
                and axis_ok(align_up(s.coutOpt, n0), s.coutOpt, res["nDim"]) and axis_ok(total_m, total_m, res["mDim"])
                and axis_ok(a.groupOpt, a.groupOpt, res["groupDim"]))

    # --- convRunInfo and the API tiling ----------------------------------------------------------------
    def GetConv3DRunInfo(self) -> Conv3DRunInfo:
        """Only what the source writes: groups, enlarge, cinOpt, coutOpt, groupOpt and hoDim/wDim stay 0."""
        s, a, res = self.shapeInfo_, self.attrInfo_, self.numBlocksResOpt_
        attrs = {k: getattr(a, k) for k in ("strideH", "strideW", "strideD", "dilationH", "dilationW", "dilationD",
                                            "padHead", "padTail", "padTop", "padBottom", "padLeft", "padRight")}
        return Conv3DRunInfo(batch=s.batch, cin=s.cIn, din=s.di, hin=s.hi, win=s.wi, cout=s.cOut, kd=s.kd, kh=s.kh,
                             kw=s.kw, dout=s.dOut, hout=s.ho, wout=s.wo, **{d: res[d] for d in DIMS}, **attrs,
                             hasBias=int(self.flagInfo_.hasBias))

    def GetConv3dApiTiling(self) -> TConv3DTiling:
        p, s, a, d, res = self.platformInfo_, self.shapeInfo_, self.attrInfo_, self.descInfo_, self.numBlocksResOpt_
        t = self.conv3dApiTiling_ = Conv3dTiling({"L1_SIZE": p.l1Size, "L0A_SIZE": p.l0aSize, "L0B_SIZE": p.l0bSize,
                                                  "L0C_SIZE": p.l0cSize, "UB_SIZE": p.ubSize, "BT_SIZE": p.btSize})
        t.SetOrgWeightShape(s.cOut, s.kd, s.kh, s.kw)
        t.SetOrgFmapShape(s.cIn, s.di, s.hi, s.wi)
        t.SetPadding([a.padHead, a.padTail, a.padTop, a.padBottom, a.padLeft, a.padRight])
        t.SetDilation(a.dilationH, a.dilationW, a.dilationD)
        t.SetStride(a.strideH, a.strideW, a.strideD)
        t.SetSingleWeightShape(s.cinOpt, s.kd, s.kh, s.kw)
        t.SetGroups(a.groups)
        t.SetOptGroupInfo(a.groupOpt, ceil_div(a.groupOpt, res["groupDim"]), s.cinOpt, s.coutOpt)
        self.SetSingleOutputShapeByMode(res)
        t.SetOutputOrder(self.outputOrder_)
        t.SetWeightType(d.weightFormat, d.weightDtype)
        t.SetFmapType(d.fMapFormat, d.fMapDtype)
        t.SetOutputType(d.outFormat, d.outDtype)
        if self.flagInfo_.hasBias:
            t.SetBiasType(d.biasFormat, d.biasDtype)
        if a.hf32Enable:
            t.attrInfo.hf32Enable = 1
        tiling = t.GetTiling()
        tiling.outputOrder = self.outputOrder_
        return tiling

    def SetSingleOutputShapeByMode(self, res: dict):
        s, n0 = self.shapeInfo_, CUBE_MKN[self.descInfo_.fMapDtype][2]
        single_co = s.coutOpt if res["nDim"] == 1 else align_up(s.coutOpt, n0) // res["nDim"]
        single_do = ceil_div(s.dOut, res["doDim"])
        if self.outputOrder_ == M_MODE:
            self.conv3dApiTiling_.SetSingleOutputShape(single_co, single_do, ceil_div(s.ho * s.wo, res["mDim"]))
        else:
            self.conv3dApiTiling_.SetSingleOutputShape(single_co, single_do, ceil_div(s.ho, res["mDim"]), s.wo)


__all__ = ["Conv3dTilingEngine"]
