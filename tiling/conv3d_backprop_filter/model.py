"""The arch22 Conv3DBackpropFilterV2 (dw) tiling data: field names, types and the exact 280-byte blob.

Mirrors `Conv3DBackpropFilterV2TilingData = {Conv3DBackpropFilterV2Params params; TConv3DDwTiling dwTiling;
TConv3DDwBasicBlockTiling basicBlockTiling}` (op_kernel/arch22/conv3d_backprop_filter_v2_tiling_data.h):
little-endian, naturally aligned. Every member happens to fall on its alignment, so the blob has no holes.
"""
from __future__ import annotations

from typing import ClassVar

from pydantic import Field, create_model

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct
from tiling.common.tiling_data import TilingData
from tiling.conv3d_backprop_filter.keys import TPL_SPLIT_DFL, TPL_SPLIT_M_N_STREAMK
from tiling.conv3d_backprop_filter.validate import validate

# (name, C type) in declaration order. The order *is* the blob layout.
PARAMS_FIELDS: tuple[tuple[str, str], ...] = (
    ("batchDim", "u64"), ("groupDim", "u32"), ("mDim", "u32"), ("kDim", "u32"), ("nDim", "u32"),
    ("dkDim", "u32"), ("totalL1Size", "u32"),
)
_U32_TILING = (
    "batch cin cout cin1G cout1G dout ho wo di hi wi dk hk wk group strideD strideH strideW "
    "padFront padBack padUp padDown padLeft padRight dilationD dilationH dilationW channelSize "
    "al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer bl1Pbuffer baseM baseK baseN m0 k0 n0 "
    "stepM stepN stepKa stepKb iterateOrder bl1Bound hf32Flag "
    "singleCoreDk singleCoreGroup singleCoreCout singleCoreHo"
).split()
TILING_FIELDS: tuple[tuple[str, str], ...] = (
    *((name, "u32") for name in _U32_TILING), ("singleCoreBatch", "u64"), ("singleCoreCin", "u64"),
)
BASIC_BLOCK_FIELDS: tuple[tuple[str, str], ...] = (
    ("coreBindOrder", "u32"), ("usedCoreNum", "u32"), ("singleCoreM", "u32"), ("singleCoreN", "u32"),
    ("singleCoreK", "u64"),
    ("streamKType", "u32"),  # 0 NO_STREAMK_CALC, 1 STREAMK_BATCHDOUT, 2 STREAMK_HWOUT
    ("coreStreamK", "u32"),  # K splits applied per basic block
)


class _ParamsBase(CStruct):
    FIELDS: ClassVar = PARAMS_FIELDS


class _TilingBase(CStruct):
    FIELDS: ClassVar = TILING_FIELDS


class _BasicBlockBase(CStruct):
    FIELDS: ClassVar = BASIC_BLOCK_FIELDS


def _struct_model(name: str, base: type[CStruct], doc: str) -> type[CStruct]:
    """The C struct `name` over base.FIELDS, every member defaulting to 0 as in the C header."""
    model = create_model(name, __base__=base, **{field: (int, 0) for field, _ in base.FIELDS})
    model.__doc__ = doc
    return model


Conv3DBackpropFilterV2Params = _struct_model(
    "Conv3DBackpropFilterV2Params", _ParamsBase,
    "Multi-core split factors (batch, group, M=cout, K=ho*wo, N=cin*kernel, kernel depth) and the L1 size.")
TConv3DDwTiling = _struct_model(
    "TConv3DDwTiling", _TilingBase, "Every field of TConv3DDwTiling, by its real name, in the real order.")
TConv3DDwBasicBlockTiling = _struct_model(
    "TConv3DDwBasicBlockTiling", _BasicBlockBase,
    "The basic-block template's core binding; all zero when the base template tiled.")


class Conv3DBackpropFilterV2TilingData(TilingData):
    """The generator's answer: the tiling struct, its tiling key and how it was chosen.

    `params`, `dwTiling` and `basicBlockTiling` are exactly what the kernel receives (`to_bytes()`); the rest is
    host-side information: the tiling key (the kernel template id), the dtype and platform it was made for, which
    template produced the values, and notes (for example where a value came from this project's own rule instead
    of Huawei's closed TBE tiling).
    """

    STRUCTS: ClassVar = (("params", Conv3DBackpropFilterV2Params), ("dwTiling", TConv3DDwTiling),
                         ("basicBlockTiling", TConv3DDwBasicBlockTiling))
    VALIDATE: ClassVar = validate

    params: Conv3DBackpropFilterV2Params = Field(default_factory=Conv3DBackpropFilterV2Params)
    dwTiling: TConv3DDwTiling = Field(default_factory=TConv3DDwTiling)
    basicBlockTiling: TConv3DDwBasicBlockTiling = Field(default_factory=TConv3DDwBasicBlockTiling)
    tiling_key: int = Field(default=TPL_SPLIT_DFL, ge=TPL_SPLIT_DFL, le=TPL_SPLIT_M_N_STREAMK,
                            description="conv3DDWTemplateId: 0 base template, 1..4 basic block (TPL_SPLIT_*)")
    dtype: str = "bfloat16"
    platform: Platform | None = Field(default=None, description="the platform the tiling was made for")
    template: str = Field(default="", description="basic_block | base")
    notes: list[str] = Field(default_factory=list)

    @property
    def block_dim(self) -> int:
        """Cores the launch uses: usedCoreNum for the basic block, the product of the split factors otherwise."""
        if self.tiling_key != TPL_SPLIT_DFL:
            return self.basicBlockTiling.usedCoreNum
        p = self.params
        return p.batchDim * p.groupDim * p.mDim * p.kDim * p.nDim * p.dkDim


BLOB_SIZE = Conv3DBackpropFilterV2TilingData.blob_size()
assert BLOB_SIZE == 280, BLOB_SIZE
