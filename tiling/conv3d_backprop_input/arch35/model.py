"""Conv3DBackpropInputArch35TilingData: the 88 fields of the arch35 dx tiling struct, their C types and blob.

Mirrors `op_host/op_tiling/conv3d_backprop_input_v2_tiling_data_arch35.h` (hicann/ops-nn @ e5c3fa93); the same
struct is registered for Conv3DTransposeV2 and ExtendConvTranspose. `TILING_DATA_FIELD_DEF` lays the members out
with natural alignment (`tiling.common.cstruct.c_format`): a 4-byte hole before the u64 run that starts at
singleCoreBatch, 1 byte after `offsetX`, 4 after `woExpand`, then `reserved[8]` (always 0) and 7 tail bytes: 352
bytes in all.
"""
from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ascend_sim.machine.platform import Platform
from tiling.common.cstruct import CStruct
from tiling.common.tiling_data import TilingData
from tiling.conv3d_backprop_input.arch35.validate import validate_arch35

_U8_FLAGS = ("al0Pbuffer bl0Pbuffer cl0Pbuffer al1Pbuffer bl1Pbuffer iterateOrder c0 c0BitsA c0BitsB enlarge "
             "hf32Flag initOutputFlag isBiasFullLoad enableVecTrans enableFullLoad quantMode").split()
_U32_SHAPES = ("batch cin cout cinG coutG cout1 cin1 cout1G cin1G dout ho wo di hi wi dk hk wk group oriGroup "
               "strideD strideH strideW padFront padBack padUp padDown padLeft padRight").split()
_I32_BP_PADS = "backpropPadTail backpropPadUp backpropPadDown backpropPadLeft backpropPadRight".split()
_U32_CORE = ("dilationD dilationH dilationW singleCoreGroup singleCoreCout singleCoreCin singleCoreDin baseM baseK "
             "baseN stepKa stepKb singleIterateDk").split()
_U64_CORE = "singleCoreBatch singleCoreM enRelu kSegment kSegmentTail kValueSegment".split()
_U32_KS = "kSCoutFullLoad kSUseWorkSpace khDilation kwDilation hoExpand woExpand".split()

# (name, C type) in declaration order: the order *is* the blob layout.
FIELDS: tuple[tuple[str, str], ...] = (
    *((n, "u32") for n in "batchDim groupDim mDim kDim nDim dDim".split()), ("coreNum", "u64"),
    *((n, "u8") for n in _U8_FLAGS),
    *((n, "u32") for n in _U32_SHAPES),
    *((n, "i32") for n in _I32_BP_PADS),
    *((n, "u32") for n in _U32_CORE),
    *((n, "u64") for n in _U64_CORE),
    ("enableSplitK", "bool"), ("useUbAccumForSplitK", "bool"), ("offsetX", "i8"),
    *((n, "u32") for n in _U32_KS),
    ("dkHkWk", "u64"), ("hkWk", "u64"), ("fixedShiftVal", "u8"),
)
assert len(FIELDS) == 88, len(FIELDS)

# The ASCENDC_TPL key (op_kernel/conv3d_backprop_input_v2_arch35_tiling_key.h): bit offsets of its five parameters.
KEY_BITS = (("loadB2Condition", 0, 8), ("kernelSplitMode", 8, 8), ("groupConvMode", 16, 8),
            ("isBasicBlockTiling", 24, 1), ("loadB1Condition", 25, 8))


def tiling_key(load_b2_condition: int, kernel_split_mode: int, group_conv_mode: int, is_basic_block: bool,
               load_b1_condition: int) -> int:
    """GET_TPL_TILING_KEY(loadB2Condition, kernelSplitMode, groupConvMode, isBasicBlockTiling, loadB1Condition)."""
    values = (load_b2_condition, kernel_split_mode, group_conv_mode, int(is_basic_block), load_b1_condition)
    key = 0
    for (name, shift, width), value in zip(KEY_BITS, values):
        if not 0 <= value < 1 << width:
            raise ValueError(f"{name}={value} does not fit its {width}-bit tiling-key field")
        key |= value << shift
    return key


def decode_tiling_key(key: int) -> dict[str, int]:
    return {name: (key >> shift) & ((1 << width) - 1) for name, shift, width in KEY_BITS}


def _field_annotations() -> dict:
    return {name: int for name, _ in FIELDS}


class _Fields(CStruct):
    FIELDS: ClassVar = FIELDS
    RESERVED: ClassVar = 8  # TILING_DATA_FIELD_DEF_ARR(uint8_t, 8, reserved): never written, so 0
    __annotations__ = _field_annotations()


class Conv3DBackpropInputArch35TilingData(TilingData, _Fields):
    """The arch35 tiling: every struct field by its real name (the struct is flat), plus what the host returns
    beside the blob, the dtype and the platform it was made for. with_overrides checks the result with
    validate_arch35 (the arch35 rules)."""

    STRUCTS: ClassVar = ((None, _Fields),)
    VALIDATE: ClassVar = validate_arch35

    tiling_key: int
    block_dim: int
    workspace_size: int
    template: str  # the REGISTER_TILING_TEMPLATE class that answered
    dtype: str = "float16"  # of out_backprop, filter and y
    platform: Platform | None = Field(default=None, description="the platform the tiling was made for")
    notes: list[str] = Field(default_factory=list)

    @property
    def key_fields(self) -> dict[str, int]:
        return decode_tiling_key(self.tiling_key)


BLOB_SIZE = Conv3DBackpropInputArch35TilingData.blob_size()
assert BLOB_SIZE % 8 == 0, BLOB_SIZE  # PostTiling refuses a tiling data size that is not a multiple of 8
