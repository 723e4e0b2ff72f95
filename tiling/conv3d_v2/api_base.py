"""The Conv3D API tiling object (`Conv3dApiTiling::Conv3dTilingBase` / `Conv3dTiling`): its inputs, checks and
the final copy into TConv3DTiling.

Ported from conv/conv3d_v2/op_host/op_tiling/conv3d_api_tiling_base.{h,cpp} and conv3d_api_tiling.cpp (hicann/ops-nn
e5c3fa93). The object keeps the real member names (shapeInfo.orgCi, attrInfo.padTop, l1TilingInfo.kAL1, ...) so the
source and this file can be read side by side. A refused input raises ApiTilingError (the real GetTiling returns -1
after logging the same reason).
"""
from __future__ import annotations

from types import SimpleNamespace

from tiling.conv3d_v2.api_algorithm import Conv3dTilingAlgorithm
from tiling.conv3d_v2.api_algorithm_hw_mode import Conv3dTilingAlgorithmHwMode
from tiling.conv3d_v2.api_algorithm_pointwise import Conv3dTilingAlgorithmPointWise
from tiling.conv3d_v2.api_util import (C0_BYTE_SIZE, CUBE_MKN, DTYPE_SIZE, LOAD3D_MAX_DDR2L1_SIZE,
                                       LOAD3D_MAX_DILATION_H_W, LOAD3D_MAX_FILTER_H_W, LOAD3D_MAX_PAD,
                                       LOAD3D_MAX_STRIDE_H_W, M_MODE, MAD_TYPE, MIN_BURST_SIZE,
                                       POINTWISE_SUPPORTED_TYPES_WITH_BIAS, POINTWISE_SUPPORTED_TYPES_WITHOUT_BIAS,
                                       SUPPORTED_TYPES_WITH_BIAS, SUPPORTED_TYPES_WITHOUT_BIAS, ApiTilingError,
                                       ceil_div, mul_overflows_u64)
from tiling.conv3d_v2.model import TConv3DTiling


class Conv3dTiling:
    """Conv3dApiTiling::Conv3dTiling: set the problem with the Set* methods, then GetTiling()."""

    def __init__(self, platform: dict):
        self.platformInfo = SimpleNamespace(
            l1Size=platform["L1_SIZE"], l0ASize=platform["L0A_SIZE"], l0BSize=platform["L0B_SIZE"],
            l0CSize=platform["L0C_SIZE"], ubSize=platform["UB_SIZE"], btSize=platform["BT_SIZE"])
        self.shapeInfo = SimpleNamespace(**{k: -1 for k in (
            "orgkH orgkW orgkD orgCo coutOpt orgCi cinOpt orgDi orgHi orgWi singlekH singlekW singlekD singleCi "
            "singleCo singleDo singleM singleHo singleWo singleCoreGroupOpt").split()})
        self.attrInfo = SimpleNamespace(groups=1, groupOpt=1, padHead=0, padTail=0, padTop=0, padBottom=0, padLeft=0,
                                        padRight=0, strideH=1, strideW=1, strideD=1, dilationH=1, dilationW=1,
                                        dilationD=1, offsetx=0, hf32Enable=0, hf32TransMode=0)
        self.shapeCalc = SimpleNamespace(singleCi1=0, singleCo1=0, singleM1=0, orgHo=0, orgWo=0, orgDo=0)
        # descInfo defaults as in Conv3DDesc: fp16 NDC1HWC0 fmap, FRACTAL_Z_3D weight, ND bias.
        self.descInfo = SimpleNamespace(
            fMapType=SimpleNamespace(format="NDC1HWC0", dtype="float16"),
            weightType=SimpleNamespace(format="FRACTAL_Z_3D", dtype="float16"),
            biasType=SimpleNamespace(format="ND", dtype="float16"),
            outputType=SimpleNamespace(format="NDC1HWC0", dtype="float16"))
        self.cubeInfo = SimpleNamespace(m0=0, k0=0, n0=0, madType=None, minBurstNum=0)
        self.l1TilingInfo = SimpleNamespace(
            kAL1=0, kBL1=0, mAL1Value=0, nBL1Value=0, mAL1DivmL0=0, nBL1DivnL0=0, cin1InAL1=0, kAL1Tail=0,
            cin1InAL1Tail=0, KBL1Divk0=0, kBL1Tail=0, KBL1TailDivk0=0, iterateMNOrder=0, isWeightBypass=False,
            biasFullLoadFlag=False, fixpParamsFullLoadFlag=False, al1FullLoad=False, bl1FullLoad=False,
            hoAL1=0, woAL1=0)
        self.l0TilingInfo = SimpleNamespace(mL0=0, kL0=0, nL0=0, nL0xk0=0, kL0xorgCoAlignN0=0, hoL0=0, woL0=0)
        self.ubTilingInfo = SimpleNamespace(mUB=0, nUB=0, scaleAndBiasLoadType=0)
        self.dbValue = SimpleNamespace(pbAL1=1, pbBL1=1, pbAL0=2, pbBL0=2, pbCL0=1, pbUB=1, pBufferFlag=0)
        self.hasBias = False
        self.quantType = 0
        self.hf32TransMode_ = False
        self.outputOrder_ = M_MODE

    # --- inputs (the real setters) ---------------------------------------------------------------------
    def SetOrgWeightShape(self, orgCo, orgKd, orgKh, orgKw):
        self.shapeInfo.orgCo, self.shapeInfo.orgkD, self.shapeInfo.orgkH, self.shapeInfo.orgkW = orgCo, orgKd, orgKh, orgKw

    def SetOrgFmapShape(self, orgCi, orgDi, orgHi, orgWi):
        self.shapeInfo.orgCi, self.shapeInfo.orgDi, self.shapeInfo.orgHi, self.shapeInfo.orgWi = orgCi, orgDi, orgHi, orgWi

    def SetSingleWeightShape(self, singleCi, singleKd, singleKh, singleKw):
        s = self.shapeInfo
        s.singleCi, s.singlekD, s.singlekH, s.singlekW = singleCi, singleKd, singleKh, singleKw

    def SetSingleOutputShape(self, singleCo, singleDo, *m_or_ho_wo):
        s = self.shapeInfo
        s.singleCo, s.singleDo = singleCo, singleDo
        if len(m_or_ho_wo) == 1:
            s.singleM = m_or_ho_wo[0]
        else:
            s.singleHo, s.singleWo = m_or_ho_wo
            s.singleM = s.singleHo * s.singleWo

    def SetOutputOrder(self, outputOrder):
        self.outputOrder_ = outputOrder

    def SetPadding(self, padList):
        a = self.attrInfo
        a.padHead, a.padTail, a.padTop, a.padBottom, a.padLeft, a.padRight = padList

    def SetDilation(self, dilationH, dilationW, dilationD):
        self.attrInfo.dilationH, self.attrInfo.dilationW, self.attrInfo.dilationD = dilationH, dilationW, dilationD

    def SetStride(self, strideH, strideW, strideD):
        self.attrInfo.strideH, self.attrInfo.strideW, self.attrInfo.strideD = strideH, strideW, strideD

    def _set_type(self, which, format_, dtype):
        getattr(self.descInfo, which).format, getattr(self.descInfo, which).dtype = format_, dtype

    def SetFmapType(self, format_, dtype):
        self._set_type("fMapType", format_, dtype)

    def SetWeightType(self, format_, dtype):
        self._set_type("weightType", format_, dtype)

    def SetOutputType(self, format_, dtype):
        self._set_type("outputType", format_, dtype)

    def SetBiasType(self, format_, dtype):
        self.hasBias = True
        self._set_type("biasType", format_, dtype)

    def SetGroups(self, groups):
        self.attrInfo.groups = groups
        if groups == 1:
            self.attrInfo.groupOpt = 1
            self.shapeInfo.cinOpt, self.shapeInfo.coutOpt = self.shapeInfo.orgCi, self.shapeInfo.orgCo

    def SetOptGroupInfo(self, groupOpt, singleCoreGroupOpt, cinOpt, coutOpt):
        self.attrInfo.groupOpt, self.shapeInfo.singleCoreGroupOpt = groupOpt, singleCoreGroupOpt
        self.shapeInfo.cinOpt, self.shapeInfo.coutOpt = cinOpt, coutOpt

    # --- GetTiling / Compute (conv3d_api_tiling.cpp) -----------------------------------------------------
    def GetTiling(self) -> TConv3DTiling:
        self.Compute()
        return self.SetFinalTiling()

    def Compute(self) -> None:
        is_point_wise = self.descInfo.fMapType.format == "NCDHW"
        if is_point_wise:
            self.CheckInputParamPointWise()
        else:
            self.CheckInputParam()
        self.GetCubeInfo()
        self.ShapeInitCalc()
        self.CheckParamsOverflow()
        if is_point_wise:
            Conv3dTilingAlgorithmPointWise(self).Process()
            return
        if self.outputOrder_ != M_MODE:
            Conv3dTilingAlgorithmHwMode(self).Process()
            return
        Conv3dTilingAlgorithm(self).Process()

    # --- checks ----------------------------------------------------------------------------------------
    def CheckInputParam(self):
        self.CheckInputAttr()
        self.CheckInputShape()
        self.CheckInputFormat()
        self.CheckParamsDtype()
        self.CheckLoad3DLimits()
        self.CheckHF32()

    def CheckInputParamPointWise(self):
        self.CheckInputAttrPointWise()
        self.CheckOrgInputInfoPointWise()
        self.CheckSingleInputInfoPointWise()
        self.CheckInputConstraint()
        self.CheckInputFormatPointWise()
        self.CheckParamsDtypePointWise()
        self.CheckHF32()

    def CheckInputAttr(self):
        a = self.attrInfo
        if a.groups < 1 or a.groupOpt < 1:
            raise ApiTilingError(f"Illegal attrs have set: groups={a.groups}, groupOpt={a.groupOpt}")
        pads = {k: getattr(a, k) for k in ("padTop", "padBottom", "padLeft", "padRight", "padHead", "padTail")}
        if min(pads.values()) < 0:
            raise ApiTilingError(f"Illegal attrs have set: {pads}, which must >= 0")
        if min(a.strideH, a.strideW, a.strideD) < 1:
            raise ApiTilingError(f"Illegal attrs have set: strideH={a.strideH}, strideW={a.strideW}, "
                                 f"strideD={a.strideD}, which must > 0")
        if min(a.dilationH, a.dilationW, a.dilationD) < 1:
            raise ApiTilingError(f"Illegal attrs have set: dilationH={a.dilationH}, dilationW={a.dilationW}, "
                                 f"dilationD={a.dilationD}, which must > 0")

    def CheckInputAttrPointWise(self):
        a = self.attrInfo
        if a.groups != 1:
            raise ApiTilingError(f"[PointWise] Illegal attrs have set: groups={a.groups} (must be 1)")
        pads = (a.padTop, a.padBottom, a.padLeft, a.padRight, a.padHead, a.padTail)
        if any(pads):
            raise ApiTilingError(f"[PointWise] Illegal attrs have set: pads={pads}, which must = 0")
        if (a.strideH, a.strideW, a.strideD) != (1, 1, 1):
            raise ApiTilingError(f"[PointWise] Illegal attrs have set: strideH={a.strideH}, strideW={a.strideW}, "
                                 f"strideD={a.strideD}, which must = 1")
        if (a.dilationH, a.dilationW, a.dilationD) != (1, 1, 1):
            raise ApiTilingError(f"[PointWise] Illegal attrs have set: dilationH={a.dilationH}, "
                                 f"dilationW={a.dilationW}, dilationD={a.dilationD}, which must = 1")

    def CheckOrgInputInfo(self):
        s = self.shapeInfo
        if min(s.orgkH, s.orgkW, s.orgCo, s.orgkD) <= 0:
            raise ApiTilingError(f"Illegal org weight shapes have set: Co={s.orgCo}, kH={s.orgkH}, kW={s.orgkW}, "
                                 f"kD={s.orgkD}, which must > 0")
        if min(s.orgCi, s.orgHi, s.orgWi, s.orgDi) <= 0:
            raise ApiTilingError(f"Illegal org featureMap shapes have set: Ci={s.orgCi}, Hi={s.orgHi}, "
                                 f"Wi={s.orgWi}, Di={s.orgDi}, which must > 0")

    def CheckOrgInputInfoPointWise(self):
        s = self.shapeInfo
        if (s.orgkH, s.orgkW, s.orgkD) != (1, 1, 1):
            raise ApiTilingError(f"[PointWise] Illegal org weight shapes have set: kH={s.orgkH}, kW={s.orgkW}, "
                                 f"kD={s.orgkD}, which must = 1")
        self.CheckOrgInputInfo()

    def CheckSingleInputInfo(self):
        s = self.shapeInfo
        if min(s.singlekH, s.singlekW, s.singleCo, s.singlekD) <= 0:
            raise ApiTilingError(f"Illegal singleCore weight shapes have set: Co={s.singleCo}, kH={s.singlekH}, "
                                 f"kW={s.singlekW}, kD={s.singlekD}, which must > 0")
        if s.singleCi <= 0 or s.singleDo <= 0:
            raise ApiTilingError(f"Illegal singleCore featureMap shapes have set: Ci={s.singleCi}, "
                                 f"Do={s.singleDo}, which must > 0")
        if s.cinOpt <= 0 or s.coutOpt <= 0:
            raise ApiTilingError(f"Illegal cinOpt and coutOpt have set: cinOpt={s.cinOpt}, coutOpt={s.coutOpt}")

    def CheckSingleInputInfoPointWise(self):
        s = self.shapeInfo
        if (s.singlekH, s.singlekW, s.singlekD) != (1, 1, 1):
            raise ApiTilingError(f"[PointWise] Illegal singleCore weight shapes have set: kH={s.singlekH}, "
                                 f"kW={s.singlekW}, kD={s.singlekD}, which must = 1")
        self.CheckSingleInputInfo()

    def CheckInputConstraint(self):
        s = self.shapeInfo
        if (s.singlekH, s.singlekW, s.singlekD) != (s.orgkH, s.orgkW, s.orgkD):
            raise ApiTilingError(f"Support singlekH = orgkH, singlekW = orgkW, singlekD = orgkD; got single "
                                 f"({s.singlekD}, {s.singlekH}, {s.singlekW}), org ({s.orgkD}, {s.orgkH}, {s.orgkW})")
        if self.attrInfo.groups == 1 and (s.orgCi != s.cinOpt or s.orgCo != s.coutOpt):
            raise ApiTilingError("cinOpt not equal to orgCi or coutOpt not equal to orgCo in groups 1")
        if s.singleCi != s.cinOpt:
            raise ApiTilingError(f"Support singleCi = cinOpt, current singleCi: {s.singleCi}, cinOpt: {s.cinOpt}")

    def CheckOrgInputShapeWithPad(self):
        s, a = self.shapeInfo, self.attrInfo
        pads = (s.orgDi + a.padHead + a.padTail - a.dilationD * (s.orgkD - 1) - 1,
                s.orgHi + a.padTop + a.padBottom - a.dilationH * (s.orgkH - 1) - 1,
                s.orgWi + a.padLeft + a.padRight - a.dilationW * (s.orgkW - 1) - 1)
        if min(pads) < 0:
            raise ApiTilingError("Fmap size(DHW) after padding should be greater than or equal to filter size(DHW). "
                                 f"idPad {pads[0]}, ihPad {pads[1]}, iwPad {pads[2]}")

    def CheckInputShape(self):
        self.CheckOrgInputInfo()
        self.CheckOrgInputShapeWithPad()
        self.CheckSingleInputInfo()
        self.CheckInputConstraint()

    def CheckInputFormat(self):
        if self.descInfo.weightType.format != "FRACTAL_Z_3D":
            raise ApiTilingError(f"Unsupported weight format: {self.descInfo.weightType.format}")
        if self.descInfo.fMapType.format != "NDC1HWC0":
            raise ApiTilingError(f"Unsupported feature map format: {self.descInfo.fMapType.format}")

    def CheckInputFormatPointWise(self):
        if self.descInfo.weightType.format != "NCDHW":
            raise ApiTilingError(f"[PointWise] weight format should be NCDHW, now is {self.descInfo.weightType.format}")
        if self.descInfo.outputType.format != "NCDHW":
            raise ApiTilingError(f"[PointWise] output format should be NCDHW, now is {self.descInfo.outputType.format}")

    def _dtypes(self) -> tuple[str, ...]:
        d = self.descInfo
        middle = (d.biasType.dtype,) if self.hasBias else ()
        return (d.fMapType.dtype, d.weightType.dtype, *middle, d.outputType.dtype)

    def CheckParamsDtype(self):
        allowed = SUPPORTED_TYPES_WITH_BIAS if self.hasBias else SUPPORTED_TYPES_WITHOUT_BIAS
        if self._dtypes() not in allowed:
            raise ApiTilingError(f"Unsupported params data type [fmap, weight, (bias,) output]: {self._dtypes()}")

    def CheckParamsDtypePointWise(self):
        allowed = POINTWISE_SUPPORTED_TYPES_WITH_BIAS if self.hasBias else POINTWISE_SUPPORTED_TYPES_WITHOUT_BIAS
        if self._dtypes() not in allowed:
            raise ApiTilingError(f"[PointWise] Unsupported params data type [fmap, weight, (bias,) output]: "
                                 f"{self._dtypes()}")

    def CheckLoad3DLimits(self):
        a, s = self.attrInfo, self.shapeInfo
        if max(a.strideH, a.strideW) > LOAD3D_MAX_STRIDE_H_W:
            raise ApiTilingError(f"Attrs not satisfying load3d's limits: strideH={a.strideH}, strideW={a.strideW}, "
                                 f"which must <= {LOAD3D_MAX_STRIDE_H_W}")
        if max(a.dilationH, a.dilationW) > LOAD3D_MAX_DILATION_H_W:
            raise ApiTilingError(f"Attrs not satisfying load3d's limits: dilationH={a.dilationH}, "
                                 f"dilationW={a.dilationW}, which must <= {LOAD3D_MAX_DILATION_H_W}")
        if max(a.padLeft, a.padRight, a.padTop, a.padBottom) > LOAD3D_MAX_PAD:
            raise ApiTilingError(f"Attrs not satisfying load3d's limits: padTop={a.padTop}, padBottom={a.padBottom}, "
                                 f"padLeft={a.padLeft}, padRight={a.padRight}, which must <= {LOAD3D_MAX_PAD}")
        if max(s.orgkH, s.orgkW) > LOAD3D_MAX_FILTER_H_W:
            raise ApiTilingError(f"Weight shape not satisfy Load3D's limits: kh={s.orgkH}, kw={s.orgkW}, "
                                 f"which must <= {LOAD3D_MAX_FILTER_H_W}")
        k0_size = C0_BYTE_SIZE // DTYPE_SIZE[self.descInfo.fMapType.dtype]
        if s.orgkH * s.orgkW * k0_size > LOAD3D_MAX_DDR2L1_SIZE:
            raise ApiTilingError(f"Weight shape not satisfying load3d's limits: kH*kW*k0={s.orgkH * s.orgkW * k0_size},"
                                 f" which must <= {LOAD3D_MAX_DDR2L1_SIZE}")

    def CheckHF32(self):
        if self.hf32TransMode_:
            raise ApiTilingError("hf32TransMode only support false")

    # --- derived shapes --------------------------------------------------------------------------------
    def GetCubeInfo(self):
        dtype = self.descInfo.fMapType.dtype
        self.cubeInfo.m0, self.cubeInfo.k0, self.cubeInfo.n0 = CUBE_MKN[dtype]
        self.cubeInfo.madType = MAD_TYPE[dtype]
        self.cubeInfo.minBurstNum = MIN_BURST_SIZE // DTYPE_SIZE[dtype]

    def ShapeInitCalc(self):
        s, a, c = self.shapeInfo, self.attrInfo, self.shapeCalc
        # int64 arithmetic (division truncating toward zero), then cast to uint64 as the source does.
        def out(size, pad_sum, k, dilation, stride):
            extent = size + pad_sum - dilation * (k - 1) - 1
            quotient = abs(extent) // stride
            return (quotient if extent >= 0 else -quotient) + 1
        c.orgHo = out(s.orgHi, a.padTop + a.padBottom, s.orgkH, a.dilationH, a.strideH) % 2**64
        c.orgWo = out(s.orgWi, a.padLeft + a.padRight, s.orgkW, a.dilationW, a.strideW) % 2**64
        c.orgDo = out(s.orgDi, a.padHead + a.padTail, s.orgkD, a.dilationD, a.strideD) % 2**64
        if min(c.orgHo, c.orgWo, c.orgDo) <= 0:
            raise ApiTilingError(f"Illegal org output shapes cal get: Ho={c.orgHo}, Wo={c.orgWo}, Do={c.orgDo}, "
                                 "which should > 0")
        c.singleCi1 = ceil_div(s.singleCi, self.cubeInfo.k0)
        c.singleCo1 = ceil_div(s.singleCo, self.cubeInfo.n0)
        c.singleM1 = ceil_div(s.singleM, self.cubeInfo.m0)

    def CheckParamsOverflow(self):
        s, a, c, cube, d = self.shapeInfo, self.attrInfo, self.shapeCalc, self.cubeInfo, self.descInfo
        if (mul_overflows_u64(s.orgDi, a.groupOpt, ceil_div(s.cinOpt, cube.k0), s.orgHi, s.orgWi,
                              cube.k0 * DTYPE_SIZE[d.fMapType.dtype])
                or mul_overflows_u64(a.groupOpt, s.singlekD, ceil_div(s.cinOpt, cube.k0), s.singlekH, s.singlekW,
                                     ceil_div(s.coutOpt, cube.n0), cube.n0 * cube.k0 * DTYPE_SIZE[d.weightType.dtype])
                or mul_overflows_u64(c.orgDo, a.groupOpt, ceil_div(s.coutOpt, cube.k0), c.orgHo, c.orgWo,
                                     cube.k0 * DTYPE_SIZE[d.outputType.dtype])):
            raise ApiTilingError("Overflow detected, fmap or weight size exceeds UINT64_MAX")

    # --- SetFinalTiling --------------------------------------------------------------------------------
    def SetFinalTiling(self) -> TConv3DTiling:
        s, a, c, cube = self.shapeInfo, self.attrInfo, self.shapeCalc, self.cubeInfo
        l1, l0, ub = self.l1TilingInfo, self.l0TilingInfo, self.ubTilingInfo
        u32 = lambda v: int(v) % 2**32  # noqa: E731 - the source's static_cast<uint32_t>
        return TConv3DTiling(
            groups=u32(a.groups), groupOpt=u32(a.groupOpt), orgDo=c.orgDo, orgCo=u32(s.orgCo), coutOpt=u32(s.coutOpt),
            orgHo=c.orgHo, orgWo=c.orgWo, orgCi=u32(s.orgCi), cinOpt=u32(s.cinOpt), orgDi=s.orgDi, orgHi=s.orgHi,
            orgWi=s.orgWi, kernelD=u32(s.orgkD), kernelH=u32(s.orgkH), kernelW=u32(s.orgkW),
            orgHixWi=s.orgHi * s.orgWi, orgHoxWo=c.orgHo * c.orgWo,
            cin1xOriHixOriWixk0=c.singleCi1 * s.orgHi * s.orgWi * cube.k0, oriHixOriWixk0=s.orgHi * s.orgWi * cube.k0,
            oriWixk0=s.orgWi * cube.k0, kernelHxkernelW=s.orgkH * s.orgkW,
            singleCoreCo=u32(s.singleCo), singleCoreDo=s.singleDo,
            singleCoreM=s.singleM if self.outputOrder_ == M_MODE else s.singleHo,
            singleCoreGroupOpt=u32(s.singleCoreGroupOpt),
            strideH=a.strideH, strideW=a.strideW, strideD=a.strideD, dilationH=a.dilationH, dilationW=a.dilationW,
            dilationD=a.dilationD, padHead=a.padHead, padTail=a.padTail, padTop=a.padTop, padBottom=a.padBottom,
            padLeft=a.padLeft, padRight=a.padRight, offsetx=a.offsetx,
            kAL1=u32(l1.kAL1), kBL1=u32(l1.kBL1), mAL1=u32(l1.mAL1Value), nBL1=u32(l1.nBL1Value),
            mAL1DivmL0=u32(l1.mAL1DivmL0), nBL1DivnL0=u32(l1.nBL1DivnL0), cin1InAL1=u32(l1.cin1InAL1),
            kAL1Tail=u32(l1.kAL1Tail), cin1InAL1Tail=u32(l1.cin1InAL1Tail), KBL1Divk0=u32(l1.KBL1Divk0),
            kBL1Tail=u32(l1.kBL1Tail), KBL1TailDivk0=u32(l1.KBL1TailDivk0), iterateMNOrder=int(l1.iterateMNOrder),
            biasFullLoadFlag=int(l1.biasFullLoadFlag), fixpParamsFullLoadFlag=int(l1.fixpParamsFullLoadFlag),
            bl1BypassFlag=int(l1.isWeightBypass), al1FullLoad=int(l1.al1FullLoad), bl1FullLoad=int(l1.bl1FullLoad),
            mL0=u32(l0.mL0), kL0=u32(l0.kL0), nL0=u32(l0.nL0), nL0xk0=u32(l0.nL0xk0),
            kL0xorgCoAlignN0=l0.kL0xorgCoAlignN0, mUB=u32(ub.mUB), nUB=u32(ub.nUB), quantType=self.quantType,
            scaleAndBiasLoadType=ub.scaleAndBiasLoadType, pBufferFlag=u32(self.dbValue.pBufferFlag),
            hf32Enable=a.hf32Enable, hf32TransMode=0)
