"""The M-mode Conv3D API tiling algorithm (`Conv3dApiTiling::Conv3dTilingAlgorithm`): L0 blocks, then the L1 loads,
then the double-buffer flags.

Ported line by line from conv/conv3d_v2/op_host/op_tiling/conv3d_api_tiling_algorithm.cpp (hicann/ops-nn e5c3fa93);
the method names are the real ones. The HW-mode and pointwise algorithms subclass this one and override what differs.
The source walks index ranges upwards "while the buffers still fit" and then steps one back; `_grow` does that.
"""
from __future__ import annotations

from math import gcd
from types import SimpleNamespace

from tiling.conv3d_v2.api_util import (DOUBLE_BUFFER_NUM, DTYPE_SIZE, KL0_LIMIT, POSTK_LIMIT, ApiTilingError, NotPorted,
                                       align_up, calc_comm_factor, calc_comm_factor_with_power_of_two, ceil_div,
                                       infer_hi_l1)

# L1TilingMode and IterateMNOrder.
FULL_LOAD_BL1, FULL_LOAD_AL1, ALL_FULL_LOAD, NONE_FULL_LOAD = "FULL_LOAD_BL1", "FULL_LOAD_AL1", "ALL_FULL_LOAD", "NONE"
ITER_M_FST, ITER_N_FST = 0, 1
UINT64_MAX = 2**64 - 1


def _mte2_sum(*terms: int) -> int:
    """The source adds/multiplies MTE2 byte counts with uint64 overflow checks; an overflow fails the tiling."""
    total = sum(terms)
    if any(t > UINT64_MAX for t in terms) or total > UINT64_MAX:
        raise ApiTilingError("total mte2 size in l1 is overflow uint64")
    return total


class Conv3dTilingAlgorithm:
    def __init__(self, tiling):
        self.t = tiling
        d = tiling.descInfo
        self.fMapDTypeSize = DTYPE_SIZE[d.fMapType.dtype]
        self.weightDTypeSize = DTYPE_SIZE[d.weightType.dtype]
        self.biasDTypeSize = DTYPE_SIZE[d.biasType.dtype]
        self.outputDTypeSize = DTYPE_SIZE[d.outputType.dtype]
        self.l0TilingRange = SimpleNamespace(mL0Range=[], kL0Range=[], nL0Range=[], hoL0Range=[], woL0Range=[])
        self.l0TilingParams = SimpleNamespace(mL0=0, kL0=0, nL0=0, hoL0=0, woL0=0, orgCoAlignN0=0)
        self.l0TilingIdx = SimpleNamespace(mL0Idx=0, kL0Idx=0, nL0Idx=0, hoL0Idx=0, woL0Idx=0)
        self.l1TilingRange = SimpleNamespace(mAL1ValueRange=[], nBL1ValueRange=[], kAL1Range=[], kBL1Range=[],
                                             hoAL1ValueRange=[], woAL1ValueRange=[])
        self.l1TilingParams = SimpleNamespace(kAL1=0, kAL1Tail=0, kBL1=0, kBL1Tail=0, mAL1Value=0, nBL1Value=0,
                                              hoAL1Value=0, woAL1Value=0)
        self.l1TilingCalc = SimpleNamespace(ci0HkWk=0, alignCinKhKwKd=0, fmapFullLoadL1Size=0, weightFullLoadL1Size=0,
                                            fmapKL1FullLoadSize=0, weightKL1FullLoadSize=0, fmapMinLoadL1Size=0,
                                            weightMinLoadL1Size=0, biasMinLoadL1Size=0)
        self.l1TilingIdx = SimpleNamespace(kAL1Idx=0, kBL1Idx=0, mAL1Idx=0, nBL1Idx=0, hoAL1Idx=0, woAL1Idx=0)
        self.l1TilingFlag = SimpleNamespace(abL1Mode=None, iterateMNOrder=None, kAL1CanFullLoadFlag=False,
                                            kBL1CanFullLoadFlag=False, kABL1CanFullLoadFlag=False,
                                            isBiasFullLoad=False, isWeightBypass=False)
        # DoubleBufferTilingValue's member defaults (pbAL1 = PING_PONG_AL1 = 2, pbAL0 = pbBL0 = 2).
        self.doubleBufferValue = SimpleNamespace(pbAL1=2, pbBL1=1, pbAL0=2, pbBL0=2, pbCL0=1, pbUB=1)

    @property
    def madDTypeSize(self) -> int:
        return DTYPE_SIZE[self.t.cubeInfo.madType]

    def _grow(self, idx_name: str, limit: int, fits) -> None:
        """while (idx < limit && fits()) idx++; then idx = idx == 0 ? 0 : idx - 1 (the source's search idiom)."""
        idx = self.l1TilingIdx
        while getattr(idx, idx_name) < limit and fits():
            setattr(idx, idx_name, getattr(idx, idx_name) + 1)
        setattr(idx, idx_name, max(getattr(idx, idx_name) - 1, 0))

    # --- Process ---------------------------------------------------------------------------------------
    def Process(self) -> None:
        self.InitPingPong()
        self.GetL0Tiling()
        self.GetL1Tiling()
        self.GetVecTiling()
        self.SetPBufferFlag()

    def GetL1Tiling(self):
        self.PreProcessingL1Tiling()
        self.CoreL1TilingDecision()
        self.BiasL1TilingDecision()
        self.GetKL0TilingDecision()
        self.WeightBypassDecision()
        self.SetL1TilingRes()

    def PreProcessingL1Tiling(self):
        self.InitCalcL1Params()
        self.GetL1TilingRange()
        self.InitL1TiLing()

    def SetPBufferFlag(self):
        """pBufferFlag bits, low to high: AL0, BL0, CL0, AL1, BL1, UB (each 1 when double-buffered)."""
        db, out = self.doubleBufferValue, self.t.dbValue
        for name in ("pbBL1", "pbAL1", "pbCL0", "pbBL0", "pbAL0", "pbUB"):
            setattr(out, name, getattr(db, name))
        flag = 0
        for pb in (db.pbUB, db.pbBL1, db.pbAL1, db.pbCL0, db.pbBL0, db.pbAL0):
            flag = (flag << 1) | int(pb == DOUBLE_BUFFER_NUM)
        out.pBufferFlag = flag

    # --- L1 ------------------------------------------------------------------------------------------
    def CheckL1Buffer(self) -> bool:
        t, r, idx, flag, calc = self.t, self.l1TilingRange, self.l1TilingIdx, self.l1TilingFlag, self.l1TilingCalc
        fm = self.CalcCurrFmapL1Size()
        weight = r.kBL1Range[idx.kBL1Idx] * self.doubleBufferValue.pbBL1 * r.nBL1ValueRange[idx.nBL1Idx] \
            * self.weightDTypeSize
        bias_size = (t.shapeCalc.singleCo1 * t.cubeInfo.n0 * self.biasDTypeSize if flag.isBiasFullLoad
                     else self.l0TilingParams.nL0 * self.biasDTypeSize)
        bias = bias_size if t.hasBias else 0
        if flag.abL1Mode == ALL_FULL_LOAD:
            fm, weight = calc.fmapFullLoadL1Size, calc.weightFullLoadL1Size
        elif flag.abL1Mode == FULL_LOAD_AL1:
            fm = calc.fmapFullLoadL1Size
        elif flag.abL1Mode == FULL_LOAD_BL1:
            weight = calc.weightFullLoadL1Size
        if flag.isWeightBypass:
            weight = 0
        return fm + weight + bias <= t.platformInfo.l1Size

    def CalcCurrFmapL1Size(self) -> int:
        t, r, idx = self.t, self.l1TilingRange, self.l1TilingIdx
        ho_load = r.mAL1ValueRange[idx.mAL1Idx] // t.shapeCalc.orgWo + 2
        hi_load = self.InferHiL1(ho_load, t.shapeInfo.orgHi)
        return (r.kAL1Range[idx.kAL1Idx] // self.l1TilingCalc.ci0HkWk) * hi_load * t.shapeInfo.orgWi \
            * self.fMapDTypeSize * self.doubleBufferValue.pbAL1 * t.cubeInfo.k0

    def InitCalcL1Params(self):
        t, calc = self.t, self.l1TilingCalc
        s = t.shapeInfo
        calc.ci0HkWk = s.singlekH * s.singlekW * t.cubeInfo.k0
        calc.alignCinKhKwKd = align_up(s.singleCi, t.cubeInfo.k0) * s.orgkH * s.orgkW * s.orgkD
        self.InitCalcL1ParamsForFmap()
        self.InitCalcL1ParamsForWeight()
        calc.biasMinLoadL1Size = self.l0TilingParams.nL0 * self.biasDTypeSize if t.hasBias else 0

    def InitCalcL1ParamsForFmap(self):
        t, calc = self.t, self.l1TilingCalc
        s, k0 = t.shapeInfo, t.cubeInfo.k0
        hi_full = self.InferHiL1(s.singleM // t.shapeCalc.orgWo + 2, s.orgHi)
        calc.fmapFullLoadL1Size = s.singlekD * t.shapeCalc.singleCi1 * hi_full * s.orgWi * k0 * self.fMapDTypeSize
        hi_min = self.InferHiL1(self.l0TilingParams.mL0 // t.shapeCalc.orgWo + 2, s.orgHi)
        calc.fmapMinLoadL1Size = k0 * hi_min * s.orgWi * self.fMapDTypeSize * self.doubleBufferValue.pbAL1
        calc.fmapKL1FullLoadSize = s.singlekD * t.shapeCalc.singleCi1 * k0 * hi_min * s.orgWi \
            * self.doubleBufferValue.pbAL1 * self.fMapDTypeSize

    def InitCalcL1ParamsForWeight(self):
        t, calc = self.t, self.l1TilingCalc
        s, c = t.shapeInfo, t.shapeCalc
        calc.weightFullLoadL1Size = s.singlekD * c.singleCi1 * calc.ci0HkWk * c.singleCo1 * t.cubeInfo.n0 \
            * self.weightDTypeSize
        calc.weightMinLoadL1Size = calc.ci0HkWk * self.l0TilingParams.nL0 * self.doubleBufferValue.pbBL1 \
            * self.weightDTypeSize
        calc.weightKL1FullLoadSize = s.singlekD * c.singleCi1 * calc.ci0HkWk * self.l0TilingParams.nL0 \
            * self.doubleBufferValue.pbBL1 * self.weightDTypeSize

    def InferHiL1(self, ho_l1: int, hi: int) -> int:
        s, a = self.t.shapeInfo, self.t.attrInfo
        return infer_hi_l1(ho_l1, hi, s.singlekH, a.dilationH, a.strideH)

    def InferWiL1(self, wo_l1: int, wi: int) -> int:
        s, a = self.t.shapeInfo, self.t.attrInfo
        return infer_hi_l1(wo_l1, wi, s.singlekW, a.dilationW, a.strideW)

    def GetL1TilingRange(self):
        t, r, c = self.t, self.l1TilingRange, self.t.shapeCalc
        r.kAL1Range = calc_comm_factor(c.singleCi1, c.singleCi1)
        r.kBL1Range = list(r.kAL1Range)
        for dk in range(2, t.shapeInfo.singlekD + 1):
            r.kAL1Range.append(dk * c.singleCi1)
            r.kBL1Range.append(dk * c.singleCi1)
        # Load3Dv2's postK limit caps kAL1 (upper_bound on the list as built: ascending here).
        limit = POSTK_LIMIT // self.l1TilingCalc.ci0HkWk
        r.kAL1Range = [k for k in r.kAL1Range if k <= limit]
        r.kAL1Range = [k * self.l1TilingCalc.ci0HkWk for k in r.kAL1Range]
        r.kBL1Range = [k * self.l1TilingCalc.ci0HkWk for k in r.kBL1Range]
        multi_n_max = ceil_div(c.singleCo1 * t.cubeInfo.n0, self.l0TilingParams.nL0)
        r.nBL1ValueRange = [f * self.l0TilingParams.nL0 for f in calc_comm_factor(multi_n_max, multi_n_max)]
        self.GetL1TilingRangeForM()

    def GetL1TilingRangeForM(self):
        t = self.t
        multi_m_max = ceil_div(ceil_div(t.shapeInfo.singleM, t.cubeInfo.m0) * t.cubeInfo.m0, self.l0TilingParams.mL0)
        self.l1TilingRange.mAL1ValueRange = [f * self.l0TilingParams.mL0
                                             for f in calc_comm_factor(multi_m_max, multi_m_max)]

    def InitL1TiLing(self):
        starts = self.InitL1TiLingMap()
        self.InitABL1TilingMode()
        idx = self.l1TilingIdx
        (idx.kAL1Idx, idx.kBL1Idx, idx.mAL1Idx, idx.hoAL1Idx, idx.woAL1Idx,
         idx.nBL1Idx) = starts[self.l1TilingFlag.abL1Mode]

    def InitL1TiLingMap(self) -> dict:
        """Where each L1 mode starts its search: (kAL1, kBL1, mAL1, hoAL1, woAL1, nBL1) indices; a fully loaded
        side starts at its largest value. (An empty range would wrap to a huge index in the source.)"""
        r = self.l1TilingRange
        k_a, k_b, m_a, n_b = (len(x) - 1 for x in (r.kAL1Range, r.kBL1Range, r.mAL1ValueRange, r.nBL1ValueRange))
        return {NONE_FULL_LOAD: (0, 0, 0, 0, 0, 0), FULL_LOAD_AL1: (k_a, 0, m_a, 0, 0, 0),
                FULL_LOAD_BL1: (0, k_b, 0, 0, 0, n_b), ALL_FULL_LOAD: (k_a, k_b, m_a, 0, 0, n_b)}

    def InitABL1TilingMode(self):
        calc, l1, db, flag = self.l1TilingCalc, self.t.platformInfo.l1Size, self.doubleBufferValue, self.l1TilingFlag
        fm_full, w_full, bias = calc.fmapFullLoadL1Size, calc.weightFullLoadL1Size, calc.biasMinLoadL1Size
        if fm_full + w_full + bias <= l1:
            flag.abL1Mode, db.pbAL1, db.pbBL1 = ALL_FULL_LOAD, 1, 1
            return
        if fm_full <= w_full:
            if w_full + calc.fmapMinLoadL1Size + bias <= l1:
                flag.abL1Mode, db.pbBL1 = FULL_LOAD_BL1, 1
                return
            if fm_full + bias + calc.weightMinLoadL1Size <= l1:
                flag.abL1Mode, db.pbAL1 = FULL_LOAD_AL1, 1
                return
        else:
            if fm_full + bias <= l1:
                flag.abL1Mode, db.pbAL1 = FULL_LOAD_AL1, 1
                return
            if w_full + calc.fmapMinLoadL1Size + bias <= l1:
                flag.abL1Mode, db.pbBL1 = FULL_LOAD_BL1, 1
                return
        flag.abL1Mode = NONE_FULL_LOAD

    def FmapL1FullLoadIter(self):
        r = self.l1TilingRange
        self._grow("kBL1Idx", len(r.kBL1Range), self.CheckL1Buffer)
        if self.l1TilingIdx.kBL1Idx != len(r.kBL1Range) - 1:
            return
        self._grow("nBL1Idx", len(r.nBL1ValueRange), self.CheckL1Buffer)

    def CoreL1TilingMinWeightBypass(self) -> bool:
        calc = self.l1TilingCalc
        return calc.fmapFullLoadL1Size + calc.weightMinLoadL1Size + calc.biasMinLoadL1Size > self.t.platformInfo.l1Size

    def CoreL1TilingDecision(self):
        mode = self.l1TilingFlag.abL1Mode
        if mode == ALL_FULL_LOAD:
            return self.ProcessAllL1FullLoad()
        if mode == FULL_LOAD_AL1:
            return self.ProcessFmapL1FullLoad()
        if mode == FULL_LOAD_BL1:
            return self.ProcessWeightL1FullLoad()
        return self.ProcessNoneL1FullLoad()

    def _k_full(self) -> int:
        return self.t.shapeInfo.singlekD * self.t.shapeCalc.singleCi1 * self.l1TilingCalc.ci0HkWk

    def ProcessAllL1FullLoad(self):
        t, p = self.t, self.l1TilingParams
        p.kAL1 = p.kBL1 = self._k_full()
        p.mAL1Value = t.cubeInfo.m0 * t.shapeCalc.singleM1
        p.nBL1Value = t.cubeInfo.n0 * t.shapeCalc.singleCo1
        self.l1TilingFlag.iterateMNOrder = ITER_M_FST

    def ProcessFmapL1FullLoad(self):
        t, p = self.t, self.l1TilingParams
        p.kAL1 = self._k_full()
        p.mAL1Value = t.cubeInfo.m0 * t.shapeCalc.singleM1
        self.l1TilingFlag.iterateMNOrder = ITER_N_FST
        if self.CoreL1TilingMinWeightBypass():
            self.l1TilingFlag.isWeightBypass = True
            p.kBL1 = p.nBL1Value = 0
            return
        self.FmapL1FullLoadIter()

    def ProcessWeightL1FullLoad(self):
        t, p = self.t, self.l1TilingParams
        p.kBL1 = self._k_full()
        p.nBL1Value = t.cubeInfo.n0 * t.shapeCalc.singleCo1
        self.l1TilingFlag.iterateMNOrder = ITER_M_FST
        self.WeightL1FullLoadIter()

    def ProcessNoneL1FullLoad(self):
        self.InitKL1LoadFlag()
        self.L1NoFullLoadIter()

    def MAL1IdxIter(self):
        self._grow("mAL1Idx", len(self.l1TilingRange.mAL1ValueRange), self.CheckL1Buffer)

    def WeightL1FullLoadIter(self):
        r = self.l1TilingRange
        self._grow("kAL1Idx", len(r.kAL1Range), self.CheckL1Buffer)
        if self.l1TilingIdx.kAL1Idx != len(r.kAL1Range) - 1:
            return
        self.MAL1IdxIter()

    def InitKL1LoadFlag(self):
        calc, l1, flag = self.l1TilingCalc, self.t.platformInfo.l1Size, self.l1TilingFlag
        bias = calc.biasMinLoadL1Size
        if calc.fmapKL1FullLoadSize + calc.weightKL1FullLoadSize + bias <= l1:
            flag.kAL1CanFullLoadFlag = flag.kBL1CanFullLoadFlag = flag.kABL1CanFullLoadFlag = True
            return
        if calc.fmapKL1FullLoadSize + calc.weightMinLoadL1Size + bias <= l1:
            flag.kAL1CanFullLoadFlag = True
        if calc.fmapMinLoadL1Size + calc.weightKL1FullLoadSize + bias <= l1:
            flag.kBL1CanFullLoadFlag = True

    def KAL1FullLoadIter(self):
        self.l1TilingFlag.iterateMNOrder = ITER_N_FST
        self._grow("kBL1Idx", len(self.l1TilingRange.kBL1Range), self.CheckL1Buffer)
        self.MAL1IdxIter()

    def KBL1FullLoadIter(self):
        self.l1TilingFlag.iterateMNOrder = ITER_M_FST
        self._grow("kAL1Idx", len(self.l1TilingRange.kAL1Range), self.CheckL1Buffer)
        self._grow("nBL1Idx", len(self.l1TilingRange.nBL1ValueRange), self.CheckL1Buffer)

    def KABL1FullLoadIter(self):
        t, r, idx = self.t, self.l1TilingRange, self.l1TilingIdx
        fmap_load, weight_load = self.L1NoFullLoadFmapSize(), self.l1TilingCalc.weightFullLoadL1Size
        idx.kAL1Idx, idx.kBL1Idx = len(r.kAL1Range) - 1, len(r.kBL1Range) - 1
        tmp_m = self.KABL1FullLoadIterN()
        tmp_n = self.KABL1FullLoadIterM()
        loops = ceil_div(t.shapeInfo.singleM, r.mAL1ValueRange[tmp_m])
        iter_n = _mte2_sum(fmap_load * t.shapeInfo.singleDo, weight_load * t.shapeInfo.singleDo * loops)
        loops = ceil_div(t.shapeInfo.singleCo, r.nBL1ValueRange[tmp_n])
        iter_m = _mte2_sum(fmap_load * t.shapeInfo.singleDo * loops, weight_load)
        if iter_n < iter_m:
            self.l1TilingFlag.iterateMNOrder, idx.mAL1Idx = ITER_N_FST, tmp_m
        else:
            self.l1TilingFlag.iterateMNOrder, idx.nBL1Idx = ITER_M_FST, tmp_n

    def _probe(self, idx_name: str, limit: int) -> int:
        """Grow one index as far as L1 allows, report it, and put the index back."""
        start = getattr(self.l1TilingIdx, idx_name)
        self._grow(idx_name, limit, self.CheckL1Buffer)
        found = getattr(self.l1TilingIdx, idx_name)
        setattr(self.l1TilingIdx, idx_name, start)
        return found

    def KABL1FullLoadIterN(self) -> int:
        return self._probe("mAL1Idx", len(self.l1TilingRange.mAL1ValueRange))

    def KABL1FullLoadIterM(self) -> int:
        return self._probe("nBL1Idx", len(self.l1TilingRange.nBL1ValueRange))

    def NoneKABL1FullLoadWeightBypass(self) -> bool:
        calc = self.l1TilingCalc
        return calc.fmapMinLoadL1Size + calc.weightMinLoadL1Size + calc.biasMinLoadL1Size > self.t.platformInfo.l1Size

    def NoneKABL1FullLoadIter(self):
        flag, idx, r = self.l1TilingFlag, self.l1TilingIdx, self.l1TilingRange
        if self.NoneKABL1FullLoadWeightBypass():
            flag.isWeightBypass = True
            self.l1TilingParams.kBL1 = self.l1TilingParams.nBL1Value = 0
            flag.iterateMNOrder = ITER_M_FST
            return
        while idx.kAL1Idx < len(r.kAL1Range) and self.CheckL1Buffer():
            idx.kAL1Idx += 1
            idx.kBL1Idx += 1
        flag.iterateMNOrder = ITER_M_FST
        idx.kAL1Idx = max(idx.kAL1Idx - 1, 0)
        idx.kBL1Idx = max(idx.kBL1Idx - 1, 0)

    def L1NoFullLoadFmapSize(self) -> int:
        return self.l1TilingCalc.fmapFullLoadL1Size

    def L1NoFullLoadIter(self):
        t, flag, r, idx = self.t, self.l1TilingFlag, self.l1TilingRange, self.l1TilingIdx
        if flag.kAL1CanFullLoadFlag and not flag.kBL1CanFullLoadFlag:
            idx.kAL1Idx = len(r.kAL1Range) - 1
            return self.KAL1FullLoadIter()
        if flag.kBL1CanFullLoadFlag and not flag.kAL1CanFullLoadFlag:
            idx.kBL1Idx = len(r.kBL1Range) - 1
            return self.KBL1FullLoadIter()
        fmap_load, weight_load = self.L1NoFullLoadFmapSize(), self.l1TilingCalc.weightFullLoadL1Size
        if (flag.kBL1CanFullLoadFlag or flag.kAL1CanFullLoadFlag) and not flag.kABL1CanFullLoadFlag:
            loops = ceil_div(t.shapeInfo.singleM, self.l0TilingParams.mL0)
            only_kal1 = _mte2_sum(fmap_load * t.shapeInfo.singleDo, weight_load * t.shapeInfo.singleDo * loops)
            loops = ceil_div(t.shapeInfo.singleCo, self.l0TilingParams.nL0)
            only_kbl1 = _mte2_sum(fmap_load * t.shapeInfo.singleDo * loops, weight_load)
            if only_kal1 < only_kbl1:
                idx.kAL1Idx = len(r.kAL1Range) - 1
                self.KAL1FullLoadIter()
            else:
                idx.kBL1Idx = len(r.kBL1Range) - 1
                self.KBL1FullLoadIter()
            return None
        if flag.kABL1CanFullLoadFlag:
            return self.KABL1FullLoadIter()
        return self.NoneKABL1FullLoadIter()

    def BiasL1TilingDecision(self):
        if not self.t.hasBias or self.l1TilingFlag.isBiasFullLoad:
            return
        self.l1TilingFlag.isBiasFullLoad = True
        if not self.CheckL1Buffer():
            self.l1TilingFlag.isBiasFullLoad = False

    def FixL0PingpongDecision(self) -> bool:
        t, p, db, r = self.t, self.l0TilingParams, self.doubleBufferValue, self.l0TilingRange
        k_full = self._k_full()
        k_max = r.kL0Range[-1]
        l0a = k_max * p.mL0 * self.fMapDTypeSize
        l0b = k_max * p.nL0 * self.weightDTypeSize
        if not (k_max == k_full and l0a <= t.platformInfo.l0ASize and l0b <= t.platformInfo.l0BSize
                and k_max < KL0_LIMIT):
            return False
        m_full = ceil_div(t.shapeInfo.singleM, t.cubeInfo.m0) * t.cubeInfo.m0
        n_full = t.shapeCalc.singleCo1 * t.cubeInfo.n0
        if p.mL0 == m_full and p.nL0 == n_full:
            db.pbAL0 = db.pbBL0 = 1
        elif p.mL0 == m_full and l0b * DOUBLE_BUFFER_NUM <= t.platformInfo.l0BSize:
            db.pbAL0 = 1
        elif p.nL0 == n_full and l0a * DOUBLE_BUFFER_NUM <= t.platformInfo.l0ASize:
            db.pbBL0 = 1
        else:
            return False
        self.l0TilingIdx.kL0Idx = len(r.kL0Range) - 1
        p.kL0 = k_max
        t.l0TilingInfo.kL0 = p.kL0
        t.l0TilingInfo.kL0xorgCoAlignN0 = p.kL0 * p.orgCoAlignN0
        return True

    def GetKL0TilingDecision(self):
        t, r1, idx, r0 = self.t, self.l1TilingRange, self.l1TilingIdx, self.l0TilingRange
        k0 = t.cubeInfo.k0
        max_ka = ceil_div(r1.kAL1Range[idx.kAL1Idx], k0)
        max_kb = max_ka if self.l1TilingFlag.isWeightBypass else ceil_div(r1.kBL1Range[idx.kBL1Idx], k0)
        factor_k = gcd(max_ka, max_kb)
        r0.kL0Range = [f * k0 for f in calc_comm_factor(factor_k, factor_k)]
        if self.FixL0PingpongDecision():
            return
        p, i = self.l0TilingParams, self.l0TilingIdx
        while (i.kL0Idx < len(r0.kL0Range) and self.CheckL0Buffer(p.mL0, r0.kL0Range[i.kL0Idx], p.nL0)
               and r0.kL0Range[i.kL0Idx] < KL0_LIMIT):
            i.kL0Idx += 1
        i.kL0Idx = max(i.kL0Idx - 1, 0)
        p.kL0 = r0.kL0Range[i.kL0Idx]
        t.l0TilingInfo.kL0 = p.kL0
        t.l0TilingInfo.kL0xorgCoAlignN0 = p.kL0 * p.orgCoAlignN0

    def WeightBypassDecision(self):
        t, r1, idx, r0, i0, flag = (self.t, self.l1TilingRange, self.l1TilingIdx, self.l0TilingRange,
                                    self.l0TilingIdx, self.l1TilingFlag)
        if (not flag.isWeightBypass and r1.kBL1Range[idx.kBL1Idx] == r0.kL0Range[i0.kL0Idx]
                and r1.nBL1ValueRange[idx.nBL1Idx] == r0.nL0Range[i0.nL0Idx]):
            flag.isWeightBypass = True
        if not flag.isWeightBypass:
            return
        self.doubleBufferValue.pbBL1 = 1
        # Largest kAL1 down to the current one that is a multiple of kL0 and fits L1. The source's loop runs on an
        # unsigned index: when none qualifies it ends one below the start, or, from a start of 0, wraps and the
        # next .at() throws; that case is refused here.
        start = idx.kAL1Idx
        idx.kAL1Idx = len(r1.kAL1Range) - 1
        while idx.kAL1Idx >= start:
            if r1.kAL1Range[idx.kAL1Idx] % t.l0TilingInfo.kL0 == 0 and self.CheckL1Buffer():
                break
            if idx.kAL1Idx == 0:
                raise ApiTilingError("WeightBypassDecision: no kAL1 fits (the source would index out of range)")
            idx.kAL1Idx -= 1
        if idx.kAL1Idx != len(r1.kAL1Range) - 1:
            self.BiasL1TilingDecision()
            return
        self.MAL1IdxIter()
        self.BiasL1TilingDecision()

    def SetKAL1KBL1TailRes(self):
        r, idx, p, calc = self.l1TilingRange, self.l1TilingIdx, self.l1TilingParams, self.l1TilingCalc
        p.kAL1 = r.kAL1Range[idx.kAL1Idx]
        p.kAL1Tail = calc.alignCinKhKwKd % p.kAL1 or p.kAL1
        p.kBL1 = r.kBL1Range[idx.kBL1Idx]
        p.kBL1Tail = calc.alignCinKhKwKd % p.kBL1 or p.kBL1

    def SetMAL1NBL1ValueAndMode(self):
        t, r, idx, p = self.t, self.l1TilingRange, self.l1TilingIdx, self.l1TilingParams
        p.nBL1Value = r.nBL1ValueRange[idx.nBL1Idx]
        p.mAL1Value = r.mAL1ValueRange[idx.mAL1Idx]
        info, mode = t.l1TilingInfo, self.l1TilingFlag.abL1Mode
        info.al1FullLoad = info.bl1FullLoad = False
        m_full = ceil_div(t.shapeInfo.singleM, t.cubeInfo.m0) * t.cubeInfo.m0
        n_full = t.shapeCalc.singleCo1 * t.cubeInfo.n0
        if mode in (FULL_LOAD_BL1, ALL_FULL_LOAD):
            p.nBL1Value, info.bl1FullLoad = n_full, True
        if mode in (FULL_LOAD_AL1, ALL_FULL_LOAD):
            p.mAL1Value, info.al1FullLoad = m_full, True

    def SetL1TilingRes(self):
        t, p, calc, flag = self.t, self.l1TilingParams, self.l1TilingCalc, self.l1TilingFlag
        self.SetKAL1KBL1TailRes()
        self.SetMAL1NBL1ValueAndMode()
        if flag.isWeightBypass:
            p.nBL1Value = p.kBL1 = 0
        info, k0 = t.l1TilingInfo, t.cubeInfo.k0
        info.kAL1, info.kBL1, info.mAL1Value, info.nBL1Value = p.kAL1, p.kBL1, p.mAL1Value, p.nBL1Value
        info.mAL1DivmL0 = ceil_div(p.mAL1Value, self.l0TilingParams.mL0)
        info.nBL1DivnL0 = ceil_div(p.nBL1Value, self.l0TilingParams.nL0)
        info.cin1InAL1 = p.kAL1 // calc.ci0HkWk
        info.kAL1Tail = p.kAL1Tail
        info.cin1InAL1Tail = p.kAL1Tail // calc.ci0HkWk
        info.KBL1Divk0 = p.kBL1 // k0
        info.kBL1Tail = p.kBL1Tail
        info.KBL1TailDivk0 = p.kBL1Tail // k0
        info.iterateMNOrder = flag.iterateMNOrder
        info.biasFullLoadFlag = flag.isBiasFullLoad
        info.fixpParamsFullLoadFlag = False
        info.isWeightBypass = flag.isWeightBypass

    # --- L0 ------------------------------------------------------------------------------------------
    def CheckL0Buffer(self, m: int, k: int, n: int) -> bool:
        plat = self.t.platformInfo
        return (self.CalcAL0Size(m, k) <= plat.l0ASize and self.CalcBL0Size(k, n) <= plat.l0BSize
                and self.CalcCL0Size(m, n) <= plat.l0CSize)

    def CalcAL0Size(self, m: int, k: int) -> int:
        return m * k * self.doubleBufferValue.pbAL0 * self.fMapDTypeSize

    def CalcBL0Size(self, k: int, n: int) -> int:
        return k * n * self.doubleBufferValue.pbBL0 * self.weightDTypeSize

    def CalcCL0Size(self, m: int, n: int) -> int:
        return m * n * self.doubleBufferValue.pbCL0 * self.madDTypeSize

    def CalcL1SizeForL0Tiling(self, m: int, n: int) -> int:
        t = self.t
        hi_min = self.InferHiL1(m // t.shapeCalc.orgWo + 2, t.shapeInfo.orgHi)
        used = hi_min * t.shapeInfo.orgWi * t.cubeInfo.k0 * self.fMapDTypeSize * self.doubleBufferValue.pbAL1
        return used + (n * self.biasDTypeSize if t.hasBias else 0)

    def CalcBTSize(self, n: int) -> int:
        return n * self.biasDTypeSize if self.t.hasBias else 0

    def GetL0Tiling(self):
        self.GetL0TilingRange()
        self.L0TilingDecision()
        self.CheckL0CDoubleBuffer()

    def InitPingPong(self):
        t, db = self.t, self.doubleBufferValue
        db.pbAL1 = (DOUBLE_BUFFER_NUM if self.CalcL1SizeForL0Tiling(t.cubeInfo.m0, t.cubeInfo.n0)
                    <= t.platformInfo.l1Size else 1)
        db.pbBL1, db.pbAL0, db.pbBL0, db.pbCL0, db.pbUB = DOUBLE_BUFFER_NUM, DOUBLE_BUFFER_NUM, DOUBLE_BUFFER_NUM, 1, 1

    def GetL0TilingRange(self):
        t, db, plat, cube = self.t, self.doubleBufferValue, self.t.platformInfo, self.t.cubeInfo
        n_max = min(plat.l0BSize // (cube.k0 * db.pbBL0 * self.weightDTypeSize),
                    plat.l0CSize // (cube.m0 * db.pbCL0 * self.madDTypeSize))
        self.l0TilingRange.nL0Range = [f * cube.n0 for f in
                                       calc_comm_factor_with_power_of_two(t.shapeCalc.singleCo1, n_max // cube.n0)]
        m_max = min(plat.l0ASize // (cube.k0 * db.pbAL0 * self.fMapDTypeSize),
                    plat.l0CSize // (cube.n0 * db.pbCL0 * self.madDTypeSize))
        self.l0TilingRange.mL0Range = [f * cube.m0 for f in calc_comm_factor_with_power_of_two(
            ceil_div(t.shapeInfo.singleM, cube.m0), m_max // cube.m0)]

    def L0TilingDecision(self):
        t, r, i, p, plat = self.t, self.l0TilingRange, self.l0TilingIdx, self.l0TilingParams, self.t.platformInfo
        i.mL0Idx = i.nL0Idx = 0
        p.kL0 = 16  # 1 * MKN_VALUE_DEFAULT
        p.mL0, p.nL0 = r.mL0Range[0], r.nL0Range[0]
        p.orgCoAlignN0 = align_up(t.shapeInfo.orgCo, t.cubeInfo.n0)
        update_m = False
        fits = self.CheckL0Buffer(p.mL0, p.kL0, p.nL0)
        used_l1, used_bt = self.CalcL1SizeForL0Tiling(p.mL0, p.nL0), self.CalcBTSize(p.nL0)
        while fits and used_l1 <= plat.l1Size and used_bt <= plat.btSize:
            update_m = p.mL0 <= p.nL0 or i.nL0Idx == len(r.nL0Range) - 1
            if update_m:
                i.mL0Idx += 1
            else:
                i.nL0Idx += 1
            if i.mL0Idx < len(r.mL0Range) and i.nL0Idx < len(r.nL0Range):
                p.mL0, p.nL0 = r.mL0Range[i.mL0Idx], r.nL0Range[i.nL0Idx]
                fits = self.CheckL0Buffer(p.mL0, p.kL0, p.nL0)
                used_l1, used_bt = self.CalcL1SizeForL0Tiling(p.mL0, p.nL0), self.CalcBTSize(p.nL0)
            else:
                break
        if update_m:
            i.mL0Idx = max(i.mL0Idx - 1, 0)
        else:
            i.nL0Idx = max(i.nL0Idx - 1, 0)
        p.mL0, p.nL0 = r.mL0Range[i.mL0Idx], r.nL0Range[i.nL0Idx]
        t.l0TilingInfo.mL0, t.l0TilingInfo.nL0 = p.mL0, p.nL0
        t.l0TilingInfo.nL0xk0 = p.nL0 * t.cubeInfo.k0

    def CheckL0CDoubleBuffer(self):
        if self.CalcCL0Size(self.l0TilingParams.mL0, self.l0TilingParams.nL0) <= \
                self.t.platformInfo.l0CSize // DOUBLE_BUFFER_NUM:
            self.doubleBufferValue.pbCL0 = DOUBLE_BUFFER_NUM

    def GetVecTiling(self):
        """UB tiling is for quantised (int8 in, fp16/bf16 out) convolutions only; this port covers no quant."""
        if self.t.quantType != 0:
            raise NotPorted("quantised Conv3D (GetVecTiling, int8 with a scale) is not ported")
