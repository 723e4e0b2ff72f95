"""The dw tiling struct against the real vectors' blobs: exact 280-byte layout, round trip, every field."""
from __future__ import annotations

import json
import struct

import pytest
from paths import DATA_DIR

from tiling.conv3d_backprop_filter import (BLOB_SIZE, Conv3DBackpropFilterV2Params, Conv3DBackpropFilterV2TilingData,
                                           TConv3DDwBasicBlockTiling, TConv3DDwTiling)

VECTORS = json.loads((DATA_DIR / "conv3d_dw_tiling_vectors_a2.json").read_text())["vectors"]


def _blob(vector: dict) -> bytes:
    return struct.pack(f"<{len(vector['tiling_words_int32'])}i", *vector["tiling_words_int32"])


def test_sizes_follow_the_c_header():
    # Counted by hand from conv3d_backprop_filter_v2_tiling_data.h: params u64 + 6 u32 = 32; dwTiling 50 u32 +
    # 2 u64 = 216; basicBlockTiling 4 u32 + u64 + 2 u32 = 32.
    assert (Conv3DBackpropFilterV2Params.size(), TConv3DDwTiling.size(), TConv3DDwBasicBlockTiling.size()) == (
        32, 216, 32)
    assert BLOB_SIZE == 280
    assert len(Conv3DBackpropFilterV2TilingData().to_bytes()) == 280


def test_field_offsets():
    # Distinct values in a few fields land at the offsets a C compiler gives them.
    data = Conv3DBackpropFilterV2TilingData(
        params=Conv3DBackpropFilterV2Params(batchDim=2**40 + 7, totalL1Size=524288),
        dwTiling=TConv3DDwTiling(batch=3, singleCoreHo=5, singleCoreBatch=2**33 + 1, singleCoreCin=9),
        basicBlockTiling=TConv3DDwBasicBlockTiling(coreBindOrder=11, singleCoreK=2**35 + 13, coreStreamK=17))
    blob = data.to_bytes()
    assert struct.unpack_from("<Q", blob, 0)[0] == 2**40 + 7
    assert struct.unpack_from("<I", blob, 28)[0] == 524288
    assert struct.unpack_from("<I", blob, 32)[0] == 3
    assert struct.unpack_from("<I", blob, 32 + 49 * 4)[0] == 5
    assert struct.unpack_from("<QQ", blob, 232) == (2**33 + 1, 9)
    assert struct.unpack_from("<I", blob, 248)[0] == 11
    assert struct.unpack_from("<Q", blob, 264)[0] == 2**35 + 13
    assert struct.unpack_from("<I", blob, 276)[0] == 17


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_blob_round_trips_and_decodes_to_its_fields(vector):
    blob = _blob(vector)
    assert len(blob) == BLOB_SIZE
    data = Conv3DBackpropFilterV2TilingData.from_bytes(blob, tiling_key=vector["tiling_key"])
    assert data.fields() == vector["tiling"]
    assert data.to_bytes() == blob
    assert data.to_words() == vector["tiling_words_int32"]
    assert data.tiling_key == vector["tiling_key"]
    assert data.block_dim == vector["block_dim"]


def test_bad_blob_and_values_are_refused():
    with pytest.raises(ValueError, match="279 bytes"):
        Conv3DBackpropFilterV2TilingData.from_bytes(bytes(279))
    with pytest.raises(ValueError, match="groupDim=-1"):
        Conv3DBackpropFilterV2Params(groupDim=-1)
    with pytest.raises(ValueError, match="singleCoreM=4294967296"):
        TConv3DDwBasicBlockTiling(singleCoreM=2**32)
    with pytest.raises(ValueError, match="tiling_key"):
        Conv3DBackpropFilterV2TilingData(tiling_key=5)
