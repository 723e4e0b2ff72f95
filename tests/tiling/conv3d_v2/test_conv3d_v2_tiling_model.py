"""The Conv3DV2 tiling struct against conv/conv3d_v2/op_kernel/conv3d_v2_tiling_data.h (hicann/ops-nn e5c3fa93):
member counts, sizes, offsets worked out by hand from the header under #pragma pack(push, 8), and the round trip."""
import struct

import pytest

from tiling.conv3d_v2.model import BLOB_SIZE, Conv3DRunInfo, Conv3DV2TilingData, TConv3DTiling, tpl_tiling_key


def _offset(fields, name):
    offset = 0
    sizes = {"u8": 1, "i8": 1, "u32": 4, "u64": 8}
    for field, ctype in fields:
        offset += -offset % sizes[ctype]
        if field == name:
            return offset
        offset += sizes[ctype]
    raise KeyError(name)


def test_member_counts_and_sizes():
    # TConv3DTiling: 19 u64, 11 + 12 (CONV3D_COMMON_ATTRS) + 43 u32, 2 int8 and 12 uint8 -> 430 bytes, padded to 432.
    types = [t for _, t in TConv3DTiling.FIELDS]
    assert (types.count("u64"), types.count("u32"), types.count("i8"), types.count("u8")) == (19, 66, 2, 12)
    assert TConv3DTiling.size() == 432
    # Conv3DRunInfo: 4 u64, 32 u32, 1 uint8, two 4-byte holes (before hin and hout), tail pad 7 -> 176.
    types = [t for _, t in Conv3DRunInfo.FIELDS]
    assert (types.count("u64"), types.count("u32"), types.count("u8")) == (4, 32, 1)
    assert Conv3DRunInfo.size() == 176
    assert BLOB_SIZE == 608


@pytest.mark.parametrize("fields,name,offset", [
    (TConv3DTiling.FIELDS, "unionDataXt", 120), (TConv3DTiling.FIELDS, "orgCi", 152),
    (TConv3DTiling.FIELDS, "strideH", 196), (TConv3DTiling.FIELDS, "padRight", 240),
    (TConv3DTiling.FIELDS, "mL0", 244), (TConv3DTiling.FIELDS, "kernelHxkernelWxkernelD", 412),
    (TConv3DTiling.FIELDS, "offsetx", 416), (TConv3DTiling.FIELDS, "outputOrder", 429),
    (Conv3DRunInfo.FIELDS, "hin", 16), (Conv3DRunInfo.FIELDS, "cout", 32), (Conv3DRunInfo.FIELDS, "hout", 56),
    (Conv3DRunInfo.FIELDS, "batchDim", 72), (Conv3DRunInfo.FIELDS, "hasBias", 168),
])
def test_offsets(fields, name, offset):
    assert _offset(fields, name) == offset


def test_blob_places_fields_where_the_header_does():
    t = Conv3DV2TilingData().with_overrides(validate=False, orgCi=0x11223344, outputOrder=1, offsetx=-3, hin=7,
                                            hasBias=1)
    blob = t.to_bytes()
    assert len(blob) == 608
    assert struct.unpack_from("<I", blob, 152)[0] == 0x11223344
    assert blob[429] == 1 and struct.unpack_from("<b", blob, 416)[0] == -3
    assert struct.unpack_from("<Q", blob, 432 + 16)[0] == 7
    assert blob[418] == 1 and blob[432 + 168] == 1   # hasBias lives in both structs
    assert Conv3DV2TilingData.from_bytes(blob) == t.model_copy(update={"notes": []})


def test_refusals():
    with pytest.raises(ValueError, match="607 bytes"):
        Conv3DV2TilingData.from_bytes(bytes(607))
    with pytest.raises(ValueError, match="hasBias=256"):
        Conv3DV2TilingData().with_overrides(hasBias=256)
    with pytest.raises(ValueError, match="did you mean 'mL0'"):
        Conv3DV2TilingData().with_overrides(ml0=16)


def test_tiling_key_packs_low_bits_first():
    # ASCENDC_TPL_ARGS_DECL(ConvL0PingPong 2 bits, ConvBL1ByPass 1, GroupConvType 1, OutputOrder 1)
    assert tpl_tiling_key(3, 0, 0, 0) == 3
    assert tpl_tiling_key(0, 1, 0, 0) == 4
    assert tpl_tiling_key(1, 0, 1, 1) == 1 + 8 + 16
    t = Conv3DV2TilingData().with_overrides(validate=False, pBufferFlag=0b11011, bl1BypassFlag=1, groups=2)
    assert t.key_from_fields() == 3 + 4 + 8
