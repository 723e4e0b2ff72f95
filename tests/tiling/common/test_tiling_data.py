"""The shared tiling-data protocol (tiling/common/tiling_data.py) on every family: blob layout, fields and their C
ranges, with_overrides (refusal, copy, validation on the tiling's platform, validate=False) and check(). Expected
offsets, sizes and ranges are worked out by hand from the C headers and C types, not read from the code."""
import struct

import pytest

from tiling.common.validation import TilingValidationError
from tiling.conv3d_backprop_filter.model import Conv3DBackpropFilterV2TilingData
from tiling.conv3d_backprop_input.arch22.model import Conv3DBackpropInputV2TilingData
from tiling.conv3d_backprop_input.arch35.model import FIELDS as ARCH35_FIELDS
from tiling.conv3d_backprop_input.arch35.model import Conv3DBackpropInputArch35TilingData
from tiling.conv3d_v2 import Conv3DV2TilingData, conv3d_v2_tiling

U64_MAX = 18446744073709551615


def arch35_tiling(**fields) -> Conv3DBackpropInputArch35TilingData:
    values = {name: 1 for name, _ in ARCH35_FIELDS}
    values.update(fields)
    return Conv3DBackpropInputArch35TilingData(**values, tiling_key=0, block_dim=1, workspace_size=0, template="t")


@pytest.mark.parametrize("cls,size,fields", [
    # dx: 6 u32 + coreNum u64; 60 u32 + 3 i32 + 3 u64. dw: 7; 50 u32 + 2 u64; 7. Conv3DV2: 99 api members + 37 run
    # info members, 18 names (the 12 common attributes, groups, enlarge, cinOpt, coutOpt, groupOpt, hasBias) in both.
    (Conv3DBackpropInputV2TilingData, 312, 7 + 66), (Conv3DBackpropFilterV2TilingData, 280, 7 + 52 + 7),
    (Conv3DV2TilingData, 608, 99 + 37 - 18), (Conv3DBackpropInputArch35TilingData, 352, 88),
])
def test_blob_size_and_field_count(cls, size, fields):
    assert cls.blob_size() == size
    assert len(cls.field_ranges()) == fields


def test_field_ranges_are_the_c_type_ranges():
    dx = Conv3DBackpropInputV2TilingData.field_ranges()
    assert dx["coreNum"] == (0, U64_MAX) and dx["baseM"] == (0, 2**32 - 1) and dx["hf32Flag"] == (-2**31, 2**31 - 1)
    assert Conv3DV2TilingData.field_ranges()["offsetx"] == (-128, 127)
    arch35 = Conv3DBackpropInputArch35TilingData.field_ranges()
    assert arch35["enableSplitK"] == (0, 1) and arch35["al0Pbuffer"] == (0, 255) and "reserved[0]" not in arch35


def test_dx_blob_words_and_round_trip():
    t = Conv3DBackpropInputV2TilingData().with_overrides(validate=False, coreNum=5, baseM=0x1234, singleCoreCin=2**40)
    blob = t.to_bytes()
    assert struct.unpack_from("<Q", blob, 24)[0] == 5                    # coreNum after 6 u32
    assert struct.unpack_from("<I", blob, 32 + 4 * 47)[0] == 0x1234      # baseM: the 48th u32 of the tiling
    assert struct.unpack_from("<Q", blob, 312 - 8)[0] == 2**40           # singleCoreCin last, after the 4-byte hole
    assert len(t.to_words()) == 78 and t.to_words()[6] == 5
    back = Conv3DBackpropInputV2TilingData.from_bytes(blob)
    assert back.fields() == t.fields() and list(back.fields())[:2] == ["batchDim", "groupDim"]


def test_arch35_flat_struct_blob():
    t = arch35_tiling(coreNum=7, al0Pbuffer=2, fixedShiftVal=9)
    blob = t.to_bytes()
    assert len(blob) == 352
    assert struct.unpack_from("<Q", blob, 24)[0] == 7 and blob[32] == 2  # coreNum, then the u8 flags
    tail = blob.rstrip(b"\0")
    assert tail[-1] == 9 and len(blob) - len(tail) == 8 + 7             # reserved[8] and the tail pad are zeros
    back = Conv3DBackpropInputArch35TilingData.from_bytes(blob, tiling_key=0, block_dim=1, workspace_size=0,
                                                          template="t")
    assert back == t
    with pytest.raises(ValueError, match="351 bytes; a Conv3DBackpropInputArch35TilingData blob has 352"):
        Conv3DBackpropInputArch35TilingData.from_bytes(blob[:-1])


def test_arch35_overrides_are_validated_on_the_tilings_platform():
    t = arch35_tiling()  # records no platform
    with pytest.raises(ValueError, match="this tiling records none"):
        t.with_overrides(baseM=64)
    changed = t.with_overrides(validate=False, baseM=64, block_dim=2)
    assert (changed.baseM, changed.block_dim, t.baseM) == (64, 2, 1)
    assert changed.notes == ["overridden: ['baseM', 'block_dim']"]
    with pytest.raises(ValueError, match="records no platform"):
        t.check()
    assert not t.check("Ascend950PR_9589").ok  # all-ones fields: c0 1 is not a 2-byte dtype's 16, ...


def test_every_broken_rule_one_line():
    with pytest.raises(ValueError) as err:
        Conv3DBackpropFilterV2TilingData().with_overrides(validate=False, baseM=-1, basem=16, usedCoreNum="8")
    lines = str(err.value).splitlines()
    assert lines[0] == "tiling_overrides: 3 problems:" and len(lines) == 4
    assert "did you mean 'baseM'" in lines[2] and "must be an integer" in lines[3]


def test_conv3d_v2_overrides_are_validated_on_the_tilings_platform():
    t = conv3d_v2_tiling((1, 16, 4, 16, 16), (16, 16, 1, 1, 1))
    with pytest.raises(TilingValidationError) as err:
        t.with_overrides(mL0=4096)
    assert str(err.value).startswith("tiling overrides mL0=4096 make the tiling illegal on Ascend910B2")
    assert "mL0=4096" in str(err.value).splitlines()[1] and err.value.tiling.convApiTiling.mL0 == 4096
    illegal = t.with_overrides(validate=False, mL0=4096)
    assert not illegal.check() and t.check()
    with pytest.raises(ValueError, match="records none"):
        Conv3DV2TilingData().with_overrides(mL0=16)
