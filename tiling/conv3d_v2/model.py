"""The A2 (arch22) Conv3DV2 tiling data: field names, types and the exact 608-byte blob.

Mirrors `Conv3DV2TilingData = {TConv3DTiling convApiTiling; Conv3DRunInfo convRunInfo}`
(conv/conv3d_v2/op_kernel/conv3d_v2_tiling_data.h, `#pragma pack(push, 8)`): little-endian, naturally aligned.
Holes: Conv3DRunInfo puts u64 `hin` after three u32 and `hout` after five, and both structs end in bytes, so the
compiler pads them to 8 (TConv3DTiling 430 -> 432 bytes, Conv3DRunInfo 169 -> 176 bytes).
`Conv3DV2TilingDataV2` in the same header is the Ascend950 (arch35) layout and is not modelled here.
"""
from __future__ import annotations

from typing import ClassVar

from pydantic import Field, create_model

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct
from tiling.common.tiling_data import TilingData
from tiling.conv3d_v2.validate import validate

# CONV3D_COMMON_ATTRS, shared by both structs.
COMMON_ATTRS = tuple((name, "u32") for name in (
    "strideH strideW strideD dilationH dilationW dilationD padHead padTail padTop padBottom padLeft padRight").split())

_API_U64 = (
    "orgDo orgHo orgWo orgDi orgHi orgWi singleCoreBatch singleCoreDo singleCoreM singleCoreWo singleCoreHo "
    "kL0xorgCoAlignN0 kernelHxkernelW cin1xOriHixOriWixk0 oriHixOriWixk0 unionDataXt oriWixk0 orgHixWi orgHoxWo"
).split()
_API_U32_HEAD = "orgCi kernelD kernelH kernelW singleCoreCo orgCo singleCoreCi singleCoreGroups singleCoreGroupOpt " \
                "groups enlarge".split()
_API_U32_TAIL = (
    "mL0 woL0 kL0 nL0 kAL1 kAL1Tail kBL1 kBL1Tail nBL1 mAL1 woL1 hoL0 hoL1 KBL1Divk0 KBL1TailDivk0 nBL1DivnL0 "
    "mAL1DivmL0 fmapKStride weightKStride cinOffsetBlockInGM coutOffsetBlock nL1DivBlockSize cin1InAL1 cin1InAL1Tail "
    "cinBInCore cinBTailInCore cinAInCore cinATailInCore nL0xk0 mStep kStep nStep aL1SpaceSize multiNBL1 pBufferFlag "
    "groupOpt cinOpt coutOpt mUB nUB scaleAndBiasLoadType workspaceSize kernelHxkernelWxkernelD"
).split()
_API_U8 = ("hasBias hasScale bl1FullLoad al1FullLoad bl1BypassFlag iterateMNOrder biasFullLoadFlag "
           "fixpParamsFullLoadFlag hf32Enable hf32TransMode quantType outputOrder").split()

# (name, C type) in declaration order. The order *is* the blob layout.
API_TILING_FIELDS: tuple[tuple[str, str], ...] = (
    *((n, "u64") for n in _API_U64), *((n, "u32") for n in _API_U32_HEAD), *COMMON_ATTRS,
    *((n, "u32") for n in _API_U32_TAIL), ("offsetx", "i8"), ("roundMode", "i8"), *((n, "u8") for n in _API_U8),
)
RUN_INFO_FIELDS: tuple[tuple[str, str], ...] = (
    ("batch", "u32"), ("cin", "u32"), ("din", "u32"), ("hin", "u64"), ("win", "u64"),
    ("cout", "u32"), ("kd", "u32"), ("kh", "u32"), ("kw", "u32"), ("dout", "u32"), ("hout", "u64"), ("wout", "u64"),
    *((n, "u32") for n in "batchDim doDim mDim wDim nDim groupDim hoDim".split()), *COMMON_ATTRS,
    *((n, "u32") for n in "groups enlarge cinOpt coutOpt groupOpt".split()), ("hasBias", "u8"),
)

# Tiling key: GET_TPL_TILING_KEY(ConvL0PingPong, ConvBL1ByPass, GroupConvType, OutputOrder) (conv3dv2_tiling_key.h).
L0_PINGPONG_ALL_CLOSE, L0_PINGPONG_L0A_OPEN, L0_PINGPONG_L0B_OPEN, L0_PINGPONG_ALL_OPEN = 0, 1, 2, 3
NOGROUP_CONV, GROUPCONV_WEIGHT_GFZ = 0, 1
M_MODE, HW_MODE = 0, 1
PBUFFERFLAG_L0A_MASK, PBUFFERFLAG_L0B_MASK = 0x01, 0x02   # pBufferFlag bits (conv3d_tiling_utils.h)
_KEY_BITS = (2, 1, 1, 1)                                   # ASCENDC_TPL_2_BW, then three 1-bit arguments


def tpl_tiling_key(conv_l0_pingpong: int, bl1_bypass: int, group_conv_type: int, output_order: int) -> int:
    """The template arguments packed low bits first, in declaration order, as ASCENDC_TPL_ARGS_DECL lays them."""
    key, shift = 0, 0
    for value, bits in zip((conv_l0_pingpong, bl1_bypass, group_conv_type, output_order), _KEY_BITS):
        if not 0 <= value < 1 << bits:
            raise ValueError(f"tiling-key argument {value} does not fit {bits} bits")
        key |= value << shift
        shift += bits
    return key


class _ApiBase(CStruct):
    FIELDS: ClassVar = API_TILING_FIELDS


class _RunInfoBase(CStruct):
    FIELDS: ClassVar = RUN_INFO_FIELDS


def _struct_model(name: str, base: type[CStruct], doc: str) -> type[CStruct]:
    model = create_model(name, __base__=base, **{field: (int, 0) for field, _ in base.FIELDS})
    model.__doc__ = doc
    return model


TConv3DTiling = _struct_model(
    "TConv3DTiling", _ApiBase, "The Conv3D API tiling (convApiTiling): every field by its real name, in order.")
Conv3DRunInfo = _struct_model(
    "Conv3DRunInfo", _RunInfoBase, "The operator's shapes, attributes and multi-core split (convRunInfo).")


class Conv3DV2TilingData(TilingData):
    """The generator's answer: the tiling struct the kernel receives (`to_bytes()`), plus host-side information
    (the tiling key, dtype, platform, notes, and whether it is the pointwise tiling of NCDHW data)."""

    STRUCTS: ClassVar = (("convApiTiling", TConv3DTiling), ("convRunInfo", Conv3DRunInfo))
    VALIDATE: ClassVar = validate

    convApiTiling: TConv3DTiling = Field(default_factory=TConv3DTiling)
    convRunInfo: Conv3DRunInfo = Field(default_factory=Conv3DRunInfo)
    tiling_key: int = Field(default=0, ge=0, lt=32)
    dtype: str = "bfloat16"
    platform: Platform | None = None
    notes: list[str] = Field(default_factory=list)
    pointwise: bool = False

    @property
    def block_dim(self) -> int:
        r = self.convRunInfo
        return r.batchDim * r.doDim * r.mDim * r.nDim * r.groupDim

    def key_from_fields(self) -> int:
        """SetTilingKey: L0 ping-pong from the pBufferFlag bits, bl1BypassFlag, grouped when groups > 1,
        outputOrder."""
        api = self.convApiTiling
        l0a, l0b = bool(api.pBufferFlag & PBUFFERFLAG_L0A_MASK), bool(api.pBufferFlag & PBUFFERFLAG_L0B_MASK)
        pingpong = (L0_PINGPONG_ALL_OPEN if l0a and l0b else L0_PINGPONG_L0A_OPEN if l0a
                    else L0_PINGPONG_L0B_OPEN if l0b else L0_PINGPONG_ALL_CLOSE)
        group_type = GROUPCONV_WEIGHT_GFZ if api.groups > 1 else NOGROUP_CONV
        return tpl_tiling_key(pingpong, api.bl1BypassFlag, group_type, api.outputOrder)


BLOB_SIZE = Conv3DV2TilingData.blob_size()
assert BLOB_SIZE == 608, BLOB_SIZE
