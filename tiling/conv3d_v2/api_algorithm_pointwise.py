"""The pointwise (1x1x1 kernel, NCDHW) Conv3D API tiling algorithm (`Conv3dTilingAlgorithmPointWise`).

Ported from conv/conv3d_v2/op_host/op_tiling/conv3d_api_tiling_algorithm_pointwise.cpp (hicann/ops-nn e5c3fa93).
It is the M-mode algorithm with its own L1 sizes: the feature map is an (M, K) matrix, not rows of an image; K is
aligned to 16 and, for fp32, walked in pairs of C0 blocks; the bias takes eight times its size in L1; the weight is
never bypassed.
"""
from __future__ import annotations

from math import gcd

from tiling.conv3d_v2.api_algorithm import (ALL_FULL_LOAD, FULL_LOAD_AL1, FULL_LOAD_BL1, NONE_FULL_LOAD,
                                            Conv3dTilingAlgorithm)
from tiling.conv3d_v2.api_util import UINT64_MAX, ApiTilingError, align_up, calc_comm_factor, ceil_div

POINT_WISE_BIAS_CUBE_UNIT = 8
POINT_WISE_ALIGN_UNIT = 16


def calc_factor_point_wise(num_max: int) -> list[int]:
    """CalcFactorPointWise: the even numbers 2, 4, ... up to max(num_max, 2)."""
    return list(range(2, max(num_max, 2) + 1, 2))


class Conv3dTilingAlgorithmPointWise(Conv3dTilingAlgorithm):
    def __init__(self, tiling):
        super().__init__(tiling)
        self.l1TilingFlag.isWeightBypass = False

    def CheckL1Buffer(self) -> bool:
        t, r, idx, flag, calc = self.t, self.l1TilingRange, self.l1TilingIdx, self.l1TilingFlag, self.l1TilingCalc
        fm = r.mAL1ValueRange[idx.mAL1Idx] * self.doubleBufferValue.pbAL1 * r.kAL1Range[idx.kAL1Idx] \
            * self.fMapDTypeSize
        weight = r.kBL1Range[idx.kBL1Idx] * self.doubleBufferValue.pbBL1 * r.nBL1ValueRange[idx.nBL1Idx] \
            * self.weightDTypeSize
        bias_size = (t.shapeCalc.singleCo1 * t.cubeInfo.n0 * self.biasDTypeSize if flag.isBiasFullLoad
                     else self.l0TilingParams.nL0 * self.biasDTypeSize)
        bias = bias_size * POINT_WISE_BIAS_CUBE_UNIT if t.hasBias else 0
        if flag.abL1Mode == ALL_FULL_LOAD:
            fm, weight = calc.fmapFullLoadL1Size, calc.weightFullLoadL1Size
        elif flag.abL1Mode == FULL_LOAD_AL1:
            fm = calc.fmapFullLoadL1Size
        elif flag.abL1Mode == FULL_LOAD_BL1:
            weight = calc.weightFullLoadL1Size
        return fm + weight + bias <= t.platformInfo.l1Size

    def CalcBTSize(self, n: int) -> int:
        return 0

    def WeightBypassDecision(self):
        return

    def InitCalcL1Params(self):
        t, calc, p, db = self.t, self.l1TilingCalc, self.l0TilingParams, self.doubleBufferValue
        s, c, cube = t.shapeInfo, t.shapeCalc, t.cubeInfo
        calc.ci0HkWk = s.singlekH * s.singlekW * cube.k0
        calc.alignCinKhKwKd = align_up(s.singleCi, cube.k0) * s.orgkH * s.orgkW * s.orgkD
        if s.singlekD * c.singleCi1 * c.singleM1 * cube.m0 * cube.k0 * self.fMapDTypeSize > UINT64_MAX:
            raise ApiTilingError("fmap size in l1 is overflow uint64, InitCalc l1 params failed")
        calc.fmapFullLoadL1Size = s.singlekD * align_up(c.singleCi1 * cube.k0, POINT_WISE_ALIGN_UNIT) * c.singleM1 \
            * cube.m0 * self.fMapDTypeSize
        if s.singlekD * c.singleCi1 * calc.ci0HkWk * c.singleCo1 * cube.n0 * self.weightDTypeSize > UINT64_MAX:
            raise ApiTilingError("weight size in l1 is overflow uint64, InitCalc l1 params failed")
        calc.weightFullLoadL1Size = s.singlekD * c.singleCi1 * calc.ci0HkWk * c.singleCo1 * cube.n0 \
            * self.weightDTypeSize
        multi_k0 = 2 if t.descInfo.fMapType.dtype == "float32" else 1
        calc.fmapMinLoadL1Size = cube.k0 * p.mL0 * self.fMapDTypeSize * db.pbAL1 * multi_k0
        calc.fmapKL1FullLoadSize = s.singlekD * c.singleCi1 * cube.k0 * p.mL0 * db.pbAL1 * self.fMapDTypeSize
        calc.weightMinLoadL1Size = calc.ci0HkWk * p.nL0 * db.pbBL1 * self.weightDTypeSize * multi_k0
        calc.weightKL1FullLoadSize = s.singlekD * c.singleCi1 * calc.ci0HkWk * p.nL0 * db.pbBL1 * self.weightDTypeSize
        calc.biasMinLoadL1Size = p.nL0 * POINT_WISE_BIAS_CUBE_UNIT * self.biasDTypeSize if t.hasBias else 0

    def InitABL1TilingMode(self):
        """As the M-mode one, except that A-full-load with a larger fmap also leaves room for B's smallest load."""
        calc, l1, db, flag = self.l1TilingCalc, self.t.platformInfo.l1Size, self.doubleBufferValue, self.l1TilingFlag
        fm_full, w_full, bias = calc.fmapFullLoadL1Size, calc.weightFullLoadL1Size, calc.biasMinLoadL1Size
        if fm_full + w_full + bias <= l1:
            flag.abL1Mode, db.pbAL1, db.pbBL1 = ALL_FULL_LOAD, 1, 1
            return
        b_full = w_full + calc.fmapMinLoadL1Size + bias <= l1
        a_full = fm_full + calc.weightMinLoadL1Size + bias <= l1
        for mode, fits in (((FULL_LOAD_BL1, b_full), (FULL_LOAD_AL1, a_full)) if fm_full <= w_full
                           else ((FULL_LOAD_AL1, a_full), (FULL_LOAD_BL1, b_full))):
            if fits:
                flag.abL1Mode = mode
                if mode == FULL_LOAD_BL1:
                    db.pbBL1 = 1
                else:
                    db.pbAL1 = 1
                return
        flag.abL1Mode = NONE_FULL_LOAD

    def GetL1TilingRange(self):
        t, r, c = self.t, self.l1TilingRange, self.t.shapeCalc
        if t.descInfo.fMapType.dtype == "float32":
            k_range = calc_factor_point_wise(c.singleCi1)
        else:
            k_range = calc_comm_factor(c.singleCi1, c.singleCi1)
        r.kAL1Range = [k * self.l1TilingCalc.ci0HkWk for k in k_range]
        r.kBL1Range = list(r.kAL1Range)
        multi_n_max = ceil_div(c.singleCo1 * t.cubeInfo.n0, self.l0TilingParams.nL0)
        r.nBL1ValueRange = [f * self.l0TilingParams.nL0 for f in calc_comm_factor(multi_n_max, multi_n_max)]
        self.GetL1TilingRangeForM()

    def GetKL0TilingRangeCommon(self, k0: int):
        r1, idx = self.l1TilingRange, self.l1TilingIdx
        factor_k = gcd(ceil_div(r1.kAL1Range[idx.kAL1Idx], k0), ceil_div(r1.kBL1Range[idx.kBL1Idx], k0))
        self.l0TilingRange.kL0Range = [f * k0 for f in calc_comm_factor(factor_k, factor_k)]

    def GetKL0TilingDecision(self):
        t = self.t
        self.GetKL0TilingRangeCommon(POINT_WISE_ALIGN_UNIT if t.descInfo.fMapType.dtype == "float32"
                                     else t.cubeInfo.k0)
        if self.FixL0PingpongDecision():
            return
        p, i, r0 = self.l0TilingParams, self.l0TilingIdx, self.l0TilingRange
        while i.kL0Idx < len(r0.kL0Range) and self.CheckL0Buffer(p.mL0, r0.kL0Range[i.kL0Idx], p.nL0):
            i.kL0Idx += 1  # no KL0_LIMIT here, unlike the M-mode loop
        i.kL0Idx = max(i.kL0Idx - 1, 0)
        p.kL0 = r0.kL0Range[i.kL0Idx]
        t.l0TilingInfo.kL0 = p.kL0
        t.l0TilingInfo.kL0xorgCoAlignN0 = p.kL0 * p.orgCoAlignN0

    def CalcL1SizeForL0Tiling(self, m: int, n: int) -> int:
        t, db = self.t, self.doubleBufferValue
        k = align_up(t.cubeInfo.k0, POINT_WISE_ALIGN_UNIT)
        used = m * k * self.fMapDTypeSize * db.pbAL1 + n * k * self.weightDTypeSize * db.pbBL1
        return used + (n * self.biasDTypeSize * POINT_WISE_BIAS_CUBE_UNIT if t.hasBias else 0)

    def L1NoFullLoadFmapSize(self) -> int:
        t = self.t
        return align_up(t.shapeInfo.singleM, t.cubeInfo.m0) \
            * align_up(t.shapeCalc.singleCi1 * t.cubeInfo.k0, POINT_WISE_ALIGN_UNIT) * t.shapeInfo.singlekD \
            * self.fMapDTypeSize

    def CoreL1TilingMinWeightBypass(self) -> bool:
        return False

    def NoneKABL1FullLoadWeightBypass(self) -> bool:
        return False

    def SetKAL1KBL1TailRes(self):
        r, idx, p, single_ci = self.l1TilingRange, self.l1TilingIdx, self.l1TilingParams, self.t.shapeInfo.singleCi
        p.kAL1 = r.kAL1Range[idx.kAL1Idx]
        p.kAL1Tail = single_ci % p.kAL1 or p.kAL1
        p.kBL1 = r.kBL1Range[idx.kBL1Idx]
        p.kBL1Tail = single_ci % p.kBL1 or p.kBL1
