"""The arch22 Conv3DBackpropFilterV2 (dw) tiling data: field names, types and the exact 280-byte blob.

Mirrors `Conv3DBackpropFilterV2TilingData = {Conv3DBackpropFilterV2Params params; TConv3DDwTiling dwTiling;
TConv3DDwBasicBlockTiling basicBlockTiling}` (op_kernel/arch22/conv3d_backprop_filter_v2_tiling_data.h):
little-endian, naturally aligned. Every member happens to fall on its alignment, so the blob has no holes.
"""
from __future__ import annotations

import struct
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct, check_overrides
from tiling.conv3d_backprop_filter.keys import TPL_SPLIT_DFL, TPL_SPLIT_M_N_STREAMK
from tiling.conv3d_backprop_filter.validate import validate as validate_tiling

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

_STRUCTS = (("params", Conv3DBackpropFilterV2Params), ("dwTiling", TConv3DDwTiling),
            ("basicBlockTiling", TConv3DDwBasicBlockTiling))
BLOB_SIZE = sum(model.size() for _, model in _STRUCTS)
assert BLOB_SIZE == 280, BLOB_SIZE


class Conv3DBackpropFilterV2TilingData(BaseModel):
    """The generator's answer: the tiling struct, its tiling key and how it was chosen.

    `params`, `dwTiling` and `basicBlockTiling` are exactly what the kernel receives (`to_bytes()`); the rest is
    host-side information: the tiling key (the kernel template id), the dtype and platform it was made for, which
    template produced the values, and notes (for example where a value came from this project's own rule instead
    of Huawei's closed TBE tiling).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

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

    # --- the kernel's view -------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        return b"".join(getattr(self, name).pack() for name, _ in _STRUCTS)

    def to_words(self) -> list[int]:
        """The blob as 70 little-endian int32 words (the form the real unit tests print)."""
        return list(struct.unpack(f"<{BLOB_SIZE // 4}i", self.to_bytes()))

    @classmethod
    def from_bytes(cls, blob: bytes, **info) -> Conv3DBackpropFilterV2TilingData:
        """Decode a 280-byte blob; host-side fields (tiling_key, dtype, ...) may be passed as keywords."""
        if len(blob) != BLOB_SIZE:
            raise ValueError(f"blob has {len(blob)} bytes; a Conv3DBackpropFilterV2TilingData blob has {BLOB_SIZE}")
        parts, offset = {}, 0
        for name, model in _STRUCTS:
            parts[name] = model.unpack(blob[offset:offset + model.size()])
            offset += model.size()
        return cls(**parts, **info)

    def fields(self) -> dict[str, int]:
        """All kernel-visible fields, in blob order."""
        return {**self.params.model_dump(), **self.dwTiling.model_dump(), **self.basicBlockTiling.model_dump()}

    # --- experimenting -----------------------------------------------------------------------------------
    def with_overrides(self, *, validate: bool = True, **changes) -> Conv3DBackpropFilterV2TilingData:
        """A copy with some fields changed, by real name (baseM=64, usedCoreNum=8, tiling_key=3, ...).

        Nothing is re-derived. The copy is checked by `validate` on the tiling's platform: a tiling the kernel
        cannot run raises TilingValidationError (a ValueError) naming each broken rule as field=value; the refused
        copy is on the error (`err.tiling`, `err.report`). validate=False skips that check, for building illegal
        tilings on purpose. An unknown name raises ValueError listing the close matches.
        """
        parts = {name: getattr(self, name).model_dump() for name, _ in _STRUCTS}
        top = self.model_dump(exclude=set(parts))
        check_overrides(changes, [model for _, model in _STRUCTS], top)
        for key, value in changes.items():
            part = next((p for p in parts.values() if key in p), None)
            if part is not None:
                part[key] = value
            else:
                top[key] = value
        top["notes"] = [*top["notes"], f"overridden: {sorted(changes)}"]
        result = type(self)(**{name: model(**parts[name]) for name, model in _STRUCTS}, **top)
        if validate:
            if result.platform is None:
                raise ValueError("with_overrides checks the result against the tiling's platform, and this tiling "
                                 "records none: pass platform=<Platform> among the overrides, or validate=False")
            from tiling.conv3d_backprop_filter.validate import validate as validate_tiling
            validate_tiling(result).raise_if_invalid(result, changes)
        return result

    def check(self, platform=None, *, raise_error: bool = False):
        """`validate(self, platform)`: does this tiling fit (default: the platform it was made for)?"""
        return validate_tiling(self, platform, raise_error=raise_error)
