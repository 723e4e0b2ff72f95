"""The HW-mode Conv3D API tiling algorithm (`Conv3dTilingAlgorithmHwMode`): M is walked one output row at a time
(hoL0 = hoL1 = 1) in blocks of woL0 columns, for rows too wide for M mode's smallest L1 load.

Ported from conv/conv3d_v2/op_host/op_tiling/conv3d_api_tiling_algorithm_hw_mode.cpp (hicann/ops-nn e5c3fa93); the
rest is the M-mode algorithm it derives from.
"""
from __future__ import annotations

from tiling.conv3d_v2.api_algorithm import (ALL_FULL_LOAD, FULL_LOAD_AL1, FULL_LOAD_BL1, ITER_M_FST, ITER_N_FST,
                                            NONE_FULL_LOAD, Conv3dTilingAlgorithm, _mte2_sum)
from tiling.conv3d_v2.api_util import (DOUBLE_BUFFER_NUM, align_up, calc_comm_factor,
                                       calc_comm_factor_with_power_of_two, ceil_div)

CONST_HO_1 = 1


class Conv3dTilingAlgorithmHwMode(Conv3dTilingAlgorithm):
    # --- L0 ------------------------------------------------------------------------------------------
    def InitPingPong(self):
        t, db = self.t, self.doubleBufferValue
        db.pbAL1 = DOUBLE_BUFFER_NUM
        db.pbAL1 = (DOUBLE_BUFFER_NUM if self.CalcL1SizeForL0TilingHw(CONST_HO_1, t.cubeInfo.m0, t.cubeInfo.n0)
                    <= t.platformInfo.l1Size else 1)
        db.pbBL1 = db.pbAL0 = db.pbBL0 = DOUBLE_BUFFER_NUM
        db.pbCL0 = 1

    def GetL0TilingRange(self):
        t, db, plat, cube = self.t, self.doubleBufferValue, self.t.platformInfo, self.t.cubeInfo
        n_max = min(plat.l0BSize // (cube.k0 * db.pbBL0 * self.weightDTypeSize),
                    plat.l0CSize // (cube.m0 * db.pbCL0 * self.madDTypeSize))
        self.l0TilingRange.nL0Range = [f * cube.n0 for f in
                                       calc_comm_factor_with_power_of_two(t.shapeCalc.singleCo1, n_max // cube.n0)]
        self.l0TilingRange.hoL0Range = [CONST_HO_1]
        wo_max = min(plat.l0ASize // (cube.k0 * db.pbAL0 * self.fMapDTypeSize),
                     plat.l0CSize // (cube.n0 * db.pbCL0 * self.madDTypeSize), t.shapeInfo.singleWo)
        wo_range = calc_comm_factor_with_power_of_two(t.shapeInfo.singleWo // cube.m0, wo_max // cube.m0) or [1]
        self.l0TilingRange.woL0Range = [f * cube.m0 for f in wo_range]

    def L0TilingDecision(self):
        t, r, i, p, plat = self.t, self.l0TilingRange, self.l0TilingIdx, self.l0TilingParams, self.t.platformInfo
        i.woL0Idx = i.nL0Idx = 0
        p.kL0 = 16  # MKN_VALUE_DEFAULT
        p.woL0, p.hoL0, p.nL0 = r.woL0Range[0], r.hoL0Range[0], r.nL0Range[0]
        p.orgCoAlignN0 = align_up(t.shapeInfo.orgCo, t.cubeInfo.n0)

        def measure():
            return (self.CheckL0Buffer(p.woL0 * p.hoL0, p.kL0, p.nL0),
                    self.CalcL1SizeForL0TilingHw(p.hoL0, p.woL0, p.nL0), self.CalcBTSize(p.nL0))

        fits, used_l1, used_bt = measure()
        update_wo = False
        while fits and used_l1 <= plat.l1Size and used_bt <= plat.btSize:
            update_wo = p.woL0 <= p.nL0 or i.nL0Idx == len(r.nL0Range) - 1  # ShouldUpdateWoL0Index
            if update_wo:
                i.woL0Idx += 1
            else:
                i.nL0Idx += 1
            if i.woL0Idx < len(r.woL0Range) and i.nL0Idx < len(r.nL0Range):
                p.woL0, p.nL0 = r.woL0Range[i.woL0Idx], r.nL0Range[i.nL0Idx]
                fits, used_l1, used_bt = measure()
            else:
                break
        if update_wo:  # AdjustIndicesL0Tiling, with the last direction taken
            i.woL0Idx = max(i.woL0Idx - 1, 0)
        else:
            i.nL0Idx = max(i.nL0Idx - 1, 0)
        p.woL0 = r.woL0Range[i.woL0Idx]  # SetFinalL0TilingParams
        p.mL0 = p.woL0 * p.hoL0
        p.nL0 = r.nL0Range[i.nL0Idx]
        t.l0TilingInfo.mL0, t.l0TilingInfo.nL0 = p.woL0, p.nL0
        t.l0TilingInfo.nL0xk0 = p.nL0 * t.cubeInfo.k0

    def CalcL1SizeForL0TilingHw(self, ho: int, wo: int, n: int) -> int:
        """The three-argument CalcL1SizeForL0Tiling overload: an ho x wo output block's input window."""
        t = self.t
        used = self.InferHiL1(ho, t.shapeInfo.orgHi) * self.InferWiL1(wo, t.shapeInfo.orgWi) * t.cubeInfo.k0 \
            * self.fMapDTypeSize * self.doubleBufferValue.pbAL1
        return used + (n * self.biasDTypeSize if t.hasBias else 0)

    # --- L1 ------------------------------------------------------------------------------------------
    def InitCalcL1ParamsForFmap(self):
        t, calc, p = self.t, self.l1TilingCalc, self.l0TilingParams
        s, k0 = t.shapeInfo, t.cubeInfo.k0
        hi_full, wi_full = self.InferHiL1(s.singleHo, s.orgHi), self.InferWiL1(s.singleWo, s.orgWi)
        calc.fmapFullLoadL1Size = s.singlekD * t.shapeCalc.singleCi1 * hi_full * wi_full * k0 * self.fMapDTypeSize
        hi_min, wi_min = self.InferHiL1(p.hoL0, s.orgHi), self.InferWiL1(p.woL0, s.orgWi)
        calc.fmapMinLoadL1Size = k0 * hi_min * wi_min * self.fMapDTypeSize * self.doubleBufferValue.pbAL1
        calc.fmapKL1FullLoadSize = s.singlekD * t.shapeCalc.singleCi1 * calc.fmapMinLoadL1Size

    def GetL1TilingRangeForM(self):
        multi_wo_max = self.t.shapeInfo.singleWo // self.l0TilingParams.woL0
        factors = calc_comm_factor(multi_wo_max, multi_wo_max) or [1]
        self.l1TilingRange.woAL1ValueRange = [f * self.l0TilingParams.woL0 for f in factors]
        self.l1TilingRange.hoAL1ValueRange = [CONST_HO_1]

    def InitL1TiLingMap(self) -> dict:
        r = self.l1TilingRange
        k_a, k_b, ho_a, wo_a, n_b = (len(x) - 1 for x in (r.kAL1Range, r.kBL1Range, r.hoAL1ValueRange,
                                                          r.woAL1ValueRange, r.nBL1ValueRange))
        return {NONE_FULL_LOAD: (0, 0, 0, 0, 0, 0), FULL_LOAD_AL1: (k_a, 0, 0, ho_a, wo_a, 0),
                FULL_LOAD_BL1: (0, k_b, 0, 0, 0, n_b), ALL_FULL_LOAD: (k_a, k_b, 0, ho_a, wo_a, n_b)}

    def InitABL1TilingMode(self):
        """A row width that is not a whole number of m0 blocks never loads the whole fmap."""
        t, calc = self.t, self.l1TilingCalc
        if t.shapeInfo.singleWo % t.cubeInfo.m0:
            if calc.weightFullLoadL1Size + calc.fmapMinLoadL1Size + calc.biasMinLoadL1Size <= t.platformInfo.l1Size:
                self.l1TilingFlag.abL1Mode, self.doubleBufferValue.pbBL1 = FULL_LOAD_BL1, 1
            else:
                self.l1TilingFlag.abL1Mode = NONE_FULL_LOAD
            return
        super().InitABL1TilingMode()

    def _wo_full(self) -> int:
        return self.t.shapeInfo.singleWo // self.t.cubeInfo.m0 * self.t.cubeInfo.m0

    def ProcessAllL1FullLoad(self):
        t, p = self.t, self.l1TilingParams
        p.kAL1 = p.kBL1 = self._k_full()
        p.woAL1Value = self._wo_full()
        p.nBL1Value = t.cubeInfo.n0 * t.shapeCalc.singleCo1
        self.l1TilingFlag.iterateMNOrder = ITER_M_FST

    def ProcessFmapL1FullLoad(self):
        p = self.l1TilingParams
        p.kAL1 = self._k_full()
        p.woAL1Value = self._wo_full()
        self.l1TilingFlag.iterateMNOrder = ITER_N_FST
        if self.CoreL1TilingMinWeightBypass():
            p.kBL1 = p.nBL1Value = 0
            self.l1TilingFlag.isWeightBypass = True
            return
        self.FmapL1FullLoadIter()

    def MAL1IdxIter(self):
        self._grow("woAL1Idx", len(self.l1TilingRange.woAL1ValueRange), self.CheckL1Buffer)

    def CalcCurrFmapL1Size(self) -> int:
        t, r, idx = self.t, self.l1TilingRange, self.l1TilingIdx
        hi = self.InferHiL1(r.hoAL1ValueRange[idx.hoAL1Idx], t.shapeInfo.orgHi)
        wi = self.InferWiL1(r.woAL1ValueRange[idx.woAL1Idx], t.shapeInfo.orgWi)
        return (r.kAL1Range[idx.kAL1Idx] // self.l1TilingCalc.ci0HkWk) * hi * wi * self.fMapDTypeSize \
            * self.doubleBufferValue.pbAL1 * t.cubeInfo.k0

    def KABL1FullLoadIter(self):
        r, idx, s = self.l1TilingRange, self.l1TilingIdx, self.t.shapeInfo
        fmap_load, weight_load = self.L1NoFullLoadFmapSize(), self.l1TilingCalc.weightFullLoadL1Size
        idx.kAL1Idx, idx.kBL1Idx = len(r.kAL1Range) - 1, len(r.kBL1Range) - 1
        tmp_wo = self.KABL1FullLoadIterN()
        tmp_n = self.KABL1FullLoadIterM()
        loops = ceil_div(s.singleWo, r.woAL1ValueRange[tmp_wo]) * ceil_div(s.singleHo,
                                                                            r.hoAL1ValueRange[idx.hoAL1Idx])
        iter_n = _mte2_sum(fmap_load * s.singleDo, weight_load * loops * s.singleDo)
        loops = ceil_div(s.singleCo, r.nBL1ValueRange[tmp_n])
        iter_m = _mte2_sum(fmap_load * loops * s.singleDo, weight_load)
        if iter_n < iter_m:
            idx.woAL1Idx = tmp_wo
            idx.nBL1Idx = self.KABL1FullLoadIterM()
            self.l1TilingFlag.iterateMNOrder = ITER_N_FST
        else:
            idx.nBL1Idx = tmp_n
            idx.woAL1Idx = self.KABL1FullLoadIterN()
            self.l1TilingFlag.iterateMNOrder = ITER_M_FST

    def KABL1FullLoadIterN(self) -> int:
        return self._probe("woAL1Idx", len(self.l1TilingRange.woAL1ValueRange))

    def SetMAL1NBL1ValueAndMode(self):
        t, r, idx, p = self.t, self.l1TilingRange, self.l1TilingIdx, self.l1TilingParams
        p.nBL1Value = r.nBL1ValueRange[idx.nBL1Idx]
        p.woAL1Value = r.woAL1ValueRange[idx.woAL1Idx]
        p.hoAL1Value = r.hoAL1ValueRange[idx.hoAL1Idx]
        info, mode = t.l1TilingInfo, self.l1TilingFlag.abL1Mode
        info.al1FullLoad = info.bl1FullLoad = False
        if mode in (FULL_LOAD_BL1, ALL_FULL_LOAD):
            p.nBL1Value, info.bl1FullLoad = t.shapeCalc.singleCo1 * t.cubeInfo.n0, True
        if mode in (FULL_LOAD_AL1, ALL_FULL_LOAD):
            p.woAL1Value, info.al1FullLoad = self._wo_full(), True
        p.mAL1Value = p.woAL1Value
