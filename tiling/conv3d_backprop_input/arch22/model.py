"""The arch22 Conv3DBackpropInputV2 tiling data: field names, types and the exact 312-byte blob.

Mirrors `Conv3DBackpropInputV2TilingData = {Conv3DBackpropInputV2Params params; TConv3DInputV2Tiling
conv3DDxTiling}` (op_kernel/arch22/conv3d_backprop_input_v2_tiling_data.h): little-endian, naturally aligned,
so a 4-byte hole sits before the three trailing u64 fields.
"""
from __future__ import annotations

from typing import ClassVar

from pydantic import Field, computed_field, create_model, model_validator

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct as _CStruct
from tiling.common.tiling_data import TilingData
from tiling.conv3d_backprop_input.arch22.validate import validate

# (name, C type) in declaration order. The order *is* the blob layout.
PARAMS_FIELDS: tuple[tuple[str, str], ...] = (
    ("batchDim", "u32"), ("groupDim", "u32"), ("mDim", "u32"), ("kDim", "u32"), ("nDim", "u32"),
    ("dDim", "u32"), ("coreNum", "u64"),
)

_U32_TILING = (
    "batch cin cout cout1 cin1 cout1G cin1G c0 c0Bits dout ho wo di hi wi dk hk wk group "
    "strideD strideH strideW padFront padBack padUp padDown padLeft padRight "
    "backpropPadTail backpropPadUp backpropPadDown backpropPadLeft backpropPadRight "
    "dilationD dilationH dilationW al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer bl1Pbuffer "
    "singleCoreGroup singleCoreCout singleCoreCout1 singleCoreCin1 singleCoreDin singleCoreHo "
    "baseM baseK baseN baseD baseBatch baseGroup stepM stepN stepKa stepKb stepBatch stepGroup iterateOrder"
).split()
TILING_FIELDS: tuple[tuple[str, str], ...] = (
    *((name, "u32") for name in _U32_TILING),
    ("hf32Flag", "i32"), ("initOutputFlag", "i32"), ("reserved", "i32"),
    ("singleCoreBatch", "u64"), ("singleCoreM", "u64"), ("singleCoreCin", "u64"),
)


class Conv3DBackpropInputV2Params(_CStruct):
    """Multi-core split factors (kDim is always 1 on arch22) and blockDim."""

    FIELDS: ClassVar = PARAMS_FIELDS
    batchDim: int = 1
    groupDim: int = 1
    mDim: int = 1
    kDim: int = 1
    nDim: int = 1
    dDim: int = 1
    coreNum: int = 1


class _TilingBase(_CStruct):
    """Every field of TConv3DInputV2Tiling, by its real name, in the real order (see docs/tiling.md)."""

    FIELDS: ClassVar = TILING_FIELDS


# Defaults as in the C header: 1 everywhere except the three int32 flags.
_TILING_DEFAULTS = {name: 0 if ctype == "i32" else 1 for name, ctype in TILING_FIELDS}
TConv3DInputV2Tiling = create_model(
    "TConv3DInputV2Tiling", __base__=_TilingBase, **{name: (int, value) for name, value in _TILING_DEFAULTS.items()})
TConv3DInputV2Tiling.__doc__ = _TilingBase.__doc__


class Conv3DBackpropInputV2TilingData(TilingData):
    """The generator's answer: the tiling struct, its tiling key and how it was chosen.

    `params` and `conv3DDxTiling` are exactly what the kernel receives (`to_bytes()`); the rest is host-side
    information: the kernel template flags that make up the tiling key, which algorithm produced the values,
    and notes (for example where a value came from this project's own rule instead of closed TBE code).
    """

    STRUCTS: ClassVar = (("params", Conv3DBackpropInputV2Params), ("conv3DDxTiling", TConv3DInputV2Tiling))
    VALIDATE: ClassVar = validate

    params: Conv3DBackpropInputV2Params = Field(default_factory=Conv3DBackpropInputV2Params)
    conv3DDxTiling: TConv3DInputV2Tiling = Field(default_factory=TConv3DInputV2Tiling)
    loadB2Condition: int = Field(default=0, ge=0, le=2, description="0 baseK/C0<hk*wk, 1 >=, 2 hk*wk==1")
    enableKernelSplit: bool = False
    useBasicBlock: bool = False
    dtype: str = "float16"
    platform: Platform | None = Field(default=None, description="the platform the tiling was made for")
    template: str = Field(default="", description="basic_block | base | knowledge_map")
    notes: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data):
        # tiling_key is derived (and dumped to JSON for readers); accept it back only if it agrees.
        if isinstance(data, dict) and "tiling_key" in data:
            data = dict(data)
            key = data.pop("tiling_key")
            expect = (data.get("loadB2Condition", 0) + 256 * int(bool(data.get("enableKernelSplit", False)))
                      + 512 * int(bool(data.get("useBasicBlock", False))))
            if key != expect:
                raise ValueError(f"tiling_key={key} disagrees with its flags (expected {expect})")
        return data

    @computed_field
    @property
    def tiling_key(self) -> int:
        """GET_TPL_TILING_KEY(loadB2Condition, enableKernelSplit, useBasicBlock)."""
        return self.loadB2Condition + 256 * int(self.enableKernelSplit) + 512 * int(self.useBasicBlock)

    @property
    def block_dim(self) -> int:
        return self.params.coreNum


# 6 u32 + u64 = 32 bytes; 60 u32 + 3 i32 + 4-byte hole + 3 u64 = 280 bytes.
BLOB_SIZE = Conv3DBackpropInputV2TilingData.blob_size()
assert BLOB_SIZE == 312, BLOB_SIZE
