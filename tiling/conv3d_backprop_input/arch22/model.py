"""The arch22 Conv3DBackpropInputV2 tiling data: field names, types and the exact 312-byte blob.

Mirrors `Conv3DBackpropInputV2TilingData = {Conv3DBackpropInputV2Params params; TConv3DInputV2Tiling
conv3DDxTiling}` (op_kernel/arch22/conv3d_backprop_input_v2_tiling_data.h): little-endian, naturally aligned,
so a 4-byte hole sits before the three trailing u64 fields.
"""
from __future__ import annotations

import struct
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, computed_field, create_model, model_validator

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct as _CStruct
from tiling.common.cstruct import check_overrides as _check_overrides
from tiling.conv3d_backprop_input.arch22.validate import validate as validate_tiling

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

# struct formats: 6 u32 + u64 = 32 bytes; 60 u32 + 3 i32 + 4-byte pad + 3 u64 = 280 bytes.
_PARAMS_FMT = "<6IQ"
_TILING_FMT = "<" + "I" * len(_U32_TILING) + "iii" + "4x" + "QQQ"
BLOB_SIZE = struct.calcsize(_PARAMS_FMT) + struct.calcsize(_TILING_FMT)
assert BLOB_SIZE == 312, BLOB_SIZE

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


class Conv3DBackpropInputV2TilingData(BaseModel):
    """The generator's answer: the tiling struct, its tiling key and how it was chosen.

    `params` and `conv3DDxTiling` are exactly what the kernel receives (`to_bytes()`); the rest is host-side
    information: the kernel template flags that make up the tiling key, which algorithm produced the values,
    and notes (for example where a value came from this project's own rule instead of closed TBE code).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

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

    # --- the kernel's view -------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        return struct.pack(_PARAMS_FMT, *self.params.as_tuple()) + struct.pack(
            _TILING_FMT, *self.conv3DDxTiling.as_tuple())

    def to_words(self) -> list[int]:
        """The blob as 78 little-endian int32 words (the form the real unit tests print)."""
        return list(struct.unpack("<78i", self.to_bytes()))

    @classmethod
    def from_bytes(cls, blob: bytes, **info) -> "Conv3DBackpropInputV2TilingData":
        """Decode a 312-byte blob; host-side fields (loadB2Condition, dtype, ...) may be passed as keywords."""
        if len(blob) != BLOB_SIZE:
            raise ValueError(f"blob has {len(blob)} bytes; a Conv3DBackpropInputV2TilingData blob has {BLOB_SIZE}")
        head = struct.calcsize(_PARAMS_FMT)
        params = dict(zip((n for n, _ in PARAMS_FIELDS), struct.unpack(_PARAMS_FMT, blob[:head])))
        tiling = dict(zip((n for n, _ in TILING_FIELDS), struct.unpack(_TILING_FMT, blob[head:])))
        return cls(params=Conv3DBackpropInputV2Params(**params), conv3DDxTiling=TConv3DInputV2Tiling(**tiling),
                   **info)

    # --- experimenting -----------------------------------------------------------------------------------
    def with_overrides(self, *, validate: bool = True, **changes) -> "Conv3DBackpropInputV2TilingData":
        """A copy with some fields changed, by real name (baseM=128, coreNum=8, al1Pbuffer=1, ...).

        Nothing is re-derived. The copy is checked by `validate` on the tiling's platform: a tiling the
        kernel cannot run raises TilingValidationError (a ValueError) naming each broken rule as field=value;
        the refused copy is on the error (`err.tiling`, `err.report`). validate=False skips that check, for
        building illegal tilings on purpose (e.g. to study the validator's report). An unknown name raises
        ValueError listing the close matches.
        """
        params = self.params.model_dump()
        tiling = self.conv3DDxTiling.model_dump()
        top = self.model_dump(exclude={"params", "conv3DDxTiling", "tiling_key"})
        _check_overrides(changes, (Conv3DBackpropInputV2Params, TConv3DInputV2Tiling), top)
        for key, value in changes.items():
            if key in params or key in tiling:
                (params if key in params else tiling)[key] = value
            else:
                top[key] = value
        top["notes"] = [*top["notes"], f"overridden: {sorted(changes)}"]
        result = type(self)(params=Conv3DBackpropInputV2Params(**params),
                            conv3DDxTiling=TConv3DInputV2Tiling(**tiling), **top)
        if validate:
            if result.platform is None:
                raise ValueError("with_overrides checks the result against the tiling's platform, and this tiling "
                                 "records none: pass platform=<Platform> among the overrides, or validate=False")
            from tiling.conv3d_backprop_input.arch22.validate import validate as validate_tiling
            validate_tiling(result).raise_if_invalid(result, changes)
        return result

    def check(self, platform=None, *, raise_error: bool = False):
        """`validate(self, platform)`: does this tiling fit (default: the platform it was made for)?"""
        return validate_tiling(self, platform, raise_error=raise_error)

    def fields(self) -> dict[str, int]:
        """All kernel-visible fields, params first, in blob order."""
        return {**self.params.model_dump(), **self.conv3DDxTiling.model_dump()}
